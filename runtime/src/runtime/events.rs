//! The audit log read back as typed events, so that a recorded history can
//! be checked against the lifecycle's safety properties (`fcd audit check`)
//! whatever store wrote it. An entry that does not read as a known event is
//! kept as [`AuditEvent::Unreadable`] with the reason, never dropped: a
//! checker must see it and fail closed.

use serde::Deserialize;

use super::state::{LeaseState, State};

/// One audit entry: its sequence number and what it records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditRecord {
    pub seq: i64,
    pub event: AuditEvent,
}

/// What one audit entry records. Fields added to the log later are
/// `Option`s: an older history lacks them, and a checker that needs one
/// says so instead of assuming a value.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(tag = "op")]
pub enum AuditEvent {
    #[serde(rename = "register_epoch")]
    RegisterEpoch { epoch: String, artifact: Option<String>, config: Option<String>, server_config: Option<String> },
    #[serde(rename = "transition")]
    Transition { epoch: String, from: State, to: State },
    #[serde(rename = "add_evidence")]
    AddEvidence { evidence: Option<i64>, source: String, target: String, valid_from: Option<i64>, valid_until: Option<i64> },
    #[serde(rename = "form")]
    Form { formation: Option<i64>, source: String, successor: Option<String>, evidence: Option<i64>, now: Option<i64>, expires_at: Option<i64> },
    #[serde(rename = "admit")]
    Admit { formation: i64, epoch: String, lease: Option<i64>, generation: Option<i64>, now: Option<i64> },
    /// `completed` or `uncertain`: a lease moved by its gateway's report.
    #[serde(rename = "completed")]
    Completed { lease: i64 },
    #[serde(rename = "uncertain")]
    Uncertain { lease: i64 },
    #[serde(rename = "resolve")]
    Resolve { lease: i64, outcome: String },
    /// `evidence:ID` or `formation:ID`.
    #[serde(rename = "revoke")]
    Revoke { handle: String },
    #[serde(rename = "fence")]
    Fence { lease: i64, generation: Option<i64>, artifact: Option<String>, config: Option<String>, server_config: Option<String>, now: Option<i64> },
    /// Several decisions committed as one, in order (formation, admission
    /// and the final hop of a gateway's call), all at this entry's sequence number.
    #[serde(rename = "atomic")]
    Atomic { steps: Vec<AuditEvent> },
    /// An operator accounted for the calls a host crash may have lost (process-crash durability).
    #[serde(rename = "acknowledge_lost_calls")]
    AcknowledgeLostCalls { writers: Vec<String> },
    /// An entry that is not a known event, with why.
    #[serde(skip)]
    Unreadable { entry: String, reason: String },
}

impl AuditEvent {
    /// Reads one entry's JSON text.
    pub fn parse(entry: &str) -> AuditEvent {
        serde_json::from_str(entry).unwrap_or_else(|e| AuditEvent::Unreadable { entry: entry.to_owned(), reason: e.to_string() })
    }

    /// The lease state this event moves a lease to, if it is a lease move.
    pub fn lease_move(&self) -> Option<(i64, LeaseState)> {
        match self {
            AuditEvent::Completed { lease } => Some((*lease, LeaseState::Completed)),
            AuditEvent::Uncertain { lease } => Some((*lease, LeaseState::Uncertain)),
            AuditEvent::Resolve { lease, .. } => Some((*lease, LeaseState::Resolved)),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_read_as_events_and_strangers_are_kept() {
        assert_eq!(
            AuditEvent::parse(r#"{"op":"transition","epoch":"e0","from":"DRAINING","to":"STALE"}"#),
            AuditEvent::Transition { epoch: "e0".into(), from: State::Draining, to: State::Stale }
        );
        assert_eq!(AuditEvent::parse(r#"{"op":"uncertain","lease":3}"#).lease_move(), Some((3, LeaseState::Uncertain)));
        let AuditEvent::Unreadable { reason, .. } = AuditEvent::parse(r#"{"op":"transition","epoch":"e0","from":"RETIRED","to":"STALE"}"#) else {
            panic!("an unknown state must not read")
        };
        assert!(reason.contains("RETIRED"), "{reason}");
        assert!(matches!(AuditEvent::parse(r#"{"op":"teleport"}"#), AuditEvent::Unreadable { .. }));
    }
}
