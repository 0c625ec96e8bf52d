//! `cargo xtask bench-runtime --store etcd`: the runtime on a 3-member etcd
//! cluster at 1, 8 and 64 concurrent clients — admissions plus completions
//! per second and the p95 latency of each — next to the raw etcd floor on the
//! same cluster in the same run: one compare-and-put transaction per request,
//! each client on its own key. The paper's replicated registry is the anchor:
//! 256.7 requests/s at 64 clients (p95 248 ms) with per-lease marker keys.

use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow};
use etcd_client::{Client, Compare, CompareOp, Txn, TxnOp};

use fcd_runtime::runtime::{EtcdAccess, EvidenceKind, Runtime, StoreSpec};
use fcd_testkit::etcd::Cluster;

const LEVELS: [usize; 3] = [1, 8, 64];
const PAPER_RATE: f64 = 256.7;
const PAPER_P95_MS: f64 = 248.0;

fn p95(mut ms: Vec<f64>) -> f64 {
    if ms.is_empty() {
        return f64::NAN;
    }
    ms.sort_by(f64::total_cmp);
    ms[((ms.len() as f64 * 0.95).ceil() as usize).clamp(1, ms.len()) - 1]
}

/// Requests per second and p95 latency (ms) of `clients` threads running `step` until `seconds` pass.
fn measure<S>(
    clients: usize,
    seconds: f64,
    open: impl Fn(usize) -> Result<S> + Sync,
    step: impl Fn(&mut S, &mut Vec<f64>) -> Result<()> + Sync,
) -> Result<(f64, f64)> {
    let deadline = Duration::from_secs_f64(seconds);
    let barrier = std::sync::Barrier::new(clients);
    let (count, latencies, elapsed) = std::thread::scope(|s| -> Result<(usize, Vec<f64>, f64)> {
        let handles: Vec<_> = (0..clients)
            .map(|i| {
                let (open, step, barrier) = (&open, &step, &barrier);
                s.spawn(move || -> Result<(Vec<f64>, f64)> {
                    let mut state = open(i)?;
                    barrier.wait();
                    let start = Instant::now();
                    let mut latencies = Vec::new();
                    while start.elapsed() < deadline {
                        step(&mut state, &mut latencies)?;
                    }
                    Ok((latencies, start.elapsed().as_secs_f64()))
                })
            })
            .collect();
        let mut all = Vec::new();
        let mut longest = 0f64;
        for h in handles {
            let (l, t) = h.join().map_err(|_| anyhow!("a bench client panicked"))??;
            all.extend(l);
            longest = longest.max(t);
        }
        Ok((all.len(), all, longest))
    })?;
    Ok((count as f64 / elapsed, p95(latencies)))
}

/// One client of the raw floor: its own connection and key.
struct Raw {
    rt: tokio::runtime::Runtime,
    client: Client,
    key: String,
    rev: i64,
}

fn raw_client(endpoints: &[String], access: &EtcdAccess, key: String) -> Result<Raw> {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let options = access.connect_options().map_err(anyhow::Error::msg)?;
    let client = rt.block_on(Client::connect(endpoints, Some(options))).context("etcd connect")?;
    Ok(Raw { rt, client, key, rev: 0 })
}

/// One compare-and-put: the key still has the revision this client last wrote.
fn raw_step(raw: &mut Raw, latencies: &mut Vec<f64>) -> Result<()> {
    let t = Instant::now();
    let txn = Txn::new().when([Compare::mod_revision(raw.key.clone(), CompareOp::Equal, raw.rev)]).and_then([TxnOp::put(raw.key.clone(), "v", None)]);
    let mut kv = raw.client.kv_client();
    let resp = raw.rt.block_on(kv.txn(txn))?;
    if !resp.succeeded() {
        return Err(anyhow!("the floor's compare failed on {}", raw.key));
    }
    raw.rev = resp.header().map(|h| h.revision()).unwrap_or_default();
    latencies.push(t.elapsed().as_secs_f64() * 1e3);
    Ok(())
}

const NOW: u64 = 1_900_000_000;

/// A fresh runtime key space with one source epoch, a successor and evidence between them; returns the evidence id.
fn setup(spec: &StoreSpec) -> Result<i64> {
    let mut rt = Runtime::open_store(spec).map_err(anyhow::Error::msg)?;
    rt.register_epoch("e", "tool", "sha256:a", "sha256:c", "sha256:s").map_err(anyhow::Error::msg)?;
    rt.register_epoch("f", "tool", "sha256:a2", "sha256:c2", "sha256:s2").map_err(anyhow::Error::msg)?;
    rt.add_evidence(EvidenceKind::Edge, "tool", None, "e", "f", 0, u64::MAX / 4).map_err(anyhow::Error::msg)
}

/// One call: its formation, admission, final-hop fence and completion, each
/// timed as one request (a formed call is admitted at most once, so each
/// admission is of a call formed for it: on the source, capturing the
/// successor through evidence `rt.1`).
fn runtime_step(rt: &mut (Runtime, i64), latencies: &mut Vec<f64>) -> Result<()> {
    let t = Instant::now();
    let formation = rt.0.form("snap", "tool", "sha256:args", "user:a", "e", Some(rt.1), NOW, 1 << 40).map_err(anyhow::Error::msg)?;
    let formed = Instant::now();
    let lease = rt.0.admit(formation, NOW).map_err(anyhow::Error::msg)?;
    let admitted = Instant::now();
    rt.0.fence(&lease.token, "sha256:a", "sha256:c", lease.generation, NOW).map_err(anyhow::Error::msg)?;
    let fenced = Instant::now();
    rt.0.complete(lease.id).map_err(anyhow::Error::msg)?;
    let completed = Instant::now();
    for (from, to) in [(t, formed), (formed, admitted), (admitted, fenced), (fenced, completed)] {
        latencies.push((to - from).as_secs_f64() * 1e3);
    }
    Ok(())
}

/// The keys one call's transactions compare and write, printed so a reader
/// sees that independent calls share no written key: two runtimes (two
/// writers) each run one call on the same epoch, and any key both write,
/// or one writes and the other compares, is reported.
fn call_keys(spec: &StoreSpec, evidence: i64) -> Result<bool> {
    let mut runs = Vec::new();
    for _ in 0..2 {
        let mut rt = (Runtime::open_store(spec).map_err(anyhow::Error::msg)?, evidence);
        runtime_step(&mut rt, &mut Vec::new())?;
        runs.push(rt.0.take_key_log());
    }
    println!("keys of one call (the first of two writers; ids and writer names vary):");
    let mut steps = ["formation", "admission", "fence", "completion"].into_iter();
    for txn in &runs[0] {
        // A reservation writes only the writer's claim key; the call's decisions follow in order.
        let step = if txn.read.is_empty() && txn.written.iter().all(|k| k.starts_with("ids/claims/")) { "id block" } else { steps.next().unwrap_or("?") };
        let read = if txn.read.is_empty() { "nothing".to_owned() } else { txn.read.join(" ") };
        println!("  {step:<10} compares {read}");
        println!("  {:<10} writes   {}", "", txn.written.join(" "));
    }
    let keys = |run: &[fcd_runtime::runtime::TxnKeys], read: bool| -> std::collections::BTreeSet<String> {
        run.iter().flat_map(|t| if read { t.read.clone() } else { t.written.clone() }).collect()
    };
    let (a_w, b_w, a_r, b_r) = (keys(&runs[0], false), keys(&runs[1], false), keys(&runs[0], true), keys(&runs[1], true));
    let shared: Vec<&String> = a_w.intersection(&b_w).chain(a_w.intersection(&b_r)).chain(b_w.intersection(&a_r)).collect();
    if shared.is_empty() {
        println!("  two independent calls: no key written by one is written or compared by the other");
    } else {
        println!("  SHARED between two independent calls: {shared:?}");
    }
    Ok(shared.is_empty())
}

pub fn run(store: &str, seconds: f64) -> Result<bool> {
    if cfg!(debug_assertions) {
        eprintln!("warning: a debug build; run `cargo run --release --package xtask -- bench-runtime --store etcd` for figures");
    }
    let (_cluster, endpoints, access) = if store == "etcd" {
        let cluster = Cluster::start().map_err(|e| anyhow!("cannot start a 3-member etcd cluster: {e}"))?;
        let endpoints = cluster.endpoints();
        (Some(cluster), endpoints, EtcdAccess::default())
    } else {
        match StoreSpec::parse(store).map_err(anyhow::Error::msg)? {
            StoreSpec::Etcd { endpoints, access, .. } => (None, endpoints, access),
            StoreSpec::Sqlite(_) => return Err(anyhow!("--store sqlite takes no file; give `sqlite`, `etcd` or `etcd:ENDPOINTS`")),
        }
    };
    let run_id = std::process::id();
    println!("fcd runtime bench: etcd at {}, {seconds} s per measurement", endpoints.join(","));
    println!("A call is four decisions (formation, admission, fence, completion); the rate counts decisions, the p95 is of one decision.");
    println!("clients | raw compare-and-put txn/s   p95 ms | call decisions /s   p95 ms | ratio (target >= 0.50)");
    let mut all_pass = true;
    for clients in LEVELS {
        let eps = &endpoints;
        let (raw_rate, raw_p95) = measure(clients, seconds, |i| raw_client(eps, &access, format!("/fcd-bench/{run_id}/raw-{clients}/{i}")), raw_step)?;
        let spec = StoreSpec::Etcd { endpoints: endpoints.clone(), prefix: format!("/fcd-bench/{run_id}/runtime-{clients}/"), access: access.clone() };
        let evidence = setup(&spec)?;
        let (rate, p95) = measure(clients, seconds, |_| Ok((Runtime::open_store(&spec).map_err(anyhow::Error::msg)?, evidence)), runtime_step)?;
        let ratio = rate / raw_rate;
        let pass = ratio >= 0.5;
        all_pass &= pass;
        println!("{clients:>7} | {raw_rate:>25.0} {raw_p95:>8.1} | {rate:>17.0} {p95:>8.1} | {ratio:.2} {}", if pass { "PASS" } else { "MISS" });
        if clients == 64 {
            let pass = rate >= 4.0 * PAPER_RATE && p95 < PAPER_P95_MS;
            all_pass &= pass;
            println!(
                "        at 64 clients: {:.1}x the paper's replicated registry ({PAPER_RATE} requests/s, p95 {PAPER_P95_MS} ms; target >= 4x and a lower p95) {}",
                rate / PAPER_RATE,
                if pass { "PASS" } else { "MISS" }
            );
        }
    }
    let spec = StoreSpec::Etcd { endpoints: endpoints.clone(), prefix: format!("/fcd-bench/{run_id}/keys/"), access };
    all_pass &= call_keys(&spec, setup(&spec)?)?;
    println!("reproduce: cargo run --release --package xtask -- bench-runtime --store etcd");
    Ok(all_pass)
}
