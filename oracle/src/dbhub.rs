//! The oracle for DBHub's `execute_sql` in read-only mode.
//!
//! From the envelope: the handler refuses with READONLY_VIOLATION whatever the
//! classifier does not call read-only, before the SQL reaches the database;
//! the classifier allows a statement whose first keyword is in the SQLite
//! list, except (where the check exists) a PRAGMA holding `=`. The oracle
//! finds the keyword list, the check and the guard as token sequences, and
//! classifies the SQL itself.

use std::path::Path;

use serde_json::{Map, Value};

use crate::Verdict;
use crate::contract::{Context, Effect};
use crate::files;
use crate::lex::{Dialect, Token, scan};

pub enum Shape {
    Understood { pragma_allowed: bool, assignment_refused: bool, where_: String },
    NotUnderstood(String),
}

pub fn read(root: &Path) -> Shape {
    match understand(root) {
        Ok((pragma_allowed, assignment_refused, where_)) => Shape::Understood { pragma_allowed, assignment_refused, where_ },
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
        let Some(open) = (i + 2..tokens.len()).find(|&j| tokens[j].is("{")) else { continue };
        let mut depth = 0;
        for (j, t) in tokens.iter().enumerate().skip(open) {
            if t.is("{") {
                depth += 1;
            } else if t.is("}") {
                depth -= 1;
                if depth == 0 {
                    out.push(&tokens[open + 1..j]);
                    break;
                }
            }
        }
    }
    out
}

fn understand(root: &Path) -> Result<(bool, bool, String), String> {
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
            Err(e) if text.contains("checkReadOnly") || text.contains("createExecuteSqlToolHandler") => return Err(format!("{name}: {e}")),
            Err(_) => {}
        }
    }
    let checks = bodies(&tokens, "checkReadOnly");
    let [check] = checks.as_slice() else { return Err(format!("{} checkReadOnly functions", checks.len())) };
    let handlers = bodies(&tokens, "createExecuteSqlToolHandler");
    let [handler] = handlers.as_slice() else { return Err(format!("{} createExecuteSqlToolHandler functions", handlers.len())) };

    // The SQLite row of the `allowedKeywords = { … }` table.
    let mut rows = Vec::new();
    let tables: Vec<(usize, usize)> = (0..tokens.len())
        .filter(|&i| tokens[i].is("allowedKeywords"))
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
    let guard = at(&["!", "areAllStatementsReadOnly", "(", "sql"], 0).ok_or("no `!areAllStatementsReadOnly(sql` in the handler")?;
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
        format!(
            "pragma {}allowed on SQLite; assignment check {}",
            if pragma_allowed { "" } else { "not " },
            if assignment_refused { "present" } else { "absent" }
        ),
    ))
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
    let (pragma_allowed, assignment_refused, where_) = match shape {
        Shape::Understood { pragma_allowed, assignment_refused, where_ } => (*pragma_allowed, *assignment_refused, where_.as_str()),
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
        Statement::PragmaAssign => Effect { op: "sql:mutate".into(), resource: ctx.destination.clone(), exposure: 0, mutation: true, write_scopes: vec![] },
    };
    let breaches = ctx.breaches(&[effect]);
    if breaches.is_empty() {
        (Verdict::Safe, format!("{where_}; the statement reads"))
    } else {
        (Verdict::Unsafe, format!("{where_}; {}", breaches.join("; ")))
    }
}
