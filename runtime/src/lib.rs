//! fcd-runtime: the admission runtime ([`runtime`]: epochs, formation
//! authority, leases, revocation, the final-hop fence) and the registry of
//! admitted summaries ([`registry`]), both on SQLite.
//!
//! It depends on `fcd-model` alone: the runtime never parses source.

pub mod registry;
pub mod runtime;

pub use fcd_model::{canon, error, summary};
