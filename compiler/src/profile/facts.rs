//! `[facts]`: one enum variant per fact kind, each with exactly its keys.
//!
//! A fact is read in three steps, so that every problem is named: its `kind`
//! must be known; its keys must be the kind's own (a key of another kind, or
//! of none, is an error naming the key); then [`RawFact`], tagged by `kind`
//! and denying unknown fields, is deserialized and its references checked.
//! The keys of each kind are read from the variant's own serde fields, never
//! kept by hand; what each kind emits is `FactKind::EMITS` in the frontends.

use std::collections::{BTreeMap, BTreeSet};

use schemars::JsonSchema;
use serde::Deserialize;

use fcd_frontends::{ArgPattern, ArgShape, Comparison, DefaultRule, FactKind, FactSpec, Lang, support};

use super::fields::fields;
use super::schema::{RawFactTable, RawRegion, Spanned};
use super::{FactRequest, Span, Validator, diagnose};
use fcd_model::canon;
use fcd_model::error::InputError;

/// The keys every fact has, whatever its kind (`kind` is the tag).
#[derive(Deserialize, JsonSchema)]
struct Common {
    region: String,
    #[serde(default)]
    required: bool,
    #[serde(default)]
    implies: Vec<String>,
}
const COMMON: [&str; 4] = ["kind", "region", "required", "implies"];

/// A fact's kind-specific keys, by kind.
#[derive(Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "lowercase")]
enum RawFact {
    Call(CallFact),
    Guard(GuardFact),
    Default(DefaultFact),
    Field(FieldFact),
    Option(OptionFact),
    Pass(PassFact),
    Map(MapFact),
    Key(KeyFact),
    Flow(FlowFact),
    Table(TableFact),
    Exit(ExitFact),
    Body(BodyFact),
    Hook(HookFact),
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct CallFact {
    callee: String,
    args: Option<Vec<String>>,
    /// Keyword (Python) or named (C#) arguments by name, each with its pattern.
    keywords: Option<BTreeMap<String, String>>,
    #[serde(default)]
    matching: bool,
    /// With `matching`: every call of the callee in the region must be one
    /// that an exhaustive fact on it matched.
    #[serde(default)]
    exhaustive: bool,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct GuardFact {
    test: RawGuardTest,
    before: String,
    returns: Option<String>,
    #[serde(default)]
    conjuncts: Vec<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct RawGuardTest {
    callee: String,
    receiver: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    negated: bool,
    equals: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct DefaultFact {
    argument: String,
    helpers: BTreeMap<String, String>,
    definition: Option<String>,
    inert: Option<Vec<String>>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct FieldFact {
    sink: Option<String>,
    arg: Option<usize>,
    field: String,
    wrap: Option<String>,
    from: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct OptionFact {
    property: String,
    attribute: String,
    #[serde(rename = "type")]
    ty: String,
    argument: String,
    #[serde(default)]
    inert: Vec<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct PassFact {
    sink: String,
    from: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct MapFact {
    from: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct KeyFact {
    key: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct FlowFact {
    from: String,
    sink: String,
    into: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct TableFact {
    row: String,
    member: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ExitFact {
    returns: String,
    conditions: Vec<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct BodyFact {
    digests: Vec<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct HookFact {
    /// The call fact whose object the hook is installed on.
    before: String,
    /// The object's attribute assigned (`event_hooks`).
    attribute: String,
    /// The functions installed, each with the condition it is installed
    /// under (the tokens of a plain `if` test; `""` for always).
    installs: BTreeMap<String, String>,
}

/// A fact as `profile.toml` writes it, for the JSON Schema: one of the
/// [`RawFact`] variants (tagged by `kind`) with the [`Common`] keys beside its own.
pub(super) struct FactSchema;

impl JsonSchema for FactSchema {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Fact".into()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let common = Common::json_schema(generator);
        let mut fact = RawFact::json_schema(generator);
        let common_properties = common.get("properties").and_then(|p| p.as_object()).cloned().unwrap_or_default();
        if let Some(variants) = fact.get_mut("oneOf").and_then(|v| v.as_array_mut()) {
            for variant in variants.iter_mut().filter_map(|v| v.as_object_mut()) {
                if let Some(properties) = variant.get_mut("properties").and_then(|p| p.as_object_mut()) {
                    properties.extend(common_properties.clone());
                }
                if let Some(required) = variant.get_mut("required").and_then(|r| r.as_array_mut()) {
                    required.push("region".into());
                }
            }
        }
        fact.insert("description".into(), "A fact the profile asks for: its `kind`, `region`, `required`, `implies` and the kind's own keys (profiles/README.md; which languages read each kind and key: the table there).".into());
        fact
    }
}

/// The kind-specific keys of a kind, read from its variant's serde fields.
pub(super) fn keys_of(kind: &str) -> Option<&'static [&'static str]> {
    Some(match kind {
        "call" => fields::<CallFact>(),
        "guard" => fields::<GuardFact>(),
        "default" => fields::<DefaultFact>(),
        "field" => fields::<FieldFact>(),
        "option" => fields::<OptionFact>(),
        "pass" => fields::<PassFact>(),
        "map" => fields::<MapFact>(),
        "key" => fields::<KeyFact>(),
        "flow" => fields::<FlowFact>(),
        "table" => fields::<TableFact>(),
        "exit" => fields::<ExitFact>(),
        "body" => fields::<BodyFact>(),
        "hook" => fields::<HookFact>(),
        _ => return None,
    })
}

/// Whether serde reads `kind` as a tag of [`RawFact`] (the tests check it
/// against [`keys_of`] and `FactKind::EMITS`).
#[cfg(test)]
pub(super) fn is_tag(kind: &str) -> bool {
    let table = toml::Table::from_iter([("kind".to_owned(), toml::Value::from(kind))]);
    toml::Value::Table(table).try_into::<RawFact>().map_or_else(|e| !e.message().contains("unknown variant"), |_| true)
}

/// Fact name -> its `kind` as written (known or not), for references.
pub(super) fn kinds(facts: &BTreeMap<String, Spanned<RawFactTable>>) -> BTreeMap<&str, &str> {
    facts.iter().map(|(name, f)| (name.as_str(), plain_get(f.get_ref(), "kind").and_then(toml::Value::as_str).unwrap_or(""))).collect()
}

fn plain_get<'t>(table: &'t RawFactTable, key: &str) -> Option<&'t toml::Value> {
    table.iter().find(|(k, _)| k.get_ref() == key).map(|(_, v)| v)
}

/// The table without positions, leaving out the keys in `skip`.
fn plain(table: &RawFactTable, skip: &[&str]) -> toml::Value {
    toml::Value::Table(table.iter().filter(|(k, _)| !skip.contains(&k.get_ref().as_str())).map(|(k, v)| (k.get_ref().clone(), v.clone())).collect())
}

impl Validator<'_> {
    /// Every fact that validates, and whether all did (each error recorded).
    pub(super) fn facts(
        &self,
        raw: &BTreeMap<String, Spanned<RawFactTable>>,
        regions: &BTreeMap<String, Spanned<RawRegion>>,
        language: Option<Lang>,
    ) -> (Vec<FactRequest>, bool) {
        // A helper region is read for what it calls; no fact states anything of it.
        let regions: BTreeSet<&str> = regions.iter().filter(|(_, r)| !r.get_ref().helper).map(|(k, _)| k.as_str()).collect();
        let kinds = kinds(raw);
        let mut facts = Vec::new();
        let mut ok = true;
        for (name, fact) in raw {
            match self.fact(name, fact, &regions, &kinds, language) {
                Some(f) => facts.push(f),
                None => ok = false,
            }
        }
        (facts, ok)
    }

    fn fact(
        &self,
        name: &str,
        fact: &Spanned<RawFactTable>,
        regions: &BTreeSet<&str>,
        all: &BTreeMap<&str, &str>,
        language: Option<Lang>,
    ) -> Option<FactRequest> {
        let span = fact.span();
        let table = fact.get_ref();
        // Where a key of this fact is written; the fact's header when it is not.
        let at = |field: &str| table.keys().find(|k| k.get_ref() == field).map_or_else(|| span.clone(), Spanned::span);
        let key = format!("facts.{name}");
        let known: Vec<&str> = FactKind::EMITS.iter().map(|(k, _)| *k).collect();
        let Some(kind) = plain_get(table, "kind") else {
            return self.keep(self.err(span, &format!("{key}.kind"), format!("a fact names its `kind` (known: {})", known.join(", "))));
        };
        let Some(own) = kind.as_str().and_then(keys_of) else {
            let shown = kind.as_str().map_or_else(|| kind.to_string(), str::to_owned);
            let hint = diagnose::did_you_mean(&shown, known.iter().copied());
            return self.keep(self.err(at("kind"), &format!("{key}.kind"), format!("`{shown}` is not a fact kind (known: {}){hint}", known.join(", "))));
        };
        let kind = kind.as_str().unwrap_or_default();
        let mut fine = self.keys(table, kind, own, &key);
        if let Some(language) = language {
            fine &= self.read_by(table, kind, language, &at, &key);
        }

        let common = plain(table, &[]).try_into::<Common>();
        let common = self.keep(common.or_else(|e| self.err(span.clone(), &key, e.message().trim_end())));
        if let Some(c) = &common {
            if !regions.contains(c.region.as_str()) {
                fine &= self.keep(self.err::<()>(at("region"), &format!("{key}.region"), self.unknown_of("region", &c.region, regions))).is_some();
            }
            for implied in &c.implies {
                if !all.contains_key(implied.as_str()) {
                    let names: BTreeSet<&str> = all.keys().copied().collect();
                    fine &= self.keep(self.err::<()>(at("implies"), &format!("{key}.implies"), self.unknown_of("fact", implied, &names))).is_some();
                }
            }
        }
        if !fine {
            return None;
        }
        let raw = plain(table, &COMMON[1..]).try_into::<RawFact>().or_else(|e| {
            let message = e.message().trim_end();
            match message.strip_prefix("missing field ") {
                Some(field) => self.err(span.clone(), &key, format!("kind `{kind}` needs {field}")),
                None => self.err(span.clone(), &key, message),
            }
        });
        let raw = self.keep(raw)?;
        let exhaustive = matches!(&raw, RawFact::Call(c) if c.exhaustive);
        if exhaustive && !matches!(&raw, RawFact::Call(c) if c.matching) {
            return self.keep(self.err(
                at("exhaustive"),
                &format!("{key}.exhaustive"),
                "`exhaustive` goes with `matching = true`: it says the matching facts of a callee cover every call of it",
            ));
        }
        let kind = self.kind(raw, &at, &key, all);
        let (kind, common) = (self.keep(kind)?, common?);
        // A splat pattern only the Python and JavaScript frontends match: elsewhere it could never hold.
        let splat = |ps: &[ArgPattern]| ps.iter().any(|p| matches!(p.shape, ArgShape::Splat(_)));
        let splats = match &kind {
            FactKind::Call { args, .. } => args.as_deref().is_some_and(splat),
            FactKind::Guard { args, receiver, .. } => splat(args) || receiver.iter().any(|r| matches!(r.shape, ArgShape::Splat(_))),
            _ => false,
        };
        if let Some(language) = language.filter(|l| splats && !support::splat_languages().contains(l)) {
            return self.keep(self.err(at("args"), &format!("{key}.args"), format!("the {} frontend matches no splat argument (`*…`)", language.name())));
        }
        // `str(…)` only the Python frontend matches.
        let text = |ps: &[ArgPattern]| ps.iter().any(|p| matches!(p.shape, ArgShape::Text(_)));
        let texts = match &kind {
            FactKind::Call { args, keywords, .. } => {
                args.as_deref().is_some_and(text) || keywords.as_ref().is_some_and(|k| text(&k.values().cloned().collect::<Vec<_>>()))
            }
            FactKind::Guard { args, .. } => text(args),
            _ => false,
        };
        if let Some(language) = language.filter(|l| texts && *l != Lang::Python) {
            return self.keep(self.err(at("args"), &format!("{key}.args"), format!("the {} frontend matches no `str(…)` argument", language.name())));
        }
        // `state:NAME` only the JavaScript frontend matches.
        let state = match &kind {
            FactKind::Call { args, .. } => args.as_deref().is_some_and(|ps| ps.iter().any(|p| matches!(p.shape, ArgShape::State(_)))),
            _ => false,
        };
        if let Some(language) = language.filter(|l| state && !matches!(l, Lang::JavaScript | Lang::TypeScript)) {
            return self.keep(self.err(at("args"), &format!("{key}.args"), format!("the {} frontend matches no `state:` argument", language.name())));
        }
        Some(FactRequest {
            spec: FactSpec { name: name.to_owned(), region: common.region, kind },
            required: common.required,
            implies: common.implies,
            exhaustive,
        })
    }

    /// Every key is the kind's own or common: records each that is not, at
    /// its own position, and says whether all are.
    fn keys(&self, table: &RawFactTable, kind: &str, own: &[&str], key: &str) -> bool {
        let owners = |k: &str| -> Vec<&str> {
            FactKind::EMITS.iter().map(|(other, _)| *other).filter(|other| keys_of(other).is_some_and(|keys| keys.contains(&k))).collect()
        };
        let stray: Vec<&Spanned<String>> = table.keys().filter(|k| !COMMON.contains(&k.get_ref().as_str()) && !own.contains(&k.get_ref().as_str())).collect();
        for k in &stray {
            let name = k.get_ref().as_str();
            let owners = owners(name);
            let message = if owners.is_empty() {
                let expected: Vec<String> = COMMON.iter().chain(own).map(|k| format!("`{k}`")).collect();
                let hint = diagnose::did_you_mean(name, COMMON.iter().chain(own).copied());
                format!("unknown field `{name}`, expected one of {}{hint}", expected.join(", "))
            } else if kind == "call" && ["test", "before"].contains(&name) {
                "`test` and `before` belong to kind `guard`, not `call`".to_owned()
            } else if kind == "guard" && ["callee", "args"].contains(&name) {
                "`callee` and `args` of a guard go inside its `test`".to_owned()
            } else {
                format!(
                    "`{name}` does not apply to kind `{kind}` (it is a key of kind {})",
                    owners.iter().map(|o| format!("`{o}`")).collect::<Vec<_>>().join(", ")
                )
            };
            self.keep(self.err::<()>(k.span(), &format!("{key}.{name}"), message));
        }
        stray.is_empty()
    }

    /// The profile's language reads the kind and every key written (the
    /// table of `fcd_frontends::support`), and is given every key it needs:
    /// records each problem and says whether there is none.
    fn read_by(&self, table: &RawFactTable, kind: &str, language: Lang, at: &dyn Fn(&str) -> Span, key: &str) -> bool {
        let names = |langs: &[Lang]| langs.iter().map(|l| l.name()).collect::<Vec<_>>().join(", ");
        let kind_langs = support::kind_languages(kind);
        if !kind_langs.contains(&language) {
            let reads: Vec<&str> = support::KINDS.iter().filter(|(_, ls)| ls.contains(&language)).map(|(k, _)| *k).collect();
            let message =
                format!("the {language} frontend does not extract `{kind}` facts (read by {} only; {language} reads: {})", names(kind_langs), reads.join(", "));
            self.keep(self.err::<()>(at("kind"), &format!("{key}.kind"), message));
            return false;
        }
        let mut written: Vec<(String, Span)> = table.keys().map(|k| (format!("{kind}.{}", k.get_ref()), k.span())).collect();
        if let Some((_, toml::Value::Table(test))) = table.iter().find(|(k, _)| k.get_ref() == "test") {
            written.extend(test.keys().map(|k| (format!("{kind}.test.{k}"), at("test"))));
        }
        let mut fine = true;
        for (path, span) in &written {
            if !support::reads_key(language, path) {
                let langs = support::KEYS.iter().find(|(k, _)| k == path).map_or(&[][..], |(_, ls)| *ls);
                let shown = &path[kind.len() + 1..];
                let message =
                    format!("the {language} frontend does not read `{shown}` of a `{kind}` fact (read by {} only): it would be ignored", names(langs));
                fine &= self.keep(self.err::<()>(span.clone(), &format!("{key}.{shown}"), message)).is_some();
            }
        }
        for (path, _) in support::NEEDS.iter().filter(|(k, _)| k.strip_prefix(kind).is_some_and(|r| r.starts_with('.'))) {
            if support::needs_key(language, path) && !written.iter().any(|(w, _)| w == path) {
                let shown = &path[kind.len() + 1..];
                fine &= self.keep(self.err::<()>(at(""), key, format!("a `{kind}` fact in {language} needs `{shown}`"))).is_some();
            }
        }
        fine
    }

    /// Every `call` fact's callee and every guard's tested callee is in the
    /// inventory of the fact's region: a callee outside it could never be
    /// called without escalating, so the fact could never hold.
    pub(super) fn callees_in_inventory(
        &self,
        raw: &BTreeMap<String, Spanned<RawFactTable>>,
        facts: &[FactRequest],
        inventories: &BTreeMap<String, BTreeSet<String>>,
    ) {
        for f in facts {
            let (callee, written) = match &f.spec.kind {
                FactKind::Call { callee, .. } => (callee, "callee"),
                FactKind::Guard { callee, .. } => (callee, "test"),
                _ => continue,
            };
            let Some(inventory) = inventories.get(&f.spec.region) else { continue };
            if inventory.contains(callee) {
                continue;
            }
            let Some(table) = raw.get(&f.spec.name) else { continue };
            let span = table.get_ref().keys().find(|k| k.get_ref() == written).map_or_else(|| table.span(), Spanned::span);
            let hint = diagnose::did_you_mean(callee, inventory.iter().map(String::as_str));
            let key = if written == "test" { format!("facts.{}.test.callee", f.spec.name) } else { format!("facts.{}.callee", f.spec.name) };
            let message = format!("`{callee}` is not in `[inventory.{}]`: a call to it would escalate, so the fact could never hold{hint}", f.spec.region);
            self.keep(self.err::<()>(span, &key, message));
        }
    }

    /// A fact's `before` (a guard's, a hook's) names a `call` fact of the profile.
    fn before_call(&self, before: &str, at: &dyn Fn(&str) -> Span, key: &str, all: &BTreeMap<&str, &str>) -> Result<(), InputError> {
        match all.get(before) {
            Some(&"call") => Ok(()),
            Some(_) => self.err(at("before"), &format!("{key}.before"), format!("`{before}` is not a `call` fact")),
            None => {
                let names: BTreeSet<&str> = all.keys().copied().collect();
                self.err(at("before"), &format!("{key}.before"), self.unknown_of("fact", before, &names))
            }
        }
    }

    /// The kind's values checked into a [`FactKind`].
    fn kind(&self, raw: RawFact, at: &dyn Fn(&str) -> Span, key: &str, all: &BTreeMap<&str, &str>) -> Result<FactKind, InputError> {
        let patterns = |list: &[String], which: &str| -> Result<Vec<ArgPattern>, InputError> {
            list.iter()
                .map(|p| ArgPattern::parse(p).or_else(|e| self.err(at(which.split('.').next().unwrap_or(which)), &format!("{key}.{which}"), e)))
                .collect()
        };
        Ok(match raw {
            RawFact::Call(f) => {
                let args = f.args.as_deref().map(|a| patterns(a, "args")).transpose()?;
                if f.matching && args.is_none() {
                    return self.err(at("matching"), &format!("{key}.matching"), "`matching` selects calls by their `args`: give `args`");
                }
                let keywords = match f.keywords {
                    None => None,
                    Some(table) => {
                        let mut out = BTreeMap::new();
                        for (name, pattern) in table {
                            if !name.chars().all(|c| c.is_alphanumeric() || c == '_') || name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) {
                                return self.err(at("keywords"), &format!("{key}.keywords.{name}"), format!("`{name}` is not an argument name"));
                            }
                            let [p] =
                                patterns(std::slice::from_ref(&pattern), "keywords")?.try_into().unwrap_or_else(|_| unreachable!("one pattern in, one out"));
                            if matches!(p.shape, ArgShape::Splat(_)) {
                                return self.err(at("keywords"), &format!("{key}.keywords.{name}"), "a keyword argument is one value, never a splat");
                            }
                            out.insert(name, p);
                        }
                        Some(out)
                    }
                };
                FactKind::Call { callee: f.callee, args, keywords, matching: f.matching }
            }
            RawFact::Guard(f) => {
                self.before_call(&f.before, at, key, all)?;
                let receiver = match &f.test.receiver {
                    Some(r) => {
                        let receiver = ArgPattern::parse(r).or_else(|e| self.err(at("test"), &format!("{key}.test.receiver"), e))?;
                        if !matches!(receiver.shape, ArgShape::Param(_) | ArgShape::Var(_)) {
                            return self.err(at("test"), &format!("{key}.test.receiver"), "a guard tests a parameter or variable: `param:NAME` or `var:NAME`");
                        }
                        Some(receiver)
                    }
                    None => None,
                };
                let args = patterns(&f.test.args, "test.args")?;
                if f.test.negated && f.test.equals.is_some() {
                    return self.err(at("test"), &format!("{key}.test"), "a test compares the call's result (`equals`) or negates it (`negated`), not both");
                }
                FactKind::Guard {
                    callee: f.test.callee,
                    receiver,
                    args,
                    before: f.before,
                    negated: f.test.negated,
                    returns: f.returns,
                    conjuncts: f.conjuncts,
                    equals: f.test.equals,
                }
            }
            RawFact::Default(f) => {
                if f.helpers.is_empty() {
                    return self.err(at("helpers"), &format!("{key}.helpers"), "list at least one reviewed helper");
                }
                let helpers = f
                    .helpers
                    .iter()
                    .map(|(h, rule)| DefaultRule::parse(rule).map(|r| (h.clone(), r)).or_else(|e| self.err(at("helpers"), &format!("{key}.helpers"), e)))
                    .collect::<Result<_, _>>()?;
                if f.inert.is_some() && f.definition.is_none() {
                    return self.err(at("inert"), &format!("{key}.inert"), "`inert` lists members of the option `definition`: give `definition`");
                }
                FactKind::Default { argument: f.argument, helpers, definition: f.definition, inert: f.inert }
            }
            RawFact::Field(f) => {
                if let Some(sink) = &f.sink {
                    self.fact_of_kind(all, sink, &["call"], at("sink"), &format!("{key}.sink"))?;
                }
                self.fact_of_kind(all, &f.from, &["default", "map"], at("from"), &format!("{key}.from"))?;
                FactKind::Field { sink: f.sink, arg: f.arg, field: f.field, wrap: f.wrap, from: f.from }
            }
            RawFact::Option(f) => {
                let plain_name = |n: &str| !n.is_empty() && n.chars().all(|c| c.is_alphanumeric() || c == '_');
                if !plain_name(&f.property) {
                    return self.err(at("property"), &format!("{key}.property"), "a property name is letters, digits and `_`");
                }
                if !plain_name(&f.attribute) {
                    return self.err(at("attribute"), &format!("{key}.attribute"), "an attribute is its simple name, letters, digits and `_`");
                }
                FactKind::Option { property: f.property, attribute: f.attribute, ty: f.ty, argument: f.argument, inert: f.inert }
            }
            RawFact::Pass(f) => {
                self.fact_of_kind(all, &f.sink, &["call"], at("sink"), &format!("{key}.sink"))?;
                self.fact_of_kind(all, &f.from, &["default", "option"], at("from"), &format!("{key}.from"))?;
                FactKind::Pass { sink: f.sink, from: f.from }
            }
            RawFact::Map(f) => {
                self.fact_of_kind(all, &f.from, &["pass"], at("from"), &format!("{key}.from"))?;
                FactKind::Map { from: f.from }
            }
            RawFact::Key(f) => FactKind::Key { key: f.key },
            RawFact::Flow(f) => {
                self.fact_of_kind(all, &f.from, &["field", "call"], at("from"), &format!("{key}.from"))?;
                self.fact_of_kind(all, &f.sink, &["call"], at("sink"), &format!("{key}.sink"))?;
                FactKind::Flow { from: f.from, sink: f.sink, into: f.into }
            }
            RawFact::Table(f) => FactKind::Table { row: f.row, member: f.member },
            RawFact::Exit(f) => {
                let conditions = f
                    .conditions
                    .iter()
                    .map(|c| Comparison::parse(c).or_else(|e| self.err(at("conditions"), &format!("{key}.conditions"), e)))
                    .collect::<Result<Vec<_>, _>>()?;
                if conditions.is_empty() {
                    return self.err(at("conditions"), &format!("{key}.conditions"), "list at least one comparison");
                }
                FactKind::Exit { returns: f.returns, conditions }
            }
            RawFact::Body(f) => {
                if f.digests.is_empty() || !f.digests.iter().all(|d| canon::is_sha256(d)) {
                    return self.err(at("digests"), &format!("{key}.digests"), "list `sha256:` digests (64 lower-case hex digits)");
                }
                FactKind::Body { digests: f.digests }
            }
            RawFact::Hook(f) => {
                self.before_call(&f.before, at, key, all)?;
                let identifier = |t: &str| !t.is_empty() && !t.starts_with(|c: char| c.is_ascii_digit()) && t.chars().all(|c| c.is_alphanumeric() || c == '_');
                if !identifier(&f.attribute) {
                    return self.err(at("attribute"), &format!("{key}.attribute"), format!("`{}` is not an attribute name", f.attribute));
                }
                if f.installs.is_empty() || !f.installs.keys().all(|i| identifier(i)) {
                    return self.err(
                        at("installs"),
                        &format!("{key}.installs"),
                        "name each installed function (a region's `function`, or one the region defines) with its condition",
                    );
                }
                FactKind::Hook { before: f.before, attribute: f.attribute, installs: f.installs }
            }
        })
    }

    /// `name` must be a fact of one of these kinds.
    fn fact_of_kind(&self, all: &BTreeMap<&str, &str>, name: &str, kinds: &[&str], span: Span, key: &str) -> Result<(), InputError> {
        match all.get(name) {
            Some(kind) if kinds.contains(kind) => Ok(()),
            _ => self.err(span, key, format!("`{name}` is not a {} fact of this profile", kinds.join(" or "))),
        }
    }
}
