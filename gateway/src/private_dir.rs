//! The gateway's private directory (each release's bytecode cache), and the
//! ones a gateway killed before it could clean up left behind.
//!
//! A gateway removes its directory when it stops normally; SIGKILL, a crash
//! or an out-of-memory kill leave it. Each directory names its owner's
//! process id in a file, so the next gateway to start removes the
//! directories whose owner no longer runs. A directory whose owner it cannot
//! tell (no owner file, another user's, a process id that runs again) is
//! left alone: removing a live gateway's files is worse than a stale cache.

use std::path::Path;

/// The directory names' prefix, under the system's temporary directory.
const PREFIX: &str = "fcd-gateway-";
/// The file in each directory naming its owner's process id.
const OWNER: &str = "owner.pid";

/// A new private directory under `parent`, naming this process as its owner,
/// after removing the ones under `parent` whose owner no longer runs.
pub fn create(parent: &Path) -> std::io::Result<tempfile::TempDir> {
    sweep(parent);
    let dir = tempfile::Builder::new().prefix(PREFIX).tempdir_in(parent)?;
    std::fs::write(dir.path().join(OWNER), std::process::id().to_string())?;
    Ok(dir)
}

/// Removes the private directories under `parent` whose owner is known and
/// no longer runs; returns how many. Errors leave a directory in place.
pub fn sweep(parent: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(parent) else { return 0 };
    let mut removed = 0;
    for entry in entries.flatten() {
        let path = entry.path();
        let ours = entry.file_name().to_str().is_some_and(|n| n.starts_with(PREFIX)) && owned_by_us(&path);
        let Some(pid) = ours.then(|| std::fs::read_to_string(path.join(OWNER)).ok()).flatten().and_then(|t| t.trim().parse::<u32>().ok()) else {
            continue;
        };
        if pid != std::process::id() && runs(pid) == Some(false) && std::fs::remove_dir_all(&path).is_ok() {
            removed += 1;
        }
    }
    removed
}

/// Whether `path` is a directory (not a link) of this process's user.
fn owned_by_us(path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let own = std::fs::metadata("/proc/self").map(|m| m.uid()).ok();
    std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir() && Some(m.uid()) == own)
}

/// Whether process `pid` runs, where the system says (`/proc`); `None` elsewhere.
fn runs(pid: u32) -> Option<bool> {
    Path::new("/proc/self").exists().then(|| Path::new(&format!("/proc/{pid}")).exists())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_whose_owner_is_gone_is_removed_and_no_other() {
        let parent = tempfile::tempdir().unwrap();
        // A process that has exited: its id no longer runs (until reused, which this test does not wait for).
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let gone = child.id();
        child.wait().unwrap();
        let stale = parent.path().join(format!("{PREFIX}stale"));
        std::fs::create_dir(&stale).unwrap();
        std::fs::write(stale.join(OWNER), gone.to_string()).unwrap();
        std::fs::write(stale.join("cache.pyc"), b"x").unwrap();
        // Left alone: no owner file, an owner that runs, another prefix.
        let unknown = parent.path().join(format!("{PREFIX}unknown"));
        std::fs::create_dir(&unknown).unwrap();
        let live = parent.path().join(format!("{PREFIX}live"));
        std::fs::create_dir(&live).unwrap();
        std::fs::write(live.join(OWNER), "1").unwrap();
        let other = parent.path().join("other-tool-1");
        std::fs::create_dir(&other).unwrap();
        std::fs::write(other.join(OWNER), gone.to_string()).unwrap();

        let mine = create(parent.path()).unwrap();
        assert!(!stale.exists(), "the dead gateway's directory is removed");
        for kept in [&unknown, &live, &other] {
            assert!(kept.exists(), "{} is kept", kept.display());
        }
        assert_eq!(std::fs::read_to_string(mine.path().join(OWNER)).unwrap(), std::process::id().to_string());
        assert_eq!(sweep(parent.path()), 0, "this process's own directory is never swept");
        let path = mine.path().to_owned();
        drop(mine);
        assert!(!path.exists(), "a gateway that stops normally removes its own");
    }
}
