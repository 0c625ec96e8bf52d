//! `fcd gateway serve --config FILE`: the MCP gateway on stdio, in front of
//! the stock servers its configuration names (docs/gateway.md). It writes
//! nothing on stdout but MCP messages; a gateway that cannot start is an
//! input error (exit 2) naming why.
//!
//! `fcd gateway init`: writes that configuration from the registry's
//! admitted releases and what only the operator knows (the command, the
//! installation, the destination), checked before it is written.

use std::path::{Path, PathBuf};

use super::{Io, Status, print, write_atomic};
use fcd_model::error::InputError;
use fcd_runtime::registry::Registry;

#[derive(Debug, clap::Subcommand)]
pub enum GatewayCommand {
    /// Serves MCP on stdio: every tools/call is decided, formed, admitted, fenced and only then forwarded.
    Serve {
        /// The gateway's TOML configuration.
        #[arg(long)]
        config: PathBuf,
        /// Start over on a runtime store that is not the one the registry bound
        /// (replaced, or deleted and created again): its retirements and
        /// configuration bindings are lost, so this is never the default.
        #[arg(long)]
        accept_new_store: bool,
        /// Serve MCP's Streamable HTTP at http://ADDR/mcp instead of stdio
        /// (ADDR like 127.0.0.1:8080; overrides [http] listen). Clients
        /// authenticate with bearer tokens as [http] configures.
        #[arg(long, value_name = "ADDR")]
        listen: Option<String>,
    },
    /// Writes a gateway configuration for the registry's admitted releases of one server.
    Init(Box<InitArgs>),
}

#[derive(Debug, clap::Args)]
pub struct InitArgs {
    /// The registry the releases were admitted into (`fcd release add`).
    #[arg(long)]
    registry: PathBuf,
    /// Where to write the configuration.
    #[arg(long)]
    out: PathBuf,
    /// The principal of the stdio session (the agent's user).
    #[arg(long)]
    principal: String,
    /// The principal's contract (CONTRACT.json), for every profiled tool.
    #[arg(long)]
    contract: PathBuf,
    /// Where the server acts, as the summaries' rules see it (`local:/srv/repo`, `sqlite:/srv/app.db`).
    #[arg(long)]
    destination: String,
    /// Where the release is installed (a virtual environment's site-packages, a package under node_modules).
    #[arg(long)]
    installed: PathBuf,
    /// The installation's prefix of the summary's paths to drop (default: `src/` for a Python release with a `src/` layout, else none).
    #[arg(long)]
    strip: Option<String>,
    /// The releases to front, by name or epoch id, in order of preference (default: every admitted release).
    #[arg(long = "release")]
    releases: Vec<String>,
    /// The server's name (the namespace of its tools when names collide).
    #[arg(long, default_value = "server")]
    server: String,
    /// The runtime store (default: `sqlite:runtime.sqlite` beside the configuration).
    #[arg(long)]
    runtime: Option<String>,
    /// The gateway's issuer key (`fcd keygen`): it signs captured successors.
    #[arg(long)]
    issuer_key: Option<PathBuf>,
    /// A tool of the server without a profile, fronted and denied (repeatable).
    #[arg(long = "deny")]
    deny: Vec<String>,
    /// A tool of the server without a profile, pinned without a decision (repeatable; weaker than decide).
    #[arg(long = "pin")]
    pin: Vec<String>,
    /// The configuration the releases were registered with (JSON).
    #[arg(long)]
    config_file: Option<PathBuf>,
    /// The server's own configuration files, bound byte for byte (repeatable).
    #[arg(long = "server-config")]
    server_config: Vec<PathBuf>,
    /// Replace an existing file at `--out`.
    #[arg(long)]
    force: bool,
    /// The stock server's command (MCP on stdio), after `--`.
    #[arg(last = true, required = true)]
    command: Vec<String>,
}

pub fn run(c: GatewayCommand, io: &mut Io<'_>) -> Result<Status, InputError> {
    match c {
        GatewayCommand::Serve { config, accept_new_store, listen } => serve(&config, accept_new_store, listen),
        GatewayCommand::Init(a) => init(*a, io),
    }
}

fn serve(path: &Path, accept_new_store: bool, listen: Option<String>) -> Result<Status, InputError> {
    let mut config = fcd_gateway::Config::load(path)?;
    config.accept_new_store = accept_new_store;
    let listen = listen.or_else(|| config.http.as_ref().and_then(|h| h.listen.clone()));
    decision_log(&config.log);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| InputError::new(path, format!("no async runtime: {e}")))?;
    runtime.block_on(async {
        let gateway = fcd_gateway::Gateway::start(config).await.map_err(|e| InputError::new(path, e.to_string()))?;
        match listen {
            Some(addr) => fcd_gateway::serve_http(gateway, &addr).await,
            None => fcd_gateway::serve_stdio(gateway).await,
        }
        .map_err(|e| InputError::new(path, e.to_string()))
    })?;
    Ok(Status::Success)
}

/// The gateway's decision log (`log` in its configuration) on stderr, where
/// an MCP client keeps a stdio server's log: the gateway's own events at
/// info, everything else (the MCP library) at warnings and errors.
fn decision_log(format: &str) {
    use tracing_subscriber::Layer as _;
    use tracing_subscriber::filter::{LevelFilter, Targets};
    use tracing_subscriber::layer::SubscriberExt as _;
    use tracing_subscriber::util::SubscriberInitExt as _;
    let targets = Targets::new().with_target("fcd", LevelFilter::INFO).with_default(LevelFilter::WARN);
    let text = tracing_subscriber::fmt::layer().with_writer(std::io::stderr).with_ansi(false);
    let _ = match format {
        "off" => return,
        "json" => tracing_subscriber::registry().with(text.json().flatten_event(true).with_filter(targets)).try_init(),
        _ => tracing_subscriber::registry().with(text.with_filter(targets)).try_init(),
    };
}

fn absolute(p: &Path) -> Result<PathBuf, InputError> {
    std::path::absolute(p).map_err(|e| InputError::new(p, e.to_string()))
}

fn init(a: InitArgs, io: &mut Io<'_>) -> Result<Status, InputError> {
    if a.out.exists() && !a.force {
        return Err(InputError::new(&a.out, "already exists (--force replaces it)"));
    }
    let registry = Registry::open(&a.registry)?;
    let listed = registry.list()?;
    let mut names: Vec<String> = Vec::new();
    if a.releases.is_empty() {
        for e in &listed {
            if !names.contains(&e.release) {
                names.push(e.release.clone());
            }
        }
    }
    for want in &a.releases {
        let Some(e) = listed.iter().find(|e| &e.release == want || &e.epoch_id == want) else {
            return Err(InputError::new(&a.registry, format!("no admitted release or epoch `{want}`")));
        };
        if !names.contains(&e.release) {
            names.push(e.release.clone());
        }
    }
    let mut releases = Vec::new();
    for name in names {
        let mut epochs = Vec::new();
        for e in listed.iter().filter(|e| e.release == name) {
            match registry.admitted(&e.epoch_id)? {
                Ok(Some(summary)) => epochs.push((e.epoch_id.clone(), summary)),
                Ok(None) => {}
                Err(problems) => return Err(InputError::new(&a.registry, format!("epoch {} does not verify: {}", e.epoch_id, problems.join("; ")))),
            }
        }
        releases.push((name, epochs));
    }
    let dir = absolute(a.out.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new(".")))?;
    let spec = fcd_gateway::init::Init {
        runtime: a.runtime.unwrap_or_else(|| format!("sqlite:{}", dir.join("runtime.sqlite").display())),
        registry: absolute(&a.registry)?,
        principal: a.principal,
        contract: absolute(&a.contract)?,
        issuer_key: a.issuer_key.as_deref().map(absolute).transpose()?,
        server: a.server,
        destination: a.destination,
        extra_tools: a.deny,
        pinned: a.pin,
        command: a.command,
        installed: absolute(&a.installed)?,
        strip: a.strip,
        config_file: a.config_file.as_deref().map(absolute).transpose()?,
        server_config: a.server_config.iter().map(|p| absolute(p)).collect::<Result<_, _>>()?,
    };
    let text = fcd_gateway::init::configuration(&a.out, &spec, &releases).map_err(|e| InputError::new(&a.out, e))?;
    write_atomic(&a.out, text.as_bytes())?;
    let epochs: usize = releases.iter().map(|(_, e)| e.len()).sum();
    print(
        io,
        &format!(
            "wrote {} ({} release(s), {epochs} epoch(s)); start it with `fcd gateway serve --config {}`\n",
            a.out.display(),
            releases.len(),
            a.out.display()
        ),
    )?;
    Ok(Status::Success)
}
