//! Code that can wrap a tool's handler is found by its type, wherever it is
//! and however it reaches the registration (a configuration field, a slice
//! built by `append`), and bound like code a handler calls: in a region or
//! a verified closure, pinned, or the registration escalates.

use fcd_frontends::{Analysis, Escalation};

use crate::module;

/// A handler literal that asks the registry package for the tool's name.
const HANDLER: &str = "package h

import \"example.com/m/internal/reg\"

func F() T {
\treturn New(func(msg string) any {
\t\treturn reg.Name(msg)
\t})
}
";

/// The release's registry: a middleware type, a registrar applying it, and
/// a wrapper inside the closure of `Name`, which the handler reaches.
const REG: &str = "package reg

import (
\t\"context\"

\t\"github.com/modelcontextprotocol/go-sdk/mcp\"
)

// Middleware wraps a tool's handler.
type Middleware func(next mcp.ToolHandler) mcp.ToolHandler

// Name answers the name a tool is registered under.
func Name(s string) string {
\t_ = Middleware(passThrough)
\treturn s
}

func passThrough(next mcp.ToolHandler) mcp.ToolHandler { return next }

// Register adds the tool wrapped in each middleware, the first outermost.
func Register(s *mcp.Server, t *mcp.Tool, h mcp.ToolHandler, mws ...Middleware) {
\tfor i := len(mws) - 1; i >= 0; i-- {
\t\th = mws[i](h)
\t}
\ts.AddTool(t, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return h(ctx, req) })
}
";

/// The command: a middleware factory whose result reaches the registrar
/// through a slice built by `append` and a configuration field.
const SERVER: &str = "package main

import (
\t\"context\"

\t\"example.com/m/internal/reg\"
\t\"github.com/modelcontextprotocol/go-sdk/mcp\"
)

type config struct{ wrap []reg.Middleware }

func audit(tag string) reg.Middleware {
\treturn func(next mcp.ToolHandler) mcp.ToolHandler {
\t\treturn func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
\t\t\treturn next(ctx, req)
\t\t}
\t}
}

func label(s string) string { return s }

func main() {
\tvar wraps []reg.Middleware
\twraps = append(wraps, audit(label(\"x\")))
\tcfg := config{wrap: wraps}
\treg.Register(mcp.NewServer(nil, nil), &mcp.Tool{Name: \"t\"}, nil, cfg.wrap...)
}
";

fn serving(server: &str, pinned: &[(String, String)]) -> Result<Analysis, Escalation> {
    serving_with(REG, server, pinned)
}

fn serving_with(reg: &str, server: &str, pinned: &[(String, String)]) -> Result<Analysis, Escalation> {
    let release = module::load(&[("pkg/h/h.go", HANDLER), ("internal/reg/reg.go", reg), ("cmd/server/main.go", server)], &["pkg/h/h.go"]);
    let pinned: Vec<(&str, &str)> = pinned.iter().map(|(name, digest)| (name.as_str(), digest.as_str())).collect();
    crate::module_wide::registered(release, &pinned)
}

/// Pins what each escalation names, until the release registers: the keys and digests.
fn pin_all(server: &str) -> Vec<(String, String)> {
    crate::module_wide::pin_all(|pinned| serving(server, pinned))
}

fn keys(pinned: &[(String, String)]) -> Vec<&str> {
    let mut keys: Vec<&str> = pinned.iter().map(|(k, _)| k.as_str()).collect();
    keys.sort();
    keys
}

#[test]
fn a_wrapper_handed_through_a_field_and_a_slice_is_asked_for_by_its_type() {
    let pinned = pin_all(SERVER);
    // `audit` reaches the registrar only through `append` and a field, which no value check
    // follows; `passThrough` is in `Name`'s closure, so `Name`'s pin binds it; `label` wraps nothing.
    assert_eq!(keys(&pinned), ["cmd/server.audit", "internal/reg.Name"]);
    // A wrapper that rewrites the request no longer has the reviewed digest.
    let changed = SERVER.replace("return next(ctx, req)", "req.Params.Arguments = nil\n\t\t\treturn next(ctx, req)");
    let e = serving(&changed, &pinned).map(|_| ()).expect_err("escalates");
    assert!(
        e.detail.contains("code that can wrap a tool's handler")
            && e.detail.contains("`cmd/server.audit` is pinned")
            && e.detail.contains("no reviewer listed"),
        "{e}"
    );
    assert_eq!(e.anchor.map(|a| (a.file, a.line)), Some(("cmd/server/main.go".to_owned(), 13)));
    // Without the check the factory would never be asked for: nothing names it on the route.
    let unpinned: Vec<(String, String)> = pinned.iter().filter(|(k, _)| k != "cmd/server.audit").cloned().collect();
    let e = serving(SERVER, &unpinned).map(|_| ()).expect_err("escalates");
    assert!(e.detail.contains("`cmd/server.audit` is defined in the release"), "{e}");
}

#[test]
fn every_spelling_of_a_wrapper_is_asked_for() {
    for (code, key) in [
        ("type gate struct{}\n\nfunc (g *gate) check(next mcp.ToolHandler) mcp.ToolHandler { return next }\n", "cmd/server.gate.check"),
        ("func same[T any](t T) T { return t }\n", "cmd/server.same"),
        ("type handler = mcp.ToolHandler\n\nfunc viaAlias(h handler) handler { return h }\n", "cmd/server.viaAlias"),
        ("func named(next mcp.ToolHandler) (out mcp.ToolHandler) { return next }\n", "cmd/server.named"),
        ("func typed(next mcp.ToolHandlerFor[map[string]any, any]) mcp.ToolHandlerFor[map[string]any, any] { return next }\n", "cmd/server.typed"),
        ("func method(next mcp.MethodHandler) mcp.MethodHandler { return next }\n", "cmd/server.method"),
        ("func inner() {\n\t_ = func(next mcp.ToolHandler) mcp.ToolHandler { return next }\n}\n", "cmd/server.inner"),
    ] {
        let server = format!("{SERVER}\n{code}");
        let pinned = pin_all(&server);
        assert!(keys(&pinned).contains(&key), "{key}: {pinned:?}");
    }
    // mcp-go's handler type.
    let mcp_go = "package main

import \"github.com/mark3labs/mcp-go/server\"

func logged(next server.ToolHandlerFunc) server.ToolHandlerFunc { return next }

func main() {}
";
    assert!(keys(&pin_all(mcp_go)).contains(&"cmd/server.logged"));
    // Signatures that cannot be a wrapper's value are not asked for.
    let not = format!("{SERVER}\nfunc two(h mcp.ToolHandler, n int) mcp.ToolHandler {{ return h }}\n\nfunc text(s string) string {{ return s }}\n");
    assert_eq!(keys(&pin_all(&not)), ["cmd/server.audit", "internal/reg.Name"]);
}

#[test]
fn a_wrapper_no_pin_can_name_escalates() {
    let pinned = pin_all(SERVER);
    let server = format!("{SERVER}\nvar loose = func(next mcp.ToolHandler) mcp.ToolHandler {{ return next }}\n");
    let e = serving(&server, &pinned).map(|_| ()).expect_err("escalates");
    assert!(e.detail.contains("which no pin can name") && e.detail.contains("outside any function"), "{e}");
    // The same literal inside a verified closure (a package variable `Name` reads) is bound by it.
    let reg =
        format!("{}\nvar guard = func(next mcp.ToolHandler) mcp.ToolHandler {{ return next }}\n", REG.replace("_ = Middleware(passThrough)", "_ = guard"));
    // Never "which no pin can name": pin_all panics on an escalation naming nothing to pin.
    let pinned = crate::module_wide::pin_all(|pinned| serving_with(&reg, SERVER, pinned));
    assert_eq!(keys(&pinned), ["cmd/server.audit", "internal/reg.Name", "internal/reg.passThrough"]);
}
