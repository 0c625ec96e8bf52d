//! Questions asked of every package of the module, not only of those the
//! handler imports: which methods a call through a release type may run
//! (any package may declare one), and whether an exported package variable
//! a pinned closure reads is written anywhere.

use fcd_frontend_go::{Go, Settings};
use fcd_frontends::{Analysis, Env, Escalation, EscalationCode, LanguageSettings, RegionKind, RegionSpec, analyze_with};

use crate::module;

/// The handler package: an interface of the release, one implementation,
/// and a handler literal calling through the interface.
const HANDLER: &str = "package h

import \"context\"

// Deps hands the handler its client.
type Deps interface {
\tClient(ctx context.Context) (string, error)
}

// Base answers the client it was made with.
type Base struct{ c string }

func (b Base) Client(_ context.Context) (string, error) { return b.c, nil }

func F() T {
\treturn New(func(ctx context.Context, deps Deps) any {
\t\tc, _ := deps.Client(ctx)
\t\treturn c
\t})
}
";

/// The handler's package with `replace` swapped `with`, plus `more` files
/// (path, text), registered with `pinned` in `source.pinned-functions`.
fn register(replace: (&str, &str), more: &[(&str, &str)], pinned: &[(&str, &str)]) -> Result<Analysis, Escalation> {
    let handler = HANDLER.replace(replace.0, replace.1);
    let mut files = vec![("pkg/h/h.go", handler.as_str())];
    files.extend_from_slice(more);
    registered(module::load(&files, &["pkg/h/h.go"]), pinned)
}

/// The release analysed with one handler literal region `r` in `F`, and
/// `pinned` in `source.pinned-functions`.
pub(crate) fn registered(release: module::Loaded, pinned: &[(&str, &str)]) -> Result<Analysis, Escalation> {
    let pinned_functions = pinned.iter().map(|(name, digest)| ((*name).to_owned(), vec![(*digest).to_owned()])).collect();
    let env = Env {
        libraries: release.libraries,
        packages: release.packages,
        unread: release.unread,
        language: LanguageSettings::new(Settings { pinned_functions, ..Settings::default() }),
        ..Env::default()
    };
    let region = RegionSpec { name: "r".into(), kind: RegionKind::Literal("F".into()), optional: false, file: None };
    analyze_with(&Go, &release.files, &[region], &[], &env)
}

/// Pins what each escalation of `registering` asks for (the key it names
/// and the digest it prints), until the release registers: the keys and
/// digests pinned, in order. Panics on an escalation naming nothing to pin.
pub(crate) fn pin_all(registering: impl Fn(&[(String, String)]) -> Result<Analysis, Escalation>) -> Vec<(String, String)> {
    let mut pinned: Vec<(String, String)> = Vec::new();
    for _ in 0..10 {
        let Err(e) = registering(&pinned) else { return pinned };
        assert_eq!(e.code, EscalationCode::InventoryViolation, "{e}");
        let key = ["` is defined in the release", "` in `source.pinned-functions`"]
            .iter()
            .find_map(|end| {
                let end = e.detail.find(end)?;
                Some(e.detail[e.detail[..end].rfind('`')? + 1..end].to_owned())
            })
            .unwrap_or_else(|| panic!("names what to pin: {e}"));
        pinned.push((key, printed_digest(&e)));
    }
    panic!("still escalates after pinning {pinned:?}")
}

fn escalates(result: Result<Analysis, Escalation>) -> Escalation {
    let e = result.map(|_| ()).expect_err("escalates");
    assert_eq!(e.code, EscalationCode::InventoryViolation, "{e}");
    e
}

/// The digest an escalation prints to pin.
fn printed_digest(e: &Escalation) -> String {
    let at = e.detail.find("digest sha256:").expect("prints a digest") + "digest ".len();
    e.detail[at..at + 71].to_owned()
}

const NONE: (&str, &str) = ("", "");

/// A second implementation, in a package nothing of the handler imports, that writes a file.
const CMD: &str = "package main

import (
\t\"context\"
\t\"os\"
)

type fileDeps struct{}

func (fileDeps) Client(_ context.Context) (string, error) {
\t_ = os.WriteFile(\"/tmp/out\", []byte(\"x\"), 0o600)
\treturn \"\", nil
}

func main() {}
";

#[test]
fn every_method_a_call_through_a_release_interface_may_run_is_pinned() {
    // Unpinned: the implementation is named, with its file and the digest to pin.
    let e = escalates(register(NONE, &[], &[]));
    assert!(e.detail.contains("`Deps#Client`") && e.detail.contains("`Base.Client` (pkg/h/h.go:") && e.detail.contains("pin `pkg/h.Base.Client`"), "{e}");
    let base = printed_digest(&e);
    register(NONE, &[], &[("pkg/h.Base.Client", &base)]).expect("registers");
    // Another package of the module (a command the handler never imports) implements it too.
    let e = escalates(register(NONE, &[("cmd/server/main.go", CMD)], &[("pkg/h.Base.Client", &base)]));
    assert!(e.detail.contains("`fileDeps.Client` (cmd/server/main.go:") && e.detail.contains("pin `cmd/server.fileDeps.Client`"), "{e}");
    assert_eq!(e.anchor.as_ref().map(|a| a.file.as_str()), Some("cmd/server/main.go"));
    let file_deps = printed_digest(&e);
    register(NONE, &[("cmd/server/main.go", CMD)], &[("pkg/h.Base.Client", &base), ("cmd/server.fileDeps.Client", &file_deps)])
        .expect("registers once read and pinned");
    // The pinned implementation's body changes: its digest does.
    let e = escalates(register(("return b.c, nil", "return b.c + \"?\", nil"), &[], &[("pkg/h.Base.Client", &base)]));
    assert!(e.detail.contains("`pkg/h.Base.Client` is pinned") && !e.detail.contains(&base), "{e}");
}

#[test]
fn a_package_of_the_module_not_read_leaves_the_implementations_unknown() {
    let release = module::load_with(&[("pkg/h/h.go", HANDLER), ("real/x.go", "package x\n")], &["pkg/h/h.go"], |root| {
        std::os::unix::fs::symlink(root.join("real"), root.join("linked")).expect("links");
    });
    assert!(release.unread.contains_key("linked"), "{:?}", release.unread);
    let e = escalates(registered(release, &[]));
    assert!(e.detail.contains("not every package of the module is read") && e.detail.contains("linked"), "{e}");
    // A directory without Go files is no package: what else it holds is not compiled.
    let base = printed_digest(&escalates(register(NONE, &[("docs/notes.h", "/* notes */\n")], &[])));
    register(NONE, &[("docs/notes.h", "/* notes */\n")], &[("pkg/h.Base.Client", &base)]).expect("registers");
    // A package holding a non-Go source is not read whole.
    let e =
        escalates(register(NONE, &[("internal/asm/a.go", "package asm\n"), ("internal/asm/a_amd64.s", "TEXT ·f(SB),0,$0\n")], &[("pkg/h.Base.Client", &base)]));
    assert!(e.detail.contains("package internal/asm is not read"), "{e}");
    // A file of another package that does not parse: the same.
    let e = escalates(register(NONE, &[("internal/x/x.go", "package x\n\nfunc (")], &[]));
    assert!(e.detail.contains("internal/x/x.go does not parse"), "{e}");
}

/// A handler package calling `u.Done` of package `pkg/u` (`util`), with
/// `more` files; `u.Done` pinned by `digest` when given.
fn calling(util: &str, more: &[(&str, &str)], digest: Option<&str>) -> Result<Analysis, Escalation> {
    let handler = "package h\n\nimport u \"example.com/m/pkg/u\"\n\nfunc F() T {\n\treturn New(func(msg string) any {\n\t\treturn u.Done(msg)\n\t})\n}\n";
    let mut files = vec![("pkg/h/h.go", handler), ("pkg/u/u.go", util)];
    files.extend_from_slice(more);
    let release = module::load(&files, &["pkg/h/h.go"]);
    let pinned_functions = digest.map(|d| ("pkg/u.Done".to_owned(), vec![d.to_owned()])).into_iter().collect();
    let imports = [("u".into(), vec!["example.com/m/pkg/u".into()])].into();
    let env = Env {
        libraries: release.libraries,
        packages: release.packages,
        unread: release.unread,
        language: LanguageSettings::new(Settings { imports, pinned_functions, ..Settings::default() }),
        ..Env::default()
    };
    let region = RegionSpec { name: "r".into(), kind: RegionKind::Literal("F".into()), optional: false, file: None };
    analyze_with(&Go, &release.files, &[region], &[], &env)
}

/// `Done` reads the exported `Prefix` and the exported table `Names`.
const UTIL: &str = "package u

// Prefix starts every answer.
var Prefix = \"> \"

// Names maps a code to its names.
var Names = map[string][]string{\"a\": {\"x\", \"y\"}}

func Done(s string) string {
\tfor _, names := range Names {
\t\tfor _, n := range names {
\t\t\tif n == s {
\t\t\t\treturn Prefix + n
\t\t\t}
\t\t}
\t}
\treturn Prefix + s
}
";

#[test]
fn an_exported_variable_a_pinned_closure_reads_binds_while_no_code_of_the_module_writes_it() {
    let e = escalates(calling(UTIL, &[], None));
    assert!(e.detail.contains("`pkg/u.Done` is defined in the release"), "{e}");
    let digest = printed_digest(&e);
    calling(UTIL, &[], Some(&digest)).expect("registers: nothing writes Prefix or Names");
    // Plain reads elsewhere in the module change nothing.
    let reader = "package boot\n\nimport u \"example.com/m/pkg/u\"\n\nfunc Is(s string) bool { return s == u.Prefix && len(u.Names[s]) > 0 }\n";
    calling(UTIL, &[("internal/boot/boot.go", reader)], Some(&digest)).expect("registers");
    // A write from a package the handler does not import: the closure no longer binds them.
    for write in
        ["v.Prefix = \"\"", "p := &v.Prefix\n\t_ = p", "v.Names[\"a\"] = nil", "v.Names[\"a\"][0] = \"z\"", "v.Names = nil", "sort.Strings(v.Names[\"a\"])"]
    {
        let writer = format!("package boot\n\nimport v \"example.com/m/pkg/u\"\n\nfunc Boot() {{\n\t{write}\n}}\n");
        let e = escalates(calling(UTIL, &[("internal/boot/boot.go", &writer)], Some(&digest)));
        assert!(e.detail.contains("is used at internal/boot/boot.go:6") && e.detail.contains("other than by a plain read"), "{write}: {e}");
    }
    // A dot import or a linkname anywhere could write it without naming its package.
    let dot = "package boot\n\nimport . \"example.com/m/pkg/u\"\n\nfunc Boot() { Prefix = \"\" }\n";
    let e = escalates(calling(UTIL, &[("internal/boot/boot.go", dot)], Some(&digest)));
    assert!(e.detail.contains("dot-imports"), "{e}");
    let linkname = "package boot\n\nimport _ \"unsafe\"\n\n//go:linkname prefix example.com/m/pkg/u.Prefix\nvar prefix string\n";
    let e = escalates(calling(UTIL, &[("internal/boot/boot.go", linkname)], Some(&digest)));
    assert!(e.detail.contains("go:linkname"), "{e}");
    // A package of the module not read: whether one writes it is unknown.
    let e = escalates(calling(UTIL, &[("internal/x/x.go", "package x\n\nfunc (")], Some(&digest)));
    assert!(e.detail.contains("not every package of the module is read"), "{e}");
}

/// A handler literal handed to the package's `New`, which reads the exported
/// `ErrMissing`; `more` files beside, `pinned` in `source.pinned-functions`.
fn handed(new_body: &str, more: &[(&str, &str)], pinned: &[(&str, &str)]) -> Result<Analysis, Escalation> {
    let handler = format!(
        "package h\n\nimport \"errors\"\n\n// ErrMissing is what New panics with.\nvar ErrMissing = errors.New(\"no deps\")\n\n// New keeps the handler.\nfunc New(handler any) T {{\n{new_body}\n}}\n\nfunc F() T {{\n\treturn New(func(msg string) any {{\n\t\treturn msg\n\t}})\n}}\n"
    );
    let mut files = vec![("pkg/h/h.go", handler.as_str())];
    files.extend_from_slice(more);
    let release = module::load(&files, &["pkg/h/h.go"]);
    let pinned_functions = pinned.iter().map(|(name, digest)| ((*name).to_owned(), vec![(*digest).to_owned()])).collect();
    let handoff = [("r".to_owned(), fcd_frontend_go::Handoff { via: vec!["New".into()], ..Default::default() })].into();
    let env = Env {
        libraries: release.libraries,
        packages: release.packages,
        unread: release.unread,
        language: LanguageSettings::new(Settings { pinned_functions, handoff, ..Settings::default() }),
        ..Env::default()
    };
    let region = RegionSpec { name: "r".into(), kind: RegionKind::Literal("F".into()), optional: false, file: None };
    analyze_with(&Go, &release.files, &[region], &[], &env)
}

const NEW_BODY: &str = "\tif handler == nil {\n\t\tpanic(ErrMissing)\n\t}\n\treturn T{handler}";

#[test]
fn the_function_a_handler_literal_is_handed_to_is_pinned_with_the_variables_it_reads() {
    // `New` runs around the handler: it must be pinned.
    let e = escalates(handed(NEW_BODY, &[], &[]));
    assert!(e.detail.contains("`pkg/h.New` is defined in the release") && e.detail.contains("handed to"), "{e}");
    let new = printed_digest(&e);
    handed(NEW_BODY, &[], &[("pkg/h.New", &new)]).expect("registers: nothing writes ErrMissing");
    // A write to the variable it reads, from a package the handler does not import.
    let writer = "package boot\n\nimport h \"example.com/m/pkg/h\"\n\nfunc Boot() {\n\th.ErrMissing = nil\n}\n";
    let e = escalates(handed(NEW_BODY, &[("internal/boot/boot.go", writer)], &[("pkg/h.New", &new)]));
    assert!(e.detail.contains("is used at internal/boot/boot.go:6"), "{e}");
    // Its body changed: another digest.
    let e = escalates(handed("\treturn T{nil}", &[], &[("pkg/h.New", &new)]));
    assert!(e.detail.contains("`pkg/h.New` is pinned") && !e.detail.contains(&new), "{e}");
}
