//! `cargo xtask bench-gateway`: a safe `git_diff` call through `fcd gateway
//! serve` against the same call sent directly to the same stock server
//! (mcp-server-git 2026.1.14, installed as the gateway tests install it),
//! both driven by the official MCP Python SDK client in one run; p50 and p95
//! of each and what the gateway adds, for each `call_durability`: `full`
//! (every admission fsynced) and `process-crash` (per-call commits in
//! the WAL without fsync), each with `policy = "pin"` (no decision) and
//! `"decide"` (every call decided on the summary), so the table also says
//! what deciding adds. The runtime store is a SQLite file on the
//! workspace's disk (WAL), as a deployment keeps it, unless `--runtime-dir`
//! puts it elsewhere (a RAM disk separates the fsyncs from the rest). A
//! gateway call is two commits: form + admit + fence as one decision before
//! the stock server runs (fsynced in `full`), the completion after it
//! (never waiting for an fsync: the next commit's covers it).

use std::process::Command;

use anyhow::{Context, Result, anyhow, bail};
use serde_json::json;

use fcd_compiler::profile::Profile;
use fcd_compiler::register::{Registration, Request, register};
use fcd_runtime::registry::{Regeneration, Registry};

use fcd_testkit::stock;

pub(crate) const RELEASE: &str = "2026.1.14";

fn git(repo: &std::path::Path, args: &[&str]) -> Result<()> {
    let out = Command::new("git").arg("-C").arg(repo).args(args).output().context("cannot run git")?;
    if !out.status.success() {
        bail!("git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }
    Ok(())
}

/// How many turns the paths take.
pub(crate) const ROUNDS: usize = 5;

/// The cost of one commit where the store is: 40 one-row transactions
/// fsynced (`synchronous = FULL`) and 40 not (`NORMAL`), in microseconds, paired.
fn commit_floor(dir: &std::path::Path) -> Result<Vec<(f64, f64)>> {
    let path = dir.join(format!("fcd-bench-commit-{}.sqlite", std::process::id()));
    let conn = rusqlite::Connection::open(&path)?;
    conn.query_row("PRAGMA journal_mode = WAL", [], |_| Ok(()))?;
    conn.execute_batch("CREATE TABLE IF NOT EXISTS t (x INTEGER)")?;
    let once = |mode: &str| -> Result<f64> {
        conn.pragma_update(None, "synchronous", mode)?;
        let start = std::time::Instant::now();
        conn.execute_batch("BEGIN IMMEDIATE; INSERT INTO t VALUES (1); COMMIT;")?;
        Ok(start.elapsed().as_secs_f64() * 1e6)
    };
    let pairs = (0..40).map(|_| Ok((once("FULL")?, once("NORMAL")?))).collect::<Result<Vec<_>>>()?;
    drop(conn);
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
    }
    Ok(pairs)
}

pub(crate) fn quantile(sorted: &[f64], q: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

/// One way to the stock server: its command (the server itself, or a gateway
/// in front of it), the bearer token when the gateway listens on HTTP, and
/// the gateway's runtime store and log.
pub(crate) struct Path {
    pub name: String,
    pub command: Vec<String>,
    pub http: Option<String>,
    pub store: Option<(std::path::PathBuf, std::path::PathBuf)>,
}

impl Path {
    /// One session of `repeat` timed calls with the official client: over the
    /// command's stdio, or over HTTP to the gateway the command starts.
    pub(crate) fn drive(&self, call: &serde_json::Value, repeat: usize) -> Result<serde_json::Value> {
        let Some(token) = &self.http else {
            return stock::drive(&json!({"command": self.command, "calls": [call], "repeat": repeat})).map_err(|e| anyhow!(e));
        };
        let (_, log) = self.store.as_ref().context("an HTTP path without its log")?;
        let seen = std::fs::read_to_string(log).unwrap_or_default().len();
        let mut gateway = Command::new(&self.command[0]).args(&self.command[1..]).stdin(std::process::Stdio::null()).spawn()?;
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        let address = loop {
            let text = std::fs::read_to_string(log).unwrap_or_default();
            if let Some(rest) = text.get(seen..).and_then(|t| t.split("fcd gateway: listening on ").nth(1)) {
                break rest.split_whitespace().next().unwrap_or_default().to_owned();
            }
            if std::time::Instant::now() > deadline || gateway.try_wait()?.is_some() {
                let _ = gateway.kill();
                bail!("{}: the gateway did not say where it listens: {}", self.name, text.get(seen..).unwrap_or_default());
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        };
        let plan = json!({"url": format!("http://{address}/mcp"), "headers": {"Authorization": format!("Bearer {token}")}, "calls": [call], "repeat": repeat});
        let report = stock::drive(&plan).map_err(|e| anyhow!(e));
        // SIGTERM: the gateway stops as an operator stops it (and moves its store's mark).
        let _ = Command::new("kill").arg(gateway.id().to_string()).status();
        let _ = gateway.wait();
        report
    }
}

/// `fcd gateway serve --config CONFIG` (with `--listen 127.0.0.1:0` over
/// HTTP), its stderr (the JSON decision log) appended to `log`.
pub(crate) fn logged_gateway(fcd: &std::path::Path, config: &std::path::Path, log: &std::path::Path, over_http: bool) -> Vec<String> {
    let mut command = vec![
        "sh".into(),
        "-c".into(),
        r#"log="$1"; shift; exec "$@" 2>>"$log""#.into(),
        "sh".into(),
        log.to_string_lossy().into_owned(),
        fcd.to_string_lossy().into_owned(),
        "gateway".into(),
        "serve".into(),
        "--config".into(),
        config.to_string_lossy().into_owned(),
    ];
    if over_http {
        command.extend(["--listen".into(), "127.0.0.1:0".into()]);
    }
    command
}

/// The `[http]` table of a gateway that verifies an Ed25519 bearer token on
/// every request, and such a token for `alice` (principal `user:alice`),
/// valid for a day: the bench pays what a deployment pays.
pub(crate) fn http_auth(dir: &std::path::Path) -> Result<(String, String)> {
    use base64::Engine as _;
    let b64 = |bytes: &[u8]| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes);
    let key = ed25519_dalek::SigningKey::from_bytes(&[42; 32]);
    let jwks = json!({"keys": [{"kty": "OKP", "crv": "Ed25519", "alg": "EdDSA", "kid": "bench", "x": b64(key.verifying_key().as_bytes())}]});
    std::fs::write(dir.join("jwks.json"), jwks.to_string())?;
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH)?.as_secs();
    let header = b64(json!({"alg": "EdDSA", "typ": "JWT", "kid": "bench"}).to_string().as_bytes());
    let claims = b64(json!({"iss": "https://issuer.bench", "aud": "https://fcd.bench/mcp", "sub": "alice", "exp": now + 86_400}).to_string().as_bytes());
    let signing_input = format!("{header}.{claims}");
    let signature = ed25519_dalek::Signer::sign(&key, signing_input.as_bytes());
    let token = format!("{signing_input}.{}", b64(&signature.to_bytes()));
    let table =
        "\n[http]\njwks = \"jwks.json\"\nissuer = \"https://issuer.bench\"\naudience = \"https://fcd.bench/mcp\"\nprincipal_prefix = \"user:\"\n".to_owned();
    Ok((table, token))
}

/// What every gateway benchmark stands on: a release build of `fcd`, the
/// stock release installed, a scratch repository (`main`, and `work` one
/// commit ahead), a registry that admitted the release's epoch, alice's
/// contract, and a bearer token with the `[http]` table that verifies it.
pub(crate) struct Stage {
    pub fcd: std::path::PathBuf,
    pub scratch: std::path::PathBuf,
    pub release: stock::GitRelease,
    pub summary: fcd_model::summary::Summary,
    pub epoch: String,
    pub repo_text: String,
    pub contract: serde_json::Value,
    /// The safe call every benchmark makes.
    pub call: serde_json::Value,
    pub http_table: String,
    pub token: String,
}

impl Stage {
    /// Sets the stage under `target/NAME` (emptied first).
    pub(crate) fn set(root: &std::path::Path, name: &str) -> Result<Stage> {
        stock::available().map_err(|e| anyhow!(e))?;
        let release = stock::git_release(RELEASE).map_err(|e| anyhow!(e))?;
        stock::client_python().map_err(|e| anyhow!(e))?;
        let status = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
            .args(["build", "--quiet", "--release", "--package", "fcd", "--bin", "fcd"])
            .current_dir(root)
            .status()
            .context("cannot run cargo build")?;
        if !status.success() {
            bail!("cargo build --release --bin fcd failed");
        }
        let fcd = root.join("target/release/fcd");
        // On the workspace's disk, not a RAM disk: every runtime commit is a real fsync.
        let scratch = root.join("target").join(name);
        let _ = std::fs::remove_dir_all(&scratch);
        std::fs::create_dir_all(&scratch)?;
        let repo = scratch.join("repo");
        std::fs::create_dir(&repo)?;
        git(&repo, &["init", "-q", "-b", "main"])?;
        git(&repo, &["config", "user.email", "fcd@example.invalid"])?;
        git(&repo, &["config", "user.name", "fcd bench"])?;
        std::fs::write(repo.join("notes.txt"), "first line\n")?;
        git(&repo, &["add", "notes.txt"])?;
        git(&repo, &["commit", "-q", "-m", "first"])?;
        git(&repo, &["checkout", "-q", "-b", "work"])?;
        std::fs::write(repo.join("notes.txt"), "first line\nsecond line\n")?;
        git(&repo, &["commit", "-q", "-am", "second"])?;

        let profile = Profile::load(&root.join("profiles/git-diff")).map_err(|e| anyhow!("{e}"))?;
        let request = Request {
            source: release.source.clone(),
            release: Some(format!("mcp-server-git-{RELEASE}")),
            artifact_digest: Some(release.sdist_digest.clone()),
            config: None,
        };
        let Registration::Registered(summary) = register(&profile, &request).map_err(|e| anyhow!("{e}"))? else { bail!("{RELEASE} escalated") };
        let mut registry = Registry::open(&scratch.join("registry.sqlite")).map_err(|e| anyhow!("{e}"))?;
        let epoch = registry
            .admit(&summary, &Regeneration { process: std::process::id(), summary_digest: summary.summary_digest.clone() })
            .map_err(|e| anyhow!("{e}"))?;
        let repo_text = repo.to_string_lossy().into_owned();
        let contract = json!({"principal": "user:alice", "allow": ["git:diff"], "destinations": [format!("local:{repo_text}")], "resources": [repo_text],
            "max_exposure": "private", "mutation": false, "write_scopes": []});
        std::fs::write(scratch.join("contract.json"), contract.to_string())?;
        let call = json!({"tool": "git_diff", "arguments": {"repo_path": repo_text, "target": "main"}});
        let (http_table, token) = http_auth(&scratch)?;
        Ok(Stage { fcd, scratch, release, summary: *summary, epoch, repo_text, contract, call, http_table, token })
    }

    /// The stock server's command against the scratch repository.
    pub(crate) fn server(&self) -> Vec<String> {
        vec![self.release.program.to_string_lossy().into_owned(), "--repository".into(), self.repo_text.clone()]
    }
}

/// The stdio and git paths; `stage` was set by [`Stage::set`] (the HTTP
/// baseline, crate::bench_gateway_http, runs on the same stage after it).
pub fn run(stage: &Stage, calls: usize, runtime_dir: Option<&std::path::Path>) -> Result<bool> {
    let Stage { fcd, scratch, release, summary, epoch, repo_text, contract, call, http_table, token } = stage;
    let server = stage.server();
    let store_dir = match runtime_dir {
        Some(dir) => {
            std::fs::create_dir_all(dir)?;
            dir.to_owned()
        }
        None => scratch.clone(),
    };
    let mut paths = vec![Path { name: "direct".to_owned(), command: server.clone(), http: None, store: None }];
    // `pin` is the path without a decision (exact-source pinning); `decide` decides every call on the summary.
    // Over HTTP (`--listen`, the client's bearer token verified on every request), decide only.
    let variants = [
        ("full", "pin", false),
        ("full", "decide", false),
        ("process-crash", "pin", false),
        ("process-crash", "decide", false),
        ("full", "decide", true),
        ("process-crash", "decide", true),
    ];
    for (durability, policy, over_http) in variants {
        {
            let transport = if over_http { "-http" } else { "" };
            let store = store_dir.join(format!("fcd-bench-gateway-{}-{durability}-{policy}{transport}.sqlite", std::process::id()));
            for suffix in ["", "-wal", "-shm"] {
                let _ = std::fs::remove_file(format!("{}{suffix}", store.display()));
            }
            let config = format!(
                "runtime = {}\nregistry = \"registry.sqlite\"\nprincipal = \"user:alice\"\ncall_durability = {}\nlog = \"json\"\n\n\
                 [[contract]]\nprincipal = \"user:alice\"\ntool = \"git_diff\"\nfile = \"contract.json\"\n\n\
                 [[server]]\nname = \"git\"\ntools = [\"git_diff\"]\ndestination = {}\npolicy = {{ git_diff = {} }}\n\n\
                 [[server.release]]\nepochs = [{}]\ncommand = {}\ninstalled = {{ root = {}, strip = \"src/\" }}\n{}",
                serde_json::to_string(&format!("sqlite:{}", store.display()))?,
                serde_json::to_string(durability)?,
                serde_json::to_string(&format!("local:{repo_text}"))?,
                serde_json::to_string(policy)?,
                serde_json::to_string(&epoch)?,
                serde_json::to_string(&server)?,
                serde_json::to_string(&release.site_packages.to_string_lossy())?,
                if over_http { http_table.as_str() } else { "" },
            );
            let config_path = scratch.join(format!("gateway-{durability}-{policy}{transport}.toml"));
            std::fs::write(&config_path, config)?;
            // The gateway's JSON log (its stderr) says where each call's time went.
            let log = scratch.join(format!("gateway-{durability}-{policy}{transport}.log"));
            let _ = std::fs::remove_file(&log);
            let gateway = logged_gateway(fcd, &config_path, &log, over_http);
            let name = format!("gateway{}, {durability}, {policy}", if over_http { " over HTTP" } else { "" });
            paths.push(Path { name, command: gateway, http: over_http.then(|| token.clone()), store: Some((store, log)) });
        }
    }
    // The paths take turns, round after round, so a change in the machine's load falls on all of them alike.
    let per_round = calls.div_ceil(ROUNDS);
    let warm = (per_round / 10).max(2);
    let mut timings: Vec<Vec<f64>> = vec![Vec::new(); paths.len()];
    let mut fsyncs = Vec::new();
    for _ in 0..ROUNDS {
        fsyncs.extend(commit_floor(&store_dir)?);
        for (path, timed) in paths.iter().zip(&mut timings) {
            let name = &path.name;
            let report = path.drive(call, per_round + warm)?;
            let micros: Vec<f64> =
                report["micros"].as_array().context("the client timed nothing")?.iter().skip(warm).filter_map(serde_json::Value::as_f64).collect();
            if micros.len() != per_round {
                bail!("{name}: {} timings for {per_round} calls", micros.len());
            }
            timed.extend(micros);
        }
    }
    let quantiles = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        (quantile(&v, 0.5) / 1000.0, quantile(&v, 0.95) / 1000.0)
    };
    let rows: Vec<(f64, f64)> = timings.into_iter().map(quantiles).collect();
    let (full_commit, normal_commit): (Vec<f64>, Vec<f64>) = fsyncs.into_iter().unzip();
    let (full_commit, normal_commit) = (quantiles(full_commit), quantiles(normal_commit));
    println!(
        "safe git_diff on mcp-server-git {RELEASE}, {} calls per path in {ROUNDS} interleaved rounds, each after {warm} warm-up calls",
        per_round * ROUNDS
    );
    println!("(official MCP Python client, stdio). Runtime store: SQLite (WAL) under {}.", store_dir.display());
    println!("A gateway call commits twice: form + admit + fence in one decision (fsynced in full), then the completion (no fsync of its own).");
    println!(
        "One-row SQLite commit there, same rounds: fsynced p50 {:.3} ms (p95 {:.3}); without fsync p50 {:.3} ms",
        full_commit.0, full_commit.1, normal_commit.0
    );
    println!("{:<32} {:>9} {:>9} {:>9} {:>9}", "path", "p50 ms", "p95 ms", "+p50 ms", "+p95 ms");
    let direct = rows[0];
    println!("{:<32} {:>9.3} {:>9.3}", paths[0].name, direct.0, direct.1);
    // Targets: at most 1 ms added at p50 in `full`, 0.5 ms in `process-crash`.
    let target = |name: &str| if name.contains("process-crash") { 0.5 } else { 1.0 };
    let (mut met, mut met_inside) = (true, true);
    for (Path { name, store, http, .. }, (p50, p95)) in paths.iter().zip(&rows).skip(1) {
        let added = p50 - direct.0;
        met &= added <= target(name);
        println!("{name:<32} {p50:>9.3} {p95:>9.3} {added:>9.3} {:>9.3}", p95 - direct.1);
        // Every gateway call completed on the stock handler: the runtime holds one completed lease per call.
        let (store, log) = store.as_ref().context("a gateway path without its store")?;
        met_inside &= steps_of(log, warm, http.is_some())? <= target(name);
        let rt = fcd_runtime::runtime::Runtime::open(store).map_err(|e| anyhow!("{e}"))?;
        let completed = rt.leases().map_err(|e| anyhow!("{e}"))?.iter().filter(|l| l.state == fcd_runtime::runtime::LeaseState::Completed && l.used).count();
        if completed != (per_round + warm) * ROUNDS {
            bail!("{name}: {completed} completed leases for {} gateway calls", (per_round + warm) * ROUNDS);
        }
        if rt.lost_calls().map_err(|e| anyhow!("{e}"))?.is_some() {
            bail!("{name}: the gateway closed without settling its writer");
        }
    }
    // What deciding adds: each `decide` path against the `pin` path of the same durability, measured in the same rounds.
    for (pair, names) in rows[1..5].chunks(2).zip(paths[1..5].chunks(2)) {
        if let ([pin, decide], [Path { name, .. }, _]) = (pair, names) {
            let durability = name.trim_start_matches("gateway, ").trim_end_matches(", pin");
            println!("deciding adds {:+.3} ms at p50, {:+.3} ms at p95 in {durability} (target: at most 0.1 ms at p50)", decide.0 - pin.0, decide.1 - pin.1);
        }
    }
    decision_alone(summary, call, contract, repo_text)?;
    let verdict = |m: bool| if m { "met on every path" } else { "not met on every path" };
    println!("target: the gateway adds at most 1 ms at p50 in full, 0.5 ms in process-crash");
    println!("  end to end (gateway path minus direct path): {}", verdict(met));
    println!("  inside the gateway (request read to response written, minus the server's round trip): {}", verdict(met_inside));
    Ok(met && met_inside)
}

/// Where the gateway's time went, from its JSON log: for each call after
/// the first `warm` of a session, the time from its request line read to its
/// response line written (`answered`), the server's round trip inside it
/// (`forward`), and the steps around it (`decide`, `admit`, `complete`).
/// What the gateway adds is `answered - forward`: the server's own time,
/// whose noise swamps a difference of two end-to-end figures, drops out.
/// Printed as medians, with each step's share of what is added.
pub(crate) fn steps_of(log: &std::path::Path, warm: usize, over_http: bool) -> Result<f64> {
    let text = std::fs::read_to_string(log).with_context(|| format!("cannot read {}", log.display()))?;
    // Per call: added, decide, admit, complete, and the rest (transports and bookkeeping).
    let mut rows: Vec<[f64; 5]> = Vec::new();
    let (mut in_session, mut pending) = (0, None);
    for line in text.lines() {
        // A gateway process names its tools as it starts: a new session, warmed up again.
        if line.starts_with("fcd gateway: tool ") {
            (in_session, pending) = (0, None);
        }
        let Ok(event) = serde_json::from_str::<serde_json::Value>(line) else { continue };
        let field = |key: &str| event[key].as_f64().with_context(|| format!("{}: an event without `{key}`: {line}", log.display()));
        if event["message"] == "call" {
            in_session += 1;
            pending =
                (in_session > warm).then(|| Ok::<_, anyhow::Error>([field("decide")?, field("admit")?, field("forward")?, field("complete")?])).transpose()?;
            // Over HTTP no framing sees the lines: the call's own time stands for what the gateway held it.
            if over_http && let Some([decide, admit, forward, complete]) = pending.take() {
                let added = field("micros")? - forward;
                rows.push([added, decide, admit, complete, added - decide - admit - complete]);
            }
        } else if event["message"] == "answered" && event["method"] == "tools/call" {
            let Some([decide, admit, forward, complete]) = pending.take() else { continue };
            let added = field("micros")? - forward;
            rows.push([added, decide, admit, complete, added - decide - admit - complete]);
        }
    }
    if rows.is_empty() {
        bail!("{}: no call was logged with its answer", log.display());
    }
    let median = |i: usize| {
        let mut v: Vec<f64> = rows.iter().map(|r| r[i]).collect();
        v.sort_by(f64::total_cmp);
        v[v.len() / 2] / 1000.0
    };
    let [added, decide, admit, complete, rest] = [0, 1, 2, 3, 4].map(median);
    let share = |m: f64| if added > 0.0 { 100.0 * m / added } else { 0.0 };
    println!(
        "    inside the gateway, over {} calls: adds p50 {added:.3} ms = decide {decide:.3} ({:.0}%) + admit+fence {admit:.3} ({:.0}%) + complete {complete:.3} ({:.0}%) + transports {rest:.3} ({:.0}%)",
        rows.len(),
        share(decide),
        share(admit),
        share(complete),
        share(rest)
    );
    Ok(added)
}

/// The gateway's decision and capture steps timed in process, on the same
/// call and summary: what they cost without the two processes' noise, which
/// at these sizes is larger than the steps themselves.
fn decision_alone(summary: &fcd_model::summary::Summary, call: &serde_json::Value, contract: &serde_json::Value, repo: &str) -> Result<()> {
    use fcd_gateway::decide;
    use fcd_verify::verdict::{Call, CallInput, Contract, Verdict};
    let call: Call = serde_json::from_value(call.clone())?;
    let contract: Contract = serde_json::from_value(contract.clone())?;
    let env = decide::env("user:alice", &format!("local:{repo}"), &json!({}));
    let input = CallInput::new(call.clone(), "tools/call");
    let percentiles = |mut micros: Vec<f64>| {
        micros.sort_by(f64::total_cmp);
        (micros[micros.len() / 2], micros[micros.len() * 95 / 100])
    };
    let mut decided = Vec::new();
    for _ in 0..10_000 {
        let started = std::time::Instant::now();
        let verdict = decide::on_source(summary, &input, &env, &contract, false);
        decided.push(started.elapsed().as_secs_f64() * 1e6);
        if verdict.as_ref().ok() != Some(&Verdict::Safe) {
            bail!("the benchmark's call is not decided safe: {verdict:?}");
        }
    }
    let key = ed25519_dalek::SigningKey::from_bytes(&[7; 32]);
    let mut captured = Vec::new();
    for _ in 0..1_000 {
        let started = std::time::Instant::now();
        let certificate = decide::capture(summary, summary, &call, &env, &contract, &key, 1_700_000_000, 300);
        captured.push(started.elapsed().as_secs_f64() * 1e6);
        if certificate.is_none() {
            bail!("the benchmark's call captured nothing");
        }
    }
    let (d50, d95) = percentiles(decided);
    let (c50, c95) = percentiles(captured);
    println!(
        "in process: deciding a call (schema check, rules, contract) p50 {d50:.1} µs, p95 {d95:.1} µs over 10000; capturing a successor (deciding and signing) p50 {c50:.1} µs, p95 {c95:.1} µs over 1000"
    );
    Ok(())
}
