//! Resolving an uncertain lease: only a signature of the registered resolver
//! over `fcd-resolution|LEASE|RESULT` settles it, so its epoch may retire.
//! (The result is the resolver's word on what happened to the invocation;
//! it is stored as given.)

use ed25519_dalek::Signature;
use rusqlite::{Connection, params};

use super::refusal::{Refusal, RefusalCode, refuse};
use super::state::LeaseState;
use super::{audit, lease, secrets};
use crate::canon;

/// What a resolver signs to settle lease `lease` with `result`.
pub fn resolution_message(lease: i64, result: &str) -> String {
    format!("fcd-resolution|{lease}|{result}")
}

/// Checks the resolver's signature before any transaction is taken.
pub(crate) fn check_signature(conn: &Connection, lease: i64, result: &str, signature: &[u8]) -> Result<(), Refusal> {
    let Some(key) = secrets::resolver(conn)? else {
        return refuse(RefusalCode::NoResolver, "no resolver key is registered");
    };
    let Ok(sig) = Signature::from_slice(signature) else { return refuse(RefusalCode::BadSignature, "not an ed25519 signature") };
    if key.verify_strict(resolution_message(lease, result).as_bytes(), &sig).is_err() {
        return refuse(RefusalCode::BadSignature, format!("the resolution of lease {lease} is not signed by the resolver"));
    }
    Ok(())
}

/// Settles an uncertain lease inside `tx`, recording the signed result.
pub(crate) fn settle(tx: &Connection, id: i64, result: &str, signature: &[u8]) -> Result<(), Refusal> {
    let state = lease::state_of(tx, id)?;
    if !state.is_some_and(|s| LeaseState::allowed(s, LeaseState::Resolved)) {
        return refuse(RefusalCode::NotUncertain, format!("lease {id} is {}", state.map_or("unknown", LeaseState::as_str)));
    }
    lease::set_state(tx, id, LeaseState::Resolved)?;
    tx.execute("INSERT INTO resolutions VALUES (?1, ?2, ?3)", params![id, result, canon::hex(signature)])?;
    audit::append(tx, &serde_json::json!({"op": "resolve", "lease": id, "outcome": result}))?;
    Ok(())
}
