//! The oracle for the GitHub server's `create_repository`.
//!
//! From the envelope: the handler reads `private` once through a parameter
//! helper (the plain optional one yields false when omitted; the one with a
//! default yields its default), and that value is what `Private` of the new
//! repository receives. The oracle finds the read and the field in the token
//! stream of `func CreateRepository` and nothing else. The argument map is
//! `args` (a map) or `request` (an mcp-go request, in older releases); when
//! the create call's owner is the empty string literal, the release has no
//! organization argument and the repository goes to the principal.

use std::path::Path;

use serde_json::{Map, Value};

use crate::Verdict;
use crate::contract::{Context, Effect};
use crate::files;
use crate::lex::{Dialect, Token, scan};

pub enum Shape {
    /// What an omitted `private` means, and where that was read.
    Understood {
        default_private: bool,
        /// `Create(ctx, "", repo)`: the owner is always the principal.
        personal: bool,
        where_: String,
    },
    NotUnderstood(String),
}

pub fn read(root: &Path) -> Shape {
    match understand(root) {
        Ok((default_private, personal, where_)) => Shape::Understood { default_private, personal, where_ },
        Err(why) => Shape::NotUnderstood(why),
    }
}

fn texts(tokens: &[Token]) -> Vec<&str> {
    tokens.iter().map(|t| t.text.as_str()).collect()
}

fn understand(root: &Path) -> Result<(bool, bool, String), String> {
    let package = files::find(root, &|p| {
        p.contains("pkg/github/") && p.ends_with(".go") && !p.ends_with("_test.go") && p.rsplit_once('/').is_some_and(|(d, _)| d.ends_with("pkg/github"))
    });
    let mut scanned = Vec::new();
    for (name, path) in &package {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{name}: {e}"))?;
        scanned.push((name.clone(), scan(&text, Dialect::Go).map_err(|e| format!("{name}: {e}"))?));
    }
    let mut funcs = Vec::new();
    for (name, tokens) in &scanned {
        for i in 0..tokens.len().saturating_sub(2) {
            // Spelled createRepository before v0.1.1-release-validation.
            if tokens[i].is("func") && (tokens[i + 1].is("CreateRepository") || tokens[i + 1].is("createRepository")) && tokens[i + 2].is("(") {
                funcs.push((name.as_str(), tokens, i));
            }
        }
    }
    let [(name, tokens, start)] = funcs.as_slice() else {
        return Err(format!("{} functions CreateRepository (or createRepository) in pkg/github", funcs.len()));
    };
    let body = crate::lex::go_function_body(tokens, *start).ok_or_else(|| format!("{name}: CreateRepository has no body"))?;
    let words = texts(body);

    // The one read of "private" through a helper: `VAR, err := HELPER(args, "private"[, DEFAULT])`.
    let reads: Vec<usize> = (0..body.len().saturating_sub(2))
        .filter(|&i| (body[i].is("args") || body[i].is("request")) && body[i + 1].is(",") && body[i + 2].str_value() == Some("private"))
        .collect();
    let [read] = reads.as_slice() else {
        return Err(format!("{name}: `private` is read {} times through a helper", reads.len()));
    };
    if (0..body.len().saturating_sub(2)).any(|i| body[i].is("[") && body[i + 1].str_value() == Some("private") && body[i + 2].is("]")) {
        return Err(format!("{name}: args[\"private\"] is read directly"));
    }
    let open = read.checked_sub(1).filter(|&o| body[o].is("(")).ok_or_else(|| format!("{name}: unexpected helper call shape"))?;
    let assign = (0..open).rev().find(|&i| body[i].is(":=") || body[i].is("=")).ok_or_else(|| format!("{name}: the helper result is not assigned"))?;
    let helper: String = words[assign + 1..open].concat();
    let line_start = (0..assign).rev().find(|&i| body[i].text == "\n").map_or(0, |i| i + 1);
    let variable = body[line_start].text.clone();
    let at = format!("{name}:{}", body[*read].line);
    let default_private = match helper.as_str() {
        // The plain optional helper (spelled optionalParam before v0.2.0).
        "OptionalParam[bool]" | "optionalParam[bool]" => false,
        "OptionalBoolParamWithDefault" => {
            let d = body.get(read + 4).filter(|_| body[read + 3].is(",")).ok_or_else(|| format!("{at}: the helper has no default argument"))?;
            match d.text.as_str() {
                "true" => true,
                "false" => false,
                constant => {
                    package_constant(&scanned, constant).ok_or_else(|| format!("{at}: default `{constant}` is not a boolean constant of the package"))?
                }
            }
        }
        other => return Err(format!("{at}: `private` is read by `{other}`, which the oracle does not know")),
    };
    // The value must reach `Private: github.Ptr(VAR)` and nowhere else.
    let fields: Vec<usize> =
        (0..body.len().saturating_sub(6)).filter(|&i| words[i..i + 7] == ["Private", ":", "github", ".", "Ptr", "(", variable.as_str()]).collect();
    if fields.len() != 1 {
        return Err(format!("{name}: {} `Private: github.Ptr({variable})` fields", fields.len()));
    }
    let uses = body.iter().filter(|t| t.is(&variable)).count();
    if uses != 2 {
        return Err(format!("{name}: `{variable}` appears {uses} times; the oracle expects its read and its field only"));
    }
    // The receiver's name is the author's: any `X.Repositories.Create(`.
    let creates: Vec<usize> = (0..body.len().saturating_sub(4)).filter(|&i| words[i..i + 5] == [".", "Repositories", ".", "Create", "("]).collect();
    let [create] = creates.as_slice() else {
        return Err(format!("{name}: {} Repositories.Create calls", creates.len()));
    };
    // The owner argument: the organization variable, or "" (the principal's account).
    let owner = body.get(create + 7).filter(|_| body[create + 5].is("ctx") && body[create + 6].is(","));
    let personal = match owner {
        Some(t) if t.str_value() == Some("") => true,
        Some(t) if t.str_value().is_none() && t.text != "\n" => false,
        _ => return Err(format!("{name}: Repositories.Create's owner argument is not a variable or \"\"")),
    };
    Ok((default_private, personal, format!("{at}: {helper} makes an omitted private {default_private}")))
}

/// `const NAME = true|false`, alone or in a `const ( … )` block, exactly once.
fn package_constant(scanned: &[(String, Vec<Token>)], name: &str) -> Option<bool> {
    let mut values = Vec::new();
    for (_, tokens) in scanned {
        let mut in_block = false;
        for i in 0..tokens.len() {
            if tokens[i].is("const") && tokens.get(i + 1).is_some_and(|t| t.is("(")) {
                in_block = true;
            } else if in_block && tokens[i].is(")") {
                in_block = false;
            }
            let declares = tokens[i].is(name) && tokens.get(i + 1).is_some_and(|t| t.is("=")) && (in_block || (i > 0 && tokens[i - 1].is("const")));
            if declares {
                values.push(tokens.get(i + 2).map(|t| t.text.clone()));
            }
        }
    }
    match values.as_slice() {
        [Some(v)] if v == "true" => Some(true),
        [Some(v)] if v == "false" => Some(false),
        _ => None,
    }
}

pub fn verdict(shape: &Shape, args: &Map<String, Value>, ctx: &Context) -> (Verdict, String) {
    let (default_private, personal, where_) = match shape {
        Shape::Understood { default_private, personal, where_ } => (*default_private, *personal, where_.as_str()),
        Shape::NotUnderstood(why) => return (Verdict::CannotJudge, why.clone()),
    };
    let Some(name) = args.get("name").and_then(Value::as_str) else {
        return (Verdict::CannotJudge, "the call has no string name".into());
    };
    let name_ok = !name.is_empty() && name.len() <= 100 && name.chars().all(|c| c.is_ascii_alphanumeric() || "._-".contains(c));
    if !name_ok {
        return (Verdict::Unknown, format!("`{name}` is not a GitHub repository name"));
    }
    let private = match args.get("private") {
        None | Some(Value::Null) => default_private,
        Some(Value::Bool(b)) => *b,
        Some(other) => return (Verdict::CannotJudge, format!("private is {other}, not a boolean")),
    };
    if personal && args.get("organization").is_some_and(|o| !o.is_null()) {
        return (Verdict::Unknown, format!("{where_}; this release creates in the principal's account whatever organization says"));
    }
    let owner = match args.get("organization").and_then(Value::as_str) {
        Some(org) if !org.is_empty() => org.to_owned(),
        _ => ctx.login().to_owned(),
    };
    let effect = Effect {
        op: "github:repo.create".into(),
        resource: format!("{owner}/{name}"),
        exposure: if private { 1 } else { 2 },
        mutation: true,
        write_scopes: vec![],
    };
    let visibility = if private { "private" } else { "public" };
    let breaches = ctx.breaches(&[effect]);
    if breaches.is_empty() {
        (Verdict::Safe, format!("{where_}; creates {owner}/{name} {visibility}"))
    } else {
        (Verdict::Unsafe, format!("{where_}; creates {owner}/{name} {visibility}: {}", breaches.join("; ")))
    }
}
