//! The truth of dbhub-execute-sql cases, established by running them.
//!
//! Every fixture, mutation and adversarial case of profiles/dbhub-execute-sql
//! is materialized and its `execute_sql` handler is run for real on each
//! canonical call (tests/support/run_dbhub.mjs: Node, better-sqlite3 on a
//! scratch database, the release's undefined helpers supplied as the profile
//! assumes them). Two properties must hold: fcd never certifies (decides
//! `safe`) a call whose run changed the database, and a case never declares a
//! call's truth `safe` when its run changed the database. A certificate the
//! run could not check (the handler did not load, or the call's SQL never
//! reached the database) fails too: that is a hole in the test, not a pass.
//! Needs node and `npm ci` in tests/support/node; without them the test says
//! so and skips (CI installs both).

use fcd_testkit::tools;

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use fcd_compiler::profile::Profile;
use fcd_compiler::register::{Registration, Request, register};
use fcd_verify::canonical_calls::Canonical;
use fcd_verify::verdict::{Verdict, check_call, decide};
use serde_json::Value;

/// A hostile case may hang its run; the driver bounds each step, this the whole.
const CASE_TIMEOUT: Duration = Duration::from_secs(20);

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn tools_present() -> Result<(), String> {
    let node = Command::new("node").arg("--version").output().map_err(|e| format!("node: {e}"))?;
    if !node.status.success() {
        return Err("node does not run".into());
    }
    for package in ["better-sqlite3", "typescript", "zod"] {
        if !root().join("tests/support/node/node_modules").join(package).is_dir() {
            return Err(format!("{package} is not installed (cd tests/support/node && npm ci)"));
        }
    }
    Ok(())
}

/// Runs the driver on `release`; `None` when it had to be killed.
fn run(release: &std::path::Path, scratch: &std::path::Path, built: &str, calls: &Value) -> Option<Value> {
    run_with(release, scratch, built, calls, CASE_TIMEOUT, 50)
}

/// [`run`] bounded by `timeout`, each call given `settle_ms` after it returns.
fn run_with(release: &std::path::Path, scratch: &std::path::Path, built: &str, calls: &Value, timeout: Duration, settle_ms: u32) -> Option<Value> {
    let (stdout, stderr) = (scratch.join("stdout"), scratch.join("stderr"));
    let mut child = Command::new("node")
        .arg(root().join("tests/support/run_dbhub.mjs"))
        .arg(release)
        .arg(scratch.join("work"))
        .arg(built)
        .arg(settle_ms.to_string())
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .current_dir(scratch)
        .stdin(Stdio::piped())
        .stdout(std::fs::File::create(&stdout).unwrap())
        .stderr(std::fs::File::create(&stderr).unwrap())
        .spawn()
        .expect("node runs");
    use std::io::Write as _;
    child.stdin.take().unwrap().write_all(calls.to_string().as_bytes()).unwrap();
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > timeout {
            child.kill().unwrap();
            child.wait().unwrap();
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = std::fs::read_to_string(&stdout).unwrap();
    let last = out.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or_default();
    Some(
        serde_json::from_str(last)
            .unwrap_or_else(|e| panic!("{}: driver output ({e}): {out}{}", release.display(), std::fs::read_to_string(&stderr).unwrap_or_default())),
    )
}

/// The profile's directory, the profile, its canonical calls, and its
/// reviewed build mappings as the driver takes them.
fn dbhub() -> (PathBuf, Profile, Canonical, Value) {
    let dir = root().join("profiles/dbhub-execute-sql");
    let profile = Profile::load(&dir).unwrap();
    let canonical = Canonical::load(&dir.join("canonical.json")).unwrap();
    let built = Value::from(profile.entry.as_ref().map(|e| e.built.iter().map(|(b, s)| vec![b.clone(), s.clone()]).collect::<Vec<_>>()).unwrap_or_default());
    (dir, profile, canonical, built)
}

#[test]
fn no_certificate_for_a_call_that_mutates_the_database_when_run() {
    if !tools::tools_or_skip("no_certificate_for_a_call_that_mutates_the_database_when_run", tools_present()) {
        return;
    }
    let (dir, profile, canonical, built) = dbhub();
    let calls: serde_json::Map<String, Value> = canonical.calls.iter().map(|(n, c)| (n.clone(), Value::Object(c.arguments.clone()))).collect();
    let (mut cases_run, mut calls_run, mut mutated, mut certified, mut holes) = (0, 0, 0, 0, Vec::new());
    for case in fcd::profile_test::load_cases(&dir).unwrap() {
        let tree = case.root().unwrap();
        let scratch = tempfile::tempdir().unwrap();
        // The driver writes into its copy of the release (a TypeScript build, a node_modules link).
        let release = scratch.path().join("release");
        std::fs::create_dir(&release).unwrap();
        fcd_edits::materialize(&tree.path, &[], &release).unwrap();
        let report = run(&release, scratch.path(), &built.to_string(), &Value::Object(calls.clone()));
        cases_run += 1;
        let results = report.as_ref().and_then(|r| r.get("calls")).and_then(Value::as_object);
        let why_not_run = match &report {
            None => format!("the run was killed after {CASE_TIMEOUT:?}"),
            Some(r) => r.get("load_error").map(Value::to_string).unwrap_or_default(),
        };

        // The canonical calls are decided under the canonical configuration, registered as such.
        let config = canonical.env.config.as_object().cloned();
        let request = Request { source: tree.path.clone(), release: Some(case.name.clone()), config, ..Request::default() };
        let summary = match register(&profile, &request).unwrap() {
            Registration::Registered(s) => Some(s),
            Registration::Escalated(_) => None,
        };
        for name in canonical.calls.keys() {
            let result = results.and_then(|r| r.get(name));
            let changed = result.is_some_and(|r| r["mutated"] == Value::Bool(true));
            calls_run += usize::from(result.is_some());
            mutated += usize::from(changed);
            if changed && let Some(truth) = case.truth.get(name) {
                assert_ne!(
                    *truth,
                    Verdict::Safe,
                    "case {}: call {name} changes the database when run ({}), but its declared truth is safe",
                    case.name,
                    result.unwrap()["changes"]
                );
            }
            let Some(summary) = &summary else { continue };
            let call = canonical.call(name).unwrap();
            let input = fcd_verify::verdict::CallInput::new(call, &dir);
            if decide(&check_call(summary, &input).unwrap(), &canonical.env, &canonical.contract).decision != Verdict::Safe {
                continue;
            }
            certified += 1;
            assert!(!changed, "case {}: fcd certifies call {name}, which changes the database when run: {}", case.name, result.unwrap());
            // A certificate for a call whose SQL never reached the database was not checked by this run.
            if result.is_none_or(|r| r["executed"].as_array().is_none_or(|e| e.is_empty())) {
                holes.push(format!(
                    "case {}: call {name} is certified, but its run did not reach the database: {}",
                    case.name,
                    result.map_or(why_not_run.clone(), Value::to_string)
                ));
            }
        }
    }
    eprintln!(
        "dbhub-execute-sql cases run: {cases_run}; calls run: {calls_run}; calls that mutated the database: {mutated}; certificates checked against a run: {certified}"
    );
    assert!(holes.is_empty(), "certificates the runs could not check:\n{}", holes.join("\n"));
    assert!(
        cases_run > 50 && mutated > 10 && certified > 10,
        "the run covers too little: {cases_run} cases, {mutated} mutating calls, {certified} certificates"
    );
}

/// Every pragma SQLite documents, for statements and table-valued functions.
const PRAGMAS: &[&str] = &[
    "analysis_limit",
    "application_id",
    "auto_vacuum",
    "automatic_index",
    "busy_timeout",
    "cache_size",
    "cache_spill",
    "case_sensitive_like",
    "cell_size_check",
    "checkpoint_fullfsync",
    "collation_list",
    "compile_options",
    "count_changes",
    "data_version",
    "database_list",
    "default_cache_size",
    "defer_foreign_keys",
    "empty_result_callbacks",
    "encoding",
    "foreign_key_check",
    "foreign_key_list",
    "foreign_keys",
    "freelist_count",
    "full_column_names",
    "fullfsync",
    "function_list",
    "hard_heap_limit",
    "ignore_check_constraints",
    "incremental_vacuum",
    "index_info",
    "index_list",
    "index_xinfo",
    "integrity_check",
    "journal_mode",
    "journal_size_limit",
    "legacy_alter_table",
    "legacy_file_format",
    "locking_mode",
    "max_page_count",
    "mmap_size",
    "module_list",
    "optimize",
    "page_count",
    "page_size",
    "pragma_list",
    "query_only",
    "quick_check",
    "read_uncommitted",
    "recursive_triggers",
    "reverse_unordered_selects",
    "schema_version",
    "secure_delete",
    "short_column_names",
    "shrink_memory",
    "soft_heap_limit",
    "stats",
    "synchronous",
    "table_info",
    "table_list",
    "table_xinfo",
    "temp_store",
    "temp_store_directory",
    "threads",
    "trusted_schema",
    "user_version",
    "wal_autocheckpoint",
    "wal_checkpoint",
    "writable_schema",
];

/// Statements by class, as an agent might send them: writes, reads, and reads
/// that call something (a function, a table-valued function) that may write.
const STATEMENTS: &[&str] = &[
    "INSERT INTO t VALUES (2)",
    "UPDATE t SET x = 3",
    "DELETE FROM t",
    "REPLACE INTO t VALUES (5)",
    "INSERT INTO t SELECT * FROM t RETURNING *",
    "WITH c AS (SELECT 1) INSERT INTO t SELECT * FROM c",
    "CREATE TABLE u(a)",
    "CREATE INDEX i ON t(x)",
    "CREATE VIEW v AS SELECT 1",
    "CREATE TEMP TABLE w(a)",
    "DROP TABLE t",
    "ALTER TABLE t ADD COLUMN y",
    "VACUUM",
    "ANALYZE",
    "REINDEX",
    "BEGIN",
    "SAVEPOINT s",
    "ATTACH 'other.db' AS o",
    "CREATE TRIGGER tr AFTER INSERT ON t BEGIN SELECT 1; END",
    "SELECT 1",
    "SELECT * FROM t",
    "SELECT count(*) FROM t",
    "SELECT x FROM t WHERE x LIKE 'a%'",
    "VALUES (1), (2)",
    "WITH c AS (SELECT x FROM t) SELECT * FROM c",
    "SELECT * FROM t UNION SELECT 2",
    "SELECT (SELECT max(x) FROM t)",
    "SELECT name FROM sqlite_master",
    "SELECT * FROM json_each('[1,2]')",
    "SELECT 'DROP TABLE t; PRAGMA user_version = 7'",
    "SELECT lower('ÜNICODE'), upper('x')",
    "SELECT randomblob(4)",
    "SELECT load_extension('x')",
    "SELECT * FROM t AS a JOIN t AS b USING (x)",
    "SELECT * FROM generate_series(1, 3)",
    "SELECT * FROM dbstat",
    "SELECT * FROM sqlite_dbpage",
    "SELECT fts3_tokenizer('simple')",
    "SELECT * FROM t INDEXED BY nothing",
    "EXPLAIN SELECT 1",
    "EXPLAIN QUERY PLAN SELECT * FROM t",
];

/// The generated calls: every pragma as a statement (bare, set, called,
/// qualified) and as a table-valued function (bare, with arguments), every
/// statement above, and each of them respelled (case, comments, separators,
/// whitespace), so the grammar is tested where patterns go wrong.
fn sql_corpus() -> Vec<String> {
    let mut base: Vec<String> = STATEMENTS.iter().map(|s| (*s).to_owned()).collect();
    for p in PRAGMAS {
        for form in ["PRAGMA {p}", "PRAGMA {p} = 1", "PRAGMA {p} = 0", "PRAGMA {p}('wal')", "PRAGMA {p} = 'delete'", "PRAGMA main.{p}", "PRAGMA {p}('t')"] {
            base.push(form.replace("{p}", p));
        }
        for form in [
            "SELECT * FROM pragma_{p}",
            "SELECT * FROM pragma_{p}(1)",
            "SELECT * FROM pragma_{p}('t')",
            "SELECT * FROM main.pragma_{p}(0x10002)",
            "SELECT count(*) FROM pragma_{p}('wal')",
        ] {
            base.push(form.replace("{p}", p));
        }
    }
    let respell: [&dyn Fn(&str) -> String; 7] = [
        &|s| s.to_owned(),
        &|s| s.to_lowercase(),
        &|s| format!("/* note */ {s}"),
        &|s| format!("-- note\n{s};"),
        &|s| format!("  {}  ;  ", s.replace(' ', "\n\t")),
        &|s| s.chars().enumerate().map(|(i, c)| if i % 2 == 0 { c.to_ascii_lowercase() } else { c.to_ascii_uppercase() }).collect(),
        &|s| format!("{s} -- ; DELETE FROM t"),
    ];
    let mut out = Vec::new();
    for (i, s) in base.iter().enumerate() {
        // Every statement plainly; statements and a fifth of the pragma forms in every spelling.
        let all = i < STATEMENTS.len() || i % 5 == 0;
        for (j, f) in respell.iter().enumerate() {
            if j == 0 || all {
                out.push(f(s));
            }
        }
    }
    out
}

/// Differential testing of the SQL grammar against executed truth (issue 26,
/// point 6): a generated corpus of SQL, run by each regime's hand-written
/// release on a real SQLite (better-sqlite3), and decided by fcd on that
/// release's summary; no call that changed the database may be certified.
#[test]
fn no_generated_sql_call_that_changes_the_database_is_certified() {
    if !tools::tools_or_skip("no_generated_sql_call_that_changes_the_database_is_certified", tools_present()) {
        return;
    }
    let (dir, profile, canonical, built) = dbhub();
    let corpus = sql_corpus();
    let calls: serde_json::Map<String, Value> = corpus.iter().enumerate().map(|(i, sql)| (format!("q{i:05}"), serde_json::json!({ "sql": sql }))).collect();
    let cases = fcd::profile_test::load_cases(&dir).unwrap();
    let (mut run_calls, mut mutated, mut certified, mut false_certificates) = (0, 0, 0, Vec::new());
    for name in ["bundle-assignment-allowed", "bundle-assignment-refused", "ts-access-policy"] {
        let case = cases.iter().find(|c| c.name == name).unwrap_or_else(|| panic!("no case {name}"));
        let tree = case.root().unwrap();
        let scratch = tempfile::tempdir().unwrap();
        let release = scratch.path().join("release");
        std::fs::create_dir(&release).unwrap();
        fcd_edits::materialize(&tree.path, &[], &release).unwrap();
        let report = run_with(&release, scratch.path(), &built.to_string(), &Value::Object(calls.clone()), Duration::from_secs(600), 2)
            .unwrap_or_else(|| panic!("{name}: the run was killed"));
        let results = report["calls"].as_object().unwrap_or_else(|| panic!("{name}: {report}"));
        let config = canonical.env.config.as_object().cloned();
        let request = Request { source: tree.path.clone(), release: Some(name.to_owned()), config, ..Request::default() };
        let Registration::Registered(summary) = register(&profile, &request).unwrap() else { panic!("{name} escalated") };
        for (key, sql) in calls.keys().zip(&corpus) {
            let result = &results[key];
            let changed = result["mutated"] == Value::Bool(true);
            run_calls += 1;
            mutated += usize::from(changed);
            let call: fcd_verify::verdict::Call = serde_json::from_value(serde_json::json!({"tool": "execute_sql", "arguments": {"sql": sql}})).unwrap();
            let input = fcd_verify::verdict::CallInput::new(call, &dir);
            let decision = decide(&check_call(&summary, &input).unwrap(), &canonical.env, &canonical.contract);
            if decision.decision == Verdict::Safe {
                certified += 1;
                if changed {
                    false_certificates
                        .push(format!("{name}: {sql:?} is certified (rule {:?}) but changed the database: {}", decision.matched_rule, result["changes"]));
                }
            }
        }
    }
    eprintln!("generated SQL: {} statements, {run_calls} calls run on 3 releases; {mutated} changed the database; {certified} certified", corpus.len());
    assert!(false_certificates.is_empty(), "false certificates:\n{}", false_certificates.join("\n"));
    assert!(
        corpus.len() > 1000 && mutated > 50 && certified > 300,
        "the corpus covers too little: {run_calls} calls, {mutated} mutating, {certified} certified"
    );
}
