//! The hash-chained audit log: every decision appends one canonical JSON
//! entry, each entry's hash covering the one before, so an edited or dropped
//! entry breaks the chain. Its sequence numbers also order admissions against
//! lifecycle moves for the invariant checks. The format is the same on every
//! store (see [`AuditEntry`]); this module computes and checks the chain, the
//! stores keep it.

use super::refusal::{Refusal, refuse};
use fcd_model::refusal::RefusalCode;
use serde::Serialize;

use fcd_model::canon;

/// One entry of the hash-chained audit log, the same on every store:
/// `hash = sha256(prev + "\n" + entry)`, `prev` the hash of the entry before.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AuditEntry {
    /// Increasing, not necessarily dense (on etcd it is the revision of the decision's transaction).
    pub seq: i64,
    /// The entry, canonical JSON.
    pub entry: String,
    pub prev: String,
    pub hash: String,
}

/// The hash of `entry` chained after `prev`.
pub(crate) fn chain(prev: &str, entry: &str) -> String {
    canon::sha256(format!("{prev}\n{entry}").as_bytes())
}

/// The canonical text of an entry.
pub(crate) fn entry_text(entry: &serde_json::Value) -> String {
    String::from_utf8(canon::to_canonical(entry)).unwrap_or_default()
}

/// Checks the chain over the whole log, in sequence order; returns the number of entries.
pub(crate) fn verify(entries: &[AuditEntry]) -> Result<usize, Refusal> {
    let mut prev = String::new();
    let mut last_seq = i64::MIN;
    for e in entries {
        if e.seq <= last_seq || e.prev != prev || e.hash != chain(&prev, &e.entry) {
            return refuse(RefusalCode::AuditBroken, format!("audit entry {} does not follow from the one before", e.seq));
        }
        last_seq = e.seq;
        prev = e.hash.clone();
    }
    Ok(entries.len())
}
