//! What a server runs, measured: the installed files of the release before
//! its server process starts, and at every final hop whether they are still
//! the files that were measured; the configuration the release was
//! registered with (parsed and digested as canonical JSON, as the registry
//! digests it); and the server's own configuration files in whatever format
//! it reads them (their bytes, hashed).
//!
//! Before a server starts, every file of each admitted summary's source
//! closure that the installation holds is read and hashed, between two
//! reads of its identity (device, inode, size, modification and change
//! times). A server starts only when every file has the digest the summary
//! recorded and its identity did not move while it was read. From then on
//! a final hop compares identities: any write, replacement, rename or
//! restore of a measured file changes its change time (which no unprivileged
//! process can set back), so a file changed after the measurement — even
//! one restored to its old bytes, whose earlier content the server may have
//! loaded — no longer measures as the registered release, and the fence
//! refuses every later call. Comparing identities costs a `stat` per file,
//! not a hash.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use fcd_model::canon;
use fcd_model::summary::Closure;

use crate::config::Installed;

/// A file's identity as the filesystem keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct FileId {
    dev: u64,
    ino: u64,
    size: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

fn identity(path: &Path) -> std::io::Result<FileId> {
    let m = std::fs::metadata(path)?;
    Ok(FileId { dev: m.dev(), ino: m.ino(), size: m.size(), mtime: (m.mtime(), m.mtime_nsec()), ctime: (m.ctime(), m.ctime_nsec()) })
}

/// An installation as measured before its server started: every measured file and its identity then.
#[derive(Debug, Clone)]
pub struct Loaded {
    files: Vec<(PathBuf, FileId)>,
}

/// Measures the installation at `installed` for each source closure of
/// the release's admitted summaries (named by their tool): every closure
/// file under the installed prefix must be there with the digest the summary
/// recorded, unmoved while it was read. An error names the first file that is not.
pub fn before_start<'a>(closures: impl IntoIterator<Item = (&'a str, &'a Closure)>, installed: &Installed) -> Result<Loaded, String> {
    let mut files: Vec<(PathBuf, FileId)> = Vec::new();
    for (tool, closure) in closures {
        let mut any = false;
        for f in &closure.files {
            let Some(rel) = f.path.strip_prefix(installed.strip.as_str()) else { continue };
            any = true;
            let path = installed.root.join(rel);
            let (bytes, after) = read_settled(&path)?;
            let digest = canon::sha256(&bytes);
            if digest != f.digest {
                return Err(format!("{} has digest {digest}, the registered release's {} is {}", path.display(), f.path, f.digest));
            }
            if !files.iter().any(|(p, _)| *p == path) {
                files.push((path, after));
            }
        }
        if !any {
            return Err(format!("no file of {tool}'s source closure is installed under {} (strip `{}`)", installed.root.display(), installed.strip));
        }
    }
    Ok(Loaded { files })
}

/// How far apart two changes of a file must be for their change times to
/// differ: the kernel stamps them from a coarse clock (a few milliseconds).
const TICK: std::time::Duration = std::time::Duration::from_millis(30);

/// A file's bytes and its identity, read between two identical reads of
/// the identity, at a moment when its last change is at least a clock tick
/// old: a later change then always gets a later change time. A file that
/// keeps changing is an error.
fn read_settled(path: &Path) -> Result<(Vec<u8>, FileId), String> {
    let unreadable = |e: std::io::Error| format!("{}: {e}", path.display());
    for _ in 0..5 {
        let started = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
        let before = identity(path).map_err(unreadable)?;
        let bytes = std::fs::read(path).map_err(unreadable)?;
        let after = identity(path).map_err(unreadable)?;
        let changed = std::time::Duration::new(after.ctime.0.max(0) as u64, after.ctime.1.clamp(0, 999_999_999) as u32);
        if before == after && changed + TICK < started {
            return Ok((bytes, after));
        }
        std::thread::sleep(TICK * 2);
    }
    Err(format!("{} keeps changing while it is measured", path.display()))
}

impl Loaded {
    /// The first measured file whose identity moved since the measurement, if any.
    pub fn changed(&self) -> Option<&Path> {
        self.files.iter().find(|(path, id)| identity(path).ok().as_ref() != Some(id)).map(|(p, _)| p.as_path())
    }
}

/// The digest of the server's configuration: its file parsed as JSON, in
/// canonical form; `{}` for a server that reads no configuration file.
pub fn config(file: Option<&Path>) -> Result<String, String> {
    canon::try_digest(&config_value(file)?)
}

/// The server's configuration as JSON: what a call is decided with.
pub fn config_value(file: Option<&Path>) -> Result<serde_json::Value, String> {
    let Some(file) = file else { return Ok(serde_json::json!({})) };
    let bytes = std::fs::read(file).map_err(|e| format!("cannot read the server's configuration {}: {e}", file.display()))?;
    serde_json::from_slice(&bytes).map_err(|e| format!("the server's configuration {} is not JSON: {e}", file.display()))
}

/// The digest of the server's own configuration files: the canonical JSON
/// list of each file's sha256, in the configured order; `None` when it
/// reads none. A file that cannot be read is an error (the hop is refused),
/// never an empty file.
pub fn server_config(files: &[PathBuf]) -> Result<Option<String>, String> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_changed_and_restored_after_the_measurement_no_longer_measures() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("pkg")).unwrap();
        let file = dir.path().join("pkg/server.py");
        std::fs::write(&file, b"reviewed\n").unwrap();
        let closure = Closure::of([("src/pkg/server.py", b"reviewed\n".as_slice())]);
        let installed = Installed { root: dir.path().to_owned(), strip: "src/".into() };
        let loaded = before_start([("t", &closure)], &installed).unwrap();
        assert_eq!(loaded.changed(), None);
        std::fs::write(&file, b"replaced\n").unwrap();
        std::fs::write(&file, b"reviewed\n").unwrap();
        assert_eq!(loaded.changed(), Some(file.as_path()), "restored bytes do not restore the identity");
        let e = before_start([("t", &closure)], &Installed { root: dir.path().to_owned(), strip: "lib/".into() }).unwrap_err();
        assert!(e.contains("no file of t's"), "{e}");
        std::fs::write(&file, b"replaced\n").unwrap();
        let e = before_start([("t", &closure)], &installed).unwrap_err();
        assert!(e.contains("server.py has digest"), "{e}");
    }
}
