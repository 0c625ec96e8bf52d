//! The profile's TOML schema: the `Raw*` structs phase one deserializes.
//!
//! Every table denies unknown keys, so a typo is an error with line, column
//! and the expected keys (toml's own message). Facts are read per fact, by
//! kind, in [`super::facts`], so that one bad fact does not hide another.
//! Every key is documented in `profiles/README.md`. The same structs give
//! the JSON Schema of `profile.toml` ([`json_schema`]), so what an editor
//! completes is what fcd reads.

use std::collections::BTreeMap;

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Deserializer};

use fcd_model::summary::Envelope;

#[derive(Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct RawProfile {
    pub profile: RawHeader,
    pub envelope: Envelope,
    #[serde(default)]
    pub arguments: BTreeMap<String, Spanned<RawArgument>>,
    pub source: RawSource,
    pub regions: BTreeMap<String, Spanned<RawRegion>>,
    #[serde(default)]
    pub imports: BTreeMap<String, Vec<Spanned<String>>>,
    #[serde(default)]
    pub inventory: BTreeMap<Spanned<String>, RawInventory>,
    /// Each fact as written; [`super::facts`] reads it by its `kind`.
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, super::facts::FactSchema>")]
    pub facts: BTreeMap<String, Spanned<RawFactTable>>,
    pub rules: Vec<Spanned<RawRule>>,
    /// The interpreters an argument's text is read by, each with what a
    /// reviewer listed as only reading (`[interpreters.sqlite]`).
    #[serde(default)]
    pub interpreters: BTreeMap<String, Spanned<RawInterpreter>>,
    /// Further reviewed shapes of the same handler (`[shapes.NAME]`).
    #[serde(default)]
    pub shapes: BTreeMap<String, Spanned<RawShape>>,
}

/// Another reviewed shape: the top-level regions, imports, inventories and
/// facts, with these replacing or adding entries by name and `drop` removing
/// them (`"regions.NAME"`, `"inventory.NAME"`, `"facts.NAME"`, `"imports.NAME"`).
#[derive(Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct RawShape {
    /// What the shape is and which reviewed release it was written from.
    pub description: String,
    /// Another shape this one is written as a change of (default: the top-level one).
    pub extends: Option<Spanned<String>>,
    #[serde(default)]
    pub regions: BTreeMap<String, Spanned<RawRegion>>,
    #[serde(default)]
    pub imports: BTreeMap<String, Vec<Spanned<String>>>,
    #[serde(default)]
    pub inventory: BTreeMap<Spanned<String>, RawInventory>,
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, super::facts::FactSchema>")]
    pub facts: BTreeMap<String, Spanned<RawFactTable>>,
    #[serde(default)]
    pub drop: Vec<Spanned<String>>,
}

/// A value with its byte range in the profile text (toml's `Spanned`); the
/// JSON Schema describes it as the value alone.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Spanned<T>(toml::Spanned<T>);

impl<T> Spanned<T> {
    pub fn span(&self) -> std::ops::Range<usize> {
        self.0.span()
    }

    pub fn get_ref(&self) -> &T {
        self.0.get_ref()
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Spanned<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        toml::Spanned::deserialize(d).map(Spanned)
    }
}

impl<T: JsonSchema> JsonSchema for Spanned<T> {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> Cow<'static, str> {
        T::schema_name()
    }

    fn schema_id() -> Cow<'static, str> {
        T::schema_id()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        generator.subschema_for::<T>()
    }
}

/// The JSON Schema of `profile.toml`.
pub fn json_schema() -> serde_json::Value {
    let mut schema = schemars::schema_for!(RawProfile);
    schema.insert("title".into(), "fcd profile (profile.toml)".into());
    schema.insert("description".into(), "A reviewed acceptance envelope for one handler path; every key is documented in profiles/README.md.".into());
    schema.to_value()
}

/// A fact's keys, each with its position, and their values.
pub(super) type RawFactTable = BTreeMap<Spanned<String>, toml::Value>;

#[derive(Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct RawHeader {
    pub id: Spanned<String>,
    pub version: u32,
    pub language: Spanned<String>,
    pub tool: String,
    #[serde(default)]
    pub description: String,
    /// The name of the shape the top-level tables describe, when `[shapes]` adds others.
    pub shape: Option<Spanned<String>>,
}

#[derive(Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct RawArgument {
    #[serde(rename = "type")]
    pub ty: String,
    #[serde(default)]
    pub required: bool,
    /// The option parser the release hands the value to as command-line
    /// tokens (`system-commandline`): every token is then checked as that
    /// parser would read it, and anything but a plain value is UNKNOWN.
    #[serde(default)]
    pub tokens: Option<String>,
    #[serde(default)]
    #[allow(dead_code, reason = "documentation for reviewers, accepted and not used")]
    pub description: String,
}

#[derive(Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct RawSource {
    pub files: Vec<Spanned<String>>,
    #[serde(default)]
    pub exclude: Vec<Spanned<String>>,
    pub package: Option<Spanned<String>>,
    #[serde(default)]
    pub built: BTreeMap<String, String>,
    /// (C#) library attributes a reviewer read as inert on plain model types.
    #[serde(default, rename = "inert-attributes")]
    pub inert_attributes: Vec<Spanned<String>>,
    /// (JavaScript) callee identities a reviewer read as never changing,
    /// keeping or calling back what they are handed.
    #[serde(default, rename = "read-only-callees")]
    pub read_only_callees: Vec<Spanned<String>>,
    /// (JavaScript) functions of the release its regions may call although
    /// no region reads their bodies (`f`, `Class.method`, `static
    /// Class.method`, `Class.constructor`); (Go) names of the release's
    /// other packages its regions reach (`pkg/utils.NewToolResultError`);
    /// each with the `sha256:` digests of the release code it reaches that
    /// a reviewer read.
    #[serde(default, rename = "pinned-functions")]
    pub pinned_functions: BTreeMap<Spanned<String>, Vec<Spanned<String>>>,
    /// (JavaScript) functions of the release its regions may call although
    /// no region reads them and no digest pins them: trust by name, listed
    /// so that it is seen. What is left of it is a debt: pin each instead.
    #[serde(default, rename = "unread-functions")]
    pub unread_functions: Vec<Spanned<String>>,
    /// Token digests (`sha256:…`) of signal listeners a reviewer read: a
    /// listener the release installs whose function has one of them does not
    /// escalate as a write of the signal handlers.
    #[serde(default, rename = "signal-listeners")]
    pub signal_listeners: Vec<Spanned<String>>,
    /// (JavaScript) digests (`sha256:…`) of wrappers of a registering method
    /// a reviewer read: the function that replaces it (`server.registerTool =
    /// (name, config, handler) => …`), the bound copy it calls, and every
    /// write, in the function that declares the server, of a name the wrapper
    /// reads from there. A listed one is the reviewed code around every
    /// callback the method registers; any other replacement escalates.
    #[serde(default, rename = "registration-wrappers")]
    pub registration_wrappers: Vec<Spanned<String>>,
}

#[derive(Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct RawRegion {
    pub function: Option<String>,
    #[serde(default)]
    pub literal: bool,
    pub variable: Option<String>,
    /// The code that runs when the tool with this name is called.
    pub route: Option<String>,
    /// The function literal registered for the tool with this name.
    pub callback: Option<String>,
    /// The `case "NAME":` clause of the tool dispatcher.
    #[serde(rename = "case")]
    pub case: Option<String>,
    /// The region may be absent from a release.
    #[serde(default)]
    pub optional: bool,
    /// The one file (from the release root) the region is looked for in,
    /// when the release defines its name in more than one.
    pub file: Option<String>,
    /// (JavaScript) a function of the release on the call path, read for
    /// what it calls (its inventory, the closed call path), named by no fact;
    /// module state it uses (a request log) is not trusted state.
    #[serde(default)]
    pub helper: bool,
    pub via: Option<Vec<String>>,
    /// (Go, with `via`) result types of a handler factory literal handed over instead of the handler.
    pub factory: Option<Vec<String>>,
    pub beside: Option<Vec<String>>,
    #[serde(rename = "converted-by")]
    pub converted_by: Option<Vec<String>>,
    #[serde(rename = "wrapped-by")]
    pub wrapped_by: Option<Vec<String>>,
    #[serde(rename = "registered-by")]
    pub registered_by: Option<Vec<String>>,
}

#[derive(Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct RawInventory {
    /// The whole inventory (at top level, or replacing it in a shape).
    #[serde(default)]
    pub callees: Vec<String>,
    /// (In a shape) callees added to the inventory the shape starts from.
    #[serde(default)]
    pub add: Vec<String>,
    /// (In a shape) callees removed from it; each must be there.
    #[serde(default)]
    pub remove: Vec<String>,
    /// Callees of `callees` a reviewer read as having no effect: only these
    /// may run in a region before a refusal a `reject` rule relies on.
    #[serde(default, rename = "no-effect")]
    pub no_effect: Vec<String>,
}

#[derive(Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(super) struct RawRule {
    #[serde(default)]
    pub requires: Vec<Spanned<String>>,
    #[serde(default)]
    pub unless: Vec<Spanned<String>>,
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, serde_json::Value>")]
    pub fact_equals: BTreeMap<Spanned<String>, toml::Value>,
    pub when: Spanned<RawPredicate>,
    pub then: Spanned<RawOutcome>,
    pub note: Option<String>,
    /// (A `reject` rule) the required fact where the handler refuses the
    /// call; by default the rule's required `guard` fact.
    pub refused_at: Option<Spanned<String>>,
}

#[derive(Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(super) struct RawPredicate {
    pub arg: Option<Spanned<String>>,
    pub env: Option<Spanned<String>>,
    pub starts_with: Option<Spanned<String>>,
    pub matches: Option<Spanned<String>>,
    #[serde(rename = "type")]
    pub ty: Option<Spanned<String>>,
    #[schemars(with = "Option<serde_json::Value>")]
    pub equals: Option<Spanned<toml::Value>>,
    pub absent: Option<Spanned<bool>>,
    pub present: Option<Spanned<bool>>,
    /// An element test: `any-element = { starts-with = "-" }`.
    pub any_element: Option<Box<Spanned<RawPredicate>>>,
    pub every_element: Option<Box<Spanned<RawPredicate>>>,
    /// A path inside the directories a configuration value names.
    pub inside: Option<Spanned<String>>,
    /// A path strictly below those directories (never one of them).
    pub below: Option<Spanned<String>>,
    /// A path that starts with one of those directories as a plain string (no `/` boundary).
    pub prefixed_by: Option<Spanned<String>>,
    /// One statement that only reads, by the named dialect's grammar and its `[interpreters.DIALECT]`.
    pub sql_read: Option<Spanned<String>>,
    /// A URL by the named parser, with its scheme and host class among the listed ones.
    pub url: Option<Spanned<RawUrl>>,
    pub all: Option<Vec<Spanned<RawPredicate>>>,
    pub any: Option<Vec<Spanned<RawPredicate>>>,
    pub not: Option<Box<Spanned<RawPredicate>>>,
    pub always: Option<Spanned<bool>>,
}

/// `url = { parser = "whatwg", scheme = [...], host = [...] }`.
#[derive(Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(super) struct RawUrl {
    /// The grammar the release's parser implements: `whatwg`.
    pub parser: Spanned<String>,
    /// Lower-case schemes, as the parser yields them.
    pub scheme: Option<Spanned<Vec<Spanned<String>>>>,
    /// Host classes (`name`, `loopback`, `private`, `link-local`, `shared`,
    /// `unspecified`, `multicast`, `nat64`, `reserved`, `public`).
    pub host: Option<Spanned<Vec<Spanned<String>>>>,
}

/// A SQL dialect's reviewed reads: lower-case names.
#[derive(Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(super) struct RawInterpreter {
    /// Scalar, aggregate and window functions that only compute.
    #[serde(default)]
    pub functions: Vec<Spanned<String>>,
    /// Table-valued functions and eponymous virtual tables a query may select from.
    #[serde(default)]
    pub table_functions: Vec<Spanned<String>>,
    /// Pragmas that only read when given no value.
    #[serde(default)]
    pub pragmas: Vec<Spanned<String>>,
}

#[derive(Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct RawOutcome {
    pub effect: Option<Spanned<RawEffect>>,
    pub effects: Option<Spanned<Vec<Spanned<RawEffect>>>>,
    pub reject: Option<Spanned<String>>,
    pub unknown: Option<Spanned<String>>,
}

#[derive(Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(super) struct RawEffect {
    pub op: String,
    pub resource: String,
    #[serde(default = "default_exposure")]
    pub exposure: String,
    #[serde(default)]
    pub mutation: bool,
    #[serde(default)]
    pub write_scopes: Vec<String>,
    #[serde(default = "default_principal")]
    pub principal: String,
    #[serde(default = "default_destination")]
    pub destination: String,
}

fn default_exposure() -> String {
    "none".into()
}
fn default_principal() -> String {
    "{env.principal}".into()
}
fn default_destination() -> String {
    "{env.destination}".into()
}
