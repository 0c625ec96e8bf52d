//! Official artifacts onto this machine: download with the registry's own
//! client, verify the digest releases.toml records, and only then keep and
//! unpack the artifact.
//!
//! Cache layout (git-ignored): `<cache>/<id>.tar.gz` is the verified artifact,
//! `<cache>/<id>/` its unpacked tree (recreated on every run of the release
//! job; the history triage reuses a git tag's tree while `<cache>/<id>.stamp`
//! says it is of the tag's current commit). A cached
//! artifact whose digest differs is refused, not replaced: someone or
//! something altered it, and a person should look before it is deleted.

use std::fs::File;
use std::io::Read;
use std::path::{Component, Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};
use sha2::{Digest, Sha256};

use std::collections::BTreeMap;

use crate::manifest::{GitSource, NpmSource, PypiSource, Release, Source};

/// A release ready for the pipeline.
#[derive(Debug, Clone)]
pub struct Materialized {
    /// `sha256:HEX` of the verified artifact (none for a git tag: its identity is the commit).
    pub artifact_digest: Option<String>,
    /// Where the tree came from, for the report: registry digest or commit and tree ids.
    pub provenance: String,
    /// The release root: the single top-level folder of the unpacked artifact.
    pub root: PathBuf,
    /// Whether this run downloaded the artifact (false: the verified cache was used).
    pub downloaded: bool,
}

/// Makes the release available under `cache`, verified and unpacked. A git
/// release without a mirror for its repository is not run (`Ok(None)`).
pub fn materialize(release: &Release, cache: &Path, mirrors: &BTreeMap<String, PathBuf>) -> Result<Option<Materialized>> {
    std::fs::create_dir_all(cache).with_context(|| format!("{}: cannot create the cache directory", cache.display()))?;
    match &release.source {
        Source::Pypi(p) => {
            let archive = cache.join(format!("{}.tar.gz", release.id));
            let downloaded = ensure_pypi(p, &archive, cache)?;
            let root = unpack_tar_gz(&archive, &cache.join(&release.id))?;
            let digest = format!("sha256:{}", sha256_file(&archive)?);
            Ok(Some(Materialized { provenance: format!("pypi {}=={} {digest}", p.package, p.version), artifact_digest: Some(digest), root, downloaded }))
        }
        Source::Npm(n) => {
            let archive = cache.join(format!("{}.tgz", release.id));
            let downloaded = ensure_npm(n, &archive, cache)?;
            let root = unpack_tar_gz(&archive, &cache.join(&release.id))?;
            let digest = format!("sha256:{}", sha256_file(&archive)?);
            Ok(Some(Materialized { provenance: format!("npm {}@{} {digest}", n.package, n.version), artifact_digest: Some(digest), root, downloaded }))
        }
        Source::Dir(d) => {
            let root = d.path.canonicalize().with_context(|| format!("{}: release directory not found", d.path.display()))?;
            if !root.is_dir() {
                bail!("{}: not a directory", root.display());
            }
            Ok(Some(Materialized { artifact_digest: None, provenance: format!("directory {}", root.display()), root, downloaded: false }))
        }
        Source::Case(c) => {
            let cases = fcd::profile_test::load_cases(&c.profile)?;
            let Some(case) = cases.iter().find(|k| k.name == c.name) else {
                bail!("release `{}`: no case `{}` in {}/tests/*.toml", release.id, c.name, c.profile.display());
            };
            let root = cache.join(&release.id);
            if root.exists() {
                std::fs::remove_dir_all(&root).with_context(|| format!("{}: cannot clear the previous tree", root.display()))?;
            }
            case.materialize_into(&root)?;
            Ok(Some(Materialized { artifact_digest: None, provenance: format!("test case {} of {}", c.name, case.file.display()), root, downloaded: false }))
        }
        Source::Git(g) => match mirrors.get(&g.repository) {
            Some(mirror) => git_tree(release, g, mirror, cache).map(Some),
            None => Ok(None),
        },
    }
}

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
    let art = git_tree(release, g, mirror, cache)?;
    let commit = String::from_utf8_lossy(&out.stdout).split_whitespace().collect::<Vec<_>>().join(" ");
    if out.status.success() && art.root == root {
        std::fs::write(&stamp, format!("{commit} {}\n{}", g.paths.join(","), art.provenance)).with_context(|| format!("{}: cannot write", stamp.display()))?;
    }
    Ok(art)
}

/// Refuses, before any work starts, a release whose source kind has no fetcher yet.
pub fn check_supported(release: &Release) -> Result<()> {
    match &release.source {
        Source::Pypi(_) | Source::Npm(_) | Source::Git(_) | Source::Dir(_) | Source::Case(_) => Ok(()),
    }
}

/// `git archive` of a tag from a local mirror, after checking the tag still
/// names the reviewed commit (a moved tag is refused).
fn git_tree(release: &Release, g: &GitSource, mirror: &Path, cache: &Path) -> Result<Materialized> {
    let git = |args: &[&str]| -> Result<Vec<u8>> {
        let out = Command::new("git").arg("--git-dir").arg(mirror).args(args).output().with_context(|| format!("{}: cannot run git", mirror.display()))?;
        if !out.status.success() {
            bail!("{}: git {}: {}", mirror.display(), args.join(" "), String::from_utf8_lossy(&out.stderr).trim());
        }
        Ok(out.stdout)
    };
    let commit = String::from_utf8_lossy(&git(&["rev-parse", &format!("{}^{{commit}}", g.rev())])?).trim().to_owned();
    if !g.commit.is_empty() && commit != g.commit {
        bail!(
            "release `{}`: tag {} of {} is commit {commit} in {}, releases.toml records {}; refusing it",
            release.id,
            g.rev(),
            g.repository,
            mirror.display(),
            g.commit
        );
    }
    let tree = String::from_utf8_lossy(&git(&["rev-parse", &format!("{}^{{tree}}", g.rev())])?).trim().to_owned();
    let archive = cache.join(format!("{}.tar.gz", release.id));
    let prefix = format!("--prefix={}/", release.id);
    let output = archive.to_string_lossy().into_owned();
    let mut args = vec!["archive", "--format=tar.gz", prefix.as_str(), "-o", output.as_str(), commit.as_str(), "--"];
    args.extend(g.paths.iter().map(String::as_str));
    git(&args)?;
    let root = unpack_tar_gz(&archive, &cache.join(&release.id))?;
    Ok(Materialized {
        artifact_digest: None,
        provenance: format!(
            "git {}@{} commit {commit} tree {tree}{}",
            g.repository,
            g.rev(),
            if g.paths.is_empty() { String::new() } else { format!(" paths {}", g.paths.join(",")) }
        ),
        root,
        downloaded: false,
    })
}

/// The verified sdist at `archive`; returns whether it downloaded.
fn ensure_pypi(p: &PypiSource, archive: &Path, cache: &Path) -> Result<bool> {
    let what = format!("{}=={}", p.package, p.version);
    ensure(&p.sha256, &what, archive, cache, |work| pip_download(p, work), |_| Ok(()))
}

/// The verified npm tarball at `archive` (our sha256 and, when recorded, the
/// registry's sha512 integrity); returns whether it downloaded.
fn ensure_npm(n: &NpmSource, archive: &Path, cache: &Path) -> Result<bool> {
    let what = format!("{}@{}", n.package, n.version);
    ensure(
        &n.sha256,
        &what,
        archive,
        cache,
        |work| npm_pack(n, work),
        |file| {
            let Some(integrity) = &n.integrity else { return Ok(()) };
            let bytes = std::fs::read(file).with_context(|| format!("{}: cannot read", file.display()))?;
            let got = format!("sha512-{}", base64::Engine::encode(&base64::engine::general_purpose::STANDARD, sha2::Sha512::digest(&bytes)));
            if &got != integrity {
                bail!("{}: integrity mismatch: {what} is {got}, the registry's integrity in releases.toml is {integrity}; refusing it", file.display());
            }
            Ok(())
        },
    )
}

/// The artifact at `archive`, verified against `sha256`: the cached one if its
/// digest matches (a mismatch is refused, never replaced), otherwise a fresh
/// download into a work directory, checked before it enters the cache. An
/// empty `sha256` (a release named on the command line) is taken on first use.
fn ensure(
    sha256: &str,
    what: &str,
    archive: &Path,
    cache: &Path,
    download: impl FnOnce(&Path) -> Result<PathBuf>,
    extra_check: impl FnOnce(&Path) -> Result<()>,
) -> Result<bool> {
    if sha256.is_empty() {
        return first_use(archive, cache, download);
    }
    if archive.exists() {
        let actual = sha256_file(archive)?;
        if actual != sha256 {
            bail!(
                "{}: digest mismatch: the cached artifact has sha256 {actual}, releases.toml records {sha256}; \
                 refusing it (inspect, then delete the file to download again)",
                archive.display()
            );
        }
        return Ok(false);
    }
    let work = tempfile::tempdir_in(cache).with_context(|| format!("{}: cannot create a download directory", cache.display()))?;
    let file = download(work.path())?;
    let actual = sha256_file(&file)?;
    if actual != sha256 {
        bail!("{}: digest mismatch: {what} downloaded with sha256 {actual}, releases.toml records {sha256}; refusing it", file.display());
    }
    extra_check(&file)?;
    std::fs::rename(&file, archive).with_context(|| format!("{}: cannot move the verified artifact into the cache", archive.display()))?;
    Ok(true)
}

/// `npm pack` of exactly one package version into `work`; returns the tarball.
fn npm_pack(n: &NpmSource, work: &Path) -> Result<PathBuf> {
    let spec = format!("{}@{}", n.package, n.version);
    let out =
        Command::new("npm").args(["pack", &spec, "--silent", "--pack-destination"]).arg(work).output().context("cannot run npm (is Node.js installed?)")?;
    if !out.status.success() {
        bail!("npm pack {spec}: {}", String::from_utf8_lossy(&out.stderr).trim());
    }
    single_entry(work, |p: &Path| p.extension().is_some_and(|e| e == "tgz"))
}

/// A release named on the command line has no recorded digest: it is
/// downloaded afresh every time and its digest is only reported.
fn first_use(archive: &Path, cache: &Path, download: impl FnOnce(&Path) -> Result<PathBuf>) -> Result<bool> {
    let work = tempfile::tempdir_in(cache).with_context(|| format!("{}: cannot create a download directory", cache.display()))?;
    let file = download(work.path())?;
    std::fs::rename(&file, archive).with_context(|| format!("{}: cannot move the artifact into the cache", archive.display()))?;
    Ok(true)
}

/// Runs `pip download` for exactly one sdist into `work/download` and returns its path.
///
/// The digest goes to pip too (`--require-hashes`), so pip refuses a different
/// file before it runs the sdist's build backend to read its metadata; our own
/// check afterwards does not depend on pip doing so.
fn pip_download(p: &PypiSource, work: &Path) -> Result<PathBuf> {
    let requirements = work.join("requirements.txt");
    // A release named on the command line has no digest to require yet.
    let line =
        if p.sha256.is_empty() { format!("{}=={}\n", p.package, p.version) } else { format!("{}=={} --hash=sha256:{}\n", p.package, p.version, p.sha256) };
    std::fs::write(&requirements, line).with_context(|| format!("{}: cannot write", requirements.display()))?;
    let download = work.join("download");
    let require_hashes = if p.sha256.is_empty() { "--no-cache-dir" } else { "--require-hashes" };
    let output = Command::new("pip")
        .args(["download", "--no-deps", "--no-binary", ":all:", require_hashes, "--disable-pip-version-check", "-r"])
        .arg(&requirements)
        .arg("-d")
        .arg(&download)
        .output()
        .context("cannot run `pip` (is it installed and on PATH?)")?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let kind = if stderr.contains("DO NOT MATCH THE HASHES") { "digest mismatch, pip refused the download" } else { "pip download failed" };
        bail!("{}=={}: {kind} ({}):\n{}", p.package, p.version, output.status, stderr.trim_end());
    }
    single_entry(&download, |p| p.is_file() && p.to_string_lossy().ends_with(".tar.gz"))
        .with_context(|| format!("{}=={}: pip did not leave exactly one .tar.gz", p.package, p.version))
}

/// The one entry of `dir` that satisfies `wanted`, and no other entry at all.
fn single_entry(dir: &Path, wanted: impl Fn(&Path) -> bool) -> Result<PathBuf> {
    let mut entries = Vec::new();
    for entry in std::fs::read_dir(dir).with_context(|| format!("{}: cannot list", dir.display()))? {
        entries.push(entry.with_context(|| format!("{}: cannot list", dir.display()))?.path());
    }
    match entries.as_slice() {
        [one] if wanted(one) => Ok(one.clone()),
        _ => {
            let names: Vec<String> = entries.iter().filter_map(|e| e.file_name()).map(|n| n.to_string_lossy().into_owned()).collect();
            bail!("{}: expected exactly one entry of the right kind, found [{}]", dir.display(), names.join(", "))
        }
    }
}

/// Lower-case hex sha256 of a file's bytes.
pub fn sha256_file(path: &Path) -> Result<String> {
    let mut file = File::open(path).with_context(|| format!("{}: cannot open", path.display()))?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = file.read(&mut buf).with_context(|| format!("{}: cannot read", path.display()))?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(fcd::canon::hex(&hasher.finalize()))
}

/// Unpacks a .tar.gz into a fresh `dest` and returns its single top-level folder.
/// On any error nothing is left at `dest`.
pub fn unpack_tar_gz(archive: &Path, dest: &Path) -> Result<PathBuf> {
    if dest.exists() {
        std::fs::remove_dir_all(dest).with_context(|| format!("{}: cannot remove the previous unpacked tree", dest.display()))?;
    }
    std::fs::create_dir_all(dest).with_context(|| format!("{}: cannot create", dest.display()))?;
    let result = unpack_entries(archive, dest)
        .and_then(|()| single_entry(dest, Path::is_dir).with_context(|| format!("{}: the archive has no single top-level folder", archive.display())));
    if result.is_err() {
        let _ = std::fs::remove_dir_all(dest);
    }
    result
}

fn unpack_entries(archive: &Path, dest: &Path) -> Result<()> {
    let file = File::open(archive).with_context(|| format!("{}: cannot open", archive.display()))?;
    let mut tar = tar::Archive::new(flate2::read::GzDecoder::new(file));
    let entries = tar.entries().with_context(|| format!("{}: not a tar.gz", archive.display()))?;
    for entry in entries {
        let mut entry = entry.with_context(|| format!("{}: corrupt archive", archive.display()))?;
        let path = entry.path().with_context(|| format!("{}: an entry has an unreadable path", archive.display()))?.into_owned();
        let kind = entry.header().entry_type();
        if kind.is_pax_global_extensions() {
            continue;
        }
        check_entry_path(&path).with_context(|| format!("{}: entry `{}`", archive.display(), path.display()))?;
        if !(kind.is_file() || kind.is_dir()) {
            bail!("{}: entry `{}` is a {kind:?}; only files and directories are unpacked", archive.display(), path.display());
        }
        let target = dest.join(&path);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).with_context(|| format!("{}: cannot create", parent.display()))?;
        }
        entry.unpack(&target).with_context(|| format!("{}: cannot unpack `{}`", archive.display(), path.display()))?;
    }
    Ok(())
}

/// Refuses absolute paths and `..`: an entry must stay inside the destination.
fn check_entry_path(path: &Path) -> Result<()> {
    for component in path.components() {
        match component {
            Component::Normal(_) | Component::CurDir => {}
            Component::ParentDir => bail!("refused: the path climbs out with `..`"),
            Component::RootDir | Component::Prefix(_) => bail!("refused: the path is absolute"),
        }
    }
    if path.components().all(|c| c == Component::CurDir) {
        bail!("refused: the path is empty");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tampered_cached_artifact_is_refused() {
        let cache = tempfile::tempdir().unwrap();
        let archive = cache.path().join("x.tar.gz");
        std::fs::write(&archive, b"not the reviewed bytes").unwrap();
        let source = PypiSource { package: "mcp-server-git".into(), version: "1".into(), sha256: "0".repeat(64) };
        let err = ensure_pypi(&source, &archive, cache.path()).unwrap_err();
        assert!(format!("{err:#}").contains("digest mismatch"), "{err:#}");
        let npm = NpmSource { package: "p".into(), version: "1".into(), sha256: "0".repeat(64), integrity: None };
        let tgz = cache.path().join("y.tgz");
        std::fs::write(&tgz, b"tampered").unwrap();
        assert!(format!("{:#}", ensure_npm(&npm, &tgz, cache.path()).unwrap_err()).contains("digest mismatch"));
    }

    #[test]
    fn entry_paths_outside_the_destination_are_refused() {
        assert!(check_entry_path(Path::new("pkg-1.0/src/a.py")).is_ok());
        assert!(check_entry_path(Path::new("./pkg-1.0/")).is_ok());
        assert!(check_entry_path(Path::new("/etc/passwd")).is_err());
        assert!(check_entry_path(Path::new("pkg/../../x")).is_err());
        assert!(check_entry_path(Path::new(".")).is_err());
    }

    /// A tar.gz with one entry whose raw name is written byte for byte, as a hostile archive would.
    fn archive_with(name: &[u8]) -> Vec<u8> {
        let mut header = tar::Header::new_old();
        header.as_old_mut().name[..name.len()].copy_from_slice(name);
        header.set_size(1);
        header.set_mode(0o644);
        header.set_entry_type(tar::EntryType::Regular);
        header.set_cksum();
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        {
            let mut builder = tar::Builder::new(&mut gz);
            builder.append(&header, &b"x"[..]).unwrap();
            builder.finish().unwrap();
        }
        gz.finish().unwrap()
    }

    #[test]
    fn archive_climbing_out_is_refused_and_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let archive = dir.path().join("a.tar.gz");
        std::fs::write(&archive, archive_with(b"pkg/../../escape")).unwrap();
        let dest = dir.path().join("out");
        let e = unpack_tar_gz(&archive, &dest).unwrap_err();
        assert!(format!("{e:#}").contains("climbs out"), "{e:#}");
        assert!(!dest.exists());
        assert!(!dir.path().join("escape").exists());
    }

    #[test]
    fn archive_with_one_folder_unpacks_to_it() {
        let dir = tempfile::tempdir().unwrap();
        let archive = dir.path().join("a.tar.gz");
        std::fs::write(&archive, archive_with(b"pkg-1.0/a.py")).unwrap();
        let root = unpack_tar_gz(&archive, &dir.path().join("out")).unwrap();
        assert_eq!(root, dir.path().join("out/pkg-1.0"));
        assert_eq!(std::fs::read(root.join("a.py")).unwrap(), b"x");
    }
}
