//! A method pinned code runs through an interface is bound wherever in the
//! module it is declared: in a region or a listed closure, or pinned itself;
//! a pinned one brings the interface calls of its own closure.

use fcd_frontends::{Analysis, Escalation};

use crate::module;

/// A handler literal asking the registry package for the tool's name.
const HANDLER: &str = "package h

import \"example.com/m/internal/names\"

func F() T {
\treturn New(func(msg string) any {
\t\treturn names.Name(msg)
\t})
}
";

/// `Name` asks a resolver, an interface, for the name; `local` is an
/// implementation inside `Name`'s closure (it names it), so bound with it.
const NAMES: &str = "package names

// Resolver answers the name a tool is registered under.
type Resolver interface {
\tResolve(s string) string
}

// Current is the resolver the server set at start.
var current Resolver = local{}

type local struct{}

func (local) Resolve(s string) string { return s }

// Name asks the current resolver.
func Name(s string) string { return current.Resolve(s) }
";

/// Another package of the module with an implementation of its own, which
/// asks an interface of its own in turn.
const PLUGIN: &str = "package plugin

// Store keeps what a resolver saw.
type Store interface {
\tKeep(s string)
}

type memory struct{ seen []string }

func (m *memory) Keep(s string) { m.seen = append(m.seen, s) }

// Upper resolves a name by keeping it first.
type Upper struct{ store Store }

func (u Upper) Resolve(s string) string {
\tu.store.Keep(s)
\treturn s
}
";

fn registering(plugin: &str, pinned: &[(String, String)]) -> Result<Analysis, Escalation> {
    let release = module::load(&[("pkg/h/h.go", HANDLER), ("internal/names/names.go", NAMES), ("internal/plugin/plugin.go", plugin)], &["pkg/h/h.go"]);
    let pinned: Vec<(&str, &str)> = pinned.iter().map(|(name, digest)| (name.as_str(), digest.as_str())).collect();
    crate::module_wide::registered(release, &pinned)
}

/// Pins what each escalation asks for, until the release registers.
fn pin_all(plugin: &str) -> Vec<(String, String)> {
    crate::module_wide::pin_all(|pinned| registering(plugin, pinned))
}

#[test]
fn every_method_an_interface_call_of_pinned_code_may_run_is_bound() {
    let pinned = pin_all(PLUGIN);
    // `Name` (reached by the handler), then `Upper.Resolve` (which `Name`'s `current.Resolve` may
    // run), then `memory.Keep` (which `Upper.Resolve`'s `u.store.Keep` may run); `local.Resolve`
    // is in `Name`'s closure, so never asked for.
    let keys: Vec<&str> = pinned.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(keys, ["internal/names.Name", "internal/plugin.Upper.Resolve", "internal/plugin.memory.Keep"]);
    // An implementation that changes escalates at its declaration, naming the pin whose call runs it.
    let changed = PLUGIN.replace("\treturn s\n}", "\treturn \"other\"\n}");
    let e = registering(&changed, &pinned).map(|_| ()).expect_err("escalates");
    assert!(
        e.detail.contains("`internal/names.Name` runs `Upper.Resolve`")
            && e.detail.contains("through an interface")
            && e.detail.contains("which no reviewer listed"),
        "{e}"
    );
    assert_eq!(e.anchor.map(|a| (a.file, a.line)), Some(("internal/plugin/plugin.go".to_owned(), 15)));
    // A new implementation anywhere in the module is asked for too.
    let more = format!("{PLUGIN}\ntype Lower struct{{}}\n\nfunc (Lower) Resolve(s string) string {{ return s }}\n");
    let e = registering(&more, &pinned).map(|_| ()).expect_err("escalates");
    assert!(e.detail.contains("read it and pin `internal/plugin.Lower.Resolve`"), "{e}");
}

#[test]
fn a_method_named_like_no_called_interface_method_is_not_asked_for() {
    // `Keep` is only asked for once `Upper.Resolve`, which calls it through `Store`, is pinned;
    // a method no interface call of listed code names never is.
    let plugin = PLUGIN.replace("\tu.store.Keep(s)\n", "");
    let keys: Vec<String> = pin_all(&plugin).into_iter().map(|(k, _)| k).collect();
    assert_eq!(keys, ["internal/names.Name", "internal/plugin.Upper.Resolve"]);
}

#[test]
fn an_interface_call_of_an_installed_literal_is_followed_too() {
    // The middleware literal is pinned as `install#AddReceivingMiddleware`; the auditor it calls
    // through an interface is whatever `main` hands `install`, declared outside that closure.
    let server = "package main

import (
\t\"context\"

\t\"github.com/modelcontextprotocol/go-sdk/mcp\"
)

type auditor interface{ Note(method string) }

type fileAuditor struct{}

func (fileAuditor) Note(method string) {}

func install(s *mcp.Server, a auditor) {
\ts.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
\t\treturn func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
\t\t\ta.Note(method)
\t\t\treturn next(ctx, method, req)
\t\t}
\t})
}

func main() { install(mcp.NewServer(nil, nil), fileAuditor{}) }
";
    let files = [("pkg/h/h.go", HANDLER), ("internal/names/names.go", NAMES), ("internal/plugin/plugin.go", PLUGIN), ("cmd/server/main.go", server)];
    let pinned = crate::module_wide::pin_all(|pinned| {
        let as_str: Vec<(&str, &str)> = pinned.iter().map(|(k, d)| (k.as_str(), d.as_str())).collect();
        crate::module_wide::registered(module::load(&files, &["pkg/h/h.go"]), &as_str)
    });
    let keys: Vec<&str> = pinned.iter().map(|(k, _)| k.as_str()).collect();
    assert!(keys.contains(&"cmd/server.install#AddReceivingMiddleware") && keys.contains(&"cmd/server.fileAuditor.Note"), "{keys:?}");
}
