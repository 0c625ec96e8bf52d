//! `cargo xtask bench-scale-out`: several `fcd gateway serve` processes
//! (default 8) share one runtime store on a 3-member etcd cluster started
//! for the run, each listening on Streamable HTTP with its own stock
//! mcp-server-git behind it and several official-SDK clients at once. Two
//! phases: steady, then the same load with the cluster's leader killed a
//! third of the way in. For each: calls per second over all gateways, the
//! p50 and p95 of one call as its client timed it, and what was refused;
//! then every runtime invariant and `fcd audit check` over the whole history.
//! The load is mostly Python (eight servers and eight clients on the
//! machine's cores): the figures say what a host of that size sustains end to
//! end, not what the store alone could (that is `bench-runtime --store etcd`).

use std::collections::BTreeMap;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use serde_json::{Value, json};

use crate::bench_gateway::Stage;
use fcd_runtime::runtime::{LeaseState, Runtime, StoreSpec};
use fcd_testkit::{etcd::Cluster, invariants, stock};

/// One gateway process, killed when dropped.
struct Gateway {
    child: Child,
    address: String,
}

impl Drop for Gateway {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts gateway `i` on `store` and waits until it says where it listens.
fn start(stage: &Stage, store: &str, i: usize) -> Result<Gateway> {
    let config = format!(
        "runtime = {}\nregistry = \"registry.sqlite\"\nprincipal = \"user:nobody\"\n\n\
         [[contract]]\nprincipal = \"user:alice\"\ntool = \"git_diff\"\nfile = \"contract.json\"\n\n\
         [[server]]\nname = \"git\"\ntools = [\"git_diff\"]\ndestination = {}\n\n\
         [[server.release]]\nepochs = [{}]\ncommand = {}\ninstalled = {{ root = {}, strip = \"src/\" }}\n{}",
        serde_json::to_string(store)?,
        serde_json::to_string(&format!("local:{}", stage.repo_text))?,
        serde_json::to_string(&stage.epoch)?,
        serde_json::to_string(&stage.server())?,
        serde_json::to_string(&stage.release.site_packages.to_string_lossy())?,
        stage.http_table,
    );
    let path = stage.scratch.join(format!("gateway-{i}.toml"));
    std::fs::write(&path, config)?;
    let log = stage.scratch.join(format!("gateway-{i}.log"));
    let mut child = Command::new(&stage.fcd)
        .args(["gateway", "serve", "--config"])
        .arg(&path)
        .args(["--listen", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log)?)
        .spawn()
        .context("fcd gateway serve does not start")?;
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        if let Some(rest) = text.split("fcd gateway: listening on ").nth(1) {
            let address = rest.split_whitespace().next().unwrap_or_default().to_owned();
            return Ok(Gateway { child, address });
        }
        if Instant::now() > deadline || child.try_wait()?.is_some() {
            let _ = child.kill();
            bail!("gateway {i} did not say where it listens: {text}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// What one phase measured.
struct Phase {
    calls: usize,
    ran: usize,
    refused: BTreeMap<String, usize>,
    seconds: f64,
    p50: f64,
    p95: f64,
}

/// Every gateway's clients at once; `kill_after` kills the leader that long after the start.
fn phase(stage: &Stage, gateways: &[Gateway], sessions: usize, calls: usize, cluster: &mut Cluster, kill_after: Option<Duration>) -> Result<Phase> {
    let started = Instant::now();
    let reports: Vec<Result<Value>> = std::thread::scope(|s| {
        let drivers: Vec<_> = gateways
            .iter()
            .map(|g| {
                let plan = json!({"url": format!("http://{}/mcp", g.address), "headers": {"Authorization": format!("Bearer {}", stage.token)},
                    "sessions": sessions, "calls": vec![stage.call.clone(); calls]});
                s.spawn(move || stock::drive(&plan).map_err(|e| anyhow!(e)))
            })
            .collect();
        if let Some(after) = kill_after {
            std::thread::sleep(after);
            match cluster.leader() {
                Some(leader) => {
                    cluster.kill(leader);
                    println!("  killed member {leader}, the leader, {:.1} s in", started.elapsed().as_secs_f64());
                }
                None => println!("  no leader to kill {:.1} s in", started.elapsed().as_secs_f64()),
            }
        }
        drivers.into_iter().map(|d| d.join().unwrap_or_else(|_| Err(anyhow!("a client driver panicked")))).collect()
    });
    let seconds = started.elapsed().as_secs_f64();
    let mut out = Phase { calls: 0, ran: 0, refused: BTreeMap::new(), seconds, p50: 0.0, p95: 0.0 };
    let mut micros = Vec::new();
    for report in reports {
        let report = report?;
        if let Some(failed) = report["failed"].as_array().filter(|f| !f.is_empty()) {
            bail!("client sessions ended early: {failed:?}");
        }
        for result in report["results"].as_array().context("a report without results")? {
            out.calls += 1;
            if result["error"] == false {
                out.ran += 1;
                micros.extend(result["micros"].as_f64());
            } else {
                let code = result["structured"]["fcd"]["refused"].as_str().unwrap_or("not fcd's").to_owned();
                *out.refused.entry(code).or_default() += 1;
            }
        }
    }
    micros.sort_by(f64::total_cmp);
    if let (Some(_), len) = (micros.first(), micros.len()) {
        out.p50 = micros[len / 2] / 1000.0;
        out.p95 = micros[(len * 95 / 100).min(len - 1)] / 1000.0;
    }
    Ok(out)
}

pub fn run(root: &std::path::Path, gateways: usize, sessions: usize, calls: usize) -> Result<bool> {
    let stage = Stage::set(root, "bench-scale-out")?;
    let mut cluster = Cluster::start().map_err(|e| anyhow!("cannot start a 3-member etcd cluster: {e}"))?;
    let store = cluster.store("fcd-bench-scale-out");
    let started: Vec<Gateway> = (0..gateways).map(|i| start(&stage, &store, i)).collect::<Result<_>>()?;
    println!(
        "{gateways} gateways (fcd gateway serve --listen, bearer tokens), each with its own mcp-server-git {} and {sessions} official-SDK sessions",
        crate::bench_gateway::RELEASE
    );
    println!("of {calls} safe git_diff calls each, on one runtime store: a 3-member etcd cluster (data on {}).", cluster.data_root().display());
    println!("{:<24} {:>7} {:>7} {:>9} {:>9} {:>9}  refused", "phase", "calls", "ran", "calls/s", "p50 ms", "p95 ms");
    let steady = phase(&stage, &started, sessions, calls, &mut cluster, None)?;
    let kill_after = Duration::from_secs_f64(steady.seconds / 3.0);
    let faulted = phase(&stage, &started, sessions, calls, &mut cluster, Some(kill_after))?;
    for (name, p) in [("steady", &steady), ("leader killed at 1/3", &faulted)] {
        println!("{name:<24} {:>7} {:>7} {:>9.0} {:>9.1} {:>9.1}  {:?}", p.calls, p.ran, p.ran as f64 / p.seconds, p.p50, p.p95, p.refused);
    }
    drop(started);

    // The whole history of both phases, read back through a member that is still up.
    let rt = Runtime::open_store(&StoreSpec::parse(&store).map_err(|e| anyhow!(e))?).map_err(|e| anyhow!("{e}"))?;
    invariants::check_invariants(&rt, &invariants::Model::default(), &[stage.epoch.as_str()]).map_err(|e| anyhow!("invariants: {e}"))?;
    invariants::check_audit(&rt).map_err(|e| anyhow!("audit: {e}"))?;
    let leases = rt.leases().map_err(|e| anyhow!("{e}"))?;
    let completed = leases.iter().filter(|l| l.state == LeaseState::Completed).count();
    let fenced = leases.iter().filter(|l| l.used).count();
    let checked = Command::new(&stage.fcd).args(["audit", "check", "--store", &store]).output()?;
    println!(
        "history: {} leases, {fenced} fenced, {completed} completed; invariants 1-6 hold; fcd audit check exit {}",
        leases.len(),
        checked.status.code().unwrap_or(-1)
    );
    let ran = steady.ran + faulted.ran;
    let refused_only_storage = steady.refused.keys().chain(faulted.refused.keys()).all(|code| code == "storage");
    let ok = checked.status.success() && completed == ran && fenced >= ran && refused_only_storage && steady.ran == steady.calls;
    if !ok {
        println!("MISS: every steady call runs, refusals are the store's outage only, each call that ran completed once, and the audit checks");
    }
    println!("reproduce: cargo run --release --package xtask -- bench-scale-out --gateways {gateways} --sessions {sessions} --calls {calls}");
    Ok(ok)
}
