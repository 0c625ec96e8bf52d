//! `[[rules]]`: conditions, outcomes and effect templates, checked against the
//! profile's arguments and facts (a `fact-equals` key must be one the fact's
//! kind emits).

use std::collections::{BTreeMap, BTreeSet};

use toml::Spanned;

use fcd_frontends::{Exposure, FactKind};

use super::schema::{RawEffect, RawOutcome, RawPredicate, RawRule};
use super::{ArgSpec, RuleTemplate, Span, Validator};
use crate::error::InputError;
use crate::rules::{EffectTemplate, Outcome, Pattern, Predicate, Rule, Template, Test, ValueType};

impl Validator<'_> {
    /// One rule, or `None` with every independent problem in it recorded.
    pub(super) fn rule(
        &self,
        index: usize,
        rule: &Spanned<RawRule>,
        kinds: &BTreeMap<&str, &str>,
        arguments: &BTreeMap<String, ArgSpec>,
    ) -> Option<RuleTemplate> {
        let span = rule.span();
        let r = rule.get_ref();
        let key = format!("rules[{index}]");
        let facts: BTreeSet<&str> = kinds.keys().copied().chain(self.shape_facts.iter().map(String::as_str)).collect();
        let before = self.errors.borrow().len();
        for (which, list) in [("requires", &r.requires), ("unless", &r.unless)] {
            for f in list.iter().filter(|f| !facts.contains(f.as_str())) {
                self.keep(self.err::<()>(span.clone(), &format!("{key}.{which}"), self.unknown_of("fact", f, &facts)));
            }
        }
        let mut fact_equals = Vec::new();
        for (path, value) in &r.fact_equals {
            let checked = self.fact_equals(path, value, kinds, span.clone(), &format!("{key}.fact-equals"));
            fact_equals.extend(self.keep(checked));
        }
        let mut captures = BTreeSet::new();
        let when = self.keep(self.predicate(&r.when, &format!("{key}.when"), span.clone(), arguments, &mut captures));
        let then = self.keep(self.outcome(&r.then, &format!("{key}.then"), span.clone()));
        if let Some(Outcome::Effects(effects)) = &then {
            for e in effects {
                let templates = [&e.op, &e.principal, &e.destination, &e.resource, &e.exposure].into_iter().chain(&e.write_scopes);
                for t in templates {
                    for name in t.placeholders() {
                        self.keep(self.placeholder(&name, &key, span.clone(), arguments, &captures));
                    }
                }
            }
        }
        let (when, then) = (when?, then?);
        if self.errors.borrow().len() > before {
            return None;
        }
        Some(RuleTemplate {
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
