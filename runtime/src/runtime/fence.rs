//! The final-hop fence, run just before the handler: the token is the
//! lease's own and unused, for this generation, and the artifact and
//! configuration about to run are the epoch's registered ones. Accepted once
//! (invariant 5).

use rusqlite::{Connection, OptionalExtension, params};

use super::audit;
use super::decision::{self, FenceRefusal, HopFacts};
use super::refusal::{Refusal, RefusalCode, refuse};
use super::state::LeaseState;
use super::token::{self, Binding};

/// What is about to run.
pub(crate) struct Hop<'a> {
    pub token: &'a str,
    pub artifact: &'a str,
    pub config: &'a str,
    pub generation: i64,
}

/// Checks `hop` and spends its token inside `tx`; returns the lease id.
pub(crate) fn check(tx: &Connection, key: &[u8], hop: &Hop<'_>) -> Result<i64, Refusal> {
    let Some((id, nonce, mac)) = token::parse(hop.token) else { return refuse(RefusalCode::BadToken, "not a lease token") };
    type Row = (String, i64, String, String, i64, String, String);
    let row: Option<Row> = tx
        .query_row(
            "SELECT l.epoch, l.generation, l.nonce, l.state, l.used, e.artifact_digest, e.config_digest
             FROM leases l JOIN epochs e ON e.epoch_id = l.epoch WHERE l.id = ?1",
            params![id],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?, r.get(6)?)),
        )
        .optional()?;
    let Some((epoch, generation, stored_nonce, state, used, artifact, config)) = row else {
        return refuse(RefusalCode::UnknownToken, format!("no lease {id}"));
    };
    let binding = Binding { id, nonce: &stored_nonce, epoch: &epoch, artifact: &artifact, config: &config, generation };
    let hop_facts = HopFacts {
        token_verifies: stored_nonce == nonce && token::mac(key, &binding) == mac,
        used: used != 0,
        generation_matches: hop.generation == generation,
        artifact_matches: hop.artifact == artifact,
        config_matches: hop.config == config,
        state: LeaseState::parse(&state)?,
    };
    if let Err(r) = decision::final_hop(&hop_facts) {
        let detail = match r {
            FenceRefusal::BadToken => format!("the token of lease {id} does not verify"),
            FenceRefusal::Replay => format!("the token of lease {id} was already used"),
            FenceRefusal::StaleGeneration => format!("generation {}, the lease holds {generation}", hop.generation),
            FenceRefusal::ArtifactMismatch => format!("{} is not {epoch}'s artifact {artifact}", hop.artifact),
            FenceRefusal::ConfigMismatch => format!("{} is not {epoch}'s configuration {config}", hop.config),
            FenceRefusal::NotAdmitted(state) => format!("lease {id} is {state}"),
        };
        return refuse(r.code(), detail);
    }
    tx.execute("UPDATE leases SET used = 1 WHERE id = ?1", params![id])?;
    audit::append(tx, &serde_json::json!({"op": "fence", "lease": id, "generation": hop.generation, "artifact": hop.artifact, "config": hop.config}))?;
    Ok(id)
}
