//! The MCP proxy: an rmcp server for the agent, an rmcp client for each
//! stock server it runs. A client session forms against one source epoch
//! (the first configured epoch the runtime advertises when it starts) and
//! sees that epoch's tool list, cut to the fronted tools; the digest of those
//! descriptors is the session's snapshot, bound to every formation.
//!
//! A `tools/call` is formed (tool, arguments digest, principal, snapshot,
//! and at most one certificate for this very call found in the certificate
//! directory), admitted by the runtime, checked at the final hop against the
//! installed files and configuration measured now, and only then forwarded
//! to the stock server of the epoch the lease is on. A reply completes the
//! lease; no reply marks it uncertain. Anything refused is an MCP error
//! result naming the runtime's reason code, and the stock server never sees
//! the call.
//!
//! A call from the client is formed and run at once, so the gateway measures
//! the source first and the runtime forms, admits and fences it in one
//! decision ([`Runtime::form_admit`]): one commit before the call goes on,
//! one (the completion) after. A call formed earlier and run later
//! ([`Gateway::form`], [`Gateway::execute`]) is admitted, measured and
//! fenced in steps, since its epoch is known only at admission.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use ed25519_dalek::VerifyingKey;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{ErrorData, RoleClient, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};

use fcd_model::canon;
use fcd_model::summary::Summary;
use fcd_runtime::registry::Registry;
use fcd_runtime::runtime::{Call, Refusal, Runtime, State, StoreSpec};
use fcd_verify::cert;

use crate::config::{Config, EpochConfig};
use crate::measure;

/// One epoch the gateway may run: its admitted summary, how to run it, and its server once started.
struct Epoch {
    summary: Summary,
    run: EpochConfig,
    server: tokio::sync::Mutex<Option<RunningService<RoleClient, ()>>>,
}

/// The gateway: the runtime, the epochs and the session's snapshot.
pub struct Gateway {
    config: Config,
    runtime: Mutex<Runtime>,
    issuers: Vec<VerifyingKey>,
    contract: String,
    epochs: BTreeMap<String, Arc<Epoch>>,
    /// The session's source epoch, its fronted tool list and that list's digest.
    source: String,
    tools: Vec<Tool>,
    snapshot: String,
    /// Certificates the runtime accepted from the source, by file digest.
    offered: Mutex<BTreeMap<String, Offered>>,
}

/// A certificate the runtime recorded as evidence, and the call it is for.
struct Offered {
    id: i64,
    tool: String,
    args_digest: String,
}

/// A call formed on the session's source, not yet admitted.
#[derive(Debug)]
pub struct Formed {
    pub formation: i64,
    params: CallToolRequestParams,
}

impl Formed {
    /// A call formed through the runtime directly (for instance with a
    /// manual edge as its evidence), to be executed by the gateway.
    pub fn from_formation(formation: i64, params: CallToolRequestParams) -> Formed {
        Formed { formation, params }
    }
}

/// Why the gateway could not start.
#[derive(Debug)]
pub struct StartError(pub String);

impl std::fmt::Display for StartError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for StartError {}

fn unix_now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// A call the gateway refused before any handler saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    pub code: String,
    pub detail: String,
}

impl Refused {
    fn new(code: &str, detail: &str) -> Refused {
        Refused { code: code.to_owned(), detail: detail.to_owned() }
    }

    /// The MCP error result the client receives.
    pub fn result(&self) -> CallToolResult {
        refused(&self.code, &self.detail)
    }
}

/// The MCP error result for a refusal: the code in words and in structured content.
fn refused(code: &str, detail: &str) -> CallToolResult {
    let mut r = CallToolResult::error(vec![ContentBlock::text(format!("fcd refused this call: {code}: {detail}"))]);
    r.structured_content = Some(json!({"fcd": {"refused": code, "detail": detail}}));
    r
}

fn refusal(r: &Refusal) -> CallToolResult {
    refused(r.code.as_str(), &r.detail)
}

impl Gateway {
    /// Opens the runtime and registry, registers every configured epoch from
    /// the registry, picks the session's source epoch and lists its tools.
    pub async fn start(config: Config) -> Result<Gateway, StartError> {
        let fail = |m: String| StartError(m);
        let spec = StoreSpec::parse(&config.runtime).map_err(|e| fail(format!("runtime `{}`: {e}", config.runtime)))?;
        let durability = config.durability().map_err(fail)?;
        let mut runtime = Runtime::open_store_with(&spec, durability).map_err(|e| fail(format!("runtime {spec}: {e}")))?;
        let registry = Registry::open(&config.registry).map_err(|e| fail(e.to_string()))?;
        let mut epochs = BTreeMap::new();
        for run in &config.epochs {
            // The server's own configuration files, bound to the epoch the first time it is registered in this runtime.
            let files = measure::server_config(&run.server_config).map_err(|e| fail(format!("epoch {}: {e}", run.id)))?;
            let summary = runtime.register_admitted(&registry, &run.id, files.as_deref()).map_err(|e| fail(format!("epoch {}: {e}", run.id)))?;
            let bound = runtime.server_config(&run.id).map_err(|e| fail(e.to_string()))?;
            if bound != files {
                // Never bound again: every call on this epoch is refused at the final hop until the files are restored.
                eprintln!(
                    "fcd gateway: epoch {}: the server's configuration files measure {}, the runtime bound {} when it registered the epoch: \
                     calls on it are refused (final_hop_config_mismatch)",
                    run.id,
                    files.as_deref().unwrap_or("nothing"),
                    bound.as_deref().unwrap_or("none")
                );
            }
            epochs.insert(run.id.clone(), Arc::new(Epoch { summary, run: run.clone(), server: tokio::sync::Mutex::new(None) }));
        }
        let issuers = config.issuers.iter().map(|p| cert::load_verifying_key(p).map_err(|e| fail(e.to_string()))).collect::<Result<Vec<_>, _>>()?;
        let contract_value: Value = fcd_verify::certify::read_input(&config.contract).map_err(|e| fail(e.to_string()))?;
        let contract = canon::try_digest(&contract_value).map_err(|e| fail(format!("{}: {e}", config.contract.display())))?;
        let mut source = None;
        for run in &config.epochs {
            if runtime.state(&run.id).map_err(|e| fail(e.to_string()))? == Some(State::Advertised) {
                source = Some(run.id.clone());
                break;
            }
        }
        let Some(source) = source else { return Err(fail("no configured epoch is ADVERTISED: there is no release to form calls against".into())) };
        let mut gateway = Gateway {
            config,
            runtime: Mutex::new(runtime),
            issuers,
            contract,
            epochs,
            source,
            tools: Vec::new(),
            snapshot: String::new(),
            offered: Mutex::new(BTreeMap::new()),
        };
        let epoch = Arc::clone(&gateway.epochs[&gateway.source]);
        let listed = {
            let mut server = epoch.server.lock().await;
            let client = gateway.server(&epoch, &mut server).await.map_err(fail)?;
            client.peer().list_all_tools().await.map_err(|e| fail(format!("the stock server of {} lists no tools: {e}", gateway.source)))?
        };
        let tools: Vec<Tool> = listed.into_iter().filter(|t| gateway.config.tools.iter().any(|n| n == t.name.as_ref())).collect();
        for name in &gateway.config.tools {
            if !tools.iter().any(|t| t.name == name.as_str()) {
                return Err(fail(format!("the stock server of {} has no tool `{name}`", gateway.source)));
            }
        }
        gateway.snapshot = canon::try_digest(&tools).map_err(|e| fail(format!("the tool list: {e}")))?;
        gateway.tools = tools;
        Ok(gateway)
    }

    /// The session's source epoch and snapshot digest.
    pub fn session(&self) -> (&str, &str) {
        (&self.source, &self.snapshot)
    }

    /// The running client of `epoch`'s stock server, started on first use.
    async fn server<'s>(&self, epoch: &Epoch, slot: &'s mut Option<RunningService<RoleClient, ()>>) -> Result<&'s RunningService<RoleClient, ()>, String> {
        if slot.is_none() {
            let run = &epoch.run;
            let mut command = tokio::process::Command::new(&run.command[0]);
            command.args(&run.command[1..]).env_clear();
            for key in ["PATH", "HOME"] {
                if let Some(v) = std::env::var_os(key) {
                    command.env(key, v);
                }
            }
            command.envs(&run.env);
            let (transport, _) = TokioChildProcess::builder(command)
                .stderr(std::process::Stdio::inherit())
                .spawn()
                .map_err(|e| format!("cannot start the stock server of {} ({}): {e}", run.id, run.command[0]))?;
            let client = ().serve(transport).await.map_err(|e| format!("the stock server of {} did not initialize: {e}", run.id))?;
            *slot = Some(client);
        }
        slot.as_ref().ok_or_else(|| "the stock server is not running".to_owned())
    }

    /// A certificate in the certificate directory for this call, offered to
    /// the runtime (which verifies it) as evidence from the source to the
    /// epoch it names; its evidence id, if one is accepted.
    fn certificate_for(&self, rt: &mut Runtime, tool: &str, args_digest: &str, now: u64) -> Result<Option<i64>, String> {
        let Some(dir) = &self.config.certificates else { return Ok(None) };
        let entries = match std::fs::read_dir(dir) {
            Ok(e) => e,
            Err(e) => return Err(format!("cannot read the certificate directory {}: {e}", dir.display())),
        };
        let mut files: Vec<_> = entries.filter_map(Result::ok).map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "json")).collect();
        files.sort();
        let source_summary = &self.epochs[&self.source].summary.summary_digest;
        for path in files {
            let bytes = std::fs::read(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            let key = canon::sha256(&bytes);
            if let Some(known) = self.offered.lock().map_err(|_| "the certificate cache is poisoned")?.get(&key) {
                if known.tool == tool && known.args_digest == args_digest {
                    return Ok(Some(known.id));
                }
                continue;
            }
            // Only a statement for this call, from this source, is offered; the runtime verifies it again and records it.
            let Ok(statement) = cert::verify_by(&bytes, &self.issuers, now) else { continue };
            let p = &statement.predicate;
            if p.tool != tool || p.arguments_digest != args_digest || p.principal != self.config.principal {
                continue;
            }
            if p.source.as_ref().is_none_or(|s| &s.summary_digest != source_summary) {
                continue;
            }
            let Some(target) = self.epochs.iter().find(|(id, e)| **id != self.source && e.summary.summary_digest == p.summary_digest).map(|(id, _)| id.clone())
            else {
                continue;
            };
            match rt.add_certificate(&bytes, &self.issuers, &self.source, &target, &self.contract, now) {
                Ok(id) => {
                    let known = Offered { id, tool: tool.to_owned(), args_digest: args_digest.to_owned() };
                    self.offered.lock().map_err(|_| "the certificate cache is poisoned")?.insert(key, known);
                    return Ok(Some(id));
                }
                Err(r) if r.is_storage() => return Err(r.to_string()),
                Err(_) => continue,
            }
        }
        Ok(None)
    }

    /// One `tools/call`, end to end and at once: the source measured, then
    /// formed, admitted and fenced in one runtime decision, then forwarded.
    pub async fn call(&self, params: CallToolRequestParams) -> CallToolResult {
        let (tool, args_digest) = match self.digest(&params) {
            Ok(d) => d,
            Err(refused) => return refused.result(),
        };
        let Some(epoch) = self.epochs.get(&self.source).cloned() else {
            return refused("unknown_epoch", &format!("the session's source {} is not a configured epoch", self.source));
        };
        // The final hop, measured before the decision that passes it: what is installed and configured now.
        let measured = match measure::all(&epoch.summary, &epoch.run) {
            Ok(m) => m,
            Err(e) => return refused("final_hop_unmeasured", &e),
        };
        let lease = {
            let now = unix_now();
            let Ok(mut rt) = self.runtime.lock() else { return refused("storage", "the runtime lock is poisoned") };
            let evidence = match self.certificate_for(&mut rt, &tool, &args_digest, now) {
                Ok(e) => e,
                Err(e) => return refused("storage", &e),
            };
            let call = Call { snapshot: &self.snapshot, tool: &tool, args_digest: &args_digest, principal: &self.config.principal, source: &self.source };
            match rt.form_admit(&call, evidence, now, self.config.formation_ttl, Some(measured.measured())) {
                Ok(lease) => lease,
                Err(r) => return refusal(&r),
            }
        };
        if lease.epoch != self.source {
            // The fence passed what was measured for the source: a lease elsewhere must not run on it.
            self.settle_uncertain(lease.id);
            return refused("unknown_epoch", &format!("lease {} is on {}, not on the source {}", lease.id, lease.epoch, self.source));
        }
        self.forward(&epoch, lease.id, params).await
    }

    /// The call's tool, which must be fronted, and its arguments' digest.
    fn digest(&self, params: &CallToolRequestParams) -> Result<(String, String), Refused> {
        let tool = params.name.to_string();
        if !self.tools.iter().any(|t| t.name == tool.as_str()) {
            return Err(Refused::new("unknown_tool", &format!("`{tool}` is not a tool this gateway fronts for {}", self.source)));
        }
        let arguments = Value::Object(params.arguments.clone().unwrap_or_default());
        let args_digest = canon::try_digest(&arguments).map_err(|e| Refused::new("bad_arguments", &e))?;
        Ok((tool, args_digest))
    }

    /// Forms a call on the session's source: its tool must be fronted, its
    /// arguments digested, and a certificate for it is offered now (one
    /// added later never joins this formation).
    pub fn form(&self, params: CallToolRequestParams) -> Result<Formed, Refused> {
        let (tool, args_digest) = self.digest(&params)?;
        let now = unix_now();
        let Ok(mut rt) = self.runtime.lock() else { return Err(Refused::new("storage", "the runtime lock is poisoned")) };
        let evidence = self.certificate_for(&mut rt, &tool, &args_digest, now).map_err(|e| Refused::new("storage", &e))?;
        let formation = rt
            .form(&self.snapshot, &tool, &args_digest, &self.config.principal, &self.source, evidence, now, self.config.formation_ttl)
            .map_err(|r| Refused::new(r.code.as_str(), &r.detail))?;
        Ok(Formed { formation, params })
    }

    /// Executes a formed call: admitted on the epoch its fixed authority
    /// allows now, checked at the final hop, forwarded, completed or marked uncertain.
    pub async fn execute(&self, formed: Formed) -> CallToolResult {
        let Formed { formation, params } = formed;
        let lease = match self.runtime.lock() {
            Ok(mut rt) => match rt.admit(formation, unix_now()) {
                Ok(lease) => lease,
                Err(r) => return refusal(&r),
            },
            Err(_) => return refused("storage", "the runtime lock is poisoned"),
        };
        let Some(epoch) = self.epochs.get(&lease.epoch).cloned() else {
            let detail = format!("lease {} is on {}, which this gateway does not run", lease.id, lease.epoch);
            self.settle_uncertain(lease.id);
            return refused("unknown_epoch", &detail);
        };
        // The final hop: what is installed and configured now.
        let measured = match measure::all(&epoch.summary, &epoch.run) {
            Ok(m) => m,
            Err(e) => {
                self.settle_uncertain(lease.id);
                return refused("final_hop_unmeasured", &e);
            }
        };
        let fenced = match self.runtime.lock() {
            Ok(mut rt) => rt.fence_measured(&lease.token, &measured.measured(), lease.generation, unix_now()),
            Err(_) => return refused("storage", "the runtime lock is poisoned"),
        };
        if let Err(r) = fenced {
            self.settle_uncertain(lease.id);
            return refusal(&r);
        }
        self.forward(&epoch, lease.id, params).await
    }

    /// Forwards a call whose lease passed the fence to the stock server of
    /// its epoch; the reply completes the lease, no reply leaves it uncertain.
    async fn forward(&self, epoch: &Epoch, lease: i64, params: CallToolRequestParams) -> CallToolResult {
        let reply = {
            let mut slot = epoch.server.lock().await;
            match self.server(epoch, &mut slot).await {
                Ok(client) => client.peer().call_tool(params).await.map_err(|e| e.to_string()),
                Err(e) => Err(e),
            }
        };
        match reply {
            Ok(result) => match self.runtime.lock().map(|mut rt| rt.complete(lease)) {
                Ok(Ok(())) => result,
                Ok(Err(r)) => refused(r.code.as_str(), &format!("the call ran, but its completion was not recorded: {}", r.detail)),
                Err(_) => refused("storage", "the call ran, but the runtime lock is poisoned"),
            },
            Err(e) => {
                self.settle_uncertain(lease);
                refused("uncertain", &format!("the stock server gave no reply ({e}): lease {lease} is uncertain"))
            }
        }
    }

    /// Marks a lease uncertain (a hop that was refused, or a call with no reply);
    /// an operator resolves it with a signed resolution.
    fn settle_uncertain(&self, lease: i64) {
        if let Ok(mut rt) = self.runtime.lock() {
            let _ = rt.mark_uncertain(lease);
        }
    }
}

/// The gateway as the agent's MCP server.
#[derive(Clone)]
pub struct Handler(pub Arc<Gateway>);

impl ServerHandler for Handler {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(&self, _request: Option<PaginatedRequestParams>, _context: RequestContext<RoleServer>) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.0.tools.clone()))
    }

    async fn call_tool(&self, request: CallToolRequestParams, _context: RequestContext<RoleServer>) -> Result<CallToolResponse, ErrorData> {
        Ok(self.0.call(request).await.into())
    }
}

/// Serves the gateway on stdio until the client goes away.
pub async fn serve_stdio(gateway: Gateway) -> Result<(), StartError> {
    let service = Handler(Arc::new(gateway)).serve(rmcp::transport::stdio()).await.map_err(|e| StartError(format!("the client did not initialize: {e}")))?;
    service.waiting().await.map_err(|e| StartError(e.to_string()))?;
    Ok(())
}
