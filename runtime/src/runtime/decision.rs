//! The runtime's decisions as pure functions over facts already read from the
//! store: on which epoch a formation may start a lease, whether evidence may
//! be captured at formation, whether an epoch may move, whether a final hop
//! passes. The store modules read the facts and call these functions; the
//! lifecycle model (crate `fcd-lifecycle`) calls the same ones, so the model
//! that is checked exhaustively and the code that runs cannot drift apart
//! silently. Nothing here touches storage, the clock or randomness.

use super::state::{LeaseState, State};
use fcd_model::refusal::RefusalCode;

/// Where admission starts a lease: the formation's exact source, or its
/// captured successor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    Source,
    Successor,
}

/// What admission knows of a formation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FormationFacts {
    pub revoked: bool,
    /// The formation is expired once `now` is past this.
    pub expires_at: i64,
    /// Whether a successor was captured at formation.
    pub captured: bool,
    /// The formation's latest lease (the one admission last started), if any.
    pub latest: Option<PriorLease>,
}

/// What admission knows of a formation's latest lease. Admission refuses
/// while it is open or once it passed the fence, so every earlier lease of
/// the formation was settled unused: the latest is the only one to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PriorLease {
    pub state: LeaseState,
    /// Its token passed the fence: the handler ran.
    pub used: bool,
}

impl PriorLease {
    /// Whether this lease keeps its formation from being admitted again: it
    /// is open (admitted or uncertain), passed the fence, or completed. A
    /// retry is possible only after a lease that never passed the fence was
    /// settled (admitted -> uncertain -> resolved), so a formed call runs at
    /// most once.
    pub fn in_flight(self) -> bool {
        self.used || self.state != LeaseState::Resolved
    }
}

/// What admission knows of the captured successor; read only once the source is STALE.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SuccessorFacts {
    pub evidence_revoked: bool,
    /// The captured evidence is expired once `now` is past this.
    pub evidence_valid_until: i64,
    /// The successor epoch's state, `None` if it is not registered.
    pub state: Option<State>,
}

/// Why admission refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AdmissionRefusal {
    Revoked,
    Expired,
    /// The formation's latest lease is open, completed or passed the fence.
    InFlight(LeaseState),
    SourceDraining,
    /// The source is STALE and the formation captured no successor.
    NotCaptured,
    EvidenceRevoked,
    EvidenceExpired,
    SuccessorIneligible(Option<State>),
}

impl AdmissionRefusal {
    pub fn code(self) -> RefusalCode {
        match self {
            AdmissionRefusal::Revoked | AdmissionRefusal::EvidenceRevoked => RefusalCode::Revoked,
            AdmissionRefusal::Expired | AdmissionRefusal::EvidenceExpired => RefusalCode::Expired,
            AdmissionRefusal::InFlight(_) => RefusalCode::FormationInFlight,
            AdmissionRefusal::SourceDraining => RefusalCode::SourceDraining,
            AdmissionRefusal::NotCaptured => RefusalCode::NotCaptured,
            AdmissionRefusal::SuccessorIneligible(_) => RefusalCode::SuccessorIneligible,
        }
    }
}

/// The epoch a formation may start a lease on at `now`, if it is unrevoked,
/// unexpired and has no lease in flight ([`PriorLease::in_flight`]): its
/// source while the source is ADVERTISED or HIDDEN_BUT_VALID; its captured successor only once
/// the source is STALE, while the evidence is unrevoked and unexpired and the
/// successor eligible. `successor` reads the successor's facts; it is called
/// only when the source is STALE and a successor was captured.
pub fn admission<E>(
    formation: &FormationFacts,
    now: i64,
    source: State,
    successor: impl FnOnce() -> Result<SuccessorFacts, E>,
) -> Result<Result<Target, AdmissionRefusal>, E> {
    if formation.revoked {
        return Ok(Err(AdmissionRefusal::Revoked));
    }
    if now > formation.expires_at {
        return Ok(Err(AdmissionRefusal::Expired));
    }
    if let Some(prior) = formation.latest
        && prior.in_flight()
    {
        return Ok(Err(AdmissionRefusal::InFlight(prior.state)));
    }
    match source {
        State::Advertised | State::HiddenButValid => return Ok(Ok(Target::Source)),
        State::Draining => return Ok(Err(AdmissionRefusal::SourceDraining)),
        State::Stale => {}
    }
    if !formation.captured {
        return Ok(Err(AdmissionRefusal::NotCaptured));
    }
    let s = successor()?;
    Ok(if s.evidence_revoked {
        Err(AdmissionRefusal::EvidenceRevoked)
    } else if now > s.evidence_valid_until {
        Err(AdmissionRefusal::EvidenceExpired)
    } else if s.state.is_some_and(State::eligible) {
        Ok(Target::Successor)
    } else {
        Err(AdmissionRefusal::SuccessorIneligible(s.state))
    })
}

/// What formation knows of the evidence it was asked to capture.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EvidenceFacts {
    pub revoked: bool,
    pub valid_from: i64,
    pub valid_until: i64,
    /// Same tool and source as the call, and (for a certificate) the same arguments.
    pub for_this_call: bool,
}

/// Why evidence could not be captured at formation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CaptureRefusal {
    Revoked,
    NotValidNow,
    NotForThisCall,
}

impl CaptureRefusal {
    pub fn code(self) -> RefusalCode {
        match self {
            CaptureRefusal::Revoked => RefusalCode::Revoked,
            CaptureRefusal::NotValidNow => RefusalCode::Expired,
            CaptureRefusal::NotForThisCall => RefusalCode::NotCaptured,
        }
    }
}

/// Whether a formation may capture this evidence at `now`: it must exist
/// (checked by the caller), be unrevoked, valid now and for this call.
pub fn capture(evidence: &EvidenceFacts, now: i64) -> Result<(), CaptureRefusal> {
    if evidence.revoked {
        Err(CaptureRefusal::Revoked)
    } else if now < evidence.valid_from || now > evidence.valid_until {
        Err(CaptureRefusal::NotValidNow)
    } else if !evidence.for_this_call {
        Err(CaptureRefusal::NotForThisCall)
    } else {
        Ok(())
    }
}

/// Whether a call may be formed on a source in this state.
pub fn formable(source: State) -> bool {
    source.eligible()
}

/// Why an epoch may not move.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MoveRefusal {
    /// The transition table has no such move.
    BadTransition,
    /// DRAINING -> STALE with this many admitted or uncertain leases left.
    LeasesOutstanding(i64),
}

impl MoveRefusal {
    pub fn code(self) -> RefusalCode {
        match self {
            MoveRefusal::BadTransition => RefusalCode::BadTransition,
            MoveRefusal::LeasesOutstanding(_) => RefusalCode::LeasesOutstanding,
        }
    }
}

/// Whether an epoch may move `from` -> `to`: the table allows it, and STALE
/// only once no admitted or uncertain lease remains. `open_leases` counts
/// them; it is called only for a move to STALE.
pub fn epoch_move<E>(from: State, to: State, open_leases: impl FnOnce() -> Result<i64, E>) -> Result<Result<(), MoveRefusal>, E> {
    if !State::allowed(from, to) {
        return Ok(Err(MoveRefusal::BadTransition));
    }
    if to == State::Stale {
        let open = open_leases()?;
        if open > 0 {
            return Ok(Err(MoveRefusal::LeasesOutstanding(open)));
        }
    }
    Ok(Ok(()))
}

/// Whether a lease may move `from` -> `to` (the lease table).
pub fn lease_move(from: LeaseState, to: LeaseState) -> bool {
    LeaseState::allowed(from, to)
}

/// What the fence knows of a final hop and of the lease its token names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HopFacts {
    /// The token's nonce and MAC are the lease's own.
    pub token_verifies: bool,
    /// The token already passed the fence once.
    pub used: bool,
    pub generation_matches: bool,
    pub artifact_matches: bool,
    pub config_matches: bool,
    pub state: LeaseState,
    /// The lease's formation, re-checked at the fence's `now`.
    pub formation_revoked: bool,
    pub formation_expires_at: i64,
    /// For a lease on the captured successor: the captured evidence
    /// (revoked, valid until), re-checked likewise; `None` on the source.
    pub evidence: Option<(bool, i64)>,
}

/// Why the fence refused a final hop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FenceRefusal {
    BadToken,
    Replay,
    /// The lease's formation was revoked (or, for `EvidenceRevoked`, the
    /// evidence its successor lease fell back on) after admission.
    Revoked,
    Expired,
    EvidenceRevoked,
    EvidenceExpired,
    StaleGeneration,
    ArtifactMismatch,
    ConfigMismatch,
    NotAdmitted(LeaseState),
}

impl FenceRefusal {
    pub fn code(self) -> RefusalCode {
        match self {
            FenceRefusal::BadToken => RefusalCode::BadToken,
            FenceRefusal::Replay => RefusalCode::Replay,
            FenceRefusal::Revoked | FenceRefusal::EvidenceRevoked => RefusalCode::Revoked,
            FenceRefusal::Expired | FenceRefusal::EvidenceExpired => RefusalCode::Expired,
            FenceRefusal::StaleGeneration => RefusalCode::StaleGeneration,
            FenceRefusal::ArtifactMismatch => RefusalCode::FinalHopArtifactMismatch,
            FenceRefusal::ConfigMismatch => RefusalCode::FinalHopConfigMismatch,
            FenceRefusal::NotAdmitted(_) => RefusalCode::LeaseNotAdmitted,
        }
    }
}

/// The final-hop check at `now`: the token is the lease's own and unused,
/// its formation (and, on the successor, the captured evidence) is still
/// unrevoked and unexpired, so revocation and expiry cancel before the
/// effect and not only before admission; the hop is for this generation,
/// the artifact and configuration about to run are the epoch's registered
/// ones, and the lease is still admitted. Checked in this order.
pub fn final_hop(hop: &HopFacts, now: i64) -> Result<(), FenceRefusal> {
    if !hop.token_verifies {
        Err(FenceRefusal::BadToken)
    } else if hop.used {
        Err(FenceRefusal::Replay)
    } else if hop.formation_revoked {
        Err(FenceRefusal::Revoked)
    } else if now > hop.formation_expires_at {
        Err(FenceRefusal::Expired)
    } else if hop.evidence.is_some_and(|(revoked, _)| revoked) {
        Err(FenceRefusal::EvidenceRevoked)
    } else if hop.evidence.is_some_and(|(_, until)| now > until) {
        Err(FenceRefusal::EvidenceExpired)
    } else if !hop.generation_matches {
        Err(FenceRefusal::StaleGeneration)
    } else if !hop.artifact_matches {
        Err(FenceRefusal::ArtifactMismatch)
    } else if !hop.config_matches {
        Err(FenceRefusal::ConfigMismatch)
    } else if hop.state != LeaseState::Admitted {
        Err(FenceRefusal::NotAdmitted(hop.state))
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn live() -> FormationFacts {
        FormationFacts { revoked: false, expires_at: 100, captured: true, latest: None }
    }

    fn no_successor() -> Result<SuccessorFacts, ()> {
        panic!("the successor is read only once the source is STALE")
    }

    #[test]
    fn admission_reads_the_successor_only_after_stale() {
        assert_eq!(admission(&live(), 50, State::Advertised, no_successor), Ok(Ok(Target::Source)));
        assert_eq!(admission(&live(), 50, State::Draining, no_successor), Ok(Err(AdmissionRefusal::SourceDraining)));
        assert_eq!(admission(&live(), 101, State::Advertised, no_successor), Ok(Err(AdmissionRefusal::Expired)));
        let ok = || Ok::<_, ()>(SuccessorFacts { evidence_revoked: false, evidence_valid_until: 60, state: Some(State::HiddenButValid) });
        assert_eq!(admission(&live(), 50, State::Stale, ok), Ok(Ok(Target::Successor)));
        assert_eq!(admission(&live(), 61, State::Stale, ok), Ok(Err(AdmissionRefusal::EvidenceExpired)));
        let none = FormationFacts { captured: false, ..live() };
        assert_eq!(admission(&none, 50, State::Stale, no_successor), Ok(Err(AdmissionRefusal::NotCaptured)));
    }

    #[test]
    fn a_formation_is_admitted_again_only_after_an_unused_lease_was_resolved() {
        let after = |state, used| FormationFacts { latest: Some(PriorLease { state, used }), ..live() };
        for state in [LeaseState::Admitted, LeaseState::Uncertain, LeaseState::Completed] {
            assert_eq!(admission(&after(state, false), 50, State::Advertised, no_successor), Ok(Err(AdmissionRefusal::InFlight(state))));
        }
        let ran = after(LeaseState::Resolved, true);
        assert_eq!(admission(&ran, 50, State::Advertised, no_successor), Ok(Err(AdmissionRefusal::InFlight(LeaseState::Resolved))));
        assert_eq!(admission(&after(LeaseState::Resolved, false), 50, State::Advertised, no_successor), Ok(Ok(Target::Source)));
        // Revocation and expiry are reported first: they end the formation whatever its leases do.
        let revoked = FormationFacts { revoked: true, ..after(LeaseState::Admitted, false) };
        assert_eq!(admission(&revoked, 50, State::Advertised, no_successor), Ok(Err(AdmissionRefusal::Revoked)));
        assert_eq!(AdmissionRefusal::InFlight(LeaseState::Admitted).code(), RefusalCode::FormationInFlight);
    }

    #[test]
    fn the_fence_rechecks_the_formation_and_the_captured_evidence_at_now() {
        let hop = HopFacts {
            token_verifies: true,
            used: false,
            generation_matches: true,
            artifact_matches: true,
            config_matches: true,
            state: LeaseState::Admitted,
            formation_revoked: false,
            formation_expires_at: 100,
            evidence: Some((false, 60)),
        };
        assert_eq!(final_hop(&hop, 50), Ok(()));
        assert_eq!(final_hop(&HopFacts { formation_revoked: true, ..hop }, 50), Err(FenceRefusal::Revoked));
        assert_eq!(final_hop(&hop, 101), Err(FenceRefusal::Expired));
        assert_eq!(final_hop(&hop, 61), Err(FenceRefusal::EvidenceExpired));
        assert_eq!(final_hop(&HopFacts { evidence: Some((true, 60)), ..hop }, 50), Err(FenceRefusal::EvidenceRevoked));
        assert_eq!(final_hop(&HopFacts { evidence: None, ..hop }, 61), Ok(()));
        assert_eq!(FenceRefusal::EvidenceRevoked.code(), RefusalCode::Revoked);
        assert_eq!(FenceRefusal::Expired.code(), RefusalCode::Expired);
    }

    #[test]
    fn the_fence_checks_replay_before_anything_else_about_the_hop() {
        let hop = HopFacts {
            token_verifies: true,
            used: true,
            generation_matches: false,
            artifact_matches: false,
            config_matches: true,
            state: LeaseState::Completed,
            formation_revoked: true,
            formation_expires_at: 100,
            evidence: None,
        };
        assert_eq!(final_hop(&hop, 50), Err(FenceRefusal::Replay));
        let fresh = HopFacts { used: false, generation_matches: true, artifact_matches: true, formation_revoked: false, ..hop };
        assert_eq!(final_hop(&fresh, 50), Err(FenceRefusal::NotAdmitted(LeaseState::Completed)));
        assert_eq!(final_hop(&HopFacts { state: LeaseState::Admitted, ..fresh }, 50), Ok(()));
    }
}
