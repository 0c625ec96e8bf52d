//! `fcd runtime …`: the admission runtime as commands (JSON out; a refusal exits 1 with its reason code).

use std::path::PathBuf;

use serde_json::{Value, json};

use super::{Io, Status, print_json, unix_now};
use crate::error::InputError;
use crate::runtime::{EvidenceKind, Lease, LeaseState, Refusal, Runtime, State};

#[derive(Debug, clap::Subcommand)]
pub enum RuntimeCommand {
    /// Registers an epoch (ADVERTISED).
    RegisterEpoch {
        #[arg(long)]
        db: PathBuf,
        #[arg(long)]
        epoch: String,
        #[arg(long)]
        tool: String,
        #[arg(long)]
        artifact_digest: String,
        #[arg(long)]
        config_digest: String,
        #[arg(long, default_value = "")]
        summary_digest: String,
    },
    /// Moves an epoch: advertise, hide, drain or retire (DRAINING -> STALE).
    Transition {
        #[arg(long)]
        db: PathBuf,
        #[arg(long)]
        epoch: String,
        #[arg(long, value_parser = ["advertise", "hide", "drain", "retire"])]
        to: String,
    },
    /// Records a certificate (one call) or a manual edge (every call of a tool) from source to target.
    Evidence {
        #[arg(long)]
        db: PathBuf,
        #[arg(long, value_parser = ["certificate", "edge"])]
        kind: String,
        #[arg(long)]
        tool: String,
        #[arg(long)]
        args_digest: Option<String>,
        #[arg(long)]
        source: String,
        #[arg(long)]
        target: String,
        #[arg(long, default_value_t = 0)]
        valid_from: u64,
        #[arg(long, default_value_t = u64::MAX / 2)]
        valid_until: u64,
    },
    /// Forms a call against its exact source epoch, capturing at most one successor.
    Form {
        #[arg(long)]
        db: PathBuf,
        #[arg(long)]
        snapshot: String,
        #[arg(long)]
        tool: String,
        #[arg(long)]
        args_digest: String,
        #[arg(long)]
        principal: String,
        #[arg(long)]
        source: String,
        #[arg(long)]
        successor_evidence: Option<i64>,
        #[arg(long, default_value_t = 3600)]
        ttl: u64,
        #[arg(long)]
        now: Option<u64>,
    },
    /// Admits a formed call; prints the lease and its single-use token.
    Admit {
        #[arg(long)]
        db: PathBuf,
        #[arg(long)]
        formation: i64,
        #[arg(long)]
        now: Option<u64>,
        #[command(flatten)]
        hooks: AdmitHooks,
    },
    /// Marks a lease completed.
    Complete {
        #[arg(long)]
        db: PathBuf,
        #[arg(long)]
        lease: i64,
    },
    /// Marks a lease uncertain.
    Uncertain {
        #[arg(long)]
        db: PathBuf,
        #[arg(long)]
        lease: i64,
    },
    /// Revokes `evidence:ID` or `formation:ID`.
    Revoke {
        #[arg(long)]
        db: PathBuf,
        handle: String,
    },
    /// The final-hop check of a token before the handler runs.
    Fence {
        #[arg(long)]
        db: PathBuf,
        #[arg(long)]
        token: String,
        #[arg(long)]
        artifact_digest: String,
        #[arg(long)]
        config_digest: String,
        #[arg(long)]
        generation: i64,
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
            /// Admits, fences and completes a formation COUNT times (race testing); prints what came of each.
            #[command(hide = true)]
            Stress {
                #[arg(long)]
                db: PathBuf,
                #[arg(long)]
                formation: i64,
                #[arg(long)]
                count: usize,
            },
        }

        fn run_hook(c: HookCommand) -> Result<Result<Value, Refusal>, InputError> {
            let HookCommand::Stress { db, formation, count } = c;
            let mut rt = open(&db)?;
            let mut results = Vec::new();
            for _ in 0..count {
                let now = unix_now(None);
                match rt.admit(formation, now) {
                    Ok(lease) => {
                        let (artifact, config) = rt.epoch_digests(&lease.epoch).ok().flatten().unwrap_or_default();
                        let fenced = rt.fence(&lease.token, &artifact, &config, lease.generation).is_ok();
                        let completed = rt.complete(lease.id).is_ok();
                        results.push(json!({"lease": lease.id, "epoch": lease.epoch, "fenced": fenced, "completed": completed}));
                    }
                    Err(r) => results.push(json!({"refused": r.code})),
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

fn open(db: &PathBuf) -> Result<Runtime, InputError> {
    Runtime::open(db).map_err(|e| InputError::new(db, e.to_string()))
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
        RuntimeCommand::RegisterEpoch { db, epoch, tool, artifact_digest, config_digest, summary_digest } => open(&db)?
            .register_epoch(&epoch, &tool, &artifact_digest, &config_digest, &summary_digest)
            .map(|()| json!({"epoch": epoch, "state": State::Advertised.as_str()})),
        RuntimeCommand::Transition { db, epoch, to } => {
            let state = match to.as_str() {
                "advertise" => State::Advertised,
                "hide" => State::HiddenButValid,
                "drain" => State::Draining,
                _ => State::Stale,
            };
            open(&db)?.transition(&epoch, state).map(|()| json!({"epoch": epoch, "state": state.as_str()}))
        }
        RuntimeCommand::Evidence { db, kind, tool, args_digest, source, target, valid_from, valid_until } => {
            let kind = if kind == "certificate" { EvidenceKind::Certificate } else { EvidenceKind::Edge };
            open(&db)?.add_evidence(kind, &tool, args_digest.as_deref(), &source, &target, valid_from, valid_until).map(|id| json!({"evidence": id}))
        }
        RuntimeCommand::Form { db, snapshot, tool, args_digest, principal, source, successor_evidence, ttl, now } => {
            open(&db)?.form(&snapshot, &tool, &args_digest, &principal, &source, successor_evidence, unix_now(now), ttl).map(|id| json!({"formation": id}))
        }
        RuntimeCommand::Admit { db, formation, now, hooks } => {
            admit(&mut open(&db)?, formation, unix_now(now), &hooks).map(|l| serde_json::to_value(l).unwrap_or_default())
        }
        RuntimeCommand::Complete { db, lease } => open(&db)?.complete(lease).map(|()| json!({"lease": lease, "state": LeaseState::Completed.as_str()})),
        RuntimeCommand::Uncertain { db, lease } => open(&db)?.mark_uncertain(lease).map(|()| json!({"lease": lease, "state": LeaseState::Uncertain.as_str()})),
        RuntimeCommand::Revoke { db, handle } => open(&db)?.revoke(&handle).map(|()| json!({"revoked": handle})),
        RuntimeCommand::Fence { db, token, artifact_digest, config_digest, generation } => {
            open(&db)?.fence(&token, &artifact_digest, &config_digest, generation).map(|id| json!({"accepted": id}))
        }
        RuntimeCommand::Hooks(c) => run_hook(c)?,
    };
    respond(io, result)
}
