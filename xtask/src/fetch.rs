//! The history triage's sources onto this machine: what
//! [`fcd::release::job::materialize`] fetches and verifies for the release
//! job (registry and git-tag releases through the `fcd` library's fetcher,
//! a directory in place, a test case from its base fixture and edits),
//! except that an artifact or git tree already in the cache is reused.
//!
//! Cache layout (git-ignored): `<cache>/<id>.tar.gz` is the verified artifact,
//! `<cache>/<id>/` its unpacked tree (recreated on every run of the release
//! job; the history triage reuses a git tag's tree while `<cache>/<id>.stamp`
//! says it is of the tag's current commit). A cached
//! artifact whose digest differs is refused, not replaced: someone or
//! something altered it, and a person should look before it is deleted.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result};

use std::collections::BTreeMap;

pub use fcd::release::fetch::Materialized;
use fcd::release::fetch::{self, sha256_file, unpack_tar_gz};

use fcd::release::fetch::GitSource;
use fcd::release::job::materialize;
use fcd::release::manifest::{Release, Source};

/// For the history triage: like [`materialize`], except that a registry
/// release with no recorded digest whose artifact is already in the cache is
/// taken from there (its digest is reported, not verified against anything)
/// instead of being downloaded again.
pub fn materialize_reusing(release: &Release, cache: &Path, mirrors: &BTreeMap<String, PathBuf>) -> Result<Option<Materialized>> {
    let archive = match &release.source {
        Source::Pypi(p) if p.sha256.is_empty() => Some(cache.join(format!("{}.tar.gz", release.id))),
        Source::Npm(n) if n.sha256.is_empty() => Some(cache.join(format!("{}.tgz", release.id))),
        _ => None,
    };
    if let Some(archive) = archive.filter(|a| a.is_file()) {
        let root = unpack_tar_gz(&archive, &cache.join(&release.id))?;
        let digest = format!("sha256:{}", sha256_file(&archive)?);
        let provenance = format!("{} {digest} (from the cache)", release.source.describe());
        return Ok(Some(Materialized { provenance, artifact_digest: Some(digest), root, downloaded: false }));
    }
    if let Source::Git(g) = &release.source
        && let Some(mirror) = mirrors.get(&g.repository)
    {
        return git_tree_reusing(release, g, mirror, cache).map(Some);
    }
    materialize(release, cache, mirrors)
}

/// A git tag's tree, unpacked again only when the tag's commit or the paths
/// changed: `<cache>/<id>.stamp` records the provenance of the tree at
/// `<cache>/<id>/`, written after a complete unpack and removed before a new one.
fn git_tree_reusing(release: &Release, g: &GitSource, mirror: &Path, cache: &Path) -> Result<Materialized> {
    let stamp = cache.join(format!("{}.stamp", release.id));
    let root = cache.join(&release.id).join(&release.id);
    let out = Command::new("git")
        .arg("--git-dir")
        .arg(mirror)
        .args(["rev-parse", &format!("{}^{{commit}}", g.rev()), &format!("{}^{{tree}}", g.rev())])
        .output()
        .with_context(|| format!("{}: cannot run git", mirror.display()))?;
    if out.status.success() && root.is_dir() {
        let ids = String::from_utf8_lossy(&out.stdout).split_whitespace().collect::<Vec<_>>().join(" ");
        let recorded = std::fs::read_to_string(&stamp).unwrap_or_default();
        let expected = format!("{ids} {}", g.paths.join(","));
        if (g.commit.is_empty() || ids.starts_with(&g.commit))
            && let Some(provenance) = recorded.strip_prefix(&format!("{expected}\n"))
        {
            return Ok(Materialized { artifact_digest: None, provenance: format!("{provenance} (tree unpacked before)"), root, downloaded: false });
        }
    }
    if stamp.exists() {
        std::fs::remove_file(&stamp).with_context(|| format!("{}: cannot remove", stamp.display()))?;
    }
    let art = fetch::git_mirror(&release.id, g, mirror, cache)?;
    let commit = String::from_utf8_lossy(&out.stdout).split_whitespace().collect::<Vec<_>>().join(" ");
    if out.status.success() && art.root == root {
        std::fs::write(&stamp, format!("{commit} {}\n{}", g.paths.join(","), art.provenance)).with_context(|| format!("{}: cannot write", stamp.display()))?;
    }
    Ok(art)
}

#[cfg(test)]
mod tests {
    use super::*;
    use fcd::release::fetch::{NpmSource, PypiSource};
    use fcd::release::manifest::Expectation;

    #[test]
    fn a_tampered_cached_artifact_is_refused() {
        let cache = tempfile::tempdir().unwrap();
        let mirrors = BTreeMap::new();
        let release = |id: &str, source| Release { id: id.into(), expect: Expectation::Unreviewed, source };
        std::fs::write(cache.path().join("x.tar.gz"), b"not the reviewed bytes").unwrap();
        let source = PypiSource { package: "mcp-server-git".into(), version: "1".into(), sha256: "0".repeat(64) };
        let err = materialize(&release("x", Source::Pypi(source)), cache.path(), &mirrors).unwrap_err();
        assert!(format!("{err:#}").contains("digest mismatch"), "{err:#}");
        assert!(format!("{err:#}").contains("releases.toml records"), "{err:#}");
        let npm = NpmSource { package: "p".into(), version: "1".into(), sha256: "0".repeat(64), integrity: None };
        std::fs::write(cache.path().join("y.tgz"), b"tampered").unwrap();
        assert!(format!("{:#}", materialize(&release("y", Source::Npm(npm)), cache.path(), &mirrors).unwrap_err()).contains("digest mismatch"));
    }
}
