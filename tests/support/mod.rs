//! What the tests that run real handlers share: the decision to skip when a
//! tool they need is missing. CI installs every tool and sets FCD_REQUIRE_TOOLS,
//! so there a missing tool fails the test instead of hiding a gap.

/// Whether `test` may go on: `tools` is what checking its tools found. A
/// missing tool skips the test, saying so, unless FCD_REQUIRE_TOOLS is set.
pub fn tools_or_skip(test: &str, tools: Result<(), String>) -> bool {
    let Err(why) = tools else { return true };
    assert!(std::env::var_os("FCD_REQUIRE_TOOLS").is_none(), "{test}: FCD_REQUIRE_TOOLS is set but {why}");
    eprintln!("SKIPPED {test}: {why}");
    false
}

/// `git` and GitPython, which the runs of the Git server's handlers need.
#[allow(dead_code)] // only the binaries that run mcp-server-git's handlers use it
pub fn git_and_gitpython() -> Result<(), String> {
    let git = std::process::Command::new("git").arg("--version").output().map_err(|e| format!("git: {e}"))?;
    if !git.status.success() {
        return Err("git does not run".into());
    }
    let py = std::process::Command::new("python3").args(["-c", "import git"]).output().map_err(|e| format!("python3: {e}"))?;
    if !py.status.success() {
        return Err("python3 cannot import GitPython (pip install gitpython)".into());
    }
    Ok(())
}
