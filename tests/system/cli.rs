//! The `fcd` command end to end, each step in its own process: register,
//! regenerate, certify, keygen, verify-cert, and the refusals of bad or
//! altered input.

use crate::fcd_cli;

use std::path::{Path, PathBuf};

use serde_json::Value;

use fcd_cli::{Run, copy_tree, fcd, root, s};

/// The release root of a declared mutation of `profiles/PROFILE/tests/mutations.toml`.
fn mutation(profile: &str, name: &str) -> fcd::profile_test::Root {
    let cases = fcd::profile_test::load_cases(&root().join("profiles").join(profile)).unwrap();
    let case = cases.iter().find(|c| c.name == name).unwrap_or_else(|| panic!("{profile} declares no case {name}"));
    case.root().unwrap()
}

/// The canonical call, env and contract of git-diff as files in `dir`.
fn canonical_inputs(dir: &Path, call: &str) -> (PathBuf, PathBuf, PathBuf) {
    let text = std::fs::read_to_string(root().join("profiles/git-diff/canonical.json")).unwrap();
    let c: Value = serde_json::from_str(&text).unwrap();
    let call_path = dir.join(format!("call-{call}.json"));
    let env_path = dir.join("env.json");
    let contract_path = dir.join("contract.json");
    let call_json = serde_json::json!({"tool": c["tool"], "arguments": c["calls"][call]["arguments"]});
    std::fs::write(&call_path, call_json.to_string()).unwrap();
    std::fs::write(&env_path, c["env"].to_string()).unwrap();
    std::fs::write(&contract_path, c["contract"].to_string()).unwrap();
    (call_path, env_path, contract_path)
}

fn register(dir: &Path, regime: &str) -> PathBuf {
    let out = dir.join(format!("{regime}.summary.json"));
    let source = root().join("fixtures/git-diff").join(regime);
    let r = fcd(&["register", "--profile", "profiles/git-diff", "--source", s(&source), "--out", s(&out), "--format", "json"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert_eq!(r.json()["status"], "registered");
    out
}

#[test]
fn register_writes_canonical_summary_and_json_contract() {
    let tmp = tempfile::tempdir().unwrap();
    let summary = register(tmp.path(), "guarded");
    let bytes = std::fs::read(&summary).unwrap();
    let value: Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(serde_json_canonicalizer::to_vec(&value).unwrap(), bytes, "the summary file is canonical JSON");
    let r = fcd(&["register", "--profile", "profiles/git-diff", "--source", "fixtures/git-diff/guarded", "--format", "json"]);
    let j = r.json();
    assert_eq!(j["summary_digest"], value["summary_digest"], "same inputs, same summary");
    assert_eq!(j["profile"], "git-diff");
    assert_eq!(j["facts"].as_array().unwrap().len(), 3);
}

#[test]
fn regenerate_in_second_process_matches() {
    let tmp = tempfile::tempdir().unwrap();
    for regime in ["unguarded", "guarded"] {
        let summary = register(tmp.path(), regime);
        let source = root().join("fixtures/git-diff").join(regime);
        let r = fcd(&["regenerate", "--summary", s(&summary), "--source", s(&source), "--profile", "profiles/git-diff", "--format", "json"]);
        assert_eq!(r.code, 0, "{}", r.stdout);
        assert_eq!(r.json()["status"], "match");
    }
}

#[test]
fn one_byte_changes_are_detected() {
    let tmp = tempfile::tempdir().unwrap();
    let summary = register(tmp.path(), "guarded");

    // Source: one byte of the handler file.
    let source = tmp.path().join("src");
    copy_tree(&root().join("fixtures/git-diff/guarded"), &source);
    let file = source.join("mcp_server_git/server.py");
    let mut bytes = std::fs::read(&file).unwrap();
    let i = bytes.iter().position(|&b| b == b'3').unwrap();
    bytes[i] = b'4';
    std::fs::write(&file, &bytes).unwrap();
    let r = fcd(&["regenerate", "--summary", s(&summary), "--source", s(&source), "--profile", "profiles/git-diff", "--format", "json"]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    let differing: Vec<String> = r.json()["differing"].as_array().unwrap().iter().map(|d| d["digest"].as_str().unwrap().to_owned()).collect();
    assert!(differing.contains(&"source".to_owned()), "{differing:?}");

    // Profile: one byte of a comment.
    let profile = tmp.path().join("git-diff");
    copy_tree(&root().join("profiles/git-diff"), &profile);
    let toml = profile.join("profile.toml");
    let text = std::fs::read_to_string(&toml).unwrap().replacen("# Reviewed", "# reviewed", 1);
    std::fs::write(&toml, text).unwrap();
    let r = fcd(&["regenerate", "--summary", s(&summary), "--source", "fixtures/git-diff/guarded", "--profile", s(&profile), "--format", "json"]);
    assert_eq!(r.code, 1);
    assert_eq!(r.json()["differing"][0]["digest"], "profile");

    // Summary: one byte of a fact's line number.
    let text = std::fs::read_to_string(&summary).unwrap();
    let altered = tmp.path().join("altered.json");
    std::fs::write(&altered, text.replacen("\"line\":1", "\"line\":2", 1)).unwrap();
    let r = fcd(&["regenerate", "--summary", s(&altered), "--source", "fixtures/git-diff/guarded", "--profile", "profiles/git-diff"]);
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("altered.json") && r.stderr.contains("summary_digest"), "{}", r.stderr);
}

#[test]
fn certify_signs_only_safe_calls_and_verify_cert_checks_everything() {
    let tmp = tempfile::tempdir().unwrap();
    let summary = register(tmp.path(), "guarded");
    let key = tmp.path().join("issuer");
    let r = fcd(&["keygen", "--out", s(&key)]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let pubkey = tmp.path().join("issuer.pub");
    assert!(pubkey.exists());
    assert_eq!(fcd(&["keygen", "--out", s(&key)]).code, 2, "keygen never overwrites");

    let (call, env, contract) = canonical_inputs(tmp.path(), "A");
    let cert = tmp.path().join("a.cert.json");
    let now = "1900000000";
    // Certifies `call` with the issuer key into `out`; `more` adds flags.
    let sign = |call: &Path, out: &Path, more: &[&str]| {
        let base = ["certify", "--summary", s(&summary), "--call", s(call), "--env", s(&env), "--contract", s(&contract)];
        let signed = ["--key", s(&key), "--out", s(out), "--format", "json"];
        fcd(&[&base[..], &signed[..], more].concat())
    };
    let r = sign(&call, &cert, &["--now", now]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let j = r.json();
    assert_eq!(j["decision"], "safe");
    assert_eq!(j["certificate"]["payloadType"], "application/vnd.in-toto+json");

    let verify = |cert: &Path, key: &Path, now: &str| fcd(&["verify-cert", "--cert", s(cert), "--pubkey", s(key), "--now", now, "--format", "json"]);
    let ok = verify(&cert, &pubkey, "1900000100");
    assert_eq!(ok.code, 0, "{}", ok.stdout);
    let statement = &ok.json()["statement"];
    assert_eq!(statement["_type"], "https://in-toto.io/Statement/v1");
    assert_eq!(statement["predicate"]["principal"], "user:alice");

    // Expired, not yet valid.
    assert_eq!(verify(&cert, &pubkey, "1900000301").code, 1);
    assert_eq!(verify(&cert, &pubkey, "1899999999").code, 1);

    // Any altered byte: flip each of a spread of positions.
    let bytes = std::fs::read(&cert).unwrap();
    for i in (0..bytes.len() - 1).step_by(bytes.len() / 40) {
        let mut altered = bytes.clone();
        altered[i] ^= 0x01;
        let path = tmp.path().join("altered.cert.json");
        std::fs::write(&path, &altered).unwrap();
        let r = verify(&path, &pubkey, "1900000100");
        assert_ne!(r.code, 0, "flipping byte {i} went unnoticed");
    }

    // The longest validity still gives a certificate that verifies (beyond
    // 2^53 − 1, RFC 8785 would write `valid_until` as a float no verifier reads).
    let forever = tmp.path().join("forever.cert.json");
    let r = sign(&call, &forever, &["--now", now, "--valid-for", &u64::MAX.to_string()]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let ok = verify(&forever, &pubkey, "1900000100");
    assert_eq!(ok.code, 0, "{}", ok.stdout);
    assert_eq!(ok.json()["statement"]["predicate"]["valid_until"], fcd_verify::certificate::MAX_VALID_UNTIL);

    // A wrong key.
    let other = tmp.path().join("other");
    fcd(&["keygen", "--out", s(&other)]);
    let r = verify(&cert, &tmp.path().join("other.pub"), "1900000100");
    assert_eq!(r.code, 1);
    assert!(r.json()["reason"].as_str().unwrap().contains("no signature"));

    // An unsafe call gets no certificate, even with a key.
    let (call_b, _, _) = canonical_inputs(tmp.path(), "B");
    let out_b = tmp.path().join("b.cert.json");
    let r = sign(&call_b, &out_b, &[]);
    assert_eq!(r.code, 1);
    assert_eq!(r.json()["decision"], "reject");
    assert!(r.json()["certificate"].is_null());
    assert!(!out_b.exists());
}

#[test]
fn canonical_decisions_hold_through_the_cli() {
    let tmp = tempfile::tempdir().unwrap();
    let canonical: Value = serde_json::from_str(&std::fs::read_to_string(root().join("profiles/git-diff/canonical.json")).unwrap()).unwrap();
    for regime in ["unguarded", "guarded"] {
        let summary = register(tmp.path(), regime);
        for name in ["A", "B", "C"] {
            let (call, env, contract) = canonical_inputs(tmp.path(), name);
            let r = fcd(&["certify", "--summary", s(&summary), "--call", s(&call), "--env", s(&env), "--contract", s(&contract), "--format", "json"]);
            let expected = &canonical["calls"][name]["expect"][regime];
            assert_eq!(&r.json()["decision"], expected, "call {name} on {regime}");
            assert_eq!(r.code, if expected == "safe" { 0 } else { 1 });
        }
    }
}

#[test]
fn escalation_exits_3_and_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("s.json");
    let tree = mutation("git-diff", "04_added_filesystem_call");
    let r = fcd(&["register", "--profile", "profiles/git-diff", "--source", s(&tree.path), "--out", s(&out), "--format", "json"]);
    assert_eq!(r.code, 3);
    let j = r.json();
    assert_eq!(j["status"], "escalated");
    assert_eq!(j["reason"]["code"], "inventory_violation");
    assert_eq!(j["reason"]["anchor"]["file"], "mcp_server_git/server.py");
    assert_eq!(j["reason"]["anchor"]["line"], 18);
    assert!(!out.exists());
}

fn assert_input_error(r: &Run, names: &[&str]) {
    assert_eq!(r.code, 2, "stdout: {} stderr: {}", r.stdout, r.stderr);
    for n in names {
        assert!(r.stderr.contains(n), "`{n}` missing from: {}", r.stderr);
    }
    assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
}

#[test]
fn bad_profiles_name_file_line_and_key() {
    let tmp = tempfile::tempdir().unwrap();
    let good = std::fs::read_to_string(root().join("profiles/git-diff/profile.toml")).unwrap();
    let cases: [(&str, String, &[&str]); 5] = [
        ("malformed", good.replacen("[source]", "[source", 1), &["malformed.toml:29:8:", "unclosed table"]),
        (
            "unknown-key",
            good.replacen("required = true\n\n[facts.dash_guard]", "required = true\nrequierd = true\n\n[facts.dash_guard]", 1),
            &["unknown-key.toml:", "requierd"],
        ),
        ("wrong-type", good.replacen("version = 1", "version = \"one\"", 1), &["wrong-type.toml:6:"]),
        (
            "dangling-region",
            good.replacen("region = \"handler\"\ncallee", "region = \"handlr\"\ncallee", 1),
            &["dangling-region.toml:", "facts.sink.region", "handlr"],
        ),
        ("dangling-fact", good.replacen("requires = [\"dash_guard\"]", "requires = [\"dash_gaurd\"]", 1), &["dangling-fact.toml:", "rules[0]", "dash_gaurd"]),
    ];
    for (name, text, expect) in cases {
        assert_ne!(text, good, "{name}: the mutation applied");
        let path = tmp.path().join(format!("{name}.toml"));
        std::fs::write(&path, text).unwrap();
        let r = fcd(&["register", "--profile", s(&path), "--source", "fixtures/git-diff/guarded"]);
        assert_input_error(&r, expect);
    }
}

#[test]
fn bad_inputs_are_refused_with_exit_2() {
    let tmp = tempfile::tempdir().unwrap();
    let summary = register(tmp.path(), "guarded");
    let (call, env, contract) = canonical_inputs(tmp.path(), "A");

    let r = fcd(&["register", "--profile", "profiles/git-diff", "--source", "no/such/dir"]);
    assert_input_error(&r, &["no/such/dir", "not a directory"]);

    let wrong = tmp.path().join("wrong-type.json");
    std::fs::write(&wrong, "{\"tool\": \"git_diff\",\n \"arguments\": {\"repo_path\": \"/srv/repo\",\n  \"target\": 5}}").unwrap();
    let r = fcd(&["certify", "--summary", s(&summary), "--call", s(&wrong), "--env", s(&env), "--contract", s(&contract)]);
    assert_input_error(&r, &["wrong-type.json:3", "`target` must be string"]);

    let extra = tmp.path().join("extra.json");
    std::fs::write(&extra, r#"{"tool": "git_diff", "arguments": {"repo_path": "/srv/repo", "target": "main", "force": true}}"#).unwrap();
    let r = fcd(&["certify", "--summary", s(&summary), "--call", s(&extra), "--env", s(&env), "--contract", s(&contract)]);
    assert_input_error(&r, &["extra.json", "`force` is not in the tool's input schema"]);

    let broken = tmp.path().join("broken.json");
    std::fs::write(&broken, "{\"tool\": \"git_diff\",\n \"arguments\": {").unwrap();
    let r = fcd(&["certify", "--summary", s(&summary), "--call", s(&broken), "--env", s(&env), "--contract", s(&contract)]);
    assert_input_error(&r, &["broken.json:2"]);

    let r = fcd(&["certify", "--summary", s(&summary), "--call", s(&call), "--env", s(&env), "--contract", "missing.json"]);
    assert_input_error(&r, &["missing.json", "cannot read"]);

    let bad_contract = tmp.path().join("bad-contract.json");
    std::fs::write(
        &bad_contract,
        r#"{"principal": "user:alice", "allow": [], "destinations": [], "resources": [], "max_exposure": "secret", "mutation": false, "write_scopes": []}"#,
    )
    .unwrap();
    let r = fcd(&["certify", "--summary", s(&summary), "--call", s(&call), "--env", s(&env), "--contract", s(&bad_contract)]);
    assert_input_error(&r, &["bad-contract.json:1", "secret"]);

    let not_a_cert = tmp.path().join("not-a-cert.json");
    std::fs::write(&not_a_cert, [0xff, 0xfe, 0x00]).unwrap();
    let key = tmp.path().join("k");
    fcd(&["keygen", "--out", s(&key)]);
    let r = fcd(&["verify-cert", "--cert", s(&not_a_cert), "--pubkey", s(&tmp.path().join("k.pub"))]);
    assert_eq!(r.code, 1, "an unreadable certificate is refused: {}", r.stdout);

    let r = fcd(&["verify-cert", "--cert", s(&not_a_cert), "--pubkey", s(&not_a_cert)]);
    assert_input_error(&r, &["not-a-cert.json", "not UTF-8"]);

    let r = fcd(&["certify", "--summary"]);
    assert_eq!(r.code, 2, "usage errors exit 2");
}

#[test]
fn demo_runs_the_whole_path() {
    let r = fcd(&["demo", "--format", "json"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let j = r.json();
    assert_eq!(j["all_expected"], true);
    assert_eq!(j["decisions"].as_array().unwrap().len(), 6);
}

#[test]
fn registered_configuration_binds_the_summary() {
    let tmp = tempfile::tempdir().unwrap();
    let config = tmp.path().join("config.json");
    std::fs::write(&config, r#"{"readonly": true}"#).unwrap();
    let summary = tmp.path().join("s.json");
    let r = fcd(&["register", "--profile", "profiles/git-diff", "--source", "fixtures/git-diff/guarded", "--config", s(&config), "--out", s(&summary)]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let (call, env, contract) = canonical_inputs(tmp.path(), "A");
    // The canonical env carries an empty config: not the registered one.
    let r = fcd(&["certify", "--summary", s(&summary), "--call", s(&call), "--env", s(&env), "--contract", s(&contract), "--format", "json"]);
    assert_eq!(r.code, 1);
    assert_eq!(r.json()["decision"], "unknown");
    let env_ok = tmp.path().join("env-ok.json");
    std::fs::write(&env_ok, r#"{"principal": "user:alice", "destination": "local:/srv/repo", "config": {"readonly": true}}"#).unwrap();
    let r = fcd(&["certify", "--summary", s(&summary), "--call", s(&call), "--env", s(&env_ok), "--contract", s(&contract), "--format", "json"]);
    assert_eq!(r.json()["decision"], "safe");
    // Regenerating without the configuration names the config digest.
    let r = fcd(&["regenerate", "--summary", s(&summary), "--source", "fixtures/git-diff/guarded", "--profile", "profiles/git-diff", "--format", "json"]);
    assert_eq!(r.code, 1);
    assert_eq!(r.json()["differing"][0]["digest"], "config");
}

#[test]
fn debug_tree_shows_the_frontends_view() {
    let r = fcd(&["debug", "tree", "fixtures/git-diff/guarded/mcp_server_git/server.py"]);
    assert_eq!(r.code, 0);
    assert!(r.stdout.contains("(function_definition [18:1]"), "{}", r.stdout);
    let tree = mutation("git-diff", "17_parse_error");
    let r = fcd(&["debug", "tree", s(&tree.path.join("mcp_server_git/server.py"))]);
    assert_input_error(&r, &["server.py", "parse_error"]);
    // The language comes from the extension unless --lang says otherwise.
    let r = fcd(&["debug", "tree", "fixtures/github-create-repository/default-false/pkg/github/params.go"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.starts_with("(source_file"), "{}", r.stdout);
    let r = fcd(&["debug", "tree", "README.md"]);
    assert_input_error(&r, &["README.md", "give --lang"]);
}

#[test]
fn an_oversized_source_file_escalates_with_its_name() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("mcp_server_git");
    std::fs::create_dir_all(&dir).unwrap();
    let mut text = String::from("def git_diff(repo, target):\n    return repo.git.diff(target)\n");
    text.push_str(&"#".repeat(9 * 1024 * 1024));
    std::fs::write(dir.join("server.py"), text).unwrap();
    let r = fcd(&["register", "--profile", "profiles/git-diff", "--source", s(tmp.path()), "--format", "json"]);
    assert_eq!(r.code, 3, "{}{}", r.stdout, r.stderr);
    let j = r.json();
    assert_eq!(j["reason"]["code"], "parse_error");
    assert_eq!(j["reason"]["anchor"]["file"], "mcp_server_git/server.py");
    assert!(j["reason"]["detail"].as_str().unwrap().contains("bytes"));
}

#[test]
fn registry_admits_regenerated_summaries_and_refuses_edits() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("registry.sqlite");
    let summary_path = register(tmp.path(), "guarded");
    let summary = fcd_model::summary::Summary::load(&summary_path).unwrap();
    let mut registry = fcd_runtime::registry::Registry::open(&db).unwrap();

    // Evidence that does not reproduce the summary is refused.
    let wrong = fcd_runtime::registry::Regeneration { process: 1, summary_digest: "sha256:00".into() };
    assert!(registry.admit(&summary, &wrong).is_err());
    let evidence = fcd_runtime::registry::Regeneration { process: 42, summary_digest: summary.summary_digest.clone() };
    let id = registry.admit(&summary, &evidence).unwrap();
    drop(registry);

    let r = fcd(&["registry", "verify", "--db", s(&db), "--format", "json"]);
    assert_eq!(r.code, 0, "{}", r.stdout);
    assert_eq!(r.json()["epochs"], 1);
    let r = fcd(&["registry", "list", "--db", s(&db), "--format", "json"]);
    assert_eq!(r.json()[0]["epoch_id"], id);
    assert_eq!(r.json()[0]["regenerated_by"], 42);
    let r = fcd(&["registry", "show", "--db", s(&db), "no-such-release"]);
    assert_eq!(r.code, 2, "an unknown epoch is an input error: {}", r.stderr);
    let r = fcd(&["registry", "show", "--db", s(&db), "guarded"]);
    assert_eq!(r.json()["summary"]["summary_digest"], summary.summary_digest.as_str());
    let r = fcd(&["registry", "show", "--db", s(&db), &id]);
    assert_eq!(r.json()["manifest"]["tool"], "git_diff");

    // Edit the stored summary after admission: verify refuses it.
    let conn = rusqlite::Connection::open(&db).unwrap();
    let bytes: Vec<u8> = conn.query_row("SELECT bytes FROM summaries", [], |r| r.get(0)).unwrap();
    let edited = String::from_utf8(bytes).unwrap().replacen("\"reject\":\"dash_target\"", "\"reject\":\"dash_targe\"", 1);
    conn.execute("UPDATE summaries SET bytes = ?1", [edited.as_bytes()]).unwrap();
    drop(conn);
    let r = fcd(&["registry", "verify", "--db", s(&db)]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(r.stdout.contains("altered"), "{}", r.stdout);
}

#[test]
fn certify_takes_a_call_straight_from_canonical_json() {
    let tmp = tempfile::tempdir().unwrap();
    let summary = register(tmp.path(), "guarded");
    let canonical: Value = serde_json::from_str(&std::fs::read_to_string(root().join("profiles/git-diff/canonical.json")).unwrap()).unwrap();
    // The same call split out by hand, as before --canonical.
    let (call, contract, env) = (tmp.path().join("call.json"), tmp.path().join("contract.json"), tmp.path().join("env.json"));
    let call_a = serde_json::json!({"tool": canonical["tool"], "arguments": canonical["calls"]["A"]["arguments"]});
    std::fs::write(&call, call_a.to_string()).unwrap();
    std::fs::write(&contract, canonical["contract"].to_string()).unwrap();
    std::fs::write(&env, canonical["env"].to_string()).unwrap();
    let by_hand = fcd(&["certify", "--summary", s(&summary), "--call", s(&call), "--contract", s(&contract), "--env", s(&env), "--format", "json"]);
    let direct = fcd(&["certify", "--summary", s(&summary), "--canonical", "profiles/git-diff/canonical.json", "--call-id", "A", "--format", "json"]);
    assert_eq!(direct.code, by_hand.code, "{}", direct.stderr);
    assert_eq!(direct.json(), by_hand.json());

    let key = tmp.path().join("key");
    assert_eq!(fcd(&["keygen", "--out", s(&key)]).code, 0);
    let text = fcd(&[
        "certify",
        "--summary",
        s(&summary),
        "--canonical",
        "profiles/git-diff/canonical.json",
        "--call-id",
        "A",
        "--key",
        s(&key),
        "--now",
        "1796118876",
    ]);
    assert_eq!(text.code, 0, "{}", text.stderr);
    assert!(text.stdout.contains("valid from 2026-12-01T09:54:36Z until 2026-12-01T09:59:36Z"), "{}", text.stdout);

    let unknown = fcd(&["certify", "--summary", s(&summary), "--canonical", "profiles/git-diff/canonical.json", "--call-id", "Z"]);
    assert_eq!(unknown.code, 2);
    assert!(unknown.stderr.contains("--call-id `Z` names no canonical call (calls: A, B, C)"), "{}", unknown.stderr);
    let neither = fcd(&["certify", "--summary", s(&summary), "--contract", s(&contract)]);
    assert_eq!(neither.code, 2, "{}", neither.stderr);
}

#[test]
fn debug_region_shows_identities_inventory_and_facts() {
    let r = fcd(&["debug", "region", "--profile", "profiles/git-diff", "--source", "fixtures/git-diff/guarded"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    for line in [
        "region handler at mcp_server_git/server.py:",
        "  ok  git.Repo.git.diff ",
        "  [inventory.handler]\n  callees = [\"git.Repo.git.diff\", \"git.Repo.rev_parse\", \"git.exc.BadName\", \"str.startswith\"]",
        "region confine: absent (optional)",
        "  sink (call in handler, required)\n    candidates: call sites resolving to `git.Repo.git.diff`: mcp_server_git/server.py:",
    ] {
        assert!(r.stdout.contains(line), "`{line}` in:\n{}", r.stdout);
    }
    // Another shape: its regions are missing and its new callee is flagged, each on its own.
    let r =
        fcd(&["debug", "region", "--profile", "profiles/git-diff", "--source", "fixtures/git-diff/guarded", "--shape", "flag-error", "--region", "handler"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("  NEW git.exc.BadName "), "{}", r.stdout);
    assert!(!r.stdout.contains("region route"), "--region shows one region: {}", r.stdout);
    // A region's body digest, as a `body` fact lists it (issue 30: authors read it here, not from an escalation).
    let r = fcd(&[
        "debug",
        "region",
        "--profile",
        "profiles/git-diff",
        "--source",
        "fixtures/git-diff/flag-error",
        "--shape",
        "flag-error",
        "--region",
        "flag_error",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let listed = "sha256:64edf084ec5f9a4ee2a85bb15daead815ddbccccc9bd5e65b06ad77f0a522522";
    assert!(std::fs::read_to_string("profiles/git-diff/profile.toml").unwrap().contains(listed), "the profile lists the fixture's digest");
    assert!(r.stdout.contains(&format!("  body digest {listed} ")), "{}", r.stdout);
    let r = fcd(&["debug", "region", "--profile", "profiles/git-diff", "--source", "fixtures/git-diff/guarded", "--region", "nope"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("no region `nope` (regions: confine, handler, route)"), "{}", r.stderr);
}

#[test]
fn debug_region_lists_the_release_code_the_regions_call_and_prints_what_a_pin_binds() {
    let args = ["debug", "region", "--profile", "profiles/dbhub-execute-sql", "--source", "fixtures/dbhub-execute-sql/ts-legacy-split"];
    let r = fcd(&args);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let listed = "sha256:9bf8074121fe490e8e60c45845ebc7b9de1720ac536ca57d92fd721a5f672842";
    assert!(std::fs::read_to_string("profiles/dbhub-execute-sql/profile.toml").unwrap().contains(listed), "the profile pins the fixture's closure");
    for line in [
        "\nrelease code the regions call that no region reads (`--closure NAME` prints what it reaches)\n",
        "  splitSQLStatements (region all_statements at src/tools/execute-sql.ts:24): splitSQLStatements: pinned (`source.pinned-functions`), digest listed\n",
        &format!("    reaches 1 definition, digest {listed} (what `source.pinned-functions` lists)\n"),
    ] {
        assert!(r.stdout.contains(line), "`{line}` in:\n{}", r.stdout);
    }
    // The text that digest binds, for a reviewer: each definition with its file and lines.
    let r = fcd(&[&args[..], &["--closure", "splitSQLStatements"]].concat());
    assert_eq!(r.code, 0, "{}", r.stderr);
    let fixture = std::fs::read_to_string("fixtures/dbhub-execute-sql/ts-legacy-split/src/tools/execute-sql.ts").unwrap();
    let body: String = fixture.lines().skip(18).take(3).map(|l| format!("{l}\n")).collect();
    assert!(body.starts_with("function splitSQLStatements("), "{body}");
    assert_eq!(
        r.stdout,
        format!("// `splitSQLStatements` reaches 1 definition, digest {listed}\n\n// splitSQLStatements: src/tools/execute-sql.ts:19-21\n{body}")
    );
    let r = fcd(&[&args[..], &["--closure", "nope"]].concat());
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("no region calls release code `nope` that no region reads (such callees here: splitSQLStatements)"), "{}", r.stderr);
}

#[test]
fn debug_region_prints_what_a_go_pin_binds_in_another_package() {
    // Go: a name of the module's other packages, spelled DIR.Name, and the
    // closure its digest binds: its definition and the helper it calls.
    let args = ["debug", "region", "--profile", "profiles/github-create-repository", "--source", "fixtures/github-create-repository/default-true"];
    let listed = "sha256:b8a35689111e401275f8560692f029b08cec323f28512be2d00628b7dacfe9a0";
    assert!(std::fs::read_to_string("profiles/github-create-repository/profile.toml").unwrap().contains(listed), "the profile pins the fixture's closure");
    let r = fcd(&args);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains(": utils.NewToolResultError: pinned (`source.pinned-functions`), digest listed\n"), "{}", r.stdout);
    assert!(r.stdout.contains(&format!("    reaches 2 definitions, digest {listed} (what `source.pinned-functions` lists)\n")), "{}", r.stdout);
    let r = fcd(&[&args[..], &["--closure", "pkg/utils.NewToolResultError"]].concat());
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.starts_with(&format!("// `pkg/utils.NewToolResultError` reaches 2 definitions, digest {listed}\n")), "{}", r.stdout);
    for line in ["// pkg/utils.NewToolResultError: pkg/utils/result.go:", "// pkg/utils.textResult: pkg/utils/result.go:7-10\nfunc textResult("] {
        assert!(r.stdout.contains(line), "`{line}` in:\n{}", r.stdout);
    }
}

#[test]
fn debug_tree_picks_the_grammar_from_the_extension() {
    let tmp = tempfile::tempdir().unwrap();
    let ts = tmp.path().join("m.ts");
    std::fs::write(&ts, "function f(x: number): void {\n  g(x);\n}\n").unwrap();
    let r = fcd(&["debug", "tree", s(&ts)]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("type_annotation"), "parsed as TypeScript: {}", r.stdout);
    let py = tmp.path().join("m.py");
    std::fs::write(&py, "def f(x):\n    g(x)\n").unwrap();
    assert!(fcd(&["debug", "tree", s(&py)]).stdout.contains("function_definition"));
}

#[test]
fn profile_init_writes_a_starting_profile_that_loads() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("git-diff-start");
    let init = || {
        fcd(&["profile", "init", "--lang", "python", "--source", "fixtures/git-diff/guarded", "--function", "git_diff", "--tool", "git_diff", "--out", s(&dir)])
    };
    let r = init();
    assert_eq!(r.code, 0, "{}", r.stderr);
    let profile = fcd_compiler::profile::Profile::load(&dir).expect("the starting profile loads");
    assert_eq!(profile.id, "git-diff-start");
    assert_eq!(profile.files, ["**/mcp_server_git/server.py"]);
    let inventory = &profile.inventories["handler"];
    for callee in ["git.Repo.git.diff", "git.Repo.rev_parse", "str.startswith"] {
        assert!(inventory.contains(callee), "{inventory:?}");
    }
    // It certifies nothing until its rules are written.
    assert!(matches!(profile.rules[0].rule.then, fcd_model::rules::Outcome::Unknown(_)));
    // Each callee is proposed as the sink, commented, with the source line of its call: the arguments to write as patterns.
    let text = std::fs::read_to_string(dir.join("profile.toml")).unwrap();
    // Its arguments are the patterns the frontend reads the call with (an f-string is `any`).
    let sink = "# facts.sink = { kind = \"call\", region = \"handler\", callee = \"git.Repo.git.diff\", args = [\"any\", \"param:target\"], required = true }\n#   at mcp_server_git/server.py:";
    assert!(text.contains(sink) && text.contains("repo.git.diff("), "{text}");
    // Every call site of a callee is proposed (up to three): git_add's sink is its second call of git.add.
    let add = fcd(&["profile", "init", "--lang", "python", "--source", "fixtures/git-add/cli", "--function", "git_add", "--tool", "git_add"]);
    assert_eq!(add.code, 0, "{}", add.stderr);
    for args in ["args = [\"str:.\"]", "args = [\"str:--\", \"*param:files\"]"] {
        assert!(add.stdout.contains(&format!("callee = \"git.Repo.git.add\", {args}, required = true }}")), "{args}: {}", add.stdout);
    }
    // A call whose arguments no guess reads (keywords, here) stays TODO.
    let route = fcd(&["profile", "init", "--lang", "python", "--source", "fixtures/git-add/cli", "--tool", "git_add"]);
    assert!(route.stdout.contains("callee = \"mcp.types.TextContent\", args = [\"TODO\"]"), "{}", route.stdout);
    let again = init();
    assert_eq!(again.code, 2, "an existing profile is never overwritten");
    let missing = fcd(&["profile", "init", "--lang", "python", "--source", "fixtures/git-diff/guarded", "--function", "no_such", "--tool", "x"]);
    assert_eq!(missing.code, 2);
    assert!(missing.stderr.contains("no_such"), "{}", missing.stderr);
}

/// `fcd profile init` for one language, source, function and tool, printing the profile.
fn init(lang: &str, source: &str, function: &str, tool: &str) -> Run {
    fcd(&["profile", "init", "--lang", lang, "--source", source, "--function", function, "--tool", tool])
}

#[test]
fn profile_init_reads_each_language() {
    // Go: the file's imports become [imports], so the package callees resolve.
    let r = init("go", "fixtures/github-create-repository/default-false", "CreateRepository", "create_repository");
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("[imports]\n") && r.stdout.contains("\"github.Ptr\""), "{}", r.stdout);
    // C#: a closure check escalates, so the identities come from the parsed files, with why.
    let r = init("csharp", "fixtures/azure-redis-create/wired-default-false", "ResourceCreateCommand.ExecuteAsync", "redis_create");
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("# registration does not read the handler yet: ") && r.stdout.contains("\"IRedisService#CreateResourceAsync\""), "{}", r.stdout);
    let r = init("javascript", "fixtures/dbhub-execute-sql/ts-access-policy", "createExecuteSqlToolHandler", "execute_sql");
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("\"ConnectorManager.getCurrentConnector().executeSQL\""), "{}", r.stdout);
}

/// The `[arguments]` table of the profile `fcd profile init` writes: name, type and required, by name.
fn proposed_arguments(r: &Run) -> Vec<(String, String, bool)> {
    assert_eq!(r.code, 0, "{}", r.stderr);
    let profile: toml::Table = r.stdout.parse().expect("the starting profile is TOML");
    let table = profile.get("arguments").and_then(|a| a.as_table()).cloned().unwrap_or_default();
    let mut arguments: Vec<_> = table
        .iter()
        .map(|(name, a)| {
            let ty = a.get("type").and_then(|t| t.as_str()).unwrap_or_default().to_owned();
            (name.clone(), ty, a.get("required").and_then(|r| r.as_bool()).unwrap_or(false))
        })
        .collect();
    arguments.sort();
    arguments
}

fn argument(name: &str, ty: &str, required: bool) -> (String, String, bool) {
    (name.to_owned(), ty.to_owned(), required)
}

#[test]
fn profile_init_proposes_the_arguments_the_release_declares() {
    // Go, mark3labs: `mcp.With<Type>("name", …)`, required with `mcp.Required()`.
    let r = init("go", "fixtures/github-create-repository/mark3labs", "CreateRepository", "create_repository");
    assert_eq!(proposed_arguments(&r), [argument("name", "string", true), argument("organization", "string", false), argument("private", "boolean", false)]);
    assert!(r.stdout.contains("as the release declares them (pkg/github/repositories.go:17)"), "{}", r.stdout);
    // JavaScript: a zod shape in the registration, and `zodToJsonSchema(X)` of a top-level `z.object` in a listing.
    let without = |lang: &str, source: &str, tool: &str| fcd(&["profile", "init", "--lang", lang, "--source", source, "--tool", tool]);
    for fixture in ["fixtures/filesystem-write-file/boundary", "fixtures/filesystem-write-file/dispatch"] {
        let r = without("javascript", fixture, "write_file");
        assert_eq!(proposed_arguments(&r), [argument("content", "string", true), argument("path", "string", true)], "{fixture}");
    }
    // Python: the pydantic model the dispatcher builds from the arguments; a default,
    // `Field(default=…)` included, makes a field optional, `Field(description=…)` does not.
    let r = init("python", "fixtures/fetch/open", "call_tool", "fetch");
    assert_eq!(
        proposed_arguments(&r),
        [
            argument("max_length", "integer", false),
            argument("raw", "boolean", false),
            argument("start_index", "integer", false),
            argument("url", "string", true),
        ]
    );
    // Python: the parameters of a function registered by a `tool` decorator.
    let r = without("python", "fixtures/git-add/mcp-server", "git_add");
    assert_eq!(proposed_arguments(&r), [argument("files", "array", true), argument("repo_path", "string", true)]);
    // A type the declaration does not spell plainly is left to the author, as a comment.
    let r = init("javascript", "fixtures/dbhub-execute-sql/ts-legacy-reader", "executeSqlToolHandler", "execute_sql");
    assert_eq!(proposed_arguments(&r), []);
    assert!(r.stdout.contains("# sql = { type = \"TODO\", required = true }  (its type is not spelled plainly)"), "{}", r.stdout);
    // No declaration found: nothing is guessed, and the author is told why.
    let r = init("python", "fixtures/git-diff/guarded", "git_diff", "git_diff");
    assert_eq!(proposed_arguments(&r), []);
    assert!(r.stdout.contains("# (none proposed: no Tool(name=\"git_diff\", …) listing, no model the handler builds"), "{}", r.stdout);
    let r = init("go", "fixtures/github-create-gist/gosdk", "CreateGist", "create_gist");
    assert!(r.stdout.contains("# (none proposed: the tool literal declares no InputSchema)"), "{}", r.stdout);
    // Each starting profile still loads.
    fcd_compiler::profile::Profile::parse(Path::new("init.toml"), &r.stdout).expect("it loads");
}

#[test]
fn profile_init_without_a_function_finds_what_runs_for_the_tool() {
    let without = |lang: &str, source: &str, tool: &str| fcd(&["profile", "init", "--lang", lang, "--source", source, "--tool", tool]);
    // Python: the branch of the server's dispatcher that matches the tool's name; the release-local
    // function it calls is named for the author, who makes it a region of its own.
    let r = without("python", "fixtures/git-diff/guarded", "git_diff");
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("[regions.handler]\nroute = \"git_diff\"\n"), "{}", r.stdout);
    assert!(r.stdout.contains("# escalates as written: git_diff (defined in the release, but not a region of the profile"), "{}", r.stdout);
    // JavaScript: the `case "write_file":` clause of the request handler's switch.
    let r = without("javascript", "fixtures/filesystem-write-file/dispatch", "write_file");
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("[regions.handler]\ncase = \"write_file\"\n"), "{}", r.stdout);
    fcd_compiler::profile::Profile::parse(Path::new("init.toml"), &r.stdout).expect("it loads");
    // A handler every tool name reaches (fetch's `call_tool`) has no route by name: the author names it.
    let r = without("python", "fixtures/fetch/hooked", "fetch");
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("no route, registered callback or dispatcher case of the tool `fetch`") && r.stderr.contains("--function"), "{}", r.stderr);
}

#[test]
fn debug_region_names_the_closest_call_when_a_fact_has_no_candidate() {
    let tmp = tempfile::tempdir().unwrap();
    let release = tmp.path().join("release");
    copy_tree(&root().join("fixtures/git-diff/guarded"), &release);
    let server = release.join("mcp_server_git/server.py");
    let text = std::fs::read_to_string(&server).unwrap().replacen("repo.git.diff(", "repo.git.dif(", 1);
    std::fs::write(&server, text).unwrap();
    let r = fcd(&["debug", "region", "--profile", "profiles/git-diff", "--source", s(&release), "--region", "handler"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("  NEW git.Repo.git.dif "), "{}", r.stdout);
    assert!(r.stdout.contains("candidates: call sites resolving to `git.Repo.git.diff`: none\n    did you mean `git.Repo.git.dif`?"), "{}", r.stdout);
}

#[test]
fn an_uncertain_lease_keeps_its_epoch_from_retiring_until_the_resolvers_signed_resolution() {
    let dir = tempfile::tempdir().unwrap();
    let store = format!("sqlite:{}", dir.path().join("rt.sqlite").display());
    let rt = |args: &[&str]| {
        let mut all = vec!["runtime", args[0], "--store", &store];
        all.extend_from_slice(&args[1..]);
        fcd(&all)
    };
    let (registry, e0) = fcd_cli::admitted_epoch(dir.path());
    let registered = rt(&["register-epoch", "--registry", s(&registry), "--epoch", &e0]);
    assert_eq!(registered.code, 0, "{}", registered.stderr);
    assert_eq!(registered.json()["tool"], "git_diff");
    let unknown = rt(&["register-epoch", "--registry", s(&registry), "--epoch", "sha256:not-admitted"]);
    assert_eq!((unknown.code, unknown.json()["refused"].as_str()), (1, Some("not_admitted")), "only an admitted epoch enters the store: {}", unknown.stdout);
    let formed = rt(&["form", "--snapshot", "s", "--tool", "git_diff", "--args-digest", "sha256:x", "--principal", "user:alice", "--source", &e0]);
    assert_eq!(formed.code, 0, "{}", formed.stderr);
    let formation = formed.json()["formation"].to_string();
    let admitted = rt(&["admit", "--formation", &formation]);
    assert_eq!(admitted.code, 0, "{}", admitted.stderr);
    let lease = admitted.json()["id"].to_string();
    assert_eq!(rt(&["uncertain", "--lease", &lease]).code, 0);
    let listed = rt(&["leases"]);
    assert_eq!(listed.json()[0]["state"], "uncertain", "{}", listed.stdout);
    assert_eq!(rt(&["transition", "--epoch", &e0, "--to", "drain"]).code, 0);
    let stuck = rt(&["transition", "--epoch", &e0, "--to", "retire"]);
    assert_eq!((stuck.code, stuck.json()["refused"].as_str()), (1, Some("leases_outstanding")), "{}", stuck.stdout);
    let key = dir.path().join("resolver.pem");
    assert_eq!(fcd(&["keygen", "--out", s(&key)]).code, 0);
    let other = dir.path().join("other.pem");
    assert_eq!(fcd(&["keygen", "--out", s(&other)]).code, 0);
    let unregistered = rt(&["resolve", "--lease", &lease, "--result", "did-not-run", "--key", s(&key)]);
    assert_eq!(unregistered.json()["refused"], "no_resolver", "{}", unregistered.stdout);
    let public = format!("{}.pub", key.display());
    assert_eq!(rt(&["resolver", "--pubkey", &public]).code, 0);
    let forged = rt(&["resolve", "--lease", &lease, "--result", "did-not-run", "--key", s(&other)]);
    assert_eq!(forged.code, 1, "{}", forged.stdout);
    let resolved = rt(&["resolve", "--lease", &lease, "--result", "did-not-run", "--key", s(&key)]);
    assert_eq!(resolved.code, 0, "{} {}", resolved.stdout, resolved.stderr);
    assert_eq!(rt(&["transition", "--epoch", &e0, "--to", "retire"]).code, 0, "resolved, the epoch retires");
    let audit = fcd(&["audit", "check", "--store", &store]);
    assert_eq!(audit.code, 0, "{}{}", audit.stdout, audit.stderr);
}
