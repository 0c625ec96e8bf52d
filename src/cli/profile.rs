//! `fcd profile test`, `fcd profile init` and `fcd profile check-releases`.

use std::path::PathBuf;

use fcd_frontends::Lang;

use super::{Format, Io, Status, print, print_json, write_atomic};
use crate::profile_test;
use fcd_model::error::InputError;

#[derive(Debug, clap::Subcommand)]
pub enum ProfileCommand {
    /// Runs a profile against its fixtures and the outcomes declared in DIR/tests/*.toml.
    Test {
        /// The profile directory.
        dir: PathBuf,
        /// Output: text for people (every case's decisions), or one JSON document.
        #[arg(long, value_enum, default_value_t)]
        format: Format,
        /// Only this case (repeatable); a case it compares its rules with runs too.
        #[arg(long = "case", value_name = "NAME")]
        cases: Vec<String>,
        /// Text output shows only the failed cases (the counts still cover every case run).
        #[arg(long)]
        failures: bool,
    },
    /// Writes a starting profile for one handler: its region, and its inventory filled in
    /// from the release's source; every word to review is a TODO and the one rule answers UNKNOWN.
    Init {
        /// The release's language: python, go, csharp, javascript or typescript.
        #[arg(long)]
        lang: String,
        /// Release root: unpacked sdist or npm package, or the repository at a tag.
        #[arg(long)]
        source: PathBuf,
        /// The handler function (the region `handler`); without it, what runs for the tool:
        /// its route, registered callback or dispatcher case, whichever the release has once.
        #[arg(long)]
        function: Option<String>,
        /// The MCP tool name the handler serves.
        #[arg(long)]
        tool: String,
        /// The new profile's directory (its name is the profile's id); it gets DIR/profile.toml,
        /// which must not exist yet. Without it, the profile is printed.
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Registers, regenerates (in a second process) and certifies every release DIR/releases.toml
    /// lists, with this binary alone; each outcome is compared with what releases.toml and
    /// canonical.json expect. Exit 1 when one differs.
    CheckReleases {
        /// The profile directory (profile.toml, canonical.json, releases.toml).
        dir: PathBuf,
        /// Where verified artifacts are kept between runs (default: a scratch directory, removed after).
        #[arg(long)]
        cache: Option<PathBuf>,
        /// The SQLite registry summaries are admitted to and outcomes recorded in (default: a
        /// scratch one); with a kept registry, a release that registered before and escalates now differs.
        #[arg(long)]
        registry: Option<PathBuf>,
        /// OWNER/REPO=PATH: a local bare git mirror for the [release.git] releases of that repository
        /// (repeatable); a git release without one is listed as not run.
        #[arg(long = "git-mirror", value_name = "OWNER/REPO=PATH")]
        git_mirrors: Vec<String>,
        /// A release id whose escalation you reviewed and accept (repeatable).
        #[arg(long, value_name = "RELEASE")]
        accept: Vec<String>,
        /// Output: a table for people, or one JSON document (the outcomes).
        #[arg(long, value_enum, default_value_t)]
        format: Format,
    },
}

pub fn run(c: ProfileCommand, io: &mut Io<'_>) -> Result<Status, InputError> {
    match c {
        ProfileCommand::CheckReleases { dir, cache, registry, git_mirrors, accept, format } => {
            check_releases(&CheckReleases { dir, cache, registry, git_mirrors, accept, format }, io)
        }
        ProfileCommand::Test { dir, format, cases, failures } => {
            let report = profile_test::run_cases(&dir, &cases)?;
            match format {
                Format::Json => print_json(io, &serde_json::to_value(&report).unwrap_or_default())?,
                Format::Text => print(io, &report.text(failures))?,
            }
            Ok(if report.passed() { Status::Success } else { Status::Refused })
        }
        ProfileCommand::Init { lang, source, function, tool, out } => {
            let language = Lang::from_name(&lang).ok_or_else(|| InputError::new("--lang", format!("no frontend for language `{lang}`")))?;
            let id = match &out {
                Some(dir) => dir.file_name().and_then(|n| n.to_str()).map(str::to_owned).ok_or_else(|| InputError::new(dir, "--out names no directory"))?,
                None => tool.replace('_', "-"),
            };
            let init = fcd_compiler::init::Init { lang: language, source: &source, function: function.as_deref(), tool: &tool, id: &id };
            let text = fcd_compiler::init::starting_profile(&init)?;
            match out {
                Some(dir) => {
                    let file = dir.join(fcd_compiler::profile::PROFILE_FILE);
                    if file.exists() {
                        return Err(InputError::new(&file, "already exists: init writes a new profile only"));
                    }
                    std::fs::create_dir_all(&dir).map_err(|e| InputError::new(&dir, format!("cannot create: {e}")))?;
                    write_atomic(&file, text.as_bytes())?;
                    print(io, &format!("wrote {}\n", file.display()))?;
                }
                None => print(io, &text)?,
            }
            Ok(Status::Success)
        }
    }
}

/// `fcd profile check-releases`' arguments.
struct CheckReleases {
    dir: PathBuf,
    cache: Option<PathBuf>,
    registry: Option<PathBuf>,
    git_mirrors: Vec<String>,
    accept: Vec<String>,
    format: Format,
}

/// Checks every release of one profile's releases.toml ([`crate::release::job`]).
fn check_releases(a: &CheckReleases, io: &mut Io<'_>) -> Result<Status, InputError> {
    use crate::release::job::{self, Fcd, Job, Plan};
    let started = std::time::Instant::now();
    let mut mirrors = std::collections::BTreeMap::new();
    for m in &a.git_mirrors {
        let Some((repo, path)) = m.split_once('=').filter(|(r, p)| r.contains('/') && !p.is_empty()) else {
            return Err(InputError::new("--git-mirror", format!("`{m}`: give OWNER/REPO=PATH")));
        };
        mirrors.insert(repo.to_owned(), PathBuf::from(path));
    }
    // Every file is read and checked before anything is downloaded.
    let plan = Plan::load(&a.dir).map_err(|e| InputError::new(&a.dir, format!("{e:#}")))?;
    let scratch = tempfile::tempdir().map_err(|e| InputError::new("check-releases", format!("cannot create a scratch directory: {e}")))?;
    let cache = a.cache.clone().unwrap_or_else(|| scratch.path().join("cache"));
    std::fs::create_dir_all(&cache).map_err(|e| InputError::new(&cache, format!("cannot create: {e}")))?;
    let registry_path = a.registry.clone().unwrap_or_else(|| scratch.path().join("registry.sqlite"));
    let registry = fcd_runtime::registry::Registry::open(&registry_path).map_err(|e| InputError::new(&registry_path, e.to_string()))?;
    let exe = std::env::current_exe().map_err(|e| InputError::new("fcd", format!("cannot locate this executable for the second process: {e}")))?;
    let fcd = Fcd { exe };
    let mut run = Job { fcd: &fcd, registry, accept: &a.accept, oracle: None };
    let mut outcomes = Vec::new();
    for release in &plan.releases {
        let outcome =
            job::run_release(&mut run, &plan, release, &cache, &mirrors).map_err(|e| InputError::new(&a.dir, format!("release {}: {e:#}", release.id)))?;
        outcomes.push(outcome);
    }
    match a.format {
        Format::Json => print_json(io, &serde_json::json!({"profile": plan.name, "outcomes": outcomes}))?,
        Format::Text => print(io, &job::table(&outcomes, started.elapsed(), std::time::Duration::ZERO))?,
    }
    Ok(if outcomes.iter().all(|o| o.ok) { Status::Success } else { Status::Refused })
}
