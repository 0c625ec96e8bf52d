//! The MCP proxy: an rmcp server for the agent, an rmcp client for each
//! stock server release it runs. A session lists the fronted tools of each
//! tool's source (the first configured release whose epoch for it the
//! runtime holds ADVERTISED), each with its policy in `_meta.fcd`; the
//! digest of that listing is the session's snapshot, bound to every formation.
//!
//! A `tools/call` ([`Gateway::call`]) is decided before anything is
//! recorded ([`crate::decide`]): its tool must be fronted and not denied,
//! the session's principal must have a contract for it, and under `decide`
//! it must fit the summary's argument schema and be safe on the source's
//! summary. Then it is formed (with the successor the gateway captured, if
//! the same call is safe on one), admitted, fenced against what the server
//! started from and what is configured now, and forwarded; the reply
//! completes the lease, no reply marks it uncertain.
//!
//! When the source's server is free, formation, admission and fence are one
//! runtime decision ([`Runtime::form_admit`]): one commit before the call
//! goes on, one after. When it is busy, the call is formed at once (its
//! authority fixed now) and admitted once the server is free: on the
//! source while it is eligible, waiting while it drains, and on the captured
//! successor only once the source is STALE.

use fcd_model::refusal::RefusalCode;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ed25519_dalek::{SigningKey, VerifyingKey};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ListToolsResult, MetaObject, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use fcd_model::canon;
use fcd_runtime::registry::Registry;
use fcd_runtime::runtime::{Call as Formation, Lease, LeaseState, Runtime, State, StoreSpec};
use fcd_verify::certificate;
use fcd_verify::verdict::{Call, CallInput, Contract};

use crate::config::{Config, Policy, Route};
use crate::decide;
use crate::measure;
use crate::refused::Refused;
use crate::steps::{Step, Steps};
use crate::upstream::{Epoch, Release};

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

/// A fronted tool as the session sees it.
struct Fronted {
    route: Route,
    policy: Policy,
    forward_reject: bool,
    /// The session's source: the release (index) and its epoch for the tool; none for a denied tool.
    source: Option<(usize, Arc<Epoch>)>,
    /// The tool's descriptor as listed (named as the client sees it, `_meta.fcd` added).
    descriptor: Tool,
}

/// What a captured certificate is for: (target epoch, tool, arguments digest, principal); its evidence id and end of validity.
type CaptureKey = (String, String, String, String);

/// A contract, read, with its digest (certificates name it).
struct Bound {
    contract: Contract,
    digest: String,
}

/// The gateway: the runtime, the releases and the session.
pub struct Gateway {
    pub(crate) config: Config,
    /// Closed when the gateway is dropped, unless its store's files changed
    /// under it (see the `Drop` impl): shared only to be kept from closing.
    runtime: Arc<Mutex<Runtime>>,
    releases: Vec<Release>,
    /// Contracts by (principal, tool as the client sees it).
    contracts: BTreeMap<(String, String), Bound>,
    /// The gateway's issuer key, which signs captured successors.
    issuer: Option<SigningKey>,
    /// Every key a certificate offered to the runtime may be signed by.
    issuers: Vec<VerifyingKey>,
    fronted: Vec<Fronted>,
    snapshot: String,
    /// Certificates the gateway captured and recorded as evidence.
    captured: Mutex<BTreeMap<CaptureKey, (i64, u64)>>,
    /// Offered certificate files already recorded, by file digest: (id, tool, arguments digest).
    offered: Mutex<BTreeMap<String, (i64, String, String)>>,
    /// The runtime store's files as the gateway opened them (SQLite),
    /// checked at every runtime decision (crate::store_file).
    store_file: Option<crate::store_file::StoreFile>,
    /// The runtime store's name in the registry's bound stores (crate::bound_store).
    store_name: String,
    _private: tempfile::TempDir,
}

impl Drop for Gateway {
    /// Closes the runtime store, unless its files changed under the gateway:
    /// closing a SQLite connection reads the WAL index it maps, and a `-shm`
    /// cut under it turns that read into SIGBUS. Then the connection is left
    /// open (one reference to it is forgotten) for the process's end to
    /// reclaim; the store's files on disk are as the last commit left them.
    fn drop(&mut self) {
        if let Err(r) = self.store_is_the_one_opened() {
            tracing::error!(target: "fcd::gateway", "{}; its connection is left unclosed", r.detail);
            std::mem::forget(Arc::clone(&self.runtime));
        }
    }
}

impl Gateway {
    /// Opens the runtime and registry, registers every configured epoch the
    /// registry admitted, picks each tool's source, starts the servers the
    /// listing needs (each from a measured installation) and lists the tools.
    pub async fn start(config: Config) -> Result<Gateway, StartError> {
        let fail = |m: String| StartError(m);
        let spec = StoreSpec::parse(&config.runtime).map_err(|e| fail(format!("runtime `{}`: {e}", config.runtime)))?;
        let durability = config.durability().map_err(fail)?;
        let mut runtime = Runtime::open_store_with(&spec, durability).map_err(|e| fail(format!("runtime {spec}: {e}")))?;
        let store_file = match &spec {
            StoreSpec::Sqlite(path) => Some(crate::store_file::StoreFile::opened(path.clone()).map_err(|e| fail(format!("runtime {spec}: {e}")))?),
            _ => None,
        };
        let registry = Registry::open(&config.registry).map_err(|e| fail(e.to_string()))?;
        let store_name = crate::bound_store::name(&spec);
        crate::bound_store::check(&runtime, &registry, &store_name, config.accept_new_store).map_err(fail)?;
        let private = crate::private_dir::create(&std::env::temp_dir()).map_err(|e| fail(format!("no private directory: {e}")))?;
        let mut releases = Vec::new();
        for (si, s) in config.servers.iter().enumerate() {
            for (ri, r) in s.releases.iter().enumerate() {
                let registered_config = measure::config_value(r.config_file.as_deref()).map_err(|e| fail(format!("release {}: {e}", r.label())))?;
                let dir = private.path().join(format!("{si}-{ri}"));
                std::fs::create_dir(&dir).map_err(|e| fail(format!("{}: {e}", dir.display())))?;
                let release = Release {
                    server: si,
                    config: r.clone(),
                    registered_config,
                    epochs: Default::default(),
                    pending: Default::default(),
                    slot: tokio::sync::Mutex::new(None),
                    backoff: std::sync::Mutex::new((0, None)),
                    max_message_bytes: config.max_message_bytes,
                    private: dir,
                };
                for id in &r.epochs {
                    if !take_up(&mut runtime, &registry, &release, id, &s.tools).map_err(fail)? {
                        eprintln!("fcd gateway: release {}: epoch {id} is not admitted in the registry yet: taken up once it is", r.label());
                        release.pending.lock().map_err(|_| fail("poisoned".into()))?.push(id.clone());
                    }
                }
                releases.push(release);
            }
        }
        let mut contracts = BTreeMap::new();
        for c in &config.contracts {
            let contract: Contract = fcd_verify::verdict::read_input(&c.file).map_err(|e| fail(e.to_string()))?;
            if contract.principal != c.principal {
                return Err(fail(format!(
                    "{}: the contract is for principal `{}`, the [[contract]] names `{}`",
                    c.file.display(),
                    contract.principal,
                    c.principal
                )));
            }
            let digest = canon::digest(&contract);
            contracts.insert((c.principal.clone(), c.tool.clone()), Bound { contract, digest });
        }
        let issuer = config.issuer_key.as_deref().map(certificate::load_signing_key).transpose().map_err(|e| fail(e.to_string()))?;
        let mut issuers = config.issuers.iter().map(|p| certificate::load_verifying_key(p).map_err(|e| fail(e.to_string()))).collect::<Result<Vec<_>, _>>()?;
        issuers.extend(issuer.as_ref().map(SigningKey::verifying_key));
        let mut gateway = Gateway {
            config,
            runtime: Arc::new(Mutex::new(runtime)),
            releases,
            contracts,
            issuer,
            issuers,
            fronted: Vec::new(),
            snapshot: String::new(),
            captured: Mutex::new(BTreeMap::new()),
            offered: Mutex::new(BTreeMap::new()),
            store_file,
            store_name,
            _private: private,
        };
        gateway.pin_unprofiled().map_err(fail)?;
        gateway.front().await.map_err(fail)?;
        Ok(gateway)
    }

    /// Gives every pinned tool without a summary a runtime epoch per
    /// release that has a profiled sibling (whose files its fence measures).
    fn pin_unprofiled(&mut self) -> Result<(), String> {
        for route in self.config.routes() {
            let s = &self.config.servers[route.server];
            let profiled = self.of_server(route.server).any(|(_, r)| r.epoch_of(&route.tool).is_some());
            if profiled || s.policy(&route.tool, false) != Policy::Pin {
                continue;
            }
            let mut rt = self.runtime.lock().map_err(|_| "the runtime lock is poisoned")?;
            for (_, release) in self.of_server(route.server) {
                let sibling = release.epochs.read().map_err(|_| "poisoned")?.iter().find(|e| e.summary.is_some()).cloned();
                let Some(sibling) = sibling else { continue };
                let Some(summary) = &sibling.summary else { continue };
                let id = format!("pin:{}", canon::digest(&json!({"pin": route.tool, "with": sibling.id})).trim_start_matches("sha256:"));
                rt.register_pinned(&id, &route.tool, &sibling.artifact, &summary.config_digest).map_err(|e| e.to_string())?;
                let epoch = Epoch { id, tool: route.tool.clone(), summary: None, artifact: sibling.artifact.clone() };
                release.epochs.write().map_err(|_| "poisoned")?.push(Arc::new(epoch));
            }
        }
        Ok(())
    }

    /// The releases of server `server`, in order, with their indexes.
    fn of_server(&self, server: usize) -> impl Iterator<Item = (usize, &Release)> {
        self.releases.iter().enumerate().filter(move |(_, r)| r.server == server)
    }

    /// Picks each tool's source, starts the servers that list them and builds the session's listing.
    async fn front(&mut self) -> Result<(), String> {
        let mut fronted = Vec::new();
        let mut listings: BTreeMap<usize, Vec<Tool>> = BTreeMap::new();
        for route in self.config.routes() {
            let s = &self.config.servers[route.server];
            let profiled = self.of_server(route.server).any(|(_, r)| r.epoch_of(&route.tool).is_some_and(|e| e.summary.is_some()));
            let policy = s.policy(&route.tool, profiled);
            if policy == Policy::Decide && !profiled {
                return Err(format!("tool `{}`: policy decide, but no release names an admitted epoch for it", route.visible));
            }
            if policy == Policy::Decide && s.destination.is_none() {
                return Err(format!("server `{}`: `destination` is needed to decide its calls", s.name));
            }
            let mut source = None;
            if policy != Policy::Deny {
                let rt = self.runtime.lock().map_err(|_| "the runtime lock is poisoned")?;
                for (ri, release) in self.of_server(route.server) {
                    if let Some(e) = release.epoch_of(&route.tool)
                        && rt.state(&e.id).map_err(|e| e.to_string())? == Some(State::Advertised)
                    {
                        source = Some((ri, e));
                        break;
                    }
                }
                if source.is_none() && policy == Policy::Pin && !profiled {
                    return Err(format!(
                        "tool `{}`: policy pin needs a release with an admitted epoch of another tool, whose files its fence measures",
                        route.visible
                    ));
                }
            }
            let Some(lister) = source.as_ref().map(|(ri, _)| *ri).or_else(|| self.of_server(route.server).map(|(ri, _)| ri).next()) else {
                return Err(format!("server `{}` has no release", s.name));
            };
            if let std::collections::btree_map::Entry::Vacant(v) = listings.entry(lister) {
                let release = &self.releases[lister];
                let mut slot = release.slot.lock().await;
                let running = release.running(&mut slot).await.map_err(|r| format!("{}: {}", r.code, r.detail))?;
                let tools =
                    running.service.peer().list_all_tools().await.map_err(|e| format!("the stock server of {} lists no tools: {e}", release.config.label()))?;
                v.insert(tools);
            }
            let Some(mut descriptor) = listings[&lister].iter().find(|t| t.name == route.tool.as_str()).cloned() else {
                return Err(format!("the stock server of {} has no tool `{}`", self.releases[lister].config.label(), route.tool));
            };
            descriptor.name = route.visible.clone().into();
            let epoch = source.as_ref().map(|(_, e)| e.id.clone());
            let mut meta = descriptor.meta.take().map(|m| m.0).unwrap_or_default();
            meta.insert("fcd".into(), json!({"policy": policy.as_str(), "epoch": epoch}));
            descriptor.meta = Some(MetaObject(meta));
            let what = match &source {
                Some((ri, e)) => format!("{} on {} ({})", policy.as_str(), e.id, self.releases[*ri].config.label()),
                None if policy == Policy::Deny => "deny".to_owned(),
                None => format!("{}, but no release of it is ADVERTISED: every call is refused", policy.as_str()),
            };
            eprintln!("fcd gateway: tool {}: {what}", route.visible);
            let forward_reject = s.forward_reject.contains(&route.tool);
            fronted.push(Fronted { route, policy, forward_reject, source, descriptor });
        }
        let tools: Vec<&Tool> = fronted.iter().map(|f| &f.descriptor).collect();
        self.snapshot = canon::try_digest(&tools).map_err(|e| format!("the tool list: {e}"))?;
        self.fronted = fronted;
        Ok(())
    }

    /// The session's tool list and its snapshot digest.
    pub fn session(&self) -> (Vec<Tool>, &str) {
        (self.fronted.iter().map(|f| f.descriptor.clone()).collect(), &self.snapshot)
    }

    /// The source epoch of the tool the client calls `visible`, if it has one.
    pub fn source_of(&self, visible: &str) -> Option<&str> {
        self.fronted.iter().find(|f| f.route.visible == visible).and_then(|f| f.source.as_ref()).map(|(_, e)| e.id.as_str())
    }

    /// One `tools/call` of a session of `principal`: decided, formed (with the
    /// captured successor), admitted, fenced and forwarded, or refused; the
    /// one call path of stdio, HTTP and the tests. Until the client cancels
    /// it (`notifications/cancelled` cancels `cancelled`): a call cancelled
    /// before it is forwarded is never forwarded; one cancelled while the
    /// server runs it is cancelled there too (rmcp sends
    /// `notifications/cancelled` when the forwarded request is dropped) and
    /// its lease is uncertain, since it may have run.
    pub async fn call(&self, principal: &str, params: CallToolRequestParams, cancelled: &CancellationToken) -> CallToolResult {
        let steps = Steps::new();
        let tool = params.name.to_string();
        // One digest of the arguments serves the formation and the log.
        let args_digest = canon::try_digest(&Value::Object(params.arguments.clone().unwrap_or_default()));
        let values = if self.config.log_arguments { Value::Object(params.arguments.clone().unwrap_or_default()).to_string() } else { String::new() };
        let outcome = self.run(principal, params, &args_digest, cancelled, &steps).await;
        let epoch = self.source_of(&tool).unwrap_or("-");
        let digest = args_digest.as_deref().unwrap_or("-");
        let micros = steps.since_start();
        let [decide, admit, forward, complete] = steps.durations(micros);
        match outcome {
            Ok(result) => {
                let handler_error = result.is_error == Some(true);
                tracing::info!(target: "fcd::gateway", tool, principal, epoch, outcome = "ran", handler_error, micros, decide, admit, forward, complete, arguments = digest, values, "call");
                result
            }
            Err(refused) => {
                let (code, detail) = (refused.code.as_str(), refused.detail.as_str());
                tracing::warn!(target: "fcd::gateway", tool, principal, epoch, outcome = "refused", code, detail, micros, decide, admit, forward, complete, arguments = digest, values, "call");
                refused.result()
            }
        }
    }

    async fn run(
        &self,
        principal: &str,
        mut params: CallToolRequestParams,
        args_digest: &Result<String, String>,
        cancelled: &CancellationToken,
        steps: &Steps,
    ) -> Result<CallToolResult, Refused> {
        let name = params.name.to_string();
        let Some(f) = self.fronted.iter().find(|f| f.route.visible == name) else {
            return Err(Refused::new(RefusalCode::UnknownTool, format!("`{name}` is not a tool this gateway fronts")));
        };
        if f.policy == Policy::Deny {
            return Err(Refused::new(RefusalCode::Denied, format!("`{name}` has no profile the operator admitted, and its policy is deny")));
        }
        let Some((source_release, source)) = &f.source else {
            return Err(Refused::new(RefusalCode::SourceNotEligible, format!("no release of `{name}` was ADVERTISED when this session started")));
        };
        let call = Call { tool: f.route.tool.clone(), arguments: params.arguments.clone().unwrap_or_default() };
        let args_digest = args_digest.clone().map_err(|e| Refused::new(RefusalCode::BadArguments, e))?;
        let input = CallInput::new(call.clone(), "tools/call");
        let mut successor = None;
        if let Some(summary) = &source.summary {
            decide::schema(summary, &input)?;
        }
        if f.policy == Policy::Decide {
            let Some(bound) = self.contracts.get(&(principal.to_owned(), name.clone())) else {
                return Err(Refused::new(RefusalCode::NoContract, format!("principal `{principal}` has no contract for `{name}`")));
            };
            let release = &self.releases[*source_release];
            let env = self.env(principal, release);
            let summary = source.summary.as_ref().ok_or_else(|| Refused::new(RefusalCode::Unknown, "the source has no summary"))?;
            decide::on_source(summary, &input, &env, &bound.contract, f.forward_reject)?;
            successor = self.capture(f, *source_release, source, &call, principal, bound, &args_digest)?;
        }
        params.name = f.route.tool.clone().into();
        steps.mark(Step::Decided);
        let formation = Formation { snapshot: &self.snapshot, tool: &f.route.tool, args_digest: &args_digest, principal, source: &source.id };
        self.execute(*source_release, source, &formation, successor, params, cancelled, steps).await
    }

    /// The authenticated context of a call on `release`.
    fn env(&self, principal: &str, release: &Release) -> fcd_verify::verdict::Env {
        let destination = self.config.servers[release.server].destination.as_deref().unwrap_or_default();
        decide::env(principal, destination, &release.registered_config)
    }

    /// The successor captured for this call at formation: the first other
    /// release of the server whose epoch for the tool is registered,
    /// ADVERTISED or HIDDEN_BUT_VALID, and on whose summary the call is safe
    /// under the contract; its certificate is signed with the gateway's key
    /// and recorded as evidence. Without a key, a certificate offered in the
    /// certificate directory for exactly this call may serve instead.
    #[allow(clippy::too_many_arguments)] // reason: the formation's parts, each read once
    fn capture(
        &self,
        f: &Fronted,
        source_release: usize,
        source: &Epoch,
        call: &Call,
        principal: &str,
        bound: &Bound,
        args_digest: &str,
    ) -> Result<Option<i64>, Refused> {
        let storage = |e: String| Refused::new(RefusalCode::Storage, e);
        let Some(source_summary) = &source.summary else { return Ok(None) };
        let now = unix_now();
        if let Some(key) = &self.issuer {
            self.take_up_pending(f.route.server).map_err(storage)?;
            for (ri, release) in self.of_server(f.route.server) {
                if ri == source_release {
                    continue;
                }
                let Some(epoch) = release.epoch_of(&f.route.tool) else { continue };
                let Some(summary) = &epoch.summary else { continue };
                let mut rt = self.runtime.lock().map_err(|_| storage("the runtime lock is poisoned".into()))?;
                if !matches!(rt.state(&epoch.id).map_err(|e| storage(e.to_string()))?, Some(State::Advertised | State::HiddenButValid)) {
                    continue;
                }
                let key_of = (epoch.id.clone(), f.route.tool.clone(), args_digest.to_owned(), principal.to_owned());
                let ttl = self.config.formation_ttl;
                if let Some((id, until)) = self.captured.lock().map_err(|_| storage("poisoned".into()))?.get(&key_of)
                    && *until > now.saturating_add(ttl)
                {
                    return Ok(Some(*id));
                }
                let env = self.env(principal, release);
                let valid_for = self.config.capture_validity.unwrap_or(ttl).max(ttl);
                let Some(bytes) = decide::capture(summary, source_summary, call, &env, &bound.contract, key, now, valid_for) else { continue };
                match rt.add_certificate(&bytes, &self.issuers, &source.id, &epoch.id, &bound.digest, now) {
                    Ok(id) => {
                        self.captured.lock().map_err(|_| storage("poisoned".into()))?.insert(key_of, (id, now.saturating_add(valid_for)));
                        return Ok(Some(id));
                    }
                    Err(r) if r.is_storage() => return Err((&r).into()),
                    Err(r) => {
                        eprintln!("fcd gateway: the capture on {} was not recorded: {r}", epoch.id);
                        continue;
                    }
                }
            }
        }
        self.offered_certificate(f, source, principal, bound, args_digest, now)
    }

    /// Registers the configured epochs of server `server`'s releases that the
    /// registry has admitted since the gateway started.
    fn take_up_pending(&self, server: usize) -> Result<(), String> {
        for (_, release) in self.of_server(server) {
            let mut pending = release.pending.lock().map_err(|_| "poisoned")?;
            if pending.is_empty() {
                continue;
            }
            let registry = Registry::open(&self.config.registry).map_err(|e| e.to_string())?;
            let mut rt = self.runtime.lock().map_err(|_| "the runtime lock is poisoned")?;
            let tools = &self.config.servers[server].tools;
            let mut still = Vec::new();
            for id in pending.drain(..) {
                if !take_up(&mut rt, &registry, release, &id, tools)? {
                    still.push(id);
                }
            }
            *pending = still;
        }
        Ok(())
    }

    /// A certificate in the certificate directory for exactly this call,
    /// from this source, offered to the runtime (which verifies it again).
    fn offered_certificate(&self, f: &Fronted, source: &Epoch, principal: &str, bound: &Bound, args_digest: &str, now: u64) -> Result<Option<i64>, Refused> {
        let storage = |e: String| Refused::new(RefusalCode::Storage, e);
        let Some(dir) = &self.config.certificates else { return Ok(None) };
        let Some(source_summary) = &source.summary else { return Ok(None) };
        let entries = std::fs::read_dir(dir).map_err(|e| storage(format!("cannot read the certificate directory {}: {e}", dir.display())))?;
        let mut files: Vec<_> = entries.filter_map(Result::ok).map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "json")).collect();
        files.sort();
        let tool = &f.route.tool;
        for path in files {
            let bytes = std::fs::read(&path).map_err(|e| storage(format!("cannot read {}: {e}", path.display())))?;
            let file = canon::sha256(&bytes);
            if let Some((id, t, a)) = self.offered.lock().map_err(|_| storage("poisoned".into()))?.get(&file) {
                if t == tool && a == args_digest {
                    return Ok(Some(*id));
                }
                continue;
            }
            let Ok(statement) = certificate::verify_by(&bytes, &self.issuers, now) else { continue };
            let p = &statement.predicate;
            if &p.tool != tool || p.arguments_digest != args_digest || p.principal != principal || p.contract_digest != bound.digest {
                continue;
            }
            if p.source.as_ref().is_none_or(|s| s.summary_digest != source_summary.summary_digest) {
                continue;
            }
            let target = self
                .of_server(f.route.server)
                .filter_map(|(_, r)| r.epoch_of(tool))
                .find(|e| e.id != source.id && e.summary.as_ref().is_some_and(|s| s.summary_digest == p.summary_digest));
            let Some(target) = target else { continue };
            let mut rt = self.runtime.lock().map_err(|_| storage("the runtime lock is poisoned".into()))?;
            match rt.add_certificate(&bytes, &self.issuers, &source.id, &target.id, &bound.digest, now) {
                Ok(id) => {
                    self.offered.lock().map_err(|_| storage("poisoned".into()))?.insert(file, (id, tool.clone(), args_digest.to_owned()));
                    return Ok(Some(id));
                }
                Err(r) if r.is_storage() => return Err((&r).into()),
                Err(_) => continue,
            }
        }
        Ok(None)
    }

    /// Admits, fences and forwards a decided call. When the source's server
    /// is free, formation, admission and fence are one decision; otherwise
    /// the call is formed now and admitted when a server is free for it.
    #[allow(clippy::too_many_arguments)] // reason: the decided call's parts, and its cancellation and timing
    async fn execute(
        &self,
        source_release: usize,
        source: &Epoch,
        formation: &Formation<'_>,
        successor: Option<i64>,
        params: CallToolRequestParams,
        cancelled: &CancellationToken,
        steps: &Steps,
    ) -> Result<CallToolResult, Refused> {
        let release = &self.releases[source_release];
        let ttl = self.config.formation_ttl;
        if let Ok(mut slot) = release.slot.try_lock() {
            let running = release.running(&mut slot).await?;
            let measured = release.measure(running, source)?;
            let lease = self.rt()?.form_admit(formation, successor, unix_now(), ttl, Some(measured.measured())).map_err(|r| Refused::from(&r))?;
            if lease.epoch != source.id {
                // The fence passed what was measured for the source: a lease elsewhere must not run on it.
                self.settle_uncertain(lease.id);
                return Err(Refused::new(RefusalCode::UnknownEpoch, format!("lease {} is on {}, not on the source {}", lease.id, lease.epoch, source.id)));
            }
            let (result, stop) = self.forward(running, lease.id, params, cancelled, steps).await;
            if stop {
                release.stop(&mut slot).await;
            }
            return result;
        }
        let id = {
            let mut rt = self.rt()?;
            let f = formation;
            rt.form(f.snapshot, f.tool, f.args_digest, f.principal, f.source, successor, unix_now(), ttl).map_err(|r| Refused::from(&r))?
        };
        let deadline = std::time::Instant::now() + Duration::from_secs(ttl);
        let lease = loop {
            let slot = tokio::select! {
                slot = release.slot.lock() => slot,
                () = cancelled.cancelled() => return Err(not_forwarded()),
            };
            let admitted = self.rt()?.admit(id, unix_now());
            match admitted {
                Ok(lease) => break lease,
                // The source drains: once its work clears it is STALE, and the formation's authority decides.
                Err(r) if r.code == RefusalCode::SourceDraining && std::time::Instant::now() < deadline => {
                    drop(slot);
                    tokio::select! {
                        () = tokio::time::sleep(Duration::from_millis(20)) => {}
                        () = cancelled.cancelled() => return Err(not_forwarded()),
                    }
                }
                Err(r) => return Err((&r).into()),
            }
        };
        self.run_lease(lease, params, cancelled, steps).await
    }

    /// Runs an admitted lease on the release of its epoch: measured, fenced, forwarded.
    async fn run_lease(&self, lease: Lease, params: CallToolRequestParams, cancelled: &CancellationToken, steps: &Steps) -> Result<CallToolResult, Refused> {
        let found = self.releases.iter().find_map(|r| r.epochs.read().ok()?.iter().find(|e| e.id == lease.epoch).cloned().map(|e| (r, e)));
        let Some((release, epoch)) = found else {
            self.settle_uncertain(lease.id);
            return Err(Refused::new(RefusalCode::UnknownEpoch, format!("lease {} is on {}, which this gateway does not run", lease.id, lease.epoch)));
        };
        let mut slot = tokio::select! {
            slot = release.slot.lock() => slot,
            () = cancelled.cancelled() => {
                // Admitted, never fenced nor forwarded: it did not run, but only a resolution ends a lease.
                self.settle_uncertain(lease.id);
                let detail = format!("the client cancelled the call before it was forwarded; lease {} never ran and is uncertain until resolved", lease.id);
                return Err(Refused::new(RefusalCode::Cancelled, detail));
            }
        };
        let hop = async {
            let running = release.running(&mut slot).await?;
            let measured = release.measure(running, &epoch)?;
            self.rt()?.fence_measured(&lease.token, &measured.measured(), lease.generation, unix_now()).map_err(|r| Refused::from(&r))?;
            Ok::<_, Refused>(self.forward(running, lease.id, params, cancelled, steps).await)
        };
        match hop.await {
            Ok((result, stop)) => {
                if stop {
                    release.stop(&mut slot).await;
                }
                result
            }
            Err(r) => {
                self.settle_uncertain(lease.id);
                Err(r)
            }
        }
    }

    /// Moves the registry's mark of the runtime store forward to its last
    /// audit entry (when the gateway stops): the next start checks it is
    /// there. A failure is logged, not fatal: the older mark still holds.
    pub fn record_store_mark(&self) {
        self.record_store_mark_if_moved(None);
    }

    /// Moves the mark forward when the audit log's last entry is not
    /// `seen` any more; returns the sequence number the mark is at. The
    /// runtime is locked only to read that entry, not for the registry's write.
    fn record_store_mark_if_moved(&self, seen: Option<i64>) -> Option<i64> {
        // Flushed first: the mark must name an entry on stable storage (a completion is committed without an fsync).
        let marked = self.rt().map_err(|r| r.detail).and_then(|mut rt| {
            rt.flush().map_err(|e| format!("the runtime store {}: {e}", self.store_name))?;
            crate::bound_store::last_mark(&rt, &self.store_name)
        });
        let recorded = marked.and_then(|now| {
            if Some(now.audit_seq) == seen {
                return Ok(now.audit_seq);
            }
            let registry = Registry::open(&self.config.registry).map_err(|e| e.to_string())?;
            crate::bound_store::advance(&registry, &self.store_name, &now).map(|()| now.audit_seq)
        });
        match recorded {
            Ok(seq) => Some(seq),
            Err(e) => {
                tracing::warn!(target: "fcd::gateway", "the runtime store's mark was not moved forward in the registry {}: {e}", self.config.registry.display());
                seen
            }
        }
    }

    /// Moves the runtime store's mark every `store_mark_every` seconds while
    /// the gateway serves (crate::bound_store): the last entry is one indexed
    /// read on SQLite, two sorted single-key reads on etcd.
    pub(crate) fn keep_store_marked(self: &Arc<Self>) -> Option<tokio::task::JoinHandle<()>> {
        let every = self.config.store_mark_every;
        if every == 0 {
            return None;
        }
        let gateway = self.clone();
        Some(tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_secs(every));
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
            let mut seen = None;
            loop {
                tick.tick().await;
                let g = gateway.clone();
                seen = tokio::task::spawn_blocking(move || g.record_store_mark_if_moved(seen)).await.unwrap_or(seen);
            }
        }))
    }

    fn rt(&self) -> Result<std::sync::MutexGuard<'_, Runtime>, Refused> {
        self.store_is_the_one_opened()?;
        self.runtime.lock().map_err(|_| Refused::new(RefusalCode::Storage, "the runtime lock is poisoned"))
    }

    /// Whether the runtime store's files are still the ones the gateway
    /// opened (crate::store_file): otherwise every decision is refused until
    /// the gateway is restarted on its store, before SQLite touches them.
    fn store_is_the_one_opened(&self) -> Result<(), Refused> {
        let Some(file) = &self.store_file else { return Ok(()) };
        file.check().map_err(|why| Refused::new(RefusalCode::Storage, format!("{why}: nothing is decided until the gateway is restarted on its store")))
    }

    /// Forwards a call whose lease passed the fence; the reply completes the
    /// lease. No reply within `call_timeout`, or a server whose transport
    /// failed, leaves it uncertain, and the second half of the result says
    /// the server must be stopped (the next call starts it again).
    async fn forward(
        &self,
        running: &crate::upstream::Running,
        lease: i64,
        params: CallToolRequestParams,
        cancelled: &CancellationToken,
        steps: &Steps,
    ) -> (Result<CallToolResult, Refused>, bool) {
        steps.mark(Step::Forwarded);
        let timeout = Duration::from_secs(self.config.call_timeout);
        let mut oversized = running.oversized.clone();
        oversized.mark_unchanged();
        let answered = tokio::select! {
            answered = tokio::time::timeout(timeout, running.service.peer().call_tool(params)) => answered,
            Ok(()) = oversized.changed() => {
                // rmcp dropped the line unread; whether it was this call's reply is not known, and
                // the server's view of the session is not ours: it is started again for the next call.
                self.settle_uncertain(lease);
                let detail = format!(
                    "the stock server sent a message larger than max_message_bytes ({} bytes) while it ran the call, and it was not read: \
                     lease {lease} is uncertain until an operator resolves it; the server is started again for the next call",
                    self.config.max_message_bytes
                );
                return (Err(Refused::new(RefusalCode::Uncertain, detail)), true);
            }
            () = cancelled.cancelled() => {
                // Dropping the request sent the server `notifications/cancelled`; it may have run.
                self.settle_uncertain(lease);
                let detail = format!("the client cancelled the call while the server ran it; the server was told, and lease {lease} is uncertain until resolved");
                return (Err(Refused::new(RefusalCode::Cancelled, detail)), false);
            }
        };
        let why = match answered {
            Ok(Ok(result)) => {
                steps.mark(Step::Answered);
                return (self.record_completion(lease).await.map(|()| result), false);
            }
            Ok(Err(e)) => format!("the stock server gave no reply ({e})"),
            Err(_) => format!("the stock server gave no reply within {} s (call_timeout)", self.config.call_timeout),
        };
        self.settle_uncertain(lease);
        let detail = format!("{why}: lease {lease} is uncertain until an operator resolves it; the server is started again for the next call");
        (Err(Refused::new(RefusalCode::Uncertain, detail)), true)
    }

    /// Records that the call of `lease` ran. The call ran, so a refusal here
    /// would tell the client something untrue and invite it to run the call
    /// again: a store that failed (an etcd member lost, a leader being
    /// elected) is tried again for about three seconds, and a retry that
    /// finds the lease already completed (the first attempt committed and its
    /// answer was lost) is the completion. Only then is the client told the
    /// call ran but its completion was not recorded (the lease stays
    /// admitted, and holds its epoch open, until an operator completes it).
    async fn record_completion(&self, lease: i64) -> Result<(), Refused> {
        const ATTEMPTS: u64 = 6;
        let mut attempt = 0;
        let failure = loop {
            // Each guard is dropped at the end of its statement: the lock is never held twice, nor across the sleep.
            let outcome = self.rt()?.complete(lease);
            let failure = match outcome {
                Ok(()) => return Ok(()),
                Err(r) => r,
            };
            if attempt > 0 && !failure.is_storage() {
                let state = self.rt()?.lease_state(lease);
                if matches!(state, Ok(Some(LeaseState::Completed))) {
                    return Ok(());
                }
            }
            attempt += 1;
            if !failure.is_storage() || attempt == ATTEMPTS {
                break failure;
            }
            tokio::time::sleep(Duration::from_millis(200 * attempt)).await;
        };
        Err(Refused::new(failure.code, format!("the call ran, but its completion was not recorded: {}", failure.detail)))
    }

    /// Marks a lease uncertain (a hop that was refused, or a call with no reply);
    /// an operator resolves it with a signed resolution.
    fn settle_uncertain(&self, lease: i64) {
        if let Ok(mut rt) = self.runtime.lock() {
            let _ = rt.mark_uncertain(lease);
        }
    }
}

/// Registers epoch `id` of `release` in the runtime when the registry has
/// admitted it (false when it has not yet); its tool must be one the
/// server fronts, once per release.
fn take_up(rt: &mut Runtime, registry: &Registry, release: &Release, id: &str, tools: &[String]) -> Result<bool, String> {
    let label = release.config.label();
    match registry.admitted(id) {
        Err(e) => return Err(format!("the registry: {e}")),
        Ok(Err(problems)) => return Err(format!("release {label}: epoch {id} does not verify in the registry: {}", problems.join("; "))),
        Ok(Ok(None)) => return Ok(false),
        Ok(Ok(Some(_))) => {}
    }
    // The server's own configuration files, bound to the epoch the first time it is registered in this runtime.
    let files = measure::server_config(&release.config.server_config).map_err(|e| format!("release {label}: {e}"))?;
    let summary = rt.register_admitted(registry, id, files.as_deref()).map_err(|e| format!("release {label}: epoch {id}: {e}"))?;
    if !tools.contains(&summary.tool) {
        return Err(format!("release {label}: epoch {id} is of tool `{}`, which the server's `tools` do not name", summary.tool));
    }
    if release.epoch_of(&summary.tool).is_some() {
        return Err(format!("release {label}: two epochs of tool `{}`", summary.tool));
    }
    let bound = rt.server_config(id).map_err(|e| e.to_string())?;
    if bound != files {
        // Never bound again: every call on this epoch is refused at the final hop until the files are restored.
        eprintln!(
            "fcd gateway: epoch {id}: the server's configuration files measure {}, the runtime bound {} when it registered the epoch: \
             calls on it are refused (final_hop_config_mismatch)",
            files.as_deref().unwrap_or("nothing"),
            bound.as_deref().unwrap_or("none")
        );
    }
    let artifact = certificate::subject_digest(summary.artifact_digest.as_deref(), &summary.source.digest).to_owned();
    let epoch = Epoch { id: id.to_owned(), tool: summary.tool.clone(), summary: Some(summary), artifact };
    release.epochs.write().map_err(|_| "the epoch table is poisoned")?.push(Arc::new(epoch));
    Ok(true)
}

/// The refusal of a call the client cancelled before anything was admitted for it.
fn not_forwarded() -> Refused {
    Refused::new(RefusalCode::Cancelled, "the client cancelled the call before it was forwarded: nothing ran")
}

/// Who a session's calls are decided for.
#[derive(Clone, Debug)]
pub enum Principal {
    /// A stdio session: the configuration says who the local client is.
    Configured(String),
    /// An HTTP request: the principal its verified bearer token names
    /// (crate::auth), carried with the request; none means refused.
    FromToken,
}

/// The gateway as the agent's MCP server, for one session.
#[derive(Clone)]
pub struct Handler {
    pub gateway: Arc<Gateway>,
    pub principal: Principal,
}

impl ServerHandler for Handler {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(&self, _request: Option<PaginatedRequestParams>, _context: RequestContext<RoleServer>) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.gateway.session().0))
    }

    async fn call_tool(&self, request: CallToolRequestParams, context: RequestContext<RoleServer>) -> Result<CallToolResponse, ErrorData> {
        let principal = match &self.principal {
            Principal::Configured(p) => p.clone(),
            Principal::FromToken => {
                let token = context.extensions.get::<axum::http::request::Parts>().and_then(|parts| parts.extensions.get::<crate::auth::Authenticated>());
                match token {
                    Some(who) => who.0.clone(),
                    None => return Err(ErrorData::invalid_request("no authenticated principal for this request", None)),
                }
            }
        };
        Ok(self.gateway.call(&principal, request, &context.ct).await.into())
    }
}

/// The gateway's stdin and stdout for the client's session. A client
/// starts the gateway on pipes: they are read and written as pipes, on the
/// runtime's event loop, where tokio's stdin and stdout hand every read and
/// write to a thread of their own (a wake-up each way, for every message).
/// Anything else (a file, a terminal) gets tokio's stdin and stdout.
fn stdio_streams() -> (Box<dyn tokio::io::AsyncRead + Unpin + Send>, Box<dyn tokio::io::AsyncWrite + Unpin + Send>) {
    use std::os::fd::AsFd as _;
    use tokio::net::unix::pipe;
    let input: Box<dyn tokio::io::AsyncRead + Unpin + Send> = match std::io::stdin().as_fd().try_clone_to_owned().and_then(pipe::Receiver::from_owned_fd) {
        Ok(pipe) => Box::new(pipe),
        Err(_) => Box::new(tokio::io::stdin()),
    };
    let output: Box<dyn tokio::io::AsyncWrite + Unpin + Send> = match std::io::stdout().as_fd().try_clone_to_owned().and_then(pipe::Sender::from_owned_fd) {
        Ok(pipe) => Box::new(pipe),
        Err(_) => Box::new(tokio::io::stdout()),
    };
    (input, output)
}

/// Serves the gateway on stdio until the client goes away; the session's
/// principal is the configured one.
pub async fn serve_stdio(gateway: Gateway) -> Result<(), StartError> {
    let principal = gateway.config.principal.clone();
    let max = gateway.config.max_message_bytes;
    let gateway = Arc::new(gateway);
    let marker = gateway.keep_store_marked();
    let handler = Handler { gateway: gateway.clone(), principal: Principal::Configured(principal) };
    // Every line from the client is judged first (crate::framing): each gets an answer, one id runs once.
    let (input, output) = stdio_streams();
    let (read, write, written) = crate::framing::serve(input, output, max);
    let transport = rmcp::transport::async_rw::AsyncRwTransport::new_server(read, write).with_max_line_length(max.saturating_add(1));
    let service = handler.serve(transport).await.map_err(|e| StartError(format!("the client did not initialize: {e}")))?;
    let ended = service.waiting().await.map_err(|e| StartError(e.to_string()));
    if let Some(marker) = marker {
        marker.abort();
    }
    gateway.record_store_mark();
    ended?;
    // The last responses reach the client before the process ends (bounded: the framing's
    // reader may still wait on a client that keeps its end open).
    let _ = tokio::time::timeout(Duration::from_secs(2), written).await;
    Ok(())
}
