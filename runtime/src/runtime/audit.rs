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
    /// The chain the entry belongs to: empty for a store's one chain (SQLite,
    /// and etcd stores written before write-time chains), else the id of the
    /// etcd store instance that wrote it, whose entries chain among themselves.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub chain: String,
}

/// The hash of `entry` chained after `prev`.
pub(crate) fn chain(prev: &str, entry: &str) -> String {
    canon::sha256(format!("{prev}\n{entry}").as_bytes())
}

/// The canonical text of an entry.
pub(crate) fn entry_text(entry: &serde_json::Value) -> String {
    String::from_utf8(canon::to_canonical(entry)).unwrap_or_default()
}

/// Checks the log in sequence order, each entry against the one before it
/// in its own chain (a store has one; on etcd each store instance writes
/// its own, joined here by sequence); returns the number of entries.
pub(crate) fn verify(entries: &[AuditEntry]) -> Result<usize, Refusal> {
    let mut prev: std::collections::BTreeMap<&str, &str> = std::collections::BTreeMap::new();
    let mut last_seq = i64::MIN;
    for e in entries {
        let before = prev.get(e.chain.as_str()).copied().unwrap_or_default();
        if e.seq <= last_seq || e.prev != before || e.hash != chain(before, &e.entry) {
            let of = if e.chain.is_empty() { String::new() } else { format!(" (chain {})", e.chain) };
            return refuse(RefusalCode::AuditBroken, format!("audit entry {}{of} does not follow from the one before", e.seq));
        }
        last_seq = e.seq;
        prev.insert(&e.chain, &e.hash);
    }
    Ok(entries.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link(seq: i64, chain_id: &str, prev: &str, entry: &str) -> AuditEntry {
        AuditEntry { seq, entry: entry.into(), prev: prev.into(), hash: chain(prev, entry), chain: chain_id.into() }
    }

    #[test]
    fn chains_are_checked_each_on_its_own_and_joined_by_sequence() {
        let a1 = link(1, "a", "", "{\"op\":1}");
        let b1 = link(2, "b", "", "{\"op\":2}");
        let a2 = link(3, "a", &a1.hash, "{\"op\":3}");
        assert_eq!(verify(&[a1.clone(), b1.clone(), a2.clone()]).unwrap(), 3);
        // Chained after another writer's entry: broken.
        let crossed = link(3, "a", &b1.hash, "{\"op\":3}");
        assert_eq!(verify(&[a1.clone(), b1.clone(), crossed]).unwrap_err().code, RefusalCode::AuditBroken);
        // A gap in a chain: broken, naming the chain.
        let e = verify(&[b1, a2]).unwrap_err();
        assert!(e.detail.contains("(chain a)"), "{}", e.detail);
    }
}
