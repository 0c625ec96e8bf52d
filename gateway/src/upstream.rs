//! The releases a gateway may run and their server processes. A release is
//! one installation of a stock server (its command, files and
//! configuration) with the runtime epochs of its tools. Its server is
//! started on first use, and only from a measured installation: every file
//! of its epochs' summaries is hashed before the process starts, the process
//! starts only when they are the registered release's, and it is dropped
//! again when a measured file moved before it finished initializing. At each
//! final hop the measurement is whether the files are still the ones the
//! server started from ([`measure`]).
//!
//! A release serves one call at a time: its slot (the server, behind an
//! async lock) is held from the final hop to the reply, so a call waiting
//! for it has been formed and is not yet admitted.

use fcd_model::refusal::RefusalCode;
use std::path::PathBuf;
use std::sync::{Arc, RwLock};

use process_wrap::tokio::{ChildWrapper, CommandWrap, ProcessGroup};
use rmcp::service::RunningService;
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::{RoleClient, ServiceExt};
use serde_json::Value;

use fcd_model::summary::Summary;
use fcd_runtime::runtime::Measured;

use crate::config::ReleaseConfig;
use crate::measure::{self, Loaded};
use crate::refused::Refused;

/// One runtime epoch of a release: a profiled tool's admitted summary, or a
/// pinned tool without one (measured by a sibling's files).
#[derive(Debug)]
pub struct Epoch {
    pub id: String,
    pub tool: String,
    /// The admitted summary; `None` for a pinned tool that has none.
    pub summary: Option<Summary>,
    /// The artifact digest the runtime registered the epoch with.
    pub artifact: String,
}

/// A release and its server.
pub struct Release {
    /// Index of its server in the configuration.
    pub server: usize,
    pub config: ReleaseConfig,
    /// The configuration the release was registered with, as read at start: what calls are decided with.
    pub registered_config: Value,
    /// The runtime epochs of its tools.
    pub epochs: RwLock<Vec<Arc<Epoch>>>,
    /// Configured epoch ids not (yet) admitted in the registry.
    pub pending: std::sync::Mutex<Vec<String>>,
    pub slot: tokio::sync::Mutex<Option<Running>>,
    /// Failed starts in a row, and when the next start may be tried.
    pub backoff: std::sync::Mutex<(u32, Option<std::time::Instant>)>,
    /// A directory of the gateway's own for the server's bytecode caches.
    pub private: PathBuf,
    /// The largest message (one line) read from the server (`max_message_bytes`).
    pub max_message_bytes: usize,
}

/// A started server and the measurement it was started from.
pub struct Running {
    pub service: RunningService<RoleClient, ()>,
    /// Dropped after the service: the process group is killed then.
    process: Process,
    loaded: Loaded,
    /// The epochs whose files were measured before it started.
    measured: Vec<String>,
    /// How many lines over `max_message_bytes` the server has sent (rmcp drops them unread).
    pub oversized: tokio::sync::watch::Receiver<u64>,
    /// (HTTP) the release's address and the sockets listening there when
    /// they were checked to be its own.
    listener: Option<(std::net::SocketAddr, std::collections::BTreeSet<u64>)>,
}

impl Running {
    /// Whether the sockets listening at an HTTP release's address are still
    /// the ones checked at its start (read from the kernel's tables, cheaply).
    fn listener_changed(&self) -> bool {
        self.listener.as_ref().is_some_and(|(address, checked)| crate::listener::sockets(*address).ok().as_ref() != Some(checked))
    }
}

/// A server process, killed with its process group when dropped (as rmcp's
/// own child transport does), so a stopped server leaves nothing running.
struct Process(Option<Box<dyn ChildWrapper>>);

/// How long a server started to speak Streamable HTTP has to listen.
const HTTP_START: std::time::Duration = std::time::Duration::from_secs(30);

impl Process {
    /// How the process exited, if it did.
    fn exited(&mut self) -> Option<std::process::ExitStatus> {
        self.0.as_mut().and_then(|c| c.try_wait().ok().flatten())
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        let Some(mut child) = self.0.take() else { return };
        match tokio::runtime::Handle::try_current() {
            // `kill` waits for the process, so no zombie is left.
            Ok(runtime) => {
                runtime.spawn(async move {
                    let _ = Box::into_pin(child.kill()).await;
                });
            }
            Err(_) => {
                let _ = child.start_kill();
            }
        }
    }
}

impl Release {
    /// The epoch of `tool` in this release, if registered.
    pub fn epoch_of(&self, tool: &str) -> Option<Arc<Epoch>> {
        self.epochs.read().ok()?.iter().find(|e| e.tool == tool).cloned()
    }

    /// The release's server, started now from a measured installation if it is not running.
    pub async fn running<'s>(&self, slot: &'s mut Option<Running>) -> Result<&'s Running, Refused> {
        // A server that exited, or that started before an epoch of its release was registered
        // (whose files it was not measured for), is started again: nobody holds its slot now.
        if let Some(mut r) = slot.take() {
            let gone = r.service.is_closed() || r.service.peer().is_transport_closed() || r.process.exited().is_some();
            if gone || r.listener_changed() || r.measured != self.profiled() {
                let _ = r.service.cancel().await;
            } else {
                *slot = Some(r);
            }
        }
        if slot.is_none() {
            // A server that failed to start is tried again only after a backoff
            // (0.25 s, doubling to 30 s), so a broken installation is not started in a loop.
            let now = std::time::Instant::now();
            if let Some(wait) = self.backoff.lock().ok().and_then(|b| b.1).and_then(|at| at.checked_duration_since(now)) {
                return Err(Refused::new(
                    RefusalCode::Upstream,
                    format!("the stock server of {} failed to start; next attempt in {} ms", self.config.label(), wait.as_millis()),
                ));
            }
            match self.start().await {
                Ok(running) => {
                    if let Ok(mut b) = self.backoff.lock() {
                        *b = (0, None);
                    }
                    *slot = Some(running);
                }
                Err(r) => {
                    if let Ok(mut b) = self.backoff.lock() {
                        let delay = std::time::Duration::from_millis(250u64.saturating_mul(1 << b.0.min(7))).min(std::time::Duration::from_secs(30));
                        *b = (b.0.saturating_add(1), Some(now + delay));
                    }
                    return Err(r);
                }
            }
        }
        slot.as_ref().ok_or_else(|| Refused::new(RefusalCode::Upstream, "the stock server is not running"))
    }

    /// Stops the server in `slot` (a call timed out, or its transport failed):
    /// the next call starts it again, measured.
    pub async fn stop(&self, slot: &mut Option<Running>) {
        if let Some(r) = slot.take() {
            let _ = r.service.cancel().await;
        }
    }

    /// The ids of the epochs with a summary, whose files a server is measured for.
    fn profiled(&self) -> Vec<String> {
        self.epochs.read().map(|e| e.iter().filter(|e| e.summary.is_some()).map(|e| e.id.clone()).collect()).unwrap_or_default()
    }

    async fn start(&self) -> Result<Running, Refused> {
        let run = &self.config;
        let mismatch = |e: String| Refused::new(RefusalCode::FinalHopArtifactMismatch, format!("release {}: not started: {e}", run.label()));
        let loaded = {
            let epochs = self.epochs.read().map_err(|_| Refused::new(RefusalCode::Upstream, "the epoch table is poisoned"))?;
            let closures: Vec<(&str, &fcd_model::summary::Closure)> =
                epochs.iter().filter_map(|e| e.summary.as_ref().map(|s| (e.tool.as_str(), &s.source))).collect();
            if closures.is_empty() {
                return Err(mismatch("no admitted summary says which files to measure".into()));
            }
            measure::before_start(closures, &run.installed).map_err(mismatch)?
        };
        let mut command = tokio::process::Command::new(&run.command[0]);
        command.args(&run.command[1..]).env_clear();
        for key in ["PATH", "HOME"] {
            if let Some(v) = std::env::var_os(key) {
                command.env(key, v);
            }
        }
        // A Python server reads and writes bytecode in a directory of the gateway's, never a
        // cached .pyc beside the measured sources (which could hold other code).
        command.env("PYTHONPYCACHEPREFIX", &self.private);
        command.envs(&run.env);
        let address = run.http_address().map_err(|e| Refused::new(RefusalCode::Upstream, format!("release {}: {e}", run.label())))?;
        let cannot = |e: String| Refused::new(RefusalCode::Upstream, format!("cannot start the stock server of {} ({}): {e}", run.label(), run.command[0]));
        if address.is_some() {
            // Over HTTP the server's stdout is no channel of ours: what it prints goes where the gateway's diagnostics go.
            use std::os::fd::AsFd as _;
            let stderr = std::io::stderr().as_fd().try_clone_to_owned().map_err(|e| cannot(e.to_string()))?;
            command.stdin(std::process::Stdio::null()).stdout(stderr);
        } else {
            command.stdin(std::process::Stdio::piped()).stdout(std::process::Stdio::piped());
        }
        command.stderr(std::process::Stdio::inherit());
        if let Some(address) = address {
            // Whatever answers there now is not the release the gateway is about to start.
            if crate::listener::listens(address).map_err(cannot)? {
                return Err(cannot(format!("something already listens at {address}, where the release is to listen")));
            }
        }
        // The server leads a process group of its own: stopping it ends everything it started.
        let mut command = CommandWrap::from(command);
        command.wrap(ProcessGroup::leader());
        let child = command.spawn().map_err(|e| cannot(e.to_string()))?;
        let mut process = Process(Some(child));
        let (service, oversized, listener) = match (address, run.url.as_deref()) {
            (Some(address), Some(url)) => {
                let (service, sockets) = self.connect_http(&mut process, address, url).await?;
                // The HTTP client enforces the limit itself: a reply over it fails its call.
                (service, tokio::sync::watch::channel(0).1, Some((address, sockets)))
            }
            _ => {
                let Some(child) = process.0.as_mut() else { return Err(cannot("no process".into())) };
                let (Some(stdin), Some(stdout)) = (child.stdin().take(), child.stdout().take()) else {
                    return Err(cannot("no pipes to its stdin and stdout".into()));
                };
                let (stdout, oversized) = crate::oversized::Watched::new(stdout, self.max_message_bytes);
                // Replies as large as the gateway's own message limit pass (rmcp's default stops at 16 MiB).
                let transport = AsyncRwTransport::new_client(stdout, stdin).with_max_line_length(self.max_message_bytes.saturating_add(1));
                let service =
                    ().serve(transport)
                        .await
                        .map_err(|e| Refused::new(RefusalCode::Upstream, format!("the stock server of {} did not initialize: {e}", run.label())))?;
                (service, oversized, None)
            }
        };
        if let Some(path) = loaded.changed() {
            let _ = service.cancel().await;
            return Err(mismatch(format!("{} changed while the server started", path.display())));
        }
        Ok(Running { service, process, loaded, measured: self.profiled(), oversized, listener })
    }

    /// Connects to a server started to speak Streamable HTTP at `address`,
    /// once it listens there, and only when the listener is held by its own
    /// process group (not a process that took the port first).
    async fn connect_http(
        &self,
        process: &mut Process,
        address: std::net::SocketAddr,
        url: &str,
    ) -> Result<(RunningService<RoleClient, ()>, std::collections::BTreeSet<u64>), Refused> {
        use rmcp::transport::streamable_http_client::{StreamableHttpClientTransport, StreamableHttpClientTransportConfig};
        let label = self.config.label();
        let fail = |e: String| Refused::new(RefusalCode::Upstream, format!("the stock server of {label} at {url}: {e}"));
        let group = process.0.as_ref().and_then(|c| c.id()).ok_or_else(|| fail("it has no process id".into()))?;
        let deadline = std::time::Instant::now() + HTTP_START;
        loop {
            if let Some(status) = process.exited() {
                return Err(fail(format!("it exited ({status}) before it listened")));
            }
            if crate::listener::listens(address).map_err(fail)? {
                break;
            }
            if std::time::Instant::now() > deadline {
                return Err(fail(format!("it did not listen within {} s", HTTP_START.as_secs())));
            }
            tokio::time::sleep(std::time::Duration::from_millis(25)).await;
        }
        let sockets = crate::listener::held_by_group(address, group).map_err(fail)?;
        let config = StreamableHttpClientTransportConfig::with_uri(url)
            // A call is never sent twice: a session the server forgot fails its call.
            .reinit_on_expired_session(false)
            .max_json_response_size(self.max_message_bytes)
            .max_sse_event_size(self.max_message_bytes);
        let service = ().serve(StreamableHttpClientTransport::from_config(config)).await.map_err(|e| fail(format!("it did not initialize: {e}")))?;
        Ok((service, sockets))
    }

    /// What the final hop measures for `epoch` on the running server: the
    /// registered artifact while every file the server started from is
    /// unchanged, and the registered configuration and server files as they are now.
    pub fn measure(&self, running: &Running, epoch: &Epoch) -> Result<Measurement, Refused> {
        let artifact = match running.loaded.changed() {
            None if epoch.summary.is_none() || running.measured.contains(&epoch.id) => epoch.artifact.clone(),
            None => format!("unmeasured:{}", epoch.id),
            Some(path) => format!("changed-since-start:{}", path.display()),
        };
        let unmeasured = |e: String| Refused::new(RefusalCode::FinalHopUnmeasured, e);
        Ok(Measurement {
            artifact,
            config: measure::config(self.config.config_file.as_deref()).map_err(unmeasured)?,
            server_config: measure::server_config(&self.config.server_config).map_err(unmeasured)?,
        })
    }
}

/// Everything the final hop measured for one epoch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Measurement {
    pub artifact: String,
    pub config: String,
    pub server_config: Option<String>,
}

impl Measurement {
    /// What the runtime's fence compares.
    pub fn measured(&self) -> Measured<'_> {
        Measured { artifact: &self.artifact, config: &self.config, server_config: self.server_config.as_deref() }
    }
}
