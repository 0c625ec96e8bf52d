//! Epochs and their lifecycle: registering an epoch (ADVERTISED) and moving
//! it along [`State`]'s transition table. Retiring (DRAINING -> STALE) waits
//! for every open lease; the store stamps the drain and the retirement with
//! their audit sequence numbers, to order them against admissions.

use serde_json::json;

use super::decision::{self, MoveRefusal};
use super::refusal::{Refusal, refuse};
use super::state::State;
use super::store::{EpochRecord, Recorded, View, Write};
use fcd_model::refusal::RefusalCode;

/// What an epoch is registered with.
pub(crate) struct Registered<'a> {
    pub tool: &'a str,
    pub artifact: &'a str,
    pub config: &'a str,
    pub summary: &'a str,
    /// The digest of the server's own configuration files, if any are bound.
    pub server_config: Option<&'a str>,
}

/// Registers an epoch (ADVERTISED); registering it again changes nothing but
/// the audit log: what it was first registered with stays bound (a restart
/// with a changed configuration file never re-binds it).
pub(crate) fn register(view: &mut dyn View, epoch: &str, r: &Registered<'_>) -> Result<Recorded, Refusal> {
    let mut writes = Vec::new();
    let Registered { tool, artifact, config, summary, server_config } = *r;
    if view.epoch(epoch)?.is_none() {
        writes.push(Write::NewEpoch(EpochRecord {
            id: epoch.to_owned(),
            tool: tool.to_owned(),
            artifact: artifact.to_owned(),
            config: config.to_owned(),
            summary: summary.to_owned(),
            server_config: server_config.map(str::to_owned),
            state: State::Advertised,
            generation: 1,
        }));
    }
    let mut audit = json!({"op": "register_epoch", "epoch": epoch, "artifact": artifact, "config": config});
    if let Some(s) = server_config {
        audit["server_config"] = json!(s);
    }
    Ok(Recorded { writes, audit })
}

/// Moves an epoch from its state to `to`, if the table allows it; STALE only
/// once no admitted or uncertain lease remains on it, and only while the
/// store can vouch that it lost no lease ([`View::lost_calls`]).
pub(crate) fn transition(view: &mut dyn View, epoch: &str, to: State) -> Result<Recorded, Refusal> {
    let Some(record) = view.epoch(epoch)? else { return refuse(RefusalCode::UnknownEpoch, format!("no epoch {epoch}")) };
    let from = record.state;
    if to == State::Stale
        && let Some(why) = view.lost_calls()?
    {
        return refuse(RefusalCode::CallsUnaccounted, format!("{epoch} cannot retire: {why}"));
    }
    if let Err(r) = decision::epoch_move(from, to, || view.open_leases(epoch).map(|n| n as i64))? {
        let detail = match r {
            MoveRefusal::BadTransition => format!("{epoch} is {}, cannot become {}", from.as_str(), to.as_str()),
            MoveRefusal::LeasesOutstanding(open) => format!("{open} admitted or uncertain leases remain on {epoch}"),
        };
        return refuse(r.code(), detail);
    }
    Ok(Recorded {
        writes: vec![Write::EpochState { epoch: epoch.to_owned(), to }],
        audit: json!({"op": "transition", "epoch": epoch, "from": from.as_str(), "to": to.as_str()}),
    })
}
