//! Resolving an uncertain lease: only a signature of the registered resolver
//! over `fcd-resolution|LEASE|RESULT` settles it, so its epoch may retire.
//! (The result is the resolver's word on what happened to the invocation;
//! it is stored as given.)

use ed25519_dalek::{Signature, VerifyingKey};
use serde_json::json;

use super::refusal::{Refusal, refuse};
use super::state::LeaseState;
use super::store::{Recorded, View, Write};
use fcd_model::canon;
use fcd_model::refusal::RefusalCode;

/// What a resolver signs to settle lease `lease` with `result`.
pub fn resolution_message(lease: i64, result: &str) -> String {
    format!("fcd-resolution|{lease}|{result}")
}

/// Settles an uncertain lease with the resolver's signature over its result;
/// the signature is checked first, against the resolver key the store holds.
pub(crate) fn settle(view: &mut dyn View, id: i64, result: &str, signature: &[u8]) -> Result<Recorded, Refusal> {
    let Some(key) = view.resolver()?.and_then(|k| VerifyingKey::from_bytes(&k).ok()) else {
        return refuse(RefusalCode::NoResolver, "no resolver key is registered");
    };
    let Ok(sig) = Signature::from_slice(signature) else { return refuse(RefusalCode::BadSignature, "not an ed25519 signature") };
    if key.verify_strict(resolution_message(id, result).as_bytes(), &sig).is_err() {
        return refuse(RefusalCode::BadSignature, format!("the resolution of lease {id} is not signed by the resolver"));
    }
    let state = view.lease(id)?.map(|l| l.state);
    if !state.is_some_and(|s| LeaseState::allowed(s, LeaseState::Resolved)) {
        return refuse(RefusalCode::NotUncertain, format!("lease {id} is {}", state.map_or("unknown", LeaseState::as_str)));
    }
    Ok(Recorded {
        writes: vec![
            Write::LeaseState { id, to: LeaseState::Resolved },
            Write::Resolution { lease: id, outcome: result.to_owned(), signature: canon::hex(signature) },
        ],
        audit: json!({"op": "resolve", "lease": id, "outcome": result}),
    })
}
