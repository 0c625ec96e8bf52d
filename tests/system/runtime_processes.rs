//! The runtime across operating-system processes: several `fcd runtime`
//! processes (the stand-ins for gateway processes) admitting while another
//! drains and retires, on one SQLite file and on one etcd cluster; and a
//! process killed in the middle of an admission. They drive the CLI's hidden
//! test hooks, which only a test build has.

use fcd_testkit::{etcd, invariants, tools};

use std::process::{Command, Stdio};

use fcd_runtime::runtime::{Runtime, StoreSpec};

const FCD: &str = env!("CARGO_BIN_EXE_fcd");

/// `fcd runtime ARGS --store STORE`, its JSON output.
fn fcd(store: &str, args: &[&str]) -> serde_json::Value {
    let out = Command::new(FCD).arg("runtime").args(args).args(["--store", store]).output().expect("fcd runs");
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {} {}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)))
}

fn open(store: &str) -> Runtime {
    Runtime::open_store(&StoreSpec::parse(store).unwrap()).unwrap()
}

/// Forms `n` calls, each capturing the successor v13; returns their ids.
fn setup(store: &str, n: usize) -> Vec<i64> {
    let mut rt = open(store);
    rt.register_epoch("v14", "create_repository", "sha256:a14", "sha256:c14", "sha256:s14").unwrap();
    rt.register_epoch("v13", "create_repository", "sha256:a13", "sha256:c13", "sha256:s13").unwrap();
    let cert = rt.add_unverified_certificate("create_repository", "sha256:args", "user:alice", "v14", "v13", 0, u64::MAX / 4).unwrap();
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    (0..n).map(|i| rt.form(&format!("snap-{i}"), "create_repository", "sha256:args", "user:alice", "v14", Some(cert), now, 3600).unwrap()).collect()
}

/// Schedules: each run starts 4 admitting processes and one that drains and
/// retires the source while they run; the OS interleaves them differently every time.
const SCHEDULES: usize = 6;
/// Formations each schedule forms; every process goes through all of them
/// [`PASSES`] times, as agents that ask again: a formation refused while the
/// source drained is admitted on the successor on a later pass.
const FORMATIONS: usize = 240;
const PASSES: &str = "3";

#[test]
fn concurrent_admission_and_retirement_keep_every_lease_in_its_authority() {
    race(|_schedule| {
        let dir = tempfile::tempdir().unwrap();
        let store = format!("sqlite:{}", dir.path().join("runtime.sqlite").display());
        (store, Some(dir))
    });
}

#[test]
fn concurrent_admission_and_retirement_on_etcd_keep_every_lease_in_its_authority() {
    let test = "concurrent_admission_and_retirement_on_etcd_keep_every_lease_in_its_authority";
    if !tools::tools_or_skip(test, etcd::available()) {
        return;
    }
    let cluster = etcd::Cluster::start().unwrap_or_else(|e| panic!("{test}: {e}"));
    race(|schedule| (cluster.store(&format!("race-{schedule}")), None));
}

/// Runs every schedule on a fresh store from `store` (its spelling, and what keeps it alive).
fn race(store: impl Fn(usize) -> (String, Option<tempfile::TempDir>)) {
    let (mut on_source, mut on_successor, mut refused) = (0, 0, 0);
    for schedule in 0..SCHEDULES {
        let (db, _guard) = store(schedule);
        let db = db.as_str();
        let formations = setup(db, FORMATIONS);
        let workers: Vec<_> = (0..4)
            .map(|w| {
                // Two processes go through the formations in the same order (racing for each one),
                // the other two from the middle: every formation is contended, in different ways.
                let mut order = formations.clone();
                order.rotate_left(if w < 2 { 0 } else { FORMATIONS / 2 });
                let args: Vec<String> = order.iter().flat_map(|f| ["--formation".to_owned(), f.to_string()]).collect();
                Command::new(FCD)
                    .args(["runtime", "stress"])
                    .args(&args)
                    // A lease held a millisecond between its fence pass and completion keeps
                    // the workers busy past the drain even on a loaded machine, so that both
                    // sides of the retirement see work.
                    .args(["--count", PASSES, "--hold-ms", "1", "--store", db])
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        std::thread::sleep(std::time::Duration::from_millis(5 * schedule as u64));
        let drained = fcd(db, &["transition", "--epoch", "v14", "--to", "drain"]);
        assert_eq!(drained["state"], "DRAINING", "{drained}");
        // Retire once every admitted lease completed: retry while leases are open.
        let mut retired = false;
        for _ in 0..2_000 {
            let r = fcd(db, &["transition", "--epoch", "v14", "--to", "retire"]);
            if r["state"] == "STALE" {
                retired = true;
                break;
            }
            assert_eq!(r["refused"], "leases_outstanding", "{r}");
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        let mut reported = Vec::new();
        for w in workers {
            let out = w.wait_with_output().unwrap();
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
            let results: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
            reported.extend(results);
        }
        assert!(retired, "schedule {schedule}: the source never became STALE");

        let rt = open(db);
        let leases = rt.leases().unwrap();
        let (drain_seq, stale_seq) = rt.lifecycle_seqs("v14").unwrap();
        let (drain_seq, stale_seq) = (drain_seq.unwrap(), stale_seq.unwrap());
        // No lease lost: every lease a worker was given exists, passed the fence once and completed.
        let given: Vec<i64> = reported.iter().filter_map(|r| r["lease"].as_i64()).collect();
        assert_eq!(given.len(), leases.len(), "schedule {schedule}: leases given {} vs stored {}", given.len(), leases.len());
        for r in reported.iter().filter(|r| r["lease"].is_i64()) {
            assert_eq!(r["fenced"], true, "{r}");
            assert_eq!(r["completed"], true, "{r}");
        }
        for l in &leases {
            assert!(l.used && l.state == "completed", "{l:?}");
            match l.epoch.as_str() {
                // On the source only before the drain began; on the successor only after the source was stale.
                "v14" => assert!(l.admitted_seq < drain_seq, "schedule {schedule}: {l:?} admitted on the source after the drain"),
                "v13" => assert!(l.admitted_seq > stale_seq, "schedule {schedule}: {l:?} on the successor before the source was stale"),
                other => panic!("lease on {other}, outside the formation's authority"),
            }
        }
        // At most one effect per formation (S15): however the processes raced, each formation has at most one lease.
        for f in &formations {
            let of_f: Vec<_> = leases.iter().filter(|l| l.formation == *f).collect();
            assert!(of_f.len() <= 1, "schedule {schedule}: formation {f} has leases {of_f:?}");
        }
        // Every refusal was one the lifecycle explains.
        for r in reported.iter().filter_map(|r| r["refused"].as_str()) {
            assert!(r == "source_draining" || r == "formation_in_flight", "schedule {schedule}: unexpected refusal {r}");
            refused += 1;
        }
        on_source += leases.iter().filter(|l| l.epoch == "v14").count();
        on_successor += leases.iter().filter(|l| l.epoch == "v13").count();
        let mut model = invariants::Model::default();
        model.formations.extend(formations.iter().map(|f| (*f, (String::from("v14"), Some(String::from("v13"))))));
        model.fenced = leases.iter().map(|l| (l.id, 1)).collect();
        invariants::check_invariants(&rt, &model, &["v14", "v13"]).unwrap();
        invariants::check_audit(&rt).unwrap();
    }
    // The schedules really raced: work ran on both sides of the retirement.
    assert!(on_source > 0 && on_successor > 0, "source {on_source}, successor {on_successor}, refused {refused}");
    eprintln!(
        "{SCHEDULES} schedules: {on_source} leases on the source, {on_successor} on the successor, {refused} refused (draining, or the formation in flight)"
    );
}

#[test]
fn a_process_killed_inside_an_admission_leaves_a_consistent_database() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("runtime.sqlite");
    let formation = setup(&format!("sqlite:{}", db.display()), 1)[0].to_string();
    let mut child =
        Command::new(FCD).args(["runtime", "admit", "--formation", &formation, "--stall-ms", "5000", "--db"]).arg(&db).stdout(Stdio::piped()).spawn().unwrap();
    // Wait until the admission holds the write lock, then kill the process mid-transaction.
    let mut waited = 0;
    loop {
        std::thread::sleep(std::time::Duration::from_millis(20));
        waited += 20;
        let busy = rusqlite::Connection::open(&db)
            .and_then(|c| {
                c.busy_timeout(std::time::Duration::from_millis(0))?;
                c.execute_batch("BEGIN IMMEDIATE; ROLLBACK;")
            })
            .is_err();
        if busy || waited > 4_000 {
            break;
        }
    }
    child.kill().unwrap();
    let _ = child.wait();

    let conn = rusqlite::Connection::open(&db).unwrap();
    let check: String = conn.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
    assert_eq!(check, "ok");
    drop(conn);
    let mut rt = Runtime::open(&db).unwrap();
    assert!(rt.leases().unwrap().is_empty(), "the killed admission left a lease behind");
    assert!(rt.verify_audit().is_ok());
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    let lease = rt.admit(formation.parse().unwrap(), now).unwrap();
    assert_eq!(lease.epoch, "v14");
    // `fcd audit check` on what the killed run left: every safety property of docs/lifecycle.md holds.
    let out = Command::new(FCD).args(["audit", "check", "--store"]).arg(&db).output().expect("fcd runs");
    assert!(out.status.success(), "{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
}

#[test]
fn only_test_builds_carry_the_test_hooks() {
    // The hooks this file drives come from the root crate's dev-dependencies; the
    // normal dependency graph (what `cargo build --release` compiles) has none.
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let tree = |edges: &str| {
        let out = Command::new(&cargo)
            .args(["tree", "--offline", "-p", "fcd", "-e", edges, "-i", "fcd-runtime"])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .expect("cargo tree runs");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let normal = tree("features,normal");
    assert!(normal.contains("fcd-runtime feature \"default\"") && !normal.contains("test-hooks"), "{normal}");
    assert!(tree("features").contains("fcd-runtime feature \"test-hooks\""), "the check reads the feature graph");
}

#[test]
fn the_store_is_named_by_db_or_store_and_an_unreachable_one_refuses() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("runtime.sqlite");
    let run = |args: &[&str]| Command::new(FCD).arg("runtime").args(args).output().unwrap();
    let (registry, e0) = crate::fcd_cli::admitted_epoch(dir.path());
    let register = ["register-epoch", "--registry", registry.to_str().unwrap(), "--epoch", &e0];
    // The old spelling and the new one open the same file.
    let old = run(&[&register[..], &["--db", db.to_str().unwrap()]].concat());
    assert!(old.status.success(), "{}", String::from_utf8_lossy(&old.stderr));
    let store = format!("sqlite:{}", db.display());
    let form = ["form", "--snapshot", "s", "--tool", "git_diff", "--args-digest", "a", "--principal", "p", "--source", &e0, "--store", &store];
    let formed: serde_json::Value = serde_json::from_slice(&run(&form).stdout).unwrap();
    assert_eq!(formed["formation"], 1, "{formed}");
    // Both at once, neither, or a store that is not one: a usage error (exit 2) that says why.
    let both = run(&["complete", "--lease", "1", "--db", db.to_str().unwrap(), "--store", &store]);
    assert_eq!(both.status.code(), Some(2));
    assert_eq!(run(&["complete", "--lease", "1"]).status.code(), Some(2));
    let bad = run(&["complete", "--lease", "1", "--store", "postgres://db"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("sqlite:FILE or etcd:"), "{}", String::from_utf8_lossy(&bad.stderr));
    // A cluster nobody answers for: an error, never an admission (nothing listens on port 1).
    let unreachable = run(&["admit", "--formation", "1", "--store", "etcd:127.0.0.1:1"]);
    assert_eq!(unreachable.status.code(), Some(2), "{}", String::from_utf8_lossy(&unreachable.stdout));
    assert!(unreachable.stdout.is_empty() && String::from_utf8_lossy(&unreachable.stderr).contains("etcd"), "{}", String::from_utf8_lossy(&unreachable.stderr));
}

/// Issue 28, point 3, through the CLI: `--store etcd:https://…&ca=…&cert=…&key=…&user=…&password-file=…`
/// reaches a TLS cluster as a user whose role covers only the store's prefix;
/// `fcd runtime` decides there and `fcd audit check` reads the log. The
/// certificate without the user, or the user on another prefix, is refused
/// (exit 2, saying why), and so is a password written in the store's name.
#[test]
fn fcd_reaches_a_tls_cluster_as_a_user_confined_to_its_prefix() {
    let test = "fcd_reaches_a_tls_cluster_as_a_user_confined_to_its_prefix";
    if !tools::tools_or_skip(test, etcd::available()) {
        return;
    }
    let cluster = etcd::Cluster::start_tls().unwrap_or_else(|e| panic!("{test}: {e}"));
    let password = cluster.enable_auth("/gw/", "gateway", "gw-pass-3", "root-pass-5").unwrap();
    let cert_only = cluster.store("gw");
    let store = format!("{cert_only}&user=gateway&password-file={}", password.display());
    let dir = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| Command::new(FCD).args(args).output().unwrap();
    let (registry, e0) = crate::fcd_cli::admitted_epoch(dir.path());
    let registered = run(&["runtime", "register-epoch", "--registry", registry.to_str().unwrap(), "--epoch", &e0, "--store", &store]);
    assert!(registered.status.success(), "{}", String::from_utf8_lossy(&registered.stderr));
    let form = ["runtime", "form", "--snapshot", "s", "--tool", "git_diff", "--args-digest", "a", "--principal", "p", "--source", &e0, "--store", &store];
    let formed: serde_json::Value = serde_json::from_slice(&run(&form).stdout).unwrap();
    assert!(formed["formation"].as_i64().is_some_and(|id| id > 0), "{formed}");
    let checked = run(&["audit", "check", "--store", &store]);
    assert_eq!(checked.status.code(), Some(0), "{}{}", String::from_utf8_lossy(&checked.stdout), String::from_utf8_lossy(&checked.stderr));
    for (bad, why) in [
        (cert_only.clone(), "permission denied"),
        (store.replace("prefix=/gw/", "prefix=/other/"), "permission denied"),
        (format!("{cert_only}&user=gateway&password=gw-pass-3"), "password-file"),
    ] {
        let out = run(&["audit", "check", "--store", &bad]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{bad}: {stderr}");
        assert!(stderr.contains(why), "{bad}: {stderr}");
    }
}
