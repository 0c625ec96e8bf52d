//! Compatibility evidence from a source epoch to a successor: a generated
//! certificate (one call, by its arguments digest) or a signed manual edge
//! (every call of a tool), valid for a window and revocable.

use serde::Serialize;
use serde_json::json;

use super::refusal::{Refusal, RefusalCode, StorageError, refuse};
use super::store::{Decision, EvidenceRecord, IdKind, View, Write};

/// Compatibility evidence for a successor: a generated certificate (one call)
/// or a signed manual edge (every call of a tool).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum EvidenceKind {
    Certificate,
    Edge,
}

impl EvidenceKind {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            EvidenceKind::Certificate => "certificate",
            EvidenceKind::Edge => "edge",
        }
    }

    /// Reads a stored kind; an unknown one is a storage error naming it.
    pub(crate) fn parse(s: &str) -> Result<EvidenceKind, StorageError> {
        [EvidenceKind::Certificate, EvidenceKind::Edge]
            .into_iter()
            .find(|k| k.as_str() == s)
            .ok_or_else(|| StorageError::new(format!("unknown evidence kind `{s}` in the store")))
    }
}

/// What a piece of evidence says, as recorded.
pub(crate) struct NewEvidence<'a> {
    pub kind: EvidenceKind,
    pub tool: &'a str,
    pub args_digest: Option<&'a str>,
    pub source: &'a str,
    pub target: &'a str,
    pub valid_from: u64,
    pub valid_until: u64,
}

/// Records evidence; returns its id.
pub(crate) fn add(view: &mut dyn View, e: &NewEvidence<'_>) -> Result<(i64, Decision), Refusal> {
    if e.kind == EvidenceKind::Certificate && e.args_digest.is_none() {
        return refuse(RefusalCode::BadEvidence, "a certificate is for one call: give its arguments digest");
    }
    let id = view.next_id(IdKind::Evidence)?;
    let record = EvidenceRecord {
        id,
        kind: e.kind,
        tool: e.tool.to_owned(),
        args_digest: e.args_digest.map(str::to_owned),
        source: e.source.to_owned(),
        target: e.target.to_owned(),
        valid_from: e.valid_from as i64,
        valid_until: e.valid_until as i64,
        revoked: false,
    };
    Ok((
        id,
        Decision {
            writes: vec![Write::NewEvidence(record)],
            audit: json!({"op": "add_evidence", "evidence": id, "kind": e.kind.as_str(), "tool": e.tool, "source": e.source, "target": e.target,
        "valid_from": e.valid_from, "valid_until": e.valid_until}),
        },
    ))
}
