//! Files fcd writes: always whole.

use std::io::Write;
use std::path::{Path, PathBuf};

use fcd_model::error::InputError;

/// Writes a file all at once: a temporary file in the same directory, renamed
/// into place, so a reader never sees half of it.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), InputError> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_owned(),
        _ => PathBuf::from("."),
    };
    let mut tmp = tempfile::NamedTempFile::new_in(&dir).map_err(|e| InputError::new(path, format!("cannot create a file in {}: {e}", dir.display())))?;
    tmp.write_all(bytes).map_err(|e| InputError::new(path, format!("cannot write: {e}")))?;
    // Temporary files are private (0600); summaries and certificates are not secrets.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o644));
    }
    tmp.persist(path).map_err(|e| InputError::new(path, format!("cannot write: {}", e.error)))?;
    Ok(())
}
