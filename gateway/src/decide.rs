//! What the gateway decides about a call before any server sees it: the
//! verifier's decision on the summary of the release that will run it,
//! against the contract of the session's principal for that tool, and the
//! successor it captures at formation: the first registered successor
//! release on whose summary the same call is also safe, for which the
//! gateway signs a certificate with its issuer key.
//!
//! `safe` runs; `unsafe`, `unknown` and a call outside the tool's argument
//! schema are refused with the decision's reason; `reject` is refused with
//! the rule's code unless the operator wants the handler's own refusal
//! (`forward_reject`). Nothing here reads a clock or a store: the caller
//! gives the time and records what is issued.

use ed25519_dalek::SigningKey;
use fcd_model::refusal::RefusalCode;
use serde_json::{Value, json};

use fcd_model::canon;
use fcd_model::summary::Summary;
use fcd_verify::certificate::{self, Issue};
use fcd_verify::verdict::{Call, CallInput, Contract, Env, Verdict, check_call, decide};

use crate::refused::Refused;

/// The call checked against `summary`'s argument schema (the tool's input
/// schema as the summary recorded it), or the refusal naming the argument.
pub fn schema(summary: &Summary, input: &CallInput) -> Result<(), Refused> {
    check_call(summary, input).map(|_| ()).map_err(|e| Refused::new(RefusalCode::BadArguments, e.to_string()))
}

/// Decides `input` on `summary` for `env` against `contract`: `Ok` when it
/// may run (safe, or a reject the handler should refuse itself), else the refusal.
pub fn on_source(summary: &Summary, input: &CallInput, env: &Env, contract: &Contract, forward_reject: bool) -> Result<Verdict, Refused> {
    let checked = check_call(summary, input).map_err(|e| Refused::new(RefusalCode::BadArguments, e.to_string()))?;
    let d = decide(&checked, env, contract);
    let why = d.reason.clone().unwrap_or_default();
    let decision = json!({"decision": d.decision.as_str(), "matched_rule": d.matched_rule, "reason": d.reason, "violations": d.violations,
        "effects": d.effects, "summary": summary.summary_digest});
    let refuse = |code: RefusalCode, detail: String| Err(Refused::new(code, detail).with("decision", decision.clone()));
    match d.decision {
        Verdict::Safe => Ok(Verdict::Safe),
        Verdict::Reject if forward_reject => Ok(Verdict::Reject),
        Verdict::Reject => refuse(RefusalCode::Reject, format!("{why}: the release's handler refuses this call ({})", summary.release)),
        Verdict::Unsafe => refuse(RefusalCode::Unsafe, format!("an effect is outside the contract on {}: {}", summary.release, d.violations.join("; "))),
        Verdict::Unknown => refuse(RefusalCode::Unknown, format!("{} cannot decide this call: {why}", summary.release)),
    }
}

/// A certificate for `call` on `successor`, formed against `source`, when
/// the call is safe there under `contract` (canonical DSSE envelope bytes).
#[allow(clippy::too_many_arguments)] // reason: what a certificate binds, each given once
pub fn capture(
    successor: &Summary,
    source: &Summary,
    call: &Call,
    env: &Env,
    contract: &Contract,
    key: &SigningKey,
    now: u64,
    valid_for: u64,
) -> Option<Vec<u8>> {
    let input = CallInput::new(call.clone(), "tools/call");
    let checked = check_call(successor, &input).ok()?;
    let decision = decide(&checked, env, contract);
    let safe = decision.certifiable()?;
    let issue = Issue { call: checked, env, contract, decision: safe, now, valid_for, source: Some(source) };
    Some(canon::to_canonical(&certificate::issue(&issue, key)))
}

/// The authenticated context of a call: the session's principal, the
/// server's destination and the release's registered configuration.
pub fn env(principal: &str, destination: &str, config: &Value) -> Env {
    Env { principal: principal.to_owned(), destination: destination.to_owned(), config: config.clone() }
}
