//! Code the module installs around every request (an SDK's middleware and
//! hooks) is bound like code a handler calls: a region, or pinned by the
//! digest of its closure; what no pin can name escalates.

use fcd_frontends::{Analysis, Escalation, EscalationCode};

use crate::module;

/// A handler literal that only answers its argument.
const HANDLER: &str = "package h\n\nfunc F() T {\n\treturn New(func(msg string) any {\n\t\treturn msg\n\t})\n}\n";

/// A package of middleware factories the server imports.
const MW: &str = "package mw

import \"github.com/modelcontextprotocol/go-sdk/mcp\"

// Agent answers a middleware that passes every request on.
func Agent(name string) mcp.Middleware {
\treturn func(next mcp.MethodHandler) mcp.MethodHandler { return next }
}

// Agent2 answers a middleware that runs the one it is given.
func Agent2(inner mcp.Middleware) mcp.Middleware { return inner }

// Wrap answers a middleware around the function it is given.
func Wrap(f func()) mcp.Middleware {
\treturn func(next mcp.MethodHandler) mcp.MethodHandler { f(); return next }
}
";

/// A go-sdk server installing a function of its package, a factory of
/// another package of the release, a literal (and a local bound to one),
/// and the SDK's own middleware.
const SERVER: &str = "package main

import (
\t\"context\"

\t\"example.com/m/internal/mw\"
\t\"github.com/modelcontextprotocol/go-sdk/mcp\"
)

func logged(next mcp.MethodHandler) mcp.MethodHandler { return next }

func main() {
\ts := mcp.NewServer(nil, nil)
\ts.AddReceivingMiddleware(logged)
\ts.AddReceivingMiddleware(mw.Agent(\"fcd\"))
\ts.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
\t\treturn func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
\t\t\treturn next(ctx, method, req)
\t\t}
\t})
\ttimed := func(next mcp.MethodHandler) mcp.MethodHandler { return next }
\ts.AddSendingMiddleware(timed)
\ts.AddReceivingMiddleware(mcp.DefaultMiddleware())
}
";

/// The release: the handler, `server` as cmd/server/main.go, `MW`, and
/// `pinned` in `source.pinned-functions`.
fn serving(server: &str, pinned: &[(String, String)]) -> Result<Analysis, Escalation> {
    let release = module::load(&[("pkg/h/h.go", HANDLER), ("cmd/server/main.go", server), ("internal/mw/mw.go", MW)], &["pkg/h/h.go"]);
    let pinned: Vec<(&str, &str)> = pinned.iter().map(|(name, digest)| (name.as_str(), digest.as_str())).collect();
    crate::module_wide::registered(release, &pinned)
}

/// Pins each installed piece the escalations name, one at a time, until the
/// release registers: the names pinned, with their digests.
fn pin_all(server: &str) -> Vec<(String, String)> {
    crate::module_wide::pin_all(|pinned| serving(server, pinned))
}

fn escalates(server: &str, pinned: &[(String, String)]) -> Escalation {
    let e = serving(server, pinned).map(|_| ()).expect_err("escalates");
    assert_eq!(e.code, EscalationCode::InventoryViolation, "{e}");
    e
}

#[test]
fn every_piece_of_code_a_server_installs_around_requests_is_pinned() {
    let pinned = pin_all(SERVER);
    let mut names: Vec<&str> = pinned.iter().map(|(k, _)| k.as_str()).collect();
    names.sort();
    // The SDK's own middleware is a dependency's code: trusted by identity, never asked for.
    // `Wrap` installs nothing here, but its literal can wrap a handler: asked for by its type.
    assert_eq!(
        names,
        ["cmd/server.logged", "cmd/server.main#AddReceivingMiddleware", "cmd/server.main#AddSendingMiddleware", "internal/mw.Agent", "internal/mw.Wrap"]
    );
    // A change to any piece changes its digest: the old pin escalates, naming the installing call.
    for (from, to, key) in [
        ("return next(ctx, method, req)", "return next(ctx, \"tools/list\", req)", "cmd/server.main#AddReceivingMiddleware"),
        ("{ return next }\n\ts.AddSending", "{ return logged(next) }\n\ts.AddSending", "cmd/server.main#AddSendingMiddleware"),
        (
            "func logged(next mcp.MethodHandler) mcp.MethodHandler { return next }",
            "func logged(next mcp.MethodHandler) mcp.MethodHandler { return nil }",
            "cmd/server.logged",
        ),
    ] {
        let changed = SERVER.replace(from, to);
        assert_ne!(changed, SERVER, "{from}");
        let e = escalates(&changed, &pinned);
        assert!(
            e.detail.contains(&format!("`{key}` is pinned"))
                && e.detail.contains("(cmd/server/main.go:")
                && e.detail.contains("handed to it as a function value"),
            "{key}: {e}"
        );
        assert_eq!(e.anchor.as_ref().map(|a| a.file.as_str()), Some("cmd/server/main.go"));
    }
}

#[test]
fn a_package_not_read_leaves_what_is_installed_unknown() {
    // A package holding a non-Go source is not read whole: middleware it might install is unseen.
    let pinned = pin_all(SERVER);
    let files = [
        ("pkg/h/h.go", HANDLER),
        ("cmd/server/main.go", SERVER),
        ("internal/mw/mw.go", MW),
        ("internal/asm/a.go", "package asm\n"),
        ("internal/asm/a_amd64.s", "TEXT ·f(SB),0,$0\n"),
    ];
    let release = module::load(&files, &["pkg/h/h.go"]);
    let pinned: Vec<(&str, &str)> = pinned.iter().map(|(name, digest)| (name.as_str(), digest.as_str())).collect();
    let e = crate::module_wide::registered(release, &pinned).map(|_| ()).expect_err("escalates");
    assert!(e.detail.contains("what the server installs around every request, or hands the handler, is unknown") && e.detail.contains("internal/asm"), "{e}");
}

#[test]
fn installed_code_no_pin_can_name_escalates() {
    let pinned = pin_all(SERVER);
    for (install, why) in [
        ("s.AddReceivingMiddleware(cfg.extra)", "`cfg.extra` is not a function fcd can name"),
        ("s.AddReceivingMiddleware(chain[0])", "`chain[0]` is not a function, a call of one, or a function literal"),
        ("s.AddReceivingMiddleware(mw.Wrap(func() {}))", "hands a function literal to what builds it"),
        ("timed = logged\n\ts.AddReceivingMiddleware(timed)", "`timed` is neither a function of the release, a parameter, nor a local bound once"),
        ("s.AddReceivingMiddleware(s.Current())", "is not the call of a function fcd can name"),
    ] {
        let server = SERVER.replace("\ts.AddReceivingMiddleware(mcp.DefaultMiddleware())", &format!("\t{install}"));
        let e = escalates(&server, &pinned);
        assert!(e.detail.contains("no pin can name") && e.detail.contains(why), "{install}: {e}");
    }
}

#[test]
fn a_function_of_the_release_handed_to_a_factory_is_bound_too() {
    // The SDK's factory is trusted, but a release function it is handed may run inside what it
    // builds; the same for a release factory.
    for install in ["s.AddReceivingMiddleware(mcp.Chain(logged))", "s.AddReceivingMiddleware(mw.Agent2(logged))"] {
        let server = SERVER.replace("\ts.AddReceivingMiddleware(mcp.DefaultMiddleware())", &format!("\t{install}"));
        let server = server.replace("s.AddReceivingMiddleware(logged)\n", "");
        let names = pin_all(&server);
        assert!(names.iter().any(|(k, _)| k == "cmd/server.logged"), "{install}: {names:?}");
    }
}

#[test]
fn a_variadic_parameter_spread_into_the_server_is_followed_to_every_call() {
    let builder = "package main

import \"github.com/modelcontextprotocol/go-sdk/mcp\"

func build(name string, extra ...mcp.Middleware) *mcp.Server {
\ts := mcp.NewServer(nil, nil)
\ts.AddReceivingMiddleware(extra...)
\treturn s
}

func logged(next mcp.MethodHandler) mcp.MethodHandler { return next }

func main() {
\t_ = build(\"fcd\")
}
";
    // No call hands it middleware: `logged` (and `MW`'s factories) are only asked for by their
    // type, as code that can wrap a handler.
    let sorted = |pinned: Vec<(String, String)>| {
        let mut keys: Vec<String> = pinned.into_iter().map(|(k, _)| k).collect();
        keys.sort();
        keys
    };
    assert_eq!(sorted(pin_all(builder)), ["cmd/server.logged", "internal/mw.Agent", "internal/mw.Wrap"]);
    // A call handing it a function: that function is installed, and pinned like any other.
    let handing = builder.replace("build(\"fcd\")", "build(\"fcd\", logged)");
    let e = escalates(&handing, &[]);
    assert!(e.detail.contains("`cmd/server.logged` is defined in the release") && e.detail.contains("(cmd/server/main.go:14)"), "{e}");
    assert_eq!(sorted(pin_all(&handing)), ["cmd/server.logged", "internal/mw.Agent", "internal/mw.Wrap"]);
    let e = escalates(&builder.replace("_ = build(\"fcd\")", "f := build\n\t_ = f(\"fcd\")"), &[]);
    assert!(e.detail.contains("uses `build` other than by calling it"), "{e}");
}

#[test]
fn mcp_go_hooks_are_installed_code() {
    let hooks = "package main

import (
\t\"context\"

\t\"github.com/mark3labs/mcp-go/server\"
)

func seen(ctx context.Context, id any, message any) {}

func main() {
\thooks := &server.Hooks{
\t\tOnBeforeAny: []server.BeforeAnyHookFunc{
\t\t\tfunc(ctx context.Context, _ any, _ string, _ any) {},
\t\t},
\t}
\thooks.AddOnSuccess(seen)
\t_ = server.NewMCPServer(\"s\", \"1\", server.WithHooks(hooks))
}
";
    let pinned = pin_all(hooks);
    let mut names: Vec<&str> = pinned.iter().map(|(k, _)| k.as_str()).collect();
    names.sort();
    // The go-sdk middleware factories of `MW` can wrap a handler: asked for by their type.
    assert_eq!(names, ["cmd/server.main#OnBeforeAny", "cmd/server.seen", "internal/mw.Agent", "internal/mw.Wrap"]);
    // A hook list filled outside a literal: no pin can name what it holds.
    let e = escalates(&hooks.replace("\thooks.AddOnSuccess(seen)", "\thooks.OnSuccess = append(hooks.OnSuccess, nil)"), &pinned);
    assert!(e.detail.contains("no pin can name"), "{e}");
}

#[test]
fn a_function_a_region_calls_through_a_parameter_is_followed_to_every_call() {
    // The handler calls `getClient`, a parameter of `F`: what runs is whatever each call of `F`
    // in the module hands it, followed back through parameters.
    let handler = "package h\n\nfunc F(getClient func() string) T {\n\treturn New(func(msg string) any {\n\t\treturn getClient() + msg\n\t})\n}\n";
    let server = "package main

import h \"example.com/m/pkg/h\"

func token() string { return \"t\" }

func tools(get func() string) { _ = h.F(get) }

func main() {
\ttools(token)
\tlocal := func() string { return \"local\" }
\t_ = h.F(local)
}
";
    let analysed = |server: &str, pinned: &[(String, String)]| {
        let release = module::load(&[("pkg/h/h.go", handler), ("cmd/server/main.go", server)], &["pkg/h/h.go"]);
        let pinned: Vec<(&str, &str)> = pinned.iter().map(|(name, digest)| (name.as_str(), digest.as_str())).collect();
        crate::module_wide::registered(release, &pinned)
    };
    let mut pinned: Vec<(String, String)> = Vec::new();
    while let Err(e) = analysed(server, &pinned) {
        let end = e.detail.find("` is defined in the release").unwrap_or_else(|| panic!("names what to pin: {e}"));
        let key = &e.detail[e.detail[..end].rfind('`').expect("a name") + 1..end];
        let at = e.detail.find("digest sha256:").expect("prints a digest") + "digest ".len();
        pinned.push((key.to_owned(), e.detail[at..at + 71].to_owned()));
        assert!(pinned.len() < 5, "{pinned:?}");
    }
    let mut names: Vec<&str> = pinned.iter().map(|(k, _)| k.as_str()).collect();
    names.sort();
    // The literal is keyed by the function handing it on and the parameter receiving it.
    assert_eq!(names, ["cmd/server.main#getClient", "cmd/server.token"]);
    // A changed literal, a value no pin can name, and the function used other than by a call.
    let e = analysed(&server.replace("return \"local\"", "return \"other\""), &pinned).map(|_| ()).expect_err("escalates");
    assert!(e.detail.contains("`cmd/server.main#getClient` is pinned"), "{e}");
    for (changed, why) in [
        (server.replace("_ = h.F(local)", "_ = h.F(cfg.get)"), "`cfg.get` is not a function fcd can name"),
        (server.replace("_ = h.F(local)", "f := h.F\n\t_ = f(local)"), "uses `F` other than by calling it"),
    ] {
        let e = analysed(&changed, &pinned).map(|_| ()).expect_err("escalates");
        assert!(e.detail.contains("no pin can name") && e.detail.contains(why), "{why}: {e}");
    }
}
