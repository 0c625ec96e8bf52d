//! Formation: binding a call (snapshot, tool, arguments, principal) to its
//! exact source epoch and at most one captured successor, whose evidence must
//! exist and verify at that moment. This is where authority is fixed; nothing
//! written later widens it (invariant 1). Revocation of evidence or of a
//! formation only ever narrows it.

use serde_json::json;

use super::decision::{self, CaptureRefusal, EvidenceFacts};
use super::refusal::{Refusal, refuse};
use super::store::EvidenceKind;
use super::store::{FormationRecord, IdKind, Recorded, View, Write};
use fcd_model::refusal::RefusalCode;

/// A call being formed: its snapshot, tool, arguments digest, principal and source epoch.
#[derive(Debug, Clone, Copy)]
pub struct Call<'a> {
    pub snapshot: &'a str,
    pub tool: &'a str,
    pub args_digest: &'a str,
    pub principal: &'a str,
    pub source: &'a str,
}

/// Forms `call` on its source epoch, capturing `successor`'s target if that
/// evidence exists, is live at `now` and is for this call; returns the formation id.
pub(crate) fn form(view: &mut dyn View, call: &Call<'_>, successor: Option<i64>, now: u64, ttl: u64) -> Result<(i64, Recorded), Refusal> {
    let source = call.source;
    let Some(epoch) = view.epoch(source)? else { return refuse(RefusalCode::UnknownEpoch, format!("no epoch {source}")) };
    if !decision::formable(epoch.state) {
        return refuse(RefusalCode::SourceNotEligible, format!("{source} is {}", epoch.state.as_str()));
    }
    let captured = match successor {
        None => None,
        Some(id) => Some((capture(view, call, id, now)?, id)),
    };
    let id = view.next_id(IdKind::Formation)?;
    let expires_at = now.saturating_add(ttl) as i64;
    let audit = json!({"op": "form", "formation": id, "tool": call.tool, "source": source, "successor": captured.as_ref().map(|c| &c.0),
        "evidence": captured.as_ref().map(|c| c.1), "now": now, "expires_at": expires_at});
    let record = FormationRecord {
        id,
        snapshot: call.snapshot.to_owned(),
        tool: call.tool.to_owned(),
        args_digest: call.args_digest.to_owned(),
        principal: call.principal.to_owned(),
        source: source.to_owned(),
        successor: captured.as_ref().map(|c| c.0.clone()),
        successor_evidence: captured.as_ref().map(|c| c.1),
        expires_at,
        revoked: false,
        latest_lease: None,
    };
    Ok((id, Recorded { writes: vec![Write::NewFormation(record)], audit }))
}

/// The successor epoch that evidence `id` lets `call` capture at `now`.
fn capture(view: &mut dyn View, call: &Call<'_>, id: i64, now: u64) -> Result<String, Refusal> {
    let Some(ev) = view.evidence(id)? else {
        return refuse(RefusalCode::NotCaptured, format!("evidence {id} does not exist at formation"));
    };
    // A certificate is for one call: its arguments and its principal.
    let this_call = || ev.args_digest.as_deref() == Some(call.args_digest) && ev.principal.as_deref() == Some(call.principal);
    let for_this_call = ev.tool == call.tool && ev.source == call.source && (ev.kind != EvidenceKind::Certificate || this_call());
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

/// A formation's fixed authority: (source, captured successor).
pub(crate) fn authority(view: &mut dyn View, id: i64) -> Result<Option<(String, Option<String>)>, Refusal> {
    Ok(view.formation(id)?.map(|f| (f.source, f.successor)))
}

/// Revokes evidence (`evidence:ID`) or a formation (`formation:ID`).
pub(crate) fn revoke(view: &mut dyn View, handle: &str) -> Result<Recorded, Refusal> {
    let (is_evidence, id) = match handle.split_once(':') {
        Some(("evidence", id)) => (true, id),
        Some(("formation", id)) => (false, id),
        _ => return refuse(RefusalCode::BadHandle, format!("`{handle}` is not evidence:ID or formation:ID")),
    };
    let Ok(id) = id.parse::<i64>() else { return refuse(RefusalCode::BadHandle, format!("`{handle}`: the id is a number")) };
    let write = if is_evidence { view.evidence(id)?.map(|_| Write::RevokeEvidence(id)) } else { view.formation(id)?.map(|_| Write::RevokeFormation(id)) };
    let Some(write) = write else { return refuse(RefusalCode::BadHandle, format!("no {handle}")) };
    Ok(Recorded { writes: vec![write], audit: json!({"op": "revoke", "handle": handle}) })
}
