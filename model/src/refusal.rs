//! Why fcd said no, as one typed code shared by the verifier (a certificate
//! it does not accept), the runtime (an admission, a fence, a lifecycle
//! move it refuses) and the gateway (a call it does not forward). Each
//! variant's [`RefusalCode::as_str`] is the exact string the CLI's JSON, the
//! gateway's `{"fcd": {"refused": CODE}}` and the decision log print: one
//! list, so a code means the same thing wherever it is read, and no part
//! classifies another's refusal by its words.

use serde::{Serialize, Serializer};

/// Every reason code fcd gives, from the verifier, the runtime and the gateway alike.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RefusalCode {
    /// The store failed: see [`StorageError`]. Every other code refuses the request.
    Storage,
    UnknownEpoch,
    UnknownFormation,
    UnknownLease,
    UnknownToken,
    BadTransition,
    LeasesOutstanding,
    BadEvidence,
    BadHandle,
    BadSignature,
    BadToken,
    SourceNotEligible,
    SourceDraining,
    /// The formation already has a lease in flight (open, completed or past the fence).
    FormationInFlight,
    SuccessorIneligible,
    NotCaptured,
    Revoked,
    Expired,
    NoResolver,
    NotUncertain,
    Replay,
    StaleGeneration,
    FinalHopArtifactMismatch,
    FinalHopConfigMismatch,
    LeaseNotAdmitted,
    AuditBroken,
    /// A certificate's envelope is not signed by a trusted issuer, or is not
    /// a well-formed fcd certificate in its issued form (forged or altered).
    UntrustedCertificate,
    /// A verified certificate names another tool, release, configuration,
    /// source or contract than the epochs and contract it was given for.
    CertificateMismatch,
    /// An epoch is not in the registry, or its stored manifest and summary do not verify.
    NotAdmitted,
    /// Per-call records may have been lost in a host crash (process-crash
    /// durability): no epoch retires until an operator acknowledges it.
    CallsUnaccounted,
    // The gateway's own codes (docs/gateway.md), for a call it refuses before or after the runtime.
    /// The call's tool is not one the gateway fronts.
    UnknownTool,
    /// The tool's policy is `deny`.
    Denied,
    /// The session's principal has no contract for the tool.
    NoContract,
    /// The arguments do not fit the tool's input schema as the summary recorded it.
    BadArguments,
    /// The verifier decided the call would have an effect outside the contract.
    Unsafe,
    /// The verifier cannot decide the call on the release that would run it.
    Unknown,
    /// The release's handler refuses the call itself (a `reject` rule), and the gateway refuses it first.
    Reject,
    /// The files the server was started from changed, or were never measured, before the final hop.
    FinalHopUnmeasured,
    /// The client cancelled the call.
    Cancelled,
    /// The server did not answer, or its transport failed, after the call was forwarded: it may have run.
    Uncertain,
    /// The stock server could not be started or reached.
    Upstream,
}

impl RefusalCode {
    /// Every code, in the order of the list above.
    pub const ALL: &'static [RefusalCode] = &[
        RefusalCode::Storage,
        RefusalCode::UnknownEpoch,
        RefusalCode::UnknownFormation,
        RefusalCode::UnknownLease,
        RefusalCode::UnknownToken,
        RefusalCode::BadTransition,
        RefusalCode::LeasesOutstanding,
        RefusalCode::BadEvidence,
        RefusalCode::BadHandle,
        RefusalCode::BadSignature,
        RefusalCode::BadToken,
        RefusalCode::SourceNotEligible,
        RefusalCode::SourceDraining,
        RefusalCode::FormationInFlight,
        RefusalCode::SuccessorIneligible,
        RefusalCode::NotCaptured,
        RefusalCode::Revoked,
        RefusalCode::Expired,
        RefusalCode::NoResolver,
        RefusalCode::NotUncertain,
        RefusalCode::Replay,
        RefusalCode::StaleGeneration,
        RefusalCode::FinalHopArtifactMismatch,
        RefusalCode::FinalHopConfigMismatch,
        RefusalCode::LeaseNotAdmitted,
        RefusalCode::AuditBroken,
        RefusalCode::UntrustedCertificate,
        RefusalCode::CertificateMismatch,
        RefusalCode::NotAdmitted,
        RefusalCode::CallsUnaccounted,
        RefusalCode::UnknownTool,
        RefusalCode::Denied,
        RefusalCode::NoContract,
        RefusalCode::BadArguments,
        RefusalCode::Unsafe,
        RefusalCode::Unknown,
        RefusalCode::Reject,
        RefusalCode::FinalHopUnmeasured,
        RefusalCode::Cancelled,
        RefusalCode::Uncertain,
        RefusalCode::Upstream,
    ];

    /// The reason code as printed (`{"refused": CODE}`); these strings are the CLI's contract.
    pub fn as_str(self) -> &'static str {
        match self {
            RefusalCode::Storage => "storage",
            RefusalCode::UnknownEpoch => "unknown_epoch",
            RefusalCode::UnknownFormation => "unknown_formation",
            RefusalCode::UnknownLease => "unknown_lease",
            RefusalCode::UnknownToken => "unknown_token",
            RefusalCode::BadTransition => "bad_transition",
            RefusalCode::LeasesOutstanding => "leases_outstanding",
            RefusalCode::BadEvidence => "bad_evidence",
            RefusalCode::BadHandle => "bad_handle",
            RefusalCode::BadSignature => "bad_signature",
            RefusalCode::BadToken => "bad_token",
            RefusalCode::SourceNotEligible => "source_not_eligible",
            RefusalCode::SourceDraining => "source_draining",
            RefusalCode::FormationInFlight => "formation_in_flight",
            RefusalCode::SuccessorIneligible => "successor_ineligible",
            RefusalCode::NotCaptured => "not_captured",
            RefusalCode::Revoked => "revoked",
            RefusalCode::Expired => "expired",
            RefusalCode::NoResolver => "no_resolver",
            RefusalCode::NotUncertain => "not_uncertain",
            RefusalCode::Replay => "replay",
            RefusalCode::StaleGeneration => "stale_generation",
            RefusalCode::FinalHopArtifactMismatch => "final_hop_artifact_mismatch",
            RefusalCode::FinalHopConfigMismatch => "final_hop_config_mismatch",
            RefusalCode::LeaseNotAdmitted => "lease_not_admitted",
            RefusalCode::AuditBroken => "audit_broken",
            RefusalCode::UntrustedCertificate => "untrusted_certificate",
            RefusalCode::CertificateMismatch => "certificate_mismatch",
            RefusalCode::NotAdmitted => "not_admitted",
            RefusalCode::CallsUnaccounted => "calls_unaccounted",
            RefusalCode::UnknownTool => "unknown_tool",
            RefusalCode::Denied => "denied",
            RefusalCode::NoContract => "no_contract",
            RefusalCode::BadArguments => "bad_arguments",
            RefusalCode::Unsafe => "unsafe",
            RefusalCode::Unknown => "unknown",
            RefusalCode::Reject => "reject",
            RefusalCode::FinalHopUnmeasured => "final_hop_unmeasured",
            RefusalCode::Cancelled => "cancelled",
            RefusalCode::Uncertain => "uncertain",
            RefusalCode::Upstream => "upstream",
        }
    }
}

impl std::fmt::Display for RefusalCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for RefusalCode {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl PartialEq<&str> for RefusalCode {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

#[cfg(test)]
mod tests {
    use super::RefusalCode;

    #[test]
    fn every_code_is_listed_and_prints_once() {
        let arms = include_str!("refusal.rs").lines().filter(|l| l.trim_start().starts_with("RefusalCode::") && l.contains(" => \"")).count();
        assert_eq!(RefusalCode::ALL.len(), arms, "RefusalCode::ALL lists every variant as_str prints");
        let printed: std::collections::BTreeSet<&str> = RefusalCode::ALL.iter().map(|c| c.as_str()).collect();
        assert_eq!(printed.len(), RefusalCode::ALL.len(), "two codes print the same string");
        assert_eq!(RefusalCode::FinalHopUnmeasured.to_string(), "final_hop_unmeasured");
        assert_eq!(serde_json::to_string(&RefusalCode::NoContract).unwrap(), "\"no_contract\"");
    }
}
