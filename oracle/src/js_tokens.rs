//! Reading a release's JavaScript as tokens: a file's tokens, a spelled
//! sequence, a bracket's match, a function's body and parameters. Shared by
//! the filesystem readings ([`crate::filesystem`], [`crate::move_file`],
//! [`crate::factory`]).

use std::path::Path;

use crate::files;
use crate::lex::{Dialect, Kind, Token, scan};

/// The tokens of the one file `file` (a path from the release root) under `root`.
pub(crate) fn tokens_of(root: &Path, file: &str) -> Result<Vec<Token>, String> {
    let found = files::find(root, &|p| p == file);
    let [(name, path)] = found.as_slice() else {
        return Err(format!("no {file}"));
    };
    let text = std::fs::read_to_string(path).map_err(|e| format!("{name}: {e}"))?;
    scan(&text, Dialect::JavaScript).map_err(|e| format!("{name}: {e}"))
}

/// Whether the tokens from `at` spell `words` (strings by their value, as `"…"`).
pub(crate) fn spells(tokens: &[Token], at: usize, words: &[&str]) -> bool {
    words.iter().enumerate().all(|(k, w)| {
        tokens.get(at + k).is_some_and(|t| match (&t.kind, w.strip_prefix('"')) {
            (Kind::Str(_), Some(value)) => t.str_value() == Some(value),
            (_, None) => t.is(w),
            _ => false,
        })
    })
}

/// The index of the token closing the bracket opened at `open`.
pub(crate) fn close(tokens: &[Token], open: usize) -> Option<usize> {
    let (o, c) = match tokens.get(open)?.text.as_str() {
        "(" => ("(", ")"),
        "{" => ("{", "}"),
        _ => return None,
    };
    crate::lex::matching(tokens, open, o, c)
}

/// The body tokens of `function NAME(…) {…}`, which must be defined once.
pub(crate) fn function_body<'t>(tokens: &'t [Token], name: &str, file: &str) -> Result<&'t [Token], String> {
    let defs: Vec<usize> = (0..tokens.len()).filter(|&i| spells(tokens, i, &["function", name, "("])).collect();
    let [def] = defs.as_slice() else {
        return Err(format!("{file}: {} definitions of {name}", defs.len()));
    };
    let params = close(tokens, def + 2).ok_or(format!("{file}: {name} never closes its parameters"))?;
    let open = (params + 1..tokens.len()).find(|&j| tokens[j].is("{")).ok_or(format!("{file}: {name} has no body"))?;
    let end = close(tokens, open).ok_or(format!("{file}: {name} never closes"))?;
    Ok(&tokens[open + 1..end])
}

/// The index of the one place `words` are spelled in `tokens`.
pub(crate) fn once(tokens: &[Token], words: &[&str], what: &str) -> Result<usize, String> {
    let at: Vec<usize> = (0..tokens.len()).filter(|&i| spells(tokens, i, words)).collect();
    match at.as_slice() {
        [one] => Ok(*one),
        _ => Err(format!("{what} is written {} times, not once", at.len())),
    }
}

/// The plain parameter names of `function NAME(…)`, defined once.
pub(crate) fn parameters(tokens: &[Token], name: &str) -> Vec<String> {
    let defs: Vec<usize> = (0..tokens.len()).filter(|&i| spells(tokens, i, &["function", name, "("])).collect();
    let [def] = defs.as_slice() else { return Vec::new() };
    let Some(end) = close(tokens, def + 2) else { return Vec::new() };
    tokens[def + 3..end].iter().filter(|t| t.kind == Kind::Ident).map(|t| t.text.clone()).collect()
}
