//! What fcd's tests and benchmarks share, in one place instead of files
//! included by path into several test binaries and xtask: a real etcd
//! cluster ([`etcd`]), stock MCP servers and the official MCP client
//! ([`stock`]), DESIGN.md's runtime invariants as one check ([`invariants`]),
//! and the rule for a tool that is missing ([`tools`]: skip, saying so,
//! unless FCD_REQUIRE_TOOLS is set, as it is in CI).
//!
//! Never a dependency of what ships: only dev-dependencies and xtask use it.

pub mod etcd;
pub mod invariants;
pub mod stock;
pub mod tools;

use std::path::{Path, PathBuf};

/// The workspace root, where profiles/, fixtures/ and tests/support/ live.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("testkit/ sits in the workspace root").to_path_buf()
}
