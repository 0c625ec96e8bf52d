//! The lifecycle's properties, each stated once: an id, a name, its formula
//! in LTL or CTL, plain words, its group (safety, liveness, completeness,
//! fairness) and where it is checked. `docs/lifecycle.md` lists the same ids (a test keeps the two
//! equal); [`check`] checks one property on an explored model, and the
//! history checker ([`crate::audit_check`]) uses the same safety ids.

use std::collections::BTreeSet;

use fcd_runtime::runtime::decision::{AdmissionRefusal, FenceRefusal, MoveRefusal};
use fcd_runtime::runtime::{LeaseState, State};

use crate::explore::{Counterexample, Graph, Model, Schedule};
use crate::protocol::{Action, FORMATIONS, MAX_LEASES, Protocol, SOURCE, SUCCESSOR, Tamper, World};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Group {
    Safety,
    Liveness,
    Completeness,
    Fairness,
}

/// One property.
#[derive(Debug, Clone, Copy)]
pub struct Property {
    pub id: &'static str,
    pub name: &'static str,
    pub group: Group,
    pub formula: &'static str,
    pub words: &'static str,
}

const fn p(id: &'static str, name: &'static str, group: Group, formula: &'static str, words: &'static str) -> Property {
    Property { id, name, group, formula, words }
}

use Group::*;

/// Every property, in the order of docs/lifecycle.md.
pub const PROPERTIES: &[Property] = &[
    p(
        "S1",
        "authority fixed at formation",
        Safety,
        "G (formed(f) ∧ succ(f) = X -> G succ(f) = X)",
        "A formation's captured successor is decided when it is formed, from evidence that exists and is valid then, and never changes or grows.",
    ),
    p(
        "S2",
        "leases only inside the formation's authority",
        Safety,
        "G (lease(l, f, e) -> e = src(f) ∨ e = succ(f))",
        "Every lease runs on the formation's exact source or on the successor it captured, nowhere else.",
    ),
    p(
        "S3",
        "fallback only after the source is STALE",
        Safety,
        "G (admit(l, f, succ(f)) -> state(src(f)) = STALE)",
        "A lease starts on the captured successor only once the source is STALE.",
    ),
    p(
        "S4",
        "no lease admitted on a DRAINING or STALE epoch",
        Safety,
        "G (admit(l, f, e) -> state(e) ∈ {ADVERTISED, HIDDEN_BUT_VALID})",
        "Admission and drain are serialized: once an epoch drains, no new lease starts on it.",
    ),
    p(
        "S5",
        "STALE only with no admitted lease",
        Safety,
        "G (state(e) = STALE -> ¬∃l. lease(l, e) ∧ admitted(l))",
        "An epoch retires only when no admitted lease remains on it.",
    ),
    p(
        "S6",
        "an uncertain lease holds its epoch DRAINING",
        Safety,
        "G (state(e) = STALE -> ¬∃l. lease(l, e) ∧ uncertain(l))",
        "An uncertain outcome keeps its epoch DRAINING until a signed resolution.",
    ),
    p(
        "S7",
        "a token passes the fence at most once",
        Safety,
        "G (pass(l) -> X G ¬pass(l))",
        "A replayed token never passes the final hop: each admitted invocation has at most one effect.",
    ),
    p(
        "S8",
        "the fence passes only the registered hop",
        Safety,
        "G (pass(l, gen, art, cfg) -> (gen, art, cfg) = registered(l))",
        "A stale generation or a different artifact or configuration is stopped before the handler.",
    ),
    p(
        "S9",
        "no effect once a lease is closed",
        Safety,
        "G (pass(l) -> admitted(l))",
        "A lease completed, uncertain or resolved never runs its handler afterwards.",
    ),
    p(
        "S10",
        "revocation cancels before admission",
        Safety,
        "G (revoked(f) ∨ (e = succ(f) ∧ revoked(ev(f))) -> G ¬admit(l, f, e))",
        "After a formation or its evidence is revoked, no new lease starts under it.",
    ),
    p(
        "S11",
        "expiry cancels before admission",
        Safety,
        "G (expired(f) ∨ (e = succ(f) ∧ expired(ev(f))) -> G ¬admit(l, f, e))",
        "After a formation or its evidence expires, no new lease starts under it.",
    ),
    p(
        "S12",
        "terminal states are absorbing",
        Safety,
        "G (s ∈ {COMPLETED, RESOLVED, STALE, revoked, expired} -> G s)",
        "A completed or resolved lease, a STALE epoch, a revocation and an expiry never change again.",
    ),
    p(
        "S13",
        "epochs move only along their lifecycle",
        Safety,
        "G (state(e) = a ∧ X state(e) = b ∧ a ≠ b -> (a, b) ∈ EPOCH_LIFECYCLE)",
        "ADVERTISED <-> HIDDEN_BUT_VALID, either -> DRAINING, DRAINING -> STALE, and nothing else.",
    ),
    p(
        "S14",
        "leases move only along their lifecycle",
        Safety,
        "G (state(l) = a ∧ X state(l) = b ∧ a ≠ b -> (a, b) ∈ LEASE_LIFECYCLE)",
        "ADMITTED -> COMPLETED, ADMITTED -> UNCERTAIN, UNCERTAIN -> RESOLVED, and nothing else; a lease starts ADMITTED.",
    ),
    p(
        "S15",
        "at most one effect per formation",
        Safety,
        "G (pass(l1) ∧ pass(l2) ∧ f(l1) = f(l2) -> l1 = l2)",
        "A formed call runs at most once: admission refuses (formation_in_flight) while the formation's latest lease is open, completed or passed the fence, so a retry follows only a lease settled unused (admitted -> uncertain -> resolved).",
    ),
    p(
        "S16",
        "revocation and expiry cancel before effect",
        Safety,
        "G (pass(l) -> ¬revoked(f(l)) ∧ ¬expired(f(l)) ∧ (e(l) = succ(f(l)) -> ¬revoked(ev(f(l))) ∧ ¬expired(ev(f(l)))))",
        "The fence re-checks the lease's formation (and, on the successor, the captured evidence) at its own time: a lease admitted before a revocation or expiry never runs after it.",
    ),
    p(
        "L1",
        "every admitted call terminates",
        Liveness,
        "G (open(l) -> F terminal(l))   under WF(report), WF(recover), WF(restart), WF(resolve)",
        "Under fair scheduling every admitted lease ends COMPLETED or RESOLVED, even if its gateway crashes.",
    ),
    p(
        "L2",
        "a drain finishes",
        Liveness,
        "G (state(e) = DRAINING -> F state(e) = STALE)   under the same fairness and WF(retire)",
        "DRAINING reaches STALE once admitted and uncertain work clears.",
    ),
    p(
        "L3",
        "no deadlock between drain and admission",
        Liveness,
        "AG EF (¬∃l. open(l) ∧ ¬∃e. state(e) = DRAINING)",
        "From every reachable state some run clears all open work and finishes every drain.",
    ),
    p(
        "C1",
        "every lifecycle move is reachable",
        Completeness,
        "∀(a, b) ∈ EPOCH_LIFECYCLE ∪ LEASE_LIFECYCLE: EF (a ∧ EX b)",
        "The model exercises every row of both transition tables: nothing the runtime allows is left unexplored.",
    ),
    p(
        "C2",
        "every refusal is reachable",
        Completeness,
        "∀ refusal r: EF (decision = r)",
        "Every reason admission, the fence and an epoch move can give occurs in some reachable state.",
    ),
    p(
        "C3",
        "a fallback can complete",
        Completeness,
        "EF (∃l. lease(l, f, succ(f)) ∧ ran(l) ∧ completed(l))",
        "A call formed on a retiring source can run and complete on its captured successor.",
    ),
    p(
        "C4",
        "the runtime agrees with the model",
        Completeness,
        "∀ replayed step: runtime(step) = model(step)",
        "On traces of the model replayed on the SQLite runtime, every decision and every resulting state agree.",
    ),
    p(
        "F1",
        "no ready formation is starved",
        Fairness,
        "G (ready(f) -> F (¬ready(f) ∨ running(f)))   under SF(admit f)",
        "A formation that stays admissible while the agent keeps asking is eventually admitted, whatever the other formations do.",
    ),
    p(
        "F2",
        "admission cannot starve a drain",
        Fairness,
        "G (state(e) = DRAINING ∧ open(e) = n -> X open(e) <= n)",
        "While an epoch drains its open work only shrinks, so retirement is never postponed by new admissions.",
    ),
    p(
        "F3",
        "gateways are treated alike",
        Fairness,
        "AG (idle(g0) ∧ idle(g1) -> (EX admit(g0, f) <-> EX admit(g1, f)))",
        "No gateway is favoured: admission does not depend on which gateway asks.",
    ),
];

/// The epoch lifecycle as specified (independent of the runtime's table, which a test compares to it).
pub const EPOCH_LIFECYCLE: &[(State, State)] = &[
    (State::Advertised, State::HiddenButValid),
    (State::HiddenButValid, State::Advertised),
    (State::Advertised, State::Draining),
    (State::HiddenButValid, State::Draining),
    (State::Draining, State::Stale),
];

/// The lease lifecycle as specified.
pub const LEASE_LIFECYCLE: &[(LeaseState, LeaseState)] =
    &[(LeaseState::Admitted, LeaseState::Completed), (LeaseState::Admitted, LeaseState::Uncertain), (LeaseState::Uncertain, LeaseState::Resolved)];

pub fn property(id: &str) -> Option<&'static Property> {
    PROPERTIES.iter().find(|p| p.id == id)
}

type Result = std::result::Result<(), Box<Counterexample<Protocol>>>;

/// The lease a final-hop action presents.
fn hop_slot(pre: &World, a: Action) -> Option<usize> {
    match a {
        Action::Fence(g) | Action::Tampered(g, _) => pre.gateways[usize::from(g)].holding.map(usize::from),
        Action::Replay(l) | Action::LateHop(l) => Some(usize::from(l)),
        _ => None,
    }
}

/// The lease an action created, if it created one.
fn admitted(pre: &World, post: &World) -> Option<(usize, usize)> {
    let slot = pre.lease_count();
    (post.lease_count() > slot).then(|| post.leases[slot].map(|l| (usize::from(l.formation), usize::from(l.epoch)))).flatten()
}

fn terminal(s: LeaseState) -> bool {
    matches!(s, LeaseState::Completed | LeaseState::Resolved)
}

/// Whether formation `f` may be admitted now (and the model has a lease left).
pub fn ready(protocol: &Protocol, w: &World, f: usize) -> bool {
    w.formations[f].formed && w.lease_count() < MAX_LEASES && protocol.admission(w, f).is_ok()
}

/// The safety properties (and the step-wise ones of the other groups) as a
/// predicate on one step `(before, action, after)`. A state invariant is
/// checked on the state after every step (the initial state holds no lease).
pub fn safety(id: &str) -> Option<fn(&World, Action, &World) -> bool> {
    let ok: fn(&World, Action, &World) -> bool = match id {
        "S1" => |pre, _, post| {
            (0..FORMATIONS).all(|f| !pre.formations[f].formed || (post.formations[f].formed && post.formations[f].captured == pre.formations[f].captured))
        },
        "S2" => |_, _, w| w.leases().all(|(_, l)| usize::from(l.epoch) == SOURCE || w.formations[usize::from(l.formation)].captured),
        "S3" => |pre, _, post| admitted(pre, post).is_none_or(|(_, e)| e != SUCCESSOR || pre.epochs[SOURCE] == State::Stale),
        "S4" => |pre, _, post| admitted(pre, post).is_none_or(|(_, e)| pre.epochs[e].eligible()),
        "S5" => |_, _, w| (0..2).all(|e| w.epochs[e] != State::Stale || !w.has_lease_in(e, LeaseState::Admitted)),
        "S6" => |_, _, w| (0..2).all(|e| w.epochs[e] != State::Stale || !w.has_lease_in(e, LeaseState::Uncertain)),
        "S7" => |pre, a, _| hop_slot(pre, a).and_then(|s| pre.leases[s]).is_none_or(|l| !l.used),
        "S8" => |_, a, _| !matches!(a, Action::Tampered(..)),
        "S9" => |pre, a, _| hop_slot(pre, a).and_then(|s| pre.leases[s]).is_none_or(|l| l.state == LeaseState::Admitted),
        "S10" => |pre, _, post| admitted(pre, post).is_none_or(|(f, e)| !pre.formations[f].revoked && (e == SOURCE || !pre.evidence.revoked)),
        "S11" => |pre, _, post| admitted(pre, post).is_none_or(|(f, e)| !pre.formations[f].expired && (e == SOURCE || !pre.evidence.expired)),
        "S12" => |pre, _, post| {
            let leases = (0..MAX_LEASES).all(|i| pre.leases[i].is_none_or(|l| !terminal(l.state) || post.leases[i].is_some_and(|m| m.state == l.state)));
            let epochs = (0..2).all(|e| pre.epochs[e] != State::Stale || post.epochs[e] == State::Stale);
            let formations = (0..FORMATIONS)
                .all(|f| (!pre.formations[f].revoked || post.formations[f].revoked) && (!pre.formations[f].expired || post.formations[f].expired));
            let evidence = (!pre.evidence.revoked || post.evidence.revoked) && (!pre.evidence.expired || post.evidence.expired);
            leases && epochs && formations && evidence
        },
        "S13" => |pre, _, post| (0..2).all(|e| pre.epochs[e] == post.epochs[e] || EPOCH_LIFECYCLE.contains(&(pre.epochs[e], post.epochs[e]))),
        "S14" => |pre, _, post| {
            (0..MAX_LEASES).all(|i| match (pre.leases[i], post.leases[i]) {
                (Some(a), Some(b)) => a.state == b.state || LEASE_LIFECYCLE.contains(&(a.state, b.state)),
                (None, Some(b)) => b.state == LeaseState::Admitted && !b.used,
                (_, None) => true,
            })
        },
        "F2" => |pre, _, post| (0..2).all(|e| pre.epochs[e] != State::Draining || post.open_leases(e) <= pre.open_leases(e)),
        "S15" => |_, _, w| (0..FORMATIONS).all(|f| w.leases().filter(|(_, l)| usize::from(l.formation) == f && l.used).count() <= 1),
        "S16" => |pre, a, post| {
            // Checked on every final hop that passed (its lease is used after the step).
            hop_slot(pre, a).filter(|&s| pre.leases[s].is_some_and(|l| !l.used) && post.leases[s].is_some_and(|l| l.used)).is_none_or(|s| {
                let Some(l) = pre.leases[s] else { return true };
                let f = pre.formations[usize::from(l.formation)];
                let ev = pre.evidence;
                !f.revoked && !f.expired && (usize::from(l.epoch) == SOURCE || (!ev.revoked && !ev.expired))
            })
        },
        _ => return None,
    };
    Some(ok)
}

/// The properties that need fairness (L1, L2, F1), checked under
/// `fairness`; `None` for any other id. The model's fairness is
/// [`Model::fairness`]; a test checks that without it they fail, so the
/// assumptions are needed and the check is not vacuous.
pub fn liveness(protocol: &Protocol, g: &Graph<Protocol>, id: &str, fairness: &Schedule<'_, Protocol>) -> Option<Result> {
    let label = format!("{id} ({})", property(id).map_or("?", |p| p.name));
    let label = label.as_str();
    Some(match id {
        "L1" => (0..MAX_LEASES).try_for_each(|i| {
            let open = move |w: &World| w.leases[i].is_some_and(|l| l.state.open());
            g.leads_to(fairness, label, open, move |w| !open(w))
        }),
        "L2" => (0..2).try_for_each(|e| g.leads_to(fairness, label, move |w| w.epochs[e] == State::Draining, move |w| w.epochs[e] == State::Stale)),
        "F1" => (0..FORMATIONS).try_for_each(|f| {
            let running =
                move |w: &World| w.gateways.iter().any(|gw| gw.holding.and_then(|s| w.leases[usize::from(s)]).is_some_and(|l| usize::from(l.formation) == f));
            g.leads_to(fairness, label, move |w| ready(protocol, w, f), move |w| !ready(protocol, w, f) || running(w))
        }),
        _ => return None,
    })
}

/// Checks property `id` on the explored graph of `protocol`.
pub fn check(protocol: &Protocol, g: &Graph<Protocol>, id: &str) -> Result {
    let name = |id: &str| format!("{id} ({})", property(id).map_or("?", |p| p.name));
    let label = name(id);
    let label = label.as_str();
    if let Some(ok) = safety(id) {
        return g.step(label, ok);
    }
    if let Some(result) = liveness(protocol, g, id, &|w, a| protocol.fairness(w, a)) {
        return result;
    }
    match id {
        "L3" => g.always_can_reach(label, |w| w.leases().all(|(_, l)| !l.state.open()) && !w.epochs.contains(&State::Draining)),
        "C1" => reachable_moves(g, label),
        "C2" => reachable_refusals(protocol, g, label),
        "C3" => {
            let found = g.states.iter().any(|w| w.leases().any(|(_, l)| usize::from(l.epoch) == SUCCESSOR && l.used && l.state == LeaseState::Completed));
            if found { Ok(()) } else { Err(unreachable(label, "no reachable state has a completed fallback that ran")) }
        }
        "F3" => g.invariant(label, |w| {
            let idle = w.gateways.iter().all(|gw| gw.up && gw.holding.is_none());
            !idle || (0..FORMATIONS as u8).all(|f| protocol.next(w, Action::Admit(0, f)).is_some() == protocol.next(w, Action::Admit(1, f)).is_some())
        }),
        _ => Err(unreachable(label, "no such property")),
    }
}

/// A failure that has no trace: something never happens.
fn unreachable(property: &str, why: &str) -> Box<Counterexample<Protocol>> {
    Box::new(Counterexample { property: format!("{property}: {why}"), path: Vec::new(), cycle: Vec::new() })
}

fn reachable_moves(g: &Graph<Protocol>, label: &str) -> Result {
    let mut epoch_moves = BTreeSet::new();
    let mut lease_moves = BTreeSet::new();
    for (pre, _, post) in g.taken() {
        for e in 0..2 {
            if pre.epochs[e] != post.epochs[e] {
                epoch_moves.insert((e, pre.epochs[e], post.epochs[e]));
            }
        }
        for i in 0..MAX_LEASES {
            if let (Some(a), Some(b)) = (pre.leases[i], post.leases[i])
                && a.state != b.state
            {
                lease_moves.insert((a.state, b.state));
            }
        }
    }
    for e in 0..2 {
        for &(a, b) in EPOCH_LIFECYCLE {
            if !epoch_moves.contains(&(e, a, b)) {
                return Err(unreachable(label, &format!("epoch {e} never moves {} -> {}", a.as_str(), b.as_str())));
            }
        }
    }
    for &(a, b) in LEASE_LIFECYCLE {
        if !lease_moves.contains(&(a, b)) {
            return Err(unreachable(label, &format!("no lease moves {a} -> {b}")));
        }
    }
    Ok(())
}

/// Every refusal the model's decisions give in some reachable state, by name.
pub fn refusals_reached(protocol: &Protocol, g: &Graph<Protocol>) -> BTreeSet<String> {
    // Few distinct refusals over many states: small vectors, names made once at the end.
    let (mut admission, mut fence, mut moves) = (Vec::new(), Vec::new(), Vec::new());
    fn note<T: PartialEq>(seen: &mut Vec<T>, r: T) {
        if !seen.contains(&r) {
            seen.push(r);
        }
    }
    for w in &g.states {
        for f in 0..FORMATIONS {
            if w.formations[f].formed
                && let Err(r) = protocol.admission(w, f)
            {
                note(&mut admission, r);
            }
        }
        for (_, l) in w.leases() {
            for t in [None, Some(Tamper::Artifact), Some(Tamper::Config), Some(Tamper::Generation)] {
                if let Err(r) = protocol.final_hop(w, l, t) {
                    note(&mut fence, r);
                }
            }
        }
        for e in 0..2 {
            if let Err(r) = protocol.epoch_move(w, e, State::Stale) {
                note(&mut moves, refusal_kind(r));
            }
        }
    }
    let mut seen: BTreeSet<String> = admission.iter().map(|r| format!("admission {r:?}")).collect();
    seen.extend(fence.iter().map(|r| format!("fence {r:?}")));
    seen.extend(moves.iter().map(|r| format!("move {r}")));
    seen
}

fn refusal_kind(r: MoveRefusal) -> &'static str {
    match r {
        MoveRefusal::BadTransition => "BadTransition",
        MoveRefusal::LeasesOutstanding(_) => "LeasesOutstanding",
    }
}

/// The refusals C2 requires: every admission, fence and move refusal the
/// model can express (a bad MAC is abstracted away: tokens are not forged here).
pub fn expected_refusals() -> BTreeSet<String> {
    let admission = [
        AdmissionRefusal::Revoked,
        AdmissionRefusal::Expired,
        AdmissionRefusal::InFlight(LeaseState::Admitted),
        AdmissionRefusal::InFlight(LeaseState::Uncertain),
        AdmissionRefusal::InFlight(LeaseState::Completed),
        AdmissionRefusal::InFlight(LeaseState::Resolved),
        AdmissionRefusal::SourceDraining,
        AdmissionRefusal::NotCaptured,
        AdmissionRefusal::EvidenceRevoked,
        AdmissionRefusal::EvidenceExpired,
        AdmissionRefusal::SuccessorIneligible(Some(State::Draining)),
        AdmissionRefusal::SuccessorIneligible(Some(State::Stale)),
    ];
    let fence = [
        FenceRefusal::Replay,
        FenceRefusal::Revoked,
        FenceRefusal::Expired,
        FenceRefusal::EvidenceRevoked,
        FenceRefusal::EvidenceExpired,
        FenceRefusal::StaleGeneration,
        FenceRefusal::ArtifactMismatch,
        FenceRefusal::ConfigMismatch,
        FenceRefusal::NotAdmitted(LeaseState::Completed),
        FenceRefusal::NotAdmitted(LeaseState::Uncertain),
        FenceRefusal::NotAdmitted(LeaseState::Resolved),
    ];
    let mut all: BTreeSet<String> = admission.iter().map(|r| format!("admission {r:?}")).collect();
    all.extend(fence.iter().map(|r| format!("fence {r:?}")));
    all.extend(["move BadTransition".to_owned(), "move LeasesOutstanding".to_owned()]);
    all
}

fn reachable_refusals(protocol: &Protocol, g: &Graph<Protocol>, label: &str) -> Result {
    let seen = refusals_reached(protocol, g);
    let missing: Vec<_> = expected_refusals().difference(&seen).cloned().collect();
    if missing.is_empty() { Ok(()) } else { Err(unreachable(label, &format!("never refused with {missing:?}"))) }
}

/// The ids of the properties the model checks (all but C4, which the replay test checks).
pub fn model_checked() -> impl Iterator<Item = &'static Property> {
    PROPERTIES.iter().filter(|p| p.id != "C4")
}
