//! `fcd gateway init`: a gateway configuration written from the registry,
//! so that an operator with only the `fcd` binary goes from admitted
//! releases to a protected server. Every admitted epoch of the chosen
//! releases becomes an `epochs` entry of its release, the summaries' tools
//! become the server's tools, and each gets the principal's contract; what
//! only the operator knows (the server command, where it is installed, the
//! destination it acts on) is given on the command line. The text is
//! checked by [`Config::parse`] before it is returned, so `init` never
//! writes a configuration the gateway would refuse to read.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use fcd_model::summary::Summary;

use crate::config::Config;

/// What the operator says; the rest comes from the registry.
#[derive(Debug, Clone)]
pub struct Init {
    /// The runtime store (`sqlite:FILE` or `etcd:ENDPOINTS`).
    pub runtime: String,
    pub registry: PathBuf,
    pub principal: String,
    pub contract: PathBuf,
    pub issuer_key: Option<PathBuf>,
    pub server: String,
    pub destination: String,
    /// Tools of the server without a profile, fronted under `deny` (the default) unless pinned.
    pub extra_tools: Vec<String>,
    pub pinned: Vec<String>,
    pub command: Vec<String>,
    pub installed: PathBuf,
    /// The installation's prefix to drop; `None`: `src/` for a Python release with a `src/` layout, else none.
    pub strip: Option<String>,
    pub config_file: Option<PathBuf>,
    pub server_config: Vec<PathBuf>,
}

/// The configuration text for `releases` (release name and its admitted
/// epochs with their summaries, in order of preference), as it would be
/// read from `path`.
pub fn configuration(path: &Path, init: &Init, releases: &[(String, Vec<(String, Summary)>)]) -> Result<String, String> {
    if releases.is_empty() {
        return Err("no admitted release to front: add one with `fcd release add`".into());
    }
    let q = |s: &str| serde_json::to_string(s).unwrap_or_default();
    let p = |p: &Path| q(&p.to_string_lossy());
    let mut tools: Vec<String> = Vec::new();
    for (_, epochs) in releases {
        for (_, s) in epochs {
            if !tools.contains(&s.tool) {
                tools.push(s.tool.clone());
            }
        }
    }
    let profiled = tools.clone();
    tools.extend(init.extra_tools.iter().chain(&init.pinned).filter(|t| !profiled.contains(t)).cloned());
    let mut text = String::from("# Written by `fcd gateway init` from the registry; docs/gateway.md explains every key.\n");
    text.push_str(&format!("runtime = {}\nregistry = {}\n", q(&init.runtime), p(&init.registry)));
    text.push_str(&format!("# The principal of the stdio session: whose contracts decide its calls.\nprincipal = {}\n", q(&init.principal)));
    if let Some(key) = &init.issuer_key {
        text.push_str(&format!("# Signs the certificate of a successor release captured at formation.\nissuer_key = {}\n", p(key)));
    }
    for tool in &profiled {
        text.push_str(&format!("\n[[contract]]\nprincipal = {}\ntool = {}\nfile = {}\n", q(&init.principal), q(tool), p(&init.contract)));
    }
    text.push_str(&format!(
        "\n[[server]]\nname = {}\ntools = {}\ndestination = {}\n",
        q(&init.server),
        serde_json::to_string(&tools).map_err(|e| e.to_string())?,
        q(&init.destination)
    ));
    let mut policy = BTreeMap::new();
    for t in &tools {
        let p = if profiled.contains(t) {
            "decide"
        } else if init.pinned.contains(t) {
            "pin"
        } else {
            "deny"
        };
        policy.insert(t.as_str(), p);
    }
    let policy: Vec<String> = policy.iter().map(|(t, p)| format!("{t} = {}", q(p))).collect();
    text.push_str(&format!(
        "# decide: only a call the release's summary says is safe under the contract runs. pin: weaker, no decision. deny: refused.\npolicy = {{ {} }}\n",
        policy.join(", ")
    ));
    for (name, epochs) in releases {
        let strip = match &init.strip {
            Some(s) => s.clone(),
            // A Python sdist's `src/` layout is installed without its `src/` (and its packaging files are not installed).
            None if epochs.iter().all(|(_, s)| s.language == "python" && s.source.files.iter().any(|f| f.path.starts_with("src/"))) => "src/".into(),
            None => String::new(),
        };
        let ids: Vec<&str> = epochs.iter().map(|(id, _)| id.as_str()).collect();
        text.push_str(&format!(
            "\n[[server.release]]\nname = {}\nepochs = {}\ncommand = {}\ninstalled = {{ root = {}, strip = {} }}\n",
            q(name),
            serde_json::to_string(&ids).map_err(|e| e.to_string())?,
            serde_json::to_string(&init.command).map_err(|e| e.to_string())?,
            p(&init.installed),
            q(&strip)
        ));
        if let Some(f) = &init.config_file {
            text.push_str(&format!("config_file = {}\n", p(f)));
        }
        if !init.server_config.is_empty() {
            let files: Vec<String> = init.server_config.iter().map(|f| f.to_string_lossy().into_owned()).collect();
            text.push_str(&format!("server_config = {}\n", serde_json::to_string(&files).map_err(|e| e.to_string())?));
        }
    }
    Config::parse(path, &text).map_err(|e| format!("the written configuration does not read back: {e}"))?;
    Ok(text)
}
