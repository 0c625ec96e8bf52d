//! The runtime on a real 3-member etcd cluster under faults, each with a
//! workload of clients forming, admitting, fencing and completing calls: a member
//! killed (work goes on, nothing is lost), two members stopped (quorum lost:
//! every admission is refused, none granted), a member paused (SIGSTOP) past
//! its election timeout, and an `fcd` process killed between a lease's
//! admission and its completion (the lease stays admitted, then uncertain,
//! never silently completed). Each test ends with the invariant checks of the
//! property tests over the whole history, and the audit chain.

use fcd_testkit::{etcd, invariants, tools};

use std::collections::BTreeMap;
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use ed25519_dalek::{Signer, SigningKey};
use fcd_model::refusal::RefusalCode;
use fcd_runtime::runtime::{LeaseState, Runtime, State, StoreSpec};

const FCD: &str = env!("CARGO_BIN_EXE_fcd");
const SOURCE: &str = "v14";
const SUCCESSOR: &str = "v13";

/// One fault at a time: elections under a loaded machine are what is tested, not the machine.
static SERIAL: Mutex<()> = Mutex::new(());

fn now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs()
}

/// A cluster with the runtime's records under `prefix`, or `None` (said why) where etcd is missing.
fn world(test: &str) -> Option<(etcd::Cluster, StoreSpec, i64, SigningKey)> {
    if !tools::tools_or_skip(test, etcd::available()) {
        return None;
    }
    let cluster = etcd::Cluster::start().unwrap_or_else(|e| panic!("{test}: {e}"));
    let spec = StoreSpec::parse(&cluster.store("faults")).unwrap();
    let mut rt = Runtime::open_store(&spec).unwrap();
    let resolver = SigningKey::from_bytes(&[9u8; 32]);
    rt.set_resolver(&resolver.verifying_key()).unwrap();
    rt.register_epoch(SOURCE, "create_repository", "sha256:a14", "sha256:c14", "sha256:s14").unwrap();
    rt.register_epoch(SUCCESSOR, "create_repository", "sha256:a13", "sha256:c13", "sha256:s13").unwrap();
    let cert = rt.add_unverified_certificate("create_repository", "sha256:args", "user:alice", SOURCE, SUCCESSOR, 0, u64::MAX / 4).unwrap();
    let formation = rt.form("snap", "create_repository", "sha256:args", "user:alice", SOURCE, Some(cert), now(), 3600).unwrap();
    Some((cluster, spec, formation, resolver))
}

/// What one admission attempt of the workload came to.
#[derive(Debug, Clone)]
struct Attempt {
    started: Instant,
    ended: Instant,
    /// The call the attempt formed (each attempt forms its own: a formed call is admitted at most once).
    formation: Option<i64>,
    /// The lease granted, whether its token passed the fence and whether it completed; or the refusal.
    outcome: Result<(i64, bool, bool), RefusalCode>,
}

/// Clients forming, admitting, fencing and completing until `stop`, each with its own connection;
/// `grants` counts the admissions granted so far, for a fault that waits on the work.
fn workload(spec: &StoreSpec, clients: usize, stop: &AtomicBool, grants: &AtomicUsize) -> Vec<Attempt> {
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..clients)
            .map(|_| {
                s.spawn(|| {
                    let mut rt = Runtime::open_store(spec).unwrap();
                    let mut attempts = Vec::new();
                    while !stop.load(Ordering::Relaxed) {
                        let started = Instant::now();
                        let formed = rt.form("snap", "create_repository", "sha256:args", "user:carol", SOURCE, None, now(), 3600);
                        let formation = formed.as_ref().ok().copied();
                        let outcome = match formed.and_then(|f| rt.admit(f, now())) {
                            Ok(lease) => {
                                grants.fetch_add(1, Ordering::Relaxed);
                                let fenced = rt.fence(&lease.token, "sha256:a14", "sha256:c14", lease.generation, now()).is_ok();
                                let completed = fenced && rt.complete(lease.id).is_ok();
                                Ok((lease.id, fenced, completed))
                            }
                            Err(r) => Err(r.code),
                        };
                        if outcome.is_err() {
                            // A refused client backs off a little, as a gateway would.
                            std::thread::sleep(Duration::from_millis(20));
                        }
                        attempts.push(Attempt { started, ended: Instant::now(), formation, outcome });
                    }
                    attempts
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().unwrap()).collect()
    })
}

/// The clients of every workload.
const CLIENTS: usize = 4;

/// Runs the workload while `fault` acts on the cluster (given the count of grants so far); returns the attempts.
fn with_workload(cluster: &mut etcd::Cluster, spec: &StoreSpec, fault: impl FnOnce(&mut etcd::Cluster, &AtomicUsize)) -> Vec<Attempt> {
    let stop = AtomicBool::new(false);
    let grants = AtomicUsize::new(0);
    std::thread::scope(|s| {
        let work = s.spawn(|| workload(spec, CLIENTS, &stop, &grants));
        std::thread::sleep(Duration::from_millis(800));
        fault(cluster, &grants);
        stop.store(true, Ordering::Relaxed);
        work.join().unwrap()
    })
}

/// Keeps a fault on (on a loaded machine an election and the clients' failover are slow) until
/// more admissions were granted since `before` was read (just after it began) than there are
/// clients, so at least one was started after it began (each client has one attempt at a time); gives up 30 s after `since`, and the test's count then fails it.
fn wait_for_work(grants: &AtomicUsize, before: usize, since: Instant) {
    while grants.load(Ordering::Relaxed) - before <= CLIENTS && since.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn granted(attempts: &[Attempt], from: Instant, to: Instant) -> usize {
    attempts.iter().filter(|a| a.started >= from && a.started < to && a.outcome.is_ok()).count()
}

/// The checks every fault test ends with, over the whole history: nothing
/// granted was lost, no lease was granted twice, a lease no client was given
/// is still admitted (never silently completed); then every open lease is
/// settled by the resolver, the source retires, the successor admits, and
/// the invariants and the audit chain hold.
fn check_history(spec: &StoreSpec, formations: &[i64], resolver: &SigningKey, attempts: &[Attempt]) {
    let mut rt = Runtime::open_store(spec).unwrap();
    let formation = formations[0];
    let stored: BTreeMap<i64, fcd_runtime::runtime::LeaseRow> = rt.leases().unwrap().into_iter().map(|l| (l.id, l)).collect();
    let mut given = BTreeMap::new();
    let mut model = invariants::Model::default();
    for f in formations.iter().chain(attempts.iter().filter_map(|a| a.formation.as_ref())) {
        model.formations.push((*f, rt.authority(*f).unwrap().unwrap()));
    }
    assert_eq!(model.formations[0].1, (SOURCE.to_owned(), Some(SUCCESSOR.to_owned())));
    for (lease, fenced, completed) in attempts.iter().filter_map(|a| a.outcome.ok()) {
        assert!(given.insert(lease, ()).is_none(), "lease {lease} was granted twice");
        let row = stored.get(&lease).unwrap_or_else(|| panic!("lease {lease} was granted and is not in the store"));
        if fenced {
            *model.fenced.entry(lease).or_default() += 1;
            assert!(row.used, "lease {lease} passed the fence and the store forgot it");
        }
        if completed {
            assert_eq!(row.state, LeaseState::Completed, "lease {lease} completed and the store says otherwise");
        }
    }
    for row in stored.values().filter(|l| !given.contains_key(&l.id)) {
        // Admitted by a transaction whose answer never reached its client: no token was given, so it never ran.
        assert!(row.state == LeaseState::Admitted && !row.used, "lease {} no client was given is {:?}", row.id, row);
    }
    invariants::check_invariants(&rt, &model, &[SOURCE, SUCCESSOR]).unwrap();

    if rt.state(SOURCE).unwrap() != Some(State::Draining) {
        rt.transition(SOURCE, State::Draining).unwrap();
    }
    for row in rt.leases().unwrap().into_iter().filter(|l| l.state == LeaseState::Admitted) {
        assert_eq!(rt.transition(SOURCE, State::Stale).unwrap_err().code, RefusalCode::LeasesOutstanding);
        rt.mark_uncertain(row.id).unwrap();
        let signature = resolver.sign(fcd_runtime::runtime::resolution_message(row.id, "not-run").as_bytes());
        rt.resolve(row.id, "not-run", &signature.to_bytes()).unwrap();
    }
    rt.transition(SOURCE, State::Stale).unwrap();
    assert_eq!(rt.admit(formation, now()).unwrap().epoch, SUCCESSOR);
    invariants::check_invariants(&rt, &model, &[SOURCE, SUCCESSOR]).unwrap();
    invariants::check_audit(&rt).unwrap();
}

#[test]
fn a_killed_member_loses_nothing_and_work_goes_on() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let Some((mut cluster, spec, formation, resolver)) = world("a_killed_member_loses_nothing_and_work_goes_on") else { return };
    let mut window = (Instant::now(), Instant::now());
    let attempts = with_workload(&mut cluster, &spec, |cluster, grants| {
        let victim = cluster.leader().unwrap_or(0);
        cluster.kill(victim);
        window.0 = Instant::now();
        let before = grants.load(Ordering::Relaxed);
        std::thread::sleep(Duration::from_secs(3));
        wait_for_work(grants, before, window.0);
        window.1 = Instant::now();
        cluster.restart(victim).unwrap();
        cluster.wait_healthy(&[0, 1, 2], Duration::from_secs(30)).unwrap();
        std::thread::sleep(Duration::from_millis(500));
    });
    let during = granted(&attempts, window.0, window.1);
    assert!(during > 0, "no admission was granted while one member was down: {attempts:?}");
    eprintln!("one member killed: {} attempts, {during} granted while it was down", attempts.len());
    check_history(&spec, &[formation], &resolver, &attempts);
}

#[test]
fn quorum_lost_refuses_every_admission_and_grants_none() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let Some((mut cluster, spec, formation, resolver)) = world("quorum_lost_refuses_every_admission_and_grants_none") else { return };
    let mut window = (Instant::now(), Instant::now());
    let attempts = with_workload(&mut cluster, &spec, |cluster, _| {
        cluster.kill(1);
        cluster.kill(2);
        window.0 = Instant::now();
        std::thread::sleep(Duration::from_secs(4));
        window.1 = Instant::now();
        cluster.restart(1).unwrap();
        cluster.restart(2).unwrap();
        cluster.wait_healthy(&[0, 1, 2], Duration::from_secs(30)).unwrap();
        std::thread::sleep(Duration::from_secs(1));
    });
    // Every attempt made and answered while two members were down (one still waiting for an
    // answer when they came back may be granted then: that is after recovery).
    let outage: Vec<&Attempt> = attempts.iter().filter(|a| a.started >= window.0 && a.ended < window.1).collect();
    assert!(!outage.is_empty(), "the workload made no attempt during the outage");
    for a in &outage {
        assert_eq!(a.outcome.err(), Some(RefusalCode::Storage), "an admission without quorum was not refused: {a:?}");
    }
    let after = granted(&attempts, window.1, Instant::now());
    assert!(after > 0, "no admission was granted after the quorum came back");
    eprintln!("quorum lost: {} attempts refused during the outage, {after} granted after recovery", outage.len());
    check_history(&spec, &[formation], &resolver, &attempts);
}

#[test]
fn a_member_paused_past_its_election_timeout_stalls_nothing_for_good() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let Some((mut cluster, spec, formation, resolver)) = world("a_member_paused_past_its_election_timeout_stalls_nothing_for_good") else { return };
    let mut window = (Instant::now(), Instant::now());
    let attempts = with_workload(&mut cluster, &spec, |cluster, grants| {
        let victim = cluster.leader().unwrap_or(0);
        cluster.pause(victim);
        window.0 = Instant::now();
        let before = grants.load(Ordering::Relaxed);
        std::thread::sleep(Duration::from_millis(6 * etcd::ELECTION_TIMEOUT_MS));
        wait_for_work(grants, before, window.0);
        window.1 = Instant::now();
        cluster.resume(victim);
        cluster.wait_healthy(&[0, 1, 2], Duration::from_secs(30)).unwrap();
        std::thread::sleep(Duration::from_secs(1));
    });
    let during = granted(&attempts, window.0, window.1);
    assert!(during > 0, "no admission was granted while the leader was paused");
    assert!(granted(&attempts, window.1, Instant::now()) > 0, "no admission was granted after the member resumed");
    eprintln!("leader paused: {} attempts, {during} granted during the pause", attempts.len());
    check_history(&spec, &[formation], &resolver, &attempts);
}

#[test]
fn an_fcd_process_killed_between_admission_and_completion_leaves_its_lease_admitted() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let test = "an_fcd_process_killed_between_admission_and_completion_leaves_its_lease_admitted";
    let Some((mut cluster, spec, formation, resolver)) = world(test) else { return };
    // The gateway process gets a formation of its own, so its lease is known by it.
    let mut rt = Runtime::open_store(&spec).unwrap();
    let own = rt.form("snap-2", "create_repository", "sha256:args", "user:bob", SOURCE, None, now(), 3600).unwrap();
    let store = spec.to_string();
    let mut killed = None;
    let attempts = with_workload(&mut cluster, &spec, |_, _| {
        let mut child = Command::new(FCD)
            .args(["runtime", "stress", "--formation", &own.to_string(), "--count", "1", "--hold-ms", "60000", "--store", &store])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let start = Instant::now();
        while killed.is_none() && start.elapsed() < Duration::from_secs(20) {
            killed = rt.leases().unwrap().into_iter().find(|l| l.formation == own && l.used);
            std::thread::sleep(Duration::from_millis(20));
        }
        child.kill().unwrap();
        child.wait().unwrap();
        std::thread::sleep(Duration::from_millis(300));
    });
    let lease = killed.expect("the gateway process never passed the fence");
    let row = rt.leases().unwrap().into_iter().find(|l| l.id == lease.id).unwrap();
    assert_eq!(row.state, LeaseState::Admitted, "the killed process's lease was completed by no one: {row:?}");
    // Marked uncertain, it keeps the source DRAINING until a signed resolution.
    rt.transition(SOURCE, State::Draining).unwrap();
    let uncertain = Command::new(FCD).args(["runtime", "uncertain", "--lease", &lease.id.to_string(), "--store", &store]).output().unwrap();
    assert!(uncertain.status.success(), "{}", String::from_utf8_lossy(&uncertain.stderr));
    assert_eq!(rt.transition(SOURCE, State::Stale).unwrap_err().code, RefusalCode::LeasesOutstanding);
    let signature = resolver.sign(fcd_runtime::runtime::resolution_message(lease.id, "ran").as_bytes());
    rt.resolve(lease.id, "ran", &signature.to_bytes()).unwrap();
    // The kill is part of the history the checks read: its lease passed the fence once.
    let mut all = attempts;
    all.push(Attempt { started: Instant::now(), ended: Instant::now(), formation: None, outcome: Ok((lease.id, true, false)) });
    assert_eq!(rt.complete(lease.id).unwrap_err().code, RefusalCode::BadTransition, "a resolved lease does not complete");
    check_history(&spec, &[formation, own], &resolver, &all);
}
