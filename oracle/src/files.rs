//! Finding a release's files without following links.

use std::path::{Path, PathBuf};

/// Every regular file below `root` whose `/`-separated relative path satisfies `wanted`, sorted.
pub fn find(root: &Path, wanted: &dyn Fn(&str) -> bool) -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_owned()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            let Ok(kind) = entry.file_type() else { continue };
            let path = entry.path();
            if kind.is_dir() {
                stack.push(path);
            } else if kind.is_file() {
                let relative = path.strip_prefix(root).unwrap_or(&path).to_string_lossy().replace('\\', "/");
                if wanted(&relative) {
                    out.push((relative, path));
                }
            }
        }
    }
    out.sort();
    out
}
