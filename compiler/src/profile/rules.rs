//! `[[rules]]`: conditions, outcomes and effect templates, checked against the
//! profile's arguments and facts (a `fact-equals` key must be one the fact's
//! kind emits).

use std::collections::{BTreeMap, BTreeSet};

use fcd_frontends::FactKind;
use fcd_model::effect::Exposure;

use super::schema::{RawEffect, RawInterpreter, RawOutcome, RawPredicate, RawRule, RawUrl, Spanned};
use super::{ArgSpec, RuleTemplate, Span, Validator, diagnose};
use fcd_model::error::InputError;
use fcd_model::rules::{EffectTemplate, Outcome, Pattern, Predicate, Rule, Template, Test, ValueType};

/// The tests a condition may hold, as a message lists them.
const TESTS: &str =
    "`starts-with`, `matches`, `type`, `equals`, `absent`, `present`, `inside`, `below`, `prefixed-by`, `sql-read`, `url`, `any-element`, `every-element`";

/// How many tests a condition's table holds (exactly one is valid).
fn test_count(p: &RawPredicate) -> usize {
    [
        p.starts_with.is_some(),
        p.matches.is_some(),
        p.ty.is_some(),
        p.equals.is_some(),
        p.absent.is_some(),
        p.present.is_some(),
        p.inside.is_some(),
        p.below.is_some(),
        p.prefixed_by.is_some(),
        p.sql_read.is_some(),
        p.url.is_some(),
        p.any_element.is_some(),
        p.every_element.is_some(),
    ]
    .into_iter()
    .filter(|x| *x)
    .count()
}

impl Validator<'_> {
    /// `[interpreters.DIALECT]`: a dialect fcd has the grammar of, and
    /// lower-case names; a dialect with a problem is left out (its error recorded).
    pub(super) fn interpreters(&self, raw: &BTreeMap<String, Spanned<RawInterpreter>>) -> BTreeMap<String, fcd_model::sql::SqlGrammar> {
        let mut out = BTreeMap::new();
        for (dialect, table) in raw {
            let key = format!("interpreters.{dialect}");
            if !fcd_model::sql::DIALECTS.contains(&dialect.as_str()) {
                let known = fcd_model::sql::DIALECTS.join(", ");
                self.keep(self.err::<()>(table.span(), &key, format!("fcd has no grammar for `{dialect}` (known: {known})")));
                continue;
            }
            let t = table.get_ref();
            let mut ok = true;
            let mut names = |list: &[Spanned<String>], field: &str| -> Vec<String> {
                for n in list {
                    let name = n.get_ref();
                    if name.is_empty() || !name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_') {
                        ok = false;
                        self.keep(self.err::<()>(n.span(), &format!("{key}.{field}"), format!("`{name}` is not a lower-case SQL name")));
                    }
                }
                list.iter().map(|n| n.get_ref().clone()).collect()
            };
            let grammar = fcd_model::sql::SqlGrammar {
                dialect: dialect.clone(),
                functions: names(&t.functions, "functions"),
                table_functions: names(&t.table_functions, "table-functions"),
                pragmas: names(&t.pragmas, "pragmas"),
            };
            if ok {
                out.insert(dialect.clone(), grammar);
            }
        }
        out
    }

    /// One rule, or `None` with every independent problem in it recorded.
    pub(super) fn rule(
        &self,
        index: usize,
        rule: &Spanned<RawRule>,
        kinds: &BTreeMap<&str, &str>,
        arguments: &BTreeMap<String, ArgSpec>,
    ) -> Option<RuleTemplate> {
        let r = rule.get_ref();
        let key = format!("rules[{index}]");
        let facts: BTreeSet<&str> = kinds.keys().copied().chain(self.shape_facts.iter().map(String::as_str)).collect();
        let before = self.errors.borrow().len();
        for (which, list) in [("requires", &r.requires), ("unless", &r.unless)] {
            for f in list.iter().filter(|f| !facts.contains(f.get_ref().as_str())) {
                self.keep(self.err::<()>(f.span(), &format!("{key}.{which}"), self.unknown_of("fact", f.get_ref(), &facts)));
            }
        }
        let mut fact_equals = Vec::new();
        for (path, value) in &r.fact_equals {
            let checked = self.fact_equals(path.get_ref(), value, kinds, path.span(), &format!("{key}.fact-equals"));
            fact_equals.extend(self.keep(checked));
        }
        let mut captures = BTreeSet::new();
        let when = self.keep(self.predicate(&r.when, &format!("{key}.when"), arguments, &mut captures));
        let then = self.keep(self.outcome(&r.then, &format!("{key}.then")));
        let then_span = r.then.span();
        if let Some(Outcome::Effects(effects)) = &then {
            for e in effects {
                let templates = [&e.op, &e.principal, &e.destination, &e.resource, &e.exposure].into_iter().chain(&e.write_scopes);
                for t in templates {
                    for name in t.placeholders() {
                        self.keep(self.placeholder(&name, &key, then_span.clone(), arguments, &captures));
                    }
                }
            }
        }
        let refused_at = then.as_ref().and_then(|then| self.keep(self.refused_at(r, then, kinds, &key)));
        let (when, then) = (when?, then?);
        if self.errors.borrow().len() > before {
            return None;
        }
        let requires: Vec<String> = r.requires.iter().map(|f| f.get_ref().clone()).collect();
        let (line, _) = fcd_model::error::line_col(self.text, diagnose::key_at(self.text, r.when.span().start));
        Some(RuleTemplate {
            refused_at: refused_at.flatten(),
            unless: r.unless.iter().map(|f| f.get_ref().clone()).collect(),
            rule: Rule {
                when,
                then,
                facts: requires.iter().chain(fact_equals.iter().map(|(f, _, _)| f)).cloned().collect::<BTreeSet<_>>().into_iter().collect(),
                note: r.note.clone(),
                source: Some(fcd_model::rules::RuleSource { rule: index, line: line as u32 }),
            },
            fact_equals,
            requires,
        })
    }

    /// Where a `reject` rule's handler refuses: `refused-at` (one of the
    /// rule's required facts), or else a required `guard` fact must say it.
    /// Only a reject names it: it is what no call with an effect may precede.
    fn refused_at(&self, r: &RawRule, then: &Outcome, kinds: &BTreeMap<&str, &str>, key: &str) -> Result<Option<String>, InputError> {
        let is_reject = matches!(then, Outcome::Reject(_));
        match &r.refused_at {
            Some(f) if !is_reject => self.err(f.span(), &format!("{key}.refused-at"), "only a `reject` rule says where the handler refuses"),
            Some(f) if !r.requires.iter().any(|q| q.get_ref() == f.get_ref()) => {
                self.err(f.span(), &format!("{key}.refused-at"), format!("`{}` is not one of the rule's `requires`", f.get_ref()))
            }
            Some(f) => Ok(Some(f.get_ref().clone())),
            None if !is_reject => Ok(None),
            None => {
                // A fact only a shape defines has its kind there: the summary checks it when compiled.
                let guard = |f: &Spanned<String>| match kinds.get(f.get_ref().as_str()) {
                    Some(kind) => *kind == "guard",
                    None => self.shape_facts.contains(f.get_ref()),
                };
                if r.requires.iter().any(guard) {
                    Ok(None)
                } else {
                    self.err(
                        r.then.span(),
                        &format!("{key}.then"),
                        "a `reject` says no effect happened: require the `guard` fact that refuses, or name the fact where the handler refuses with `refused-at`",
                    )
                }
            }
        }
    }

    /// `"FACT.KEY" = VALUE`: FACT a fact of this profile, KEY one its kind emits.
    fn fact_equals(
        &self,
        path: &str,
        value: &toml::Value,
        kinds: &BTreeMap<&str, &str>,
        span: Span,
        key: &str,
    ) -> Result<(String, String, serde_json::Value), InputError> {
        let Some((fact, field)) = path.split_once('.').filter(|(f, k)| kinds.contains_key(f) && !k.is_empty()) else {
            return self.err(span, key, format!("`{path}` is not FACT.KEY of a fact of this profile"));
        };
        let kind = kinds.get(fact).copied().unwrap_or_default();
        // A fact of no known kind is reported with the fact.
        if let Some(emits) = FactKind::emits(kind)
            && !emits.contains(&field)
        {
            return self.err(span, key, format!("`{path}`: a `{kind}` fact never has the value `{field}` (it has: {})", emits.join(", ")));
        }
        let value = serde_json::to_value(value).or_else(|e| self.err(span, key, e))?;
        Ok((fact.to_owned(), field.to_owned(), value))
    }

    fn placeholder(&self, name: &str, key: &str, span: Span, arguments: &BTreeMap<String, ArgSpec>, captures: &BTreeSet<String>) -> Result<(), InputError> {
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
        p: &Spanned<RawPredicate>,
        key: &str,
        arguments: &BTreeMap<String, ArgSpec>,
        captures: &mut BTreeSet<String>,
    ) -> Result<Predicate, InputError> {
        let span = p.span();
        let p = p.get_ref();
        let combinators = [p.all.is_some(), p.any.is_some(), p.not.is_some(), p.always.is_some()];
        let subjects = [p.arg.is_some(), p.env.is_some()];
        let count = |xs: &[bool]| xs.iter().filter(|x| **x).count();
        if count(&combinators) > 0 {
            if count(&combinators) > 1 || test_count(p) > 0 || count(&subjects) > 0 {
                return self.err(span, key, "`all`, `any`, `not` and `always` stand alone in their table");
            }
            let list = |ps: &[Spanned<RawPredicate>], name: &str, captures: &mut BTreeSet<String>| -> Result<Vec<Predicate>, InputError> {
                ps.iter().enumerate().map(|(i, q)| self.predicate(q, &format!("{key}.{name}[{i}]"), arguments, captures)).collect()
            };
            return Ok(if let Some(ps) = &p.all {
                Predicate::All(list(ps, "all", captures)?)
            } else if let Some(ps) = &p.any {
                Predicate::Any(list(ps, "any", captures)?)
            } else if let Some(q) = &p.not {
                // Groups inside a negation never match, so they are not usable values.
                Predicate::Not(Box::new(self.predicate(q, &format!("{key}.not"), arguments, &mut BTreeSet::new())?))
            } else if p.always.as_ref().is_some_and(|a| *a.get_ref()) {
                Predicate::Always
            } else {
                return self.err(p.always.as_ref().map_or(span, Spanned::span), &format!("{key}.always"), "`always` can only be `true`");
            });
        }
        if count(&subjects) != 1 || test_count(p) != 1 {
            return self.err(span, key, format!("a condition is one subject (`arg` or `env`) and one test ({TESTS}), or one of `all`, `any`, `not`, `always`"));
        }
        let (test, test_key, test_span) = self.test(p, key, span, captures)?;
        Ok(match (&p.arg, &p.env) {
            (Some(name), _) => {
                let (name_span, name) = (name.span(), name.get_ref());
                if !arguments.is_empty() && !arguments.contains_key(name) {
                    let names: BTreeSet<&str> = arguments.keys().map(String::as_str).collect();
                    return self.err(name_span, &format!("{key}.arg"), self.unknown_of("argument", name, &names));
                }
                // A test on an argument declared with another type could
                // never hold; it is a profile error, not a rule that falls through.
                if let Some(spec) = arguments.get(name)
                    && let Some(why) = never_holds(&test, spec.ty)
                {
                    return self.err(test_span, &test_key, format!("argument `{name}` is declared {}: {why}", spec.ty.name()));
                }
                Predicate::Arg { name: name.clone(), test }
            }
            (None, Some(path)) => Predicate::Env { path: path.get_ref().clone(), test },
            (None, None) => unreachable!("exactly one subject was checked above"),
        })
    }

    /// The one test of a condition's table (or of an element test's), with
    /// its own key and position for the errors about it.
    fn test(&self, p: &RawPredicate, key: &str, span: Span, captures: &mut BTreeSet<String>) -> Result<(Test, String, Span), InputError> {
        let (test_key, test_span) = [
            ("starts-with", p.starts_with.as_ref().map(Spanned::span)),
            ("matches", p.matches.as_ref().map(Spanned::span)),
            ("type", p.ty.as_ref().map(Spanned::span)),
            ("equals", p.equals.as_ref().map(Spanned::span)),
            ("absent", p.absent.as_ref().map(Spanned::span)),
            ("present", p.present.as_ref().map(Spanned::span)),
            ("inside", p.inside.as_ref().map(Spanned::span)),
            ("below", p.below.as_ref().map(Spanned::span)),
            ("prefixed-by", p.prefixed_by.as_ref().map(Spanned::span)),
            ("sql-read", p.sql_read.as_ref().map(Spanned::span)),
            ("url", p.url.as_ref().map(Spanned::span)),
            ("any-element", p.any_element.as_ref().map(|e| e.span())),
            ("every-element", p.every_element.as_ref().map(|e| e.span())),
        ]
        .into_iter()
        .find_map(|(k, s)| s.map(|s| (k, s)))
        .unwrap_or(("", span.clone()));
        let test_key = format!("{key}.{test_key}");
        let test = if let Some(s) = &p.starts_with {
            Test::StartsWith(s.get_ref().clone())
        } else if let Some(re) = &p.matches {
            let compiled = Pattern::new(re.get_ref()).or_else(|e| self.err(re.span(), &test_key, e))?;
            captures.extend(compiled.capture_names().map(str::to_owned));
            Test::Matches(compiled)
        } else if let Some(t) = &p.ty {
            let known = ["string", "integer", "number", "boolean", "object", "array"];
            let hint = diagnose::did_you_mean(t.get_ref(), known);
            Test::Type(ValueType::parse(t.get_ref()).map_or_else(|| self.err(t.span(), &test_key, format!("`{}` is not a JSON type{hint}", t.get_ref())), Ok)?)
        } else if let Some(v) = &p.equals {
            Test::Equals(serde_json::to_value(v.get_ref()).or_else(|e| self.err(v.span(), &test_key, e))?)
        } else if p.absent.as_ref().is_some_and(|a| *a.get_ref()) {
            Test::Absent
        } else if p.present.as_ref().is_some_and(|a| *a.get_ref()) {
            Test::Present
        } else if let Some(dirs) = p.inside.as_ref().or(p.below.as_ref()).or(p.prefixed_by.as_ref()) {
            let path = dirs.get_ref();
            if !(path.starts_with("config.") && path.len() > "config.".len()) {
                return self.err(dirs.span(), &test_key, format!("`{path}` is not `config.KEY`: the directories come from the authenticated configuration"));
            }
            if p.inside.is_some() {
                Test::Inside(path.clone())
            } else if p.below.is_some() {
                Test::Below(path.clone())
            } else {
                Test::PrefixedBy(path.clone())
            }
        } else if let Some(dialect) = &p.sql_read {
            let grammar = self.grammars.borrow().get(dialect.get_ref()).cloned();
            let no_list = || format!("no `[interpreters.{}]` lists what that grammar may read", dialect.get_ref());
            Test::SqlRead(grammar.map_or_else(|| self.err(dialect.span(), &test_key, no_list()), Ok)?)
        } else if let Some(url) = &p.url {
            Test::Url(self.url_test(url, &test_key)?)
        } else if let Some(element) = p.any_element.as_ref().or(p.every_element.as_ref()) {
            let inner = element.get_ref();
            if inner.arg.is_some() || inner.env.is_some() || test_count(inner) != 1 {
                return self.err(element.span(), &test_key, format!("an element test is a table with one test ({TESTS}) and no subject"));
            }
            // Groups matched on one element are not template values: which element's would they be?
            let (test, _, _) = self.test(inner, &test_key, element.span(), &mut BTreeSet::new())?;
            if p.any_element.is_some() { Test::AnyElement(Box::new(test)) } else { Test::EveryElement(Box::new(test)) }
        } else {
            return self.err(test_span, &test_key, "`absent` and `present` can only be `true`");
        };
        Ok((test, test_key, test_span))
    }

    /// A `url` test: a parser fcd has, lower-case schemes, known host
    /// classes, and at least one of the two lists (a bare parse would hold
    /// for every URL and say nothing a reviewer meant).
    fn url_test(&self, raw: &Spanned<RawUrl>, key: &str) -> Result<fcd_model::url::UrlTest, InputError> {
        use fcd_model::url::{HostClass, PARSERS, UrlTest};
        let r = raw.get_ref();
        if !PARSERS.contains(&r.parser.get_ref().as_str()) {
            let hint = diagnose::did_you_mean(r.parser.get_ref(), PARSERS.iter().copied());
            return self.err(
                r.parser.span(),
                &format!("{key}.parser"),
                format!("fcd has no URL grammar `{}` (known: {}){hint}", r.parser.get_ref(), PARSERS.join(", ")),
            );
        }
        if r.scheme.is_none() && r.host.is_none() {
            return self.err(raw.span(), key, "a `url` test lists `scheme`, `host` or both");
        }
        let schemes = checked(&r.scheme, |s| {
            let text = s.get_ref();
            let ok =
                text.starts_with(|c: char| c.is_ascii_lowercase()) && text.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "+-.".contains(c));
            if ok { Ok(text.clone()) } else { self.err(s.span(), &format!("{key}.scheme"), format!("`{text}` is not a lower-case URL scheme")) }
        })?;
        let hosts = checked(&r.host, |h| {
            let known: Vec<&str> = HostClass::ALL.iter().map(|c| c.as_str()).collect();
            let hint = diagnose::did_you_mean(h.get_ref(), known.iter().copied());
            let unknown = || self.err(h.span(), &format!("{key}.host"), format!("`{}` is not a host class (known: {}){hint}", h.get_ref(), known.join(", ")));
            HostClass::parse(h.get_ref()).map_or_else(unknown, Ok)
        })?;
        for (name, empty) in [("scheme", schemes.as_ref().is_some_and(Vec::is_empty)), ("host", hosts.as_ref().is_some_and(Vec::is_empty))] {
            if empty {
                return self.err(raw.span(), &format!("{key}.{name}"), format!("an empty `{name}` list never holds"));
            }
        }
        Ok(UrlTest { parser: r.parser.get_ref().clone(), schemes, hosts })
    }

    fn outcome(&self, o: &Spanned<RawOutcome>, key: &str) -> Result<Outcome, InputError> {
        let span = o.span();
        let o = o.get_ref();
        let set = [o.effect.is_some(), o.effects.is_some(), o.reject.is_some(), o.unknown.is_some()];
        if set.iter().filter(|x| **x).count() != 1 {
            return self.err(span, key, "exactly one of `effect`, `effects`, `reject`, `unknown`");
        }
        if let Some(code) = &o.reject {
            return Ok(Outcome::Reject(code.get_ref().clone()));
        }
        if let Some(reason) = &o.unknown {
            return Ok(Outcome::Unknown(reason.get_ref().clone()));
        }
        let raw: Vec<&Spanned<RawEffect>> = o.effect.iter().chain(o.effects.iter().flat_map(|e| e.get_ref())).collect();
        if raw.is_empty() {
            return self.err(o.effects.as_ref().map_or(span, Spanned::span), &format!("{key}.effects"), "`effects` lists at least one effect");
        }
        raw.into_iter()
            .map(|e| {
                let span = e.span();
                let e = e.get_ref();
                let fixed_op = !e.op.contains('{');
                if fixed_op && e.op.split_once(':').is_none_or(|(d, op)| d.is_empty() || op.is_empty()) {
                    return self.err(span.clone(), &format!("{key}.op"), format!("`{}` is not `domain:operation`", e.op));
                }
                if !e.exposure.contains('{') && Exposure::parse(&e.exposure).is_none() {
                    return self.err(span.clone(), &format!("{key}.exposure"), format!("`{}` is not none, private or public", e.exposure));
                }
                // Templates are parsed here, once; an unbalanced brace names its field.
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

/// Why `test` can never hold on an argument of type `ty`, if it cannot.
fn never_holds(test: &Test, ty: ValueType) -> Option<String> {
    match test {
        Test::StartsWith(_) | Test::Matches(_) | Test::SqlRead(_) | Test::Url(_) if ty != ValueType::String => Some("a string test never holds on it".into()),
        Test::Inside(_) | Test::Below(_) | Test::PrefixedBy(_) if ty != ValueType::String => {
            Some("a path test (`inside`, `below`, `prefixed-by`) never holds on it".into())
        }
        Test::AnyElement(_) | Test::EveryElement(_) if ty != ValueType::Array => Some("an element test never holds on it".into()),
        Test::Equals(v) if !ty.holds(v) => Some(format!("`equals` compares it with {}", ValueType::of_value(v))),
        // An integer is a number, and a number may be an integer; any other
        // declared type is the only one the value has.
        Test::Type(t) if *t != ty && !matches!((ty, *t), (ValueType::Integer, ValueType::Number) | (ValueType::Number, ValueType::Integer)) => {
            Some(format!("`type = \"{}\"` never holds on it", t.name()))
        }
        _ => None,
    }
}

impl Validator<'_> {
    /// Rules are first-match: a rule that an earlier one always answers
    /// first is never reached, which is a profile error (a reviewer meant it
    /// to apply). `raw` and `rules` are the same rules, in order.
    pub(super) fn shadowed(&self, raw: &[Spanned<RawRule>], rules: &[RuleTemplate]) {
        for (j, later) in rules.iter().enumerate() {
            let Some(i) = rules[..j].iter().position(|earlier| covers(earlier, later)) else { continue };
            let when = raw[j].get_ref().when.span();
            let (line, _) = fcd_model::error::line_col(self.text, diagnose::key_at(self.text, raw[i].get_ref().when.span().start));
            self.keep(self.err::<()>(
                when,
                &format!("rules[{j}]"),
                format!("never applies: rules[{i}] (line {line}) comes first and applies whenever this rule does (rules are first-match)"),
            ));
        }
    }
}

/// Whether `earlier` applies to every call and release `later` applies to:
/// its facts are a subset, and `later`'s condition implies its condition.
fn covers(earlier: &RuleTemplate, later: &RuleTemplate) -> bool {
    let subset = |a: &[String], b: &[String]| a.iter().all(|x| b.contains(x));
    subset(&earlier.requires, &later.requires)
        && subset(&earlier.unless, &later.unless)
        && earlier.fact_equals.iter().all(|e| later.fact_equals.contains(e))
        && implies(&later.rule.when, &earlier.rule.when)
}

/// Whether `p` holding means `q` holds, read from their form alone (false
/// when it cannot tell).
fn implies(p: &Predicate, q: &Predicate) -> bool {
    if p == q || matches!(q, Predicate::Always) {
        return true;
    }
    match (p, q) {
        (Predicate::All(ps), _) if ps.iter().any(|p| implies(p, q)) => true,
        (_, Predicate::Any(qs)) if qs.iter().any(|q| implies(p, q)) => true,
        (_, Predicate::All(qs)) if !qs.is_empty() && qs.iter().all(|q| implies(p, q)) => true,
        (Predicate::Any(ps), _) if !ps.is_empty() && ps.iter().all(|p| implies(p, q)) => true,
        (Predicate::Arg { name: a, test: s }, Predicate::Arg { name: b, test: t })
        | (Predicate::Env { path: a, test: s }, Predicate::Env { path: b, test: t })
            if a == b =>
        {
            test_implies(s, t)
        }
        _ => false,
    }
}

/// Each entry of an optional list checked on its own (the first error stops it).
fn checked<T>(list: &Option<Spanned<Vec<Spanned<String>>>>, check: impl Fn(&Spanned<String>) -> Result<T, InputError>) -> Result<Option<Vec<T>>, InputError> {
    list.as_ref().map(|l| l.get_ref().iter().map(check).collect()).transpose()
}

/// Whether an optional list (none: anything) admits only what another does.
fn subset<T: PartialEq>(x: &Option<Vec<T>>, y: &Option<Vec<T>>) -> bool {
    match (x, y) {
        (_, None) => true,
        (Some(x), Some(y)) => x.iter().all(|e| y.contains(e)),
        (None, Some(_)) => false,
    }
}

/// Whether a value passing `s` passes `t`.
fn test_implies(s: &Test, t: &Test) -> bool {
    match (s, t) {
        (Test::StartsWith(a), Test::StartsWith(b)) => a.starts_with(b.as_str()),
        (Test::StartsWith(_) | Test::Matches(_) | Test::Url(_), Test::Type(ValueType::String)) => true,
        (Test::Url(a), Test::Url(b)) => a.parser == b.parser && subset(&a.schemes, &b.schemes) && subset(&a.hosts, &b.hosts),
        (Test::Equals(v), Test::Type(ty)) => ty.holds(v),
        (Test::Equals(serde_json::Value::String(v)), Test::StartsWith(b)) => v.starts_with(b.as_str()),
        (Test::Absent, _) | (_, Test::Absent) => false,
        (_, Test::Present) => true,
        _ => false,
    }
}
