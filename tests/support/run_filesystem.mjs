// Runs a materialized filesystem-write-file release's write_file callback (or
// a filesystem-move-file release's move_file callback) for real, in a scratch
// directory standing for the file system root, to observe what each call
// writes or moves.
//
// Usage: node run_filesystem.mjs RELEASE_COPY WORK_DIR [TOOL] < calls.json
//   TOOL          write_file (the default) or move_file
//   RELEASE_COPY  a scratch copy of the release (this driver adds a
//                 node_modules with stand-ins for the MCP SDK and zod)
//   WORK_DIR      an empty directory: every absolute path of a call is taken
//                 below it (/srv/data/x is WORK_DIR/srv/data/x)
//   calls.json    {"A": {"path": "/srv/data/notes.txt", "content": "…"}, …}
//
// The server is started with WORK_DIR/srv/data as its one allowed directory
// (the argument list the entry hands setAllowedDirectories). Before each
// call the tree is laid out afresh: srv/data/existing.txt, srv/data/sub/,
// srv/data/link -> WORK_DIR/etc (a link inside that leads out),
// srv/data/passwd-link -> WORK_DIR/etc/passwd (a file link that leads out),
// srv/data2/, etc/cron.d/, and two names spelled with U+212A KELVIN SIGN,
// whose NFC form is `K`: srv/data/\u212API/ and srv/data/\u212Aelvin.txt
// (a release that matches names by NFC takes them for KPI and Kelvin.txt).
// For move_file (calls.json {"A": {"source": …,
// "destination": …}}, both ends taken below WORK_DIR when absolute) the tree
// also holds srv/data/report.txt, srv/data/inbox/report.txt,
// srv/data/archive/, srv/data/sib-link -> WORK_DIR/srv/data2 (a link inside
// into a sibling named like the directory), srv/data2/secret.txt,
// srv/data-evil/payload.sh. After it every file and link under WORK_DIR is
// compared with before; a change anywhere but below srv/data is `outside`.
//
// A release registering write_file with registerTool has its callback run; one
// whose low-level Server has a tool-call request handler has that handler run
// with a `tools/call` request for write_file (an error result is a refusal).
//
// The last line on stdout is the report, one JSON object:
//   {"load_error": "…"} or {"handlers": N, "calls": {"A": {"outside": bool,
//    "changed": [relative paths], "error": "…" | null}, …}}

import * as fs from "node:fs";
import * as path from "node:path";
import { pathToFileURL } from "node:url";

const [release, workArg, toolArg] = process.argv.slice(2);
const tool = toolArg ?? "write_file";
const work = fs.realpathSync(workArg);
const calls = JSON.parse(fs.readFileSync(0, "utf8"));

function stub(file, text) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
}
const sdk = path.join(release, "node_modules/@modelcontextprotocol/sdk");
stub(path.join(sdk, "package.json"), JSON.stringify({ name: "@modelcontextprotocol/sdk", type: "module" }));
stub(
  path.join(sdk, "server/mcp.js"),
  "export class McpServer { constructor() {} registerTool(name, config, callback) { (globalThis.__registered[name] ??= []).push(callback); } tool() {} resource() {} prompt() {} setRequestHandler() {} setNotificationHandler() {} async connect() {} get server() { return this; } }\n",
);
// The low-level Server keeps one handler per request schema, the last set (as the SDK does).
stub(
  path.join(sdk, "server/index.js"),
  "export class Server { constructor() {} setRequestHandler(schema, handler) { globalThis.__handlers.set(schema, handler); } setNotificationHandler() {} async connect() {} }\n",
);
stub(path.join(sdk, "server/stdio.js"), "export class StdioServerTransport {}\n");
// The 2.x SDK (`@modelcontextprotocol/server`): the same McpServer, and
// serveStdio, which builds a server from the factory at once, as for a
// 2025-era connection.
const server2 = path.join(release, "node_modules/@modelcontextprotocol/server");
stub(
  path.join(server2, "package.json"),
  JSON.stringify({ name: "@modelcontextprotocol/server", type: "module", exports: { ".": "./index.js", "./stdio": "./stdio.js" } }),
);
stub(
  path.join(server2, "index.js"),
  "export class McpServer { constructor() {} registerTool(name, config, callback) { (globalThis.__registered[name] ??= []).push(callback); } setNotificationHandler() {} async listRoots() { return { roots: [] }; } getClientCapabilities() { return {}; } async close() {} async connect() {} get server() { return this; } }\n",
);
stub(
  path.join(server2, "stdio.js"),
  "export class StdioServerTransport {} export function serveStdio(factory) { factory({ era: 'legacy' }); return { close() {} }; }\n",
);
stub(
  path.join(sdk, "types.js"),
  "export const CallToolRequestSchema = { method: 'tools/call' }; export const ListToolsRequestSchema = { method: 'tools/list' }; export const RootsListChangedNotificationSchema = {}; export const ToolSchema = { shape: { inputSchema: {} } };\n",
);
// zod: every schema accepts anything, and its safeParse hands the value back unchanged.
const zod = path.join(release, "node_modules/zod");
stub(path.join(zod, "package.json"), JSON.stringify({ name: "zod", type: "module", main: "index.js" }));
stub(
  path.join(zod, "index.js"),
  "const any = new Proxy(function () {}, { get: (_, key) => (key === 'safeParse' ? (value) => ({ success: true, data: value }) : any), apply: () => any }); export const z = any; export default any;\n",
);
// What the older entry imports besides: a schema printer, a differ and a glob matcher, none of them on the write path.
for (const [name, text] of [
  ["zod-to-json-schema", "export const zodToJsonSchema = () => ({});\n"],
  ["diff", "export const createTwoFilesPatch = () => '';\n"],
  ["minimatch", "export const minimatch = () => false;\n"],
]) {
  stub(path.join(release, "node_modules", name, "package.json"), JSON.stringify({ name, type: "module", main: "index.js" }));
  stub(path.join(release, "node_modules", name, "index.js"), text);
}

function layout() {
  fs.rmSync(path.join(work, "srv"), { recursive: true, force: true });
  fs.rmSync(path.join(work, "etc"), { recursive: true, force: true });
  for (const d of ["srv/data/sub", "srv/data2", "etc/cron.d"]) fs.mkdirSync(path.join(work, d), { recursive: true });
  fs.writeFileSync(path.join(work, "srv/data/existing.txt"), "before");
  fs.symlinkSync(path.join(work, "etc"), path.join(work, "srv/data/link"));
  fs.writeFileSync(path.join(work, "etc/passwd"), "root");
  fs.symlinkSync(path.join(work, "etc/passwd"), path.join(work, "srv/data/passwd-link"));
  fs.mkdirSync(path.join(work, "srv/data/\u212API"));
  fs.writeFileSync(path.join(work, "srv/data/\u212Aelvin.txt"), "kelvin");
  if (tool === "move_file") {
    for (const d of ["srv/data/inbox", "srv/data/archive", "srv/data-evil"]) fs.mkdirSync(path.join(work, d), { recursive: true });
    fs.writeFileSync(path.join(work, "srv/data/report.txt"), "report");
    fs.writeFileSync(path.join(work, "srv/data/inbox/report.txt"), "inbox report");
    fs.writeFileSync(path.join(work, "srv/data2/secret.txt"), "secret");
    fs.writeFileSync(path.join(work, "srv/data-evil/payload.sh"), "payload");
    fs.symlinkSync(path.join(work, "srv/data2"), path.join(work, "srv/data/sib-link"));
  }
}

function snapshot() {
  const out = new Map();
  const walk = (dir) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      const rel = path.relative(work, full);
      if (entry.isSymbolicLink()) out.set(rel, "link:" + fs.readlinkSync(full));
      else if (entry.isDirectory()) walk(full);
      else out.set(rel, "file:" + fs.readFileSync(full, "utf8"));
    }
  };
  walk(work);
  return out;
}

globalThis.__registered = {};
globalThis.__handlers = new Map();
layout();
const pkg = JSON.parse(fs.readFileSync(path.join(release, "package.json"), "utf8"));
const entry = typeof pkg.bin === "string" ? pkg.bin : Object.values(pkg.bin ?? {})[0] ?? pkg.main ?? "index.js";
// argv[1] is the entry itself: a 2.x entry starts only when it is the process's main module.
process.argv = [process.argv[0], path.join(release, entry), path.join(work, "srv/data")];
try {
  await import(pathToFileURL(path.join(release, entry)).href);
  // A 2.x entry resolves its directories asynchronously before it builds a server.
  for (let waited = 0; waited < 100 && !globalThis.__registered[tool]; waited++) await new Promise((r) => setTimeout(r, 10));
} catch (e) {
  console.log(JSON.stringify({ load_error: String(e && e.message ? e.message : e) }));
  process.exit(0);
}
const handlers = globalThis.__registered[tool] ?? [];
// A dispatcher: the tool-call request handler, asked for the tool; its error result is a refusal.
const dispatcher = [...globalThis.__handlers].find(([schema]) => schema && schema.method === "tools/call")?.[1];
if (dispatcher) {
  handlers.push(async (args) => {
    const result = await dispatcher({ method: "tools/call", params: { name: tool, arguments: args } });
    if (result && result.isError) throw new Error(result.content?.[0]?.text ?? "error result");
  });
}
if (handlers.length === 0) {
  console.log(JSON.stringify({ load_error: `nothing registered ${tool}` }));
  process.exit(0);
}
const results = {};
for (const [name, args] of Object.entries(calls)) {
  layout();
  const before = snapshot();
  const ends = tool === "move_file" ? ["source", "destination"] : ["path"];
  const mapped = { ...args };
  for (const key of ends) mapped[key] = typeof args[key] === "string" && args[key].startsWith("/") ? work + args[key] : args[key];
  let error = null;
  try {
    for (const h of handlers) await h(mapped, {});
  } catch (e) {
    error = String(e && e.message ? e.message : e);
  }
  const after = snapshot();
  const changed = [...new Set([...before.keys(), ...after.keys()])].filter((k) => before.get(k) !== after.get(k)).sort();
  const outside = changed.some((k) => !k.startsWith("srv/data/"));
  results[name] = { outside, changed, error };
}
console.log(JSON.stringify({ handlers: handlers.length, calls: results }));
