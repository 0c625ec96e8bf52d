//! docs/gateway.md's walkthrough, run as a user would run it: every
//! ```` ```sh walkthrough ```` block of the page, in order, in one bash in a
//! scratch directory with the `fcd` binary on PATH, the repository's
//! profiles as `$FCD_PROFILES` and a scratch git repository as `$REPO`. It
//! installs the stock mcp-server-git from PyPI, admits the release with `fcd
//! release add`, writes the configuration with `fcd gateway init`; then the
//! official MCP Python SDK client drives the gateway that configuration
//! describes, and the `after-client` blocks (the operator's commands) run
//! last. A command of the page that fails fails the test.

use fcd_testkit::{stock, tools};

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::json;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The page's blocks whose info string is exactly `sh walkthrough` followed by `suffix`.
fn blocks(page: &str, suffix: &str) -> String {
    let mut out = String::new();
    let mut inside = false;
    for line in page.lines() {
        if inside {
            if line.trim_end() == "```" {
                inside = false;
                out.push('\n');
            } else {
                out.push_str(line);
                out.push('\n');
            }
        } else if line.trim_end() == format!("```sh walkthrough{suffix}") {
            inside = true;
        }
    }
    out
}

fn bash(dir: &Path, repo: &Path, script: &str) -> String {
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_fcd"));
    let path = format!("{}:{}", bin.parent().unwrap().display(), std::env::var("PATH").unwrap_or_default());
    let out = Command::new("bash")
        .args(["-euo", "pipefail", "-c", script])
        .current_dir(dir)
        .env("PATH", path)
        .env("FCD_PROFILES", root().join("profiles"))
        .env("REPO", repo)
        .output()
        .unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "the walkthrough failed:\n{script}\n---\n{text}");
    text
}

#[test]
fn the_walkthrough_of_docs_gateway_md_gives_a_protected_server() {
    let tools = stock::available().and_then(|()| stock::client_python().map(drop));
    if !tools::tools_or_skip("gateway walkthrough", tools) {
        return;
    }
    let page = std::fs::read_to_string(root().join("docs/gateway.md")).unwrap();
    let (setup, after) = (blocks(&page, ""), blocks(&page, " after-client"));
    assert!(setup.contains("fcd release add") && setup.contains("fcd gateway init"), "the page's walkthrough: {setup}");
    assert!(after.contains("fcd audit check"), "the page's operator commands: {after}");
    let dir = tempfile::tempdir().unwrap();
    let repo = stock::scratch_repo(dir.path());
    let printed = bash(dir.path(), &repo, &setup);
    assert!(printed.contains("[[server.release]]"), "the configuration was printed: {printed}");
    let config = dir.path().join("gateway.toml");
    let canary = dir.path().join("canary");
    let r = repo.to_string_lossy();
    let plan = json!({"command": [env!("CARGO_BIN_EXE_fcd"), "gateway", "serve", "--config", config], "calls": [
        {"tool": "git_diff", "arguments": {"repo_path": r, "target": "main"}},
        {"tool": "git_diff", "arguments": {"repo_path": r, "target": format!("--output={}", canary.display())}},
        {"tool": "git_status", "arguments": {"repo_path": r}},
        {"tool": "git_commit", "arguments": {"repo_path": r, "message": "from the agent"}},
    ]});
    let report = stock::drive(&plan).unwrap();
    let results = report["results"].as_array().unwrap();
    assert_eq!(results[0]["error"], false, "{report}");
    assert!(results[0]["text"].as_str().unwrap().contains("second line"), "{report}");
    assert_eq!(results[1]["structured"]["fcd"]["refused"], "reject", "{report}");
    assert_eq!(results[2]["error"], false, "the pinned tool runs: {report}");
    assert_eq!(results[3]["structured"]["fcd"]["refused"], "denied", "{report}");
    assert!(!canary.exists(), "the option target never reached git");
    let out = Command::new("git").arg("-C").arg(&repo).args(["rev-list", "--count", "HEAD"]).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "2", "the denied commit made none");
    let printed = bash(dir.path(), &repo, &after);
    assert!(printed.contains("0 violations"), "the audit log holds: {printed}");
    assert!(printed.contains("\"state\": \"STALE\""), "the release retired: {printed}");
}
