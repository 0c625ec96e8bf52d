//! `cargo xtask bench-runtime`: admission throughput against the raw SQLite
//! floor at the same durability, with one connection and with four, and the
//! final-hop fence against the floor of its own parts (MAC check plus the
//! single-use write), all measured in the same run.

use std::path::Path;
use std::time::Instant;

use anyhow::{Context, Result};
use hmac::{Hmac, KeyInit, Mac};
use rusqlite::{Connection, TransactionBehavior, params};

use fcd_runtime::runtime::{EvidenceKind, Runtime};

const NOW: u64 = 1_900_000_000;

fn open_raw(path: &Path) -> Result<Connection> {
    let c = Connection::open(path)?;
    c.pragma_update(None, "journal_mode", "WAL")?;
    c.pragma_update(None, "synchronous", "FULL")?;
    c.busy_timeout(std::time::Duration::from_secs(30))?;
    c.execute_batch("CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)")?;
    Ok(c)
}

/// Raw `BEGIN IMMEDIATE; INSERT; COMMIT` transactions per second over `threads` connections.
fn raw_floor(dir: &Path, threads: usize, per_thread: usize) -> Result<f64> {
    let path = dir.join("raw.sqlite");
    open_raw(&path)?;
    let start = Instant::now();
    std::thread::scope(|s| -> Result<()> {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| -> Result<()> {
                    let mut c = open_raw(&path)?;
                    for i in 0..per_thread {
                        let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
                        tx.execute("INSERT INTO t (v) VALUES (?1)", params![format!("row-{i}")])?;
                        tx.commit()?;
                    }
                    Ok(())
                })
            })
            .collect();
        for h in handles {
            h.join().map_err(|_| anyhow::anyhow!("a floor thread panicked"))??;
        }
        Ok(())
    })?;
    Ok((threads * per_thread) as f64 / start.elapsed().as_secs_f64())
}

/// A store with `n` formed calls (a formed call is admitted at most once, so one per admission to time).
fn setup(path: &Path, n: usize) -> Result<Vec<i64>> {
    let mut rt = Runtime::open(path).map_err(anyhow::Error::msg)?;
    rt.register_epoch("e", "tool", "sha256:a", "sha256:c", "sha256:s").map_err(anyhow::Error::msg)?;
    rt.register_epoch("f", "tool", "sha256:a2", "sha256:c2", "sha256:s2").map_err(anyhow::Error::msg)?;
    let ev = rt.add_evidence(EvidenceKind::Edge, "tool", None, "e", "f", 0, u64::MAX / 4).map_err(anyhow::Error::msg)?;
    (0..n).map(|i| rt.form(&format!("snap-{i}"), "tool", "sha256:args", "user:a", "e", Some(ev), NOW, 1 << 40).map_err(anyhow::Error::msg)).collect()
}

/// Admissions and completions (two durable transactions each) per second over `threads` connections.
fn runtime_rate(dir: &Path, threads: usize, per_thread: usize) -> Result<f64> {
    let path = dir.join(format!("runtime-{threads}.sqlite"));
    let formations = setup(&path, threads * per_thread)?;
    let start = Instant::now();
    std::thread::scope(|s| -> Result<()> {
        let handles: Vec<_> = formations
            .chunks(per_thread.max(1))
            .map(|mine| {
                let path = &path;
                s.spawn(move || -> Result<()> {
                    let mut rt = Runtime::open(path).map_err(anyhow::Error::msg)?;
                    for &formation in mine {
                        let lease = rt.admit(formation, NOW).map_err(anyhow::Error::msg)?;
                        rt.complete(lease.id).map_err(anyhow::Error::msg)?;
                    }
                    Ok(())
                })
            })
            .collect();
        for h in handles {
            h.join().map_err(|_| anyhow::anyhow!("a runtime thread panicked"))??;
        }
        Ok(())
    })?;
    Ok((2 * threads * per_thread) as f64 / start.elapsed().as_secs_f64())
}

fn p50(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

/// Fence p50 and the p50 of its floor: one HMAC verification plus one single-use write transaction.
fn fence_times(dir: &Path, n: usize) -> Result<(f64, f64)> {
    let path = dir.join("fence.sqlite");
    let formations = setup(&path, n)?;
    let mut rt = Runtime::open(&path).map_err(anyhow::Error::msg)?;
    let leases: Vec<_> = formations.iter().map(|&f| rt.admit(f, NOW)).collect::<Result<_, _>>().map_err(anyhow::Error::msg)?;
    let mut fence = Vec::with_capacity(n);
    for l in &leases {
        let t = Instant::now();
        rt.fence(&l.token, "sha256:a", "sha256:c", l.generation, NOW).map_err(anyhow::Error::msg)?;
        fence.push(t.elapsed().as_secs_f64() * 1e6);
    }
    let mut c = open_raw(&dir.join("floor.sqlite"))?;
    c.execute("INSERT INTO t (v) VALUES ('used')", [])?;
    let key = [7u8; 32];
    let mut floor = Vec::with_capacity(n);
    for i in 0..n {
        let t = Instant::now();
        let mut mac = <Hmac<sha2::Sha256> as KeyInit>::new_from_slice(&key).context("hmac key")?;
        mac.update(format!("fcd-lease|{i}|nonce|e|sha256:a|sha256:c|1").as_bytes());
        let tag = mac.finalize().into_bytes();
        let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
        tx.execute("UPDATE t SET v = ?1 WHERE id = 1", params![format!("{}", tag[0])])?;
        tx.commit()?;
        floor.push(t.elapsed().as_secs_f64() * 1e6);
    }
    Ok((p50(fence), p50(floor)))
}

pub fn run(per_thread: usize) -> Result<bool> {
    if cfg!(debug_assertions) {
        eprintln!("warning: a debug build; run `cargo run --release --package xtask -- bench-runtime` for figures");
    }
    let dir = tempfile::tempdir_in(crate::workspace_root().join(".cache")).or_else(|_| tempfile::tempdir()).context("a scratch directory")?;
    println!("fcd runtime bench: SQLite WAL, synchronous=FULL, {per_thread} operations per connection, on {}", dir.path().display());
    for threads in [1usize, 4] {
        let floor = raw_floor(dir.path(), threads, per_thread)?;
        let rate = runtime_rate(dir.path(), threads, per_thread / 2)?;
        let ratio = rate / floor;
        println!(
            "{threads} connection(s): raw BEGIN IMMEDIATE/INSERT/COMMIT {floor:>9.0} tx/s | admissions+completions {rate:>9.0} /s | ratio {ratio:.2} (target >= 0.50) {}",
            if ratio >= 0.5 { "PASS" } else { "MISS" }
        );
    }
    let (fence, floor) = fence_times(dir.path(), per_thread)?;
    let ratio = fence / floor;
    println!(
        "fence p50 {fence:.1} us | floor (HMAC verify + single-use write) p50 {floor:.1} us | ratio {ratio:.2} (target <= 1.50) {}",
        if ratio <= 1.5 { "PASS" } else { "MISS" }
    );
    println!("reproduce: cargo run --release --package xtask -- bench-runtime");
    Ok(true)
}
