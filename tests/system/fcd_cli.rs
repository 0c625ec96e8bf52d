//! Running the `fcd` binary from a test, as a user would: its exit code and
//! both streams, from the workspace root.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

const FCD: &str = env!("CARGO_BIN_EXE_fcd");

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// Stdout as the one JSON document `--format json` writes.
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {}\n{}", self.stdout, self.stderr))
    }
}

/// `fcd ARGS…` in the workspace root.
pub fn fcd(args: &[&str]) -> Run {
    let out = Command::new(FCD).args(args).current_dir(root()).output().expect("fcd runs");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// A path as the argument text it is.
pub fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Copies a directory tree.
pub fn copy_tree(from: &Path, to: &Path) {
    for entry in walkdir::WalkDir::new(from) {
        let entry = entry.unwrap();
        let target = to.join(entry.path().strip_prefix(from).unwrap());
        if entry.file_type().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// A registry under `dir` holding one admitted epoch, git_diff's guarded
/// fixture compiled under profiles/git-diff: the registry and the epoch id.
pub fn admitted_epoch(dir: &Path) -> (PathBuf, String) {
    use fcd_compiler::register::{Registration, Request, register};
    use fcd_runtime::registry::{Regeneration, Registry, epoch_id};
    let profile = fcd_compiler::profile::Profile::load(&root().join("profiles/git-diff")).expect("the profile loads");
    let request = Request { source: root().join("fixtures/git-diff/guarded"), release: Some("fixture".into()), ..Request::default() };
    let Registration::Registered(summary) = register(&profile, &request).expect("registers") else { panic!("the guarded fixture escalated") };
    let path = dir.join("registry.sqlite");
    let mut registry = Registry::open(&path).unwrap();
    registry.admit(&summary, &Regeneration { process: std::process::id(), summary_digest: summary.summary_digest.clone() }).unwrap();
    (path, epoch_id(&summary))
}
