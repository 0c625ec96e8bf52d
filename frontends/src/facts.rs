//! Fact kinds written once, over a small per-language part.
//!
//! Every frontend extracts a `call` fact the same way: find the one call to
//! the callee, align its arguments with the profile's patterns, build the
//! values. Only what a language must answer stays with it ([`CallShape`]:
//! which nodes call what, what its arguments are, which argument forms and
//! flows it refuses); the skeleton, the argument alignment, the profile's
//! literals and the upstream variable a `field` fact follows live here, so
//! the meaning of a fact is one piece of code. The `guard` and `default`
//! kinds have modules of their own ([`crate::guard`], [`crate::default`]).

use std::collections::BTreeMap;

use crate::frontend::{Found, Region};
use crate::ir::{Escalation, EscalationCode, Identity};
use crate::spec::{ArgPattern, FactSpec};
use crate::ts::Node;
use fcd_model::effect::{Fact, FactValue};

/// Aligns call arguments with argument patterns, skipping optional patterns
/// that do not match; returns the patterns that matched (without their `?`).
/// Shared by every frontend so the meaning of a pattern list is one thing.
pub fn align<T>(args: &[T], patterns: &[ArgPattern], matches: &dyn Fn(&T, &ArgPattern) -> bool) -> Option<Vec<String>> {
    match (args.split_first(), patterns.split_first()) {
        (None, None) => Some(Vec::new()),
        (None, Some((p, rest))) => p.optional.then(|| align(args, rest, matches)).flatten(),
        (Some(_), None) => None,
        (Some((a, args_rest)), Some((p, rest))) => {
            if matches(a, p)
                && let Some(mut tail) = align(args_rest, rest, matches)
            {
                let mut shown = p.clone();
                shown.optional = false;
                tail.insert(0, shown.to_string());
                return Some(tail);
            }
            if p.optional { align(args, rest, matches) } else { None }
        }
    }
}

/// Builds the facts and escalations of one fact extraction, the same way in every frontend.
pub struct FactSite<'r, 'a> {
    pub region: &'r Region<'a>,
    pub spec: &'r FactSpec,
}

impl<'a> FactSite<'_, 'a> {
    /// A `shape_mismatch` naming the fact, anchored at `node`.
    pub fn mismatch(&self, node: Node<'_>, detail: String) -> Escalation {
        self.escalate(EscalationCode::ShapeMismatch, node, detail)
    }

    pub fn escalate(&self, code: EscalationCode, node: Node<'_>, detail: String) -> Escalation {
        Escalation::new(code, format!("fact `{}`: {detail}", self.spec.name), Some(self.region.anchor(node)))
    }

    /// The fact this extraction found at `node`.
    pub fn fact(&self, node: Node<'a>, values: BTreeMap<String, FactValue>) -> Found<'a> {
        Found {
            fact: Fact {
                name: self.spec.name.clone(),
                kind: self.spec.kind.name().to_owned(),
                region: self.region.name.to_owned(),
                anchor: self.region.anchor(node),
                values,
            },
            node,
        }
    }

    /// The one call a call fact accepts: none is no fact, two or more escalate.
    pub fn one_call(&self, calls: &[Node<'a>], callee: &str) -> Result<Option<Node<'a>>, Escalation> {
        match calls {
            [] => Ok(None),
            [one] => Ok(Some(*one)),
            [_, second, ..] => {
                let lines: Vec<String> = calls.iter().map(|c| c.line().to_string()).collect();
                Err(self.mismatch(*second, format!("{} calls to `{callee}` (lines {}); the profile accepts exactly one", calls.len(), lines.join(", "))))
            }
        }
    }
}

/// An `Err` for a fact kind the language does not extract.
pub fn unsupported(region: &Region<'_>, spec: &FactSpec, language: &str) -> Escalation {
    Escalation::new(
        EscalationCode::ShapeMismatch,
        format!("fact `{}`: the {language} frontend does not extract `{}` facts", spec.name, spec.kind.name()),
        Some(region.anchor(region.node)),
    )
}

/// A call's positional arguments and its keyword ones by name.
pub type SplitArguments<A> = (Vec<A>, Vec<(String, A)>);

/// What a language answers for a `call` fact; [`call_fact`] does the rest.
pub trait CallShape<'a> {
    /// One argument as the language sees it (a node, or a name and a node).
    type Arg;

    /// The identity of `node` when it is a call a call fact counts.
    fn callee(&self, node: Node<'a>) -> Option<Identity>;

    /// The call's arguments, or an escalation when their form is outside any shape.
    fn arguments(&self, call: Node<'a>) -> Result<Vec<Self::Arg>, Escalation>;

    /// The call's positional arguments and its keyword (named) ones by name,
    /// for a fact that lists `keywords`; a language without keyword
    /// arguments has only positional ones.
    fn arguments_and_keywords(&self, call: Node<'a>) -> Result<SplitArguments<Self::Arg>, Escalation> {
        Ok((self.arguments(call)?, Vec::new()))
    }

    /// Checks beyond alignment: a followed value must reach the call unchanged.
    fn check_arguments(&self, _call: Node<'a>, _args: &[Self::Arg], _patterns: &[ArgPattern]) -> Result<(), Escalation> {
        Ok(())
    }

    /// Whether one argument has the pattern's shape.
    fn arg_matches(&self, arg: &Self::Arg, pattern: &ArgPattern) -> bool;

    /// An argument's text, for messages.
    fn arg_text(&self, arg: &Self::Arg) -> String;

    /// Whether a guard's receiver (`receiver.callee(…)`) has the pattern's
    /// shape: without a pattern any receiver does, with one it must be there.
    fn receiver_matches(&self, pattern: Option<&ArgPattern>, receiver: Option<Self::Arg>) -> bool {
        match (pattern, receiver) {
            (Some(p), Some(r)) => self.arg_matches(&r, p),
            (None, _) => true,
            (Some(_), None) => false,
        }
    }

    /// Whether a `matching` fact also leaves out calls that fail
    /// [`CallShape::check_arguments`] (instead of escalating on them).
    fn strict_matching(&self) -> bool {
        false
    }
}

/// A `call` fact: exactly one call to `callee` (among those whose arguments
/// match, when `matching`), with arguments of the profile's shape.
pub fn call_fact<'a, L: CallShape<'a>>(
    lang: &L,
    site: &FactSite<'_, 'a>,
    callee: &str,
    patterns: Option<&[ArgPattern]>,
    keywords: Option<&BTreeMap<String, ArgPattern>>,
    matching: bool,
) -> Result<Option<Found<'a>>, Escalation> {
    let want = Identity::Path(callee.to_owned());
    let mut calls: Vec<Node<'a>> = site.region.node.descendants().filter(|n| lang.callee(*n).as_ref() == Some(&want)).collect();
    if let (true, Some(p)) = (matching, patterns) {
        // A call whose argument forms are outside any shape is not one of the
        // matching calls; one whose followed values change is left out only
        // where the language asks (`strict_matching`), else it escalates below.
        calls.retain(|c| shaped(lang, *c, p, keywords, lang.strict_matching()).is_ok_and(|m| m.is_some()));
    }
    let Some(call) = site.one_call(&calls, callee)? else { return Ok(None) };
    let mut values = BTreeMap::new();
    values.insert("callee".into(), FactValue::Text(callee.to_owned()));
    if patterns.is_some() || keywords.is_some() {
        let Some((args, named)) = shaped(lang, call, patterns.unwrap_or_default(), keywords, true)? else {
            let (args, named) = split(lang, call, keywords)?;
            let got: Vec<String> = args.iter().map(|a| lang.arg_text(a)).chain(named.iter().map(|(k, a)| format!("{k}={}", lang.arg_text(a)))).collect();
            let want: Vec<String> =
                patterns.unwrap_or_default().iter().map(ToString::to_string).chain(keywords.into_iter().flatten().map(|(k, p)| format!("{k}={p}"))).collect();
            return Err(site.mismatch(call, format!("arguments ({}) do not match the profile's shape [{}]", got.join(", "), want.join(", "))));
        };
        if patterns.is_some() {
            values.insert("args".into(), FactValue::List(args.into_iter().map(FactValue::Text).collect()));
        }
        if keywords.is_some() {
            values.insert("keywords".into(), FactValue::List(named.into_iter().map(FactValue::Text).collect()));
        }
    }
    Ok(Some(site.fact(call, values)))
}

/// The patterns a call matched: positional ones, then `name=pattern`.
type SplitPatterns = (Vec<String>, Vec<String>);

/// A call's positional and keyword arguments; a keyword argument where the
/// fact lists no `keywords` is outside the shape.
fn split<'a, L: CallShape<'a>>(lang: &L, call: Node<'a>, keywords: Option<&BTreeMap<String, ArgPattern>>) -> Result<SplitArguments<L::Arg>, Escalation> {
    match keywords {
        None => Ok((lang.arguments(call)?, Vec::new())),
        Some(_) => lang.arguments_and_keywords(call),
    }
}

/// The patterns a call's arguments match (positional, then `name=pattern`
/// by name), `None` when they do not, `Err` when their form is outside any
/// shape or a followed value does not arrive unchanged. Every keyword the
/// call passes must be listed, each listed one without `?` must be passed.
/// With `check`, the language's flow checks run too. The matched patterns
/// are `(positional, keywords)`.
fn shaped<'a, L: CallShape<'a>>(
    lang: &L,
    call: Node<'a>,
    patterns: &[ArgPattern],
    keywords: Option<&BTreeMap<String, ArgPattern>>,
    check: bool,
) -> Result<Option<SplitPatterns>, Escalation> {
    let (args, named) = split(lang, call, keywords)?;
    let (names, values): (Vec<String>, Vec<L::Arg>) = named.into_iter().unzip();
    if check {
        lang.check_arguments(call, &args, patterns)?;
        lang.check_arguments(call, &values, &keywords.into_iter().flat_map(|k| k.values().cloned()).collect::<Vec<_>>())?;
    }
    let Some(matched) = align(&args, patterns, &|a, p| lang.arg_matches(a, p)) else { return Ok(None) };
    let mut shown = Vec::new();
    if let Some(keywords) = keywords {
        for (name, value) in names.iter().zip(&values) {
            match keywords.get(name) {
                Some(p) if lang.arg_matches(value, p) => {
                    let mut p = p.clone();
                    p.optional = false;
                    shown.push(format!("{name}={p}"));
                }
                _ => return Ok(None),
            }
        }
        let missing = keywords.iter().any(|(k, p)| !p.optional && !names.contains(k));
        if missing || names.iter().enumerate().any(|(i, n)| names[..i].contains(n)) {
            return Ok(None);
        }
    }
    Ok(Some((matched, shown)))
}

/// A profile's spelling of a literal (`false`, `3`, `"x"`).
pub fn literal_text(text: &str) -> Option<FactValue> {
    match text {
        "true" => Some(FactValue::Bool(true)),
        "false" => Some(FactValue::Bool(false)),
        _ => text.parse().ok().map(FactValue::Int).or_else(|| text.strip_prefix('"')?.strip_suffix('"').map(|s| FactValue::Text(s.to_owned()))),
    }
}

/// The variable a `field` fact's upstream fact binds, or "" without one.
pub fn upstream_variable(from: Option<&Found<'_>>) -> String {
    match from.and_then(|f| f.fact.values.get("variable")) {
        Some(FactValue::Text(v)) => v.clone(),
        _ => String::new(),
    }
}
