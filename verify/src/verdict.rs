//! The verifier: one concrete call, its authenticated environment and its
//! contract, applied to a target summary.
//!
//! The first rule whose condition holds decides. Effects are instantiated from
//! the call and each one is checked against the contract C_i; the decision is
//! `safe` only when every effect fits. A rejection by the handler, an UNKNOWN
//! rule, a configuration that differs from the registered one or a template
//! that cannot be filled never yields `safe`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use fcd_model::effect::{Effect, Exposure};

use fcd_model::canon;
use fcd_model::error::{InputError, line_of_key, read_text};
use fcd_model::rules::{Bindings, Outcome, ValueType};
use fcd_model::summary::Summary;

/// A formed tool call: `{"tool": …, "arguments": {…}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Call {
    pub tool: String,
    pub arguments: serde_json::Map<String, Value>,
}

/// The authenticated context of a call; never from the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Env {
    pub principal: String,
    pub destination: String,
    #[serde(default = "empty_object")]
    pub config: Value,
}

fn empty_object() -> Value {
    Value::Object(serde_json::Map::new())
}

/// What the formed call may do (C_i).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Contract {
    pub principal: String,
    /// Allowed `domain:operation`s.
    pub allow: Vec<String>,
    pub destinations: Vec<String>,
    /// Resource prefixes; `""` allows every resource.
    pub resources: Vec<String>,
    pub max_exposure: Exposure,
    pub mutation: bool,
    pub write_scopes: Vec<String>,
}

/// The four decisions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Safe,
    Unsafe,
    Reject,
    Unknown,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Safe => "safe",
            Verdict::Unsafe => "unsafe",
            Verdict::Reject => "reject",
            Verdict::Unknown => "unknown",
        }
    }
}

/// The verifier's answer for one call.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Decision {
    pub decision: Verdict,
    pub effects: Vec<Effect>,
    pub violations: Vec<String>,
    /// Index into the summary's rules of the rule that decided, if one did.
    pub matched_rule: Option<usize>,
    /// The rejection code or UNKNOWN reason.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl Decision {
    fn unknown(reason: String, matched_rule: Option<usize>) -> Decision {
        Decision { decision: Verdict::Unknown, effects: Vec::new(), violations: Vec::new(), matched_rule, reason: Some(reason) }
    }
}

/// Reads a JSON input file strictly: unknown keys and wrong types name the file and line.
pub fn read_input<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, InputError> {
    let text = read_text(path)?;
    serde_json::from_str(&text).map_err(|e| InputError::json(path, &e))
}

/// A call as read, with the line of each key it names, so that an error
/// points at its line without reading the file again.
#[derive(Debug, Clone)]
pub struct CallInput {
    pub call: Call,
    file: PathBuf,
    lines: BTreeMap<String, usize>,
}

impl CallInput {
    /// Reads a call file strictly: unknown keys and wrong types name the file and line.
    pub fn read(path: &Path) -> Result<CallInput, InputError> {
        let text = read_text(path)?;
        let call: Call = serde_json::from_str(&text).map_err(|e| InputError::json(path, &e))?;
        let keys = ["tool", "arguments"].into_iter().map(str::to_owned).chain(call.arguments.keys().cloned());
        let lines = keys.filter_map(|k| line_of_key(&text, &k).map(|line| (k, line))).collect();
        Ok(CallInput { call, file: path.to_owned(), lines })
    }

    /// A call formed in memory; errors name `file` (where it came from) without a line.
    pub fn new(call: Call, file: impl Into<PathBuf>) -> CallInput {
        CallInput { call, file: file.into(), lines: BTreeMap::new() }
    }

    fn error(&self, key: &str, message: String) -> InputError {
        match self.lines.get(key) {
            Some(line) => InputError::at(&self.file, *line, 1, message),
            None => InputError::new(&self.file, message),
        }
    }
}

/// A call that passed [`check_call`] against one summary. The verifier
/// decides only these, and only against that summary.
#[derive(Debug, Clone, Copy)]
pub struct CheckedCall<'a> {
    summary: &'a Summary,
    call: &'a Call,
}

impl<'a> CheckedCall<'a> {
    pub fn summary(&self) -> &'a Summary {
        self.summary
    }

    pub fn call(&self) -> &'a Call {
        self.call
    }
}

/// Checks a call against the tool's argument schema recorded in the summary.
pub fn check_call<'a>(summary: &'a Summary, input: &'a CallInput) -> Result<CheckedCall<'a>, InputError> {
    let call = &input.call;
    let checked = CheckedCall { summary, call };
    if call.tool != summary.tool {
        return Err(input.error("tool", format!("the call is for tool `{}`, the summary for `{}`", call.tool, summary.tool)));
    }
    if summary.arguments.is_empty() {
        return Ok(checked);
    }
    for (name, value) in &call.arguments {
        let Some(spec) = summary.arguments.get(name) else {
            let known: Vec<&str> = summary.arguments.keys().map(String::as_str).collect();
            return Err(input.error(name, format!("argument `{name}` is not in the tool's input schema (known: {})", known.join(", "))));
        };
        if !value.is_null() && !spec.ty.holds(value) {
            return Err(input.error(name, format!("argument `{name}` must be {}, not {}", spec.ty.name(), ValueType::of_value(value))));
        }
    }
    for (name, spec) in &summary.arguments {
        if spec.required && call.arguments.get(name).is_none_or(Value::is_null) {
            return Err(input.error("arguments", format!("required argument `{name}` is missing")));
        }
    }
    Ok(checked)
}

/// A safe decision and the rule that made it: the only thing a certificate
/// is issued from ([`Decision::certifiable`]).
#[derive(Debug, Clone, Copy)]
pub struct Certifiable<'d> {
    decision: &'d Decision,
    rule: usize,
}

impl<'d> Certifiable<'d> {
    pub fn effects(&self) -> &'d [Effect] {
        &self.decision.effects
    }

    pub fn rule(&self) -> usize {
        self.rule
    }
}

impl Decision {
    /// The decision as something a certificate may be issued from: only a
    /// safe decision with the rule that made it.
    pub fn certifiable(&self) -> Option<Certifiable<'_>> {
        match (self.decision, self.matched_rule) {
            (Verdict::Safe, Some(rule)) if self.violations.is_empty() => Some(Certifiable { decision: self, rule }),
            _ => None,
        }
    }
}

/// Applies a checked call to its summary and checks every effect against the contract.
pub fn decide(checked: &CheckedCall<'_>, env: &Env, contract: &Contract) -> Decision {
    let (summary, call) = (checked.summary, checked.call);
    if canon::digest(&env.config) != summary.config_digest {
        return Decision::unknown("the authenticated configuration differs from the configuration the summary was registered with".into(), None);
    }
    // An argument the release re-tokenizes is read as its parser would read it, before any rule.
    for (name, value) in &call.arguments {
        if let Some(grammar) = summary.arguments.get(name).and_then(|spec| spec.tokens.as_ref())
            && let Err(why) = grammar.check(value)
        {
            return Decision::unknown(format!("argument `{name}`: {why}; the release hands it to {} as command-line tokens", grammar.parser), None);
        }
    }
    let bindings = Bindings { arguments: &call.arguments, principal: &env.principal, destination: &env.destination, config: &env.config };
    for (index, rule) in summary.rules.iter().enumerate() {
        let mut captures = BTreeMap::new();
        match rule.when.holds(&bindings, &mut captures) {
            Ok(true) => {}
            Ok(false) => continue,
            Err(why) => return Decision::unknown(format!("rule {index} cannot be evaluated on this call: {}", why.0), Some(index)),
        }
        return match &rule.then {
            Outcome::Reject(code) => {
                Decision { decision: Verdict::Reject, effects: Vec::new(), violations: Vec::new(), matched_rule: Some(index), reason: Some(code.clone()) }
            }
            Outcome::Unknown(reason) => Decision::unknown(reason.clone(), Some(index)),
            Outcome::Effects(templates) => {
                let effects: Result<Vec<Effect>, _> = templates.iter().map(|t| t.instantiate(&bindings, &captures)).collect();
                match effects {
                    Err(gap) => Decision::unknown(format!("the rule's effect cannot be instantiated: {}", gap.0), Some(index)),
                    Ok(effects) => {
                        let violations: Vec<String> = effects.iter().flat_map(|e| violations(e, contract)).collect();
                        Decision {
                            decision: if violations.is_empty() { Verdict::Safe } else { Verdict::Unsafe },
                            effects,
                            violations,
                            matched_rule: Some(index),
                            reason: None,
                        }
                    }
                }
            }
        };
    }
    // Summaries always end with a catch-all; one without it was refused on load.
    Decision::unknown("no rule matched".into(), None)
}

/// Every way an effect leaves the contract, in words.
pub fn violations(effect: &Effect, c: &Contract) -> Vec<String> {
    let op = format!("{}:{}", effect.domain, effect.operation);
    let mut out = Vec::new();
    if effect.principal != c.principal {
        out.push(format!("{op}: principal `{}` is not the contract's `{}`", effect.principal, c.principal));
    }
    if !c.allow.contains(&op) {
        out.push(format!("{op}: operation not in the contract's allow list"));
    }
    if !c.destinations.contains(&effect.destination) {
        out.push(format!("{op}: destination `{}` not allowed", effect.destination));
    }
    if !within(&effect.resource, &c.resources) {
        out.push(format!("{op}: resource `{}` is outside the contract's resources", effect.resource));
    }
    if effect.exposure > c.max_exposure {
        out.push(format!("{op}: exposure {} exceeds the contract's maximum {}", effect.exposure.as_str(), c.max_exposure.as_str()));
    }
    if effect.mutation && !c.mutation {
        out.push(format!("{op}: mutates, and the contract allows no mutation"));
    }
    for scope in &effect.write_scopes {
        if !within(scope, &c.write_scopes) {
            out.push(format!("{op}: write scope `{scope}` is outside the contract's write scopes"));
        }
    }
    out
}

/// Whether `value` lies within one of the prefixes, at a `/` boundary, and has
/// no `..` segment that could climb out of it.
pub fn within(value: &str, prefixes: &[String]) -> bool {
    if value.split('/').any(|seg| seg == "..") {
        return false;
    }
    prefixes.iter().any(|p| value == p || (value.starts_with(p.as_str()) && (p.is_empty() || p.ends_with('/') || value[p.len()..].starts_with('/'))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_safe_decision_with_its_rule_is_certifiable() {
        let safe = Decision { decision: Verdict::Safe, effects: Vec::new(), violations: Vec::new(), matched_rule: Some(2), reason: None };
        assert_eq!(safe.certifiable().map(|c| c.rule()), Some(2));
        for verdict in [Verdict::Unsafe, Verdict::Reject, Verdict::Unknown] {
            assert!(Decision { decision: verdict, ..safe.clone() }.certifiable().is_none(), "{verdict:?}");
        }
        assert!(Decision { matched_rule: None, ..safe.clone() }.certifiable().is_none(), "no rule, no certificate");
        assert!(Decision { violations: vec!["x".into()], ..safe }.certifiable().is_none(), "a violation, no certificate");
    }

    #[test]
    fn a_call_file_keeps_the_line_of_each_key() {
        let dir = std::env::temp_dir().join(format!("fcd-call-input-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("call.json");
        std::fs::write(&path, "{\"tool\": \"t\",\n \"arguments\": {\n  \"a\": 1,\n  \"b\": 2}}").unwrap();
        let input = CallInput::read(&path).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(input.error("b", "m".into()).line, Some(4), "found without reading the file again");
        assert_eq!(input.error("tool", "m".into()).line, Some(1));
        assert_eq!(CallInput::new(input.call.clone(), "x.json").error("b", "m".into()).line, None);
    }

    #[test]
    fn within_respects_path_boundaries() {
        let p = vec!["/srv/repo".to_owned()];
        assert!(within("/srv/repo", &p));
        assert!(within("/srv/repo/sub", &p));
        assert!(!within("/srv/repository", &p));
        assert!(!within("/srv/repo/../etc", &p));
        assert!(within("alice/x", &["alice/".to_owned()]));
        assert!(within("anything", &[String::new()]));
        assert!(!within("x", &[]));
    }
}
