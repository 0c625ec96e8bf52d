//! fcd-verify: applies a concrete call and its authenticated context to a
//! summary ([`certify`]), signs and checks DSSE certificates ([`cert`]) and
//! reads the canonical call files profiles are judged by ([`canonical`]).
//!
//! It depends on `fcd-model` alone: a party that only checks certificates
//! builds no parser.

pub mod canonical_calls;
pub mod certificate;
pub mod verdict;
