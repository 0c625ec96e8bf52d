//! `fcd release add`: an official release into a registry with nothing but
//! the `fcd` binary (and the release's own client: pip, npm or git).
//!
//! Exit 0: admitted (the epoch id is printed); 1: the second process did not
//! reproduce the summary; 2: a bad SPEC, a digest that differs, a download or
//! any input that fails; 3: registration escalated (recorded, no summary).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::{Format, Io, Status, print, print_json};
use crate::release::add::{self, AddError, Target};
use crate::release::fetch::{self, DigestFrom, Materialized, NpmSource, PypiSource};
use crate::release::spec::{self, Spec};
use fcd_compiler::profile::Profile;
use fcd_compiler::register::{Registration, escalation_json};
use fcd_model::error::InputError;
use fcd_runtime::registry::Registry;

/// The cache folder `fcd release add` uses beside the registry when `--cache` is not given.
pub const DEFAULT_CACHE: &str = "fcd-release-cache";

#[derive(Debug, clap::Subcommand)]
pub enum ReleaseCommand {
    Add(AddArgs),
}

/// Fetches an official release, verifies its digest, registers it, has a second process
/// regenerate it and admits the epoch into the registry; an escalation is recorded (exit 3).
#[derive(Debug, clap::Args)]
pub struct AddArgs {
    /// Profile directory or its profile.toml.
    #[arg(long)]
    profile: PathBuf,
    /// The registry's SQLite file (created when missing).
    #[arg(long)]
    registry: PathBuf,
    /// Registered configuration, a JSON object.
    #[arg(long)]
    config: Option<PathBuf>,
    /// The artifact's sha256 (64 hex digits, or sha256:HEX); checked instead of releases.toml's.
    #[arg(long)]
    sha256: Option<String>,
    /// With neither --sha256 nor a releases.toml entry, take the registry's own digest (pip's check
    /// against PyPI's published sha256, npm's dist.integrity, or the commit a git tag names).
    #[arg(long, conflicts_with = "sha256")]
    trust_registry_digest: bool,
    /// Where artifacts are kept and unpacked (default: fcd-release-cache/ beside the registry).
    #[arg(long)]
    cache: Option<PathBuf>,
    /// Output: text for people, or one JSON document.
    #[arg(long, value_enum, default_value_t)]
    format: Format,
    /// pypi:NAME==VERSION, npm:NAME@VERSION or git:DIR@TAG (DIR a local git repository, bare or not).
    spec: String,
}

pub fn run(c: ReleaseCommand, io: &mut Io<'_>) -> Result<Status, InputError> {
    match c {
        ReleaseCommand::Add(a) => add_release(a, io),
    }
}

/// What the artifact's digest was checked against.
fn verified_by(from: Option<DigestFrom>, trusted: &str) -> String {
    match from {
        Some(DigestFrom::Option) => "--sha256".to_owned(),
        Some(DigestFrom::Manifest) => spec::MANIFEST.to_owned(),
        None => trusted.to_owned(),
    }
}

fn add_release(a: AddArgs, io: &mut Io<'_>) -> Result<Status, InputError> {
    let spec = Spec::parse(&a.spec).map_err(|m| InputError::new(&a.spec, m))?;
    let expected = a.sha256.as_deref().map(|h| parse_sha256(h).map_err(|m| InputError::new("--sha256", m))).transpose()?;
    // The profile is loaded before anything is fetched: a broken profile costs no download.
    let profile = Profile::load(&a.profile)?;
    let profile_dir = if a.profile.is_file() { a.profile.parent().map(Path::to_owned).unwrap_or_else(|| PathBuf::from(".")) } else { a.profile.clone() };
    let profile_name = profile_dir.canonicalize().ok().and_then(|d| d.file_name().map(|n| n.to_string_lossy().into_owned())).unwrap_or(profile.id.clone());
    let listed = spec::listed(&profile_dir)?;
    let cache = a.cache.clone().unwrap_or_else(|| match a.registry.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.join(DEFAULT_CACHE),
        _ => PathBuf::from(DEFAULT_CACHE),
    });
    let mut registry = Registry::open(&a.registry)?;
    let refuse = |what: &str, trusted: &str| {
        InputError::new(
            &a.spec,
            format!(
                "no digest to verify {what} against: give --sha256 HEX, list the release in {}, or pass \
                 --trust-registry-digest to take {trusted}; nothing is registered unverified",
                profile_dir.join(spec::MANIFEST).display()
            ),
        )
    };
    let fetch_error = |e: anyhow::Error| InputError::new(&a.spec, format!("{e:#}"));
    let (id, from, art, trusted) = match &spec {
        Spec::Pypi { package, version } => {
            let listed = spec::find_pypi(&listed, package, version);
            let (sha256, from) = match (&expected, listed) {
                (Some(h), _) => (h.clone(), Some(DigestFrom::Option)),
                (None, Some((_, p))) => (p.sha256.clone(), Some(DigestFrom::Manifest)),
                (None, None) if a.trust_registry_digest => (String::new(), None),
                (None, None) => return Err(refuse(&format!("{package}=={version}"), "the sha256 PyPI publishes (pip checks the download against it)")),
            };
            let id = listed.map_or_else(|| spec.default_id(), |(id, _)| id.to_owned());
            let source = PypiSource { package: package.clone(), version: version.clone(), sha256 };
            let art = fetch::pypi(&id, &source, from.unwrap_or(DigestFrom::Option), &cache).map_err(fetch_error)?;
            (id, from, art, "PyPI's published sha256 (checked by pip)")
        }
        Spec::Npm { package, version } => {
            let listed = spec::find_npm(&listed, package, version);
            let (sha256, integrity, from) = match (&expected, listed) {
                (Some(h), _) => (h.clone(), listed.and_then(|(_, n)| n.integrity.clone()), Some(DigestFrom::Option)),
                (None, Some((_, n))) => (n.sha256.clone(), n.integrity.clone(), Some(DigestFrom::Manifest)),
                (None, None) if a.trust_registry_digest => (String::new(), Some(fetch::npm_integrity(package, version).map_err(fetch_error)?), None),
                (None, None) => return Err(refuse(&format!("{package}@{version}"), "the registry's dist.integrity (npm view)")),
            };
            let id = listed.map_or_else(|| spec.default_id(), |(id, _)| id.to_owned());
            let source = NpmSource { package: package.clone(), version: version.clone(), sha256, integrity };
            let art = fetch::npm(&id, &source, from.unwrap_or(DigestFrom::Option), &cache).map_err(fetch_error)?;
            (id, from, art, "the npm registry's dist.integrity")
        }
        Spec::Git { repo, tag } => {
            let resolved = fetch::git_tag(repo, tag).map_err(fetch_error)?;
            let listed = spec::find_git(&listed, &resolved.commit);
            let from = match (&expected, listed) {
                (Some(_), _) => Some(DigestFrom::Option),
                (None, Some(_)) => Some(DigestFrom::Manifest),
                (None, None) if a.trust_registry_digest => None,
                (None, None) => return Err(refuse(&format!("tag {tag} of {}", repo.display()), "the commit the tag names")),
            };
            let id = listed.map_or_else(|| spec.default_id(), |(id, _)| id.to_owned());
            if id.is_empty() {
                return Err(InputError::new(&a.spec, "cannot name the release after the repository directory"));
            }
            let art =
                fetch::git_tag_archive(&id, &resolved, expected.as_deref().unwrap_or(""), from.unwrap_or(DigestFrom::Option), &cache).map_err(fetch_error)?;
            (id, from, art, "the commit the tag names")
        }
    };
    let verified_by = match (&spec, from) {
        (Spec::Git { .. }, Some(DigestFrom::Manifest)) => format!("{} (the commit it records)", spec::MANIFEST),
        _ => verified_by(from, trusted),
    };
    // The summary is the second process's input; the registry keeps its bytes, so it lives only for this run.
    let work = tempfile::tempdir_in(&cache).map_err(|e| InputError::new(&cache, format!("cannot create a work directory: {e}")))?;
    let target = Target {
        profile: a.profile.clone(),
        profile_name: profile_name.clone(),
        release: id.clone(),
        root: art.root.clone(),
        artifact_digest: art.artifact_digest.clone(),
        config: a.config.clone(),
        summary: work.path().join(format!("{id}.summary.json")),
    };
    let about = About { profile: &profile_name, release: &id, art: &art, verified_by: &verified_by, registry: &a.registry };
    let registration = add::register(&registry, &target).map_err(|e| match e {
        AddError::Input(e) | AddError::Registry(e) => e,
    })?;
    let summary = match registration {
        Registration::Escalated(e) => {
            let reason = escalation_json(&e);
            match a.format {
                Format::Json => print_json(io, &about.json("escalated", json!({"reason": reason})))?,
                Format::Text => {
                    let mut t = about.head(&format!("escalated: {}", e.code));
                    let _ = writeln!(t, "  {}", e.detail);
                    if let Some(anchor) = &e.anchor {
                        let _ = writeln!(t, "  at {}:{}", anchor.file, anchor.line);
                    }
                    let _ = writeln!(t, "  recorded as escalated in {}; no summary written, nothing admitted", a.registry.display());
                    print(io, &t)?;
                }
            }
            return Ok(Status::Escalated);
        }
        Registration::Registered(summary) => summary,
    };
    let fcd = std::env::current_exe().map_err(|e| InputError::new("fcd", format!("cannot locate this executable for the second process: {e}")))?;
    let admission = add::regenerate_and_admit(&mut registry, &fcd, &target);
    let second = admission.regeneration?;
    let regeneration = json!({"status": second.status, "process": second.pid, "summary_digest": second.summary_digest, "differing": second.differing});
    let extra = json!({"summary_digest": summary.summary_digest, "regeneration": regeneration});
    match admission.epoch {
        Some(epoch) => {
            let epoch = epoch?;
            match a.format {
                Format::Json => print_json(io, &about.json("admitted", merge(json!({"epoch_id": epoch}), extra)))?,
                Format::Text => {
                    let mut t = about.head(&format!("admitted epoch {epoch}"));
                    let _ = writeln!(t, "  summary {} (regenerated by process {})", summary.summary_digest, second.pid.map_or("?".into(), |p| p.to_string()));
                    print(io, &t)?;
                }
            }
            Ok(Status::Success)
        }
        None => {
            match a.format {
                Format::Json => print_json(io, &about.json("not_reproduced", extra))?,
                Format::Text => {
                    let mut t = about.head("not admitted: the second process did not reproduce the summary");
                    let _ = writeln!(t, "  {}", second.problem().unwrap_or_default());
                    print(io, &t)?;
                }
            }
            Ok(Status::Refused)
        }
    }
}

/// What every report of a release says.
struct About<'a> {
    profile: &'a str,
    release: &'a str,
    art: &'a Materialized,
    verified_by: &'a str,
    registry: &'a Path,
}

impl About<'_> {
    fn json(&self, status: &str, extra: Value) -> Value {
        merge(
            json!({
                "status": status,
                "profile": self.profile,
                "release": self.release,
                "artifact_digest": self.art.artifact_digest,
                "verified_by": self.verified_by,
                "provenance": self.art.provenance,
                "root": self.art.root.display().to_string(),
                "registry": self.registry.display().to_string(),
            }),
            extra,
        )
    }

    fn head(&self, first: &str) -> String {
        let mut t = String::new();
        let _ = writeln!(t, "{first}");
        let _ = writeln!(t, "  release {} of profile {}", self.release, self.profile);
        let _ = writeln!(t, "  artifact {} (verified against {})", self.art.artifact_digest.as_deref().unwrap_or("-"), self.verified_by);
        t
    }
}

fn merge(mut a: Value, b: Value) -> Value {
    if let (Some(a), Value::Object(b)) = (a.as_object_mut(), b) {
        a.extend(b);
    }
    a
}

/// Lower-case hex of `HEX` or `sha256:HEX`.
fn parse_sha256(text: &str) -> Result<String, String> {
    let hex = text.strip_prefix("sha256:").unwrap_or(text).to_ascii_lowercase();
    if hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        Ok(hex)
    } else {
        Err(format!("`{text}` is not a sha256 (64 hex digits, or sha256:HEX)"))
    }
}
