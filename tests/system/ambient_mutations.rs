//! Issue 26, point 2, as a mutation engine: ambient state is checked at
//! every site where a write could be put, not only where an adversarial
//! case put one. For each fixture that registers, every function of the
//! release's loaded closure, and each file's top level, gains one write to
//! process-wide state in turn (the environment, the working directory, the
//! umask, a prototype), spelled as each language spells its mutating
//! operations (assignment, augmented assignment, deletion, a mutating
//! method, through an alias). Whether or not the tool's call path runs the
//! function, the registration must escalate: ambient state reaches every
//! process the handler starts, whoever wrote it. Sites are the files the
//! frontend analysed as what the release runs: a release's tree may hold
//! sources the server never loads (dbhub's web UI under `frontend/`).

use std::path::Path;

use fcd_compiler::profile::Profile;
use fcd_compiler::register::{Registration, Request, register};
use fcd_verify::canonical_calls::Canonical;

use crate::closed_path::{functions, python_functions};
use crate::fcd_cli::{copy_tree, root};

/// Writes to process-wide state, one statement each (JavaScript).
const JS_WRITES: &[&str] = &[
    "process.env.FCD_MUTATED = \"1\";",
    "process.chdir(\"/\");",
    "process.umask(0);",
    "Object.prototype.fcdMutated = 1;",
    "delete process.env.HOME;",
    "Object.assign(process.env, { FCD_MUTATED: \"1\" });",
    "process.env[\"PATH\"] += \":/tmp\";",
    "const fcdEnv = process.env; fcdEnv.FCD_MUTATED = \"1\";",
];

/// The same in Python, through `_fcd_os`, an alias the mutation imports at the top of the file.
const PY_WRITES: &[&str] = &[
    "_fcd_os.environ[\"FCD_MUTATED\"] = \"1\"",
    "_fcd_os.environ.setdefault(\"FCD_MUTATED\", \"1\")",
    "_fcd_os.environ.update(FCD_MUTATED=\"1\")",
    "_fcd_os.chdir(\"/\")",
    "_fcd_os.umask(0)",
    "del _fcd_os.environ[\"HOME\"]",
    "_fcd_os.putenv(\"FCD_MUTATED\", \"1\")",
    "_fcd_os.environ[\"PATH\"] += \":/tmp\"",
];

/// What the engine made of one fixture: mutants made, and how many of them
/// escalated because of the write itself (the same site with a statement
/// that writes nothing, the control, registers).
struct Outcome {
    mutants: usize,
    attributed: usize,
}

/// Mutates every site of one fixture. Panics naming any mutant that registers.
fn mutate(profile_id: &str, base: &Path) -> Outcome {
    let profile = Profile::load(&root().join(format!("profiles/{profile_id}/profile.toml"))).unwrap();
    let canonical = Canonical::load(&root().join(format!("profiles/{profile_id}/canonical.json"))).unwrap();
    let fixture = base.file_name().unwrap().to_string_lossy().into_owned();
    let request = |source: &Path| Request { source: source.to_owned(), config: canonical.env.config.as_object().cloned(), ..Request::default() };
    let Registration::Registered(summary) = register(&profile, &request(base)).unwrap() else { panic!("{fixture}: the base registers") };
    // What the release runs: the files the frontend analysed (a web UI's
    // sources in the same tree are digested, never run by the server).
    let view = fcd_compiler::inspect::view(&profile, base, summary.shape.as_deref(), None).unwrap();
    assert!(!view.loaded.is_empty(), "{fixture}: the frontend analysed no file");
    let closure: Vec<String> = view.loaded.into_iter().filter(|p| p.ends_with(".js") || p.ends_with(".ts") || p.ends_with(".py")).collect();
    // (file, site, the file with the write, the file with the control statement instead)
    let mut mutants = Vec::new();
    for rel in &closure {
        let text = std::fs::read_to_string(base.join(rel)).unwrap();
        if rel.ends_with(".py") {
            let import = "import os as _fcd_os\n";
            let sites = python_functions(&text);
            for (i, (name, at, indent)) in sites.iter().enumerate() {
                let write = PY_WRITES[i % PY_WRITES.len()];
                let with = |statement: &str| format!("{import}{}{indent}{statement}\n{}", &text[..*at], &text[*at..]);
                mutants.push((rel.clone(), format!("{name}: {write}"), with(write), with("pass")));
            }
            let write = PY_WRITES[sites.len() % PY_WRITES.len()];
            mutants.push((rel.clone(), format!("top level: {write}"), format!("{import}{text}\n{write}\n"), format!("{import}{text}\npass\n")));
        } else {
            let sites = functions(&text);
            for (i, (name, at)) in sites.iter().enumerate() {
                let write = JS_WRITES[i % JS_WRITES.len()];
                let with = |statement: &str| format!("{}\n  {statement}{}", &text[..*at], &text[*at..]);
                mutants.push((rel.clone(), format!("{name}: {write}"), with(write), with(";")));
            }
            let write = JS_WRITES[sites.len() % JS_WRITES.len()];
            mutants.push((rel.clone(), format!("top level: {write}"), format!("{text}\n{write}\n"), format!("{text}\n;\n")));
        }
    }
    let registers = |rel: &str, text: &str| {
        let tmp = tempfile::tempdir().unwrap();
        let tree = tmp.path().join(&fixture);
        copy_tree(base, &tree);
        std::fs::write(tree.join(rel), text).unwrap();
        matches!(register(&profile, &request(&tree)).unwrap(), Registration::Registered(_))
    };
    let mut registered = Vec::new();
    let mut attributed = 0;
    for (rel, site, mutated, control) in &mutants {
        if registers(rel, mutated) {
            registered.push(format!("{rel} {site}"));
        } else if registers(rel, control) {
            attributed += 1;
        }
    }
    assert!(registered.is_empty(), "{profile_id}/{fixture}: a write to process-wide state and the release still registers:\n{}", registered.join("\n"));
    Outcome { mutants: mutants.len(), attributed }
}

#[test]
fn every_write_to_process_wide_state_in_the_loaded_closure_escalates() {
    let (mut total, mut attributed) = (0, 0);
    for (profile, fixtures) in [
        ("dbhub-execute-sql", &["bundle-assignment-refused", "ts-assignment-refused", "ts-access-policy"][..]),
        ("filesystem-write-file", &["boundary", "prefix"][..]),
        ("git-diff", &["guarded", "unguarded", "mcp-server"][..]),
        ("git-add", &["index", "cli"][..]),
    ] {
        for fixture in fixtures {
            let outcome = mutate(profile, &root().join(format!("fixtures/{profile}/{fixture}")));
            eprintln!("{profile}/{fixture}: {} ambient mutants, none registers; {} escalate for the write alone", outcome.mutants, outcome.attributed);
            total += outcome.mutants;
            attributed += outcome.attributed;
        }
    }
    // Enough sites, and most of them discriminating: where the control escalates too (a
    // statement added to a region whose body is pinned), the write was not what was tested.
    assert!(total >= 60, "only {total} mutants were made");
    assert!(attributed * 2 >= total, "only {attributed} of {total} mutants escalated for the write alone");
    // The long pass: official releases unpacked beside (`PROFILE=DIR`, comma-separated).
    for spec in std::env::var("FCD_AMBIENT_RELEASES").unwrap_or_default().split(',').filter(|s| !s.is_empty()) {
        let (profile, dir) = spec.split_once('=').expect("PROFILE=DIR");
        let outcome = mutate(profile, Path::new(dir));
        eprintln!("{profile} {dir}: {} ambient mutants, none registers; {} for the write alone", outcome.mutants, outcome.attributed);
    }
}
