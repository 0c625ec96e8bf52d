//! Official artifacts onto this machine: download with the registry's own
//! client (`pip download`, `npm pack`) or archive a git tag, verify the
//! digest, and only then keep and unpack the artifact. `fcd release add` and
//! `cargo xtask releases` both fetch through here.
//!
//! Cache layout: `<cache>/<id>.tar.gz` (an sdist or a git tag of a mirror),
//! `<cache>/<id>.tgz` (an npm tarball) or `<cache>/<id>.tar` (a git tag as
//! `fcd release add` archives it) is the verified artifact, `<cache>/<id>/`
//! its unpacked tree (recreated on every fetch). A cached artifact whose
//! digest differs is refused, not replaced: someone or something altered it,
//! and a person should look before it is deleted.
//!
//! Unpacking is safe: only files and directories, no absolute path, no `..`,
//! and exactly one top-level folder, which is the release root.

use std::fs::File;
use std::io::Read;
use std::path::{Component, Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};
use serde::Deserialize;
use sha2::{Digest, Sha256};

/// An sdist on PyPI, fetched with `pip download`.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PypiSource {
    pub package: String,
    pub version: String,
    /// Lower-case hex sha256 of the sdist, as the registry publishes it.
    pub sha256: String,
}

/// A package on the npm registry, fetched with `npm pack`.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NpmSource {
    pub package: String,
    pub version: String,
    /// Lower-case hex sha256 of the packed tarball.
    pub sha256: String,
    /// The registry's own `dist.integrity` (`sha512-BASE64`), checked as well when given.
    pub integrity: Option<String>,
}

/// A tag of an official git repository, read from a local mirror, or a
/// commit without a tag (some releases were published from untagged commits).
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GitSource {
    pub repository: String,
    /// The tag; without one, `commit` (40 hex digits) is the release.
    #[serde(default)]
    pub tag: String,
    /// The commit the tag must point to.
    pub commit: String,
    /// Only these folders of the tag (the part that holds the handler and its
    /// package); the whole tree when empty.
    #[serde(default)]
    pub paths: Vec<String>,
}

impl GitSource {
    /// The revision git reads: the tag, or the commit when there is none.
    pub fn rev(&self) -> &str {
        if self.tag.is_empty() { &self.commit } else { &self.tag }
    }
}

/// Where the digest an artifact is checked against comes from, for messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DigestFrom {
    /// The profile's releases.toml.
    Manifest,
    /// `--sha256` on the command line.
    Option,
}

impl DigestFrom {
    fn records(self) -> &'static str {
        match self {
            DigestFrom::Manifest => "releases.toml records",
            DigestFrom::Option => "--sha256 expects",
        }
    }
}

/// A release ready for the pipeline.
#[derive(Debug, Clone)]
pub struct Materialized {
    /// `sha256:HEX` of the verified artifact (none for a git tag of a mirror: its identity is the commit).
    pub artifact_digest: Option<String>,
    /// Where the tree came from, for the report: registry digest or commit and tree ids.
    pub provenance: String,
    /// The release root: the single top-level folder of the unpacked artifact.
    pub root: PathBuf,
    /// Whether this run downloaded the artifact (false: the verified cache was used).
    pub downloaded: bool,
}

/// The sdist of `p` under `cache` as release `id`, verified against
/// `p.sha256` (from `from`) and unpacked. An empty `sha256` takes the
/// artifact on first use: pip still checks it against the sha256 the index
/// publishes with its link, and the digest is reported.
pub fn pypi(id: &str, p: &PypiSource, from: DigestFrom, cache: &Path) -> Result<Materialized> {
    create_cache(cache)?;
    let archive = cache.join(format!("{id}.tar.gz"));
    let downloaded = ensure_pypi(p, from, &archive, cache)?;
    let root = unpack_tar_gz(&archive, &cache.join(id))?;
    let digest = format!("sha256:{}", sha256_file(&archive)?);
    Ok(Materialized { provenance: format!("pypi {}=={} {digest}", p.package, p.version), artifact_digest: Some(digest), root, downloaded })
}

/// The npm tarball of `n` under `cache` as release `id`, verified against
/// `n.sha256` (from `from`) and, when given, the registry's `integrity`, then
/// unpacked. An empty `sha256` takes the tarball on first use (still checked
/// against `integrity` when given).
pub fn npm(id: &str, n: &NpmSource, from: DigestFrom, cache: &Path) -> Result<Materialized> {
    create_cache(cache)?;
    let archive = cache.join(format!("{id}.tgz"));
    let downloaded = ensure_npm(n, from, &archive, cache)?;
    let root = unpack_tar_gz(&archive, &cache.join(id))?;
    let digest = format!("sha256:{}", sha256_file(&archive)?);
    Ok(Materialized { provenance: format!("npm {}@{} {digest}", n.package, n.version), artifact_digest: Some(digest), root, downloaded })
}

/// The registry's `dist.integrity` of one npm package version (`sha512-BASE64`), from `npm view`.
pub fn npm_integrity(package: &str, version: &str) -> Result<String> {
    let spec = format!("{package}@{version}");
    let out = Command::new("npm").args(["view", &spec, "dist.integrity", "--json"]).output().context("cannot run npm (is Node.js installed?)")?;
    if !out.status.success() {
        bail!("npm view {spec} dist.integrity: {}", String::from_utf8_lossy(&out.stderr).trim());
    }
    let value: serde_json::Value = serde_json::from_slice(&out.stdout)
        .with_context(|| format!("npm view {spec} dist.integrity: not JSON: {}", String::from_utf8_lossy(&out.stdout).trim()))?;
    match value.as_str() {
        Some(i) if i.starts_with("sha512-") => Ok(i.to_owned()),
        _ => bail!("npm view {spec} dist.integrity: the registry gives no sha512 integrity ({value})"),
    }
}

fn create_cache(cache: &Path) -> Result<()> {
    std::fs::create_dir_all(cache).with_context(|| format!("{}: cannot create the cache directory", cache.display()))
}

/// `git archive` (tar.gz) of a tag of a local mirror as release `id`, after
/// checking the tag still names the reviewed commit (a moved tag is refused).
pub fn git_mirror(id: &str, g: &GitSource, mirror: &Path, cache: &Path) -> Result<Materialized> {
    create_cache(cache)?;
    let git = |args: &[&str]| git_in(mirror, args);
    let commit = String::from_utf8_lossy(&git(&["rev-parse", &format!("{}^{{commit}}", g.rev())])?).trim().to_owned();
    if !g.commit.is_empty() && commit != g.commit {
        bail!(
            "release `{id}`: tag {} of {} is commit {commit} in {}, releases.toml records {}; refusing it",
            g.rev(),
            g.repository,
            mirror.display(),
            g.commit
        );
    }
    let tree = String::from_utf8_lossy(&git(&["rev-parse", &format!("{}^{{tree}}", g.rev())])?).trim().to_owned();
    let archive = cache.join(format!("{id}.tar.gz"));
    let prefix = format!("--prefix={id}/");
    let output = archive.to_string_lossy().into_owned();
    let mut args = vec!["archive", "--format=tar.gz", prefix.as_str(), "-o", output.as_str(), commit.as_str(), "--"];
    args.extend(g.paths.iter().map(String::as_str));
    git(&args)?;
    let root = unpack_tar_gz(&archive, &cache.join(id))?;
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

/// Runs git on the repository whose git directory is `git_dir`; its stdout.
fn git_in(git_dir: &Path, args: &[&str]) -> Result<Vec<u8>> {
    let out = Command::new("git").arg("--git-dir").arg(git_dir).args(args).output().with_context(|| format!("{}: cannot run git", git_dir.display()))?;
    if !out.status.success() {
        bail!("{}: git {}: {}", git_dir.display(), args.join(" "), String::from_utf8_lossy(&out.stderr).trim());
    }
    Ok(out.stdout)
}

/// A tag of a local repository, resolved.
#[derive(Debug, Clone)]
pub struct GitTag {
    /// The repository's git directory (the repository itself when bare).
    pub git_dir: PathBuf,
    pub tag: String,
    /// The commit the tag names, and that commit's tree.
    pub commit: String,
    pub tree: String,
}

/// Resolves `refs/tags/TAG` of the repository at `repo` (bare or with a work tree).
pub fn git_tag(repo: &Path, tag: &str) -> Result<GitTag> {
    if tag.is_empty() || tag.starts_with('-') {
        bail!("`{tag}` is not a tag name");
    }
    let out = Command::new("git").arg("-C").arg(repo).args(["rev-parse", "--absolute-git-dir"]).output().context("cannot run git (is it installed?)")?;
    if !out.status.success() {
        bail!("{}: not a git repository ({})", repo.display(), String::from_utf8_lossy(&out.stderr).trim());
    }
    let git_dir = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    let resolve = |what: &str| -> Result<String> {
        let out = Command::new("git")
            .arg("--git-dir")
            .arg(&git_dir)
            .args(["rev-parse", "--verify", "--quiet", &format!("refs/tags/{tag}^{{{what}}}")])
            .output()
            .with_context(|| format!("{}: cannot run git", git_dir.display()))?;
        if !out.status.success() {
            bail!("{}: no tag `{tag}`", repo.display());
        }
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
    };
    let commit = resolve("commit")?;
    let tree = resolve("tree")?;
    Ok(GitTag { git_dir, tag: tag.to_owned(), commit, tree })
}

/// The folder a tag's archive unpacks to: the tag, with every character
/// outside `[A-Za-z0-9._-]` written `-`.
pub fn tag_folder(tag: &str) -> String {
    let folder: String = tag.chars().map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') { c } else { '-' }).collect();
    if folder.starts_with('.') { format!("-{folder}") } else { folder }
}

/// A git tag as an artifact for release `id`: `git archive --format=tar
/// --prefix=FOLDER/ COMMIT` (uncompressed, so the same commit gives the same
/// bytes on every git version; `FOLDER` is [`tag_folder`]), whose sha256 is the
/// artifact digest. Checked against `sha256` (from `from`) unless it is empty,
/// then kept at `<cache>/<id>.tar` and unpacked.
pub fn git_tag_archive(id: &str, t: &GitTag, sha256: &str, from: DigestFrom, cache: &Path) -> Result<Materialized> {
    create_cache(cache)?;
    let work = tempfile::tempdir_in(cache).with_context(|| format!("{}: cannot create a work directory", cache.display()))?;
    let file = work.path().join("archive.tar");
    let prefix = format!("--prefix={}/", tag_folder(&t.tag));
    let output = file.to_string_lossy().into_owned();
    // The user's configuration must not change the bytes: line endings as committed, git's default modes.
    git_in(&t.git_dir, &["-c", "core.autocrlf=false", "-c", "tar.umask=0002", "archive", "--format=tar", &prefix, "-o", &output, &t.commit])?;
    let actual = sha256_file(&file)?;
    if !sha256.is_empty() && actual != sha256 {
        bail!("digest mismatch: tag {} (commit {}) archives with sha256 {actual}, {} {sha256}; refusing it", t.tag, t.commit, from.records());
    }
    let archive = cache.join(format!("{id}.tar"));
    std::fs::rename(&file, &archive).with_context(|| format!("{}: cannot move the verified artifact into the cache", archive.display()))?;
    let root = unpack_tar(&archive, &cache.join(id))?;
    Ok(Materialized {
        artifact_digest: Some(format!("sha256:{actual}")),
        provenance: format!("git tag {} of {} commit {} tree {} sha256:{actual}", t.tag, t.git_dir.display(), t.commit, t.tree),
        root,
        downloaded: false,
    })
}

/// The verified sdist at `archive`; returns whether it downloaded.
fn ensure_pypi(p: &PypiSource, from: DigestFrom, archive: &Path, cache: &Path) -> Result<bool> {
    let what = format!("{}=={}", p.package, p.version);
    ensure(&p.sha256, from, &what, archive, cache, |work| pip_download(p, work), |_| Ok(()))
}

/// The verified npm tarball at `archive` (our sha256 and, when recorded, the
/// registry's sha512 integrity); returns whether it downloaded.
fn ensure_npm(n: &NpmSource, from: DigestFrom, archive: &Path, cache: &Path) -> Result<bool> {
    let what = format!("{}@{}", n.package, n.version);
    ensure(
        &n.sha256,
        from,
        &what,
        archive,
        cache,
        |work| npm_pack(n, work),
        |file| {
            let Some(integrity) = &n.integrity else { return Ok(()) };
            let bytes = std::fs::read(file).with_context(|| format!("{}: cannot read", file.display()))?;
            let got = format!("sha512-{}", base64::Engine::encode(&base64::engine::general_purpose::STANDARD, sha2::Sha512::digest(&bytes)));
            if &got != integrity {
                let by = if from == DigestFrom::Manifest { "the registry's integrity in releases.toml is" } else { "the registry's integrity is" };
                bail!("{}: integrity mismatch: {what} is {got}, {by} {integrity}; refusing it", file.display());
            }
            Ok(())
        },
    )
}

/// The artifact at `archive`, verified against `sha256`: the cached one if its
/// digest matches (a mismatch is refused, never replaced), otherwise a fresh
/// download into a work directory, checked before it enters the cache. An
/// empty `sha256` (a release without a recorded digest) is taken on first use.
fn ensure(
    sha256: &str,
    from: DigestFrom,
    what: &str,
    archive: &Path,
    cache: &Path,
    download: impl FnOnce(&Path) -> Result<PathBuf>,
    extra_check: impl FnOnce(&Path) -> Result<()>,
) -> Result<bool> {
    if sha256.is_empty() {
        return first_use(archive, cache, download, extra_check);
    }
    let records = from.records();
    if archive.exists() {
        let actual = sha256_file(archive)?;
        if actual != sha256 {
            bail!(
                "{}: digest mismatch: the cached artifact has sha256 {actual}, {records} {sha256}; \
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
        bail!("{}: digest mismatch: {what} downloaded with sha256 {actual}, {records} {sha256}; refusing it", file.display());
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

/// A release without a recorded digest is downloaded afresh every time and
/// its digest is only reported (after the check the registry's own digest allows).
fn first_use(archive: &Path, cache: &Path, download: impl FnOnce(&Path) -> Result<PathBuf>, extra_check: impl FnOnce(&Path) -> Result<()>) -> Result<bool> {
    let work = tempfile::tempdir_in(cache).with_context(|| format!("{}: cannot create a download directory", cache.display()))?;
    let file = download(work.path())?;
    extra_check(&file)?;
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
    // A release without a recorded digest has none to require yet.
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
    Ok(fcd_model::canon::hex(&hasher.finalize()))
}

/// Unpacks a .tar.gz into a fresh `dest` and returns its single top-level folder.
/// On any error nothing is left at `dest`.
pub fn unpack_tar_gz(archive: &Path, dest: &Path) -> Result<PathBuf> {
    unpack(archive, dest, true)
}

/// Unpacks an uncompressed .tar like [`unpack_tar_gz`].
pub fn unpack_tar(archive: &Path, dest: &Path) -> Result<PathBuf> {
    unpack(archive, dest, false)
}

fn unpack(archive: &Path, dest: &Path, gzip: bool) -> Result<PathBuf> {
    if dest.exists() {
        std::fs::remove_dir_all(dest).with_context(|| format!("{}: cannot remove the previous unpacked tree", dest.display()))?;
    }
    std::fs::create_dir_all(dest).with_context(|| format!("{}: cannot create", dest.display()))?;
    let result = File::open(archive)
        .with_context(|| format!("{}: cannot open", archive.display()))
        .and_then(|file| if gzip { unpack_entries(flate2::read::GzDecoder::new(file), archive, dest) } else { unpack_entries(file, archive, dest) })
        .and_then(|()| single_entry(dest, Path::is_dir).with_context(|| format!("{}: the archive has no single top-level folder", archive.display())));
    if result.is_err() {
        let _ = std::fs::remove_dir_all(dest);
    }
    result
}

fn unpack_entries(reader: impl Read, archive: &Path, dest: &Path) -> Result<()> {
    let mut tar = tar::Archive::new(reader);
    let entries = tar.entries().with_context(|| format!("{}: not a tar archive", archive.display()))?;
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
        let err = ensure_pypi(&source, DigestFrom::Manifest, &archive, cache.path()).unwrap_err();
        assert!(format!("{err:#}").contains("digest mismatch"), "{err:#}");
        let npm = NpmSource { package: "p".into(), version: "1".into(), sha256: "0".repeat(64), integrity: None };
        let tgz = cache.path().join("y.tgz");
        std::fs::write(&tgz, b"tampered").unwrap();
        let err = ensure_npm(&npm, DigestFrom::Option, &tgz, cache.path()).unwrap_err();
        assert!(format!("{err:#}").contains(&format!("digest mismatch: the cached artifact has sha256 {}", sha256_file(&tgz).unwrap())), "{err:#}");
        assert!(format!("{err:#}").contains(&format!("--sha256 expects {}", "0".repeat(64))), "{err:#}");
    }

    #[test]
    fn entry_paths_outside_the_destination_are_refused() {
        assert!(check_entry_path(Path::new("pkg-1.0/src/a.py")).is_ok());
        assert!(check_entry_path(Path::new("./pkg-1.0/")).is_ok());
        assert!(check_entry_path(Path::new("/etc/passwd")).is_err());
        assert!(check_entry_path(Path::new("pkg/../../x")).is_err());
        assert!(check_entry_path(Path::new(".")).is_err());
    }

    /// A tar with one entry whose raw name is written byte for byte, as a hostile archive would.
    fn tar_with(name: &[u8]) -> Vec<u8> {
        let mut header = tar::Header::new_old();
        header.as_old_mut().name[..name.len()].copy_from_slice(name);
        header.set_size(1);
        header.set_mode(0o644);
        header.set_entry_type(tar::EntryType::Regular);
        header.set_cksum();
        let mut builder = tar::Builder::new(Vec::new());
        builder.append(&header, &b"x"[..]).unwrap();
        builder.into_inner().unwrap()
    }

    fn archive_with(name: &[u8]) -> Vec<u8> {
        use std::io::Write as _;
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(&tar_with(name)).unwrap();
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
        let plain = dir.path().join("a.tar");
        std::fs::write(&plain, tar_with(b"/etc/escape")).unwrap();
        assert!(format!("{:#}", unpack_tar(&plain, &dest).unwrap_err()).contains("absolute"));
        assert!(!dest.exists());
    }

    #[test]
    fn archive_with_one_folder_unpacks_to_it() {
        let dir = tempfile::tempdir().unwrap();
        let archive = dir.path().join("a.tar.gz");
        std::fs::write(&archive, archive_with(b"pkg-1.0/a.py")).unwrap();
        let root = unpack_tar_gz(&archive, &dir.path().join("out")).unwrap();
        assert_eq!(root, dir.path().join("out/pkg-1.0"));
        assert_eq!(std::fs::read(root.join("a.py")).unwrap(), b"x");
        let plain = dir.path().join("a.tar");
        std::fs::write(&plain, tar_with(b"pkg-1.0/a.py")).unwrap();
        assert_eq!(unpack_tar(&plain, &dir.path().join("out2")).unwrap(), dir.path().join("out2/pkg-1.0"));
    }

    #[test]
    fn two_top_level_entries_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let mut builder = tar::Builder::new(Vec::new());
        for name in ["a/x", "b/x"] {
            let mut header = tar::Header::new_gnu();
            header.set_size(1);
            header.set_mode(0o644);
            header.set_cksum();
            builder.append_data(&mut header, name, &b"x"[..]).unwrap();
        }
        let plain = dir.path().join("two.tar");
        std::fs::write(&plain, builder.into_inner().unwrap()).unwrap();
        let e = unpack_tar(&plain, &dir.path().join("out")).unwrap_err();
        assert!(format!("{e:#}").contains("no single top-level folder"), "{e:#}");
    }

    #[test]
    fn tag_folders_are_plain_names() {
        assert_eq!(tag_folder("v1.2.3"), "v1.2.3");
        assert_eq!(tag_folder("release/1.0"), "release-1.0");
        assert_eq!(tag_folder(".hidden"), "-.hidden");
    }
}
