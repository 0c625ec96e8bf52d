//! Declared edits over a base fixture: how a mutation or an adversarial case
//! says what it changes, instead of being a whole copied tree.
//!
//! A case names a base release root and a list of small edits (replace one
//! exact text, append, create, delete, a symlink). The harness copies the base
//! into a temporary directory and applies the edits there, so the intent of
//! every case is visible in its TOML and a change to the base reaches every
//! case built on it. An edit whose anchor text is missing or ambiguous is an
//! input error: a case must never silently test the unedited base.

use std::path::{Component, Path, PathBuf};

use serde::Deserialize;

/// One declared edit of one file, relative to the release root.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Edit {
    pub file: String,
    /// Exact text that must occur exactly once (or at least once with `all`).
    pub replace: Option<String>,
    /// The replacement of `replace`.
    pub with: Option<String>,
    /// The replacement of `replace` as hex bytes (for text that is not UTF-8).
    pub with_hex: Option<String>,
    /// Replace every occurrence of `replace` instead of exactly one.
    #[serde(default)]
    pub all: bool,
    /// Text added at the end of the file.
    pub append: Option<String>,
    /// A new file with this content (the file must not exist in the base).
    pub create: Option<String>,
    /// Removes the file.
    #[serde(default)]
    pub delete: bool,
    /// Makes `file` a symbolic link to this target.
    pub symlink: Option<String>,
}

/// Copies `base` into `into` (which must exist and be empty) and applies
/// `edits`; the error says which edit failed and why.
pub fn materialize(base: &Path, edits: &[Edit], into: &Path) -> Result<(), String> {
    if !base.is_dir() {
        return Err(format!("base {} is not a directory", base.display()));
    }
    copy_tree(base, into).map_err(|e| format!("cannot copy the base {}: {e}", base.display()))?;
    for (i, edit) in edits.iter().enumerate() {
        apply(edit, into).map_err(|m| format!("edit {} (`{}`): {m}", i + 1, edit.file))?;
    }
    Ok(())
}

fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    for entry in walkdir::WalkDir::new(from).follow_links(false).sort_by_file_name() {
        let entry = entry.map_err(std::io::Error::other)?;
        let rel = entry.path().strip_prefix(from).map_err(std::io::Error::other)?;
        let target = to.join(rel);
        let kind = entry.file_type();
        if kind.is_dir() {
            std::fs::create_dir_all(&target)?;
        } else if kind.is_symlink() {
            symlink(&std::fs::read_link(entry.path())?, &target)?;
        } else {
            std::fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}

#[cfg(unix)]
fn symlink(target: &Path, link: &Path) -> std::io::Result<()> {
    std::os::unix::fs::symlink(target, link)
}

#[cfg(not(unix))]
fn symlink(_target: &Path, _link: &Path) -> std::io::Result<()> {
    Err(std::io::Error::other("symbolic links in fixtures need a Unix system"))
}

/// A relative path inside the root: no `..`, no absolute path.
fn inside(root: &Path, file: &str) -> Result<PathBuf, String> {
    let rel = Path::new(file);
    if file.is_empty() || rel.components().any(|c| !matches!(c, Component::Normal(_))) {
        return Err("the file must be a relative path inside the release root, without `..`".into());
    }
    Ok(root.join(rel))
}

fn apply(edit: &Edit, root: &Path) -> Result<(), String> {
    let path = inside(root, &edit.file)?;
    let ops = [edit.replace.is_some(), edit.append.is_some(), edit.create.is_some(), edit.delete, edit.symlink.is_some()];
    if ops.iter().filter(|&&o| o).count() != 1 {
        return Err("an edit does exactly one of `replace` (with `with` or `with-hex`), `append`, `create`, `delete`, `symlink`".into());
    }
    if edit.replace.is_none() && (edit.with.is_some() || edit.with_hex.is_some() || edit.all) {
        return Err("`with`, `with-hex` and `all` belong to a `replace`".into());
    }
    if let Some(content) = &edit.create {
        if path.symlink_metadata().is_ok() {
            return Err("`create` names a file the base already has; use `replace`".into());
        }
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| e.to_string())?;
        }
        return std::fs::write(&path, content).map_err(|e| e.to_string());
    }
    if let Some(target) = &edit.symlink {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| e.to_string())?;
        }
        if path.symlink_metadata().is_ok() {
            remove(&path)?;
        }
        return symlink(Path::new(target), &path).map_err(|e| e.to_string());
    }
    if edit.delete {
        return remove(&path);
    }
    let bytes = std::fs::read(&path).map_err(|e| format!("cannot read the base file: {e}"))?;
    let out = if let Some(tail) = &edit.append {
        let mut b = bytes;
        b.extend_from_slice(tail.as_bytes());
        b
    } else {
        let needle = edit.replace.as_deref().unwrap_or_default();
        let with = match (&edit.with, &edit.with_hex) {
            (Some(t), None) => t.as_bytes().to_vec(),
            (None, Some(h)) => hex(h)?,
            _ => return Err("a `replace` needs exactly one of `with` and `with-hex`".into()),
        };
        replace(&bytes, needle.as_bytes(), &with, edit.all)?
    };
    std::fs::write(&path, out).map_err(|e| e.to_string())
}

fn remove(path: &Path) -> Result<(), String> {
    let meta = path.symlink_metadata().map_err(|e| format!("nothing to remove: {e}"))?;
    if meta.is_dir() { std::fs::remove_dir_all(path) } else { std::fs::remove_file(path) }.map_err(|e| e.to_string())
}

fn replace(hay: &[u8], needle: &[u8], with: &[u8], all: bool) -> Result<Vec<u8>, String> {
    if needle.is_empty() {
        return Err("`replace` is empty".into());
    }
    let hits: Vec<usize> = (0..=hay.len().saturating_sub(needle.len())).filter(|&i| hay[i..].starts_with(needle)).collect();
    // Overlapping hits would make "every occurrence" ambiguous; count only disjoint ones.
    let mut disjoint = Vec::new();
    for h in hits {
        if disjoint.last().is_none_or(|&last: &usize| h >= last + needle.len()) {
            disjoint.push(h);
        }
    }
    match (disjoint.len(), all) {
        (0, _) => return Err("the text to replace does not occur in the base file".into()),
        (1, _) | (_, true) => {}
        (n, false) => return Err(format!("the text to replace occurs {n} times; make it unique or set `all = true`")),
    }
    let mut out = Vec::with_capacity(hay.len());
    let mut at = 0;
    for h in disjoint {
        out.extend_from_slice(&hay[at..h]);
        out.extend_from_slice(with);
        at = h + needle.len();
    }
    out.extend_from_slice(&hay[at..]);
    Ok(out)
}

fn hex(text: &str) -> Result<Vec<u8>, String> {
    let digits: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    if !digits.len().is_multiple_of(2) {
        return Err("`with-hex` needs an even number of hex digits".into());
    }
    (0..digits.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&digits[i..i + 2], 16).map_err(|_| format!("`with-hex`: `{}` is not a hex byte", &digits[i..i + 2])))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replace_needs_exactly_one_occurrence_unless_all() {
        assert_eq!(replace(b"a b a", b"b", b"c", false).unwrap(), b"a c a");
        assert!(replace(b"a b a", b"a", b"c", false).unwrap_err().contains("2 times"));
        assert_eq!(replace(b"a b a", b"a", b"c", true).unwrap(), b"c b c");
        assert!(replace(b"a b a", b"z", b"c", false).unwrap_err().contains("does not occur"));
    }

    #[test]
    fn paths_stay_inside_the_root() {
        assert!(inside(Path::new("/r"), "../x").is_err());
        assert!(inside(Path::new("/r"), "/etc/passwd").is_err());
        assert!(inside(Path::new("/r"), "a/b.py").is_ok());
    }

    #[test]
    fn hex_bytes() {
        assert_eq!(hex("ff 00").unwrap(), vec![0xff, 0]);
        assert!(hex("f").is_err());
    }
}
