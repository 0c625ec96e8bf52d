//! Why the runtime said no, typed: every reason code is a [`RefusalCode`]
//! variant whose [`RefusalCode::as_str`] is the exact string the CLI and its
//! JSON have always printed, and a failure of the store itself
//! ([`StorageError`]) is kept apart from a refusal of the request.

use serde::{Serialize, Serializer};

/// The store failed (SQLite, randomness, or a value in the database that the
/// runtime cannot read). Not a judgement on the request: the CLI reports it
/// as an error, not as a refusal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StorageError {
    pub detail: String,
}

impl StorageError {
    pub fn new(detail: impl Into<String>) -> StorageError {
        StorageError { detail: detail.into() }
    }
}

impl From<rusqlite::Error> for StorageError {
    fn from(e: rusqlite::Error) -> StorageError {
        StorageError { detail: e.to_string() }
    }
}

impl std::fmt::Display for StorageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", RefusalCode::Storage.as_str(), self.detail)
    }
}

impl std::error::Error for StorageError {}

/// Every reason code the runtime gives.
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
}

impl RefusalCode {
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

/// Why the runtime refused an operation: a reason code and words.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Refusal {
    pub code: RefusalCode,
    pub detail: String,
}

impl Refusal {
    /// Whether the store failed, rather than the request being refused.
    pub fn is_storage(&self) -> bool {
        self.code == RefusalCode::Storage
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code, self.detail)
    }
}

impl std::error::Error for Refusal {}

impl From<StorageError> for Refusal {
    fn from(e: StorageError) -> Refusal {
        Refusal { code: RefusalCode::Storage, detail: e.detail }
    }
}

impl From<rusqlite::Error> for Refusal {
    fn from(e: rusqlite::Error) -> Refusal {
        StorageError::from(e).into()
    }
}

/// `Err(Refusal)` with this code and words.
pub(crate) fn refuse<T>(code: RefusalCode, detail: impl Into<String>) -> Result<T, Refusal> {
    Err(Refusal { code, detail: detail.into() })
}
