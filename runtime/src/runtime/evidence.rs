//! Compatibility evidence from a source epoch to a successor: a generated
//! certificate (one call, by its arguments digest and principal) or a signed
//! manual edge (every call of a tool), valid for a window and revocable.
//!
//! A certificate is recorded only from its DSSE envelope ([`certificate`]):
//! the envelope's signature by a trusted issuer and its validity interval are
//! checked by `fcd_verify::certificate` (the one verifier), and here its statement
//! must name the registered target epoch (tool, artifact, summary,
//! configuration), the registered source epoch (artifact, summary) and the
//! contract the runtime forms calls under. What it records (tool, arguments,
//! principal, window) is read from the signed statement, never given beside it.

use fcd_verify::certificate::{self, Statement};
use serde_json::json;

use super::refusal::{Refusal, refuse};
use super::store::{EvidenceKind, EvidenceRecord, IdKind, Recorded, View, Write};
use fcd_model::refusal::RefusalCode;

/// What a piece of evidence says, as recorded.
pub(crate) struct NewEvidence<'a> {
    pub kind: EvidenceKind,
    pub tool: &'a str,
    pub args_digest: Option<&'a str>,
    pub principal: Option<&'a str>,
    pub source: &'a str,
    pub target: &'a str,
    pub valid_from: u64,
    pub valid_until: u64,
}

/// Records evidence; returns its id.
pub(crate) fn add(view: &mut dyn View, e: &NewEvidence<'_>) -> Result<(i64, Recorded), Refusal> {
    if e.kind == EvidenceKind::Certificate && e.args_digest.is_none() {
        return refuse(RefusalCode::BadEvidence, "a certificate is for one call: give its arguments digest");
    }
    let id = view.next_id(IdKind::Evidence)?;
    let record = EvidenceRecord {
        id,
        kind: e.kind,
        tool: e.tool.to_owned(),
        args_digest: e.args_digest.map(str::to_owned),
        principal: e.principal.map(str::to_owned),
        source: e.source.to_owned(),
        target: e.target.to_owned(),
        valid_from: e.valid_from as i64,
        valid_until: e.valid_until as i64,
        revoked: false,
    };
    Ok((
        id,
        Recorded {
            writes: vec![Write::NewEvidence(record)],
            audit: json!({"op": "add_evidence", "evidence": id, "kind": e.kind.as_str(), "tool": e.tool, "source": e.source, "target": e.target,
        "valid_from": e.valid_from, "valid_until": e.valid_until}),
        },
    ))
}

/// What a verified certificate is asked to be evidence for.
pub(crate) struct CertificateFor<'a> {
    pub source: &'a str,
    pub target: &'a str,
    /// The digest of the contract the runtime forms these calls under.
    pub contract: &'a str,
}

/// Records a certificate whose envelope verified (signature, issuer, validity
/// at `now`) as evidence from `want.source` to `want.target`, if its statement
/// names both registered epochs and the contract; returns its id.
pub(crate) fn certificate(view: &mut dyn View, statement: &Statement, want: &CertificateFor<'_>) -> Result<(i64, Recorded), Refusal> {
    let p = &statement.predicate;
    let Some(target) = view.epoch(want.target)? else { return refuse(RefusalCode::UnknownEpoch, format!("no epoch {}", want.target)) };
    let Some(source) = view.epoch(want.source)? else { return refuse(RefusalCode::UnknownEpoch, format!("no epoch {}", want.source)) };
    let mismatch = |what: &str, stated: &str, registered: &str| {
        refuse::<()>(RefusalCode::CertificateMismatch, format!("the certificate names {what} {stated}, the registered one is {registered}"))
    };
    let subject = certificate::subject_digest(p.artifact_digest.as_deref(), &p.source_digest);
    let checks = [
        ("tool", p.tool.as_str(), target.tool.as_str()),
        ("target artifact", subject, target.artifact.as_str()),
        ("target summary", p.summary_digest.as_str(), target.summary.as_str()),
        ("target configuration", p.config_digest.as_str(), target.config.as_str()),
        ("contract", p.contract_digest.as_str(), want.contract),
    ];
    for (what, stated, registered) in checks {
        if stated != registered {
            mismatch(what, stated, registered)?;
        }
    }
    let Some(from) = &p.source else {
        return refuse(RefusalCode::CertificateMismatch, "the certificate names no source release: it is evidence for one release, not for a move");
    };
    let from_subject = certificate::subject_digest(from.artifact_digest.as_deref(), &from.source_digest);
    if from_subject != source.artifact {
        mismatch("source artifact", from_subject, &source.artifact)?;
    }
    if from.summary_digest != source.summary {
        mismatch("source summary", &from.summary_digest, &source.summary)?;
    }
    let (Ok(valid_from), Ok(valid_until)) = (i64::try_from(p.valid_from), i64::try_from(p.valid_until)) else {
        return refuse(RefusalCode::CertificateMismatch, "the validity interval does not fit the store");
    };
    let evidence = NewEvidence {
        kind: EvidenceKind::Certificate,
        tool: &p.tool,
        args_digest: Some(&p.arguments_digest),
        principal: Some(&p.principal),
        source: want.source,
        target: want.target,
        valid_from: valid_from as u64,
        valid_until: valid_until as u64,
    };
    let (id, mut decision) = add(view, &evidence)?;
    decision.audit["issuer"] = json!(p.issuer);
    decision.audit["arguments_digest"] = json!(p.arguments_digest);
    Ok((id, decision))
}
