//! The runtime store a gateway decides on must be the one it decided on
//! before. A store deleted and created again starts empty: every retired
//! release would be ADVERTISED again and its configuration binding redone.
//! A store restored from an older copy has lost leases and retirements. So
//! the registry (outside the store) keeps the store's identity and the last
//! audit entry a gateway saw ([`StoreMark`]); a gateway starts only on a
//! store with that identity whose audit log still holds that entry and
//! whose hash chain holds, and moves the mark forward when it stops.
//!
//! Starting over on another store is the operator's explicit choice
//! (`fcd gateway serve --accept-new-store`), never a default. A running
//! gateway moves the mark every `store_mark_every` seconds too, so a gateway
//! that crashes leaves a mark at most that old. What this cannot see:
//! entries cut from the end of the log after the last mark (the newest
//! `store_mark_every` seconds of a crashed gateway's decisions), and a store
//! replaced while a gateway runs, which the gateway's file check refuses at
//! the next decision.

use fcd_runtime::registry::{Registry, StoreMark};
use fcd_runtime::runtime::{AuditEntry, Runtime, StoreSpec};

/// How the registry names a store: a SQLite file by its absolute path, an
/// etcd cluster by its endpoints and prefix (not by the credentials that
/// reach it: a rotated certificate is the same store).
pub(crate) fn name(spec: &StoreSpec) -> String {
    match spec {
        StoreSpec::Sqlite(path) => std::fs::canonicalize(path).unwrap_or_else(|_| path.clone()).display().to_string(),
        other => other.place(),
    }
}

/// The store's audit log, read once for everything a check needs.
fn entries(runtime: &Runtime, store: &str) -> Result<Vec<AuditEntry>, String> {
    runtime.audit_entries().map_err(|e| format!("the runtime store {store}: its audit log does not read: {e}"))
}

/// The store as it is now: its identity and the last entry of its audit log.
fn mark(runtime: &Runtime, entries: &[AuditEntry]) -> StoreMark {
    let last = entries.last();
    StoreMark { identity: runtime.identity(), audit_seq: last.map_or(0, |e| e.seq), audit_hash: last.map(|e| e.hash.clone()).unwrap_or_default() }
}

/// Checks that `runtime` is the store the registry bound under `store`
/// (binding it the first time), then records its mark. With `accept_new`,
/// a store of another identity replaces the bound one.
pub(crate) fn check(runtime: &Runtime, registry: &Registry, store: &str, accept_new: bool) -> Result<(), String> {
    runtime.verify_audit().map_err(|e| format!("the runtime store {store}: its audit log is broken ({e}): nothing is decided on it"))?;
    let entries = entries(runtime, store)?;
    let now = mark(runtime, &entries);
    let mut rebind = false;
    if let Some(bound) = registry.bound_store(store).map_err(|e| e.to_string())? {
        if bound.identity != now.identity {
            if !accept_new {
                return Err(format!(
                    "the runtime store {store} is not the store the registry bound to it ({}, last audit entry {}): it was replaced, \
                     or deleted and created again, so the retirements and configuration bindings recorded there are not in it. \
                     Restore that store, or start over on this one with `fcd gateway serve --accept-new-store`",
                    bound.identity, bound.audit_seq
                ));
            }
            eprintln!(
                "fcd gateway: starting over on the runtime store {store} ({}), as --accept-new-store asks: the store bound before was {}",
                now.identity, bound.identity
            );
            rebind = true;
        } else if bound.audit_seq > 0 && !entries.iter().any(|e| e.seq == bound.audit_seq && e.hash == bound.audit_hash) {
            return Err(format!(
                "the runtime store {store} lost audit entries: entry {} that a gateway saw there is missing or different \
                 (the store was cut back, or restored from an older copy), so leases and retirements may be missing: nothing is decided on it",
                bound.audit_seq
            ));
        }
    }
    registry.bind_store(store, &now, rebind).map_err(|e| e.to_string())
}

/// Where `runtime`'s audit log ends now, read without the rest of the log.
pub(crate) fn last_mark(runtime: &Runtime, store: &str) -> Result<StoreMark, String> {
    let last = runtime.audit_last().map_err(|e| format!("the runtime store {store}: its audit log does not read: {e}"))?;
    Ok(mark(runtime, last.as_slice()))
}

/// Moves the registry's mark of `store` forward to `now`.
pub(crate) fn advance(registry: &Registry, store: &str, now: &StoreMark) -> Result<(), String> {
    registry.bind_store(store, now, false).map_err(|e| e.to_string())
}
