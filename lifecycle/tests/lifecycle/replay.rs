//! The model against the real runtime: traces of the lifecycle model
//! (`fcd-lifecycle`) replayed on the SQLite runtime. The model takes the
//! runtime's own decision functions, but abstracts the clock, ids, MACs and
//! storage; here every step the model takes must succeed on the runtime with
//! the same result, every step the model refuses in that state must be
//! refused by the runtime with the same reason code, the two must hold the
//! same epochs, leases and authorities afterwards, and `fcd audit check`
//! must pass on every history the replays record (property C4).

use std::collections::BTreeSet;

use ed25519_dalek::{Signer, SigningKey};
use fcd_lifecycle::audit_check;
use fcd_lifecycle::explore::Model;
use fcd_lifecycle::protocol::{ASKS_SUCCESSOR, Action, EPOCHS, FORMATIONS, Protocol, SOURCE, SUCCESSOR, World};
use fcd_model::refusal::RefusalCode;
use fcd_runtime::runtime::decision::Target;
use fcd_runtime::runtime::{EvidenceKind, Lease, LeaseState, Runtime, State};

fn digests(epoch: &str) -> (String, String) {
    (format!("sha256:artifact-{epoch}"), format!("sha256:config-{epoch}"))
}

/// The evidence is valid until this time; formations expire at [`EXPIRES`].
const EVIDENCE_UNTIL: u64 = 100;
const EXPIRES: u64 = 1_000;

/// The clock a decision about formation `f` is taken at, so that the
/// model's expiry flags hold on the runtime.
fn now(w: &World, f: Option<usize>) -> u64 {
    match f {
        Some(f) if w.formations[f].expired => EXPIRES + 500,
        _ if w.evidence.expired => EVIDENCE_UNTIL + 50,
        _ => 50,
    }
}

struct Replay {
    rt: Runtime,
    resolver: SigningKey,
    formations: [Option<i64>; FORMATIONS],
    leases: Vec<Lease>,
    /// What the replay exercised: actions by kind, refusals by code.
    actions: BTreeSet<String>,
    refusals: BTreeSet<String>,
    _dir: tempfile::TempDir,
}

fn kind(a: Action) -> String {
    format!("{a:?}").split('(').next().unwrap_or_default().to_owned()
}

/// What a walk weighs equally: an action's kind, and for an epoch move which move.
fn weight_class(a: Action) -> String {
    if let Action::Move(..) = a { format!("{a:?}") } else { kind(a) }
}

impl Replay {
    fn new() -> Replay {
        let dir = if std::path::Path::new("/dev/shm").is_dir() { tempfile::tempdir_in("/dev/shm").unwrap() } else { tempfile::tempdir().unwrap() };
        let mut rt = Runtime::open(&dir.path().join("runtime.sqlite")).unwrap();
        let resolver = SigningKey::from_bytes(&[9u8; 32]);
        rt.set_resolver(&resolver.verifying_key()).unwrap();
        for e in EPOCHS {
            let (a, c) = digests(e);
            rt.register_epoch(e, "tool", &a, &c, "sha256:summary").unwrap();
        }
        Replay { rt, resolver, formations: [None; FORMATIONS], leases: Vec::new(), actions: BTreeSet::new(), refusals: BTreeSet::new(), _dir: dir }
    }

    fn expect_refusal(&mut self, what: &str, got: Result<impl std::fmt::Debug, fcd_runtime::runtime::Refusal>, want: RefusalCode) {
        match got {
            Err(r) if r.code == want => {
                self.refusals.insert(want.as_str().to_owned());
                // And by operation: `revoked` and `expired` come from admission and from the fence alike.
                self.refusals.insert(format!("{} {}", what.split(' ').next().unwrap_or_default(), want.as_str()));
            }
            other => panic!("{what}: the model refuses with {want}, the runtime answered {other:?}"),
        }
    }

    /// Every step the model refuses in `w` is refused by the runtime, for the same reason.
    fn probe(&mut self, protocol: &Protocol, w: &World) {
        for f in 0..FORMATIONS {
            match self.formations[f] {
                Some(id) => {
                    if let Err(r) = protocol.admission(w, f) {
                        let got = self.rt.admit(id, now(w, Some(f)));
                        self.expect_refusal(&format!("admit f{f} in {w:?}"), got, r.code());
                    }
                }
                None if protocol.next(w, Action::Form(f as u8)).is_none() => {
                    let want = if w.epochs[SOURCE].eligible() { RefusalCode::NotCaptured } else { RefusalCode::SourceNotEligible };
                    let want = match protocol.capture(w) {
                        Err(r) if w.evidence.added && want == RefusalCode::NotCaptured => r.code(),
                        _ => want,
                    };
                    let got = self.form(w, f);
                    self.expect_refusal(&format!("form f{f} in {w:?}"), got, want);
                }
                None => {}
            }
        }
        for (e, name) in EPOCHS.iter().enumerate() {
            for to in [State::Advertised, State::HiddenButValid, State::Draining, State::Stale] {
                if let Err(r) = protocol.epoch_move(w, e, to) {
                    let got = self.rt.transition(name, to);
                    self.expect_refusal(&format!("move {name} to {to:?} in {w:?}"), got, r.code());
                }
            }
        }
        for (slot, l) in w.leases() {
            let lease = self.leases[slot].clone();
            let (artifact, config) = digests(&lease.epoch);
            let at = now(w, Some(usize::from(l.formation)));
            if let Err(r) = protocol.final_hop(w, l, None) {
                let got = self.rt.fence(&lease.token, &artifact, &config, lease.generation, at);
                self.expect_refusal(&format!("fence lease{slot} in {w:?}"), got, r.code());
            }
            if !l.used {
                let tampered = [
                    (format!("{artifact}x"), config.clone(), lease.generation, fcd_lifecycle::protocol::Tamper::Artifact),
                    (artifact.clone(), format!("{config}x"), lease.generation, fcd_lifecycle::protocol::Tamper::Config),
                    (artifact.clone(), config.clone(), lease.generation + 1, fcd_lifecycle::protocol::Tamper::Generation),
                ];
                for (a, c, g, t) in tampered {
                    let want = protocol.final_hop(w, l, Some(t)).expect_err("a tampered hop never passes");
                    let got = self.rt.fence(&lease.token, &a, &c, g, at);
                    self.expect_refusal(&format!("tampered fence lease{slot}"), got, want.code());
                }
            }
            if !protocol.lease_move(l.state, LeaseState::Completed) {
                let got = self.rt.complete(lease.id);
                self.expect_refusal("complete", got, RefusalCode::BadTransition);
            }
            if !protocol.lease_move(l.state, LeaseState::Resolved) {
                let got = self.resolve(lease.id);
                self.expect_refusal("resolve", got, RefusalCode::NotUncertain);
            }
        }
    }

    fn form(&mut self, w: &World, f: usize) -> Result<i64, fcd_runtime::runtime::Refusal> {
        let t = now(w, None);
        let successor = ASKS_SUCCESSOR[f].then_some(1);
        self.rt.form("snap", "tool", &format!("args-{f}"), "user:alice", EPOCHS[SOURCE], successor, t, EXPIRES - t)
    }

    fn resolve(&mut self, lease: i64) -> Result<(), fcd_runtime::runtime::Refusal> {
        let sig = self.resolver.sign(fcd_runtime::runtime::resolution_message(lease, "completed").as_bytes());
        self.rt.resolve(lease, "completed", &sig.to_bytes())
    }

    /// Takes the step the model took from `w` with `a` on the runtime.
    fn step(&mut self, protocol: &Protocol, w: &World, a: Action) {
        self.actions.insert(kind(a));
        let held = |g: u8| usize::from(w.gateways[usize::from(g)].holding.expect("the gateway holds a lease"));
        match a {
            Action::AddEvidence => assert_eq!(self.rt.add_evidence(EvidenceKind::Edge, "tool", None, "S", "T", 0, EVIDENCE_UNTIL).unwrap(), 1),
            Action::RevokeEvidence => self.rt.revoke("evidence:1").unwrap(),
            // Time passes: the next decisions are taken at a later `now`.
            Action::ExpireEvidence | Action::ExpireFormation(_) | Action::Crash(_) => {}
            Action::Form(f) => self.formations[usize::from(f)] = Some(self.form(w, usize::from(f)).unwrap()),
            Action::RevokeFormation(f) => self.rt.revoke(&format!("formation:{}", self.formations[usize::from(f)].unwrap())).unwrap(),
            Action::Move(e, to) => self.rt.transition(EPOCHS[usize::from(e)], to).unwrap(),
            Action::Admit(_, f) => {
                let f = usize::from(f);
                let lease = self.rt.admit(self.formations[f].unwrap(), now(w, Some(f))).unwrap();
                let want = match protocol.admission(w, f).unwrap() {
                    Target::Source => EPOCHS[SOURCE],
                    Target::Successor => EPOCHS[SUCCESSOR],
                };
                assert_eq!(lease.epoch, want, "admission of f{f} in {w:?}");
                if want == EPOCHS[SUCCESSOR] {
                    self.actions.insert("Admit on the successor".into());
                }
                self.leases.push(lease);
            }
            Action::Fence(g) => {
                let lease = self.leases[held(g)].clone();
                let (artifact, config) = digests(&lease.epoch);
                let at = now(w, w.leases[held(g)].map(|l| usize::from(l.formation)));
                assert_eq!(self.rt.fence(&lease.token, &artifact, &config, lease.generation, at).unwrap(), lease.id);
            }
            Action::Complete(g) => self.rt.complete(self.leases[held(g)].id).unwrap(),
            Action::ReportUncertain(g) | Action::Recover(g) => self.rt.mark_uncertain(self.leases[held(g)].id).unwrap(),
            Action::Resolve(slot) => {
                let id = self.leases[usize::from(slot)].id;
                self.resolve(id).unwrap();
            }
            Action::Tampered(..) | Action::Replay(_) | Action::LateHop(_) | Action::LateReport(..) => panic!("the protocol never accepts {a:?}"),
        }
    }

    /// The runtime holds what the model holds.
    fn agrees(&self, w: &World) {
        for (e, name) in EPOCHS.iter().enumerate() {
            assert_eq!(self.rt.state(name).unwrap(), Some(w.epochs[e]), "epoch {name} in {w:?}");
        }
        let rows = self.rt.leases().unwrap();
        assert_eq!(rows.len(), w.lease_count(), "{w:?}");
        for ((_, l), row) in w.leases().zip(&rows) {
            assert_eq!((row.epoch.as_str(), row.state, row.used), (EPOCHS[usize::from(l.epoch)], l.state, l.used), "{w:?}");
        }
        for f in 0..FORMATIONS {
            if let Some(id) = self.formations[f] {
                let (_, successor) = self.rt.authority(id).unwrap().unwrap();
                assert_eq!(successor.is_some(), w.formations[f].captured, "authority of f{f} in {w:?}");
            }
        }
    }
}

/// A small deterministic generator (xorshift), so every run replays the same traces.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

const TRACES: usize = 600;
const STEPS: usize = 30;

/// A random walk of the model from its initial state: at each step a kind
/// of action is picked first, then one of that kind, so that rare kinds
/// (a resolution, a fallback) are not drowned by common ones (epoch moves).
fn walk(protocol: &Protocol, rng: &mut Rng) -> Vec<Action> {
    let mut w = protocol.init().remove(0);
    let mut trace = Vec::new();
    // Half the walks start where fallbacks can happen: evidence added, calls formed capturing it.
    if rng.below(2) == 0 {
        for a in [Action::AddEvidence, Action::Form(0), Action::Form(2)] {
            w = protocol.next(&w, a).expect("the opening is enabled");
            trace.push(a);
        }
    }
    for _ in 0..STEPS {
        let mut tried = Vec::new();
        protocol.actions(&w, &mut tried);
        let enabled: Vec<(Action, World)> = tried.into_iter().filter_map(|a| protocol.next(&w, a).map(|n| (a, n))).collect();
        let kinds: BTreeSet<String> = enabled.iter().map(|(a, _)| weight_class(*a)).collect();
        let Some(k) = kinds.iter().nth(rng.below(kinds.len().max(1))) else { break };
        let of_kind: Vec<&(Action, World)> = enabled.iter().filter(|(a, _)| &weight_class(*a) == k).collect();
        let (a, n) = of_kind[rng.below(of_kind.len())].clone();
        trace.push(a);
        w = n;
    }
    trace
}

#[test]
fn model_traces_replay_on_the_runtime_with_the_same_outcomes() {
    let protocol = Protocol::default();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let (mut actions, mut refusals) = (BTreeSet::new(), BTreeSet::new());
    let mut steps = 0;
    for _ in 0..TRACES {
        let trace = walk(&protocol, &mut rng);
        let mut replay = Replay::new();
        let mut w = protocol.init().remove(0);
        for a in trace {
            replay.probe(&protocol, &w);
            let next = protocol.next(&w, a).expect("a trace step is enabled");
            replay.step(&protocol, &w, a);
            replay.agrees(&next);
            w = next;
            steps += 1;
        }
        replay.probe(&protocol, &w);
        let report = audit_check::check_runtime(&replay.rt).unwrap();
        assert!(report.violations.is_empty(), "{}", report.text());
        actions.extend(replay.actions);
        refusals.extend(replay.refusals);
    }
    eprintln!("{TRACES} traces, {steps} steps replayed; actions {actions:?}; refusals {refusals:?}");
    // The replays reached every kind of step the protocol accepts and every refusal the model can give.
    for a in [
        "AddEvidence",
        "RevokeEvidence",
        "Form",
        "RevokeFormation",
        "Move",
        "Admit",
        "Admit on the successor",
        "Fence",
        "Complete",
        "ReportUncertain",
        "Recover",
        "Resolve",
    ] {
        assert!(actions.contains(a), "no replay took {a}: {actions:?}");
    }
    for code in [
        "revoked",
        "expired",
        "source_draining",
        "not_captured",
        "successor_ineligible",
        "source_not_eligible",
        "bad_transition",
        "leases_outstanding",
        "replay",
        "stale_generation",
        "final_hop_artifact_mismatch",
        "final_hop_config_mismatch",
        "lease_not_admitted",
        "not_uncertain",
        "formation_in_flight",
        "admit formation_in_flight",
        "fence revoked",
        "fence expired",
    ] {
        assert!(refusals.contains(code), "no replay was refused with {code}: {refusals:?}");
    }
}
