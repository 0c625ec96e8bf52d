//! `fcd certify` and `fcd verify-cert`.

use std::fmt::Write as _;
use std::path::PathBuf;

use serde_json::json;

use super::{Format, Io, Status, print, print_json, unix_now, write_atomic};
use crate::cert::{self, Issue};
use crate::certify::{CallInput, Contract, Decision, Env, Verdict, check_call, decide, read_input};
use crate::error::InputError;
use crate::summary::Summary;

/// Decides whether a formed call fits its contract on a target summary; signs a certificate when safe.
#[derive(Debug, clap::Args)]
pub struct CertifyArgs {
    /// The target release's summary.
    #[arg(long)]
    summary: PathBuf,
    /// For compatibility evidence: the summary of the release the call was
    /// formed against; the certificate then names it as its source.
    #[arg(long)]
    source_summary: Option<PathBuf>,
    /// The formed call: {"tool": …, "arguments": {…}}.
    #[arg(long)]
    call: PathBuf,
    /// The call's contract C_i.
    #[arg(long)]
    contract: PathBuf,
    /// Authenticated context: {"principal": …, "destination": …, "config": {…}}.
    #[arg(long)]
    env: Option<PathBuf>,
    /// Private key (PKCS#8 PEM). Without it, certify decides and explains but signs nothing.
    #[arg(long)]
    key: Option<PathBuf>,
    /// Where to write the certificate (a DSSE envelope).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Validity of the certificate, in seconds.
    #[arg(long, default_value_t = 300)]
    valid_for: u64,
    /// The current time in Unix seconds (default: the system clock).
    #[arg(long)]
    now: Option<u64>,
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

/// Verifies a certificate's signature, form and validity interval.
#[derive(Debug, clap::Args)]
pub struct VerifyArgs {
    #[arg(long)]
    cert: PathBuf,
    /// Public key (PEM) of the issuer.
    #[arg(long)]
    pubkey: PathBuf,
    /// The current time in Unix seconds (default: the system clock).
    #[arg(long)]
    now: Option<u64>,
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

/// The context used when no `--env` is given: nobody in particular, which no contract names.
fn anonymous() -> Env {
    Env { principal: "anonymous".into(), destination: String::new(), config: json!({}) }
}

pub fn certify(a: CertifyArgs, io: &mut Io<'_>) -> Result<Status, InputError> {
    let summary = Summary::load(&a.summary)?;
    let source = a.source_summary.as_deref().map(Summary::load).transpose()?;
    let input = CallInput::read(&a.call)?;
    let contract: Contract = read_input(&a.contract)?;
    let env = match &a.env {
        Some(p) => read_input(p)?,
        None => anonymous(),
    };
    if !env.config.is_object() {
        return Err(InputError::new(a.env.as_deref().unwrap_or("<env>".as_ref()), "`config` must be a JSON object"));
    }
    let call = check_call(&summary, &input)?;
    let key = a.key.as_deref().map(cert::load_signing_key).transpose()?;
    let decision = decide(&call, &env, &contract);
    let now = unix_now(a.now);
    let certificate = key.as_ref().zip(decision.certifiable()).map(|(k, safe)| {
        let issue = Issue { call, env: &env, contract: &contract, decision: safe, now, valid_for: a.valid_for, source: source.as_ref() };
        cert::issue(&issue, k)
    });
    if let (Some(env), Some(out)) = (&certificate, &a.out) {
        let mut bytes = crate::canon::to_canonical(env);
        bytes.push(b'\n');
        write_atomic(out, &bytes)?;
    }
    match a.format {
        Format::Json => print_json(
            io,
            &json!({
                "decision": decision.decision,
                "effects": decision.effects,
                "violations": decision.violations,
                "matched_rule": decision.matched_rule,
                "reason": decision.reason,
                "certificate": certificate,
            }),
        )?,
        Format::Text => print(io, &decision_text(&summary, &decision, certificate.is_some(), a.out.as_ref()))?,
    }
    Ok(if decision.decision == Verdict::Safe { Status::Success } else { Status::Refused })
}

fn decision_text(summary: &Summary, d: &Decision, signed: bool, out: Option<&PathBuf>) -> String {
    let mut t = String::new();
    let _ = writeln!(t, "{} on {} {}", d.decision.as_str(), summary.tool, summary.release);
    if let Some(i) = d.matched_rule {
        let rule = &summary.rules[i];
        let _ = writeln!(t, "  rule {i}: when {} -> {}", rule.when, rule.then);
    }
    if let Some(r) = &d.reason {
        let _ = writeln!(t, "  reason: {r}");
    }
    for e in &d.effects {
        let _ = writeln!(
            t,
            "  effect {}:{} on {} (exposure {}, {})",
            e.domain,
            e.operation,
            e.resource,
            e.exposure.as_str(),
            if e.mutation { "mutation" } else { "no mutation" }
        );
    }
    for v in &d.violations {
        let _ = writeln!(t, "  violation: {v}");
    }
    if signed {
        match out {
            Some(p) => {
                let _ = writeln!(t, "  certificate written to {}", p.display());
            }
            None => {
                let _ = writeln!(t, "  certificate signed (use --out or --format json to keep it)");
            }
        }
    }
    t
}

pub fn verify(a: VerifyArgs, io: &mut Io<'_>) -> Result<Status, InputError> {
    let bytes = std::fs::read(&a.cert).map_err(|e| InputError::new(&a.cert, format!("cannot read: {e}")))?;
    let key = cert::load_verifying_key(&a.pubkey)?;
    let now = unix_now(a.now);
    let result = cert::verify(&bytes, &key, now);
    match (&result, a.format) {
        (Ok(statement), Format::Json) => print_json(io, &json!({"valid": true, "statement": statement}))?,
        (Err(r), Format::Json) => print_json(io, &json!({"valid": false, "reason": r.0}))?,
        (Ok(s), Format::Text) => print(
            io,
            &format!(
                "valid: {} for {} on {} (summary {}), until {}\n",
                s.predicate.decision,
                s.predicate.principal,
                s.subject.first().map_or("?", |x| x.name.as_str()),
                s.predicate.summary_digest,
                s.predicate.valid_until
            ),
        )?,
        (Err(r), Format::Text) => print(io, &format!("refused: {}: {r}\n", a.cert.display()))?,
    }
    Ok(if result.is_ok() { Status::Success } else { Status::Refused })
}
