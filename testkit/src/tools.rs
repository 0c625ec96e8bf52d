//! What the tests that run real tools share: the decision to skip when a
//! tool they need is missing, and running a driver script. CI installs every tool and sets FCD_REQUIRE_TOOLS,
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

/// Runs a driver script (`command`, its program, arguments and directory set)
/// with `input` as JSON on its stdin, and returns its report: the last
/// non-empty line of its stdout, as JSON (whatever the release itself prints
/// may come first). `what` names the run when the report is not JSON.
pub fn drive(mut command: std::process::Command, input: &serde_json::Value, what: &str) -> serde_json::Value {
    use std::io::Write as _;
    use std::process::Stdio;
    let mut child = command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap_or_else(|e| panic!("{what}: {e}"));
    child.stdin.take().expect("a piped stdin").write_all(input.to_string().as_bytes()).unwrap_or_else(|e| panic!("{what}: {e}"));
    let out = child.wait_with_output().unwrap_or_else(|e| panic!("{what}: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let last = stdout.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or_default();
    serde_json::from_str(last).unwrap_or_else(|e| panic!("{what}: driver output ({e}): {stdout}{}", String::from_utf8_lossy(&out.stderr)))
}
