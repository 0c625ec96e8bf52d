//! The runtime store's files as the gateway opened them (SQLite). A store
//! deleted or replaced under a running gateway would take its decisions
//! into a file nobody reads again; and SQLite maps the store's `-shm` file
//! (the WAL index) into memory, so a `-shm` truncated under it, or made
//! unwritable, turns the next access into SIGBUS, which no error return can
//! report. So before every runtime decision the gateway looks at both, by
//! path and without opening them (closing any descriptor of the `-shm`
//! would drop the locks SQLite holds on it): the store is the same file, and
//! the `-shm` is the same file, no shorter than it was seen, and writable.
//! Anything else refuses the decision `storage` until the gateway is
//! restarted on its store; nothing reaches SQLite's mapping first.

use std::os::unix::fs::MetadataExt as _;
use std::path::PathBuf;
use std::sync::Mutex;

/// The store file's identity and what was last seen of its `-shm`.
pub struct StoreFile {
    path: PathBuf,
    dev: u64,
    ino: u64,
    /// The `-shm` file's device, inode and the largest size seen, once it exists.
    shm: Mutex<Option<(u64, u64, u64)>>,
}

impl StoreFile {
    /// The store at `path` as it is now (after SQLite opened it).
    pub fn opened(path: PathBuf) -> Result<StoreFile, String> {
        let m = std::fs::metadata(&path).map_err(|e| e.to_string())?;
        let file = StoreFile { path, dev: m.dev(), ino: m.ino(), shm: Mutex::new(None) };
        file.check()?;
        Ok(file)
    }

    /// Whether the store and its `-shm` are still the ones the gateway opened; why not, if not.
    pub fn check(&self) -> Result<(), String> {
        let store = self.path.display();
        match std::fs::metadata(&self.path) {
            Ok(m) if m.dev() == self.dev && m.ino() == self.ino => {}
            Ok(_) => return Err(format!("the runtime store {store} was replaced by another file since the gateway opened it")),
            Err(e) => return Err(format!("the runtime store {store} is gone ({e}) since the gateway opened it")),
        }
        let shm = PathBuf::from(format!("{}-shm", self.path.display()));
        let mut seen = self.shm.lock().map_err(|_| "the store check's lock is poisoned".to_owned())?;
        let m = match (std::fs::metadata(&shm), *seen) {
            (Ok(m), _) => m,
            // Not created yet (a store not in WAL mode, or no access yet): nothing is mapped.
            (Err(_), None) => return Ok(()),
            (Err(e), Some(_)) => return Err(format!("the runtime store's {} is gone ({e}) while SQLite has it mapped", shm.display())),
        };
        if let Some((dev, ino, size)) = *seen {
            if (m.dev(), m.ino()) != (dev, ino) {
                return Err(format!("the runtime store's {} was replaced while SQLite has it mapped", shm.display()));
            }
            if m.size() < size {
                return Err(format!("the runtime store's {} was cut from {size} to {} bytes while SQLite has it mapped", shm.display(), m.size()));
            }
        }
        if !writable(&shm) {
            return Err(format!("the runtime store's {} cannot be written (read-only or immutable)", shm.display()));
        }
        let largest = seen.map_or(0, |(_, _, s)| s).max(m.size());
        *seen = Some((m.dev(), m.ino(), largest));
        Ok(())
    }
}

/// Whether this process may write `path`, by access(2): no descriptor is opened.
fn writable(path: &std::path::Path) -> bool {
    rustix::fs::access(path, rustix::fs::Access::WRITE_OK).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shm_cut_replaced_or_unwritable_is_refused_and_growth_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("s.sqlite");
        std::fs::write(&db, b"store").unwrap();
        let file = StoreFile::opened(db.clone()).unwrap();
        let shm = dir.path().join("s.sqlite-shm");
        std::fs::write(&shm, vec![0u8; 32768]).unwrap();
        assert_eq!(file.check(), Ok(()));
        std::fs::write(&shm, vec![0u8; 65536]).unwrap();
        assert_eq!(file.check(), Ok(()), "the index grows");
        std::fs::OpenOptions::new().write(true).open(&shm).unwrap().set_len(0).unwrap();
        assert!(file.check().unwrap_err().contains("was cut from 65536 to 0 bytes"));
        std::fs::remove_file(&shm).unwrap();
        let fresh = StoreFile::opened(db.clone()).unwrap();
        assert_eq!(fresh.check(), Ok(()), "no -shm yet");
        std::fs::write(&shm, vec![0u8; 32768]).unwrap();
        assert_eq!(fresh.check(), Ok(()));
        // Held open as SQLite's mapping holds it, the old file keeps its inode from reuse.
        let _mapped = std::fs::File::open(&shm).unwrap();
        std::fs::remove_file(&shm).unwrap();
        std::fs::write(&shm, vec![0u8; 32768]).unwrap();
        assert!(fresh.check().unwrap_err().contains("was replaced"));
        let unwritable = StoreFile::opened(db.clone()).unwrap();
        // Root may write a read-only file, not an immutable one; anyone else may not write a read-only one.
        let root = rustix::process::geteuid().is_root();
        let locked = if root {
            std::process::Command::new("chattr").arg("+i").arg(&shm).status().is_ok_and(|s| s.success())
        } else {
            let mut perms = std::fs::metadata(&shm).unwrap().permissions();
            std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o444);
            std::fs::set_permissions(&shm, perms).is_ok()
        };
        if locked {
            let refused = unwritable.check();
            if root {
                let _ = std::process::Command::new("chattr").arg("-i").arg(&shm).status();
            }
            assert!(refused.unwrap_err().contains("cannot be written"));
        } else {
            eprintln!("this filesystem lets neither chattr nor chmod make a file unwritable: the unwritable -shm is not exercised here");
        }
        std::fs::rename(&db, dir.path().join("moved")).unwrap();
        assert!(fresh.check().unwrap_err().contains("is gone"));
    }
}
