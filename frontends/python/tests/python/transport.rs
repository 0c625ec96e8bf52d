//! What carries requests to the server is the MCP SDK's own streams: a
//! server run with anything else, or a class of the release extending one
//! of the SDK's, escalates.

use fcd_frontend_python::Python;
use fcd_frontends::{EscalationCode, RegionKind, RegionSpec, SourceFile, analyze};

/// A low-level server whose tool handler is `f`, run over stdio.
const SERVER: &str = "import mcp.server as lowlevel
import mcp.server.stdio as pipes


def f(arguments):
    return arguments[\"path\"]


async def serve():
    srv = lowlevel.Server(\"probe\")
    async with pipes.stdio_server() as (incoming, outgoing):
        await srv.run(incoming, outgoing, srv.create_initialization_options())
";

fn serving(src: &str) -> Result<(), fcd_frontends::Escalation> {
    let file = SourceFile { path: "server.py".into(), bytes: src.as_bytes().to_vec() };
    let region = RegionSpec { name: "r".into(), kind: RegionKind::Function("f".into()), optional: false, file: None };
    analyze(&Python, &[file], &[region], &[]).map(|_| ())
}

#[test]
fn a_server_run_with_the_sdk_transports_streams_registers() {
    serving(SERVER).expect("registers");
    // Run by keywords or with one argument: no streams handed, nothing to check.
    serving(&SERVER.replace("await srv.run(incoming, outgoing, srv.create_initialization_options())", "await srv.run(transport=\"stdio\")"))
        .expect("registers");
    // A server handed in as a parameter, run with streams its function's own SDK transport binds.
    let handed = format!("{SERVER}\n\nasync def run_stdio(server):\n    async with pipes.stdio_server() as (r, w):\n        await server.run(r, w, None)\n");
    serving(&handed).expect("registers");
    // The same with a wrapped stream: a receiver fcd cannot name is checked all the same.
    let e = serving(&handed.replace("server.run(r, w, None)", "server.run(wrap(r), w, None)")).expect_err("escalates");
    assert!(e.detail.contains("is run with `wrap(r)`"), "{e}");
}

#[test]
fn streams_or_classes_the_release_can_intercept_escalate() {
    let wrapper = "class Rewriting:\n    def __init__(self, inner):\n        self.inner = inner\n\n\nasync def serve():";
    for (from, to, why) in [
        ("srv.run(incoming,", "srv.run(Rewriting(incoming),", "is run with `Rewriting(incoming)`"),
        ("        await srv.run(", "        incoming = Rewriting(incoming)\n        await srv.run(", "is run with `incoming`"),
        ("async with pipes.stdio_server() as", "async with make_streams() as", "is run with `incoming`"),
        ("def f(arguments):", "class Tapped(lowlevel.Server):\n    pass\n\n\ndef f(arguments):", "extends the MCP SDK's `mcp.server.Server`"),
    ] {
        let src = SERVER.replace("async def serve():", wrapper).replace(from, to);
        assert_ne!(src, SERVER.replace("async def serve():", wrapper), "{from}");
        let e = serving(&src).expect_err("escalates");
        assert_eq!(e.code, EscalationCode::ShapeMismatch, "{e}");
        assert!(e.detail.contains(why), "{to}: {e}");
    }
}
