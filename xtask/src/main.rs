//! `cargo xtask`: the project's own jobs that are not part of `fcd` itself —
//! the release job that runs the pipeline on official releases, the
//! benchmark that checks the latency targets, and the fuzz targets' seeds.
//!
//! Exit codes: 0 everything as expected, 1 an expectation failed (a decision,
//! a regeneration, an escalation), 2 an error (bad input, a refused download,
//! a tool that did not run).

mod bench;
mod bench_etcd;
mod bench_gateway;
mod bench_gateway_http;
mod bench_runtime;
mod bench_scale_out;
mod fetch;
mod fuzz_seeds;

mod oracle_check;
mod progress;
mod release_history;
mod releases;
mod sarif;
mod schemas;
mod triage;
mod versions;

use fcd::release::manifest;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

#[derive(Debug, Parser)]
#[command(name = "cargo xtask", about = "fcd's release job and benchmarks", max_term_width = 100)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Fetches every development release listed in profiles/*/releases.toml, verifies its
    /// digest, then registers, regenerates and certifies it with the `fcd` binary. With
    /// --history: every published release of each profile's tool instead (releases.toml's
    /// [history]), registered in process, then grouped into a triage.
    Releases(ReleasesArgs),
    /// Times registration and certification in process. Run it optimized:
    /// `cargo run --release --package xtask -- bench`.
    Bench(BenchArgs),
    /// Times the admission runtime against raw SQLite at the same durability. Run it optimized:
    /// `cargo run --release --package xtask -- bench-runtime`.
    BenchRuntime {
        /// Operations per connection (SQLite).
        #[arg(long, default_value_t = 2_000)]
        operations: usize,
        /// `sqlite` (the default), or `etcd` (a 3-member cluster started for the run, or
        /// `etcd:ENDPOINTS` for one already running).
        #[arg(long, default_value = "sqlite")]
        store: String,
        /// Seconds each etcd measurement runs.
        #[arg(long, default_value_t = 3.0)]
        seconds: f64,
    },
    /// Several gateway processes on one etcd cluster, many clients each, steady and
    /// with the leader killed: calls/s, p50 and p95, and the invariants over the
    /// whole history. `cargo run --release --package xtask -- bench-scale-out`.
    BenchScaleOut {
        /// Gateway processes.
        #[arg(long, default_value_t = 8)]
        gateways: usize,
        /// Concurrent client sessions per gateway.
        #[arg(long, default_value_t = 4)]
        sessions: usize,
        /// Calls each session makes in each phase.
        #[arg(long, default_value_t = 25)]
        calls: usize,
    },
    /// Times a safe git_diff call through `fcd gateway serve` against the same call sent
    /// directly to the same stock server (mcp-server-git from PyPI, the official MCP
    /// Python client), in one run: p50 and p95 of each.
    BenchGateway {
        /// Timed calls on each path.
        #[arg(long, default_value_t = 300)]
        calls: usize,
        /// Where the runtime's SQLite store goes (default: under target/, on the workspace's
        /// disk); a RAM disk such as /dev/shm separates the commits' fsyncs from the rest.
        #[arg(long, value_name = "DIR")]
        runtime_dir: Option<std::path::PathBuf>,
    },
    /// Writes the fuzz targets' seed corpora to fuzz/corpus/ (fixtures and their
    /// mutations, profiles, canonical calls, real summaries, certificates and lease tokens).
    FuzzSeeds,
    /// Writes the JSON Schemas of profile.toml, tests/*.toml, releases.toml and
    /// canonical.json to schemas/, generated from the types that read them.
    Schemas,
}

#[derive(Debug, clap::Args)]
struct ReleasesArgs {
    /// Only these profiles (directory names under the profiles directory); repeatable.
    /// Default: every profile that has a releases.toml.
    #[arg(long = "profile", value_name = "ID")]
    profiles: Vec<String>,
    /// The directory holding the profiles, for profiles kept outside the workspace
    /// (default: profiles/ in the workspace).
    #[arg(long = "profiles", value_name = "DIR")]
    profiles_dir: Option<PathBuf>,
    /// Where verified artifacts, unpacked releases and summaries are kept
    /// (default: .cache/official in the workspace).
    #[arg(long, value_name = "DIR")]
    cache: Option<PathBuf>,
    /// Output: a table, JSON Lines (one object per release) or SARIF.
    #[arg(long, value_enum, default_value_t)]
    format: Format,
    /// Also judge every automatic registration with the independent oracle
    /// (fcd-oracle); any disagreement or refusal fails the job, and a
    /// profile the oracle has no judge for is listed as unjudged.
    #[arg(long)]
    oracle: bool,
    /// The SQLite registry admitted summaries go to (default: .cache/registry.sqlite).
    #[arg(long, value_name = "FILE")]
    registry: Option<PathBuf>,
    /// A release whose escalation a person reviewed (its id); the escalation is
    /// recorded in the registry and no longer fails the job. Repeatable.
    #[arg(long = "accept-escalation", value_name = "RELEASE")]
    accept: Vec<String>,
    /// Also run a release not listed in releases.toml: PROFILE=pypi:NAME==VERSION,
    /// PROFILE=npm:NAME@VERSION or PROFILE=git:OWNER/REPO@TAG. Repeatable.
    #[arg(long = "release", value_name = "PROFILE=SOURCE", value_parser = parse_extra)]
    extra: Vec<(String, manifest::Release)>,
    /// A local bare mirror for [release.git] releases: OWNER/REPO=DIR (repeatable).
    /// Git releases whose repository has no mirror are listed as not run.
    #[arg(long = "git-mirror", value_name = "OWNER/REPO=DIR", value_parser = parse_mirror)]
    git_mirrors: Vec<(String, PathBuf)>,
    /// Triage every published release (releases.toml's [history]): escalations grouped by
    /// cause, registrations by regime, failures by stage; nothing is pinned or expected.
    #[arg(long, conflicts_with_all = ["registry", "accept", "extra"])]
    history: bool,
    /// With --history: worker threads (default: the available parallelism).
    #[arg(long, value_name = "N", requires = "history", value_parser = clap::value_parser!(u16).range(1..))]
    jobs: Option<u16>,
    /// With --history: ask the registries for their version lists even when the cached
    /// lists (under the cache, kept a day) are fresh.
    #[arg(long, requires = "history")]
    refresh_versions: bool,
}

fn parse_extra(text: &str) -> Result<(String, manifest::Release), String> {
    manifest::parse_extra(text).map_err(|e| format!("{e:#}"))
}

fn parse_mirror(text: &str) -> Result<(String, PathBuf), String> {
    match text.split_once('=') {
        Some((repo, dir)) if repo.contains('/') && !dir.is_empty() => Ok((repo.to_owned(), PathBuf::from(dir))),
        _ => Err(format!("`{text}` is not OWNER/REPO=DIR")),
    }
}

#[derive(Debug, clap::Args)]
struct BenchArgs {
    /// Timed iterations per certify operation; registration runs a hundredth of
    /// them (at least 20), since one registration reads and parses the release.
    #[arg(long, default_value_t = 20_000, value_parser = clap::value_parser!(u32).range(1..))]
    iterations: u32,
}

/// How a report is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum Format {
    /// A table for people.
    #[default]
    Text,
    /// JSON Lines, one object per release.
    Json,
    /// SARIF 2.1.0, one run per profile, results at the escalation anchors.
    Sarif,
}

/// The workspace root: the parent of this crate's directory.
pub fn workspace_root() -> &'static Path {
    let manifest_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest_dir.parent().unwrap_or(manifest_dir)
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Releases(a) if a.history => release_history::run(&release_history::Options {
            profiles: a.profiles,
            git_mirrors: a.git_mirrors.into_iter().collect(),
            cache: a.cache.unwrap_or_else(|| workspace_root().join(".cache/official")),
            format: a.format,
            jobs: a.jobs.map(usize::from),
            refresh: a.refresh_versions,
            profiles_dir: a.profiles_dir.unwrap_or_else(|| workspace_root().join("profiles")),
            oracle: a.oracle,
        }),
        Command::Releases(a) => {
            let cache = a.cache.unwrap_or_else(|| workspace_root().join(".cache/official"));
            releases::run(&releases::Options {
                profiles: a.profiles,
                profiles_dir: a.profiles_dir.unwrap_or_else(|| workspace_root().join("profiles")),
                oracle: a.oracle,
                registry: a.registry.unwrap_or_else(|| workspace_root().join(".cache/registry.sqlite")),
                accept: a.accept,
                extra: a.extra,
                git_mirrors: a.git_mirrors.into_iter().collect(),
                cache,
                format: a.format,
            })
        }
        Command::Bench(a) => bench::run(a.iterations as usize),
        Command::BenchRuntime { operations, store, seconds } => match store.as_str() {
            "sqlite" => bench_runtime::run(operations),
            etcd => bench_etcd::run(etcd, seconds),
        },
        Command::BenchGateway { calls, runtime_dir } => bench_gateway::Stage::set(workspace_root(), "bench-gateway").and_then(|stage| {
            let stdio = bench_gateway::run(&stage, calls, runtime_dir.as_deref())?;
            // Over HTTP against a baseline that speaks HTTP itself (mcp-server-git speaks stdio only).
            let http = bench_gateway_http::run(workspace_root(), &stage.fcd, calls, &stage.http_table, &stage.token)?;
            Ok(stdio && http)
        }),
        Command::BenchScaleOut { gateways, sessions, calls } => bench_scale_out::run(workspace_root(), gateways, sessions, calls),
        Command::FuzzSeeds => fuzz_seeds::run(workspace_root()),
        Command::Schemas => schemas::run(workspace_root()),
    };
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}
