//! The final-hop fence, run just before the handler: the token is the
//! lease's own and unused, for this generation, and the artifact and
//! configuration about to run are the epoch's registered ones. Accepted once
//! (invariant 5).

use serde_json::json;

use super::decision::{self, FenceRefusal, HopFacts};
use super::refusal::{Refusal, RefusalCode, StorageError, refuse};
use super::store::{Decision, View, Write};
use super::token::{self, Binding};

/// What is about to run.
pub(crate) struct Hop<'a> {
    pub token: &'a str,
    pub artifact: &'a str,
    pub config: &'a str,
    pub generation: i64,
}

/// Checks `hop` and spends its token; returns the lease id.
pub(crate) fn check(view: &mut dyn View, key: &[u8], hop: &Hop<'_>) -> Result<(i64, Decision), Refusal> {
    let Some((id, nonce, mac)) = token::parse(hop.token) else { return refuse(RefusalCode::BadToken, "not a lease token") };
    let Some(lease) = view.lease(id)? else {
        return refuse(RefusalCode::UnknownToken, format!("no lease {id}"));
    };
    let Some(epoch) = view.epoch(&lease.epoch)? else {
        return Err(StorageError::new(format!("lease {id} is on epoch {}, which is not stored", lease.epoch)).into());
    };
    let (artifact, config, generation) = (&epoch.artifact, &epoch.config, lease.generation);
    let binding = Binding { id, nonce: &lease.nonce, epoch: &lease.epoch, artifact, config, generation };
    let hop_facts = HopFacts {
        token_verifies: lease.nonce == nonce && token::mac(key, &binding) == mac,
        used: lease.used,
        generation_matches: hop.generation == generation,
        artifact_matches: hop.artifact == artifact,
        config_matches: hop.config == config,
        state: lease.state,
    };
    if let Err(r) = decision::final_hop(&hop_facts) {
        let detail = match r {
            FenceRefusal::BadToken => format!("the token of lease {id} does not verify"),
            FenceRefusal::Replay => format!("the token of lease {id} was already used"),
            FenceRefusal::StaleGeneration => format!("generation {}, the lease holds {generation}", hop.generation),
            FenceRefusal::ArtifactMismatch => format!("{} is not {}'s artifact {artifact}", hop.artifact, lease.epoch),
            FenceRefusal::ConfigMismatch => format!("{} is not {}'s configuration {config}", hop.config, lease.epoch),
            FenceRefusal::NotAdmitted(state) => format!("lease {id} is {state}"),
        };
        return refuse(r.code(), detail);
    }
    Ok((
        id,
        Decision {
            writes: vec![Write::LeaseUsed(id)],
            audit: json!({"op": "fence", "lease": id, "generation": hop.generation, "artifact": hop.artifact, "config": hop.config}),
        },
    ))
}
