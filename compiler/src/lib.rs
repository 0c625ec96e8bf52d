//! fcd-compiler: from a reviewed profile and a release's source to a summary.
//!
//! [`profile`] loads and checks a profile; [`closure`] selects the release's
//! files; the language's loader completes them to what its runtime loads,
//! and the frontends (`fcd-frontends` and one crate per language, both
//! picked by [`languages`]) locate regions and extract facts;
//! [`inventory`] enforces the call-site inventories; [`register`] runs those
//! steps and [`summary`] compiles the facts into ordered first-match rules
//! bound by digests (the types are `fcd-model`'s), a `reject` kept only when
//! nothing with an effect runs before the refusal ([`reject`]). Every step either yields
//! its output or an escalation naming file, line and reason.

pub mod closure;
pub mod init;
pub mod input_schema;
pub mod inspect;
pub mod inventory;
pub mod languages;
pub mod profile;
pub mod register;
mod reject;
pub mod summary;
