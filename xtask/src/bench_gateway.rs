//! `cargo xtask bench-gateway`: a safe `git_diff` call through `fcd gateway
//! serve` against the same call sent directly to the same stock server
//! (mcp-server-git 2026.1.14, installed as the gateway tests install it),
//! both driven by the official MCP Python SDK client in one run; p50 and p95
//! of each and what the gateway adds. The runtime store is a SQLite file on
//! the workspace's disk (WAL, synchronous FULL), as a deployment keeps it.

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
    let store = match runtime_dir {
        Some(dir) => {
            std::fs::create_dir_all(dir)?;
            let path = dir.join(format!("fcd-bench-gateway-{}.sqlite", std::process::id()));
            for suffix in ["", "-wal", "-shm"] {
                let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
            }
            path
        }
        None => scratch.join("runtime.sqlite"),
    };
    let config = format!(
        "runtime = {}\nregistry = \"registry.sqlite\"\nprincipal = \"user:alice\"\ncontract = \"contract.json\"\ntools = [\"git_diff\"]\n\n\
         [[epoch]]\nid = {}\ncommand = {}\ninstalled = {{ root = {}, strip = \"src/\" }}\n",
        serde_json::to_string(&format!("sqlite:{}", store.display()))?,
        serde_json::to_string(&epoch)?,
        serde_json::to_string(&server)?,
        serde_json::to_string(&release.site_packages.to_string_lossy())?,
    );
    let config_path = scratch.join("gateway.toml");
    std::fs::write(&config_path, config)?;

    let call = json!({"tool": "git_diff", "arguments": {"repo_path": repo_text, "target": "main"}});
    let gateway = vec![fcd.to_string_lossy().into_owned(), "gateway".into(), "serve".into(), "--config".into(), config_path.to_string_lossy().into_owned()];
    let warm = calls / 10;
    let mut rows = Vec::new();
    for (name, command) in [("direct", server), ("gateway", gateway)] {
        let report = stock::drive(&json!({"command": command, "calls": [call], "repeat": calls + warm})).map_err(|e| anyhow!(e))?;
        let mut micros: Vec<f64> =
            report["micros"].as_array().context("the client timed nothing")?.iter().skip(warm).filter_map(serde_json::Value::as_f64).collect();
        micros.sort_by(f64::total_cmp);
        if micros.len() != calls {
            bail!("{name}: {} timings for {calls} calls", micros.len());
        }
        rows.push((name, quantile(&micros, 0.5), quantile(&micros, 0.95)));
    }
    // Every gateway call completed on the stock handler: the runtime holds one completed lease per call.
    let rt = fcd::runtime::Runtime::open(&store).map_err(|e| anyhow!("{e}"))?;
    let completed = rt.leases().map_err(|e| anyhow!("{e}"))?.iter().filter(|l| l.state == fcd::runtime::LeaseState::Completed && l.used).count();
    println!("safe git_diff on mcp-server-git {RELEASE}, {calls} calls each after {warm} warm-up calls (official MCP Python client, stdio)");
    println!("runtime store: {} (four commits per call: form, admit, fence, complete; WAL, synchronous FULL)", store.display());
    println!("{:<10} {:>10} {:>10}", "path", "p50 ms", "p95 ms");
    for (name, p50, p95) in &rows {
        println!("{name:<10} {:>10.3} {:>10.3}", p50 / 1000.0, p95 / 1000.0);
    }
    let added = (rows[1].1 - rows[0].1) / 1000.0;
    println!("the gateway adds {added:.3} ms at p50 and {:.3} ms at p95 (target: at most 1 ms at p50)", (rows[1].2 - rows[0].2) / 1000.0);
    println!("runtime leases completed after the fence: {completed} of {}", calls + warm);
    if completed != calls + warm {
        bail!("{completed} completed leases for {} gateway calls", calls + warm);
    }
    Ok(added <= 1.0)
}
