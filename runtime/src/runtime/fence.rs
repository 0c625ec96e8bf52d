//! The final-hop fence, run just before the handler: the token is the
//! lease's own and unused, its formation (and the evidence a successor lease
//! fell back on) is still unrevoked and unexpired at the fence's `now`, so
//! revocation and expiry cancel before the effect; the hop is for this
//! generation, and the artifact and configuration about to run are the
//! epoch's registered ones. Accepted once (invariant 5).

use serde_json::json;

use super::decision::{self, FenceRefusal, HopFacts};
use super::refusal::{Refusal, StorageError, refuse};
use super::store::{Recorded, View, Write};
use super::token::{self, TokenBinding};
use fcd_model::refusal::RefusalCode;

/// What is about to run.
pub(crate) struct Hop<'a> {
    pub token: &'a str,
    pub artifact: &'a str,
    pub config: &'a str,
    /// The digest of the server's own configuration files as measured, if it reads any.
    pub server_config: Option<&'a str>,
    pub generation: i64,
}

/// Checks `hop` at `now` and spends its token; returns the lease id.
pub(crate) fn check(view: &mut dyn View, key: &[u8], hop: &Hop<'_>, now: u64) -> Result<(i64, Recorded), Refusal> {
    let Some((id, nonce, mac)) = token::parse(hop.token) else { return refuse(RefusalCode::BadToken, "not a lease token") };
    let Some(lease) = view.lease(id)? else {
        return refuse(RefusalCode::UnknownToken, format!("no lease {id}"));
    };
    let Some(epoch) = view.epoch(&lease.epoch)? else {
        return Err(StorageError::new(format!("lease {id} is on epoch {}, which is not stored", lease.epoch)).into());
    };
    let Some(formation) = view.formation(lease.formation)? else {
        return Err(StorageError::new(format!("lease {id} is of formation {}, which is not stored", lease.formation)).into());
    };
    // A lease on the captured successor (never on the source) fell back on the captured evidence: re-read it.
    let on_successor = lease.epoch != formation.source && formation.successor.as_deref() == Some(lease.epoch.as_str());
    let evidence = match formation.successor_evidence.filter(|_| on_successor) {
        None => None,
        Some(ev) => {
            let Some(ev) = view.evidence(ev)? else {
                return Err(StorageError::new(format!("formation {} captured evidence {ev}, which is not stored", formation.id)).into());
            };
            Some((ev.revoked, ev.valid_until))
        }
    };
    let (artifact, config, generation) = (&epoch.artifact, &epoch.config, lease.generation);
    let binding = TokenBinding { id, nonce: &lease.nonce, epoch: &lease.epoch, artifact, config, generation };
    let hop_facts = HopFacts {
        token_verifies: lease.nonce == nonce && token::verifies(key, &binding, &mac)?,
        used: lease.used,
        generation_matches: hop.generation == generation,
        artifact_matches: hop.artifact == artifact,
        // Both the registry's configuration and the bytes of the server's own files, as bound at registration.
        config_matches: hop.config == config && hop.server_config == epoch.server_config.as_deref(),
        state: lease.state,
        formation_revoked: formation.revoked,
        formation_expires_at: formation.expires_at,
        evidence,
    };
    if let Err(r) = decision::final_hop(&hop_facts, now as i64) {
        let detail = match r {
            FenceRefusal::BadToken => format!("the token of lease {id} does not verify"),
            FenceRefusal::Replay => format!("the token of lease {id} was already used"),
            FenceRefusal::Revoked => format!("formation {} of lease {id} is revoked", formation.id),
            FenceRefusal::Expired => format!("formation {} of lease {id} expired at {}", formation.id, formation.expires_at),
            FenceRefusal::EvidenceRevoked => format!("the evidence lease {id} fell back on is revoked"),
            FenceRefusal::EvidenceExpired => format!("the evidence lease {id} fell back on expired at {}", evidence.map_or(0, |e| e.1)),
            FenceRefusal::StaleGeneration => format!("generation {}, the lease holds {generation}", hop.generation),
            FenceRefusal::ArtifactMismatch => format!("{} is not {}'s artifact {artifact}", hop.artifact, lease.epoch),
            FenceRefusal::ConfigMismatch if hop.config != config => format!("{} is not {}'s configuration {config}", hop.config, lease.epoch),
            FenceRefusal::ConfigMismatch => format!(
                "the server's configuration files measure {}, {} was registered with {}",
                hop.server_config.unwrap_or("nothing"),
                lease.epoch,
                epoch.server_config.as_deref().unwrap_or("none")
            ),
            FenceRefusal::NotAdmitted(state) => format!("lease {id} is {state}"),
        };
        return refuse(r.code(), detail);
    }
    let mut audit = json!({"op": "fence", "lease": id, "generation": hop.generation, "artifact": hop.artifact, "config": hop.config, "now": now});
    if let Some(s) = hop.server_config {
        audit["server_config"] = json!(s);
    }
    Ok((id, Recorded { writes: vec![Write::LeaseUsed(id)], audit }))
}
