//! Questions asked of every package of the module, not only of those the
//! handler imports: which methods a call through a release type may run
//! (any package may declare one), and whether an exported package variable
//! a pinned closure reads is written anywhere.

use std::collections::BTreeMap;

use fcd_frontend_go::{Go, Handoff, Settings};
use fcd_frontends::{Analysis, Env, Escalation, EscalationCode, LanguageSettings, RegionKind, RegionSpec, analyze_with};

use crate::module;

/// The handler package: an interface of the release, one implementation,
/// and a handler literal handed to the package's `New`, which reads the
/// exported `ErrMissing`.
const HANDLER: &str = "package h

import (
\t\"context\"
\t\"errors\"
)

// Deps hands the handler its client.
type Deps interface {
\tClient(ctx context.Context) (string, error)
}

// Base answers the client it was made with.
type Base struct{ c string }

func (b Base) Client(_ context.Context) (string, error) { return b.c, nil }

// ErrMissing is what New's wrapper panics with.
var ErrMissing = errors.New(\"no deps\")

// New keeps the handler.
func New(handler any) T {
\tif handler == nil {
\t\tpanic(ErrMissing)
\t}
\treturn T{handler}
}

func F() T {
\treturn New(func(ctx context.Context, deps Deps) any {
\t\tc, _ := deps.Client(ctx)
\t\treturn c
\t})
}
";

/// The handler's package with `replace` swapped `with`, plus `more` files
/// (path, text), registered with `pinned` in `source.pinned-functions` and
/// the literal handed `via` `New` when `via` is set.
fn register(replace: (&str, &str), more: &[(&str, &str)], pinned: &[(&str, &str)], via: bool) -> Result<Analysis, Escalation> {
    let handler = HANDLER.replace(replace.0, replace.1);
    let mut files = vec![("pkg/h/h.go", handler.as_str())];
    files.extend_from_slice(more);
    registered(module::load(&files, &["pkg/h/h.go"]), pinned, via)
}

fn registered(release: module::Loaded, pinned: &[(&str, &str)], via: bool) -> Result<Analysis, Escalation> {
    let pinned_functions = pinned.iter().map(|(name, digest)| ((*name).to_owned(), vec![(*digest).to_owned()])).collect();
    let handoff: BTreeMap<String, Handoff> =
        if via { [("r".to_owned(), Handoff { via: vec!["New".into()], ..Handoff::default() })].into() } else { BTreeMap::new() };
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
    let e = escalates(register(NONE, &[], &[], false));
    assert!(e.detail.contains("`Deps#Client`") && e.detail.contains("`Base.Client` (pkg/h/h.go:") && e.detail.contains("pin `pkg/h.Base.Client`"), "{e}");
    let base = printed_digest(&e);
    register(NONE, &[], &[("pkg/h.Base.Client", &base)], false).expect("registers");
    // Another package of the module (a command the handler never imports) implements it too.
    let e = escalates(register(NONE, &[("cmd/server/main.go", CMD)], &[("pkg/h.Base.Client", &base)], false));
    assert!(e.detail.contains("`fileDeps.Client` (cmd/server/main.go:") && e.detail.contains("pin `cmd/server.fileDeps.Client`"), "{e}");
    assert_eq!(e.anchor.as_ref().map(|a| a.file.as_str()), Some("cmd/server/main.go"));
    let file_deps = printed_digest(&e);
    register(NONE, &[("cmd/server/main.go", CMD)], &[("pkg/h.Base.Client", &base), ("cmd/server.fileDeps.Client", &file_deps)], false)
        .expect("registers once read and pinned");
    // The pinned implementation's body changes: its digest does.
    let e = escalates(register(("return b.c, nil", "return b.c + \"?\", nil"), &[], &[("pkg/h.Base.Client", &base)], false));
    assert!(e.detail.contains("`pkg/h.Base.Client` is pinned") && !e.detail.contains(&base), "{e}");
}

#[test]
fn a_package_of_the_module_not_read_leaves_the_implementations_unknown() {
    let release = module::load_with(&[("pkg/h/h.go", HANDLER), ("real/x.go", "package x\n")], &["pkg/h/h.go"], |root| {
        std::os::unix::fs::symlink(root.join("real"), root.join("linked")).expect("links");
    });
    assert!(release.unread.contains_key("linked"), "{:?}", release.unread);
    let e = escalates(registered(release, &[], false));
    assert!(e.detail.contains("not every package of the module is read") && e.detail.contains("linked"), "{e}");
    // A file of another package that does not parse: the same.
    let e = escalates(register(NONE, &[("internal/x/x.go", "package x\n\nfunc (")], &[], false));
    assert!(e.detail.contains("internal/x/x.go does not parse"), "{e}");
}

#[test]
fn the_function_a_handler_is_handed_to_is_pinned_and_the_variables_it_reads_unwritten() {
    let base = printed_digest(&escalates(register(NONE, &[], &[], false)));
    // `New` runs around the handler: it must be pinned too.
    let e = escalates(register(NONE, &[], &[("pkg/h.Base.Client", &base)], true));
    assert!(e.detail.contains("`pkg/h.New` is defined in the release") && e.detail.contains("handed to"), "{e}");
    let new = printed_digest(&e);
    let pins = [("pkg/h.Base.Client", base.as_str()), ("pkg/h.New", new.as_str())];
    register(NONE, &[], &pins, true).expect("registers: nothing writes ErrMissing");
    // Plain reads elsewhere in the module change nothing.
    let reader = "package boot\n\nimport h \"example.com/m/pkg/h\"\n\nfunc Is(err error) bool { return err == h.ErrMissing }\n";
    register(NONE, &[("internal/boot/boot.go", reader)], &pins, true).expect("registers");
    // A write from a package the handler does not import: the closure no longer binds it.
    for write in ["h.ErrMissing = nil", "p := &h.ErrMissing\n\t_ = p", "h.ErrMissing = fmt.Errorf(\"other\")"] {
        let writer = format!("package boot\n\nimport h \"example.com/m/pkg/h\"\n\nfunc Boot() {{\n\t{write}\n}}\n");
        let e = escalates(register(NONE, &[("internal/boot/boot.go", &writer)], &pins, true));
        assert!(e.detail.contains("`pkg/h.ErrMissing` is used at internal/boot/boot.go:6") && e.detail.contains("other than by a plain read"), "{write}: {e}");
    }
    // A dot import or a linkname anywhere could write it without naming its package.
    let dot = "package boot\n\nimport . \"example.com/m/pkg/h\"\n\nfunc Boot() { ErrMissing = nil }\n";
    let e = escalates(register(NONE, &[("internal/boot/boot.go", dot)], &pins, true));
    assert!(e.detail.contains("dot-imports"), "{e}");
    let linkname = "package boot\n\nimport _ \"unsafe\"\n\n//go:linkname missing example.com/m/pkg/h.ErrMissing\nvar missing error\n";
    let e = escalates(register(NONE, &[("internal/boot/boot.go", linkname)], &pins, true));
    assert!(e.detail.contains("go:linkname"), "{e}");
    // New's body changed: another digest.
    let e = escalates(register(("return T{handler}", "return T{nil}"), &[], &pins, true));
    assert!(e.detail.contains("`pkg/h.New` is pinned") && !e.detail.contains(&new), "{e}");
}
