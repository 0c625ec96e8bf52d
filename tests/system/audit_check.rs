//! `fcd audit check`: it passes on a history the runtime recorded, and fails,
//! naming the property and the events, on hand-edited copies of it, one
//! edit per safety property (each re-chained, as a careful forger would, so
//! the hash chain alone does not catch it), and on a broken chain.

use std::path::Path;
use std::process::Command;

use ed25519_dalek::{Signer, SigningKey};
use fcd_model::canon;
use fcd_runtime::runtime::{EvidenceKind, Runtime, State};
use serde_json::{Value, json};

const FCD: &str = env!("CARGO_BIN_EXE_fcd");

/// A history with every kind of event: a source run, a retry after an
/// uncertain outcome, a drain and retirement, a fallback, a revocation.
fn record(db: &Path) {
    let mut rt = Runtime::open(db).unwrap();
    let resolver = SigningKey::from_bytes(&[5u8; 32]);
    rt.set_resolver(&resolver.verifying_key()).unwrap();
    for e in ["e0", "e1", "e2"] {
        rt.register_epoch(e, "tool", &format!("sha256:a-{e}"), &format!("sha256:c-{e}"), "sha256:s").unwrap();
    }
    let ev = rt.add_evidence(EvidenceKind::Edge, "tool", None, "e0", "e1", 0, 5_000).unwrap();
    let f1 = rt.form("snap", "tool", "args-1", "user:alice", "e0", Some(ev), 100, 900).unwrap();
    let f2 = rt.form("snap", "tool", "args-2", "user:alice", "e0", None, 100, 900).unwrap();
    let f3 = rt.form("snap", "tool", "args-3", "user:alice", "e0", Some(ev), 100, 900).unwrap();
    let run = |rt: &mut Runtime, f: i64, now: u64| {
        let lease = rt.admit(f, now).unwrap();
        rt.fence(&lease.token, &format!("sha256:a-{}", lease.epoch), &format!("sha256:c-{}", lease.epoch), lease.generation, now).unwrap();
        lease
    };
    let first = run(&mut rt, f1, 110);
    rt.complete(first.id).unwrap();
    let second = run(&mut rt, f2, 120);
    rt.mark_uncertain(second.id).unwrap();
    let sig = resolver.sign(fcd_runtime::runtime::resolution_message(second.id, "completed").as_bytes());
    rt.resolve(second.id, "completed", &sig.to_bytes()).unwrap();
    rt.transition("e0", State::Draining).unwrap();
    rt.transition("e0", State::Stale).unwrap();
    // f1 ran once (lease 1), so only f3 may still fall back.
    assert_eq!(rt.admit(f1, 130).unwrap_err().code, "formation_in_flight");
    let fallback = run(&mut rt, f3, 130);
    assert_eq!(fallback.epoch, "e1");
    rt.complete(fallback.id).unwrap();
    rt.revoke(&format!("formation:{f2}")).unwrap();
}

fn check(db: &Path) -> (i32, String, Value) {
    let text = Command::new(FCD).args(["audit", "check", "--store"]).arg(db).output().unwrap();
    let json = Command::new(FCD).args(["audit", "check", "--format", "json", "--store"]).arg(db).output().unwrap();
    assert_eq!(text.status.code(), json.status.code());
    let report = serde_json::from_slice(&json.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&json.stdout)));
    (text.status.code().unwrap(), String::from_utf8_lossy(&text.stdout).into_owned(), report)
}

fn entries(db: &Path) -> Vec<Value> {
    let conn = rusqlite::Connection::open(db).unwrap();
    let mut stmt = conn.prepare("SELECT entry FROM audit ORDER BY seq").unwrap();
    stmt.query_map([], |r| r.get::<_, String>(0)).unwrap().map(|e| serde_json::from_str(&e.unwrap()).unwrap()).collect()
}

/// Rewrites the audit log as `entries`, with a valid hash chain.
fn rewrite(db: &Path, entries: &[Value]) {
    let conn = rusqlite::Connection::open(db).unwrap();
    conn.execute("DELETE FROM audit", []).unwrap();
    let mut prev = String::new();
    for e in entries {
        let text = String::from_utf8(canon::to_canonical(e)).unwrap();
        let hash = canon::sha256(format!("{prev}\n{text}").as_bytes());
        conn.execute("INSERT INTO audit (entry, prev, hash) VALUES (?1, ?2, ?3)", rusqlite::params![text, prev, hash]).unwrap();
        prev = hash;
    }
}

/// The position of the `n`th (from 0) entry matching `op` and the given fields.
fn find(entries: &[Value], op: &str, fields: &[(&str, Value)], n: usize) -> usize {
    entries
        .iter()
        .enumerate()
        .filter(|(_, e)| e["op"] == op && fields.iter().all(|(k, v)| &e[*k] == v))
        .nth(n)
        .unwrap_or_else(|| panic!("no {op} {fields:?} #{n} in {entries:#?}"))
        .0
}

#[test]
fn a_recorded_history_passes() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("runtime.sqlite");
    record(&db);
    let (code, text, report) = check(&db);
    assert_eq!(code, 0, "{text}");
    assert!(text.starts_with("audit check: 20 entries, 0 violations"), "{text}");
    assert_eq!(report["violations"], json!([]));
}

#[test]
fn a_missing_store_is_an_input_error() {
    let out = Command::new(FCD).args(["audit", "check", "--store", "/nonexistent/runtime.sqlite"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no runtime store"));
}

type Edit = fn(&mut Vec<Value>);

/// One hand edit per safety property: the property it must be reported under.
fn edits() -> Vec<(&'static str, &'static str, Edit)> {
    vec![
        ("S1", "a formation captures an epoch its evidence does not name", |h| {
            let i = find(h, "form", &[("formation", json!(1))], 0);
            h[i]["successor"] = json!("e2");
        }),
        ("S2", "a lease runs outside its formation's authority", |h| {
            let i = find(h, "admit", &[("lease", json!(1))], 0);
            h[i]["epoch"] = json!("e2");
        }),
        ("S3", "a fallback before the source is STALE", |h| {
            let i = find(h, "admit", &[("lease", json!(1))], 0);
            h[i]["epoch"] = json!("e1");
        }),
        ("S4", "an admission after the drain began", |h| {
            let drain = find(h, "transition", &[("to", json!("DRAINING"))], 0);
            let entry = h.remove(drain);
            let admit = find(h, "admit", &[("lease", json!(2))], 0);
            h.insert(admit, entry);
        }),
        ("S5", "retirement with an admitted lease (its completion dropped)", |h| {
            let i = find(h, "completed", &[("lease", json!(1))], 0);
            h.remove(i);
        }),
        ("S6", "retirement with an uncertain lease (its resolution dropped)", |h| {
            let i = find(h, "resolve", &[("lease", json!(2))], 0);
            h.remove(i);
        }),
        ("S7", "a token passes the fence twice", |h| {
            let i = find(h, "fence", &[("lease", json!(1))], 0);
            let again = h[i].clone();
            h.insert(i + 1, again);
        }),
        ("S8", "a final hop runs another artifact", |h| {
            let i = find(h, "fence", &[("lease", json!(3))], 0);
            h[i]["artifact"] = json!("sha256:a-e0");
        }),
        ("S9", "a lease runs after it completed", |h| {
            let fence = find(h, "fence", &[("lease", json!(1))], 0);
            let entry = h.remove(fence);
            let done = find(h, "completed", &[("lease", json!(1))], 0);
            h.insert(done + 1, entry);
        }),
        ("S10", "an admission after the formation was revoked", |h| {
            let i = find(h, "admit", &[("lease", json!(3))], 0);
            h.insert(i, json!({"op": "revoke", "handle": "formation:3"}));
        }),
        ("S11", "an admission after the formation expired", |h| {
            let i = find(h, "admit", &[("lease", json!(2))], 0);
            h[i]["now"] = json!(5_000);
        }),
        ("S12", "a STALE epoch advertised again", |h| {
            h.push(json!({"op": "transition", "epoch": "e0", "from": "STALE", "to": "ADVERTISED"}));
        }),
        ("S13", "an epoch retired without draining", |h| {
            let i = find(h, "transition", &[("epoch", json!("e0")), ("to", json!("DRAINING"))], 0);
            h.remove(i);
            let j = find(h, "transition", &[("epoch", json!("e0")), ("to", json!("STALE"))], 0);
            h[j]["from"] = json!("ADVERTISED");
        }),
        ("S14", "an uncertain lease reported completed", |h| {
            let i = find(h, "resolve", &[("lease", json!(2))], 0);
            h[i] = json!({"op": "completed", "lease": 2});
        }),
        ("S15", "a formation's call runs twice (its fallback admitted for the formation that already ran)", |h| {
            let i = find(h, "admit", &[("lease", json!(3))], 0);
            h[i]["formation"] = json!(1);
        }),
        ("S16", "a final hop after the formation was revoked", |h| {
            let i = find(h, "fence", &[("lease", json!(3))], 0);
            h.insert(i, json!({"op": "revoke", "handle": "formation:3"}));
        }),
        ("S16", "a final hop after the formation expired", |h| {
            let i = find(h, "fence", &[("lease", json!(2))], 0);
            h[i]["now"] = json!(5_000);
        }),
        ("S16", "a fallback's final hop after its evidence was revoked", |h| {
            let i = find(h, "fence", &[("lease", json!(3))], 0);
            h.insert(i, json!({"op": "revoke", "handle": "evidence:1"}));
        }),
        ("H0", "an entry that is no known event", |h| {
            h.push(json!({"op": "teleport", "lease": 1}));
        }),
    ]
}

#[test]
fn hand_edited_histories_fail_naming_the_property_and_the_events() {
    let dir = tempfile::tempdir().unwrap();
    let original = dir.path().join("original.sqlite");
    record(&original);
    let recorded = entries(&original);
    for (property, what, edit) in edits() {
        let db = dir.path().join(format!("{property}-{}.sqlite", what.len()));
        std::fs::copy(&original, &db).unwrap();
        let mut history = recorded.clone();
        edit(&mut history);
        rewrite(&db, &history);
        let (code, text, report) = check(&db);
        assert_eq!(code, 1, "{property} ({what}) passed:\n{text}");
        let violations = report["violations"].as_array().unwrap();
        let named: Vec<&Value> = violations.iter().filter(|v| v["property"] == property).collect();
        assert!(!named.is_empty(), "{property} ({what}) is not reported:\n{text}");
        for v in &named {
            assert!(!v["events"].as_array().unwrap().is_empty(), "{property}: no events named:\n{text}");
            assert!(text.contains(&format!("{property} {}", v["name"].as_str().unwrap())), "{text}");
        }
        // Nothing else is blamed for an edit the history allows otherwise, beyond the edit's own consequences.
        assert!(!violations.iter().any(|v| v["property"] == "H0") || property == "H0", "{property}: the edit reads as damage:\n{text}");
        eprintln!("{property} ({what}):\n{text}");
    }
}

#[test]
fn a_broken_chain_fails_even_when_every_event_is_fine() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("runtime.sqlite");
    record(&db);
    // Change one entry's text without re-chaining: the edit itself is harmless, the chain is not.
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute("UPDATE audit SET entry = replace(entry, '\"outcome\":\"completed\"', '\"outcome\":\"failed\"') WHERE entry LIKE '%resolve%'", []).unwrap();
    drop(conn);
    let (code, text, _) = check(&db);
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("H0 the history is whole and readable") && text.contains("does not follow"), "{text}");
}
