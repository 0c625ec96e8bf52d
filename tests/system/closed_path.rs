//! Issue 26, point 1, as a mutation engine: the closed call path is checked
//! at every site where it applies, not only where an adversarial case put
//! an edit. For each JavaScript fixture that registers, every `function`
//! declared in its files gains, one at a time, an effect no inventory lists
//! (`fetch(…)` as its first statement). A function some region calls must
//! then make the registration escalate, unless the profile trusts it by
//! name (`source.unread-functions`); a function no region calls may change
//! freely, since nothing of the tool's call path runs it.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use fcd_compiler::profile::Profile;
use fcd_compiler::register::{Registration, Request, register};
use fcd_frontends::Identity;
use fcd_verify::canonical_calls::Canonical;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every `function NAME(` of a file, with the byte offset just inside its body's `{`.
fn functions(text: &str) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    for (at, _) in text.match_indices("function ") {
        let rest = &text[at + "function ".len()..];
        let name: String = rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '$').collect();
        let after = &rest[name.len()..];
        if name.is_empty() || !after.starts_with('(') {
            continue;
        }
        // The parameter list's closing parenthesis, then the body's brace.
        let open = at + "function ".len() + name.len();
        let mut depth = 0usize;
        let mut close = None;
        for (i, c) in text[open..].char_indices() {
            match c {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        close = Some(open + i);
                        break;
                    }
                }
                _ => {}
            }
        }
        let Some(close) = close else { continue };
        if let Some(brace) = text[close..].find('{') {
            out.push((name, close + brace + 1));
        }
    }
    out
}

fn copy_tree(from: &Path, to: &Path) {
    for entry in walkdir::WalkDir::new(from) {
        let entry = entry.unwrap();
        let target = to.join(entry.path().strip_prefix(from).unwrap());
        if entry.file_type().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// What the mutation engine found for one fixture: functions some region
/// calls whose effect escalated, and ones trusted by name.
struct Outcome {
    bound: Vec<String>,
    trusted: Vec<String>,
}

fn mutate_every_function(profile_id: &str, fixture: &str) -> Outcome {
    let profile = Profile::load(&root().join(format!("profiles/{profile_id}/profile.toml"))).unwrap();
    let canonical = Canonical::load(&root().join(format!("profiles/{profile_id}/canonical.json"))).unwrap();
    let base = root().join(format!("fixtures/{profile_id}/{fixture}"));
    let request = |source: &Path| Request { source: source.to_owned(), config: canonical.env.config.as_object().cloned(), ..Request::default() };
    let Registration::Registered(summary) = register(&profile, &request(&base)).unwrap() else { panic!("{fixture}: the base registers") };
    // The names every region's call sites spell, under the shape the base has.
    let view = fcd_compiler::inspect::view(&profile, &base, summary.shape.as_deref(), None).unwrap();
    let mut called = BTreeSet::new();
    for region in &view.regions {
        for call in region.located.as_ref().ok().into_iter().flatten().flat_map(|r| &r.calls) {
            if let Identity::Path(p) = &call.identity {
                called.extend(p.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '$')).filter(|w| !w.is_empty()).map(str::to_owned));
            }
        }
    }
    let unread: BTreeSet<&str> = profile.unread_functions.iter().map(|f| f.rsplit('.').next().unwrap_or(f)).collect();
    let mut outcome = Outcome { bound: Vec::new(), trusted: Vec::new() };
    let files: Vec<PathBuf> = walkdir::WalkDir::new(&base)
        .into_iter()
        .map(|e| e.unwrap().into_path())
        .filter(|p| p.extension().is_some_and(|x| x == "js" || x == "ts") && !p.to_string_lossy().contains(".test."))
        .collect();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        for (name, body) in functions(&text) {
            let tmp = tempfile::tempdir().unwrap();
            let tree = tmp.path().join(fixture);
            copy_tree(&base, &tree);
            let mutated = format!("{}\n  fetch(\"http://127.0.0.1:9/\" + {name:?});{}", &text[..body], &text[body..]);
            std::fs::write(tree.join(file.strip_prefix(&base).unwrap()), mutated).unwrap();
            let registered = matches!(register(&profile, &request(&tree)).unwrap(), Registration::Registered(_));
            match (called.contains(&name), registered) {
                (true, false) => outcome.bound.push(name),
                (true, true) => {
                    assert!(
                        unread.contains(name.as_str()),
                        "{profile_id}/{fixture}: `{name}`, which a region calls, gained an effect and the release still registers"
                    );
                    outcome.trusted.push(name);
                }
                // Nothing on the tool's path runs it.
                (false, _) => {}
            }
        }
    }
    outcome
}

#[test]
fn every_release_function_a_region_calls_escalates_when_it_gains_an_effect() {
    let mut bound = 0;
    for (profile, fixtures) in [
        ("dbhub-execute-sql", &["bundle-assignment-refused", "ts-assignment-refused", "ts-access-policy", "ts-legacy-reader"][..]),
        ("filesystem-write-file", &["boundary", "prefix"][..]),
    ] {
        for fixture in fixtures {
            let outcome = mutate_every_function(profile, fixture);
            eprintln!("{profile}/{fixture}: bound {:?}; trusted by name {:?}", outcome.bound, outcome.trusted);
            bound += outcome.bound.len();
        }
    }
    // The engine found functions on the call path to mutate, and each was bound.
    assert!(bound >= 10, "only {bound} release functions on the call path were mutated");
}
