//! The gateway's one TOML file: where the runtime and the registry are, whom
//! calls are formed for and under which contract, which issuers' certificates
//! count, the tools it fronts, and for each registered epoch the stock server
//! command, the installed files it runs and its configuration file.
//! Every key is known (unknown keys are refused) and every path is resolved
//! against the file's directory, so a configuration means one thing.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use fcd_model::error::InputError;
use fcd_runtime::runtime::CallDurability;

/// The gateway's configuration, as read.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// The runtime store: `sqlite:FILE` or `etcd:ENDPOINTS`.
    pub runtime: String,
    /// The registry (SQLite) the epochs were admitted into.
    pub registry: PathBuf,
    /// The principal calls are formed for (the agent's user).
    pub principal: String,
    /// The contract calls are formed under (JSON); certificates must name its digest.
    pub contract: PathBuf,
    /// Trusted certificate issuers' public keys (PEM).
    #[serde(default)]
    pub issuers: Vec<PathBuf>,
    /// A directory of certificates (DSSE envelopes, `*.json`) the gateway
    /// offers the runtime at formation. Optional: without it no call is formed with a successor.
    pub certificates: Option<PathBuf>,
    /// Seconds a formation stays admissible.
    #[serde(default = "default_ttl")]
    pub formation_ttl: u64,
    /// How durable the per-call records (formation, admission, fence,
    /// completion) are: `"full"` (the default: fsynced before the call goes
    /// on) or `"process-crash"` (SQLite only: they survive a crash of the
    /// gateway, and a crash of the host may lose the last of them, after
    /// which no epoch retires until an operator acknowledges it). Authority
    /// and lifecycle decisions are always fsynced.
    #[serde(default = "default_durability")]
    pub call_durability: String,
    /// The tools the gateway fronts; the client sees no other.
    pub tools: Vec<String>,
    /// Every registered epoch the gateway may run, by registry epoch id.
    #[serde(rename = "epoch")]
    pub epochs: Vec<EpochConfig>,
}

fn default_ttl() -> u64 {
    300
}

fn default_durability() -> String {
    CallDurability::Full.as_str().to_owned()
}

/// One registered epoch and how to run it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EpochConfig {
    /// The registry's epoch id (the digest of the release's manifest).
    pub id: String,
    /// The stock server: program and arguments (MCP over stdio).
    pub command: Vec<String>,
    /// Environment variables for the server, besides PATH and HOME.
    #[serde(default)]
    pub env: std::collections::BTreeMap<String, String>,
    /// Where the release's files are installed, measured at every final hop.
    pub installed: Installed,
    /// The configuration the release was registered with (JSON, the
    /// registry's config digest is over it in canonical form), measured at
    /// every final hop; when the server reads none, leave it out: its
    /// configuration is `{}`.
    pub config_file: Option<PathBuf>,
    /// The server's own configuration files, in any format (dbhub's TOML),
    /// read byte for byte at every final hop: their digest must be the one
    /// the runtime bound to the epoch when it was first registered there.
    #[serde(default)]
    pub server_config: Vec<PathBuf>,
}

/// How the summary's source files map onto the installation.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Installed {
    /// The installation directory (e.g. a virtual environment's site-packages, a package's directory under node_modules).
    pub root: PathBuf,
    /// The prefix of the summary's file paths that the installation drops
    /// (`src/` for a Python sdist's `src/` layout, `""` when paths are kept).
    /// Files outside the prefix (packaging files) are not installed and not measured.
    #[serde(default)]
    pub strip: String,
}

impl Config {
    /// Reads and checks the configuration at `path`; relative paths are taken from its directory.
    pub fn load(path: &Path) -> Result<Config, InputError> {
        let text = std::fs::read_to_string(path).map_err(|e| InputError::new(path, format!("cannot read: {e}")))?;
        let mut config: Config = toml::from_str(&text).map_err(|e| match e.span() {
            Some(span) => InputError::at_offset(path, &text, span.start, e.message().to_owned()),
            None => InputError::new(path, e.message().to_owned()),
        })?;
        let base = path.parent().unwrap_or(Path::new("."));
        let resolve = |p: &mut PathBuf| {
            if p.is_relative() {
                *p = base.join(&*p);
            }
        };
        resolve(&mut config.registry);
        resolve(&mut config.contract);
        config.issuers.iter_mut().for_each(resolve);
        if let Some(p) = config.certificates.as_mut() {
            resolve(p);
        }
        for e in &mut config.epochs {
            resolve(&mut e.installed.root);
            if let Some(p) = e.config_file.as_mut() {
                resolve(p);
            }
            e.server_config.iter_mut().for_each(resolve);
        }
        config.check(path)?;
        Ok(config)
    }

    fn check(&self, path: &Path) -> Result<(), InputError> {
        let fail = |m: String| Err(InputError::new(path, m));
        if self.tools.is_empty() {
            return fail("`tools` names no tool: the gateway would front nothing".into());
        }
        if self.epochs.is_empty() {
            return fail("no [[epoch]]: the gateway has nothing to run".into());
        }
        let mut seen = std::collections::BTreeSet::new();
        for e in &self.epochs {
            if !seen.insert(&e.id) {
                return fail(format!("epoch {} is given twice", e.id));
            }
            if e.command.is_empty() {
                return fail(format!("epoch {}: `command` is empty", e.id));
            }
        }
        if self.principal.is_empty() {
            return fail("`principal` is empty".into());
        }
        self.durability().map_err(|e| InputError::new(path, format!("`call_durability`: {e}")))?;
        Ok(())
    }

    /// The durability of per-call records the configuration asks for.
    pub fn durability(&self) -> Result<CallDurability, String> {
        CallDurability::parse(&self.call_durability)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"runtime = "sqlite:rt.sqlite"
registry = "registry.sqlite"
principal = "user:alice"
contract = "contract.json"
tools = ["git_diff"]

[[epoch]]
id = "sha256:one"
command = ["server", "--flag"]
installed = { root = "site", strip = "src/" }
"#;

    fn load(text: &str) -> Result<Config, InputError> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("gateway.toml");
        std::fs::write(&path, text).unwrap();
        Config::load(&path).map(|mut c| {
            // Paths are resolved against the file's directory; strip it to compare.
            c.registry = c.registry.strip_prefix(dir.path()).unwrap().to_owned();
            c.epochs[0].installed.root = c.epochs[0].installed.root.strip_prefix(dir.path()).unwrap().to_owned();
            c
        })
    }

    #[test]
    fn a_configuration_reads_with_its_paths_resolved() {
        let c = load(GOOD).unwrap();
        assert_eq!(c.registry, Path::new("registry.sqlite"));
        assert_eq!(c.epochs[0].installed.root, Path::new("site"));
        assert_eq!(c.formation_ttl, 300);
        assert!(c.epochs[0].config_file.is_none());
        assert_eq!(c.durability(), Ok(CallDurability::Full), "per-call records are fsynced unless the operator says otherwise");
        let fast = load(&GOOD.replace("tools =", "call_durability = \"process-crash\"\ntools =")).unwrap();
        assert_eq!(fast.durability(), Ok(CallDurability::ProcessCrash));
    }

    #[test]
    fn unknown_keys_and_empty_lists_are_refused_with_their_place() {
        let e = load(&GOOD.replace("tools =", "tool_list =")).unwrap_err().to_string();
        assert!(e.contains("tool_list") && e.contains("gateway.toml"), "{e}");
        let e = load(&GOOD.replace(r#"tools = ["git_diff"]"#, "tools = []")).unwrap_err().to_string();
        assert!(e.contains("names no tool"), "{e}");
        let e = load(&GOOD.replace(r#"command = ["server", "--flag"]"#, "command = []")).unwrap_err().to_string();
        assert!(e.contains("`command` is empty"), "{e}");
        let e = load(&GOOD.replace("tools =", "call_durability = \"normal\"\ntools =")).unwrap_err().to_string();
        assert!(e.contains("call_durability") && e.contains("process-crash"), "{e}");
        let twice = format!("{GOOD}\n[[epoch]]\nid = \"sha256:one\"\ncommand = [\"x\"]\ninstalled = {{ root = \"r\" }}\n");
        assert!(load(&twice).unwrap_err().to_string().contains("given twice"));
        let e = load(&GOOD.replace("installed = { root = \"site\", strip = \"src/\" }", "installed = { root = \"site\", strip = \"src/\", extra = 1 }"));
        assert!(e.is_err());
    }
}
