//! Formation: binding a call (snapshot, tool, arguments, principal) to its
//! exact source epoch and at most one captured successor, whose evidence must
//! exist and verify at that moment. This is where authority is fixed; nothing
//! written later widens it (invariant 1). Revocation of evidence or of a
//! formation only ever narrows it.

use rusqlite::{Connection, OptionalExtension, params};

use super::decision::{self, CaptureRefusal, EvidenceFacts};
use super::evidence::{self, EvidenceKind};
use super::refusal::{Refusal, RefusalCode, StorageError, refuse};
use super::{audit, epoch};

/// A call being formed.
pub(crate) struct Call<'a> {
    pub snapshot: &'a str,
    pub tool: &'a str,
    pub args_digest: &'a str,
    pub principal: &'a str,
    pub source: &'a str,
}

/// Forms `call` on its source epoch, capturing `successor`'s target if that
/// evidence exists, is live at `now` and is for this call; returns the formation id.
pub(crate) fn form(tx: &Connection, call: &Call<'_>, successor: Option<i64>, now: u64, ttl: u64) -> Result<i64, Refusal> {
    let source = call.source;
    let Some(state) = epoch::state_of(tx, source)? else { return refuse(RefusalCode::UnknownEpoch, format!("no epoch {source}")) };
    if !decision::formable(state) {
        return refuse(RefusalCode::SourceNotEligible, format!("{source} is {}", state.as_str()));
    }
    let captured = match successor {
        None => None,
        Some(id) => Some((capture(tx, call, id, now)?, id)),
    };
    let id = audit::next_id(tx, "formations")?;
    let expires_at = now.saturating_add(ttl) as i64;
    let entry = serde_json::json!({"op": "form", "formation": id, "tool": call.tool, "source": source, "successor": captured.as_ref().map(|c| &c.0),
        "evidence": captured.as_ref().map(|c| c.1), "now": now, "expires_at": expires_at});
    let seq = audit::append(tx, &entry)?;
    tx.execute(
        "INSERT INTO formations (snapshot_digest, tool, args_digest, principal, source_epoch, successor_epoch, successor_evidence, expires_at, seq)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        params![
            call.snapshot,
            call.tool,
            call.args_digest,
            call.principal,
            source,
            captured.as_ref().map(|c| &c.0),
            captured.as_ref().map(|c| c.1),
            expires_at,
            seq
        ],
    )?;
    Ok(audit::same_id(tx, id)?)
}

/// The successor epoch that evidence `id` lets `call` capture at `now`.
fn capture(tx: &Connection, call: &Call<'_>, id: i64, now: u64) -> Result<String, Refusal> {
    let Some(ev) = evidence::get(tx, id)? else {
        return refuse(RefusalCode::NotCaptured, format!("evidence {id} does not exist at formation"));
    };
    let for_this_call =
        ev.tool == call.tool && ev.source == call.source && (ev.kind != EvidenceKind::Certificate || ev.args_digest.as_deref() == Some(call.args_digest));
    let facts = EvidenceFacts { revoked: ev.revoked, valid_from: ev.valid_from, valid_until: ev.valid_until, for_this_call };
    if let Err(r) = decision::capture(&facts, now as i64) {
        let detail = match r {
            CaptureRefusal::Revoked => format!("evidence {id} is revoked"),
            CaptureRefusal::NotValidNow => format!("evidence {id} is not valid now"),
            CaptureRefusal::NotForThisCall => format!("evidence {id} is not for this call from {}", call.source),
        };
        return refuse(r.code(), detail);
    }
    Ok(ev.target)
}

/// A stored formation, as admission reads it.
pub(crate) struct Formation {
    pub source: String,
    pub successor: Option<String>,
    pub successor_evidence: Option<i64>,
    pub expires_at: i64,
    pub revoked: bool,
}

pub(crate) fn get(conn: &Connection, id: i64) -> Result<Option<Formation>, StorageError> {
    Ok(conn
        .query_row("SELECT source_epoch, successor_epoch, successor_evidence, expires_at, revoked FROM formations WHERE id = ?1", params![id], |r| {
            Ok(Formation { source: r.get(0)?, successor: r.get(1)?, successor_evidence: r.get(2)?, expires_at: r.get(3)?, revoked: r.get::<_, i64>(4)? != 0 })
        })
        .optional()?)
}

/// A formation's fixed authority: (source, captured successor).
pub(crate) fn authority(conn: &Connection, id: i64) -> Result<Option<(String, Option<String>)>, StorageError> {
    Ok(conn.query_row("SELECT source_epoch, successor_epoch FROM formations WHERE id = ?1", params![id], |r| Ok((r.get(0)?, r.get(1)?))).optional()?)
}

/// Revokes evidence (`evidence:ID`) or a formation (`formation:ID`).
pub(crate) fn revoke(tx: &Connection, handle: &str) -> Result<(), Refusal> {
    let (table, id) = match handle.split_once(':') {
        Some(("evidence", id)) => ("evidence", id),
        Some(("formation", id)) => ("formations", id),
        _ => return refuse(RefusalCode::BadHandle, format!("`{handle}` is not evidence:ID or formation:ID")),
    };
    let Ok(id) = id.parse::<i64>() else { return refuse(RefusalCode::BadHandle, format!("`{handle}`: the id is a number")) };
    let n = tx.execute(&format!("UPDATE {table} SET revoked = 1 WHERE id = ?1"), params![id])?;
    if n == 0 {
        return refuse(RefusalCode::BadHandle, format!("no {handle}"));
    }
    audit::append(tx, &serde_json::json!({"op": "revoke", "handle": handle}))?;
    Ok(())
}
