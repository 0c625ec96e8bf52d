//! What carries requests to the server is the MCP SDK's own transport, used
//! as the SDK expects: a release class extending the SDK, a transport whose
//! `onmessage` is written or that is handed to release code, an object of
//! the release standing in for one, or one built from other streams escalates.

use fcd_frontend_javascript::JavaScript;
use fcd_frontends::{EscalationCode, RegionKind, RegionSpec, SourceFile, analyze};

/// A server registering `write_file`, connected over stdio.
const SERVER: &str = "import { McpServer } from \"@modelcontextprotocol/sdk/server/mcp.js\";
import { StdioServerTransport } from \"@modelcontextprotocol/sdk/server/stdio.js\";
const server = new McpServer({ name: \"files\" });
server.registerTool(\"write_file\", { title: \"Write\" }, async (params) => {
  return { content: [{ type: \"text\", text: params.path }] };
});
async function start() {
  const transport = new StdioServerTransport();
  await server.connect(transport);
  transport.onclose = () => process.exit(0);
}
start();
";

fn serving(src: &str) -> Result<(), fcd_frontends::Escalation> {
    serving_as("index.js", src)
}

fn serving_as(path: &str, src: &str) -> Result<(), fcd_frontends::Escalation> {
    let file = SourceFile { path: path.into(), bytes: src.as_bytes().to_vec() };
    let region = RegionSpec { name: "handler".into(), kind: RegionKind::Callback("write_file".into()), optional: false, file: None };
    analyze(&JavaScript, &[file], &[region], &[]).map(|_| ())
}

fn escalates(src: &str) -> String {
    let e = serving(src).expect_err("escalates");
    assert_eq!(e.code, EscalationCode::ShapeMismatch, "{e}");
    e.detail
}

#[test]
fn the_sdk_transport_used_as_the_sdk_expects_registers() {
    serving(SERVER).expect("registers");
    // Built in place, in a block of its own beside another, or handed to the SDK's entry as an option.
    let in_place = SERVER.replace("  const transport = new StdioServerTransport();\n  await server.connect(transport);\n", "  await server.connect(new StdioServerTransport(process.stdin, process.stdout));\n  const transport = new StdioServerTransport();\n  await transport.close();\n");
    serving(&in_place).expect("registers");
    let two_blocks = SERVER.replace(
        "  const transport = new StdioServerTransport();\n  await server.connect(transport);\n  transport.onclose = () => process.exit(0);\n",
        "  if (process.env.A) {\n    const transport = new StdioServerTransport();\n    await server.connect(transport);\n  } else {\n    const transport = new StdioServerTransport();\n    await server.connect(transport);\n    await transport.close();\n  }\n",
    );
    serving(&two_blocks).expect("registers");
    let entry = "import { serveStdio, StdioServerTransport } from \"@modelcontextprotocol/server/stdio\";
import { McpServer } from \"@modelcontextprotocol/server\";
function build() {
  const server = new McpServer({ name: \"files\" });
  server.registerTool(\"write_file\", { title: \"Write\" }, async (params) => ({ content: [] }));
  return server;
}
export async function main(args = [], stdin = process.stdin, stdout = process.stdout) {
  serveStdio(build, { transport: new StdioServerTransport(stdin, stdout), onerror: () => {} });
}
main();
";
    serving(entry).expect("registers");
    // A caller handing main other streams: the transport reads what the release chose.
    let detail = escalates(&entry.replace("main();", "main([], tap(process.stdin));"));
    assert!(detail.contains("is built from `stdin`"), "{detail}");
}

#[test]
fn an_sse_route_assigning_a_transport_to_a_let_registers_and_anything_else_in_it_escalates() {
    let sse = SERVER
        .replace("import { StdioServerTransport } from \"@modelcontextprotocol/sdk/server/stdio.js\";", "import { SSEServerTransport } from \"@modelcontextprotocol/sdk/server/sse.js\";")
        .replace(
            "  const transport = new StdioServerTransport();\n  await server.connect(transport);\n  transport.onclose = () => process.exit(0);\n",
            "  let transport;\n  app.get(\"/sse\", async (req, res) => {\n    transport = new SSEServerTransport(\"/message\", res);\n    console.error(transport?.[\"_sessionId\"]);\n    await server.connect(transport);\n  });\n  app.post(\"/message\", async (req, res) => transport.handlePostMessage(req, res, req.body));\n",
        );
    serving(&sse).expect("registers");
    for (from, to, why) in [
        ("  let transport;\n", "  let transport = tap();\n", "declared with a value or assigned something else"),
        ("    console.error(", "    transport = tap(transport);\n    console.error(", "assigned something else"),
        ("    console.error(transport?.[\"_sessionId\"]);", "    transport[\"onmessage\"] = tap;", "has a member written"),
    ] {
        let src = sse.replace(from, to);
        assert_ne!(src, sse, "{from}");
        let detail = escalates(&src);
        assert!(detail.contains(why), "{to}: {detail}");
    }
}

#[test]
fn a_transport_the_release_can_intercept_escalates() {
    for (from, to, why) in [
        (
            "const server = new McpServer",
            "class Tap extends StdioServerTransport {}\nconst server = new McpServer",
            "extends the MCP SDK's `StdioServerTransport`",
        ),
        ("  transport.onclose = () => process.exit(0);\n", "  transport.onmessage = (m) => m;\n", "has its `onmessage` written"),
        ("  await server.connect(transport);\n", "  await server.connect(wrap(transport));\n", "is handed on or written"),
        ("  const transport = new StdioServerTransport();\n", "  let transport = new StdioServerTransport();\n", "not a `const` declared once"),
        (
            "  const transport = new StdioServerTransport();\n  await server.connect(transport);\n",
            "  const transport = { start() {}, send() {}, close() {} };\n  await server.connect(transport);\n",
            "is not a transport the SDK built",
        ),
        ("new StdioServerTransport();", "new StdioServerTransport(tapped, process.stdout);", "is built from `tapped`"),
        (
            "const server = new McpServer",
            "Object.assign(StdioServerTransport, {});\nclass S extends McpServer {}\nconst server = new McpServer",
            "extends the MCP SDK's `McpServer`",
        ),
    ] {
        let src = SERVER.replace(from, to);
        assert_ne!(src, SERVER, "{from}");
        let detail = escalates(&src);
        assert!(detail.contains(why), "{to}: {detail}");
    }
    // TypeScript's grammar holds the base in an `extends_clause`.
    let ts = SERVER.replace("const server = new McpServer", "class Tap extends StdioServerTransport<unknown> {}\nconst server = new McpServer");
    let e = serving_as("index.ts", &ts).expect_err("escalates");
    assert!(e.detail.contains("extends the MCP SDK's `StdioServerTransport`"), "{e}");
}
