//! From a fetched release tree to an admitted epoch, as `fcd release add`
//! and `cargo xtask releases` both do it: register with the profile in this
//! process (writing the summary whole) and record the outcome in the
//! registry ([`register`]); then have a second `fcd` process regenerate the
//! summary (`fcd regenerate`, README's contract) and admit the epoch only if
//! every digest matched ([`regenerate_and_admit`]). An escalation is recorded
//! and writes no summary.

use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde::Serialize;
use serde_json::Value;

use crate::files::write_atomic;
use fcd_compiler::profile::Profile;
use fcd_compiler::register::{Registration, Request, read_config};
use fcd_model::error::InputError;
use fcd_model::summary::Summary;
use fcd_runtime::registry::{Regeneration, Registry, ReleaseStatus};

/// One release tree to register and admit, and what binds its summary.
#[derive(Debug, Clone)]
pub struct Target {
    /// The profile directory (or its profile.toml).
    pub profile: PathBuf,
    /// The profile's name in the registry's outcomes: its directory's name, as the release job records it.
    pub profile_name: String,
    /// The release id the summary names.
    pub release: String,
    /// The release root.
    pub root: PathBuf,
    /// `sha256:HEX` of the verified artifact.
    pub artifact_digest: Option<String>,
    /// The registered configuration (a JSON object), read here and by the second process.
    pub config: Option<PathBuf>,
    /// Where the summary is written (whole); any file there is removed first,
    /// so an escalation leaves no summary.
    pub summary: PathBuf,
}

/// Why a release could not be registered: its inputs, or the registry.
#[derive(Debug, Clone)]
pub enum AddError {
    /// The profile, the configuration, the release tree or the summary file.
    Input(InputError),
    /// The registry could not record the outcome.
    Registry(InputError),
}

impl fmt::Display for AddError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AddError::Input(e) | AddError::Registry(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for AddError {}

impl From<InputError> for AddError {
    fn from(e: InputError) -> AddError {
        AddError::Input(e)
    }
}

/// What the registry records of a registration: `automatic`, or `escalated` with its code.
pub fn status(r: &Registration) -> ReleaseStatus {
    match r {
        Registration::Registered(_) => ReleaseStatus { status: "automatic".into(), code: None },
        Registration::Escalated(e) => ReleaseStatus { status: "escalated".into(), code: Some(e.code.as_str().to_owned()) },
    }
}

/// Registers the release with its profile in this process, writes the
/// summary (whole) when it registers, and records the outcome in `registry`.
pub fn register(registry: &Registry, t: &Target) -> Result<Registration, AddError> {
    if t.summary.exists() {
        std::fs::remove_file(&t.summary).map_err(|e| InputError::new(&t.summary, format!("cannot remove the previous summary: {e}")))?;
    }
    let profile = Profile::load(&t.profile)?;
    let config = t.config.as_deref().map(read_config).transpose()?;
    let request = Request { source: t.root.clone(), release: Some(t.release.clone()), artifact_digest: t.artifact_digest.clone(), config };
    let outcome = fcd_compiler::register::register(&profile, &request)?;
    if let Registration::Registered(summary) = &outcome {
        write_atomic(&t.summary, &summary.to_canonical())?;
    }
    registry.record_outcome(&t.profile_name, &t.release, &status(&outcome)).map_err(AddError::Registry)?;
    Ok(outcome)
}

/// What the second process (`fcd regenerate --format json`) said.
#[derive(Debug, Clone, Serialize)]
pub struct SecondProcess {
    /// `match`, `mismatch` or `escalated`.
    pub status: String,
    pub exit_code: i32,
    /// Its process id.
    pub pid: Option<u64>,
    /// The summary digest it produced.
    pub summary_digest: Option<String>,
    /// The digests that differ: `{digest, stored, regenerated}` objects.
    pub differing: Value,
}

impl SecondProcess {
    /// Whether it rebuilt the summary with every digest the same.
    pub fn reproduced(&self) -> bool {
        self.exit_code == 0 && self.status == "match"
    }

    /// What went wrong, in words, when it did not reproduce the summary.
    pub fn problem(&self) -> Option<String> {
        (!self.reproduced()).then(|| format!("regeneration: {} (exit {}): {}", self.status, self.exit_code, self.differing))
    }
}

/// Runs `FCD regenerate` on the written summary in a separate process.
pub fn regenerate(fcd: &Path, t: &Target) -> Result<SecondProcess, InputError> {
    let mut cmd = Command::new(fcd);
    cmd.arg("regenerate").arg("--summary").arg(&t.summary).arg("--source").arg(&t.root).arg("--profile").arg(&t.profile).args(["--format", "json"]);
    if let Some(config) = &t.config {
        cmd.arg("--config").arg(config);
    }
    let shown = format!("{cmd:?}");
    let output = cmd.output().map_err(|e| InputError::new(fcd, format!("cannot run: {e}")))?;
    let exit_code = output.status.code().unwrap_or(-1);
    if ![0, 1, 3].contains(&exit_code) {
        return Err(InputError::new(fcd, format!("{shown}: exit {exit_code}: {}", String::from_utf8_lossy(&output.stderr).trim_end())));
    }
    let json: Value = serde_json::from_slice(&output.stdout)
        .map_err(|e| InputError::new(fcd, format!("{shown}: stdout is not JSON ({e}): {}", String::from_utf8_lossy(&output.stdout).trim_end())))?;
    Ok(SecondProcess {
        status: json["status"].as_str().unwrap_or("?").to_owned(),
        exit_code,
        pid: json["process"].as_u64(),
        summary_digest: json["summary_digest"].as_str().map(str::to_owned),
        differing: json["differing"].clone(),
    })
}

/// The second process's verdict and, when it reproduced the summary, the admission.
#[derive(Debug)]
pub struct Admission {
    /// An error: the second process could not be run or read.
    pub regeneration: Result<SecondProcess, InputError>,
    /// The admitted epoch id; `None` when the summary was not reproduced, an
    /// error when the registry refused it.
    pub epoch: Option<Result<String, InputError>>,
}

/// Has `fcd` (`std::env::current_exe()` for the `fcd` command, the built
/// binary for the release job) regenerate the registered summary in a second
/// process and, only if every digest matched, admits the summary written at
/// `t.summary` with that process's evidence.
pub fn regenerate_and_admit(registry: &mut Registry, fcd: &Path, t: &Target) -> Admission {
    let regeneration = regenerate(fcd, t);
    let epoch = match &regeneration {
        Ok(second) if second.reproduced() => Some(admit(registry, t, second)),
        _ => None,
    };
    Admission { regeneration, epoch }
}

/// Admits the summary at `t.summary`, the bytes the second process checked.
fn admit(registry: &mut Registry, t: &Target, second: &SecondProcess) -> Result<String, InputError> {
    let stored = Summary::load(&t.summary)?;
    let evidence = Regeneration { process: second.pid.unwrap_or(0) as u32, summary_digest: second.summary_digest.clone().unwrap_or_default() };
    registry.admit(&stored, &evidence)
}
