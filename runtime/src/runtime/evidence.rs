//! Compatibility evidence from a source epoch to a successor: a generated
//! certificate (one call, by its arguments digest) or a signed manual edge
//! (every call of a tool), valid for a window and revocable.

use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;

use super::audit;
use super::refusal::{Refusal, RefusalCode, StorageError, refuse};

/// Compatibility evidence for a successor: a generated certificate (one call)
/// or a signed manual edge (every call of a tool).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum EvidenceKind {
    Certificate,
    Edge,
}

impl EvidenceKind {
    fn as_str(self) -> &'static str {
        match self {
            EvidenceKind::Certificate => "certificate",
            EvidenceKind::Edge => "edge",
        }
    }

    /// Reads a stored kind; an unknown one is a storage error naming it.
    fn parse(s: &str) -> Result<EvidenceKind, StorageError> {
        [EvidenceKind::Certificate, EvidenceKind::Edge]
            .into_iter()
            .find(|k| k.as_str() == s)
            .ok_or_else(|| StorageError::new(format!("unknown evidence kind `{s}` in the store")))
    }
}

/// One stored piece of evidence, as formation reads it.
pub(crate) struct Evidence {
    /// A certificate is bound to one arguments digest.
    pub kind: EvidenceKind,
    pub tool: String,
    pub args_digest: Option<String>,
    pub source: String,
    pub target: String,
    pub valid_from: i64,
    pub valid_until: i64,
    pub revoked: bool,
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
pub(crate) fn add(tx: &Connection, e: &NewEvidence<'_>) -> Result<i64, Refusal> {
    if e.kind == EvidenceKind::Certificate && e.args_digest.is_none() {
        return refuse(RefusalCode::BadEvidence, "a certificate is for one call: give its arguments digest");
    }
    let id = audit::next_id(tx, "evidence")?;
    let entry = serde_json::json!({"op": "add_evidence", "evidence": id, "kind": e.kind.as_str(), "tool": e.tool, "source": e.source, "target": e.target,
        "valid_from": e.valid_from, "valid_until": e.valid_until});
    let seq = audit::append(tx, &entry)?;
    tx.execute(
        "INSERT INTO evidence (kind, tool, args_digest, source_epoch, target_epoch, valid_from, valid_until, seq) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        params![e.kind.as_str(), e.tool, e.args_digest, e.source, e.target, e.valid_from as i64, e.valid_until as i64, seq],
    )?;
    Ok(audit::same_id(tx, id)?)
}

/// The evidence with this id, if any.
pub(crate) fn get(conn: &Connection, id: i64) -> Result<Option<Evidence>, StorageError> {
    let row = conn
        .query_row(
            "SELECT kind, tool, args_digest, source_epoch, target_epoch, valid_from, valid_until, revoked FROM evidence WHERE id = ?1",
            params![id],
            |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    Evidence {
                        kind: EvidenceKind::Edge,
                        tool: r.get(1)?,
                        args_digest: r.get(2)?,
                        source: r.get(3)?,
                        target: r.get(4)?,
                        valid_from: r.get(5)?,
                        valid_until: r.get(6)?,
                        revoked: r.get::<_, i64>(7)? != 0,
                    },
                ))
            },
        )
        .optional()?;
    let Some((kind, evidence)) = row else { return Ok(None) };
    Ok(Some(Evidence { kind: EvidenceKind::parse(&kind)?, ..evidence }))
}
