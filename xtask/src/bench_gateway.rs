//! `cargo xtask bench-gateway`: a safe `git_diff` call through `fcd gateway
//! serve` against the same call sent directly to the same stock server
//! (mcp-server-git 2026.1.14, installed as the gateway tests install it),
//! both driven by the official MCP Python SDK client in one run; p50 and p95
//! of each and what the gateway adds, for each `call_durability`: `full`
//! (every per-call commit fsynced) and `process-crash` (per-call commits in
//! the WAL without fsync). The runtime store is a SQLite file on the
//! workspace's disk (WAL), as a deployment keeps it, unless `--runtime-dir`
//! puts it elsewhere (a RAM disk separates the fsyncs from the rest). A
//! gateway call is two commits: form + admit + fence as one decision before
//! the stock server runs, the completion after it.

use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result, anyhow, bail};
use serde_json::json;

use fcd::profile::Profile;
use fcd::register::{Registration, Request, register};
use fcd::registry::{Regeneration, Registry};

use crate::stock;

const RELEASE: &str = "2026.1.14";

fn git(repo: &Path, args: &[&str]) -> Result<()> {
    let out = Command::new("git").arg("-C").arg(repo).args(args).output().context("cannot run git")?;
    if !out.status.success() {
        bail!("git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }
    Ok(())
}

fn quantile(sorted: &[f64], q: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

pub fn run(calls: usize, root: &Path, runtime_dir: Option<&Path>) -> Result<bool> {
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
    let scratch = root.join("target/bench-gateway");
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
    let epoch =
        registry.admit(&summary, &Regeneration { process: std::process::id(), summary_digest: summary.summary_digest.clone() }).map_err(|e| anyhow!("{e}"))?;
    let repo_text = repo.to_string_lossy().into_owned();
    let contract = json!({"principal": "user:alice", "allow": ["git:diff"], "destinations": [format!("local:{repo_text}")], "resources": [repo_text],
        "max_exposure": "private", "mutation": false, "write_scopes": []});
    std::fs::write(scratch.join("contract.json"), contract.to_string())?;
    let server = vec![release.program.to_string_lossy().into_owned(), "--repository".into(), repo_text.clone()];
    let store_dir = match runtime_dir {
        Some(dir) => {
            std::fs::create_dir_all(dir)?;
            dir.to_owned()
        }
        None => scratch.clone(),
    };
    let call = json!({"tool": "git_diff", "arguments": {"repo_path": repo_text, "target": "main"}});
    let warm = calls / 10;
    let timed = |name: &str, command: &[String]| -> Result<(f64, f64)> {
        let report = stock::drive(&json!({"command": command, "calls": [call], "repeat": calls + warm})).map_err(|e| anyhow!(e))?;
        let mut micros: Vec<f64> =
            report["micros"].as_array().context("the client timed nothing")?.iter().skip(warm).filter_map(serde_json::Value::as_f64).collect();
        micros.sort_by(f64::total_cmp);
        if micros.len() != calls {
            bail!("{name}: {} timings for {calls} calls", micros.len());
        }
        Ok((quantile(&micros, 0.5) / 1000.0, quantile(&micros, 0.95) / 1000.0))
    };
    let direct = timed("direct", &server)?;
    let mut rows = Vec::new();
    for durability in ["full", "process-crash"] {
        let store = store_dir.join(format!("fcd-bench-gateway-{}-{durability}.sqlite", std::process::id()));
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", store.display()));
        }
        let config = format!(
            "runtime = {}\nregistry = \"registry.sqlite\"\nprincipal = \"user:alice\"\ncontract = \"contract.json\"\ntools = [\"git_diff\"]\n\
             call_durability = {}\n\n[[epoch]]\nid = {}\ncommand = {}\ninstalled = {{ root = {}, strip = \"src/\" }}\n",
            serde_json::to_string(&format!("sqlite:{}", store.display()))?,
            serde_json::to_string(durability)?,
            serde_json::to_string(&epoch)?,
            serde_json::to_string(&server)?,
            serde_json::to_string(&release.site_packages.to_string_lossy())?,
        );
        let config_path = scratch.join(format!("gateway-{durability}.toml"));
        std::fs::write(&config_path, config)?;
        let gateway = vec![fcd.to_string_lossy().into_owned(), "gateway".into(), "serve".into(), "--config".into(), config_path.to_string_lossy().into_owned()];
        let (p50, p95) = timed(durability, &gateway)?;
        // Every gateway call completed on the stock handler: the runtime holds one completed lease per call.
        let rt = fcd::runtime::Runtime::open(&store).map_err(|e| anyhow!("{e}"))?;
        let completed = rt.leases().map_err(|e| anyhow!("{e}"))?.iter().filter(|l| l.state == fcd::runtime::LeaseState::Completed && l.used).count();
        if completed != calls + warm {
            bail!("{durability}: {completed} completed leases for {} gateway calls", calls + warm);
        }
        if rt.lost_calls().map_err(|e| anyhow!("{e}"))?.is_some() {
            bail!("{durability}: the gateway closed without settling its writer");
        }
        rows.push((durability, p50, p95, completed));
    }
    println!("safe git_diff on mcp-server-git {RELEASE}, {calls} calls each after {warm} warm-up calls (official MCP Python client, stdio)");
    println!(
        "runtime store: SQLite (WAL) under {}; per gateway call two commits: form + admit + fence in one decision, then the completion",
        store_dir.display()
    );
    println!("{:<30} {:>9} {:>9} {:>12} {:>12}", "path", "p50 ms", "p95 ms", "+p50 ms", "+p95 ms");
    println!("{:<30} {:>9.3} {:>9.3}", "direct", direct.0, direct.1);
    let mut met = true;
    for (durability, p50, p95, completed) in &rows {
        let added = p50 - direct.0;
        met &= added <= 1.0;
        println!("{:<30} {p50:>9.3} {p95:>9.3} {added:>12.3} {:>12.3}   ({completed} leases completed)", format!("gateway, {durability}"), p95 - direct.1);
    }
    println!("target: the gateway adds at most 1 ms at p50 ({})", if met { "met in both modes" } else { "not met in every mode" });
    Ok(met)
}
