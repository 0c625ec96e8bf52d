//! fcd-lifecycle: fcd's admission protocol stated as a lifecycle and checked.
//!
//! - [`properties`]: every property (safety, liveness, completeness,
//!   fairness) once, with its LTL or CTL formula and plain words; the same
//!   ids are in `docs/lifecycle.md`.
//! - [`protocol`]: the protocol as a finite model (two gateways, three
//!   formations, a source and a successor epoch, drain, retire, revoke,
//!   expiry, uncertain outcomes and their resolution, gateway crashes) whose
//!   decisions are the runtime's own (`fcd_runtime::runtime::decision`).
//! - [`explore`]: the explicit-state checker that explores it completely.
//! - [`history`]: the check of a recorded history (the runtime's audit log)
//!   against the safety properties, behind `fcd audit check`.
//! - `mutant` (feature `mutants`, tests only): one broken protocol per safety property.

pub mod audit_check;
pub mod explore;
#[cfg(feature = "mutants")]
pub mod mutant;
pub mod properties;
pub mod protocol;
