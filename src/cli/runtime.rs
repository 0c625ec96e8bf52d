//! `fcd runtime …`: the admission runtime as commands (JSON out; a refusal exits 1 with its reason code),
//! on the store `--store` names (`sqlite:FILE`, `etcd:ENDPOINTS`) or the SQLite file `--db` names.

use std::path::PathBuf;

use serde_json::{Value, json};

use super::{Io, Status, print_json, unix_now};
use fcd_model::error::InputError;
use fcd_runtime::registry::Registry;
use fcd_runtime::runtime::{EvidenceKind, Lease, LeaseState, Measured, Refusal, Runtime, State, StoreSpec};

/// Where the runtime's records are: `--store` or, as before, `--db FILE`.
#[derive(Debug, clap::Args)]
pub struct StoreArgs {
    /// The runtime's SQLite file (the same as --store sqlite:FILE).
    #[arg(long, value_name = "FILE", conflicts_with = "store", required_unless_present = "store")]
    db: Option<PathBuf>,
    /// The store: sqlite:FILE (one host) or etcd:ENDPOINT[,ENDPOINT…][?prefix=/KEYS/] (a cluster; TLS and user settings: &ca=FILE &cert=FILE &key=FILE &user=NAME &password-file=FILE).
    #[arg(long, value_name = "STORE", value_parser = StoreSpec::parse)]
    store: Option<StoreSpec>,
}

impl StoreArgs {
    fn spec(&self) -> StoreSpec {
        match (&self.store, &self.db) {
            (Some(spec), _) => spec.clone(),
            (None, Some(db)) => StoreSpec::Sqlite(db.clone()),
            // clap requires one of them; an empty path fails to open with a clear error.
            (None, None) => StoreSpec::Sqlite(PathBuf::new()),
        }
    }
}

#[derive(Debug, clap::Subcommand)]
pub enum RuntimeCommand {
    /// Registers an epoch (ADVERTISED) the registry admitted, from its stored
    /// manifest and summary, only if their digests verify: the one way an
    /// epoch enters a store.
    RegisterEpoch {
        #[command(flatten)]
        store: StoreArgs,
        /// The registry (SQLite) the epoch was admitted into (`fcd release add`, `fcd registry admit`).
        #[arg(long)]
        registry: PathBuf,
        /// The registry's epoch id (`fcd registry list`).
        #[arg(long)]
        epoch: String,
        /// `sha256:` digest of the server's own configuration files, bound to the epoch once.
        #[arg(long)]
        server_config_digest: Option<String>,
    },
    /// Moves an epoch: advertise, hide, drain or retire (DRAINING -> STALE).
    Transition {
        #[command(flatten)]
        store: StoreArgs,
        /// The epoch to move.
        #[arg(long)]
        epoch: String,
        /// The transition: advertise, hide, drain or retire.
        #[arg(long, value_parser = ["advertise", "hide", "drain", "retire"])]
        to: String,
    },
    /// Registers the resolver's public key (PEM, `fcd keygen`): only its signatures settle uncertain leases. Set once.
    Resolver {
        #[command(flatten)]
        store: StoreArgs,
        /// The resolver's public key (PEM).
        #[arg(long, value_name = "PUBKEY")]
        pubkey: PathBuf,
    },
    /// Settles an uncertain lease with the resolver's signature over its outcome, so its epoch may retire.
    Resolve {
        #[command(flatten)]
        store: StoreArgs,
        /// The uncertain lease's id (`fcd runtime leases`).
        #[arg(long)]
        lease: i64,
        /// What the operator found the call did (for the audit log), e.g. `ran` or `did-not-run`.
        #[arg(long)]
        result: String,
        /// The resolver's private key (PKCS#8 PEM).
        #[arg(long, value_name = "KEY")]
        key: PathBuf,
    },
    /// Lists every lease: its formation, epoch and state (admitted, completed, uncertain, resolved).
    Leases {
        #[command(flatten)]
        store: StoreArgs,
    },
    /// Records a signed manual edge (every call of a tool) from source to target.
    Evidence {
        #[command(flatten)]
        store: StoreArgs,
        /// Only `edge` (every call of the tool): a certificate is recorded from its signed envelope with `fcd runtime certificate`.
        #[arg(long, value_parser = ["edge"])]
        kind: String,
        /// The MCP tool the evidence is for.
        #[arg(long)]
        tool: String,
        /// `sha256:` digest of the call's canonical arguments (a certificate's; none for an edge).
        #[arg(long)]
        args_digest: Option<String>,
        /// The epoch the call was formed against.
        #[arg(long)]
        source: String,
        /// The epoch the evidence lets the call move to.
        #[arg(long)]
        target: String,
        /// Start of validity, Unix seconds.
        #[arg(long, default_value_t = 0)]
        valid_from: u64,
        /// End of validity, Unix seconds (inclusive).
        #[arg(long, default_value_t = u64::MAX / 2)]
        valid_until: u64,
    },
    /// Records a certificate (one call) from source to target, from its DSSE
    /// envelope: it must verify under one of the issuer keys at `--now` and
    /// name both epochs' artifacts and summaries and the contract.
    Certificate {
        #[command(flatten)]
        store: StoreArgs,
        /// The certificate (`fcd certify --key … --source-summary …` output's envelope).
        #[arg(long, value_name = "FILE")]
        envelope: PathBuf,
        /// A trusted issuer's public key (PEM); give it once per key.
        #[arg(long = "issuer", value_name = "PUBKEY", required = true)]
        issuers: Vec<PathBuf>,
        /// The source epoch the certificate moves calls from (its id); the certificate must name its artifact and summary.
        #[arg(long)]
        source: String,
        /// The target epoch it certifies the call on (its id); the certificate must name its tool, artifact, summary and configuration.
        #[arg(long)]
        target: String,
        /// The contract calls are formed under (JSON); the certificate must name its digest.
        #[arg(long, value_name = "FILE")]
        contract: PathBuf,
        /// The time the validity interval is checked at (Unix seconds; default: now).
        #[arg(long)]
        now: Option<u64>,
    },
    /// Forms a call against its exact source epoch, capturing at most one successor.
    Form {
        #[command(flatten)]
        store: StoreArgs,
        /// The snapshot the call was formed from (what the agent was shown).
        #[arg(long)]
        snapshot: String,
        /// The MCP tool called.
        #[arg(long)]
        tool: String,
        /// `sha256:` digest of the call's canonical arguments.
        #[arg(long)]
        args_digest: String,
        /// The authenticated principal making the call.
        #[arg(long)]
        principal: String,
        /// The exact epoch the call is formed against.
        #[arg(long)]
        source: String,
        /// The evidence id that lets the call move to one successor epoch.
        #[arg(long)]
        successor_evidence: Option<i64>,
        /// How long the formation stays admissible, in seconds.
        #[arg(long, default_value_t = 3600)]
        ttl: u64,
        /// The current time in Unix seconds (default: the system clock).
        #[arg(long)]
        now: Option<u64>,
    },
    /// Admits a formed call; prints the lease and its single-use token.
    Admit {
        #[command(flatten)]
        store: StoreArgs,
        /// The formation to admit.
        #[arg(long)]
        formation: i64,
        /// The current time in Unix seconds (default: the system clock).
        #[arg(long)]
        now: Option<u64>,
        #[command(flatten)]
        hooks: AdmitHooks,
    },
    /// Marks a lease completed.
    Complete {
        #[command(flatten)]
        store: StoreArgs,
        /// The lease to mark completed.
        #[arg(long)]
        lease: i64,
    },
    /// Marks a lease uncertain.
    Uncertain {
        #[command(flatten)]
        store: StoreArgs,
        /// The lease to mark uncertain.
        #[arg(long)]
        lease: i64,
    },
    /// Revokes `evidence:ID` or `formation:ID`.
    Revoke {
        #[command(flatten)]
        store: StoreArgs,
        /// What to revoke: `evidence:ID` or `formation:ID`.
        handle: String,
    },
    /// The final-hop check of a token before the handler runs.
    Fence {
        #[command(flatten)]
        store: StoreArgs,
        /// The lease's single-use token, as admit printed it.
        #[arg(long)]
        token: String,
        /// `sha256:` digest of the artifact the hop is about to run.
        #[arg(long)]
        artifact_digest: String,
        /// `sha256:` digest of the configuration the hop runs under.
        #[arg(long)]
        config_digest: String,
        /// `sha256:` digest of the server's own configuration files as measured
        /// (as `fcd gateway` measures them), for an epoch registered with them.
        #[arg(long)]
        server_config_digest: Option<String>,
        /// The generation the lease carries in its token (as admit printed it).
        #[arg(long)]
        generation: i64,
        /// The time the hop runs (seconds since the epoch; default: the clock): a
        /// formation or evidence revoked or expired by then stops it.
        #[arg(long)]
        now: Option<u64>,
    },
    /// Records that the calls a host crash may have lost (a gateway with
    /// `call_durability = "process-crash"` was open when its host went down)
    /// are accounted for, so epochs may retire again.
    AcknowledgeLostCalls {
        #[command(flatten)]
        store: StoreArgs,
    },
    /// Test-only commands; none in a build without the runtime's test hooks.
    #[command(flatten)]
    Hooks(HookCommand),
}

// The hidden test flags and commands exist only where fcd-runtime is built
// with `test-hooks` (this crate's tests); a release build has none of them.
fcd_runtime::if_test_hooks! {
    {
        /// `fcd runtime admit`'s test flags.
        #[derive(Debug, clap::Args)]
        pub struct AdmitHooks {
            /// Sleep this long inside the admission transaction (crash testing).
            #[arg(long, hide = true)]
            stall_ms: Option<u64>,
        }

        fn admit(rt: &mut Runtime, formation: i64, now: u64, hooks: &AdmitHooks) -> Result<Lease, Refusal> {
            match hooks.stall_ms {
                Some(ms) => rt.admit_and_stall(formation, now, std::time::Duration::from_millis(ms)),
                None => rt.admit(formation, now),
            }
        }

        /// Commands that exist for tests only.
        #[derive(Debug, clap::Subcommand)]
        pub enum HookCommand {
            /// Admits, fences and completes each formation given, in order, COUNT
            /// times over (race testing); prints what came of each attempt.
            #[command(hide = true)]
            Stress {
                #[command(flatten)]
                store: StoreArgs,
                /// A formation to admit, fence and complete (repeatable).
                #[arg(long = "formation", required = true)]
                formations: Vec<i64>,
                /// How many times over the formations are run.
                #[arg(long)]
                count: usize,
                /// Sleep this long between a lease's fence pass and its completion
                /// (so a test can kill the process in between).
                #[arg(long, default_value_t = 0)]
                hold_ms: u64,
            },
            /// With process-crash durability: forms, admits and fences COUNT calls of
            /// TOOL on EPOCH at once and completes them, fences one more, and then
            /// aborts without closing the store (a crash of the process, for the
            /// durability test).
            #[command(hide = true)]
            CrashAfterCalls {
                #[command(flatten)]
                store: StoreArgs,
                /// The source epoch the calls are formed on (registered).
                #[arg(long)]
                epoch: String,
                /// The tool of the calls.
                #[arg(long)]
                tool: String,
                /// How many calls complete before the last one and the abort.
                #[arg(long)]
                count: u64,
            },
        }

        fn crash_after_calls(store: &StoreArgs, epoch: &str, tool: &str, count: u64) -> Result<Value, InputError> {
            let spec = store.spec();
            let fail = |e: Refusal| InputError::new(spec.to_string(), e.to_string());
            let mut rt = Runtime::open_store_with(&spec, fcd_runtime::runtime::CallDurability::ProcessCrash).map_err(fail)?;
            let (artifact, config) = rt.epoch_digests(epoch).map_err(fail)?.ok_or_else(|| InputError::new(spec.to_string(), format!("no epoch {epoch}")))?;
            let hop = Measured { artifact: &artifact, config: &config, server_config: None };
            let call = fcd_runtime::runtime::Call { snapshot: "crash", tool, args_digest: "sha256:args", principal: "user:alice", source: epoch };
            for n in 0..count {
                let lease = rt.form_admit(&call, None, unix_now(None) + n, 900, Some(hop)).map_err(fail)?;
                rt.complete(lease.id).map_err(fail)?;
            }
            rt.form_admit(&call, None, unix_now(None), 900, Some(hop)).map_err(fail)?;
            std::process::abort()
        }

        fn run_hook(c: HookCommand) -> Result<Result<Value, Refusal>, InputError> {
            let (store, formations, count, hold_ms) = match c {
                HookCommand::Stress { store, formations, count, hold_ms } => (store, formations, count, hold_ms),
                HookCommand::CrashAfterCalls { store, epoch, tool, count } => return crash_after_calls(&store, &epoch, &tool, count).map(Ok),
            };
            let mut rt = open(&store)?;
            let mut results = Vec::new();
            for formation in (0..count).flat_map(|_| formations.iter().copied()) {
                let now = unix_now(None);
                match rt.admit(formation, now) {
                    Ok(lease) => {
                        let (artifact, config) = rt.epoch_digests(&lease.epoch).ok().flatten().unwrap_or_default();
                        let fenced = rt.fence(&lease.token, &artifact, &config, lease.generation, unix_now(None)).is_ok();
                        std::thread::sleep(std::time::Duration::from_millis(hold_ms));
                        let completed = rt.complete(lease.id).is_ok();
                        results.push(json!({"formation": formation, "lease": lease.id, "epoch": lease.epoch, "fenced": fenced, "completed": completed}));
                    }
                    Err(r) => results.push(json!({"formation": formation, "refused": r.code})),
                }
            }
            Ok(Ok(json!(results)))
        }
    } else {
        /// `fcd runtime admit` has no test flags in this build.
        #[derive(Debug, clap::Args)]
        pub struct AdmitHooks {}

        fn admit(rt: &mut Runtime, formation: i64, now: u64, _hooks: &AdmitHooks) -> Result<Lease, Refusal> {
            rt.admit(formation, now)
        }

        /// No test-only commands in this build.
        #[derive(Debug, clap::Subcommand)]
        pub enum HookCommand {}

        fn run_hook(c: HookCommand) -> Result<Result<Value, Refusal>, InputError> {
            match c {}
        }
    }
}

fn open(store: &StoreArgs) -> Result<Runtime, InputError> {
    let spec = store.spec();
    Runtime::open_store(&spec).map_err(|e| InputError::new(spec.to_string(), e.to_string()))
}

/// Prints a command's result: its JSON, or the refusal's code and words (exit 1).
/// A storage failure is no refusal of the request: it is an error.
fn respond(io: &mut Io<'_>, result: Result<Value, Refusal>) -> Result<Status, InputError> {
    match result {
        Ok(v) => {
            print_json(io, &v)?;
            Ok(Status::Success)
        }
        Err(r) if r.is_storage() => Err(InputError::new("<runtime>", r.to_string())),
        Err(r) => {
            print_json(io, &json!({"refused": r.code, "detail": r.detail}))?;
            Ok(Status::Refused)
        }
    }
}

pub fn run(c: RuntimeCommand, io: &mut Io<'_>) -> Result<Status, InputError> {
    let result = match c {
        RuntimeCommand::RegisterEpoch { store, registry, epoch, server_config_digest } => {
            let registry = Registry::open(&registry)?;
            open(&store)?
                .register_admitted(&registry, &epoch, server_config_digest.as_deref())
                .map(|summary| json!({"epoch": epoch, "tool": summary.tool, "state": State::Advertised.as_str()}))
        }
        RuntimeCommand::Transition { store, epoch, to } => {
            let state = match to.as_str() {
                "advertise" => State::Advertised,
                "hide" => State::HiddenButValid,
                "drain" => State::Draining,
                _ => State::Stale,
            };
            open(&store)?.transition(&epoch, state).map(|()| json!({"epoch": epoch, "state": state.as_str()}))
        }
        RuntimeCommand::Resolver { store, pubkey } => {
            let key = fcd_verify::certificate::load_verifying_key(&pubkey)?;
            open(&store)?.set_resolver(&key).map(|()| json!({"resolver": fcd_verify::certificate::key_id(&key)}))
        }
        RuntimeCommand::Resolve { store, lease, result, key } => {
            use ed25519_dalek::Signer;
            let signing = fcd_verify::certificate::load_signing_key(&key)?;
            let signature = signing.sign(fcd_runtime::runtime::resolution_message(lease, &result).as_bytes());
            open(&store)?.resolve(lease, &result, &signature.to_bytes()).map(|()| json!({"lease": lease, "state": LeaseState::Resolved.as_str()}))
        }
        RuntimeCommand::Leases { store } => open(&store)?.leases().map(|leases| {
            Value::Array(
                leases.iter().map(|l| json!({"lease": l.id, "formation": l.formation, "epoch": l.epoch, "state": l.state.as_str(), "used": l.used})).collect(),
            )
        }),
        RuntimeCommand::Evidence { store, kind: _, tool, args_digest, source, target, valid_from, valid_until } => open(&store)?
            .add_evidence(EvidenceKind::Edge, &tool, args_digest.as_deref(), &source, &target, valid_from, valid_until)
            .map(|id| json!({"evidence": id})),
        RuntimeCommand::Certificate { store, envelope, issuers, source, target, contract, now } => {
            let bytes = std::fs::read(&envelope).map_err(|e| InputError::new(&envelope, format!("cannot read: {e}")))?;
            let keys = issuers.iter().map(|p| fcd_verify::certificate::load_verifying_key(p)).collect::<Result<Vec<_>, _>>()?;
            let contract: fcd_verify::verdict::Contract = fcd_verify::verdict::read_input(&contract)?;
            let digest = fcd_model::canon::digest(&contract);
            open(&store)?.add_certificate(&bytes, &keys, &source, &target, &digest, unix_now(now)).map(|id| json!({"evidence": id}))
        }
        RuntimeCommand::Form { store, snapshot, tool, args_digest, principal, source, successor_evidence, ttl, now } => {
            open(&store)?.form(&snapshot, &tool, &args_digest, &principal, &source, successor_evidence, unix_now(now), ttl).map(|id| json!({"formation": id}))
        }
        RuntimeCommand::Admit { store, formation, now, hooks } => {
            admit(&mut open(&store)?, formation, unix_now(now), &hooks).map(|l| serde_json::to_value(l).unwrap_or_default())
        }
        RuntimeCommand::Complete { store, lease } => open(&store)?.complete(lease).map(|()| json!({"lease": lease, "state": LeaseState::Completed.as_str()})),
        RuntimeCommand::Uncertain { store, lease } => {
            open(&store)?.mark_uncertain(lease).map(|()| json!({"lease": lease, "state": LeaseState::Uncertain.as_str()}))
        }
        RuntimeCommand::Revoke { store, handle } => open(&store)?.revoke(&handle).map(|()| json!({"revoked": handle})),
        RuntimeCommand::Fence { store, token, artifact_digest, config_digest, server_config_digest, generation, now } => {
            let measured = Measured { artifact: &artifact_digest, config: &config_digest, server_config: server_config_digest.as_deref() };
            open(&store)?.fence_measured(&token, &measured, generation, unix_now(now)).map(|id| json!({"accepted": id}))
        }
        RuntimeCommand::AcknowledgeLostCalls { store } => open(&store)?.acknowledge_lost_calls().map(|writers| json!({"acknowledged": writers})),
        RuntimeCommand::Hooks(c) => run_hook(c)?,
    };
    respond(io, result)
}
