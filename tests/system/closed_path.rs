//! Issue 26, point 1, as a mutation engine: the closed call path is checked
//! at every site where it applies, not only where an adversarial case put
//! an edit. For each JavaScript, Python and Go fixture that registers, every
//! function declared in its files gains, one at a time, an effect no
//! inventory lists (`fetch(…)`, a file opened for writing, `os.Setenv` as
//! its first statement). A function some region calls must
//! then make the registration escalate, whether a region reads it or the
//! profile pins the code it reaches by digest (`source.pinned-functions`);
//! nothing is trusted by name. A function no region calls may change freely
//! here (what a pinned function calls is in its digest: the frontend's
//! tests change those).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use fcd_compiler::profile::Profile;
use fcd_compiler::register::{Registration, Request, register};
use fcd_frontends::Identity;
use fcd_verify::canonical_calls::Canonical;

use crate::fcd_cli::{copy_tree, root};

/// Functions that run once, when the server starts, not when a call comes:
/// the server builder around a registered route (crate fcd-frontends,
/// `python/closure.rs`), whose route check reads what it does to the server
/// object. Its other effects happen before any call whatever the call is;
/// its process-wide writes are checked file-wide (ambient state, module
/// writes). Listed here by profile and name so that no other function slips by.
const STARTUP_ONLY: &[(&str, &str)] = &[("git-diff", "create_server"), ("git-add", "create_server")];

/// Every `function NAME(` of a file, with the byte offset just inside its body's `{`.
pub(crate) fn functions(text: &str) -> Vec<(String, usize)> {
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

/// Every top-level `func NAME(` or method `func (r T) NAME(` of a gofmt'd Go
/// file written on one line up to its body's brace (`… {` at the end of the
/// line, or `{ ` opening a one-line body), with the byte offset just inside it.
pub(crate) fn go_functions(text: &str) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        if let Some(rest) = line.strip_prefix("func ") {
            let rest = if rest.starts_with('(') { rest.split_once(") ").map_or("", |(_, r)| r) } else { rest };
            let name: String = rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
            let trimmed = line.trim_end();
            let body = if trimmed.ends_with('{') { Some(trimmed.len()) } else { line.find("{ ").map(|i| i + 1) };
            if let Some(at) = body.filter(|_| !name.is_empty()) {
                out.push((name, offset + at));
            }
        }
        offset += line.len();
    }
    out
}

/// Every `def NAME(` of a Python file, with the byte offset of its body's
/// first line and that line's indentation.
pub(crate) fn python_functions(text: &str) -> Vec<(String, usize, String)> {
    let mut out = Vec::new();
    let lines: Vec<(usize, &str)> = text
        .split_inclusive('\n')
        .scan(0, |at, l| {
            let start = *at;
            *at += l.len();
            Some((start, l))
        })
        .collect();
    for (i, (_, line)) in lines.iter().enumerate() {
        let trimmed = line.trim_start();
        let Some(rest) = trimmed.strip_prefix("async def ").or_else(|| trimmed.strip_prefix("def ")) else { continue };
        let name: String = rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
        // The signature ends at the first line ending in `:` with its parentheses closed.
        let mut depth = 0i32;
        let mut end = None;
        for (j, (_, l)) in lines.iter().enumerate().skip(i) {
            depth += l.matches('(').count() as i32 - l.matches(')').count() as i32;
            if depth == 0 && l.trim_end().ends_with(':') {
                end = Some(j);
                break;
            }
        }
        let Some(end) = end else { continue };
        let Some((start, body)) = lines.iter().skip(end + 1).find(|(_, l)| !l.trim().is_empty()) else { continue };
        let indent: String = body.chars().take_while(|c| *c == ' ' || *c == '\t').collect();
        out.push((name, *start, indent));
    }
    out
}

/// What the mutation engine found for one fixture: functions some region
/// calls whose effect escalated.
struct Outcome {
    bound: Vec<String>,
}

fn mutate_every_function(profile_id: &str, base: &Path) -> Outcome {
    let profile = Profile::load(&root().join(format!("profiles/{profile_id}/profile.toml"))).unwrap();
    let canonical = Canonical::load(&root().join(format!("profiles/{profile_id}/canonical.json"))).unwrap();
    let fixture = base.file_name().unwrap().to_string_lossy().into_owned();
    let fixture = fixture.as_str();
    let base = base.to_owned();
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
    let mut outcome = Outcome { bound: Vec::new() };
    // Where the located regions are: a definition of a region's name outside
    // them is a copy the path does not reach (a file the release never loads).
    let spans: Vec<(String, u32, u32)> = view
        .regions
        .iter()
        .filter_map(|r| r.located.as_ref().ok().cloned().flatten())
        .map(|r| (r.anchor.file.clone(), r.anchor.line, r.anchor.end_line))
        .collect();
    let closure: BTreeSet<String> = summary.source.files.iter().map(|f| f.path.clone()).collect();
    let files: Vec<PathBuf> = walkdir::WalkDir::new(&base)
        .into_iter()
        .map(|e| e.unwrap().into_path())
        .filter(|p| p.extension().is_some_and(|x| x == "js" || x == "ts" || x == "py" || x == "go"))
        // Only what the release's closure holds (its tests and the like are not selected).
        .filter(|p| closure.contains(&p.strip_prefix(&base).unwrap().to_string_lossy().into_owned()))
        .collect();
    // Every function: (file, name, its body's first line, the file with the effect put first in that body).
    let mut sites: Vec<(PathBuf, String, u32, String)> = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let line = |at: usize| text[..at].matches('\n').count() as u32 + 1;
        // The effect: a request (JavaScript), a file opened for writing (Python).
        if file.extension().is_some_and(|x| x == "go") {
            // A write of the environment (Go): a region's call site no inventory lists, a pinned closure's text changed.
            for (name, at) in go_functions(&text) {
                sites.push((file.clone(), name.clone(), line(at), format!("{}\n\tos.Setenv(\"FCD_MUTATED\", {name:?})\n{}", &text[..at], &text[at..])));
            }
        } else if file.extension().is_some_and(|x| x == "py") {
            for (name, at, indent) in python_functions(&text) {
                sites.push((file.clone(), name, line(at), format!("{}{indent}open(\"/tmp/fcd-mutated\", \"w\")\n{}", &text[..at], &text[at..])));
            }
        } else {
            for (name, at) in functions(&text) {
                sites.push((file.clone(), name.clone(), line(at), format!("{}\n  fetch(\"http://127.0.0.1:9/\" + {name:?});{}", &text[..at], &text[at..])));
            }
        }
    }
    let in_region = |file: &Path, line: u32| {
        let rel = file.strip_prefix(&base).unwrap().to_string_lossy().into_owned();
        spans.iter().any(|(f, from, to)| *f == rel && (*from..=*to).contains(&line))
    };
    let regions_of: BTreeSet<String> = sites.iter().filter(|(f, _, l, _)| in_region(f, *l)).map(|(_, n, _, _)| n.clone()).collect();
    for (file, name, line, mutated) in sites {
        // Nothing on the tool's path runs a function no region calls, nor
        // another file's copy of a region's function.
        if !called.contains(&name) || (regions_of.contains(&name) && !in_region(&file, line)) {
            continue;
        }
        let tmp = tempfile::tempdir().unwrap();
        let tree = tmp.path().join(fixture);
        copy_tree(&base, &tree);
        std::fs::write(tree.join(file.strip_prefix(&base).unwrap()), mutated).unwrap();
        if !matches!(register(&profile, &request(&tree)).unwrap(), Registration::Registered(_)) {
            outcome.bound.push(name);
        } else {
            assert!(
                STARTUP_ONLY.contains(&(profile_id, name.as_str())),
                "{profile_id}/{fixture}: `{name}`, which a region calls, gained an effect and the release still registers"
            );
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
        ("git-diff", &["guarded", "unguarded", "flag-error", "mcp-server"][..]),
        ("git-add", &["index", "cli"][..]),
        // Go: the handler's package and the module's other packages it reaches (pinned by closure digest).
        ("github-create-repository", &["default-true", "gosdk", "factory"][..]),
        ("github-create-gist", &["gosdk", "secret-default"][..]),
        ("github-create-or-update-file", &["blind", "checked"][..]),
    ] {
        for fixture in fixtures {
            let outcome = mutate_every_function(profile, &root().join(format!("fixtures/{profile}/{fixture}")));
            eprintln!("{profile}/{fixture}: bound {:?}", outcome.bound);
            bound += outcome.bound.len();
        }
    }
    // The engine found functions on the call path to mutate, and each was bound.
    assert!(bound >= 10, "only {bound} release functions on the call path were mutated");
    // The long pass: official releases unpacked beside (`PROFILE=DIR`, comma-separated).
    for spec in std::env::var("FCD_CLOSED_PATH_RELEASES").unwrap_or_default().split(',').filter(|s| !s.is_empty()) {
        let (profile, dir) = spec.split_once('=').expect("PROFILE=DIR");
        let outcome = mutate_every_function(profile, Path::new(dir));
        eprintln!("{profile} {dir}: bound {}", outcome.bound.len());
    }
}
