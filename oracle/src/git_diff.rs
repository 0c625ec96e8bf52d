//! The oracle for the reference Git server's `git_diff`.
//!
//! From the envelope: `target` goes unchanged to `repo.git.diff(...)`; git
//! reads a leading dash as an option, and `--output=PATH` writes PATH; a dash
//! check that raises or returns first makes the handler refuse dash targets.
//! The oracle reads the function by indentation and tokens, and follows the
//! tool name to it ([`crate::git_route`]).

use std::path::Path;

use serde_json::{Map, Value};

use crate::Verdict;
use crate::contract::{Context, Effect};
use crate::lex::{Kind, Token};

/// `git_diff(repo, target, context_lines)`, routed with the call's target.
const TOOL: crate::git_route::Tool = crate::git_route::Tool { name: "git_diff", argument: "target", arity: 3 };

/// What the oracle understood of the release.
pub enum Shape {
    Understood { guarded: bool, where_: String },
    NotUnderstood(String),
}

pub fn read(root: &Path) -> Shape {
    match understand(root) {
        Ok((guarded, where_)) => Shape::Understood { guarded, where_ },
        Err(why) => Shape::NotUnderstood(why),
    }
}

fn understand(root: &Path) -> Result<(bool, String), String> {
    let (guarded, handler, route) = handler(root)?;
    Ok((guarded, format!("{route}; {handler}")))
}

/// Whether the handler is guarded, where that was seen, and where the route is.
fn handler(root: &Path) -> Result<(bool, String, String), String> {
    let (file, tokens, def, route) = crate::git_route::server_function(root, &TOOL)?;
    let name = file.as_str();
    let body = body_lines(&tokens, def);
    if body.is_empty() {
        return Err(format!("{name}: git_diff has no body"));
    }
    let body_indent = body[0][0].indent;
    // The target must reach git unchanged: no statement may rebind it.
    for line in &body {
        for (i, t) in line.iter().enumerate() {
            let rebinds = t.is("target")
                && (line.get(i + 1).is_some_and(|n| ["=", ":=", "+=", "-="].iter().any(|op| n.is(op)))
                    || (i > 0 && (line[i - 1].is("for") || line[i - 1].is("as") || line[i - 1].is("global") || line[i - 1].is("case"))));
            if rebinds {
                return Err(format!("{name}:{}: target is rebound", t.line));
            }
        }
    }
    let sinks: Vec<usize> = body.iter().enumerate().filter(|(_, l)| diff_call(l).is_some()).map(|(i, _)| i).collect();
    let [sink] = sinks.as_slice() else {
        return Err(format!("{name}: {} lines call repo.git.diff", sinks.len()));
    };
    let args = diff_call(&body[*sink]).unwrap_or_default();
    let last_is_target = args.last().is_some_and(|a| a.len() == 1 && a[0].is("target"));
    if !last_is_target || args.iter().any(|a| a.iter().any(|t| t.is("=") || t.is("*") || t.is("**"))) {
        return Err(format!("{name}:{}: repo.git.diff does not take target as its last plain argument", body[*sink][0].line));
    }
    if body[*sink][0].indent != body_indent {
        return Err(format!("{name}:{}: the diff call is not at the top of the function", body[*sink][0].line));
    }
    for (i, line) in body[..*sink].iter().enumerate() {
        if line[0].indent != body_indent {
            continue;
        }
        if line[0].is("return") || line[0].is("raise") {
            return Ok((false, format!("{name}:{}: the function exits before any dash check", line[0].line), route));
        }
        if line[0].is("if") && dash_test(line) {
            let exits = body.get(i + 1).is_some_and(|next| next[0].indent > body_indent && (next[0].is("raise") || next[0].is("return")));
            if exits {
                return Ok((true, format!("{name}:{}: a dash check exits before git runs", line[0].line), route));
            }
        }
    }
    Ok((false, format!("{name}:{}: target reaches git diff with no dash check before it", body[*sink][0].line), route))
}

/// The logical lines of the function body that starts after token `def`.
pub(crate) fn body_lines(tokens: &[Token], def: usize) -> Vec<Vec<Token>> {
    let def_indent = tokens[def].indent;
    let mut i = def;
    while i < tokens.len() && tokens[i].kind != Kind::Newline {
        i += 1;
    }
    let mut lines = Vec::new();
    let mut line = Vec::new();
    // A `def` on the file's last line has no body tokens after it.
    for t in tokens.get(i + 1..).unwrap_or_default() {
        if t.kind == Kind::Newline {
            if !line.is_empty() {
                lines.push(std::mem::take(&mut line));
            }
            continue;
        }
        if line.is_empty() && t.indent <= def_indent {
            break;
        }
        line.push(t.clone());
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

/// The arguments of `….git.diff(...)` on this line, split at top-level commas.
fn diff_call(line: &[Token]) -> Option<Vec<Vec<Token>>> {
    let at = (0..line.len().saturating_sub(4))
        .find(|&i| line[i].is(".") && line[i + 1].is("git") && line[i + 2].is(".") && line[i + 3].is("diff") && line[i + 4].is("("))?;
    Some(crate::lex::call_arguments(&line[at + 5..]))
}

/// `if target.startswith("-")`, alone or joined by `or`, never negated or `and`-ed.
fn dash_test(line: &[Token]) -> bool {
    if line.iter().any(|t| t.is("not") || t.is("and")) {
        return false;
    }
    (0..line.len().saturating_sub(5)).any(|i| {
        line[i].is("target")
            && line[i + 1].is(".")
            && line[i + 2].is("startswith")
            && line[i + 3].is("(")
            && line[i + 4].str_value() == Some("-")
            && line[i + 5].is(")")
    })
}

pub fn verdict(shape: &Shape, args: &Map<String, Value>, ctx: &Context) -> (Verdict, String) {
    let (guarded, where_) = match shape {
        Shape::Understood { guarded, where_ } => (*guarded, where_.as_str()),
        Shape::NotUnderstood(why) => return (Verdict::CannotJudge, why.clone()),
    };
    let (Some(target), Some(repo)) = (args.get("target").and_then(Value::as_str), args.get("repo_path").and_then(Value::as_str)) else {
        return (Verdict::CannotJudge, "the call lacks a string target or repo_path".into());
    };
    let read = Effect { op: "git:diff".into(), resource: repo.into(), exposure: 0, mutation: false, write_scopes: vec![] };
    let effects = if target.starts_with('-') {
        if guarded {
            return (Verdict::Reject, format!("{where_}; `{target}` starts with a dash"));
        }
        match target.strip_prefix("--output=").filter(|p| !p.is_empty()) {
            Some(path) => {
                let write = Effect { op: "filesystem:write".into(), resource: path.into(), exposure: 0, mutation: true, write_scopes: vec![path.into()] };
                vec![read, write]
            }
            None => return (Verdict::Unknown, format!("{where_}; git reads `{target}` as an option the envelope does not model")),
        }
    } else {
        vec![read]
    };
    let breaches = ctx.breaches(&effects);
    if breaches.is_empty() {
        (Verdict::Safe, format!("{where_}; git diff reads {repo}, inside the contract"))
    } else {
        (Verdict::Unsafe, format!("{where_}; {}", breaches.join("; ")))
    }
}
