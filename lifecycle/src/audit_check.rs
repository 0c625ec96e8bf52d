//! Checking a recorded history against the safety properties: the runtime's
//! audit log, read through the `Runtime` facade as typed events (so any
//! store that keeps the log can be checked), is replayed event by event and
//! every step that breaks a property of [`crate::properties`] is reported
//! with the events that make the violation. `fcd audit check` prints it.
//!
//! The check fails closed: a broken hash chain, an entry that does not read,
//! or an entry without a field a property needs (an older log) is itself a
//! violation (H0), never a pass.

use std::collections::BTreeMap;

use fcd_runtime::runtime::{AuditEvent, AuditRecord, LeaseState, Refusal, Runtime, State};
use serde::Serialize;

use crate::properties::{EPOCH_LIFECYCLE, LEASE_LIFECYCLE, property};

/// An event a violation cites.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Cited {
    pub seq: i64,
    pub event: String,
}

/// One broken property, with the events that break it (oldest first).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Violation {
    pub property: &'static str,
    pub name: &'static str,
    pub message: String,
    pub events: Vec<Cited>,
}

/// What checking a history found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Report {
    pub entries: usize,
    pub violations: Vec<Violation>,
}

impl Report {
    /// The report as text: one paragraph per violation.
    pub fn text(&self) -> String {
        let mut out = format!("audit check: {} entries, {} violations\n", self.entries, self.violations.len());
        for v in &self.violations {
            out.push_str(&format!("{} {}: {}\n", v.property, v.name, v.message));
            for c in &v.events {
                out.push_str(&format!("    seq {}: {}\n", c.seq, c.event));
            }
        }
        out
    }
}

/// Checks the audit log of `rt`: its hash chain, then every event.
pub fn check_runtime(rt: &Runtime) -> Result<Report, Refusal> {
    let chain = rt.verify_audit();
    let mut report = check(&rt.audit_events()?);
    if let Err(e) = chain {
        report.violations.insert(0, violation("H0", e.detail, Vec::new()));
    }
    Ok(report)
}

/// Checks a history given as typed events, in order.
pub fn check(records: &[AuditRecord]) -> Report {
    let mut h = History::default();
    for r in records {
        h.step(r);
    }
    Report { entries: records.len(), violations: h.violations }
}

fn violation(id: &'static str, message: String, events: Vec<Cited>) -> Violation {
    let name = if id == "H0" { "the history is whole and readable" } else { property(id).map_or("?", |p| p.name) };
    Violation { property: id, name, message, events }
}

struct Epoch {
    state: State,
    digests: Option<(String, String)>,
    /// The server's own configuration files bound at registration, if any.
    server_config: Option<String>,
    moved: Cited,
}

struct Evidence {
    source: String,
    target: String,
    window: Option<(i64, i64)>,
    revoked: Option<Cited>,
    added: Cited,
}

struct Formation {
    source: String,
    successor: Option<String>,
    evidence: Option<i64>,
    expires_at: Option<i64>,
    revoked: Option<Cited>,
    formed: Cited,
    /// The first final hop any lease of this formation passed, and that lease.
    ran: Option<(i64, Cited)>,
}

struct Lease {
    formation: i64,
    epoch: String,
    generation: Option<i64>,
    state: LeaseState,
    fenced: Option<Cited>,
    admitted: Cited,
    moved: Cited,
}

/// The history replayed so far.
#[derive(Default)]
struct History {
    epochs: BTreeMap<String, Epoch>,
    evidence: BTreeMap<i64, Evidence>,
    formations: BTreeMap<i64, Formation>,
    leases: BTreeMap<i64, Lease>,
    violations: Vec<Violation>,
}

impl History {
    fn flag(&mut self, id: &'static str, message: String, events: Vec<Cited>) {
        self.violations.push(violation(id, message, dedup(events)));
    }

    fn step(&mut self, r: &AuditRecord) {
        self.event(r.seq, &r.event);
    }

    /// One event at `seq`; the steps of an atomic entry in order, each cited at the entry's sequence number.
    fn event(&mut self, seq: i64, event: &AuditEvent) {
        let here = Cited { seq, event: format!("{event:?}") };
        match event {
            AuditEvent::Atomic { steps } => {
                if steps.is_empty() {
                    self.flag("H0", "an atomic entry with no steps".into(), vec![here]);
                }
                for step in steps {
                    self.event(seq, step);
                }
            }
            AuditEvent::AcknowledgeLostCalls { .. } => {}
            AuditEvent::RegisterEpoch { epoch, artifact, config, server_config } => {
                if !self.epochs.contains_key(epoch) {
                    let digests = artifact.clone().zip(config.clone());
                    if digests.is_none() {
                        self.flag("H0", format!("epoch {epoch} is registered without its digests: the final hop cannot be checked"), vec![here.clone()]);
                    }
                    self.epochs.insert(epoch.clone(), Epoch { state: State::Advertised, digests, server_config: server_config.clone(), moved: here });
                }
            }
            AuditEvent::Transition { epoch, from, to } => self.transition(epoch, *from, *to, here),
            AuditEvent::AddEvidence { evidence, source, target, valid_from, valid_until } => {
                let Some(id) = evidence else {
                    return self.flag("H0", "evidence recorded without its id".into(), vec![here]);
                };
                let window = valid_from.zip(*valid_until);
                let ev = Evidence { source: source.clone(), target: target.clone(), window, revoked: None, added: here };
                self.evidence.insert(*id, ev);
            }
            AuditEvent::Form { formation, source, successor, evidence, now, expires_at } => {
                let Some(id) = formation else {
                    return self.flag("H0", "a formation recorded without its id".into(), vec![here]);
                };
                self.form(source, successor.as_deref(), *evidence, *now, &here);
                let f = Formation {
                    source: source.clone(),
                    successor: successor.clone(),
                    evidence: *evidence,
                    expires_at: *expires_at,
                    revoked: None,
                    formed: here,
                    ran: None,
                };
                self.formations.insert(*id, f);
            }
            AuditEvent::Admit { formation, epoch, lease, generation, now } => self.admit(*formation, epoch, *lease, *generation, *now, here),
            AuditEvent::Completed { .. } | AuditEvent::Uncertain { .. } | AuditEvent::Resolve { .. } => {
                let Some((id, to)) = event.lease_move() else { return };
                self.move_lease(id, to, here);
            }
            AuditEvent::Revoke { handle } => self.revoke(handle, here),
            AuditEvent::Fence { lease, generation, artifact, config, server_config, now } => {
                self.fence(*lease, *generation, (artifact.as_deref(), config.as_deref(), server_config.as_deref()), here.clone());
                self.cancel(*lease, *now, here);
            }
            AuditEvent::Unreadable { reason, .. } => self.flag("H0", format!("an entry does not read: {reason}"), vec![here]),
        }
    }

    fn transition(&mut self, epoch: &str, from: State, to: State, here: Cited) {
        let Some(e) = self.epochs.get(epoch) else {
            return self.flag("H0", format!("{epoch} moves but was never registered"), vec![here]);
        };
        let before = e.moved.clone();
        if e.state == State::Stale {
            self.flag("S12", format!("{epoch} was STALE and moved to {}", to.as_str()), vec![before.clone(), here.clone()]);
        } else if e.state != from {
            self.flag(
                "S13",
                format!("{epoch} is {} in the history, the entry moves it from {}", e.state.as_str(), from.as_str()),
                vec![before.clone(), here.clone()],
            );
        } else if !EPOCH_LIFECYCLE.contains(&(from, to)) {
            self.flag(
                "S13",
                format!("{epoch} moved {} -> {}, which the lifecycle does not allow", from.as_str(), to.as_str()),
                vec![before.clone(), here.clone()],
            );
        }
        if to == State::Stale {
            let mut found = Vec::new();
            for (id, l) in &self.leases {
                if l.epoch != epoch || !l.state.open() {
                    continue;
                }
                let (property, what) = if l.state == LeaseState::Admitted { ("S5", "admitted") } else { ("S6", "uncertain") };
                let message = format!("{epoch} became STALE while lease {id} on it was {what}");
                found.push((property, message, vec![l.admitted.clone(), l.moved.clone(), here.clone()]));
            }
            for (property, message, events) in found {
                self.flag(property, message, events);
            }
        }
        if let Some(e) = self.epochs.get_mut(epoch) {
            e.state = to;
            e.moved = here;
        }
    }

    fn form(&mut self, source: &str, successor: Option<&str>, evidence: Option<i64>, now: Option<i64>, here: &Cited) {
        match self.epochs.get(source) {
            None => self.flag("S1", format!("a call was formed on {source}, which is not registered"), vec![here.clone()]),
            Some(e) if !e.state.eligible() => {
                let message = format!("a call was formed on {source} while it was {}", e.state.as_str());
                self.flag("S1", message, vec![e.moved.clone(), here.clone()]);
            }
            Some(_) => {}
        }
        let Some(target) = successor else { return };
        let Some(id) = evidence else {
            return self.flag("H0", format!("a formation captured {target} without naming its evidence"), vec![here.clone()]);
        };
        let Some(ev) = self.evidence.get(&id) else {
            return self.flag("S1", format!("a formation captured {target} through evidence {id}, which did not exist then"), vec![here.clone()]);
        };
        let mut cited = vec![ev.added.clone()];
        let problem = if ev.target != target || ev.source != source {
            Some(format!("evidence {id} is {} -> {}, the formation captured {source} -> {target}", ev.source, ev.target))
        } else if let Some(revoked) = &ev.revoked {
            cited.push(revoked.clone());
            Some(format!("evidence {id} was revoked before the formation captured it"))
        } else {
            match (ev.window, now) {
                (Some((from, until)), Some(now)) if now < from || now > until => {
                    Some(format!("evidence {id} is valid {from}..{until}, the formation captured it at {now}"))
                }
                (Some(_), Some(_)) => None,
                _ => Some(format!("the validity of evidence {id} at formation is not recorded")),
            }
        };
        if let Some(message) = problem {
            cited.push(here.clone());
            self.flag("S1", message, cited);
        }
    }

    fn admit(&mut self, formation: i64, epoch: &str, lease: Option<i64>, generation: Option<i64>, now: Option<i64>, here: Cited) {
        let Some(f) = self.formations.get(&formation) else {
            return self.flag("S2", format!("formation {formation} admitted on {epoch} was never formed"), vec![here]);
        };
        let mut found: Vec<(&'static str, String, Vec<Cited>)> = Vec::new();
        let on_successor = epoch != f.source && f.successor.as_deref() == Some(epoch);
        if epoch != f.source && !on_successor {
            found.push(("S2", format!("formation {formation} ({} -> {:?}) admitted on {epoch}", f.source, f.successor), vec![f.formed.clone(), here.clone()]));
        }
        if on_successor {
            match self.epochs.get(&f.source) {
                Some(src) if src.state == State::Stale => {}
                Some(src) => found.push((
                    "S3",
                    format!("formation {formation} fell back to {epoch} while its source {} was {}", f.source, src.state.as_str()),
                    vec![f.formed.clone(), src.moved.clone(), here.clone()],
                )),
                None => found.push(("S3", format!("formation {formation} fell back while its source is unknown"), vec![here.clone()])),
            }
        }
        match self.epochs.get(epoch) {
            Some(e) if e.state.eligible() => {}
            Some(e) => {
                found.push(("S4", format!("formation {formation} admitted on {epoch} while it was {}", e.state.as_str()), vec![e.moved.clone(), here.clone()]))
            }
            None => found.push(("S4", format!("formation {formation} admitted on {epoch}, which is not registered"), vec![here.clone()])),
        }
        if let Some(revoked) = &f.revoked {
            found.push(("S10", format!("formation {formation} admitted after it was revoked"), vec![revoked.clone(), here.clone()]));
        }
        let evidence = if on_successor { f.evidence.and_then(|id| self.evidence.get(&id).map(|ev| (id, ev))) } else { None };
        if let Some((id, ev)) = evidence
            && let Some(revoked) = &ev.revoked
        {
            found.push(("S10", format!("formation {formation} fell back on evidence {id} after it was revoked"), vec![revoked.clone(), here.clone()]));
        }
        match (now, f.expires_at) {
            (Some(now), Some(expires)) if now > expires => {
                found.push(("S11", format!("formation {formation} admitted at {now}, it expired at {expires}"), vec![f.formed.clone(), here.clone()]));
            }
            (Some(_), Some(_)) => {}
            _ => found.push((
                "H0",
                format!("the admission of formation {formation} or its formation lacks the time: expiry cannot be checked"),
                vec![here.clone()],
            )),
        }
        if let (Some((id, ev)), Some(now)) = (evidence, now)
            && let Some((_, until)) = ev.window
            && now > until
        {
            found.push((
                "S11",
                format!("formation {formation} fell back at {now} on evidence {id}, valid until {until}"),
                vec![ev.added.clone(), here.clone()],
            ));
        }
        for (id, message, events) in found {
            self.flag(id, message, events);
        }
        let Some(lease) = lease else {
            return self.flag("H0", format!("an admission of formation {formation} lacks its lease id: its final hop cannot be checked"), vec![here]);
        };
        if generation.is_none() {
            self.flag("H0", format!("lease {lease} is recorded without its generation"), vec![here.clone()]);
        }
        let l = Lease { formation, epoch: epoch.to_owned(), generation, state: LeaseState::Admitted, fenced: None, admitted: here.clone(), moved: here };
        self.leases.insert(lease, l);
    }

    fn move_lease(&mut self, id: i64, to: LeaseState, here: Cited) {
        let Some(l) = self.leases.get_mut(&id) else {
            return self.flag("S14", format!("lease {id} moved to {to} but was never admitted"), vec![here]);
        };
        let from = l.state;
        let events = vec![l.moved.clone(), here.clone()];
        l.state = to;
        l.moved = here;
        if matches!(from, LeaseState::Completed | LeaseState::Resolved) {
            self.flag("S12", format!("lease {id} was {from} and moved to {to}"), events);
        } else if !LEASE_LIFECYCLE.contains(&(from, to)) {
            self.flag("S14", format!("lease {id} moved {from} -> {to}, which the lifecycle does not allow"), events);
        }
    }

    fn revoke(&mut self, handle: &str, here: Cited) {
        let target = handle.split_once(':').and_then(|(kind, id)| Some((kind, id.parse::<i64>().ok()?)));
        let slot = match target {
            Some(("evidence", id)) => self.evidence.get_mut(&id).map(|e| &mut e.revoked),
            Some(("formation", id)) => self.formations.get_mut(&id).map(|f| &mut f.revoked),
            _ => None,
        };
        match slot {
            Some(revoked) => {
                revoked.get_or_insert(here);
            }
            None => self.flag("H0", format!("`{handle}` was revoked but never recorded"), vec![here]),
        }
    }

    /// A final hop of lease `id`; `ran` is the artifact, configuration and server configuration files it measured.
    fn fence(&mut self, id: i64, generation: Option<i64>, ran: (Option<&str>, Option<&str>, Option<&str>), here: Cited) {
        let (artifact, config, server_config) = ran;
        let Some(l) = self.leases.get(&id) else {
            return self.flag("S9", format!("the token of lease {id} passed the fence, but no such lease was admitted"), vec![here]);
        };
        let mut found: Vec<(&'static str, String, Vec<Cited>)> = Vec::new();
        if let Some(first) = &l.fenced {
            found.push(("S7", format!("the token of lease {id} passed the fence twice"), vec![first.clone(), here.clone()]));
        }
        if l.state != LeaseState::Admitted {
            found.push(("S9", format!("lease {id} ran while it was {}", l.state), vec![l.moved.clone(), here.clone()]));
        }
        let registered = self.epochs.get(&l.epoch).and_then(|e| e.digests.clone().map(|d| (d, e.moved.clone())));
        let bound_files = self.epochs.get(&l.epoch).and_then(|e| e.server_config.clone());
        match (generation, artifact, config, registered) {
            (Some(generation), Some(artifact), Some(config), Some(((want_artifact, want_config), _))) => {
                if Some(generation) != l.generation {
                    found.push((
                        "S8",
                        format!("lease {id} ran at generation {generation}, it holds {:?}", l.generation),
                        vec![l.admitted.clone(), here.clone()],
                    ));
                }
                if artifact != want_artifact || config != want_config {
                    let message = format!("lease {id} ran {artifact} / {config}, {} registered {want_artifact} / {want_config}", l.epoch);
                    found.push(("S8", message, vec![l.admitted.clone(), here.clone()]));
                }
                if server_config != bound_files.as_deref() {
                    let message = format!("lease {id} ran with server configuration files {server_config:?}, {} bound {bound_files:?}", l.epoch);
                    found.push(("S8", message, vec![l.admitted.clone(), here.clone()]));
                }
            }
            _ => found.push(("H0", format!("the final hop of lease {id} is recorded without what ran, or its epoch without digests"), vec![here.clone()])),
        }
        for (property, message, events) in found {
            self.flag(property, message, events);
        }
        if let Some(l) = self.leases.get_mut(&id) {
            l.fenced.get_or_insert(here);
        }
    }
}

impl History {
    /// S15 and S16 for a final hop of lease `id` at `now`: no other lease of
    /// its formation ran before, and the formation (and the evidence a
    /// successor lease fell back on) was neither revoked nor expired then.
    fn cancel(&mut self, id: i64, now: Option<i64>, here: Cited) {
        let Some(l) = self.leases.get(&id) else { return };
        let (formation, epoch, admitted) = (l.formation, l.epoch.clone(), l.admitted.clone());
        let Some(f) = self.formations.get(&formation) else { return };
        let mut found: Vec<(&'static str, String, Vec<Cited>)> = Vec::new();
        match &f.ran {
            Some((other, first)) if *other != id => found.push((
                "S15",
                format!("formation {formation} ran twice: lease {other}, then lease {id}"),
                vec![first.clone(), admitted.clone(), here.clone()],
            )),
            _ => {}
        }
        if let Some(revoked) = &f.revoked {
            found.push(("S16", format!("lease {id} ran after its formation {formation} was revoked"), vec![revoked.clone(), here.clone()]));
        }
        let on_successor = epoch != f.source && f.successor.as_deref() == Some(epoch.as_str());
        let evidence = if on_successor { f.evidence.and_then(|ev| self.evidence.get(&ev).map(|e| (ev, e))) } else { None };
        if let Some((ev, e)) = evidence
            && let Some(revoked) = &e.revoked
        {
            found.push(("S16", format!("lease {id} ran on {epoch} after evidence {ev} was revoked"), vec![revoked.clone(), here.clone()]));
        }
        match (now, f.expires_at) {
            (Some(now), Some(expires)) if now > expires => {
                found.push(("S16", format!("lease {id} ran at {now}, its formation {formation} expired at {expires}"), vec![f.formed.clone(), here.clone()]));
            }
            (Some(_), Some(_)) => {}
            _ => found.push(("H0", format!("the final hop of lease {id} or its formation lacks the time: expiry cannot be checked"), vec![here.clone()])),
        }
        if let (Some((ev, e)), Some(now)) = (evidence, now)
            && let Some((_, until)) = e.window
            && now > until
        {
            found.push(("S16", format!("lease {id} ran on {epoch} at {now}, evidence {ev} was valid until {until}"), vec![e.added.clone(), here.clone()]));
        }
        for (property, message, events) in found {
            self.flag(property, message, events);
        }
        if let Some(f) = self.formations.get_mut(&formation) {
            f.ran.get_or_insert((id, here));
        }
    }
}

/// Drops repeated citations (an admission that is also the lease's last move).
fn dedup(mut events: Vec<Cited>) -> Vec<Cited> {
    events.sort_by_key(|c| c.seq);
    events.dedup();
    events
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(seq: i64, entry: &str) -> AuditRecord {
        AuditRecord { seq, event: AuditEvent::parse(entry) }
    }

    #[test]
    fn an_older_log_without_the_fields_fails_closed() {
        // What the runtime wrote before the entries carried ids, times and digests.
        let history = [
            record(1, r#"{"op":"register_epoch","epoch":"e0"}"#),
            record(2, r#"{"op":"form","source":"e0","successor":null}"#),
            record(3, r#"{"op":"admit","formation":1,"epoch":"e0"}"#),
        ];
        let report = check(&history);
        assert!(!report.violations.is_empty() && report.violations.iter().all(|v| v.property == "H0" || v.property == "S2"), "{}", report.text());
        assert!(report.text().contains("without its digests") && report.text().contains("without its id"), "{}", report.text());
    }

    #[test]
    fn a_whole_history_passes() {
        let history = [
            record(1, r#"{"op":"register_epoch","epoch":"e0","artifact":"a","config":"c"}"#),
            record(2, r#"{"op":"form","formation":1,"source":"e0","successor":null,"evidence":null,"now":5,"expires_at":10}"#),
            record(3, r#"{"op":"admit","formation":1,"epoch":"e0","lease":1,"generation":1,"now":6}"#),
            record(4, r#"{"op":"fence","lease":1,"generation":1,"artifact":"a","config":"c","now":7}"#),
            record(5, r#"{"op":"completed","lease":1}"#),
            record(6, r#"{"op":"transition","epoch":"e0","from":"ADVERTISED","to":"DRAINING"}"#),
            record(7, r#"{"op":"transition","epoch":"e0","from":"DRAINING","to":"STALE"}"#),
        ];
        let report = check(&history);
        assert!(report.violations.is_empty(), "{}", report.text());
        assert_eq!(report.entries, 7);
    }
}
