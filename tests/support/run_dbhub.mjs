// Runs a materialized dbhub-execute-sql release's execute_sql handler for
// real, against a scratch SQLite database, to observe what each call does.
//
// Usage: node run_dbhub.mjs RELEASE_ROOT WORK_DIR BUILT_JSON [SETTLE_MS] < calls.json
//   RELEASE_ROOT  a scratch copy of the release (this driver writes into it:
//                 a node_modules link and, for a TypeScript tree, the .js
//                 files it transpiles next to the .ts sources)
//   WORK_DIR      an empty directory for the database
//   BUILT_JSON    the profile's reviewed build mappings, [["dist/index.js", "src/index.ts"]]
//   SETTLE_MS     how long work a handler left running gets after each call (default 50)
//   calls.json    {"A": {"sql": "SELECT 1"}, …}: each call's arguments
//
// The release's helpers (ConnectorManager, getToolRegistry, the SQL
// splitter, …) are free identifiers in the hand-written fixtures; they are
// defined here as globals, as the profile's assumptions describe them: the
// connector runs the text it receives on the database unchanged (better-sqlite3),
// the registry says read-only, the splitter splits at top-level semicolons and
// the stripper removes comments and string contents. Everything else a case
// names is left undefined: using it throws, and the run says so.
//
// Every entry point package.json names (main, module, bin, exports) is loaded
// — or, when a built entry is absent, the TypeScript source the profile maps
// it to, transpiled — and every function it exports is called with a fake MCP
// server; the handlers registered under "execute_sql" are the ones run. Each
// call starts from a fresh database (table t with three rows and an index, user_version 0);
// afterwards the database file bytes, every file in WORK_DIR, user_version,
// the rows of t and the schema are compared with before.
//
// The last line on stdout is the report, one JSON object:
//   {"load_error": "…"}                      nothing registered execute_sql
//   {"handlers": N, "load": {…}, "calls": {"A": {"mutated": bool, "error": …,
//    "returned": …, "executed": [sql, …], "changes": […]}, …}}
// `executed` lists the SQL texts that reached the connector during the call.

import * as fs from "node:fs";
import * as path from "node:path";
import { createHash } from "node:crypto";
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";

const [root, work, builtJson, settleArg] = process.argv.slice(2);
const SETTLE_MS = settleArg === undefined ? 50 : Number(settleArg);
const support = createRequire(new URL("./node/package.json", import.meta.url));
const Database = support("better-sqlite3");
const ts = support("typescript");
const STEP_MS = 2000;

// What the release may patch (prototypes, globals) must not change how this
// driver observes: keep its own references, taken before any release code runs.
const { readFileSync, readdirSync, rmSync, mkdirSync, existsSync, statSync, writeFileSync, writeSync, symlinkSync } = fs;
const stringify = JSON.stringify;
const parseJson = JSON.parse;
const keys = Object.keys;
const defineProperty = Object.defineProperty;
const arrayPush = Function.prototype.call.bind(Array.prototype.push);
const setTimeoutOriginal = setTimeout;
const clearTimeoutOriginal = clearTimeout;
const PromiseOriginal = Promise;
const promiseRace = Promise.race.bind(Promise);

const db = path.join(work, "db.sqlite");
const notes = [];
const note = (what) => arrayPush(notes, String(what).slice(0, 300));
process.on("unhandledRejection", (e) => note(`unhandled rejection: ${e?.stack ?? e}`));
process.on("uncaughtException", (e) => note(`uncaught exception: ${e?.stack ?? e}`));
// Anything the release prints goes to stderr: stdout carries the report.
for (const k of ["log", "info", "debug"]) console[k] = console.error;

function report(value) {
  writeSync(1, "\n" + stringify(value, (_, v) => (typeof v === "bigint" ? String(v) : v)) + "\n");
  process.exit(0);
}

// --- the database ----------------------------------------------------------

function freshDatabase() {
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  const d = new Database(db);
  // An index gives ANALYZE (which `PRAGMA optimize` and `pragma_optimize` run) something to write.
  d.exec("CREATE TABLE t(x); CREATE INDEX t_x ON t(x); INSERT INTO t VALUES (1), (2), (3);");
  d.close();
}

function state() {
  const s = { files: {} };
  for (const name of readdirSync(work)) {
    const p = path.join(work, name);
    s.files[name] = statSync(p).isFile() ? createHash("sha256").update(readFileSync(p)).digest("hex") : "not a file";
  }
  try {
    const d = new Database(db, { readonly: true, fileMustExist: true });
    try {
      s.user_version = d.pragma("user_version", { simple: true });
      s.rows = stringify(d.prepare("SELECT rowid, * FROM t ORDER BY rowid").raw().all());
      s.schema = stringify(d.prepare("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY name").raw().all());
    } finally {
      d.close();
    }
  } catch (e) {
    s.unreadable = String(e?.message ?? e);
  }
  return s;
}

function changes(before, after) {
  const out = [];
  for (const k of ["user_version", "rows", "schema", "unreadable"]) {
    if (before[k] !== after[k]) arrayPush(out, `${k}: ${stringify(before[k])} -> ${stringify(after[k])}`);
  }
  for (const name of new Set([...keys(before.files), ...keys(after.files)])) {
    if (before.files[name] !== after.files[name]) arrayPush(out, `file ${name} changed`);
  }
  return out;
}

// The connector of the call being run: a connection of its own, closed after the call.
let connection = null;
let executed = [];

// A release's own connector reaches better-sqlite3 directly (the driver's
// bare import resolves to this package, the same module): while a handler
// runs, what any other connection prepares or executes reached the database.
let running = false;
const prepareOriginal = Database.prototype.prepare;
const execOriginal = Database.prototype.exec;
Database.prototype.prepare = function (sql, ...rest) {
  if (running && this !== connection) arrayPush(executed, sql);
  return prepareOriginal.call(this, sql, ...rest);
};
Database.prototype.exec = function (sql, ...rest) {
  if (running && this !== connection) arrayPush(executed, sql);
  return execOriginal.call(this, sql, ...rest);
};

function connector() {
  const conn = connection;
  return {
    id: "sqlite",
    getId: () => "sqlite",
    async executeSQL(sql, _options) {
      if (typeof sql !== "string") throw new TypeError(`executeSQL needs SQL text, got ${typeof sql}`);
      if (!conn || !conn.open) throw new Error("the connection is closed");
      arrayPush(executed, sql);
      let stmt;
      try {
        stmt = conn.prepare(sql);
      } catch (e) {
        if (!/more than one statement/i.test(String(e?.message))) throw e;
        conn.exec(sql);
        return { rows: [] };
      }
      if (stmt.reader) return { rows: stmt.all() };
      stmt.run();
      return { rows: [] };
    },
  };
}

// --- the helpers the release leaves undefined -------------------------------

function isSpace(c) {
  return c === " " || c === "\t" || c === "\n" || c === "\r" || c === "\f" || c === "\v";
}

function trim(s) {
  let a = 0;
  let b = s.length;
  while (a < b && isSpace(s[a])) a++;
  while (b > a && isSpace(s[b - 1])) b--;
  let out = "";
  for (let i = a; i < b; i++) out += s[i];
  return out;
}

// One pass over SQL text: `onCode(c)` for characters outside comments and
// quotes, `onQuote(q, body)` for a quoted run, `onComment()` for a comment.
function scan(sql, onCode, onQuote, onComment) {
  let i = 0;
  while (i < sql.length) {
    const c = sql[i];
    if (c === "-" && sql[i + 1] === "-") {
      while (i < sql.length && sql[i] !== "\n") i++;
      onComment();
    } else if (c === "/" && sql[i + 1] === "*") {
      i += 2;
      while (i < sql.length && !(sql[i] === "*" && sql[i + 1] === "/")) i++;
      i += 2;
      onComment();
    } else if (c === "'" || c === '"' || c === "`") {
      let body = "";
      i++;
      while (i < sql.length) {
        if (sql[i] === c && sql[i + 1] === c) {
          body += c + c;
          i += 2;
        } else if (sql[i] === c) {
          i++;
          break;
        } else {
          body += sql[i++];
        }
      }
      onQuote(c, body);
    } else {
      onCode(c);
      i++;
    }
  }
}

globalThis.splitSQLStatements = function splitSQLStatements(sql, _dialect) {
  const out = [];
  let current = "";
  const flush = () => {
    const s = trim(current);
    if (s !== "") arrayPush(out, s);
    current = "";
  };
  scan(
    String(sql),
    (c) => (c === ";" ? flush() : (current += c)),
    (q, body) => (current += q + body + q),
    () => (current += " "),
  );
  flush();
  return out;
};

globalThis.stripCommentsAndStrings = function stripCommentsAndStrings(sql, _dialect) {
  let out = "";
  scan(
    String(sql),
    (c) => (out += c),
    (q) => (out += q + q),
    () => (out += " "),
  );
  return out;
};

globalThis.ConnectorManager = {
  getCurrentConnector: (_sourceId) => connector(),
  ensureConnected: async (_sourceId) => {},
};
globalThis.getEffectiveSourceId = (sourceId) => sourceId ?? "default";
globalThis.getToolRegistry = () => ({
  getBuiltinToolConfig: (_tool, _sourceId) => ({ readonly: true }),
});
globalThis.createToolErrorResponse = (message, code) => ({ isError: true, code, message: String(message) });
globalThis.createToolSuccessResponse = (data) => ({ isError: false, data });
globalThis.trackToolRequest = () => {};
// The request log and result formatting of the later shapes: nothing the database sees.
globalThis.requestStore = { add: () => {} };
globalThis.getClientIdentifier = () => "stdio";
globalThis.toStatementsPayload = (resultSets) => resultSets;
globalThis.tryClassifyConnectionError = () => undefined;
// No call may reach the network.
globalThis.fetch = async () => {
  throw new Error("the network is off in this test");
};

// --- loading the release ----------------------------------------------------

function within(ms, promise, what) {
  let timer;
  const timeout = new PromiseOriginal((_, reject) => {
    timer = setTimeoutOriginal(() => reject(new Error(`${what} did not settle within ${ms} ms`)), ms);
  });
  return promiseRace([promise, timeout]).finally(() => clearTimeoutOriginal(timer));
}

function entryLeaves(manifest) {
  const leaves = [];
  const walk = (v) => {
    if (typeof v === "string") arrayPush(leaves, v);
    else if (v && typeof v === "object") for (const k of keys(v)) walk(v[k]);
  };
  let any = false;
  for (const field of ["main", "module", "bin", "exports"]) {
    if (field in manifest) {
      any = true;
      walk(manifest[field]);
    }
  }
  if (!any) arrayPush(leaves, "index.js");
  return leaves.filter((l) => !/\.(json|d\.ts|d\.mts|d\.cts)$/.test(l));
}

function typescriptFiles(dir, out = []) {
  for (const name of readdirSync(dir)) {
    const p = path.join(dir, name);
    if (name === "node_modules") continue;
    if (statSync(p).isDirectory()) typescriptFiles(p, out);
    else if (/\.(ts|mts)$/.test(name) && !/\.d\.(ts|mts)$/.test(name)) arrayPush(out, p);
  }
  return out;
}

// A git tag has no build: what tsup would make of src/**/*.ts, file for file.
let transpiled = false;
function transpile() {
  if (transpiled) return;
  transpiled = true;
  for (const file of typescriptFiles(root)) {
    const target = file.replace(/\.ts$/, ".js").replace(/\.mts$/, ".mjs");
    if (existsSync(target)) continue;
    const { outputText } = ts.transpileModule(readFileSync(file, "utf8"), {
      fileName: file,
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
    });
    writeFileSync(target, outputText);
  }
}

const handlers = [];
// Connector managers the release exports itself, objects or classes with a
// static getCurrentConnector (older releases keep their own connector
// objects, opened by the server's start-up): each call opens the
// current connector on the scratch database and closes it afterwards.
const managers = [];
const server = {
  registerTool(name, ...rest) {
    if (name === "execute_sql" && typeof rest[rest.length - 1] === "function") arrayPush(handlers, rest[rest.length - 1]);
  },
};
server.tool = server.registerTool;

async function load() {
  const manifest = parseJson(readFileSync(path.join(root, "package.json"), "utf8"));
  const built = new Map(parseJson(builtJson));
  // The release's bare imports resolve to the packages installed for this driver.
  if (!existsSync(path.join(root, "node_modules"))) {
    symlinkSync(path.join(path.dirname(support.resolve("typescript/package.json")), ".."), path.join(root, "node_modules"), "dir");
  }
  const problems = [];
  const loaded = new Set();
  for (const leaf of entryLeaves(manifest)) {
    const rel = path.posix.normalize(leaf.replace(/^\.\//, ""));
    let file = path.join(root, rel);
    if (!existsSync(file) && built.has(rel) && existsSync(path.join(root, built.get(rel)))) {
      transpile();
      file = path.join(root, built.get(rel).replace(/\.ts$/, ".js"));
    }
    if (loaded.has(file)) continue;
    loaded.add(file);
    try {
      const module = await within(STEP_MS, import(pathToFileURL(file).href), `import of ${rel}`);
      for (const name of keys(module)) {
        const value = module[name];
        if (value && (typeof value === "object" || typeof value === "function") && typeof value.getCurrentConnector === "function") arrayPush(managers, value);
        if (typeof module[name] !== "function") continue;
        try {
          await within(STEP_MS, PromiseOriginal.resolve(module[name](server, "default")), `${rel}: ${name}(server)`);
        } catch (e) {
          arrayPush(problems, `${rel}: ${name}(server): ${e?.message ?? e}`);
        }
      }
    } catch (e) {
      arrayPush(problems, `${rel}: ${e?.message ?? e}`);
    }
  }
  // The release's own connector managers, wherever the loaded code keeps them:
  // a module already loaded is the same instance when imported again.
  if (transpiled) {
    for (const file of typescriptFiles(root)) {
      const js = file.replace(/\.ts$/, ".js").replace(/\.mts$/, ".mjs");
      if (!existsSync(js) || !readFileSync(file, "utf8").includes("getCurrentConnector")) continue;
      try {
        const module = await within(STEP_MS, import(pathToFileURL(js).href), `import of ${js}`);
        for (const name of keys(module)) {
          const value = module[name];
          if (value && (typeof value === "object" || typeof value === "function") && typeof value.getCurrentConnector === "function" && !managers.includes(value)) arrayPush(managers, value);
        }
      } catch (e) {
        arrayPush(problems, `${js}: ${e?.message ?? e}`);
      }
    }
  }
  return problems;
}

// --- running the calls ------------------------------------------------------

const calls = parseJson(readFileSync(0, "utf8"));
freshDatabase();
connection = new Database(db);
const before = state();
const problems = await load();
connection.close();
const load_changes = changes(before, state());
if (handlers.length === 0) {
  report({ load_error: `no handler registered under execute_sql; ${problems.join("; ") || "no entry point registers one"}`, notes });
}

const results = {};
for (const name of keys(calls)) {
  const result = { mutated: false, error: null, returned: [], executed: [], changes: [] };
  for (const handler of handlers) {
    freshDatabase();
    const start = state();
    connection = new Database(db);
    executed = [];
    const opened = [];
    try {
      for (const manager of managers) {
        const own = manager.getCurrentConnector();
        if (own && typeof own.connect === "function") {
          await within(STEP_MS, PromiseOriginal.resolve(own.connect(db)), "the release's connector");
          arrayPush(opened, own);
        }
      }
      running = true;
      arrayPush(result.returned, await within(STEP_MS, PromiseOriginal.resolve(handler(calls[name], {})), "the handler"));
    } catch (e) {
      result.error = String(e?.stack ?? e).slice(0, 500);
    }
    running = false;
    for (const own of opened) {
      try {
        await PromiseOriginal.resolve(own.disconnect?.());
      } catch {}
    }
    // Work the handler left running gets a moment, then the connection closes.
    await new PromiseOriginal((done) => setTimeoutOriginal(done, SETTLE_MS));
    connection.close();
    const seen = changes(start, state());
    result.mutated ||= seen.length > 0;
    result.executed = [...result.executed, ...executed];
    result.changes = [...result.changes, ...seen];
  }
  results[name] = result;
}
report({ handlers: handlers.length, load: { problems, changes: load_changes }, calls: results, notes });
