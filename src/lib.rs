//! fcd: call-specific, provenance-bound evidence that a formed tool call keeps
//! its meaning on the release that will execute it.
//!
//! This crate is the `fcd` command ([`cli`], with its bundled `demo`), the
//! profile test runner ([`profile_test`]) and the way an official release
//! reaches a registry ([`release`]: fetch, verify, register, regenerate in a
//! second process, admit), which `fcd release add` and `cargo xtask releases`
//! share. The pipeline lives in crates named for its stages, which callers
//! name directly (nothing is re-exported here under another name):
//! `fcd-model` (the shared vocabulary: effects, rules, summaries, digests),
//! `fcd-frontends` (tree-sitter regions and facts), `fcd-compiler` (profile,
//! closure, registration, summarizing), `fcd-verify` (decisions and
//! certificates) and `fcd-runtime` (admission and the registry), with `fcd-lifecycle` (the
//! protocol's properties, its model check and the audit check). See
//! ARCHITECTURE.md.

pub mod cli;
pub mod files;
pub mod profile_test;
pub mod release;
