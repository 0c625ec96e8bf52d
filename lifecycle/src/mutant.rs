//! Deliberately broken variants of the protocol, one per safety property,
//! compiled only with the `mutants` feature (which only tests enable). Each
//! breaks one decision the way a plausible bug would; the model checker must
//! catch each with a counterexample trace, or the property it targets is
//! not really tested.

/// One broken decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mutant {
    /// Admission captures evidence that appeared after formation (late binding).
    AuthorityWidening,
    /// Admission falls back to the successor though the formation captured none.
    UncapturedFallback,
    /// Admission falls back to the captured successor while the source is only DRAINING.
    EarlyFallback,
    /// Admission starts leases on a DRAINING source.
    AdmitWhileDraining,
    /// Retirement counts only uncertain leases, not admitted ones.
    RetireWithAdmitted,
    /// Retirement counts only admitted leases, not uncertain ones.
    RetireWithUncertain,
    /// The fence forgets that a token was used.
    FenceReplay,
    /// The fence ignores the generation, artifact and configuration.
    FenceIgnoresDigests,
    /// The fence ignores the lease's state (a recovered or resolved lease still runs).
    FenceAfterClose,
    /// Admission ignores revocation of the formation and of the evidence.
    AdmitRevoked,
    /// Admission ignores expiry of the formation and of the evidence.
    AdmitExpired,
    /// The lease table lets a completed or resolved lease become uncertain again.
    ReopenLease,
    /// The epoch table lets an eligible epoch retire without draining.
    SkipDrain,
    /// The lease table lets the resolver settle a lease that is still admitted.
    ResolveAdmitted,
    /// Admission ignores the formation's latest lease (a formation is admitted again while its call is in flight or after it ran).
    AdmitInFlight,
    /// The fence does not re-check the formation and the captured evidence (revocation and expiry cancel only admission).
    FenceIgnoresFormation,
}

impl Mutant {
    pub const ALL: [Mutant; 16] = [
        Mutant::AuthorityWidening,
        Mutant::UncapturedFallback,
        Mutant::EarlyFallback,
        Mutant::AdmitWhileDraining,
        Mutant::RetireWithAdmitted,
        Mutant::RetireWithUncertain,
        Mutant::FenceReplay,
        Mutant::FenceIgnoresDigests,
        Mutant::FenceAfterClose,
        Mutant::AdmitRevoked,
        Mutant::AdmitExpired,
        Mutant::ReopenLease,
        Mutant::SkipDrain,
        Mutant::ResolveAdmitted,
        Mutant::AdmitInFlight,
        Mutant::FenceIgnoresFormation,
    ];

    /// The id of the safety property this mutant breaks.
    pub fn breaks(self) -> &'static str {
        match self {
            Mutant::AuthorityWidening => "S1",
            Mutant::UncapturedFallback => "S2",
            Mutant::EarlyFallback => "S3",
            Mutant::AdmitWhileDraining => "S4",
            Mutant::RetireWithAdmitted => "S5",
            Mutant::RetireWithUncertain => "S6",
            Mutant::FenceReplay => "S7",
            Mutant::FenceIgnoresDigests => "S8",
            Mutant::FenceAfterClose => "S9",
            Mutant::AdmitRevoked => "S10",
            Mutant::AdmitExpired => "S11",
            Mutant::ReopenLease => "S12",
            Mutant::SkipDrain => "S13",
            Mutant::ResolveAdmitted => "S14",
            Mutant::AdmitInFlight => "S15",
            Mutant::FenceIgnoresFormation => "S16",
        }
    }
}
