//! Tidy rules as ordinary tests: module docs everywhere, no stray snapshots.

use std::path::PathBuf;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn files_with_ext(ext: &str) -> Vec<PathBuf> {
    walkdir::WalkDir::new(root())
        .into_iter()
        // vendor/: third-party code kept as upstream wrote it (vendor/etcd-client/VENDORED.md).
        .filter_entry(|e| !matches!(e.file_name().to_str(), Some("target" | ".git" | ".cache" | "vendor")))
        .filter_map(Result::ok)
        .filter(|e| e.path().extension().is_some_and(|x| x == ext))
        .map(|e| e.into_path())
        .collect()
}

#[test]
fn every_rust_file_starts_with_a_module_doc() {
    for path in files_with_ext("rs") {
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with("//!"), "{} does not start with a `//!` line saying why it exists", path.display());
    }
}

#[test]
fn every_snapshot_belongs_to_an_existing_test_file() {
    for snap in files_with_ext("snap") {
        let text = std::fs::read_to_string(&snap).unwrap();
        let source = text.lines().find_map(|l| l.strip_prefix("source: ")).unwrap_or_default();
        assert!(root().join(source).exists(), "{} names a missing test file `{source}`", snap.display());
        let test_file = std::fs::read_to_string(root().join(source)).unwrap();
        let name = snap.file_stem().unwrap().to_string_lossy();
        // `FILE__TEST[@SUFFIX]` for an integration test, `CRATE__MODULE__…__TEST` for a module's own tests.
        let unsuffixed = name.split('@').next().unwrap();
        let test_name = unsuffixed.rsplit_once("__").map_or(unsuffixed, |(_, n)| n);
        let base = test_name.trim_end_matches(|c: char| c != '_').trim_end_matches('_');
        assert!(test_file.contains(test_name) || test_file.contains(base), "{} is not produced by any test of {source}", snap.display());
    }
}

/// The directories of the workspace's crates: the root and every member.
fn crate_dirs() -> Vec<PathBuf> {
    let manifest = std::fs::read_to_string(root().join("Cargo.toml")).unwrap();
    let value: toml::Value = toml::from_str(&manifest).unwrap();
    let members = value["workspace"]["members"].as_array().expect("a [workspace] members list");
    std::iter::once(root()).chain(members.iter().map(|m| root().join(m.as_str().unwrap()))).collect()
}

#[test]
fn each_crate_links_one_integration_test_binary() {
    // Every `tests/*.rs` and `tests/*/main.rs` is a binary linking the crate and all its
    // dependencies: one per crate, its files as modules, keeps the suite to a handful of links.
    let mut checked = 0;
    for dir in crate_dirs() {
        let Ok(entries) = std::fs::read_dir(dir.join("tests")) else { continue };
        let mut binaries = Vec::new();
        for entry in entries.filter_map(Result::ok) {
            let path = entry.path();
            if path.extension().is_some_and(|x| x == "rs") || path.join("main.rs").is_file() {
                binaries.push(path);
            }
        }
        assert!(binaries.len() <= 1, "{} has {} integration-test binaries, one is the rule: {binaries:?}", dir.display(), binaries.len());
        checked += binaries.len();
    }
    assert!(checked >= 5, "the check sees the test binaries of the root, frontends, runtime, lifecycle and oracle ({checked})");
}

#[test]
fn every_refusal_code_is_documented() {
    // One typed list of codes (fcd_model::refusal): each is explained where an operator looks.
    let docs: String = ["docs/gateway.md", "docs/lifecycle.md"].iter().map(|p| std::fs::read_to_string(root().join(p)).unwrap()).collect();
    // The first cell of a table row names the code (`a`, or `a`, `b` for codes that share a meaning).
    let named: Vec<&str> = docs.lines().filter_map(|l| l.strip_prefix('|')).filter_map(|l| l.split('|').next()).collect();
    let missing: Vec<&str> =
        fcd_model::refusal::RefusalCode::ALL.iter().map(|c| c.as_str()).filter(|c| !named.iter().any(|cell| cell.contains(&format!("`{c}`")))).collect();
    assert!(missing.is_empty(), "refusal codes no table of docs/gateway.md or docs/lifecycle.md explains: {missing:?}");
}

#[test]
fn no_pending_snapshots() {
    for ext in ["new", "pending-snap"] {
        let stray = files_with_ext(ext);
        assert!(stray.is_empty(), "unreviewed snapshots: {stray:?}");
    }
}

/// The normal dependencies of one workspace crate, one per line (`name vX.Y.Z …`).
fn dependencies(krate: &str) -> String {
    cargo_tree(krate, &[])
}

/// `cargo tree` of `krate`'s normal dependencies, one per line, with `extra` arguments.
fn cargo_tree(krate: &str, extra: &[&str]) -> String {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = std::process::Command::new(cargo)
        .args(["tree", "--offline", "-p", krate, "-e", "normal", "--prefix", "none"])
        .args(extra)
        .current_dir(root())
        .output()
        .expect("cargo tree runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn the_crate_graph_draws_the_pipeline() {
    // ARCHITECTURE.md: which stage may depend on which, enforced on the real graph.
    let forbidden: &[(&str, &[&str])] = &[
        // The shared vocabulary parses nothing and knows no stage.
        ("fcd-model", &["tree-sitter", "fcd-frontends ", "fcd-verify ", "fcd-runtime ", "fcd v", "toml ", "ed25519", "rusqlite"]),
        // Frontends never read TOML, never sign and never touch the runtime.
        ("fcd-frontends", &["toml ", "fcd v", "fcd-verify ", "fcd-runtime ", "ed25519", "rusqlite"]),
        // Checking a certificate or admitting a call never builds a parser.
        ("fcd-verify", &["tree-sitter", "fcd-frontends ", "fcd-compiler ", "fcd-runtime ", "fcd v", "toml ", "rusqlite"]),
        // The runtime checks certificates with the one verifier (fcd-verify), which builds no parser.
        ("fcd-runtime", &["tree-sitter", "fcd-frontends ", "fcd-compiler ", "fcd-lifecycle ", "fcd v", "toml "]),
        // The lifecycle model and history check sit on the runtime's decisions only: no parser, no compiler
        // (and no verifier of their own: see the direct dependencies below).
        ("fcd-lifecycle", &["tree-sitter", "fcd-frontends ", "fcd-compiler ", "fcd v", "toml "]),
        // The gateway admits and forwards; it never builds a parser or the compiler.
        ("fcd-gateway", &["tree-sitter", "fcd-frontends ", "fcd-compiler ", "fcd-lifecycle ", "fcd v"]),
        // The compiler signs nothing and admits nothing.
        ("fcd-compiler", &["fcd-verify ", "fcd-runtime ", "fcd v", "ed25519", "rusqlite"]),
        // The oracle is independent of everything of ours.
        ("fcd-oracle", &["fcd-"]),
    ];
    for (krate, banned) in forbidden {
        let tree = dependencies(krate);
        assert!(tree.lines().next().is_some_and(|l| l.starts_with(&format!("{krate} v"))), "the check reads the real tree of {krate}:\n{tree}");
        for dep in tree.lines().skip(1) {
            if let Some(b) = banned.iter().find(|b| dep.starts_with(**b)) {
                panic!("{krate} depends on `{b}` ({dep}):\n{tree}");
            }
        }
    }
    assert!(dependencies("fcd-frontends").lines().any(|l| l.starts_with("tree-sitter ")), "the check sees tree-sitter where it is");
    // The lifecycle reaches the verifier only through the runtime, never directly.
    let direct = direct_dependencies("fcd-lifecycle");
    assert!(direct.lines().any(|l| l.starts_with("fcd-runtime ")), "the check reads lifecycle's direct dependencies:\n{direct}");
    assert!(!direct.lines().any(|l| l.starts_with("fcd-verify ")), "fcd-lifecycle depends on fcd-verify directly:\n{direct}");
}

#[test]
fn each_language_is_a_crate_over_the_core() {
    // ARCHITECTURE.md: a language's crate depends on the shared core and nothing heavier;
    // no language reaches another, and none reaches a later stage.
    let languages = ["fcd-frontend-python", "fcd-frontend-go", "fcd-frontend-javascript", "fcd-frontend-csharp"];
    let later = ["fcd-compiler ", "fcd-verify ", "fcd-runtime ", "fcd v", "toml ", "ed25519", "rusqlite"];
    for krate in languages {
        let tree = dependencies(krate);
        assert!(tree.lines().next().is_some_and(|l| l.starts_with(&format!("{krate} v"))), "the check reads the real tree of {krate}:\n{tree}");
        assert!(tree.lines().any(|l| l.starts_with("fcd-frontends ")), "{krate} is written over the core (fcd-frontends):\n{tree}");
        for dep in tree.lines().skip(1) {
            let other = languages.iter().find(|l| dep.starts_with(&format!("{l} ")));
            let banned = later.iter().find(|b| dep.starts_with(**b));
            assert!(other.is_none() && banned.is_none(), "{krate} depends on `{dep}`:\n{tree}");
        }
    }
}

/// The direct normal dependencies of one workspace crate.
fn direct_dependencies(krate: &str) -> String {
    cargo_tree(krate, &["--depth", "1"])
}

#[test]
fn no_import_cycles_between_modules() {
    // A module that imports one that imports it back has no place in the pipeline's order:
    // at every level (top-level modules, a language's modules, the runtime's parts).
    let mut crates = 0;
    let mut found = Vec::new();
    for dir in crate_dirs() {
        let src = dir.join("src");
        if !src.is_dir() {
            continue;
        }
        let graph = crate::module_graph::read(&src);
        crates += 1;
        let cycles = crate::module_graph::cycles(&graph);
        let shown: Vec<String> = cycles.iter().map(|c| c.iter().map(|m| m.join("::")).collect::<Vec<_>>().join(" -> ")).collect();
        found.extend(shown.into_iter().map(|c| format!("{}: {c}", src.strip_prefix(root()).unwrap_or(&src).display())));
    }
    assert!(found.is_empty(), "modules import each other in a cycle:\n  {}", found.join("\n  "));
    assert!(crates >= 10, "the check read every crate ({crates})");
}
