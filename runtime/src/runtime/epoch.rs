//! Epochs and their lifecycle: registering an epoch (ADVERTISED) and moving
//! it along [`State`]'s transition table. Retiring (DRAINING -> STALE) waits
//! for every open lease; the store stamps the drain and the retirement with
//! their audit sequence numbers, to order them against admissions.

use serde_json::json;

use super::decision::{self, MoveRefusal};
use super::refusal::{Refusal, RefusalCode, refuse};
use super::state::State;
use super::store::{Decision, EpochRecord, View, Write};

/// Registers an epoch (ADVERTISED); registering it again changes nothing but the audit log.
pub(crate) fn register(view: &mut dyn View, epoch: &str, tool: &str, artifact: &str, config: &str, summary: &str) -> Result<Decision, Refusal> {
    let mut writes = Vec::new();
    if view.epoch(epoch)?.is_none() {
        writes.push(Write::NewEpoch(EpochRecord {
            id: epoch.to_owned(),
            tool: tool.to_owned(),
            artifact: artifact.to_owned(),
            config: config.to_owned(),
            summary: summary.to_owned(),
            state: State::Advertised,
            generation: 1,
        }));
    }
    Ok(Decision { writes, audit: json!({"op": "register_epoch", "epoch": epoch, "artifact": artifact, "config": config}) })
}

/// Moves an epoch from its state to `to`, if the table allows it; STALE only
/// once no admitted or uncertain lease remains on it.
pub(crate) fn transition(view: &mut dyn View, epoch: &str, to: State) -> Result<Decision, Refusal> {
    let Some(record) = view.epoch(epoch)? else { return refuse(RefusalCode::UnknownEpoch, format!("no epoch {epoch}")) };
    let from = record.state;
    if let Err(r) = decision::epoch_move(from, to, || view.open_leases(epoch).map(|n| n as i64))? {
        let detail = match r {
            MoveRefusal::BadTransition => format!("{epoch} is {}, cannot become {}", from.as_str(), to.as_str()),
            MoveRefusal::LeasesOutstanding(open) => format!("{open} admitted or uncertain leases remain on {epoch}"),
        };
        return refuse(r.code(), detail);
    }
    Ok(Decision {
        writes: vec![Write::EpochState { epoch: epoch.to_owned(), to }],
        audit: json!({"op": "transition", "epoch": epoch, "from": from.as_str(), "to": to.as_str()}),
    })
}
