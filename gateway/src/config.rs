//! The gateway's one TOML file: where the runtime and the registry are, the
//! principal of a stdio session, the contracts each principal's calls are
//! decided against (per tool), the gateway's issuer key for captured
//! successors, and the servers it fronts: for each, the tools, what the
//! gateway does with each (its policy), the authenticated destination, and
//! every release it may run (the stock server command, the installed files,
//! the configuration, and the registry epochs of the release's profiled
//! tools).
//!
//! Every key is known (unknown keys are refused) and every path is resolved
//! against the file's directory, so a configuration means one thing.

use std::collections::{BTreeMap, BTreeSet};
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
    /// Start over on a runtime store other than the one the registry bound
    /// (`fcd gateway serve --accept-new-store`): never read from the file.
    #[serde(skip)]
    pub accept_new_store: bool,
    /// The registry (SQLite) the epochs were admitted into.
    pub registry: PathBuf,
    /// The principal of a stdio session (the agent's user): the gateway's
    /// configuration says who the local client is, never the client.
    pub principal: String,
    /// The gateway's own issuer key (PKCS#8 PEM, `fcd keygen`): it signs the
    /// certificate of a successor captured at formation. Without it no
    /// successor is captured by the gateway.
    pub issuer_key: Option<PathBuf>,
    /// Seconds a captured successor's certificate is valid (default: `formation_ttl`).
    pub capture_validity: Option<u64>,
    /// Further trusted certificate issuers' public keys (PEM), for certificates offered from `certificates`.
    #[serde(default)]
    pub issuers: Vec<PathBuf>,
    /// A directory of certificates (DSSE envelopes, `*.json`) offered at
    /// formation when the gateway captured no successor itself. Optional.
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
    /// The largest message (one line) the gateway reads from its client, in
    /// bytes (default 64 MiB): a larger one is answered with an error and
    /// nothing of it runs.
    #[serde(default = "default_max_message_bytes")]
    pub max_message_bytes: usize,
    /// Seconds a forwarded call may wait for the stock server's reply
    /// (default 120): after that the call's lease is uncertain and the
    /// server process is stopped and started again for the next call.
    #[serde(default = "default_call_timeout")]
    pub call_timeout: u64,
    /// Seconds between two moves of the runtime store's mark in the registry
    /// while the gateway runs (default 1; 0: only when it stops). A SQLite
    /// store's entries cut from the end of its audit log are noticed at the
    /// next start unless they are newer than the last mark, so a gateway that
    /// crashes leaves at most this much of its log unwatched.
    #[serde(default = "default_store_mark_every")]
    pub store_mark_every: u64,
    /// The decision log on stderr: `"text"` (the default), `"json"` (one
    /// object a line) or `"off"`. One event per `tools/call`: the tool,
    /// principal, source epoch, outcome (`ran`, or the refusal code and its
    /// detail), latency and the digest of the arguments.
    #[serde(default = "default_log")]
    pub log: String,
    /// Also log the arguments' values (default false: their digest only,
    /// since arguments may carry what the log's readers should not see).
    #[serde(default)]
    pub log_arguments: bool,
    /// Streamable HTTP (`fcd gateway serve --listen`): where to listen and
    /// how clients authenticate. Without it the gateway speaks stdio only.
    pub http: Option<Http>,
    /// The contracts calls are decided against, one per principal and tool.
    #[serde(rename = "contract", default)]
    pub contracts: Vec<ContractConfig>,
    /// The servers the gateway fronts.
    #[serde(rename = "server")]
    pub servers: Vec<ServerConfig>,
}

/// The `[http]` table: the Streamable HTTP listener and its bearer tokens.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Http {
    /// The address to listen on (`127.0.0.1:8080`); `--listen` overrides it.
    pub listen: Option<String>,
    /// The issuer's public keys, a JWKS file (RFC 7517): a token verifies against one of them.
    pub jwks: Option<PathBuf>,
    /// The `iss` every token must carry.
    pub issuer: Option<String>,
    /// The `aud` every token must carry: this gateway's resource identifier.
    pub audience: Option<String>,
    /// The claim naming the principal (default `sub`).
    #[serde(default = "default_principal_claim")]
    pub principal_claim: String,
    /// Put before the claim's value to make the principal (`user:` makes `alice` `user:alice`).
    #[serde(default)]
    pub principal_prefix: String,
    /// Serve without authentication, every client as `principal`. Never a
    /// default: only on a listener nothing else can reach.
    #[serde(default)]
    pub allow_unauthenticated: bool,
    /// Host names (or `host:port`) the `Host` header may name, besides
    /// loopback names (rmcp refuses other hosts, against DNS rebinding).
    #[serde(default)]
    pub allowed_hosts: Vec<String>,
    /// Serve TLS: the certificate chain (PEM, the server's first) and its
    /// private key (PEM). Both or neither.
    pub tls_certificate: Option<PathBuf>,
    pub tls_key: Option<PathBuf>,
}

fn default_principal_claim() -> String {
    "sub".into()
}

/// No `[http]` table: no listen address, no token checks (so `--listen` alone does not start).
impl Default for Http {
    fn default() -> Http {
        Http {
            listen: None,
            jwks: None,
            issuer: None,
            audience: None,
            principal_claim: default_principal_claim(),
            principal_prefix: String::new(),
            allow_unauthenticated: false,
            allowed_hosts: Vec::new(),
            tls_certificate: None,
            tls_key: None,
        }
    }
}

fn default_call_timeout() -> u64 {
    120
}

fn default_store_mark_every() -> u64 {
    1
}

fn default_log() -> String {
    "text".into()
}

fn default_max_message_bytes() -> usize {
    crate::framing::DEFAULT_MAX_MESSAGE_BYTES
}

fn default_ttl() -> u64 {
    300
}

fn default_durability() -> String {
    CallDurability::Full.as_str().to_owned()
}

/// The contract of one principal for one tool (DESIGN.md's CONTRACT.json).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContractConfig {
    pub principal: String,
    /// The tool as the client sees it (namespaced `SERVER__TOOL` when two servers front the same name).
    pub tool: String,
    pub file: PathBuf,
}

/// What the gateway does with a tool's calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Policy {
    /// Decide every call on the summary of the release that will run it
    /// (the default for a tool with a registry epoch): only `safe` runs.
    Decide,
    /// Exact-source pinning without a decision: the call runs on the
    /// release its session listed, fenced, whatever it does. Weaker than
    /// `decide`; never a default.
    Pin,
    /// Refuse every call (the default for a tool without a registry epoch).
    Deny,
}

impl Policy {
    pub fn as_str(self) -> &'static str {
        match self {
            Policy::Decide => "decide",
            Policy::Pin => "pin",
            Policy::Deny => "deny",
        }
    }
}

/// One stock server and the releases of it the gateway may run.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerConfig {
    /// A short name (letters, digits, `_`, `-`): the namespace of its tools when names collide.
    pub name: String,
    /// The tools of the server the gateway fronts; the client sees no other.
    pub tools: Vec<String>,
    /// The authenticated destination the summaries' rules and the contracts
    /// see (`local:/srv/repo`, `sqlite:/srv/app.db`): where the server acts.
    pub destination: Option<String>,
    /// Per tool: `decide`, `pin` or `deny`. A tool left out is `decide` when
    /// a release names an epoch for it, `deny` otherwise.
    #[serde(default)]
    pub policy: BTreeMap<String, Policy>,
    /// Tools whose handler's own refusal is wanted: a `reject` decision is
    /// forwarded (the handler refuses the call itself) instead of being
    /// refused by the gateway.
    #[serde(default)]
    pub forward_reject: Vec<String>,
    /// The releases, in order of preference: a tool's source for a new
    /// session is the first release whose epoch for it is ADVERTISED.
    #[serde(rename = "release")]
    pub releases: Vec<ReleaseConfig>,
}

/// One release of a server and how to run it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReleaseConfig {
    /// A name for logs and errors (default: the command's program).
    pub name: Option<String>,
    /// The registry epochs of this release, one per profiled tool (each
    /// summary names its tool). An epoch not yet admitted in the registry
    /// is taken up at a later formation, once it is.
    #[serde(default)]
    pub epochs: Vec<String>,
    /// The stock server: program and arguments (MCP over stdio unless `url` is given).
    pub command: Vec<String>,
    /// Where the server `command` started speaks MCP over Streamable HTTP:
    /// `http://HOST:PORT/PATH` on a loopback address (`127.0.0.1`, `[::1]`,
    /// `localhost`). The gateway measures what it starts, so it talks only to
    /// a listener held by the process group it started. Without it, the
    /// server speaks MCP over stdio.
    pub url: Option<String>,
    /// Environment variables for the server, besides PATH and HOME.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Where the release's files are installed, measured before the server starts.
    pub installed: Installed,
    /// The configuration the release was registered with (JSON, the
    /// registry's config digest is over it in canonical form): the
    /// authenticated configuration calls are decided with, measured at
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

impl ReleaseConfig {
    /// The release's name for messages.
    pub fn label(&self) -> &str {
        self.name.as_deref().unwrap_or(&self.command[0])
    }

    /// The loopback address of `url`, when the server speaks Streamable HTTP.
    pub fn http_address(&self) -> Result<Option<std::net::SocketAddr>, String> {
        self.url.as_deref().map(loopback_address).transpose()
    }
}

/// The socket address of an `http://` URL on a loopback host with an explicit port.
fn loopback_address(url: &str) -> Result<std::net::SocketAddr, String> {
    let bad = |why: &str| format!("`url` = {url:?}: {why}");
    let rest = url.strip_prefix("http://").ok_or_else(|| bad("only http:// is spoken to a server the gateway started on this host"))?;
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    if authority.contains('@') {
        return Err(bad("user information in a URL is not sent"));
    }
    let (host, port) = authority.rsplit_once(':').ok_or_else(|| bad("the port must be given"))?;
    let port: u16 = port.parse().ok().filter(|p| *p != 0).ok_or_else(|| bad("the port must be a number from 1 to 65535"))?;
    let ip: std::net::IpAddr = match host {
        "localhost" => std::net::Ipv4Addr::LOCALHOST.into(),
        _ => host.trim_start_matches('[').trim_end_matches(']').parse().map_err(|_| bad("the host must be 127.0.0.1, [::1] or localhost"))?,
    };
    if !ip.is_loopback() {
        return Err(bad("the host must be a loopback address: the gateway measures the server it starts, and talks to no other"));
    }
    Ok(std::net::SocketAddr::new(ip, port))
}

impl ServerConfig {
    /// The policy of `tool`: the configured one, else `decide` when a release names an epoch, `deny` otherwise.
    /// `profiled` says whether one does (only the registry knows which tool an epoch is of).
    pub fn policy(&self, tool: &str, profiled: bool) -> Policy {
        match self.policy.get(tool) {
            Some(p) => *p,
            None if profiled => Policy::Decide,
            None => Policy::Deny,
        }
    }
}

impl Config {
    /// Reads and checks the configuration at `path`; relative paths are taken from its directory.
    pub fn load(path: &Path) -> Result<Config, InputError> {
        let text = std::fs::read_to_string(path).map_err(|e| InputError::new(path, format!("cannot read: {e}")))?;
        Config::parse(path, &text)
    }

    /// Reads and checks configuration `text`, as if read from `path`.
    pub fn parse(path: &Path, text: &str) -> Result<Config, InputError> {
        let mut config: Config = toml::from_str(text).map_err(|e| match e.span() {
            Some(span) => InputError::at_offset(path, text, span.start, e.message().to_owned()),
            None => InputError::new(path, e.message().to_owned()),
        })?;
        let base = path.parent().unwrap_or(Path::new("."));
        let resolve = |p: &mut PathBuf| {
            if p.is_relative() {
                *p = base.join(&*p);
            }
        };
        resolve(&mut config.registry);
        config.issuers.iter_mut().for_each(resolve);
        for p in [config.certificates.as_mut(), config.issuer_key.as_mut()].into_iter().flatten() {
            resolve(p);
        }
        config.contracts.iter_mut().for_each(|c| resolve(&mut c.file));
        if let Some(http) = config.http.as_mut() {
            for p in [http.jwks.as_mut(), http.tls_certificate.as_mut(), http.tls_key.as_mut()].into_iter().flatten() {
                resolve(p);
            }
        }
        for r in config.servers.iter_mut().flat_map(|s| s.releases.iter_mut()) {
            resolve(&mut r.installed.root);
            if let Some(p) = r.config_file.as_mut() {
                resolve(p);
            }
            r.server_config.iter_mut().for_each(resolve);
        }
        config.check(path)?;
        Ok(config)
    }

    fn check(&self, path: &Path) -> Result<(), InputError> {
        let fail = |m: String| Err(InputError::new(path, m));
        if let Some(http) = &self.http
            && http.tls_certificate.is_some() != http.tls_key.is_some()
        {
            return fail("[http]: give both `tls_certificate` and `tls_key`, or neither".into());
        }
        if self.servers.is_empty() {
            return fail("no [[server]]: the gateway would front nothing".into());
        }
        if self.principal.is_empty() {
            return fail("`principal` is empty".into());
        }
        let mut names = BTreeSet::new();
        let mut epochs = BTreeSet::new();
        for s in &self.servers {
            if s.name.is_empty() || !s.name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
                return fail(format!("server name `{}` must be letters, digits, `_` or `-`", s.name));
            }
            if !names.insert(&s.name) {
                return fail(format!("server `{}` is given twice", s.name));
            }
            if s.tools.is_empty() {
                return fail(format!("server `{}`: `tools` names no tool", s.name));
            }
            let tools: BTreeSet<&String> = s.tools.iter().collect();
            if tools.len() != s.tools.len() {
                return fail(format!("server `{}`: a tool is named twice in `tools`", s.name));
            }
            for t in s.policy.keys().chain(&s.forward_reject) {
                if !tools.contains(t) {
                    return fail(format!("server `{}`: `{t}` is not one of its `tools`", s.name));
                }
            }
            if s.releases.is_empty() {
                return fail(format!("server `{}`: no [[server.release]]: the gateway has nothing to run", s.name));
            }
            for r in &s.releases {
                if r.command.is_empty() {
                    return fail(format!("server `{}`: a release's `command` is empty", s.name));
                }
                r.http_address().map_err(|e| InputError::new(path, format!("server `{}`: {e}", s.name)))?;
                for e in &r.epochs {
                    if !epochs.insert(e) {
                        return fail(format!("epoch {e} is given twice"));
                    }
                }
            }
        }
        let visible: BTreeSet<String> = self.routes().into_iter().map(|r| r.visible).collect();
        let mut contracts = BTreeSet::new();
        for c in &self.contracts {
            if !visible.contains(&c.tool) {
                return fail(format!("[[contract]] for `{}`: no server fronts a tool of that name (fronted: {})", c.tool, join(&visible)));
            }
            if !contracts.insert((&c.principal, &c.tool)) {
                return fail(format!("two [[contract]]s for principal `{}` and tool `{}`", c.principal, c.tool));
            }
        }
        self.durability().map_err(|e| InputError::new(path, format!("`call_durability`: {e}")))?;
        if !matches!(self.log.as_str(), "text" | "json" | "off") {
            return fail(format!("`log` = {:?}: one of \"text\", \"json\", \"off\"", self.log));
        }
        if self.call_timeout == 0 {
            return fail("`call_timeout` = 0: a call needs at least a second to be answered".into());
        }
        if self.max_message_bytes < 4096 {
            return fail(format!("`max_message_bytes` = {}: a gateway needs at least 4096 bytes to read an initialize request", self.max_message_bytes));
        }
        Ok(())
    }

    /// The durability of per-call records the configuration asks for.
    pub fn durability(&self) -> Result<CallDurability, String> {
        CallDurability::parse(&self.call_durability)
    }

    /// Every fronted tool with the name the client sees: its own, or
    /// `SERVER__TOOL` when another server fronts a tool of the same name.
    pub fn routes(&self) -> Vec<Route> {
        let mut count: BTreeMap<&str, usize> = BTreeMap::new();
        for t in self.servers.iter().flat_map(|s| &s.tools) {
            *count.entry(t).or_default() += 1;
        }
        let mut out = Vec::new();
        for (server, s) in self.servers.iter().enumerate() {
            for t in &s.tools {
                let visible = if count[t.as_str()] > 1 { format!("{}__{t}", s.name) } else { t.clone() };
                out.push(Route { server, tool: t.clone(), visible });
            }
        }
        out
    }
}

/// A fronted tool: its server (index into `servers`), its name there, and the name the client sees.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    pub server: usize,
    pub tool: String,
    pub visible: String,
}

fn join(names: &BTreeSet<String>) -> String {
    names.iter().map(String::as_str).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"runtime = "sqlite:rt.sqlite"
registry = "registry.sqlite"
principal = "user:alice"

[[contract]]
principal = "user:alice"
tool = "git_diff"
file = "contract.json"

[[server]]
name = "git"
tools = ["git_diff", "git_status"]
destination = "local:/srv/repo"
policy = { git_status = "pin" }

[[server.release]]
epochs = ["sha256:one"]
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
            let r = &mut c.servers[0].releases[0];
            r.installed.root = r.installed.root.strip_prefix(dir.path()).unwrap().to_owned();
            c
        })
    }

    #[test]
    fn a_release_over_http_is_spoken_to_on_loopback_only() {
        let with = |url: &str| load(&GOOD.replace("installed = {", &format!("url = {url:?}\ninstalled = {{")));
        let c = with("http://127.0.0.1:8080/mcp").unwrap();
        assert_eq!(c.servers[0].releases[0].http_address(), Ok(Some("127.0.0.1:8080".parse().unwrap())));
        assert_eq!(with("http://[::1]:9/mcp").unwrap().servers[0].releases[0].http_address(), Ok(Some("[::1]:9".parse().unwrap())));
        assert!(with("http://localhost:1").is_ok());
        for (url, why) in [
            ("https://127.0.0.1:8080/mcp", "only http://"),
            ("http://10.0.0.1:8080/mcp", "the host must be a loopback address"),
            ("http://db.internal:8080/mcp", "the host must be 127.0.0.1"),
            ("http://127.0.0.1/mcp", "the port must be given"),
            ("http://127.0.0.1:0/mcp", "from 1 to 65535"),
            ("http://u:p@127.0.0.1:80/mcp", "user information"),
        ] {
            let e = with(url).unwrap_err().to_string();
            assert!(e.contains(why) && e.contains("server `git`"), "{url}: {e}");
        }
    }

    #[test]
    fn a_configuration_reads_with_its_paths_resolved_and_its_policies() {
        let c = load(GOOD).unwrap();
        assert_eq!(c.registry, Path::new("registry.sqlite"));
        assert_eq!(c.servers[0].releases[0].installed.root, Path::new("site"));
        assert_eq!(c.formation_ttl, 300);
        assert!(c.servers[0].releases[0].config_file.is_none());
        assert_eq!(c.durability(), Ok(CallDurability::Full), "per-call records are fsynced unless the operator says otherwise");
        let s = &c.servers[0];
        assert_eq!(s.policy("git_diff", true), Policy::Decide, "a profiled tool is decided by default");
        assert_eq!(s.policy("git_status", false), Policy::Pin, "pinning is the operator's explicit choice");
        assert_eq!(s.policy("git_commit", false), Policy::Deny, "an unprofiled tool is denied by default");
        let fast = load(&GOOD.replace("principal = \"user:alice\"\n\n", "principal = \"user:alice\"\ncall_durability = \"process-crash\"\n\n")).unwrap();
        assert_eq!(fast.durability(), Ok(CallDurability::ProcessCrash));
    }

    #[test]
    fn colliding_tool_names_are_namespaced_by_server() {
        let two = format!(
            "{}\n[[server]]\nname = \"other\"\ntools = [\"git_diff\"]\n[[server.release]]\ncommand = [\"x\"]\ninstalled = {{ root = \"r\" }}\n",
            GOOD.replace("tool = \"git_diff\"", "tool = \"git__git_diff\"")
        );
        let c = load(&two).unwrap();
        let visible: Vec<String> = c.routes().into_iter().map(|r| r.visible).collect();
        assert_eq!(visible, ["git__git_diff", "git_status", "other__git_diff"]);
        // A contract must name a tool as the client sees it.
        let e = load(&format!(
            "{GOOD}\n[[server]]\nname = \"other\"\ntools = [\"git_diff\"]\n[[server.release]]\ncommand = [\"x\"]\ninstalled = {{ root = \"r\" }}\n"
        ))
        .unwrap_err()
        .to_string();
        assert!(e.contains("no server fronts a tool of that name") && e.contains("git__git_diff"), "{e}");
    }

    #[test]
    fn unknown_keys_and_empty_lists_are_refused_with_their_place() {
        let e = load(&GOOD.replace("tools =", "tool_list =")).unwrap_err().to_string();
        assert!(e.contains("tool_list") && e.contains("gateway.toml"), "{e}");
        let e = load(&GOOD.replace(r#"tools = ["git_diff", "git_status"]"#, "tools = []")).unwrap_err().to_string();
        assert!(e.contains("names no tool"), "{e}");
        let e = load(&GOOD.replace(r#"command = ["server", "--flag"]"#, "command = []")).unwrap_err().to_string();
        assert!(e.contains("`command` is empty"), "{e}");
        let e = load(&GOOD.replace("principal = \"user:alice\"\n\n", "principal = \"user:alice\"\ncall_durability = \"normal\"\n\n")).unwrap_err().to_string();
        assert!(e.contains("call_durability") && e.contains("process-crash"), "{e}");
        let e = load(&GOOD.replace("git_status = \"pin\"", "git_commit = \"pin\"")).unwrap_err().to_string();
        assert!(e.contains("`git_commit` is not one of its `tools`"), "{e}");
        let e = load(&GOOD.replace("git_status = \"pin\"", "git_status = \"allow\"")).unwrap_err().to_string();
        assert!(e.contains("allow"), "{e}");
        let twice = format!("{GOOD}\n[[server.release]]\nepochs = [\"sha256:one\"]\ncommand = [\"x\"]\ninstalled = {{ root = \"r\" }}\n");
        assert!(load(&twice).unwrap_err().to_string().contains("given twice"));
        let e = load(&GOOD.replace("installed = { root = \"site\", strip = \"src/\" }", "installed = { root = \"site\", strip = \"src/\", extra = 1 }"));
        assert!(e.is_err());
        let e = load(&format!("{GOOD}\n[[contract]]\nprincipal = \"user:alice\"\ntool = \"git_diff\"\nfile = \"c2.json\"\n")).unwrap_err().to_string();
        assert!(e.contains("two [[contract]]s"), "{e}");
    }
}
