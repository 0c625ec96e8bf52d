//! `fcd certify` and `fcd verify-cert`.

use std::fmt::Write as _;
use std::path::PathBuf;

use serde_json::json;

use super::{Format, Io, Status, print, print_json, rfc3339, unix_now, write_atomic};
use fcd_model::error::InputError;
use fcd_model::summary::Summary;
use fcd_verify::canonical_calls::Canonical;
use fcd_verify::certificate::{self, Issue};
use fcd_verify::verdict::{CallInput, Contract, Decision, Env, Verdict, check_call, decide, read_input};

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
    #[arg(long, required_unless_present = "canonical", conflicts_with = "canonical")]
    call: Option<PathBuf>,
    /// The call's contract C_i (with --canonical: the canonical file's contract unless given).
    #[arg(long, required_unless_present = "canonical")]
    contract: Option<PathBuf>,
    /// A profile's canonical.json: the call named by --call-id, its contract and (unless
    /// --env is given) its environment are read from it, with no file split out by hand.
    #[arg(long, value_name = "FILE", requires = "call_id")]
    canonical: Option<PathBuf>,
    /// With --canonical: the name of the canonical call to certify (a key of its `calls`).
    #[arg(long, value_name = "NAME", requires = "canonical")]
    call_id: Option<String>,
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
    /// Output: text for people, or one JSON document.
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

/// Verifies a certificate's signature, form and validity interval.
#[derive(Debug, clap::Args)]
pub struct VerifyArgs {
    /// The certificate (a DSSE envelope, as certify --out wrote it).
    #[arg(long)]
    cert: PathBuf,
    /// Public key (PEM) of the issuer.
    #[arg(long)]
    pubkey: PathBuf,
    /// The current time in Unix seconds (default: the system clock).
    #[arg(long)]
    now: Option<u64>,
    /// Output: text for people, or one JSON document.
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
    let canonical = a.canonical.as_deref().map(Canonical::load).transpose()?;
    let input = match (&canonical, &a.call_id, &a.call) {
        (Some(c), Some(id), _) => c.input(id).ok_or_else(|| {
            let names: Vec<&str> = c.calls.keys().map(String::as_str).collect();
            InputError::new(&c.file, format!("--call-id `{id}` names no canonical call (calls: {})", names.join(", ")))
        })?,
        (_, _, Some(path)) => CallInput::read(path)?,
        _ => return Err(InputError::new("<arguments>", "give --call FILE, or --canonical FILE with --call-id NAME")),
    };
    let contract: Contract = match (&a.contract, &canonical) {
        (Some(p), _) => read_input(p)?,
        (None, Some(c)) => c.contract.clone(),
        (None, None) => return Err(InputError::new("<arguments>", "give --contract FILE")),
    };
    let env = match (&a.env, &canonical) {
        (Some(p), _) => read_input(p)?,
        (None, Some(c)) => c.env.clone(),
        (None, None) => anonymous(),
    };
    if !env.config.is_object() {
        return Err(InputError::new(a.env.as_deref().unwrap_or("<env>".as_ref()), "`config` must be a JSON object"));
    }
    let call = check_call(&summary, &input)?;
    let key = a.key.as_deref().map(certificate::load_signing_key).transpose()?;
    let decision = decide(&call, &env, &contract);
    let now = unix_now(a.now);
    let certificate = key.as_ref().zip(decision.certifiable()).map(|(k, safe)| {
        let issue = Issue { call, env: &env, contract: &contract, decision: safe, now, valid_for: a.valid_for, source: source.as_ref() };
        certificate::issue(&issue, k)
    });
    if let (Some(env), Some(out)) = (&certificate, &a.out) {
        let mut bytes = fcd_model::canon::to_canonical(env);
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
        Format::Text => {
            let validity = certificate.is_some().then(|| (now, now.saturating_add(a.valid_for).min(certificate::MAX_VALID_UNTIL)));
            print(io, &decision_text(&summary, &decision, validity, a.out.as_ref()))?
        }
    }
    Ok(if decision.decision == Verdict::Safe { Status::Success } else { Status::Refused })
}

/// The validity interval a signed certificate states, in Unix seconds.
type Validity = (u64, u64);

fn decision_text(summary: &Summary, d: &Decision, signed: Option<Validity>, out: Option<&PathBuf>) -> String {
    let mut t = String::new();
    let _ = writeln!(t, "{} on {} {}", d.decision.as_str(), summary.tool, summary.release);
    if let Some(i) = d.matched_rule {
        let rule = &summary.rules[i];
        let _ = writeln!(t, "  {}: when {} -> {}", rule.named(i), rule.when, rule.then);
    }
    if let Some(r) = &d.reason {
        let _ = writeln!(t, "  reason: {r}");
    }
    for e in &d.effects {
        let scopes = if e.write_scopes.is_empty() { String::new() } else { format!(", write scopes {}", e.write_scopes.join(", ")) };
        let _ = writeln!(
            t,
            "  effect {}:{} on {} (exposure {}, {}{scopes})",
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
    if let Some((from, until)) = signed {
        let _ = writeln!(t, "  valid from {} until {}", rfc3339(from), rfc3339(until));
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
    let key = certificate::load_verifying_key(&a.pubkey)?;
    let now = unix_now(a.now);
    let result = certificate::verify(&bytes, &key, now);
    match (&result, a.format) {
        (Ok(statement), Format::Json) => print_json(io, &json!({"valid": true, "statement": statement}))?,
        (Err(r), Format::Json) => print_json(io, &json!({"valid": false, "reason": r.detail}))?,
        (Ok(s), Format::Text) => print(
            io,
            &format!(
                "valid: {} for {} on {} (summary {}), from {} until {}\n",
                s.predicate.decision,
                s.predicate.principal,
                s.subject.first().map_or("?", |x| x.name.as_str()),
                s.predicate.summary_digest,
                rfc3339(s.predicate.valid_from),
                rfc3339(s.predicate.valid_until)
            ),
        )?,
        (Err(r), Format::Text) => print(io, &format!("refused: {}: {r}\n", a.cert.display()))?,
    }
    Ok(if result.is_ok() { Status::Success } else { Status::Refused })
}
