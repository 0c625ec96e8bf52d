//! The two lifecycles, as enums with one explicit transition table each:
//! an epoch's ([`State`]) and a lease's ([`LeaseState`]). The database stores
//! their names; a name the runtime does not know is a storage error, never a
//! state guessed in its place.

use serde::{Deserialize, Serialize};

use super::refusal::StorageError;

/// Lifecycle of an epoch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum State {
    #[serde(rename = "ADVERTISED")]
    Advertised,
    #[serde(rename = "HIDDEN_BUT_VALID")]
    HiddenButValid,
    #[serde(rename = "DRAINING")]
    Draining,
    #[serde(rename = "STALE")]
    Stale,
}

/// Every lifecycle move an epoch may make; nothing else is allowed.
/// DRAINING reaches STALE only once no open lease remains (checked by the move).
pub const EPOCH_TRANSITIONS: &[(State, State)] = &[
    (State::Advertised, State::HiddenButValid),
    (State::HiddenButValid, State::Advertised),
    (State::Advertised, State::Draining),
    (State::HiddenButValid, State::Draining),
    (State::Draining, State::Stale),
];

impl State {
    const ALL: [State; 4] = [State::Advertised, State::HiddenButValid, State::Draining, State::Stale];

    pub fn as_str(self) -> &'static str {
        match self {
            State::Advertised => "ADVERTISED",
            State::HiddenButValid => "HIDDEN_BUT_VALID",
            State::Draining => "DRAINING",
            State::Stale => "STALE",
        }
    }

    /// Reads a stored state name; an unknown one is a storage error naming it.
    pub(crate) fn parse(s: &str) -> Result<State, StorageError> {
        State::ALL.into_iter().find(|st| st.as_str() == s).ok_or_else(|| StorageError::new(format!("unknown epoch state `{s}` in the store")))
    }

    /// Whether new leases may start on an epoch in this state.
    pub fn eligible(self) -> bool {
        matches!(self, State::Advertised | State::HiddenButValid)
    }

    /// Whether the table lets an epoch move from `from` to `to`.
    pub fn allowed(from: State, to: State) -> bool {
        EPOCH_TRANSITIONS.contains(&(from, to))
    }
}

/// Lifecycle of a lease.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LeaseState {
    /// Admitted: may pass the fence once, then completes or becomes uncertain.
    Admitted,
    Completed,
    /// Whether the handler ran is unknown: the epoch cannot retire until a signed resolution.
    Uncertain,
    Resolved,
}

/// Every move a lease may make; nothing else is allowed.
pub const LEASE_TRANSITIONS: &[(LeaseState, LeaseState)] =
    &[(LeaseState::Admitted, LeaseState::Completed), (LeaseState::Admitted, LeaseState::Uncertain), (LeaseState::Uncertain, LeaseState::Resolved)];

impl LeaseState {
    const ALL: [LeaseState; 4] = [LeaseState::Admitted, LeaseState::Completed, LeaseState::Uncertain, LeaseState::Resolved];

    pub fn as_str(self) -> &'static str {
        match self {
            LeaseState::Admitted => "admitted",
            LeaseState::Completed => "completed",
            LeaseState::Uncertain => "uncertain",
            LeaseState::Resolved => "resolved",
        }
    }

    /// Reads a stored lease state; an unknown one is a storage error naming it.
    pub(crate) fn parse(s: &str) -> Result<LeaseState, StorageError> {
        LeaseState::ALL.into_iter().find(|st| st.as_str() == s).ok_or_else(|| StorageError::new(format!("unknown lease state `{s}` in the store")))
    }

    /// Whether the lease still holds its epoch open (the epoch cannot become STALE).
    pub fn open(self) -> bool {
        matches!(self, LeaseState::Admitted | LeaseState::Uncertain)
    }

    /// Whether the table lets a lease move from `from` to `to`.
    pub fn allowed(from: LeaseState, to: LeaseState) -> bool {
        LEASE_TRANSITIONS.contains(&(from, to))
    }
}

impl std::fmt::Display for LeaseState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq<&str> for LeaseState {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_read_back_and_unknown_names_are_errors() {
        for s in State::ALL {
            assert_eq!(State::parse(s.as_str()), Ok(s));
        }
        for s in LeaseState::ALL {
            assert_eq!(LeaseState::parse(s.as_str()), Ok(s));
        }
        let e = State::parse("RETIRED").unwrap_err();
        assert!(e.detail.contains("`RETIRED`"), "{e}");
        assert!(LeaseState::parse("ADMITTED").is_err());
    }

    #[test]
    fn the_tables_are_the_lifecycles() {
        assert!(State::allowed(State::Draining, State::Stale));
        assert!(!State::allowed(State::Advertised, State::Stale));
        assert!(!State::allowed(State::Stale, State::Advertised));
        assert!(!State::allowed(State::Draining, State::Advertised));
        assert!(LeaseState::allowed(LeaseState::Uncertain, LeaseState::Resolved));
        assert!(!LeaseState::allowed(LeaseState::Completed, LeaseState::Uncertain));
        assert!(!LeaseState::allowed(LeaseState::Admitted, LeaseState::Resolved));
    }
}
