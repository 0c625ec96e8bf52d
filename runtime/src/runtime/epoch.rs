//! Epochs and their lifecycle: registering an epoch (ADVERTISED) and moving
//! it along [`State`]'s transition table. Retiring (DRAINING -> STALE) waits
//! for every open lease, and the audit sequence of the drain and of the
//! retirement is kept to order them against admissions.

use rusqlite::{Connection, OptionalExtension, params};

use super::audit;
use super::decision::{self, MoveRefusal};
use super::refusal::{Refusal, RefusalCode, StorageError, refuse};
use super::state::{LeaseState, State};

/// Registers an epoch (ADVERTISED); registering it again is a no-op.
pub(crate) fn register(tx: &Connection, epoch: &str, tool: &str, artifact: &str, config: &str, summary: &str) -> Result<(), StorageError> {
    tx.execute(
        "INSERT OR IGNORE INTO epochs (epoch_id, tool, artifact_digest, config_digest, summary_digest, state, revision) VALUES (?1, ?2, ?3, ?4, ?5, ?6, 1)",
        params![epoch, tool, artifact, config, summary, State::Advertised.as_str()],
    )?;
    audit::append(tx, &serde_json::json!({"op": "register_epoch", "epoch": epoch, "artifact": artifact, "config": config}))?;
    Ok(())
}

/// Moves an epoch from its state to `to`, if the table allows it; STALE only
/// once no admitted or uncertain lease remains on it.
pub(crate) fn transition(tx: &Connection, epoch: &str, to: State) -> Result<(), Refusal> {
    let Some(from) = state_of(tx, epoch)? else { return refuse(RefusalCode::UnknownEpoch, format!("no epoch {epoch}")) };
    if let Err(r) = decision::epoch_move(from, to, || open_leases(tx, epoch))? {
        let detail = match r {
            MoveRefusal::BadTransition => format!("{epoch} is {}, cannot become {}", from.as_str(), to.as_str()),
            MoveRefusal::LeasesOutstanding(open) => format!("{open} admitted or uncertain leases remain on {epoch}"),
        };
        return refuse(r.code(), detail);
    }
    let seq = audit::append(tx, &serde_json::json!({"op": "transition", "epoch": epoch, "from": from.as_str(), "to": to.as_str()}))?;
    let sql = match to {
        State::Draining => "UPDATE epochs SET state = ?2, drained_seq = ?3 WHERE epoch_id = ?1",
        State::Stale => "UPDATE epochs SET state = ?2, stale_seq = ?3 WHERE epoch_id = ?1",
        // Hiding and advertising again record no sequence; ?3 is bound and ignored.
        State::Advertised | State::HiddenButValid => "UPDATE epochs SET state = ?2 WHERE epoch_id = ?1 AND ?3 IS NOT NULL",
    };
    tx.execute(sql, params![epoch, to.as_str(), seq])?;
    Ok(())
}

/// The number of leases that hold `epoch` open.
fn open_leases(tx: &Connection, epoch: &str) -> Result<i64, StorageError> {
    let mut stmt = tx.prepare("SELECT state, COUNT(*) FROM leases WHERE epoch = ?1 GROUP BY state")?;
    let counts: Vec<(String, i64)> = stmt.query_map(params![epoch], |r| Ok((r.get(0)?, r.get(1)?)))?.collect::<Result<_, _>>()?;
    let mut open = 0;
    for (state, n) in counts {
        if LeaseState::parse(&state)?.open() {
            open += n;
        }
    }
    Ok(open)
}

/// The state of an epoch, `None` if it is not registered.
pub(crate) fn state_of(conn: &Connection, epoch: &str) -> Result<Option<State>, StorageError> {
    let s: Option<String> = conn.query_row("SELECT state FROM epochs WHERE epoch_id = ?1", params![epoch], |r| r.get(0)).optional()?;
    s.map(|s| State::parse(&s).map_err(|e| StorageError::new(format!("epoch {epoch}: {}", e.detail)))).transpose()
}

/// The artifact and configuration digests registered for an epoch.
pub(crate) fn digests(conn: &Connection, epoch: &str) -> Result<Option<(String, String)>, StorageError> {
    Ok(conn.query_row("SELECT artifact_digest, config_digest FROM epochs WHERE epoch_id = ?1", params![epoch], |r| Ok((r.get(0)?, r.get(1)?))).optional()?)
}

/// Audit sequence numbers at which an epoch began draining and became stale.
pub(crate) fn lifecycle_seqs(conn: &Connection, epoch: &str) -> Result<(Option<i64>, Option<i64>), StorageError> {
    Ok(conn.query_row("SELECT drained_seq, stale_seq FROM epochs WHERE epoch_id = ?1", params![epoch], |r| Ok((r.get(0)?, r.get(1)?)))?)
}
