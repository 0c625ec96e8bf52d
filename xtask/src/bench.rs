//! `cargo xtask bench`: in-process latency of the two operations that have
//! targets — registering one release (< 50 ms, download excluded) and
//! certifying one call (p50 < 100 µs) — so a regression shows up as a number,
//! not as a flaky timed test (there are none).
//!
//! Reproduce optimized: `cargo run --release --package xtask -- bench`.

use std::fmt::Write as _;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use fcd_compiler::profile::Profile;
use fcd_compiler::register::{Registration, Request, register};
use fcd_model::summary::Summary;
use fcd_verify::canonical_calls::{self, Canonical};
use fcd_verify::certificate::{self, Issue};
use fcd_verify::verdict::{Verdict, check_call, decide};

use fcd::release::manifest::{self, Release};

/// The profile the benchmark measures: the one with bundled fixtures.
const PROFILE: &str = "profiles/git-diff";
const FIXTURES: [&str; 2] = ["fixtures/git-diff/unguarded", "fixtures/git-diff/guarded"];
/// Targets, in microseconds.
const CERTIFY_TARGET_US: f64 = 100.0;
const REGISTER_TARGET_US: f64 = 50_000.0;
const REPRODUCE: &str = "cargo run --release --package xtask -- bench";

/// Latency figures of one operation.
struct Stats {
    n: usize,
    p50: Duration,
    p95: Duration,
    mean: Duration,
}

/// Which target a row is judged against.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Target {
    /// p95 of one registration below 50 ms.
    Register,
    /// p50 of one decision below 100 µs.
    Decide,
    /// The same target for a decision with its signed certificate.
    DecideSign,
}

impl Target {
    const ALL: [Target; 3] = [Target::Decide, Target::DecideSign, Target::Register];

    fn describe(self) -> &'static str {
        match self {
            Target::Register => "register one release, download excluded: p95 < 50 ms",
            Target::Decide => "certify (decide): p50 < 100 µs",
            Target::DecideSign => "certify with signing (decide + certificate::issue): p50 < 100 µs",
        }
    }

    fn short(self) -> &'static str {
        match self {
            Target::Register => "p95 < 50000 µs",
            Target::Decide | Target::DecideSign => "p50 < 100 µs",
        }
    }

    /// The figure the target is judged on.
    fn figure(self, s: &Stats) -> Duration {
        match self {
            Target::Register => s.p95,
            Target::Decide | Target::DecideSign => s.p50,
        }
    }

    fn limit_us(self) -> f64 {
        match self {
            Target::Register => REGISTER_TARGET_US,
            Target::Decide | Target::DecideSign => CERTIFY_TARGET_US,
        }
    }
}

struct Row {
    operation: String,
    stats: Stats,
    target: Target,
}

impl Row {
    fn passes(&self) -> bool {
        us(self.target.figure(&self.stats)) < self.target.limit_us()
    }
}

/// A release source the benchmark registers.
struct Source {
    label: String,
    request: Request,
}

pub fn run(iterations: usize) -> Result<bool> {
    if cfg!(debug_assertions) {
        eprintln!("warning: xtask was built without optimizations; these figures say little. Reproduce with `{REPRODUCE}`.\n");
    }
    let root = crate::workspace_root();
    let profile_dir = root.join(PROFILE);
    let profile = Profile::load(&profile_dir)?;
    let canonical_path = profile_dir.join(canonical_calls::FILE);
    let canonical = Canonical::load(&canonical_path)?;
    let (sources, missing) = sources(root, &profile_dir, &canonical)?;
    let register_iterations = (iterations / 100).max(20);
    let mut rows = Vec::new();
    let mut summaries = Vec::new();
    for source in &sources {
        let stats = measure(5, register_iterations, || register(&profile, &source.request));
        rows.push(Row { operation: format!("register {}", source.label), stats, target: Target::Register });
        match register(&profile, &source.request)? {
            Registration::Registered(s) => summaries.push((source.label.clone(), s)),
            Registration::Escalated(e) => eprintln!("note: {} escalated ({e}); it is not certified", source.label),
        }
    }
    rows.extend(certify_rows(&summaries, &canonical, &canonical_path, iterations)?);
    print!("{}", report(&rows, &missing, iterations, register_iterations));
    Ok(true)
}

/// The bundled fixtures, and the official releases that `cargo xtask releases`
/// has unpacked into the cache; the second list names the releases not there.
fn sources(root: &Path, profile_dir: &Path, canonical: &Canonical) -> Result<(Vec<Source>, Vec<String>)> {
    let mut sources: Vec<Source> = FIXTURES
        .iter()
        .map(|f| Source { label: (*f).to_owned(), request: Request { source: root.join(f), release: Some((*f).to_owned()), ..Request::default() } })
        .collect();
    let mut missing = Vec::new();
    let releases = manifest::load(&profile_dir.join(manifest::FILE), &canonical.regimes)?;
    for release in &releases {
        match cached_root(&root.join(".cache/official").join(&release.id)) {
            Some(dir) => sources.push(Source { label: release.id.clone(), request: official_request(release, dir) }),
            None => missing.push(release.id.clone()),
        }
    }
    Ok((sources, missing))
}

/// The single folder inside an unpacked release, if the release is in the cache.
fn cached_root(dir: &Path) -> Option<PathBuf> {
    let entries: Vec<PathBuf> = std::fs::read_dir(dir).ok()?.filter_map(|e| e.ok().map(|e| e.path())).collect();
    match entries.as_slice() {
        [one] if one.is_dir() => Some(one.clone()),
        _ => None,
    }
}

fn official_request(release: &Release, dir: PathBuf) -> Request {
    let artifact_digest = match &release.source {
        manifest::Source::Pypi(p) => Some(format!("sha256:{}", p.sha256)),
        manifest::Source::Npm(n) => Some(format!("sha256:{}", n.sha256)),
        manifest::Source::Git(_) | manifest::Source::Dir(_) | manifest::Source::Case(_) => None,
    };
    Request { source: dir, release: Some(release.id.clone()), artifact_digest, config: None }
}

/// Decide, and decide + sign for safe decisions, for every canonical call on every summary.
fn certify_rows(summaries: &[(String, Box<Summary>)], canonical: &Canonical, canonical_path: &Path, iterations: usize) -> Result<Vec<Row>> {
    let keys = tempfile::tempdir().context("cannot create a directory for the benchmark key")?;
    let key_path = keys.path().join("bench-key");
    certificate::keygen(&key_path)?;
    let key = certificate::load_signing_key(&key_path)?;
    let (env, contract) = (&canonical.env, &canonical.contract);
    let warmup = (iterations / 10).max(100);
    let mut rows = Vec::new();
    for (label, summary) in summaries {
        for name in canonical.calls.keys() {
            let call = canonical.call(name).with_context(|| format!("{}: no call {name}", canonical_path.display()))?;
            let input = fcd_verify::verdict::CallInput::new(call, canonical_path);
            let call = check_call(summary, &input)?;
            let decision = decide(&call, env, contract);
            let stats = measure(warmup, iterations, || decide(&call, env, contract));
            let verdict = decision.decision.as_str();
            rows.push(Row { operation: format!("decide {label} {name} ({verdict})"), stats, target: Target::Decide });
            if decision.decision != Verdict::Safe {
                continue;
            }
            let now = fcd::cli::unix_now(None);
            let stats = measure(warmup, iterations, || {
                let d = decide(&call, env, contract);
                let safe = d.certifiable().expect("the decision was safe above");
                let issue = Issue { call, env, contract, decision: safe, now, valid_for: 300, source: None };
                certificate::issue(&issue, &key)
            });
            rows.push(Row { operation: format!("decide+sign {label} {name}"), stats, target: Target::DecideSign });
        }
    }
    Ok(rows)
}

/// Runs `op` `warmup` times untimed, then `n` times timed one by one.
fn measure<T>(warmup: usize, n: usize, mut op: impl FnMut() -> T) -> Stats {
    for _ in 0..warmup {
        black_box(op());
    }
    let mut times = Vec::with_capacity(n);
    for _ in 0..n {
        let start = Instant::now();
        black_box(op());
        times.push(start.elapsed());
    }
    stats(times)
}

fn stats(mut times: Vec<Duration>) -> Stats {
    times.sort_unstable();
    let n = times.len();
    // Nearest rank: the smallest time that at least p of the samples do not exceed.
    let rank = |p: f64| times[((p * n as f64).ceil() as usize).clamp(1, n) - 1];
    let total: Duration = times.iter().sum();
    Stats { n, p50: rank(0.50), p95: rank(0.95), mean: total / n as u32 }
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn report(rows: &[Row], missing: &[String], iterations: usize, register_iterations: usize) -> String {
    let mut t = String::new();
    let build = if cfg!(debug_assertions) { "DEBUG build (not representative)" } else { "release build" };
    let _ = writeln!(
        t,
        "fcd bench, {build}, profile {PROFILE}: {iterations} timed iterations per certify row, {register_iterations} per register row, after warm-up"
    );
    let width = rows.iter().map(|r| r.operation.len()).max().unwrap_or(0);
    let _ = writeln!(t, "{:<width$}  {:>6}  {:>10}  {:>10}  {:>10}  target", "operation", "n", "p50 µs", "p95 µs", "mean µs");
    for r in rows {
        let _ = writeln!(
            t,
            "{:<width$}  {:>6}  {:>10.1}  {:>10.1}  {:>10.1}  {:<16} {}",
            r.operation,
            r.stats.n,
            us(r.stats.p50),
            us(r.stats.p95),
            us(r.stats.mean),
            r.target.short(),
            if r.passes() { "PASS" } else { "MISS" }
        );
    }
    for id in missing {
        let _ = writeln!(t, "(official release {id} is not in .cache/official: run `cargo xtask releases` to include it)");
    }
    let _ = writeln!(t, "\ntargets:");
    for target in Target::ALL {
        let judged: Vec<&Row> = rows.iter().filter(|r| r.target == target).collect();
        let worst = judged.iter().map(|r| us(target.figure(&r.stats))).fold(0.0, f64::max);
        let verdict = if judged.iter().all(|r| r.passes()) { "PASS" } else { "MISS" };
        let _ = writeln!(t, "  {:<62} {verdict} (worst {worst:.1} µs over {} rows)", target.describe(), judged.len());
    }
    let _ = writeln!(t, "reproduce: {REPRODUCE}");
    t
}
