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

/// The workspace root (this file is also compiled into xtask, one level down).
fn root() -> PathBuf {
    let here = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    if here.join("profiles").is_dir() { here } else { here.parent().map(Path::to_path_buf).unwrap_or(here) }
}

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
    let digest = fcd::canon::sha256(&bytes);
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
