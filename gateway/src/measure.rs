//! What is about to run, measured at the final hop: the installed files of
//! the release (every file of the admitted summary's source closure that the
//! installation holds, read again and hashed), the configuration the release
//! was registered with (parsed and digested as canonical JSON, as the
//! registry digests it), and the server's own configuration files in
//! whatever format it reads them (their bytes, hashed).
//!
//! The runtime's fence compares what is measured here with the epoch's
//! registered artifact and configuration. When every installed file has the
//! digest the summary recorded, the installation is the registered release
//! and its artifact digest is the summary's; when any differs (or is
//! missing), the measurement is the digest of what is really installed,
//! which no epoch was registered with, so the fence refuses it.

use std::path::Path;

use fcd_model::canon;
use fcd_model::summary::{Closure, Summary};
use fcd_verify::cert;

use fcd_runtime::runtime::Measured;

use crate::config::{EpochConfig, Installed};

/// Everything the final hop measures for one epoch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Measurement {
    pub artifact: String,
    pub config: String,
    pub server_config: Option<String>,
}

impl Measurement {
    /// What the runtime's fence compares.
    pub fn measured(&self) -> Measured<'_> {
        Measured { artifact: &self.artifact, config: &self.config, server_config: self.server_config.as_deref() }
    }
}

/// Measures epoch `run` of release `summary` now.
pub fn all(summary: &Summary, run: &EpochConfig) -> Result<Measurement, String> {
    Ok(Measurement {
        artifact: artifact(summary, &run.installed)?,
        config: config(run.config_file.as_deref())?,
        server_config: server_config(&run.server_config)?,
    })
}

/// The artifact digest of the installation at `installed`, as the fence
/// must see it for `summary`'s release; an error when the closure maps to no
/// installed file at all (a configuration that measures nothing).
pub fn artifact(summary: &Summary, installed: &Installed) -> Result<String, String> {
    let mut measured = Vec::new();
    let mut intact = true;
    for f in &summary.source.files {
        let Some(rel) = f.path.strip_prefix(installed.strip.as_str()) else { continue };
        let path = installed.root.join(rel);
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                // A file under the installed prefix that is gone is a changed installation.
                intact = false;
                measured.push((f.path.clone(), Vec::new()));
                continue;
            }
            Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
        };
        intact &= canon::sha256(&bytes) == f.digest;
        measured.push((f.path.clone(), bytes));
    }
    if measured.is_empty() {
        return Err(format!("no file of the release's source closure is installed under {} (strip `{}`)", installed.root.display(), installed.strip));
    }
    if intact {
        return Ok(cert::subject_digest(summary.artifact_digest.as_deref(), &summary.source.digest).to_owned());
    }
    Ok(format!("measured:{}", Closure::of(measured.iter().map(|(p, b)| (p.as_str(), b.as_slice()))).digest))
}

/// The digest of the server's configuration: its file parsed as JSON, in
/// canonical form; `{}` for a server that reads no configuration file.
pub fn config(file: Option<&Path>) -> Result<String, String> {
    let Some(file) = file else { return canon::try_digest(&serde_json::json!({})) };
    let bytes = std::fs::read(file).map_err(|e| format!("cannot read the server's configuration {}: {e}", file.display()))?;
    let value: serde_json::Value = serde_json::from_slice(&bytes).map_err(|e| format!("the server's configuration {} is not JSON: {e}", file.display()))?;
    canon::try_digest(&value)
}

/// The digest of the server's own configuration files: the canonical JSON
/// list of each file's sha256, in the configured order; `None` when it
/// reads none. A file that cannot be read is an error (the hop is refused),
/// never an empty file.
pub fn server_config(files: &[std::path::PathBuf]) -> Result<Option<String>, String> {
    if files.is_empty() {
        return Ok(None);
    }
    let mut digests = Vec::with_capacity(files.len());
    for file in files {
        let bytes = std::fs::read(file).map_err(|e| format!("cannot read the server's configuration file {}: {e}", file.display()))?;
        digests.push(canon::sha256(&bytes));
    }
    canon::try_digest(&digests).map(Some)
}
