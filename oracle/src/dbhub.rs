//! The oracle for DBHub's `execute_sql` in read-only mode.
//!
//! From the envelope: the handler refuses with READONLY_VIOLATION whatever the
//! classifier does not call read-only, before the SQL reaches the database;
//! the classifier allows a statement whose first keyword is in the SQLite
//! list, except (where the check exists) a PRAGMA holding `=`. The oracle
//! finds the keyword list, the check and the guard as token sequences, and
//! classifies the SQL itself. The guard's mode flag (or what the access
//! policy is compiled from) must be the readonly setting of
//! `getToolRegistry().getBuiltinToolConfig(…)`, followed through locals
//! bound once, whatever their names; in the older handler (0.4 to 0.8)
//! `isReadOnlyMode()`. Where the release has the SQLite connector class, its
//! `executeSQL` decides what an admitted PRAGMA assignment does: one that
//! only runs `prepare(…).all()` never runs it (better-sqlite3 refuses a
//! statement that returns no rows), any other runs it. A method that splits
//! the SQL on `;` and branches on a single statement (0.5 to 0.8) is read in
//! that branch only: several statements are outside the argument domain.

use std::path::Path;

use serde_json::{Map, Value};

use crate::Verdict;
use crate::contract::{Context, Effect};
use crate::files;
use crate::lex::{Dialect, Token, scan};

pub enum Shape {
    Understood { pragma_allowed: bool, assignment_refused: bool, reader_only: bool, where_: String },
    NotUnderstood(String),
}

pub fn read(root: &Path) -> Shape {
    match understand(root) {
        Ok((pragma_allowed, assignment_refused, reader_only, where_)) => Shape::Understood { pragma_allowed, assignment_refused, reader_only, where_ },
        Err(why) => Shape::NotUnderstood(why),
    }
}

/// The tokens of the body of `function NAME(…) {…}`, for every such function.
fn bodies<'t>(tokens: &'t [Token], name: &str) -> Vec<&'t [Token]> {
    let mut out = Vec::new();
    for i in 0..tokens.len().saturating_sub(2) {
        if !(tokens[i].is("function") && tokens[i + 1].is(name) && tokens[i + 2].is("(")) {
            continue;
        }
        out.extend(body_after_parameters(tokens, i + 2));
    }
    out
}

/// The body `{…}` of a function whose parameter list opens at `open`: past
/// the parameters (which may destructure, `({ sql })`) and a return type.
fn body_after_parameters(tokens: &[Token], open: usize) -> Option<&[Token]> {
    let close = closing(tokens, open)?;
    let mut angle = 0i32;
    let start = (close + 1..tokens.len()).find(|&j| {
        let t = &tokens[j];
        if t.is("<") {
            angle += 1;
        } else if t.is(">") {
            angle -= 1;
        }
        angle == 0 && t.is("{") && !tokens[j - 1].is(":") && !tokens[j - 1].is("<") && !tokens[j - 1].is("|")
    })?;
    let end = crate::lex::braces_end(tokens, start)?;
    Some(&tokens[start + 1..end])
}

/// How the SQLite connector's `executeSQL` method runs a statement.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Connector {
    /// No `class SQLiteConnector` with the method: the envelope's assumption
    /// that the connector runs the SQL it is given.
    Assumed,
    /// Only `prepare(…).all()`: better-sqlite3 throws before running a
    /// statement that returns no rows.
    ReaderOnly,
    /// `run`, `exec` or anything else that runs any statement.
    Runs,
}

/// The body of method `executeSQL` of `class SQLiteConnector`, read as tokens.
fn connector(tokens: &[Token]) -> Result<Connector, String> {
    let classes: Vec<usize> = (0..tokens.len().saturating_sub(1)).filter(|&i| tokens[i].is("class") && tokens[i + 1].is("SQLiteConnector")).collect();
    let class = match classes.as_slice() {
        [] => return Ok(Connector::Assumed),
        [one] => *one,
        _ => return Err(format!("{} SQLiteConnector classes", classes.len())),
    };
    if (0..tokens.len().saturating_sub(1)).any(|i| tokens[i].is("extends") && tokens[i + 1].is("SQLiteConnector")) {
        return Err("a class extends SQLiteConnector: its override may run instead".into());
    }
    if (0..tokens.len().saturating_sub(2)).any(|i| tokens[i].is(".") && tokens[i + 1].is("executeSQL") && tokens[i + 2].is("=")) {
        return Err("an executeSQL member is assigned somewhere".into());
    }
    let open = (class..tokens.len()).find(|&j| tokens[j].is("{")).ok_or("SQLiteConnector has no body")?;
    let end = crate::lex::braces_end(tokens, open).ok_or("SQLiteConnector's body is not closed")?;
    let body = &tokens[open + 1..end];
    // Members at the class body's own depth named executeSQL.
    let mut depth = 0;
    let mut members = Vec::new();
    for (i, t) in body.iter().enumerate() {
        if t.is("{") {
            depth += 1;
        } else if t.is("}") {
            depth -= 1;
        } else if depth == 0 && t.is("executeSQL") {
            members.push(i);
        }
    }
    let [at] = members.as_slice() else { return Err(format!("SQLiteConnector has {} members named executeSQL", members.len())) };
    if !body.get(at + 1).is_some_and(|t| t.is("(")) || (*at > 0 && (body[at - 1].is("get") || body[at - 1].is("set"))) {
        return Err("SQLiteConnector's executeSQL is not a plain method".into());
    }
    let method = body_after_parameters(body, at + 1).ok_or("executeSQL has no body")?;
    // A method that splits the SQL on ';' and branches on one statement:
    // only that branch runs a single statement (several are outside the
    // argument domain, UNKNOWN whatever the connector does).
    let splits = (0..method.len().saturating_sub(3)).any(|i| method[i].is("split") && method[i + 1].is("(") && method[i + 2].str_value() == Some(";"));
    let runs = match single_statement_branch(method) {
        Some(branch) => branch,
        None if splits => {
            return Err("the connector cuts the SQL at `;` but does not branch as `if (LIST.length === 1) {…} else {…}` on the list it binds once".into());
        }
        None => method,
    };
    let calls = |name: &str| runs.windows(3).any(|w| w[0].is(".") && w[1].is(name) && w[2].is("("));
    let reader = calls("prepare") && calls("all");
    let other = ["run", "exec", "iterate", "pluck", "raw", "get", "transaction", "pragma"].iter().any(|m| calls(m));
    Ok(if reader && !other { Connector::ReaderOnly } else { Connector::Runs })
}

/// In a method that binds `NAME = sql.split(';')…` once and whose first
/// statement-level test is `if (NAME.length === 1) { … } else { … }`, the
/// tokens of that first block: what runs when the SQL is one statement.
/// `None` for any other method (then all of it counts).
fn single_statement_branch(method: &[Token]) -> Option<&[Token]> {
    let splits: Vec<usize> = (0..method.len().saturating_sub(6))
        .filter(|&i| {
            method[i].is("=")
                && method[i + 1].is("sql")
                && method[i + 2].is(".")
                && method[i + 3].is("split")
                && method[i + 4].is("(")
                && method[i + 5].str_value() == Some(";")
        })
        .collect();
    let [split] = splits.as_slice() else { return None };
    let name = method.get(split.checked_sub(1)?)?;
    let declared = split.checked_sub(2).is_some_and(|k| method[k].is("const"));
    // No second binding of the name anywhere in the method (a shadowing `const` in a block, say).
    let bound_once = (0..method.len().saturating_sub(1)).filter(|&i| method[i].is(&name.text) && method[i + 1].is("=")).count() == 1;
    if !declared || !bound_once {
        return None;
    }
    // `===` is lexed as `==` then `=`.
    let test = ["if", "(", name.text.as_str(), ".", "length", "==", "=", "1", ")", "{"];
    let at = (*split..method.len().saturating_sub(test.len())).find(|&i| test.iter().enumerate().all(|(k, w)| method[i + k].is(w)))?;
    // Nothing touches the list between its binding and the test.
    if method[*split..at].iter().any(|t| t.is(&name.text)) {
        return None;
    }
    let open = at + test.len() - 1;
    let end = crate::lex::braces_end(method, open)?;
    method.get(end + 1).filter(|t| t.is("else"))?;
    method.get(open + 1..end)
}

fn understand(root: &Path) -> Result<(bool, bool, bool, String), String> {
    let sources = files::find(root, &|p| {
        let in_dist = p.rsplit_once('/').is_some_and(|(d, f)| (d == "dist" || d.ends_with("/dist")) && f.ends_with(".js"));
        let in_src =
            (p.starts_with("src/") || p.contains("/src/")) && p.ends_with(".ts") && !p.ends_with(".d.ts") && !p.ends_with(".test.ts") && !p.contains("__");
        in_dist || in_src
    });
    let mut tokens = Vec::new();
    for (name, path) in &sources {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{name}: {e}"))?;
        if text.lines().any(|l| l.len() > 2_000) {
            if text.contains("checkReadOnly") {
                return Err(format!("{name} is minified"));
            }
            continue;
        }
        match scan(&text, Dialect::JavaScript) {
            Ok(t) => tokens.extend(t),
            Err(e) if ["checkReadOnly", "createExecuteSqlToolHandler", "executeSqlToolHandler", "SQLiteConnector"].iter().any(|w| text.contains(w)) => {
                return Err(format!("{name}: {e}"));
            }
            Err(_) => {}
        }
    }
    // The classifier: checkReadOnly, or (0.13 to 0.15, none of it) isReadOnlySQL
    // itself when it looks the first word up in allowedKeywords.
    let checks = bodies(&tokens, "checkReadOnly");
    let inline = bodies(&tokens, "isReadOnlySQL");
    let looks_up = |b: &[Token]| b.iter().any(|t| t.is("allowedKeywords")) && b.windows(3).any(|w| w[0].is(".") && w[1].is("includes") && w[2].is("("));
    let check = match (checks.as_slice(), inline.as_slice()) {
        ([check], _) => check,
        ([], [inline]) if looks_up(inline) => inline,
        _ => return Err(format!("{} checkReadOnly functions and no isReadOnlySQL that looks the first word up itself", checks.len())),
    };
    // The handler: the factory createExecuteSqlToolHandler, or (0.4 to 0.8) the
    // handler executeSqlToolHandler itself, whose mode flag is isReadOnlyMode().
    let factories = bodies(&tokens, "createExecuteSqlToolHandler");
    let legacy = bodies(&tokens, "executeSqlToolHandler");
    let (handler, is_legacy) = match (factories.as_slice(), legacy.as_slice()) {
        ([one], []) => (*one, false),
        ([], [one]) => (*one, true),
        (f, l) => return Err(format!("{} createExecuteSqlToolHandler and {} executeSqlToolHandler functions", f.len(), l.len())),
    };
    let connector = connector(&tokens)?;
    // A registration of the tool with a function written in place serves it with that function.
    let inline_registration = (1..tokens.len()).any(|i| {
        tokens[i].str_value() == Some("execute_sql")
            && tokens[i - 1].is("(")
            && closing(&tokens, i - 1).is_some_and(|end| tokens[i..end].iter().any(|t| t.is("=>") || t.is("function")))
    });
    if inline_registration {
        return Err("execute_sql is registered with a function written in place".into());
    }
    if is_legacy && connector == Connector::Assumed {
        return Err("an executeSqlToolHandler release without the SQLite connector's executeSQL method".into());
    }

    // The SQLite row of the `allowedKeywords = { … }` table.
    let mut rows = Vec::new();
    let tables: Vec<(usize, usize)> = (0..tokens.len())
        // A declaration, not an import or a use.
        .filter(|&i| tokens[i].is("allowedKeywords") && i > 0 && ["const", "let", "var"].iter().any(|k| tokens[i - 1].is(k)))
        .filter_map(|i| {
            let eq = (i + 1..(i + 16).min(tokens.len())).find(|&j| tokens[j].is("="))?;
            tokens.get(eq + 1).filter(|t| t.is("{"))?;
            let mut depth = 0;
            let end = (eq + 1..tokens.len()).find(|&j| {
                if tokens[j].is("{") {
                    depth += 1;
                } else if tokens[j].is("}") {
                    depth -= 1;
                }
                depth == 0
            })?;
            Some((eq + 1, end))
        })
        .collect();
    let [(start, end)] = tables.as_slice() else { return Err(format!("{} allowedKeywords tables", tables.len())) };
    for i in *start..end.saturating_sub(3) {
        if tokens[i].is("sqlite") && tokens[i + 1].is(":") && tokens[i + 2].is("[") {
            let members: Vec<String> = tokens[i + 3..].iter().take_while(|t| !t.is("]")).filter_map(|t| t.str_value().map(str::to_owned)).collect();
            rows.push(members);
        }
    }
    let [sqlite] = rows.as_slice() else { return Err(format!("{} sqlite rows in keyword tables", rows.len())) };
    let pragma_allowed = sqlite.iter().any(|k| k == "pragma");

    // The handler must refuse with READONLY_VIOLATION before it executes: `!areAllStatementsReadOnly(sql` … `"READONLY_VIOLATION"` … then `executeSQL(`.
    let at = |pattern: &[&str], from: usize| {
        (from..handler.len().saturating_sub(pattern.len() - 1)).find(|&i| pattern.iter().enumerate().all(|(k, p)| handler[i + k].is(p)))
    };
    // The local holding the `sql` argument: a bundler may rename it (`{ sql: sql2 } = args`).
    let sql = (0..handler.len().saturating_sub(4))
        .find(|&i| {
            // a destructuring (`} =` follows), not a type (`as { sql: string }`)
            handler[i].is("sql")
                && handler[i + 1].is(":")
                && handler[i + 3].is("}")
                && handler.get(i + 4).is_some_and(|t| t.is("="))
                && i > 0
                && (handler[i - 1].is("{") || handler[i - 1].is(","))
        })
        .map_or("sql", |i| handler[i + 2].text.as_str());
    let legacy_guard = || at(&["!", "areAllStatementsReadOnly", "(", sql], 0).or_else(|| at(&["!", "isReadOnlySQL", "(", sql], 0));
    let guard = match at(&["!", "areAllStatementsReadOnly", "(", sql], 0) {
        _ if is_legacy => {
            let g = legacy_guard().ok_or("no `!areAllStatementsReadOnly(sql` or `!isReadOnlySQL(sql` in the handler")?;
            legacy_mode_flag(&tokens, handler, g)?;
            g
        }
        Some(g) => {
            mode_flag(handler, g)?;
            g
        }
        None => {
            policy_gate(&tokens, handler, sql).map_err(|why| format!("no `!areAllStatementsReadOnly(sql` in the handler, and no access-policy gate: {why}"))?
        }
    };
    let refusal = (guard..handler.len()).find(|&i| handler[i].str_value() == Some("READONLY_VIOLATION")).ok_or("the guard never refuses")?;
    let returns = handler[guard..refusal].iter().any(|t| t.is("return"));
    let execute = at(&["executeSQL", "("], 0).ok_or("no executeSQL call in the handler")?;
    if !returns || execute < refusal {
        return Err("the handler does not return READONLY_VIOLATION before executeSQL".into());
    }

    // The PRAGMA assignment check: `"pragma"` … `includes("=")` … `return false` in checkReadOnly.
    let assignment_refused = (0..check.len()).any(|i| {
        check[i].str_value() == Some("pragma")
            && check[i..].iter().take(40).any(|t| t.str_value() == Some("sqlite"))
            && (i..check.len().saturating_sub(6)).take(60).any(|j| {
                check[j].is("includes")
                    && check[j + 1].is("(")
                    && check[j + 2].str_value() == Some("=")
                    && check[j + 3].is(")")
                    && check[j + 4..].iter().take(4).any(|t| t.is("return"))
                    && check[j + 4..].iter().take(6).any(|t| t.is("false"))
            })
    });
    Ok((
        pragma_allowed,
        assignment_refused,
        connector == Connector::ReaderOnly,
        format!(
            "pragma {}allowed on SQLite; assignment check {}{}",
            if pragma_allowed { "" } else { "not " },
            if assignment_refused { "present" } else { "absent" },
            if connector == Connector::ReaderOnly { "; the SQLite connector runs a statement only through all()" } else { "" }
        ),
    ))
}

/// The legacy guard `if (isReadOnlyMode() && !CLASSIFIER(…))` (at `g`, the
/// `!`), with isReadOnlyMode reading the readonly setting (the --readonly
/// flag or the READONLY variable compared with "true").
fn legacy_mode_flag(tokens: &[Token], handler: &[Token], g: usize) -> Result<(), String> {
    let flag = ["if", "(", "isReadOnlyMode", "(", ")", "&&"];
    let starts = g >= flag.len() && flag.iter().enumerate().all(|(k, p)| handler[g - flag.len() + k].is(p));
    let call_end = closing(handler, g + 2).ok_or("an unclosed classifier call")?;
    if !starts || !handler.get(call_end + 1).is_some_and(|t| t.is(")")) {
        return Err("the guard is not `if (isReadOnlyMode() && !classifier(sql, …))`".into());
    }
    let body = one_body(tokens, "isReadOnlyMode")?;
    let names = body.iter().any(|t| t.is("readonly")) && body.iter().any(|t| t.is("READONLY"));
    let compares = (0..body.len().saturating_sub(2)).any(|i| strict_eq(body, i) && body[i + 2].str_value() == Some("true"));
    if !(names && compares) {
        return Err("isReadOnlyMode does not read the readonly flag and the READONLY variable".into());
    }
    Ok(())
}

/// The guard `if (FLAG && !areAllStatementsReadOnly(…))` (at `g`, the `!`):
/// without a flag the classifier always runs; with one, the flag must be
/// the registered tool config's readonly compared with `true`, so a
/// constant, inverted or rebound flag is not understood.
fn mode_flag(handler: &[Token], g: usize) -> Result<(), String> {
    let open =
        (g.saturating_sub(80)..g).rev().find(|&i| handler[i].is("if") && handler.get(i + 1).is_some_and(|t| t.is("("))).ok_or("the guard is not an if")?;
    let end = closing(handler, open + 1).ok_or("an unclosed guard")?;
    let call_end = closing(handler, g + 2).ok_or("an unclosed classifier call")?;
    if call_end + 1 != end {
        return Err("the guard's test continues after the classifier call".into());
    }
    if g == open + 2 {
        return Ok(());
    }
    if !handler[g - 1].is("&&") || !readonly_flag(handler, &handler[open + 2..g - 1]) {
        return Err("the guard's flag is not the readonly setting of getToolRegistry().getBuiltinToolConfig(…) compared with true".into());
    }
    Ok(())
}

/// The tokens of the value of the one binding of `name` in the handler
/// (`const/let/var name = VALUE` or `, name = VALUE` in a declaration), up to
/// `;` or a `,` outside brackets; `None` when `name` is assigned, updated or
/// declared anywhere else.
fn bound_once<'t>(handler: &'t [Token], name: &str) -> Option<&'t [Token]> {
    // `name = `, `name += `, `name ||= `, `name ??= ` … (operators the scanner splits), `name++`, `--name`.
    let operator = |t: &Token| !t.text.is_empty() && t.text.chars().all(|c| "+-*/%&|^?<>".contains(c)) && t.str_value().is_none();
    let declaration = |i: usize| i > 0 && ["const", "let", "var", ","].iter().any(|k| handler[i - 1].is(k));
    // A declaration's TypeScript type (`name: ToolRegistry = …`): names, `.`, `<>`, `[]`, `|`.
    let typed = |i: usize| {
        if !declaration(i) || !handler.get(i + 1).is_some_and(|t| t.is(":")) {
            return None;
        }
        let ty = handler[i + 2..]
            .iter()
            .take(10)
            .take_while(|t| t.text.chars().all(|c| c.is_alphanumeric() || c == '_' || ".<>[]|".contains(c)) && !t.is("="))
            .count();
        handler.get(i + 2 + ty).filter(|t| t.is("=")).map(|_| i + 2 + ty)
    };
    let writes: Vec<(usize, Option<usize>)> = (0..handler.len().saturating_sub(1))
        .filter(|&i| handler[i].is(name) && !(i > 0 && handler[i - 1].is(".")))
        .filter_map(|i| {
            if let Some(eq) = typed(i) {
                return Some((i, Some(eq)));
            }
            let ops = handler[i + 1..].iter().take(3).take_while(|t| operator(t)).count();
            let assigns = handler.get(i + 1 + ops).is_some_and(|t| t.is("="));
            let stepped = |a: Option<&Token>, b: Option<&Token>| a.zip(b).is_some_and(|(a, b)| (a.is("+") && b.is("+")) || (a.is("-") && b.is("-")));
            let writes = assigns || stepped(handler.get(i + 1), handler.get(i + 2)) || (i >= 2 && stepped(handler.get(i - 2), handler.get(i - 1)));
            writes.then(|| (i, (ops == 0 && assigns && declaration(i)).then_some(i + 1)))
        })
        .collect();
    let [(_, Some(eq))] = writes.as_slice() else { return None };
    let start = eq + 1;
    let mut depth = 0i32;
    let end = (start..handler.len()).find(|&j| {
        let t = &handler[j];
        if t.is("(") || t.is("[") || t.is("{") {
            depth += 1;
        } else if t.is(")") || t.is("]") || t.is("}") {
            depth -= 1;
        }
        depth < 0 || (depth == 0 && (t.is(";") || t.is(",")))
    })?;
    Some(&handler[start..end])
}

/// `e` without parentheses around the whole of it.
fn unwrap_parens(e: &[Token]) -> &[Token] {
    match e {
        [first, .., last] if first.is("(") && last.is(")") && closing(e, 0) == Some(e.len() - 1) => unwrap_parens(&e[1..e.len() - 1]),
        _ => e,
    }
}

/// A one-token identifier `e` that is bound once, followed to its value; else `e`.
fn followed<'t>(handler: &'t [Token], e: &'t [Token]) -> Option<&'t [Token]> {
    match unwrap_parens(e) {
        [one] => bound_once(handler, &one.text).map(unwrap_parens),
        other => Some(other),
    }
}

/// `SETTING === true`, the flag the guard may require (directly or through a local bound once).
fn readonly_flag(handler: &[Token], e: &[Token]) -> bool {
    let Some(e) = followed(handler, e) else { return false };
    let n = e.len();
    n >= 4 && e[n - 1].is("true") && strict_eq(e, n - 3) && readonly_setting(handler, &e[..n - 3])
}

/// `CONFIG?.readonly` / `CONFIG.readonly`, CONFIG `REGISTRY.getBuiltinToolConfig(…)`
/// and REGISTRY `getToolRegistry()`, each directly or through a local bound once.
fn readonly_setting(handler: &[Token], e: &[Token]) -> bool {
    let Some(e) = followed(handler, e) else { return false };
    let n = e.len();
    if n < 3 || !e[n - 1].is("readonly") || !e[n - 2].is(".") {
        return false;
    }
    let config_end = if e[n - 3].is("?") { n - 3 } else { n - 2 };
    let Some(config) = followed(handler, &e[..config_end]) else { return false };
    let Some(k) = config.iter().position(|t| t.is("getBuiltinToolConfig")) else { return false };
    let call_ok = k >= 2 && config[k - 1].is(".") && config.get(k + 1).is_some_and(|t| t.is("(")) && closing(config, k + 1) == Some(config.len() - 1);
    let registry = followed(handler, &config[..k.saturating_sub(1)]);
    call_ok && registry.is_some_and(|r| r.len() == 3 && r[0].is("getToolRegistry") && r[1].is("(") && r[2].is(")"))
}

/// The index of the matching `)` for the `(` at `open`.
fn closing(tokens: &[Token], open: usize) -> Option<usize> {
    crate::lex::matching(tokens, open, "(", ")")
}

/// `a === b` as the scanner splits it: `==` then `=`.
fn strict_eq(tokens: &[Token], at: usize) -> bool {
    tokens.get(at).is_some_and(|t| t.is("==")) && tokens.get(at + 1).is_some_and(|t| t.is("="))
}

/// The one body of function `name`.
fn one_body<'t>(tokens: &'t [Token], name: &str) -> Result<&'t [Token], String> {
    match bodies(tokens, name).as_slice() {
        [one] => Ok(one),
        other => Err(format!("{} {name} functions", other.len())),
    }
}

/// The access-policy gate (the envelope's shape from 1.0 on): the handler
/// refuses when `sqlVerdict(P, sql, …) === "deny"`, P bound once to
/// `policyFromReadonly(…)`. It refuses whatever the classifier refuses in
/// read-only mode only when the helpers say so, so each is read here: the
/// policy denies every class but `read` when readonly is `true`, the verdict is
/// the policy's entry for classifySQL's class, classifySQL keeps the class of
/// highest CLASS_SEVERITY with `read` the lowest, and classifyStatement says
/// `read` only when isReadOnlySQL holds. Returns where the gate starts.
fn policy_gate(tokens: &[Token], handler: &[Token], sql: &str) -> Result<usize, String> {
    let g = (0..handler.len().saturating_sub(6))
        .find(|&i| handler[i].is("sqlVerdict") && handler[i + 1].is("(") && handler[i + 3].is(",") && handler[i + 4].is(sql) && handler[i + 5].is(","))
        .ok_or("no `sqlVerdict(policy, sql, …)`")?;
    let policy = handler[g + 2].text.clone();
    let close = closing(handler, g + 1).ok_or("an unclosed sqlVerdict call")?;
    let deny_after = strict_eq(handler, close + 1) && handler.get(close + 3).and_then(Token::str_value) == Some("deny");
    let deny_before = g >= 3 && handler[g - 3].str_value() == Some("deny") && strict_eq(handler, g - 2);
    if !(deny_after || deny_before) || !handler[..g].iter().rev().take(6).any(|t| t.is("if")) {
        return Err("the verdict is not tested as `=== \"deny\"` by an if".into());
    }
    // The policy: bound once, from policyFromReadonly, never written through.
    let binds: Vec<usize> =
        (0..handler.len().saturating_sub(2)).filter(|&i| handler[i].is(&policy) && handler[i + 1].is("=") && !(i > 0 && handler[i - 1].is("."))).collect();
    let [bind] = binds.as_slice() else { return Err(format!("`{policy}` is bound {} times", binds.len())) };
    if !(handler[bind + 2].is("policyFromReadonly") && handler[bind + 3].is("(")) || bind + 2 > g {
        return Err(format!("`{policy}` is not bound to policyFromReadonly(…) before the gate"));
    }
    // What the policy is compiled from: the registered tool config's readonly, nothing else.
    let given = closing(handler, bind + 3).ok_or("an unclosed policyFromReadonly call")?;
    if !readonly_setting(handler, &handler[bind + 4..given]) {
        return Err("policyFromReadonly is not given the readonly setting of getToolRegistry().getBuiltinToolConfig(…)".into());
    }
    let written = (0..handler.len().saturating_sub(3)).any(|i| {
        handler[i].is(&policy)
            && (handler[i + 1].is(".") || handler[i + 1].is("["))
            && (i + 2..(i + 8).min(handler.len())).any(|j| handler[j].is("=") && !handler[j - 1].is("=="))
    });
    if written {
        return Err(format!("a member of `{policy}` is written"));
    }

    // policyFromReadonly: `W = P === true ? "deny" : "allow"`, then `return { read: "allow", K: W, … }`.
    let body = one_body(tokens, "policyFromReadonly")?;
    let t = (2..body.len().saturating_sub(4))
        .find(|&i| {
            body[i].is("true")
                && strict_eq(body, i - 2)
                && body[i + 1].is("?")
                && body[i + 2].str_value() == Some("deny")
                && body[i + 3].is(":")
                && body[i + 4].str_value() == Some("allow")
        })
        .ok_or("policyFromReadonly has no `=== true ? \"deny\" : \"allow\"`")?;
    let decl = (0..t).rev().find(|&i| body[i].is("const") || body[i].is("let")).ok_or("policyFromReadonly's choice is not a declaration")?;
    let write = body[decl + 1].text.clone();
    let returns: Vec<usize> = (0..body.len()).filter(|&i| body[i].is("return")).collect();
    let [ret] = returns.as_slice() else { return Err("policyFromReadonly does not return once".into()) };
    if !body.get(ret + 1).is_some_and(|b| b.is("{")) {
        return Err("policyFromReadonly does not return an object literal".into());
    }
    let mut pairs = Vec::new();
    let mut i = ret + 2;
    while i + 2 < body.len() && !body[i].is("}") {
        if !body[i + 1].is(":") {
            return Err("policyFromReadonly's object is not `key: value` pairs".into());
        }
        pairs.push((body[i].text.clone(), body[i + 2].clone()));
        i += 3;
        if body.get(i).is_some_and(|c| c.is(",")) {
            i += 1;
        }
    }
    let read_allowed = pairs.iter().filter(|(k, _)| k == "read").all(|(_, v)| v.str_value() == Some("allow")) && pairs.iter().any(|(k, _)| k == "read");
    let others_write = pairs.iter().filter(|(k, _)| k != "read").all(|(_, v)| v.is(&write));
    if !read_allowed || !others_write || pairs.len() < 2 {
        return Err("policyFromReadonly's policy is not `read: \"allow\"` with every other class the readonly choice".into());
    }

    // sqlVerdict: `return P[classifySQL(A, B)]` and nothing else.
    let body: Vec<&Token> = one_body(tokens, "sqlVerdict")?.iter().filter(|t| !t.is(";")).collect();
    let shape = ["return", "", "[", "classifySQL", "(", "", ",", "", ")", "]"];
    if body.len() != shape.len() || !shape.iter().zip(&body).all(|(want, t)| want.is_empty() || t.is(want)) {
        return Err("sqlVerdict is not `return policy[classifySQL(sql, type)]`".into());
    }

    // CLASS_SEVERITY: `read` ranks strictly lowest.
    let table = (0..tokens.len().saturating_sub(1))
        .filter(|&i| tokens[i].is("CLASS_SEVERITY") && (i + 1..(i + 12).min(tokens.len())).any(|j| tokens[j].is("=")))
        .filter_map(|i| (i + 1..(i + 12).min(tokens.len())).find(|&j| tokens[j].is("=")).filter(|&j| tokens.get(j + 1).is_some_and(|t| t.is("{"))))
        .collect::<Vec<_>>();
    let [open] = table.as_slice() else { return Err(format!("{} CLASS_SEVERITY tables", table.len())) };
    let patched = (0..tokens.len().saturating_sub(4)).any(|i| {
        tokens[i].is("CLASS_SEVERITY")
            && (tokens[i + 1].is(".") || tokens[i + 1].is("["))
            && (i + 2..(i + 6).min(tokens.len())).any(|j| tokens[j].is("=") && !tokens[j - 1].is("=="))
    });
    if patched {
        return Err("a member of CLASS_SEVERITY is written".into());
    }
    let mut ranks = Vec::new();
    let mut i = open + 2;
    while i + 2 < tokens.len() && !tokens[i].is("}") {
        let value: Option<i64> = tokens[i + 2].text.parse().ok();
        if !tokens[i + 1].is(":") || value.is_none() {
            return Err("CLASS_SEVERITY is not `class: number` pairs".into());
        }
        ranks.push((tokens[i].text.clone(), value.unwrap_or_default()));
        i += 3;
        if tokens.get(i).is_some_and(|c| c.is(",")) {
            i += 1;
        }
    }
    let read = ranks.iter().find(|(k, _)| k == "read").map(|(_, v)| *v).ok_or("CLASS_SEVERITY has no read")?;
    if ranks.iter().any(|(k, v)| k != "read" && *v <= read) {
        return Err("CLASS_SEVERITY does not rank read strictly lowest".into());
    }

    // classifySQL: starts at "read", iterates the split statements, keeps the higher-ranked class.
    let body = one_body(tokens, "classifySQL")?;
    let has = |pattern: &[&str]| {
        (0..body.len().saturating_sub(pattern.len() - 1)).any(|i| pattern.iter().enumerate().all(|(k, p)| p.is_empty() || body[i + k].is(p)))
    };
    let ret = (0..body.len().saturating_sub(1)).rev().find(|&i| body[i].is("return")).ok_or("classifySQL returns nothing")?;
    let worst = body[ret + 1].text.clone();
    let declared = |i: usize| i > 0 && (body[i - 1].is("let") || body[i - 1].is("var"));
    let starts_read =
        (1..body.len().saturating_sub(3)).any(|i| body[i].is(&worst) && declared(i) && body[i + 1..].iter().take(4).any(|t| t.str_value() == Some("read")));
    let assigned = (1..body.len().saturating_sub(1)).filter(|&i| body[i].is(&worst) && body[i + 1].is("=") && !declared(i)).count();
    let keeps_max = (0..body.len().saturating_sub(9)).any(|i| {
        body[i].is("CLASS_SEVERITY")
            && body[i + 1].is("[")
            && body[i + 3].is("]")
            && body[i + 4].is(">")
            && body[i + 5].is("CLASS_SEVERITY")
            && body[i + 6].is("[")
            && body[i + 7].is(&worst)
            && body[i + 8].is("]")
    });
    if !(starts_read && assigned == 1 && keeps_max && has(&["of", "splitSQLStatements", "("]) && has(&["classifyStatement", "("])) {
        return Err("classifySQL does not keep the highest-ranked class of the split statements, starting at read".into());
    }

    // classifyStatement: "read" only under `if (isReadOnlySQL(…))`.
    let body = one_body(tokens, "classifyStatement")?;
    let reads: Vec<usize> = (0..body.len()).filter(|&i| body[i].str_value() == Some("read")).collect();
    let [r] = reads.as_slice() else { return Err("classifyStatement does not name read once".into()) };
    let test = (0..*r).rev().find(|&i| body[i].is("if")).ok_or("classifyStatement says read without a test")?;
    let test_close = closing(body, test + 1).ok_or("an unclosed test")?;
    let plain = body[test + 2].is("isReadOnlySQL") && body[test + 3].is("(") && closing(body, test + 3) == Some(test_close - 1);
    let then_return = body[test_close + 1..*r].iter().all(|t| t.is("{") || t.is("return")) && body[*r - 1].is("return");
    if !(plain && then_return) {
        return Err("classifyStatement's read is not `if (isReadOnlySQL(…)) return \"read\"`".into());
    }
    Ok(g)
}

/// What the statement is, by the envelope's own words.
enum Statement {
    Several,
    Select,
    SelectInto,
    PragmaRead,
    PragmaAssign,
    Other,
}

fn classify(sql: &str) -> Statement {
    let s = sql.trim().trim_end_matches(';').trim();
    if s.contains(';') {
        return Statement::Several;
    }
    let lower = s.to_ascii_lowercase();
    let mut words = lower.split_whitespace();
    match words.next() {
        Some("select") if lower.split(|c: char| !c.is_ascii_alphanumeric() && c != '_').any(|w| w == "into") => Statement::SelectInto,
        Some("select") => Statement::Select,
        Some("pragma") => {
            let rest = lower["pragma".len()..].trim();
            let name_end = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(rest.len());
            let (name, tail) = rest.split_at(name_end);
            let tail = tail.trim();
            let numeric = |v: &str| {
                let v = v.trim().strip_prefix('-').unwrap_or(v.trim());
                !v.is_empty() && v.chars().all(|c| c.is_ascii_digit())
            };
            if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) {
                Statement::Other
            } else if tail.is_empty() {
                Statement::PragmaRead
            } else if tail.strip_prefix('=').is_some_and(numeric) {
                Statement::PragmaAssign
            } else {
                Statement::Other
            }
        }
        _ => Statement::Other,
    }
}

pub fn verdict(shape: &Shape, args: &Map<String, Value>, ctx: &Context) -> (Verdict, String) {
    let (pragma_allowed, assignment_refused, reader_only, where_) = match shape {
        Shape::Understood { pragma_allowed, assignment_refused, reader_only, where_ } => (*pragma_allowed, *assignment_refused, *reader_only, where_.as_str()),
        Shape::NotUnderstood(why) => return (Verdict::CannotJudge, why.clone()),
    };
    if ctx.config["readonly"] != Value::Bool(true) || ctx.config["connector"] != Value::String("sqlite".into()) {
        return (Verdict::Unknown, "only read-only mode on SQLite is modeled".into());
    }
    let Some(sql) = args.get("sql").and_then(Value::as_str) else {
        return (Verdict::CannotJudge, "the call has no sql string".into());
    };
    let read = Effect { op: "sql:read".into(), resource: ctx.destination.clone(), exposure: 0, mutation: false, write_scopes: vec![] };
    let effect = match classify(sql) {
        Statement::Several => return (Verdict::Unknown, format!("{where_}; several statements")),
        Statement::SelectInto | Statement::Other => return (Verdict::Unknown, format!("{where_}; a statement the oracle does not model")),
        Statement::Select => read,
        Statement::PragmaRead if pragma_allowed => read,
        Statement::PragmaRead => return (Verdict::Reject, format!("{where_}; PRAGMA is not an allowed keyword")),
        Statement::PragmaAssign if !pragma_allowed || assignment_refused => {
            return (Verdict::Reject, format!("{where_}; the classifier refuses the assignment: READONLY_VIOLATION"));
        }
        // better-sqlite3's all() throws before running a statement that returns no rows.
        Statement::PragmaAssign if reader_only => read,
        Statement::PragmaAssign => Effect { op: "sql:mutate".into(), resource: ctx.destination.clone(), exposure: 0, mutation: true, write_scopes: vec![] },
    };
    let breaches = ctx.breaches(&[effect]);
    if breaches.is_empty() {
        (Verdict::Safe, format!("{where_}; the statement reads"))
    } else {
        (Verdict::Unsafe, format!("{where_}; {}", breaches.join("; ")))
    }
}
