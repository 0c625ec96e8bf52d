//! The admission protocol as a finite transition system: two gateways, three
//! formations, a source epoch S and a successor epoch T, one piece of
//! compatibility evidence S -> T, and at most [`MAX_LEASES`] admissions.
//! The operator hides, advertises, drains and retires either epoch; the
//! environment adds, revokes and expires the evidence and revokes or expires
//! formations; gateways admit, pass the fence, complete, report an
//! uncertain outcome or crash (a crashed gateway's lease is recovered as
//! uncertain); the resolver settles uncertain leases; an attacker replays
//! used tokens and presents mismatched final hops.
//!
//! Every decision is the runtime's own: admission, capture, epoch moves,
//! lease moves and the final hop call `fcd_runtime::runtime::decision`, the
//! functions the SQLite runtime calls. What the model abstracts (clocks,
//! MACs, ids) is checked by replaying model traces on the real runtime
//! (`lifecycle/tests/lifecycle/replay.rs`). With the `mutants` feature a [`Protocol`]
//! can be built with one deliberately broken decision ([`crate::mutant`]).

use std::convert::Infallible;
use std::fmt;

use fcd_runtime::runtime::decision::{
    self, AdmissionRefusal, CaptureRefusal, EvidenceFacts, FenceRefusal, FormationFacts, HopFacts, MoveRefusal, PriorLease, SuccessorFacts, Target,
};
use fcd_runtime::runtime::{LeaseState, State};

use crate::explore::{Fairness, Model};
#[cfg(feature = "mutants")]
use crate::mutant::Mutant;

pub const GATEWAYS: usize = 2;
pub const FORMATIONS: usize = 3;
/// Admissions the model allows in one run: enough for two concurrent calls
/// and a retry or a fallback, few enough to explore every state.
pub const MAX_LEASES: usize = 2;
/// Epoch indices.
pub const SOURCE: usize = 0;
pub const SUCCESSOR: usize = 1;
pub const EPOCHS: [&str; 2] = ["S", "T"];
/// Formations 0 and 2 name the evidence S -> T to capture; formation 1 names none.
pub const ASKS_SUCCESSOR: [bool; FORMATIONS] = [true, false, true];

/// The model's clock: every decision is taken at [`NOW`]; a deadline is
/// [`LIVE`] until the environment expires it, then [`PAST`].
pub const NOW: i64 = 10;
pub const LIVE: i64 = 11;
pub const PAST: i64 = 9;

/// The evidence S -> T.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Evidence {
    pub added: bool,
    pub revoked: bool,
    pub expired: bool,
}

/// A formation: formed once, with its authority fixed then.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Formation {
    pub formed: bool,
    /// The successor T was captured at formation.
    pub captured: bool,
    pub revoked: bool,
    pub expired: bool,
}

/// A lease, as the store holds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Lease {
    pub formation: u8,
    pub epoch: u8,
    pub state: LeaseState,
    /// Its token passed the fence: the handler ran (the effect).
    pub used: bool,
}

/// A gateway: up or crashed, and the lease it is running, if any. Gateways
/// are interchangeable, so the model keeps them sorted (symmetry reduction).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Gateway {
    pub up: bool,
    pub holding: Option<u8>,
}

/// One state of the whole system.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct World {
    pub epochs: [State; 2],
    pub evidence: Evidence,
    pub formations: [Formation; FORMATIONS],
    /// Leases in admission order (the runtime's ids 1, 2, 3).
    pub leases: [Option<Lease>; MAX_LEASES],
    pub gateways: [Gateway; GATEWAYS],
}

impl World {
    pub fn leases(&self) -> impl Iterator<Item = (usize, &Lease)> {
        self.leases.iter().enumerate().filter_map(|(i, l)| l.as_ref().map(|l| (i, l)))
    }

    pub fn lease_count(&self) -> usize {
        self.leases.iter().flatten().count()
    }

    /// Leases that hold epoch `e` open, counted by the runtime's own `open()`.
    pub fn open_leases(&self, e: usize) -> usize {
        self.leases().filter(|(_, l)| usize::from(l.epoch) == e && l.state.open()).count()
    }

    /// Formation `f`'s latest lease, as the runtime's formation record names it.
    pub fn latest_lease(&self, f: usize) -> Option<&Lease> {
        self.leases().filter(|(_, l)| usize::from(l.formation) == f).map(|(_, l)| l).last()
    }

    pub fn has_lease_in(&self, e: usize, state: LeaseState) -> bool {
        self.leases().any(|(_, l)| usize::from(l.epoch) == e && l.state == state)
    }
}

impl fmt::Debug for World {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "S={} T={}", self.epochs[0].as_str(), self.epochs[1].as_str())?;
        let ev = &self.evidence;
        if ev.added {
            write!(f, " evidence{}{}", if ev.revoked { " revoked" } else { "" }, if ev.expired { " expired" } else { "" })?;
        }
        for (i, fm) in self.formations.iter().enumerate().filter(|(_, fm)| fm.formed) {
            let flags = format!("{}{}", if fm.revoked { " revoked" } else { "" }, if fm.expired { " expired" } else { "" });
            write!(f, " | f{i}:{}{flags}", if fm.captured { "S+T" } else { "S" })?;
        }
        for (i, l) in self.leases() {
            write!(f, " | lease{i}:f{}@{} {}{}", l.formation, EPOCHS[usize::from(l.epoch)], l.state, if l.used { " ran" } else { "" })?;
        }
        // Gateways by position: the model keeps them sorted, so an action's gateway number is its position before the step.
        for (g, gw) in self.gateways.iter().enumerate() {
            let held = gw.holding.map_or(String::new(), |l| format!(" holds lease{l}"));
            write!(f, " | #{g}:{}{held}", if gw.up { "up" } else { "down" })?;
        }
        Ok(())
    }
}

/// A mismatched final hop: what differs from the lease's registration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Tamper {
    Artifact,
    Config,
    Generation,
}

/// Everything that can happen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Action {
    AddEvidence,
    RevokeEvidence,
    ExpireEvidence,
    Form(u8),
    RevokeFormation(u8),
    ExpireFormation(u8),
    /// The operator moves an epoch (hide, advertise, drain, retire).
    Move(u8, State),
    /// Gateway admits a formation.
    Admit(u8, u8),
    /// Gateway presents its lease's token at the final hop; on success the handler runs.
    Fence(u8),
    /// Gateway presents its lease's token with a mismatched hop.
    Tampered(u8, Tamper),
    /// Gateway reports its lease completed (the handler ran or definitely did not).
    Complete(u8),
    /// Gateway reports its lease's outcome unknown.
    ReportUncertain(u8),
    Crash(u8),
    /// Recovery marks a crashed gateway's lease uncertain and restarts the gateway.
    Recover(u8),
    /// The resolver settles a lease (signed).
    Resolve(u8),
    /// Someone presents a used token again.
    Replay(u8),
    /// Someone presents the unused token of a lease that is no longer admitted.
    LateHop(u8),
    /// Someone reports a lease that is no longer admitted as completed or uncertain.
    LateReport(u8, LeaseState),
}

/// The protocol: the runtime's decisions, or (tests only) one broken variant.
#[derive(Debug, Clone, Copy, Default)]
pub struct Protocol {
    #[cfg(feature = "mutants")]
    pub mutant: Option<Mutant>,
}

/// `broken!(self, Name)`: whether this protocol runs mutant `Name`. Always
/// `false` without the `mutants` feature, so a shipped build has no mutant.
macro_rules! broken {
    ($p:expr, $m:ident) => {{
        #[cfg(feature = "mutants")]
        let on = $p.mutant == Some(Mutant::$m);
        #[cfg(not(feature = "mutants"))]
        let on = no_mutant(stringify!($m));
        on
    }};
}

/// Without the `mutants` feature no decision is broken. (A call, not a
/// literal `false`, so each guarded branch reads as its own condition.)
#[cfg(not(feature = "mutants"))]
#[inline(always)]
fn no_mutant(_name: &str) -> bool {
    false
}

/// The time at which a deadline is checked, given whether it passed.
fn deadline(expired: bool) -> i64 {
    if expired { PAST } else { LIVE }
}

impl Protocol {
    /// The runtime's admission decision for formation `f` in `w`.
    pub fn admission(&self, w: &World, f: usize) -> Result<Target, AdmissionRefusal> {
        let fm = w.formations[f];
        let ev = w.evidence;
        let latest = w.latest_lease(f).map(|l| PriorLease { state: l.state, used: l.used });
        let mut facts = FormationFacts { revoked: fm.revoked, expires_at: deadline(fm.expired), captured: fm.captured, latest };
        if broken!(self, AdmitInFlight) {
            facts.latest = None;
        }
        let mut successor = SuccessorFacts { evidence_revoked: ev.revoked, evidence_valid_until: deadline(ev.expired), state: Some(w.epochs[SUCCESSOR]) };
        if broken!(self, AdmitRevoked) {
            facts.revoked = false;
            successor.evidence_revoked = false;
        }
        if broken!(self, AdmitExpired) {
            facts.expires_at = LIVE;
            successor.evidence_valid_until = LIVE;
        }
        let source = w.epochs[SOURCE];
        let live_evidence = ev.added && !ev.revoked && !ev.expired;
        if (broken!(self, AuthorityWidening) && source == State::Stale && !fm.captured && live_evidence)
            || (broken!(self, UncapturedFallback) && source == State::Stale && !fm.captured && w.epochs[SUCCESSOR].eligible())
            || (broken!(self, EarlyFallback) && source == State::Draining && fm.captured && w.epochs[SUCCESSOR].eligible())
        {
            return Ok(Target::Successor);
        }
        if broken!(self, AdmitWhileDraining) && source == State::Draining {
            return Ok(Target::Source);
        }
        let read = || Ok::<_, Infallible>(successor);
        decision::admission(&facts, NOW, source, read).unwrap_or_else(|e| match e {})
    }

    /// The runtime's capture decision for formation `f` (which names the evidence).
    pub fn capture(&self, w: &World) -> Result<(), CaptureRefusal> {
        let ev = w.evidence;
        decision::capture(&EvidenceFacts { revoked: ev.revoked, valid_from: 0, valid_until: deadline(ev.expired), for_this_call: true }, NOW)
    }

    /// The runtime's decision on moving epoch `e` to `to`.
    pub fn epoch_move(&self, w: &World, e: usize, to: State) -> Result<(), MoveRefusal> {
        let from = w.epochs[e];
        if broken!(self, SkipDrain) && from.eligible() && to == State::Stale && w.open_leases(e) == 0 {
            return Ok(());
        }
        let open = || {
            let count = |s: LeaseState| w.leases().filter(|(_, l)| usize::from(l.epoch) == e && l.state == s).count() as i64;
            Ok::<_, Infallible>(if broken!(self, RetireWithAdmitted) {
                count(LeaseState::Uncertain)
            } else if broken!(self, RetireWithUncertain) {
                count(LeaseState::Admitted)
            } else {
                w.open_leases(e) as i64
            })
        };
        decision::epoch_move(from, to, open).unwrap_or_else(|e| match e {})
    }

    /// The runtime's lease table.
    pub fn lease_move(&self, from: LeaseState, to: LeaseState) -> bool {
        if broken!(self, ReopenLease) && matches!(from, LeaseState::Completed | LeaseState::Resolved) && to == LeaseState::Uncertain {
            return true;
        }
        if broken!(self, ResolveAdmitted) && from == LeaseState::Admitted && to == LeaseState::Resolved {
            return true;
        }
        decision::lease_move(from, to)
    }

    /// The runtime's final-hop decision for lease `l` presented with `tamper` in `w`.
    pub fn final_hop(&self, w: &World, l: &Lease, tamper: Option<Tamper>) -> Result<(), FenceRefusal> {
        let fm = w.formations[usize::from(l.formation)];
        let ev = w.evidence;
        let on_successor = usize::from(l.epoch) == SUCCESSOR;
        let mut hop = HopFacts {
            token_verifies: true,
            used: l.used,
            generation_matches: tamper != Some(Tamper::Generation),
            artifact_matches: tamper != Some(Tamper::Artifact),
            config_matches: tamper != Some(Tamper::Config),
            state: l.state,
            formation_revoked: fm.revoked,
            formation_expires_at: deadline(fm.expired),
            evidence: on_successor.then_some((ev.revoked, deadline(ev.expired))),
        };
        if broken!(self, FenceIgnoresFormation) {
            (hop.formation_revoked, hop.formation_expires_at, hop.evidence) = (false, LIVE, None);
        }
        if broken!(self, FenceReplay) {
            hop.used = false;
        }
        if broken!(self, FenceIgnoresDigests) {
            (hop.generation_matches, hop.artifact_matches, hop.config_matches) = (true, true, true);
        }
        if broken!(self, FenceAfterClose) {
            hop.state = LeaseState::Admitted;
        }
        decision::final_hop(&hop, NOW)
    }

    /// Whether the `g`'s admission of `f` would be tried and succeed in `w`.
    fn admit(&self, w: &World, g: usize, f: usize) -> Option<World> {
        let gw = w.gateways[g];
        let fm = w.formations[f];
        if !gw.up || gw.holding.is_some() || !fm.formed || w.lease_count() == MAX_LEASES {
            return None;
        }
        let target = self.admission(w, f).ok()?;
        let mut next = w.clone();
        if broken!(self, AuthorityWidening) && target == Target::Successor && !fm.captured {
            next.formations[f].captured = true;
        }
        let slot = w.lease_count();
        let epoch = match target {
            Target::Source => SOURCE,
            Target::Successor => SUCCESSOR,
        };
        next.leases[slot] = Some(Lease { formation: f as u8, epoch: epoch as u8, state: LeaseState::Admitted, used: false });
        next.gateways[g].holding = Some(slot as u8);
        Some(next)
    }

    /// Moves lease `slot` to `to` if the table allows it.
    fn move_lease(&self, w: &World, slot: usize, to: LeaseState) -> Option<World> {
        let l = w.leases[slot]?;
        if !self.lease_move(l.state, to) {
            return None;
        }
        let mut next = w.clone();
        next.leases[slot] = Some(Lease { state: to, ..l });
        Some(next)
    }

    /// A final hop for lease `slot`; on success the handler runs.
    fn hop(&self, w: &World, slot: usize, tamper: Option<Tamper>) -> Option<World> {
        let l = w.leases[slot]?;
        self.final_hop(w, &l, tamper).ok()?;
        let mut next = w.clone();
        next.leases[slot] = Some(Lease { used: true, ..l });
        Some(next)
    }
}

impl Model for Protocol {
    type State = World;
    type Action = Action;

    fn init(&self) -> Vec<World> {
        vec![World {
            epochs: [State::Advertised, State::Advertised],
            evidence: Evidence::default(),
            formations: [Formation::default(); FORMATIONS],
            leases: [None; MAX_LEASES],
            gateways: [Gateway { up: true, holding: None }; GATEWAYS],
        }]
    }

    fn actions(&self, w: &World, out: &mut Vec<Action>) {
        out.extend([Action::AddEvidence, Action::RevokeEvidence, Action::ExpireEvidence]);
        for f in 0..FORMATIONS as u8 {
            out.extend([Action::Form(f), Action::RevokeFormation(f), Action::ExpireFormation(f)]);
        }
        for e in 0..2u8 {
            for to in [State::Advertised, State::HiddenButValid, State::Draining, State::Stale] {
                out.push(Action::Move(e, to));
            }
        }
        for g in 0..GATEWAYS as u8 {
            for f in 0..FORMATIONS as u8 {
                out.push(Action::Admit(g, f));
            }
            out.extend([Action::Fence(g), Action::Complete(g), Action::ReportUncertain(g), Action::Crash(g), Action::Recover(g)]);
            out.extend([Tamper::Artifact, Tamper::Config, Tamper::Generation].map(|t| Action::Tampered(g, t)));
        }
        for (i, _) in w.leases() {
            let i = i as u8;
            out.extend([Action::Resolve(i), Action::Replay(i), Action::LateHop(i)]);
            out.extend([Action::LateReport(i, LeaseState::Completed), Action::LateReport(i, LeaseState::Uncertain)]);
        }
    }

    fn next(&self, w: &World, a: Action) -> Option<World> {
        let mut n = self.step(w, a)?;
        n.gateways.sort();
        Some(n)
    }

    fn fairness(&self, w: &World, a: Action) -> Option<Fairness> {
        // Classes name what is waited for (a lease, an epoch, a formation), not a
        // gateway's position, which the symmetry reduction may change.
        let held = |g: u8| w.gateways[usize::from(g)].holding.map_or(99, u32::from);
        match a {
            // A running gateway eventually reports; recovery and the resolver eventually act.
            Action::Complete(g) => Some(Fairness::Weak(held(g))),
            Action::Recover(g) => Some(Fairness::Weak(10 + held(g))),
            Action::Resolve(l) => Some(Fairness::Weak(30 + u32::from(l))),
            // The operator retires a drained epoch once it can.
            Action::Move(e, State::Stale) => Some(Fairness::Weak(40 + u32::from(e))),
            // The agent keeps asking: a formation admissible again and again is eventually admitted.
            Action::Admit(_, f) => Some(Fairness::Strong(50 + u32::from(f))),
            _ => None,
        }
    }
}

/// Neither revoked nor expired.
fn live(f: Formation) -> bool {
    f.formed && !f.revoked && !f.expired
}

impl Protocol {
    /// One step, before the gateways are put back in order.
    fn step(&self, w: &World, a: Action) -> Option<World> {
        let mut n = w.clone();
        match a {
            Action::AddEvidence if !w.evidence.added => n.evidence.added = true,
            // Revocation and expiry each end the evidence; the model takes whichever comes first.
            Action::RevokeEvidence if w.evidence.added && !w.evidence.revoked && !w.evidence.expired => n.evidence.revoked = true,
            Action::ExpireEvidence if w.evidence.added && !w.evidence.revoked && !w.evidence.expired => n.evidence.expired = true,
            Action::Form(f) if !w.formations[usize::from(f)].formed => {
                if !decision::formable(w.epochs[SOURCE]) {
                    return None;
                }
                let captured = ASKS_SUCCESSOR[usize::from(f)];
                // The evidence it names must exist at formation; then the runtime's capture decision.
                if captured && (!w.evidence.added || self.capture(w).is_err()) {
                    return None;
                }
                n.formations[usize::from(f)] = Formation { formed: true, captured, ..Formation::default() };
            }
            // Likewise a formation ends by revocation or by expiry, whichever comes first.
            Action::RevokeFormation(f) if live(w.formations[usize::from(f)]) => n.formations[usize::from(f)].revoked = true,
            Action::ExpireFormation(f) if live(w.formations[usize::from(f)]) => n.formations[usize::from(f)].expired = true,
            Action::Move(e, to) => {
                self.epoch_move(w, usize::from(e), to).ok()?;
                n.epochs[usize::from(e)] = to;
            }
            Action::Admit(g, f) => return self.admit(w, usize::from(g), usize::from(f)),
            Action::Fence(g) | Action::Tampered(g, _) => {
                let gw = w.gateways[usize::from(g)];
                let slot = usize::from(gw.holding?);
                let tamper = if let Action::Tampered(_, t) = a { Some(t) } else { None };
                // A gateway presents its token once; what follows is a replay (below).
                if !gw.up || w.leases[slot]?.used {
                    return None;
                }
                return self.hop(w, slot, tamper);
            }
            Action::Complete(g) | Action::ReportUncertain(g) => {
                let gw = w.gateways[usize::from(g)];
                let slot = usize::from(gw.holding?);
                if !gw.up {
                    return None;
                }
                let to = if matches!(a, Action::Complete(_)) { LeaseState::Completed } else { LeaseState::Uncertain };
                // A report the table refuses still ends the gateway's run.
                n = self.move_lease(w, slot, to).unwrap_or_else(|| w.clone());
                n.gateways[usize::from(g)].holding = None;
            }
            // A gateway crashes in the middle of a call (an idle gateway's crash changes nothing the protocol sees).
            Action::Crash(g) if w.gateways[usize::from(g)].up && w.gateways[usize::from(g)].holding.is_some() => n.gateways[usize::from(g)].up = false,
            // Recovery marks the crashed gateway's lease uncertain and restarts it.
            Action::Recover(g) => {
                let gw = w.gateways[usize::from(g)];
                let slot = usize::from(gw.holding?);
                if gw.up {
                    return None;
                }
                n = self.move_lease(w, slot, LeaseState::Uncertain).unwrap_or_else(|| w.clone());
                n.gateways[usize::from(g)] = Gateway { up: true, holding: None };
            }
            Action::Resolve(slot) => return self.move_lease(w, usize::from(slot), LeaseState::Resolved),
            Action::Replay(slot) if w.leases[usize::from(slot)]?.used => return self.hop(w, usize::from(slot), None),
            Action::LateHop(slot) => {
                let l = w.leases[usize::from(slot)]?;
                if l.used || l.state == LeaseState::Admitted {
                    return None;
                }
                return self.hop(w, usize::from(slot), None);
            }
            Action::LateReport(slot, to) if w.leases[usize::from(slot)]?.state != LeaseState::Admitted => {
                return self.move_lease(w, usize::from(slot), to);
            }
            _ => return None,
        }
        Some(n)
    }
}
