//! Profiles: reviewed acceptance envelopes, read from TOML in two phases.
//!
//! Phase one deserializes `Raw*` structs with `deny_unknown_fields`, so a typo
//! is an error with line, column and the expected keys (toml's own message).
//! Phase two validates references and values into a [`Profile`], and every
//! error names the file, the line and the key. A profile is data over generic
//! fact kinds: adding one never needs Rust. Every key is documented in
//! `profiles/README.md`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use serde::Deserialize;
use toml::Spanned;

use fcd_frontends::{ArgPattern, ArgShape, Comparison, DefaultRule, Exposure, FactKind, FactSpec, Lang, RegionKind, RegionSpec};

use crate::canon;
use crate::error::{InputError, read_text};
use crate::rules::{EffectTemplate, Outcome, Pattern, Predicate, Rule, Template, Test, ValueType};
pub use fcd_model::summary::{ArgSpec, Envelope};

/// (JavaScript) Where the runtime starts loading a package: the npm manifest
/// whose entry points (`main`, `module`, `bin`, `exports`) must name one file
/// fcd reads (see `crate::loader`, npm.rs), from which every static relative import is followed.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct EntrySpec {
    /// The manifest's path in the release root (`package.json`).
    pub manifest: String,
    /// Reviewed build mappings: a built entry (`dist/index.js`) that, when
    /// absent from the release (a git tag), stands for its TypeScript source.
    pub built: Vec<(String, String)>,
}

/// The file name of a profile inside its directory.
pub const PROFILE_FILE: &str = "profile.toml";

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawProfile {
    profile: RawHeader,
    envelope: RawEnvelope,
    #[serde(default)]
    arguments: BTreeMap<String, Spanned<RawArgument>>,
    source: RawSource,
    regions: BTreeMap<String, Spanned<RawRegion>>,
    #[serde(default)]
    imports: BTreeMap<String, Vec<Spanned<String>>>,
    #[serde(default)]
    inventory: BTreeMap<Spanned<String>, RawInventory>,
    #[serde(default)]
    facts: BTreeMap<String, Spanned<RawFact>>,
    rules: Vec<Spanned<RawRule>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawHeader {
    id: Spanned<String>,
    version: u32,
    language: Spanned<String>,
    tool: String,
    #[serde(default)]
    description: String,
}

type RawEnvelope = Envelope;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawArgument {
    #[serde(rename = "type")]
    ty: String,
    #[serde(default)]
    required: bool,
    #[serde(default)]
    description: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSource {
    files: Vec<Spanned<String>>,
    #[serde(default)]
    exclude: Vec<Spanned<String>>,
    package: Option<Spanned<String>>,
    #[serde(default)]
    built: BTreeMap<String, String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRegion {
    function: Option<String>,
    #[serde(default)]
    literal: bool,
    variable: Option<String>,
    /// The code that runs when the tool with this name is called.
    route: Option<String>,
    /// The region may be absent from a release.
    #[serde(default)]
    optional: bool,
    via: Option<Vec<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawInventory {
    callees: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFact {
    kind: String,
    region: String,
    callee: Option<String>,
    args: Option<Vec<String>>,
    test: Option<RawGuardTest>,
    before: Option<String>,
    argument: Option<String>,
    helpers: Option<BTreeMap<String, String>>,
    sink: Option<String>,
    arg: Option<usize>,
    field: Option<String>,
    wrap: Option<String>,
    from: Option<String>,
    definition: Option<String>,
    inert: Option<Vec<String>>,
    into: Option<String>,
    key: Option<String>,
    returns: Option<String>,
    row: Option<String>,
    member: Option<String>,
    conditions: Option<Vec<String>>,
    digests: Option<Vec<String>>,
    conjuncts: Option<Vec<String>>,
    #[serde(default)]
    matching: bool,
    #[serde(default)]
    implies: Vec<String>,
    #[serde(default)]
    required: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawGuardTest {
    callee: String,
    receiver: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    negated: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawRule {
    #[serde(default)]
    requires: Vec<String>,
    #[serde(default)]
    unless: Vec<String>,
    #[serde(default)]
    fact_equals: BTreeMap<String, toml::Value>,
    when: RawPredicate,
    then: RawOutcome,
    note: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawPredicate {
    arg: Option<String>,
    env: Option<String>,
    starts_with: Option<String>,
    matches: Option<String>,
    #[serde(rename = "type")]
    ty: Option<String>,
    equals: Option<toml::Value>,
    absent: Option<bool>,
    present: Option<bool>,
    all: Option<Vec<RawPredicate>>,
    any: Option<Vec<RawPredicate>>,
    not: Option<Box<RawPredicate>>,
    always: Option<bool>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawOutcome {
    effect: Option<RawEffect>,
    effects: Option<Vec<RawEffect>>,
    reject: Option<String>,
    unknown: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawEffect {
    op: String,
    resource: String,
    #[serde(default = "default_exposure")]
    exposure: String,
    #[serde(default)]
    mutation: bool,
    #[serde(default)]
    write_scopes: Vec<String>,
    #[serde(default = "default_principal")]
    principal: String,
    #[serde(default = "default_destination")]
    destination: String,
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

/// A rule as the profile writes it: the rule plus the facts it needs.
#[derive(Debug, Clone, PartialEq)]
pub struct RuleTemplate {
    /// The rule applies only when all these facts were found.
    pub requires: Vec<String>,
    /// The rule applies only when none of these facts were found.
    pub unless: Vec<String>,
    /// The rule applies only when these fact values (`FACT.KEY`) are these,
    /// decided when the summary is compiled.
    pub fact_equals: Vec<(String, String, serde_json::Value)>,
    pub rule: Rule,
}

/// A fact the profile asks for and whether its absence escalates.
#[derive(Debug, Clone, PartialEq)]
pub struct FactRequest {
    pub spec: FactSpec,
    pub required: bool,
    /// Facts that must also be found when this one is (wiring that is all or nothing).
    pub implies: Vec<String>,
}

/// A validated profile.
#[derive(Debug, Clone)]
pub struct Profile {
    /// The `profile.toml` it was read from.
    pub path: PathBuf,
    /// `sha256:` of the profile file's bytes: any edit is a new profile.
    pub digest: String,
    pub id: String,
    pub version: u32,
    pub language: Lang,
    pub tool: String,
    pub description: String,
    pub envelope: Envelope,
    pub arguments: BTreeMap<String, ArgSpec>,
    pub files: Vec<String>,
    pub globs: GlobSet,
    /// Files the globs select that are not part of the closure (tests, say).
    pub excluded: GlobSet,
    /// (JavaScript) the npm manifest the closure starts from, and build mappings.
    pub entry: Option<EntrySpec>,
    pub regions: Vec<RegionSpec>,
    /// Package name -> accepted import-path patterns (`[imports]`).
    pub imports: BTreeMap<String, Vec<String>>,
    /// Region -> callees its handler literal may be passed to directly (`via`).
    pub via: BTreeMap<String, Vec<String>>,
    pub inventories: BTreeMap<String, BTreeSet<String>>,
    pub facts: Vec<FactRequest>,
    pub rules: Vec<RuleTemplate>,
}

impl Profile {
    /// Loads `profile.toml` from a directory, or the TOML file itself.
    pub fn load(path: &Path) -> Result<Profile, InputError> {
        let file = if path.is_dir() { path.join(PROFILE_FILE) } else { path.to_owned() };
        let text = read_text(&file)?;
        Profile::parse(&file, &text)
    }

    /// Parses and validates profile text; `file` names it in errors.
    pub fn parse(file: &Path, text: &str) -> Result<Profile, InputError> {
        let raw: RawProfile = toml::from_str(text).map_err(|e| match e.span() {
            Some(span) => InputError::at_offset(file, text, span.start, e.message().trim_end()),
            None => InputError::new(file, e.message().trim_end()),
        })?;
        Validator { file, text }.profile(raw)
    }

    /// What the frontends are told beyond regions and facts.
    pub fn env(&self) -> fcd_frontends::Env {
        fcd_frontends::Env {
            imports: self.imports.clone(),
            tool: self.tool.clone(),
            reviewed: self
                .regions
                .iter()
                .filter_map(|r| match &r.kind {
                    RegionKind::Function(f) => Some(f.rsplit('.').next().unwrap_or(f).to_owned()),
                    _ => None,
                })
                .collect(),
            via: self.via.clone(),
            entries: None,
        }
    }

    /// The fact specifications to hand to a frontend.
    pub fn fact_specs(&self) -> Vec<FactSpec> {
        self.facts.iter().map(|f| f.spec.clone()).collect()
    }
}

struct Validator<'a> {
    file: &'a Path,
    text: &'a str,
}

impl Validator<'_> {
    fn err<T>(&self, span: std::ops::Range<usize>, key: &str, message: impl std::fmt::Display) -> Result<T, InputError> {
        Err(InputError::at_offset(self.file, self.text, span.start, format!("key `{key}`: {message}")))
    }

    fn profile(&self, raw: RawProfile) -> Result<Profile, InputError> {
        let header = raw.profile;
        let id = header.id.get_ref().clone();
        if id.is_empty() || !id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
            return self.err(header.id.span(), "profile.id", "an id is ASCII letters, digits, `-` and `_`");
        }
        let Some(language) = Lang::from_name(header.language.get_ref()) else {
            let known: Vec<&str> = Lang::ALL.iter().map(|l| l.name()).collect();
            return self.err(
                header.language.span(),
                "profile.language",
                format!("`{}` has no frontend (known: {})", header.language.get_ref(), known.join(", ")),
            );
        };
        for (key, value) in [
            ("structure", &raw.envelope.structure),
            ("arguments", &raw.envelope.arguments),
            ("effects", &raw.envelope.effects),
            ("unknown", &raw.envelope.unknown),
            ("completeness", &raw.envelope.completeness),
        ] {
            if value.trim().is_empty() {
                return Err(InputError::new(self.file, format!("key `envelope.{key}`: must say what was reviewed, not be empty")));
            }
        }

        let mut arguments = BTreeMap::new();
        for (name, spec) in &raw.arguments {
            let Some(ty) = ValueType::parse(&spec.get_ref().ty) else {
                return self.err(
                    spec.span(),
                    &format!("arguments.{name}.type"),
                    format!("`{}` is not one of string, integer, number, boolean, object, array", spec.get_ref().ty),
                );
            };
            let _ = &spec.get_ref().description;
            arguments.insert(name.clone(), ArgSpec { ty, required: spec.get_ref().required });
        }

        if raw.source.files.is_empty() {
            return Err(InputError::new(self.file, "key `source.files`: list at least one glob"));
        }
        let mut builder = GlobSetBuilder::new();
        for g in &raw.source.files {
            match GlobBuilder::new(g.get_ref()).literal_separator(true).build() {
                Ok(glob) => builder.add(glob),
                Err(e) => return self.err(g.span(), "source.files", format!("bad glob: {e}")),
            };
        }
        let Ok(globs) = builder.build() else {
            return Err(InputError::new(self.file, "key `source.files`: the globs do not compile together"));
        };
        let mut builder = GlobSetBuilder::new();
        for g in &raw.source.exclude {
            match GlobBuilder::new(g.get_ref()).literal_separator(true).build() {
                Ok(glob) => builder.add(glob),
                Err(e) => return self.err(g.span(), "source.exclude", format!("bad glob: {e}")),
            };
        }
        let Ok(excluded) = builder.build() else {
            return Err(InputError::new(self.file, "key `source.exclude`: the globs do not compile together"));
        };
        let entry = self.entry(&raw.source, language)?;

        let mut regions = Vec::new();
        let mut via = BTreeMap::new();
        for (name, region) in &raw.regions {
            let r = region.get_ref();
            let kind = match (&r.function, &r.variable, &r.route) {
                (Some(f), None, None) if !f.is_empty() && r.literal => RegionKind::Literal(f.clone()),
                (Some(f), None, None) if !f.is_empty() => RegionKind::Function(f.clone()),
                (None, Some(v), None) if !v.is_empty() && !r.literal => RegionKind::Variable(v.clone()),
                (None, None, Some(t)) if !t.is_empty() && !r.literal => RegionKind::Route(t.clone()),
                _ => {
                    return self.err(
                        region.span(),
                        &format!("regions.{name}"),
                        "a region names one `function` (optionally `literal = true`), one `variable` or one `route` (a tool name)",
                    );
                }
            };
            if let Some(v) = &r.via {
                if !matches!(kind, RegionKind::Literal(_)) || v.is_empty() {
                    return self.err(
                        region.span(),
                        &format!("regions.{name}.via"),
                        "`via` lists the calls a handler literal (`literal = true`) may be passed to",
                    );
                }
                via.insert(name.clone(), v.clone());
            }
            regions.push(RegionSpec { name: name.clone(), kind, optional: r.optional });
        }
        let mut imports = BTreeMap::new();
        for (name, patterns) in &raw.imports {
            for p in patterns {
                let ok = !p.get_ref().is_empty() && p.get_ref().split('/').all(|seg| !seg.is_empty());
                if !ok {
                    return self.err(p.span(), &format!("imports.{name}"), "an import-path pattern is `/`-separated segments, `*` within one segment");
                }
            }
            imports.insert(name.clone(), patterns.iter().map(|p| p.get_ref().clone()).collect());
        }
        let region_names: BTreeSet<&str> = raw.regions.keys().map(String::as_str).collect();

        let mut inventories = BTreeMap::new();
        for (name, inv) in &raw.inventory {
            if !region_names.contains(name.get_ref().as_str()) {
                return self.err(name.span(), &format!("inventory.{}", name.get_ref()), self.unknown_of("region", name.get_ref(), &region_names));
            }
            inventories.insert(name.get_ref().clone(), inv.callees.iter().cloned().collect());
        }
        for (name, region) in &raw.regions {
            if !inventories.contains_key(name) {
                return self.err(region.span(), &format!("regions.{name}"), "has no `[inventory]`: every region needs its reviewed callees");
            }
        }

        let mut facts = Vec::new();
        let fact_names: BTreeSet<&str> = raw.facts.keys().map(String::as_str).collect();
        for (name, fact) in &raw.facts {
            facts.push(self.fact(name, fact, &region_names, &raw.facts)?);
        }

        let mut rules = Vec::new();
        for (i, rule) in raw.rules.iter().enumerate() {
            rules.push(self.rule(i, rule, &fact_names, &arguments)?);
        }
        if rules.is_empty() {
            return Err(InputError::new(self.file, "key `rules`: a profile needs at least one rule"));
        }

        Ok(Profile {
            path: self.file.to_owned(),
            digest: canon::sha256(self.text.as_bytes()),
            id,
            version: header.version,
            language,
            tool: header.tool,
            description: header.description,
            envelope: raw.envelope,
            arguments,
            files: raw.source.files.iter().map(|g| g.get_ref().clone()).collect(),
            globs,
            excluded,
            entry,
            regions,
            imports,
            via,
            inventories,
            facts,
            rules,
        })
    }

    /// `source.package` and `source.built`: JavaScript only, relative paths.
    fn entry(&self, source: &RawSource, language: Lang) -> Result<Option<EntrySpec>, InputError> {
        let Some(manifest) = &source.package else {
            if !source.built.is_empty() {
                return Err(InputError::new(self.file, "key `source.built`: needs `source.package`"));
            }
            return Ok(None);
        };
        if language != Lang::JavaScript {
            return self.err(manifest.span(), "source.package", "only a `javascript` profile reads an npm manifest");
        }
        let relative = |p: &str| !p.is_empty() && !p.starts_with('/') && !p.split('/').any(|s| s == ".." || s == "." || s.is_empty());
        if !relative(manifest.get_ref()) {
            return self.err(manifest.span(), "source.package", "a `/`-separated path inside the release root");
        }
        for (from, to) in &source.built {
            if !relative(from) || !relative(to) {
                return self.err(manifest.span(), "source.built", format!("`{from}` = `{to}`: paths inside the release root"));
            }
        }
        let built = source.built.iter().map(|(a, b)| (a.clone(), b.clone())).collect();
        Ok(Some(EntrySpec { manifest: manifest.get_ref().clone(), built }))
    }

    fn unknown_of(&self, what: &str, name: &str, known: &BTreeSet<&str>) -> String {
        let known: Vec<&str> = known.iter().copied().collect();
        format!("{what} `{name}` is not defined (defined: {})", if known.is_empty() { "none".into() } else { known.join(", ") })
    }

    fn fact(&self, name: &str, fact: &Spanned<RawFact>, regions: &BTreeSet<&str>, all: &BTreeMap<String, Spanned<RawFact>>) -> Result<FactRequest, InputError> {
        let span = fact.span();
        let f = fact.get_ref();
        let key = format!("facts.{name}");
        if !regions.contains(f.region.as_str()) {
            return self.err(span, &format!("{key}.region"), self.unknown_of("region", &f.region, regions));
        }
        let patterns = |list: &[String], which: &str| -> Result<Vec<ArgPattern>, InputError> {
            list.iter().map(|p| ArgPattern::parse(p).or_else(|e| self.err(span.clone(), &format!("{key}.{which}"), e))).collect()
        };
        let kind = match f.kind.as_str() {
            "call" => {
                if f.test.is_some() || f.before.is_some() {
                    return self.err(span, &key, "`test` and `before` belong to kind `guard`, not `call`");
                }
                let Some(callee) = &f.callee else { return self.err(span, &format!("{key}.callee"), "kind `call` needs a `callee`") };
                let args = f.args.as_deref().map(|a| patterns(a, "args")).transpose()?;
                if f.matching && args.is_none() {
                    return self.err(span, &format!("{key}.matching"), "`matching` selects calls by their `args`: give `args`");
                }
                FactKind::Call { callee: callee.clone(), args, matching: f.matching }
            }
            "guard" => {
                if f.callee.is_some() || f.args.is_some() {
                    return self.err(span, &key, "`callee` and `args` of a guard go inside its `test`");
                }
                let Some(test) = &f.test else { return self.err(span, &format!("{key}.test"), "kind `guard` needs a `test`") };
                let Some(before) = &f.before else {
                    return self.err(span, &format!("{key}.before"), "kind `guard` needs `before`: the call fact it must precede");
                };
                match all.get(before) {
                    Some(target) if target.get_ref().kind == "call" => {}
                    Some(_) => return self.err(span, &format!("{key}.before"), format!("`{before}` is not a `call` fact")),
                    None => {
                        let names: BTreeSet<&str> = all.keys().map(String::as_str).collect();
                        return self.err(span, &format!("{key}.before"), self.unknown_of("fact", before, &names));
                    }
                }
                let receiver = match &test.receiver {
                    Some(r) => {
                        let receiver = ArgPattern::parse(r).or_else(|e| self.err(span.clone(), &format!("{key}.test.receiver"), e))?;
                        if !matches!(receiver.shape, ArgShape::Param(_) | ArgShape::Var(_)) {
                            return self.err(span, &format!("{key}.test.receiver"), "a guard tests a parameter or variable: `param:NAME` or `var:NAME`");
                        }
                        Some(receiver)
                    }
                    None => None,
                };
                FactKind::Guard {
                    callee: test.callee.clone(),
                    receiver,
                    args: patterns(&test.args, "test.args")?,
                    before: before.clone(),
                    negated: test.negated,
                    returns: f.returns.clone(),
                    conjuncts: f.conjuncts.clone().unwrap_or_default(),
                }
            }
            "default" => {
                let (Some(argument), Some(helpers)) = (&f.argument, &f.helpers) else {
                    return self.err(span, &key, "kind `default` needs `argument` and `helpers`");
                };
                if helpers.is_empty() {
                    return self.err(span, &format!("{key}.helpers"), "list at least one reviewed helper");
                }
                let helpers = helpers
                    .iter()
                    .map(|(h, rule)| DefaultRule::parse(rule).map(|r| (h.clone(), r)).or_else(|e| self.err(span.clone(), &format!("{key}.helpers"), e)))
                    .collect::<Result<_, _>>()?;
                if f.inert.is_some() && f.definition.is_none() {
                    return self.err(span, &format!("{key}.inert"), "`inert` lists members of the option `definition`: give `definition`");
                }
                FactKind::Default { argument: argument.clone(), helpers, definition: f.definition.clone(), inert: f.inert.clone() }
            }
            "field" => {
                let (Some(field), Some(from)) = (&f.field, &f.from) else {
                    return self.err(span, &key, "kind `field` needs `field` and `from` (and, in Go, `sink` and `arg`)");
                };
                if let Some(sink) = &f.sink {
                    self.fact_of_kind(all, sink, &["call"], span.clone(), &format!("{key}.sink"))?;
                }
                self.fact_of_kind(all, from, &["default", "map"], span.clone(), &format!("{key}.from"))?;
                FactKind::Field { sink: f.sink.clone(), arg: f.arg, field: field.clone(), wrap: f.wrap.clone(), from: from.clone() }
            }
            "pass" => {
                let (Some(sink), Some(from)) = (&f.sink, &f.from) else {
                    return self.err(span, &key, "kind `pass` needs `sink` and `from`");
                };
                self.fact_of_kind(all, sink, &["call"], span.clone(), &format!("{key}.sink"))?;
                self.fact_of_kind(all, from, &["default"], span.clone(), &format!("{key}.from"))?;
                FactKind::Pass { sink: sink.clone(), from: from.clone() }
            }
            "map" => {
                let Some(from) = &f.from else { return self.err(span, &key, "kind `map` needs `from`, a `pass` fact") };
                self.fact_of_kind(all, from, &["pass"], span.clone(), &format!("{key}.from"))?;
                FactKind::Map { from: from.clone() }
            }
            "key" => {
                let Some(k) = &f.key else { return self.err(span, &key, "kind `key` needs `key`") };
                FactKind::Key { key: k.clone() }
            }
            "flow" => {
                let (Some(from), Some(sink)) = (&f.from, &f.sink) else {
                    return self.err(span, &key, "kind `flow` needs `from` (a `field` or `call` fact) and `sink` (a `call` fact)");
                };
                self.fact_of_kind(all, from, &["field", "call"], span.clone(), &format!("{key}.from"))?;
                self.fact_of_kind(all, sink, &["call"], span.clone(), &format!("{key}.sink"))?;
                FactKind::Flow { from: from.clone(), sink: sink.clone(), into: f.into.clone() }
            }
            "table" => {
                let (Some(row), Some(member)) = (&f.row, &f.member) else {
                    return self.err(span, &key, "kind `table` needs `row` and `member`");
                };
                FactKind::Table { row: row.clone(), member: member.clone() }
            }
            "exit" => {
                let (Some(returns), Some(conditions)) = (&f.returns, &f.conditions) else {
                    return self.err(span, &key, "kind `exit` needs `returns` and `conditions`");
                };
                let conditions = conditions
                    .iter()
                    .map(|c| Comparison::parse(c).or_else(|e| self.err(span.clone(), &format!("{key}.conditions"), e)))
                    .collect::<Result<Vec<_>, _>>()?;
                if conditions.is_empty() {
                    return self.err(span, &format!("{key}.conditions"), "list at least one comparison");
                }
                FactKind::Exit { returns: returns.clone(), conditions }
            }
            "body" => {
                let Some(digests) = &f.digests else {
                    return self.err(span, &key, "kind `body` needs `digests`, the reviewed bodies' `sha256:` token digests");
                };
                if digests.is_empty() || !digests.iter().all(|d| canon::is_sha256(d)) {
                    return self.err(span, &format!("{key}.digests"), "list `sha256:` digests (64 lower-case hex digits)");
                }
                FactKind::Body { digests: digests.clone() }
            }
            other => {
                return self.err(
                    span,
                    &format!("{key}.kind"),
                    format!("`{other}` is not a fact kind (known: call, guard, default, field, pass, map, key, flow, table, exit, body)"),
                );
            }
        };
        let allowed: &[&str] = match kind.name() {
            "call" => &["callee", "args", "matching"],
            "guard" => &["test", "before", "returns", "conjuncts"],
            "table" => &["row", "member"],
            "exit" => &["returns", "conditions"],
            "default" => &["argument", "helpers", "definition", "inert"],
            "flow" => &["from", "sink", "into"],
            "field" => &["sink", "arg", "field", "wrap", "from"],
            "pass" => &["sink", "from"],
            "map" => &["from"],
            "body" => &["digests"],
            _ => &["key"],
        };
        let foreign: Vec<&str> = [
            ("callee", f.callee.is_some()),
            ("args", f.args.is_some()),
            ("matching", f.matching),
            ("test", f.test.is_some()),
            ("before", f.before.is_some()),
            ("argument", f.argument.is_some()),
            ("helpers", f.helpers.is_some()),
            ("definition", f.definition.is_some()),
            ("inert", f.inert.is_some()),
            ("into", f.into.is_some()),
            ("sink", f.sink.is_some()),
            ("arg", f.arg.is_some()),
            ("field", f.field.is_some()),
            ("wrap", f.wrap.is_some()),
            ("from", f.from.is_some()),
            ("key", f.key.is_some()),
            ("returns", f.returns.is_some()),
            ("row", f.row.is_some()),
            ("member", f.member.is_some()),
            ("conditions", f.conditions.is_some()),
            ("digests", f.digests.is_some()),
            ("conjuncts", f.conjuncts.is_some()),
        ]
        .into_iter()
        .filter(|(k, set)| *set && !allowed.contains(k))
        .map(|(k, _)| k)
        .collect();
        if !foreign.is_empty() {
            return self.err(span, &key, format!("{} do not apply to kind `{}`", foreign.join(", "), kind.name()));
        }
        for implied in &f.implies {
            if !all.contains_key(implied) {
                let names: BTreeSet<&str> = all.keys().map(String::as_str).collect();
                return self.err(span, &format!("{key}.implies"), self.unknown_of("fact", implied, &names));
            }
        }
        Ok(FactRequest { spec: FactSpec { name: name.to_owned(), region: f.region.clone(), kind }, required: f.required, implies: f.implies.clone() })
    }

    /// `name` must be a fact of one of these kinds.
    fn fact_of_kind(
        &self,
        all: &BTreeMap<String, Spanned<RawFact>>,
        name: &str,
        kinds: &[&str],
        span: std::ops::Range<usize>,
        key: &str,
    ) -> Result<(), InputError> {
        match all.get(name) {
            Some(f) if kinds.contains(&f.get_ref().kind.as_str()) => Ok(()),
            _ => self.err(span, key, format!("`{name}` is not a {} fact of this profile", kinds.join(" or "))),
        }
    }

    fn rule(&self, index: usize, rule: &Spanned<RawRule>, facts: &BTreeSet<&str>, arguments: &BTreeMap<String, ArgSpec>) -> Result<RuleTemplate, InputError> {
        let span = rule.span();
        let r = rule.get_ref();
        let key = format!("rules[{index}]");
        for f in r.requires.iter().chain(&r.unless) {
            if !facts.contains(f.as_str()) {
                return self.err(span, &format!("{key}.requires"), self.unknown_of("fact", f, facts));
            }
        }
        let mut fact_equals = Vec::new();
        for (path, value) in &r.fact_equals {
            let Some((fact, field)) = path.split_once('.').filter(|(f, k)| facts.contains(f) && !k.is_empty()) else {
                return self.err(span, &format!("{key}.fact-equals"), format!("`{path}` is not FACT.KEY of a fact of this profile"));
            };
            let value = serde_json::to_value(value).or_else(|e| self.err(span.clone(), &format!("{key}.fact-equals"), e))?;
            fact_equals.push((fact.to_owned(), field.to_owned(), value));
        }
        let mut captures = BTreeSet::new();
        let when = self.predicate(&r.when, &format!("{key}.when"), span.clone(), arguments, &mut captures)?;
        let then = self.outcome(&r.then, &format!("{key}.then"), span.clone())?;
        if let Outcome::Effects(effects) = &then {
            for e in effects {
                let templates = [&e.op, &e.principal, &e.destination, &e.resource, &e.exposure].into_iter().chain(&e.write_scopes);
                for t in templates {
                    let names = t.placeholders();
                    for name in names {
                        self.placeholder(&name, &key, span.clone(), arguments, &captures)?;
                    }
                }
            }
        }
        Ok(RuleTemplate {
            requires: r.requires.clone(),
            unless: r.unless.clone(),
            rule: Rule {
                when,
                then,
                facts: r.requires.iter().chain(fact_equals.iter().map(|(f, _, _)| f)).cloned().collect::<BTreeSet<_>>().into_iter().collect(),
                note: r.note.clone(),
            },
            fact_equals,
        })
    }

    fn placeholder(
        &self,
        name: &str,
        key: &str,
        span: std::ops::Range<usize>,
        arguments: &BTreeMap<String, ArgSpec>,
        captures: &BTreeSet<String>,
    ) -> Result<(), InputError> {
        // `{a|b}` takes the first alternative the call can fill.
        let ok = name.split('|').all(|name| {
            if let Some(arg) = name.strip_prefix("arg.") {
                arguments.contains_key(arg)
            } else if let Some(env) = name.strip_prefix("env.") {
                matches!(env, "principal" | "destination" | "principal_login") || env.starts_with("config.")
            } else {
                captures.contains(name)
            }
        });
        if ok {
            Ok(())
        } else {
            self.err(
                span,
                &format!("{key}.then"),
                format!("placeholder `{{{name}}}` names nothing: use `arg.NAME` of a declared argument, `env.principal`, `env.destination`, `env.principal_login`, `env.config.KEY` or a named group of the rule's `matches`"),
            )
        }
    }

    fn predicate(
        &self,
        p: &RawPredicate,
        key: &str,
        span: std::ops::Range<usize>,
        arguments: &BTreeMap<String, ArgSpec>,
        captures: &mut BTreeSet<String>,
    ) -> Result<Predicate, InputError> {
        let combinators = [p.all.is_some(), p.any.is_some(), p.not.is_some(), p.always.is_some()];
        let tests = [p.starts_with.is_some(), p.matches.is_some(), p.ty.is_some(), p.equals.is_some(), p.absent.is_some(), p.present.is_some()];
        let subjects = [p.arg.is_some(), p.env.is_some()];
        let count = |xs: &[bool]| xs.iter().filter(|x| **x).count();
        if count(&combinators) > 0 {
            if count(&combinators) > 1 || count(&tests) > 0 || count(&subjects) > 0 {
                return self.err(span, key, "`all`, `any`, `not` and `always` stand alone in their table");
            }
            let list = |ps: &[RawPredicate], name: &str, captures: &mut BTreeSet<String>| -> Result<Vec<Predicate>, InputError> {
                ps.iter().enumerate().map(|(i, q)| self.predicate(q, &format!("{key}.{name}[{i}]"), span.clone(), arguments, captures)).collect()
            };
            return Ok(if let Some(ps) = &p.all {
                Predicate::All(list(ps, "all", captures)?)
            } else if let Some(ps) = &p.any {
                Predicate::Any(list(ps, "any", captures)?)
            } else if let Some(q) = &p.not {
                // Groups inside a negation never match, so they are not usable values.
                Predicate::Not(Box::new(self.predicate(q, &format!("{key}.not"), span, arguments, &mut BTreeSet::new())?))
            } else if p.always == Some(true) {
                Predicate::Always
            } else {
                return self.err(span, key, "`always` can only be `true`");
            });
        }
        if count(&subjects) != 1 || count(&tests) != 1 {
            return self.err(
                span,
                key,
                "a condition is one subject (`arg` or `env`) and one test (`starts-with`, `matches`, `type`, `equals`, `absent`, `present`), or one of `all`, `any`, `not`, `always`",
            );
        }
        let test = if let Some(s) = &p.starts_with {
            Test::StartsWith(s.clone())
        } else if let Some(re) = &p.matches {
            let compiled = Pattern::new(re).or_else(|e| self.err(span.clone(), &format!("{key}.matches"), e))?;
            captures.extend(compiled.capture_names().map(str::to_owned));
            Test::Matches(compiled)
        } else if let Some(t) = &p.ty {
            Test::Type(ValueType::parse(t).map_or_else(|| self.err(span.clone(), &format!("{key}.type"), format!("`{t}` is not a JSON type")), Ok)?)
        } else if let Some(v) = &p.equals {
            Test::Equals(serde_json::to_value(v).or_else(|e| self.err(span.clone(), &format!("{key}.equals"), e))?)
        } else if p.absent == Some(true) {
            Test::Absent
        } else if p.present == Some(true) {
            Test::Present
        } else {
            return self.err(span, key, "`absent` and `present` can only be `true`");
        };
        Ok(match (&p.arg, &p.env) {
            (Some(name), _) => {
                if !arguments.is_empty() && !arguments.contains_key(name) {
                    let names: BTreeSet<&str> = arguments.keys().map(String::as_str).collect();
                    return self.err(span, &format!("{key}.arg"), self.unknown_of("argument", name, &names));
                }
                // A string test on an argument declared with another type could
                // never hold; it is a profile error, not a rule that falls through.
                let string_test = matches!(test, Test::StartsWith(_) | Test::Matches(_));
                if let Some(spec) = arguments.get(name)
                    && string_test
                    && spec.ty != ValueType::String
                {
                    return self.err(span, key, format!("a string test on argument `{name}`, which is declared {}", spec.ty.name()));
                }
                if let (Some(spec), Test::Equals(v)) = (arguments.get(name), &test)
                    && !spec.ty.holds(v)
                {
                    return self.err(span, key, format!("`equals` compares argument `{name}` ({}) with {}", spec.ty.name(), ValueType::of_value(v)));
                }
                Predicate::Arg { name: name.clone(), test }
            }
            (None, Some(path)) => Predicate::Env { path: path.clone(), test },
            (None, None) => unreachable!("exactly one subject was checked above"),
        })
    }

    fn outcome(&self, o: &RawOutcome, key: &str, span: std::ops::Range<usize>) -> Result<Outcome, InputError> {
        let set = [o.effect.is_some(), o.effects.is_some(), o.reject.is_some(), o.unknown.is_some()];
        if set.iter().filter(|x| **x).count() != 1 {
            return self.err(span, key, "exactly one of `effect`, `effects`, `reject`, `unknown`");
        }
        if let Some(code) = &o.reject {
            return Ok(Outcome::Reject(code.clone()));
        }
        if let Some(reason) = &o.unknown {
            return Ok(Outcome::Unknown(reason.clone()));
        }
        let raw: Vec<&RawEffect> = o.effect.iter().chain(o.effects.iter().flatten()).collect();
        if raw.is_empty() {
            return self.err(span, key, "`effects` lists at least one effect");
        }
        raw.into_iter()
            .map(|e| {
                let fixed_op = !e.op.contains('{');
                if fixed_op && e.op.split_once(':').is_none_or(|(d, op)| d.is_empty() || op.is_empty()) {
                    return self.err(span.clone(), &format!("{key}.op"), format!("`{}` is not `domain:operation`", e.op));
                }
                if !e.exposure.contains('{') && Exposure::parse(&e.exposure).is_none() {
                    return self.err(span.clone(), &format!("{key}.exposure"), format!("`{}` is not none, private or public", e.exposure));
                }
                let template = |field: &str, text: &str| text.parse::<Template>().or_else(|m| self.err(span.clone(), &format!("{key}.{field}"), m));
                Ok(EffectTemplate {
                    op: template("op", &e.op)?,
                    principal: template("principal", &e.principal)?,
                    destination: template("destination", &e.destination)?,
                    resource: template("resource", &e.resource)?,
                    exposure: template("exposure", &e.exposure)?,
                    mutation: e.mutation,
                    write_scopes: e.write_scopes.iter().map(|w| template("write_scopes", w)).collect::<Result<_, _>>()?,
                })
            })
            .collect::<Result<_, _>>()
            .map(Outcome::Effects)
    }
}
