//! The oracle for the GitHub server's `create_or_update_file`.
//!
//! From the envelope: GitHub replaces an existing file only when the write
//! carries a sha, so what an omitted `sha` may do is decided by where the
//! `SHA` of the options handed to the one `Repositories.CreateFile` call can
//! come from. When every assignment to it gives the caller's `sha` (read once
//! through the optional helper), an omitted sha can only create a file and a
//! given one can only replace that version. When one assignment gives
//! anything else while the handler reads the repository first (a lookup or a
//! raw request), the handler may send the file's current SHA: a blind
//! overwrite. The oracle reads the token stream of the constructor
//! (`CreateOrUpdateFile`, or `createOrUpdateFile` in the first releases) and
//! nothing else.

use std::path::Path;

use serde_json::{Map, Value};

use crate::Verdict;
use crate::contract::{Context, Effect};
use crate::files;
use crate::lex::{Dialect, Token, scan};

pub enum Shape {
    /// Whether an omitted sha may replace an existing file, and where that was read.
    Understood {
        overwrites: bool,
        where_: String,
    },
    NotUnderstood(String),
}

pub fn read(root: &Path) -> Shape {
    match understand(root) {
        Ok((overwrites, where_)) => Shape::Understood { overwrites, where_ },
        Err(why) => Shape::NotUnderstood(why),
    }
}

fn understand(root: &Path) -> Result<(bool, String), String> {
    let package = files::find(root, &|p| p.ends_with(".go") && !p.ends_with("_test.go") && p.rsplit_once('/').is_some_and(|(d, _)| d.ends_with("pkg/github")));
    let mut found = Vec::new();
    for (name, path) in &package {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{name}: {e}"))?;
        let tokens = scan(&text, Dialect::Go).map_err(|e| format!("{name}: {e}"))?;
        for i in 0..tokens.len().saturating_sub(2) {
            if tokens[i].is("func") && (tokens[i + 1].is("CreateOrUpdateFile") || tokens[i + 1].is("createOrUpdateFile")) && tokens[i + 2].is("(") {
                found.push((name.clone(), tokens.clone(), i));
            }
        }
    }
    let [(name, tokens, start)] = found.as_slice() else {
        return Err(format!("{} functions CreateOrUpdateFile in pkg/github", found.len()));
    };
    let body = crate::lex::go_function_body(tokens, *start).ok_or_else(|| format!("{name}: CreateOrUpdateFile has no body"))?;
    let words: Vec<&str> = body.iter().map(|t| t.text.as_str()).collect();
    let window = |pattern: &[&str]| (0..body.len().saturating_sub(pattern.len() - 1)).filter(|&i| words[i..i + pattern.len()] == *pattern).collect::<Vec<_>>();

    // The one write, and the options it is handed (its last argument).
    let writes = window(&[".", "Repositories", ".", "CreateFile", "("]);
    let [write] = writes.as_slice() else {
        return Err(format!("{name}: {} Repositories.CreateFile calls", writes.len()));
    };
    let args = crate::lex::call_arguments(&body[write + 5..]);
    let opts = match args.as_slice() {
        [_, _, _, _, last] if last.len() == 1 => last[0].text.clone(),
        _ => return Err(format!("{name}: CreateFile is not called with five arguments, the options a plain variable")),
    };

    // The caller's sha: `VAR, err := HELPER(MAP, "sha")`, read once.
    let reads: Vec<usize> = (0..body.len().saturating_sub(2))
        .filter(|&i| (body[i].is("args") || body[i].is("request")) && body[i + 1].is(",") && body[i + 2].str_value() == Some("sha"))
        .collect();
    let [read] = reads.as_slice() else {
        return Err(format!("{name}: `sha` is read {} times through a helper", reads.len()));
    };
    if (0..body.len().saturating_sub(1)).any(|i| body[i].is("[") && body[i + 1].str_value() == Some("sha")) {
        return Err(format!("{name}: args[\"sha\"] is read directly"));
    }
    let open = read.checked_sub(1).filter(|&o| body[o].is("(")).ok_or_else(|| format!("{name}: unexpected helper call shape"))?;
    let assign = (0..open).rev().find(|&i| body[i].is(":=")).ok_or_else(|| format!("{name}: the helper's result is not declared"))?;
    let helper: String = words[assign + 1..open].concat();
    if !matches!(helper.as_str(), "OptionalParam[string]" | "optionalParam[string]") {
        return Err(format!("{name}:{}: `sha` is read by `{helper}`, which the oracle does not know", body[*read].line));
    }
    let line_start = (0..assign).rev().find(|&i| body[i].text == "\n").map_or(0, |i| i + 1);
    let sha = body[line_start].text.clone();
    let binds = |i: usize| match body.get(i + 1).map(|t| t.text.as_str()) {
        Some("=" | ":=") => true,
        Some(",") => body.get(i + 3).is_some_and(|t| t.is("=") || t.is(":=")),
        _ => false,
    };
    if (0..body.len()).filter(|&i| body[i].is(&sha) && binds(i)).count() != 1 {
        return Err(format!("{name}: `{sha}` is bound more than once"));
    }
    if window(&[sha.as_str(), "!=", "\"\""]).is_empty() {
        return Err(format!("{name}: no `{sha} != \"\"` test: what an empty sha does is not read"));
    }

    // Every way the options' SHA is set: `OPTS.SHA = PTR(VALUE)`, never a field of the literal.
    if window(&["SHA", ":"]).iter().any(|&i| i == 0 || !body[i - 1].is(".")) {
        return Err(format!("{name}: a struct literal sets SHA"));
    }
    if !window(&[opts.as_str(), "="]).is_empty() || !window(&["&", opts.as_str()]).is_empty() {
        return Err(format!("{name}: `{opts}` is assigned again or its address taken"));
    }
    let mut foreign = Vec::new();
    for at in window(&[".", "SHA", "="]) {
        if at == 0 || body[at - 1].text != opts {
            return Err(format!("{name}:{}: the SHA of another value than `{opts}` is set", body[at].line));
        }
        let value = &body[at + 3..];
        if !caller_sha(value, &sha) {
            foreign.push(body[at].line);
        }
    }
    let reads_repository = ["GetContents", "NewRequest", "Do"].iter().any(|m| !window(&[".", m, "("]).is_empty());
    match (foreign.as_slice(), reads_repository) {
        ([], _) => Ok((false, format!("{name}: {opts}.SHA only ever receives the caller's `{sha}`"))),
        ([line, ..], true) => Ok((
            true,
            format!("{name}:{line}: {opts}.SHA receives something other than the caller's `{sha}`, and the handler reads the repository before the write"),
        )),
        ([line, ..], false) => Err(format!("{name}:{line}: {opts}.SHA receives something other than the caller's sha, read from nowhere the oracle knows")),
    }
}

/// `github.Ptr(SHA)` or `ptr.String(SHA)` up to the end of the line.
fn caller_sha(value: &[Token], sha: &str) -> bool {
    let words: Vec<&str> = value.iter().map(|t| t.text.as_str()).take_while(|w| *w != "\n" && *w != "}" && *w != ";").collect();
    words == ["github", ".", "Ptr", "(", sha, ")"] || words == ["ptr", ".", "String", "(", sha, ")"]
}

/// The envelope's names: GitHub's alphabet, not only dots.
fn plain_name(s: &str) -> bool {
    (1..=100).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b)) && !s.bytes().all(|b| b == b'.')
}

/// The envelope's path: plain relative segments, none of them `.` or `..`.
fn plain_path(s: &str) -> bool {
    !s.is_empty()
        && s.split('/').all(|seg| !seg.is_empty() && seg != "." && seg != ".." && seg.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b)))
}

pub fn verdict(shape: &Shape, args: &Map<String, Value>, ctx: &Context) -> (Verdict, String) {
    let (overwrites, where_) = match shape {
        Shape::Understood { overwrites, where_ } => (*overwrites, where_.as_str()),
        Shape::NotUnderstood(why) => return (Verdict::CannotJudge, why.clone()),
    };
    let text = |k: &str| args.get(k).and_then(Value::as_str);
    for required in ["owner", "repo", "path", "content", "message", "branch"] {
        if text(required).is_none() {
            return (Verdict::CannotJudge, format!("the call has no string {required}"));
        }
    }
    let (owner, repo, path) = (text("owner").unwrap_or_default(), text("repo").unwrap_or_default(), text("path").unwrap_or_default());
    if !plain_name(owner) || !plain_name(repo) {
        return (Verdict::Unknown, format!("owner `{owner}` or repo `{repo}` is outside the envelope"));
    }
    if !plain_path(path) {
        return (Verdict::Unknown, format!("path `{path}` is outside the envelope"));
    }
    if args.get("allow_symlink_write").is_some_and(|v| !v.is_null()) {
        return (Verdict::Unknown, "allow_symlink_write is an argument no reviewed release reads".into());
    }
    let given = match args.get("sha") {
        None | Some(Value::Null) => false,
        Some(Value::String(s)) => !s.is_empty(),
        Some(other) => return (Verdict::CannotJudge, format!("sha is {other}, not a string")),
    };
    let resource = format!("{owner}/{repo}/{path}");
    let effect = |op: &str| Effect { op: op.into(), resource: resource.clone(), exposure: 0, mutation: true, write_scopes: vec![] };
    let (effects, what) = match (overwrites, given) {
        (false, false) => (vec![effect("github:contents.create")], "can only create the file"),
        (false, true) => (vec![effect("github:contents.create"), effect("github:contents.update")], "creates the file or replaces the version sha names"),
        (true, _) => (vec![effect("github:contents.create"), effect("github:contents.overwrite")], "may replace whatever file is there"),
    };
    let breaches = ctx.breaches(&effects);
    if breaches.is_empty() {
        (Verdict::Safe, format!("{where_}; {what} at {resource}"))
    } else {
        (Verdict::Unsafe, format!("{where_}; {what} at {resource}: {}", breaches.join("; ")))
    }
}
