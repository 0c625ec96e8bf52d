//! fcd: call-specific, provenance-bound evidence that a formed tool call keeps
//! its meaning on the release that will execute it.
//!
//! The pipeline, module by module: [`profile`] reads a reviewed envelope;
//! [`source`] selects a release's files and [`npm`] reads an npm manifest's entry; the frontends (crate
//! `fcd-frontends`) locate regions and extract facts; [`guard`] enforces the
//! call-site inventories; [`register`] runs those steps and [`summary`]
//! compiles rules into a digest-bound summary; [`certify`] applies a concrete
//! call to a summary and [`cert`] signs the result; [`cli`] is the `fcd`
//! command. See ARCHITECTURE.md.

pub mod cli;
pub mod demo;
pub mod guard;
pub mod loader;
pub mod profile;
pub mod profile_test;
pub mod register;
pub mod source;
pub mod summary;

pub use fcd_model::{InputError, canon, error, rules};
pub use fcd_runtime::{registry, runtime};
pub use fcd_verify::{canonical, cert, certify};
