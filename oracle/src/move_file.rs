//! The oracle for the MCP filesystem server's `move_file`.
//!
//! From the envelope: a move has two ends, each awaited through
//! `validatePath` into a `const` of its own, and `fs.rename` of those two
//! constants is the only file operation; nothing else checks or moves. The
//! checks are write_file's (read with the pieces of [`crate::filesystem`]):
//! the boundary `validatePath` (lib.js or, in 2025.7.1, the entry) refuses
//! an end outside the allowed directory at a `/` boundary and resolves
//! links; the older `validatePath` tests a plain string prefix of the
//! normalized path (folded to lower case in the 0.x releases).
//!
//! In 2026.8.31 the callback hands the two constants to `moveFile` of
//! lib.js instead, which renames them when `fs.lstat` of the destination
//! fails (its only file operations: lstat of the destination, one rename of
//! its two parameters in order), and validatePath walks a missing end by
//! names equal under NFC ([`crate::filesystem`]'s walked shape): inside the
//! directory, but a `K` below it may name a Kelvin-sign twin (unknown).
//!
//! Shapes: the callback `registerTool("move_file", …, async (P) => {…})`
//! reading `P.source` and `P.destination`; or the `case "move_file":` of the
//! tool-call dispatcher reading `R.data.source` and `R.data.destination` of
//! a zod schema of those two strings.
//!
//! Verdicts, for one allowed directory: either end outside it is refused
//! before the rename; both ends strictly below it move inside it (one
//! `filesystem:move` per end, write scope the directory); the directory
//! itself, a relative or home path, odd characters, a `..` that comes back,
//! or several directories: unknown. Under the string-prefix check, an end
//! that does not start with the directory is refused; both ends inside is
//! unknown (a link there may resolve to a sibling whose name starts like
//! the directory, which passes); an end in such a sibling is moved from or
//! to where it names.

use std::path::Path;

use serde_json::{Map, Value};

use crate::Verdict;
use crate::contract::{Context, Effect};
use crate::factory;
use crate::files;
use crate::filesystem::{
    Containment, boundary_files, boundary_validate, dispatcher_clause, entry_list, function_body, imported_from, lib_validate, list_readers, no_short_circuit,
    normalize, once, parameters, patched, registered_callback, spells, state, tokens_of, twin_below,
};
use crate::lex::Token;

/// What the oracle understood of the release.
pub enum Shape {
    Understood(String, Containment),
    NotUnderstood(String),
}

pub fn read(root: &Path) -> Shape {
    match understand(root) {
        Ok((where_, containment)) => Shape::Understood(where_, containment),
        Err(why) => Shape::NotUnderstood(why),
    }
}

fn understand(root: &Path) -> Result<(String, Containment), String> {
    if let Some(server) = factory::server_tokens(root, "move_file") {
        return understand_factory(root, &server);
    }
    let index = tokens_of(root, "dist/index.js")?;
    let dispatched = (0..index.len()).any(|i| spells(&index, i, &["case", "\"move_file", ":"]));
    if !dispatched {
        let (name, param, open, end) = registered_callback(&index, "move_file", "dist/index.js", 0..0)?;
        let body = &index[open + 1..end];
        if body.windows(2).any(|w| w[0].is(&param) && w[1].is("=")) {
            return Err("the callback binds its arguments again".into());
        }
        let through_lib = renames_checked_ends(body, &[param.as_str()], &[])?;
        let containment = boundary_lib(root, through_lib)?;
        let how =
            if through_lib { "hands what validatePath returns for both ends to lib.js's moveFile" } else { "renames what validatePath returns for both ends" };
        let walk = if containment == Containment::Walked { ", a missing end walked by names equal under NFC" } else { "" };
        let where_ = format!("dist/index.js:{}: move_file {how}, checked at a `/` boundary{walk}", index[name].line);
        return Ok((where_, containment));
    }
    let (case, case_end, parsed) = dispatcher_clause(root, &index, "move_file", &["source", "destination"])?;
    let clause = &index[case + 4..case_end];
    if renames_checked_ends(clause, &[parsed.as_str(), ".", "data"], &[])? {
        return Err("the dispatcher case moves through moveFile: not a shape this reading judges".into());
    }
    let line = index[case].line;
    if files::find(root, &|p| p == "dist/lib.js").len() == 1 && !index.windows(2).any(|w| w[0].is("function") && w[1].is("validatePath")) {
        let containment = boundary_lib(root, false)?;
        let where_ = format!("dist/index.js:{line}: move_file renames what lib.js's validatePath returns for both ends, checked at a `/` boundary");
        return Ok((where_, containment));
    }
    let validate = function_body(&index, "validatePath", "dist/index.js")?;
    let normalize_body = function_body(&index, "normalizePath", "dist/index.js")?;
    let plain = normalize_body.len() == 8 && spells(normalize_body, 0, &["return", "path", ".", "normalize", "("]) && spells(normalize_body, 6, &[")", ";"]);
    let folded = normalize_body.len() == 12
        && spells(normalize_body, 0, &["return", "path", ".", "normalize", "("])
        && spells(normalize_body, 6, &[")", ".", "toLowerCase", "(", ")", ";"]);
    if !plain && !folded {
        return Err("normalizePath is not just path.normalize, or path.normalize folded to lower case".into());
    }
    entry_list(root, &index)?;
    list_readers(&index)?;
    if validate.iter().any(|t| t.is("isPathWithinAllowedDirectories")) {
        if folded {
            return Err("a boundary validatePath over a normalizePath that folds case: not a shape this reading judges".into());
        }
        checks_unconditionally(validate)?;
        boundary_files(root)?;
        let where_ = format!("dist/index.js:{line}: move_file renames what the entry's validatePath returns for both ends, checked at a `/` boundary");
        return Ok((where_, Containment::Boundary));
    }
    // The check: a plain string prefix, of the path, a link's target and a new path's parent.
    let prefix_tests = (0..validate.len())
        .filter(|&i| spells(validate, i, &[".", "some", "(", "dir", "=>"]) && spells(validate, i + 6, &[".", "startsWith", "(", "dir", ")", ")"]))
        .count();
    let resolved = (0..validate.len()).filter(|&i| spells(validate, i, &["fs", ".", "realpath", "("])).count();
    if prefix_tests != 3 || resolved != 2 {
        return Err(format!("validatePath tests a string prefix {prefix_tests} times and resolves links {resolved} times, not 3 and 2"));
    }
    if folded {
        let where_ = format!(
            "dist/index.js:{line}: move_file renames what validatePath returns, which tests the directory as a string prefix of both folded to lower case"
        );
        return Ok((where_, Containment::PrefixFolded));
    }
    Ok((format!("dist/index.js:{line}: move_file renames what validatePath returns, which tests the directory as a plain string prefix"), Containment::Prefix))
}

/// The 2.x layout ([`factory`]): the factory's callback checks both ends
/// against its own list with lib.js's validatePath and moves them through
/// moveFile's anchored rename.
fn understand_factory(root: &Path, server: &[Token]) -> Result<(String, Containment), String> {
    let wrapper = factory::wrapper(server)?;
    let (name, param, open, end) = registered_callback(server, "move_file", "dist/server.js", wrapper)?;
    let body = &server[open + 1..end];
    if body.windows(2).any(|w| w[0].is(&param) && w[1].is("=")) {
        return Err("the callback binds its arguments again".into());
    }
    if !renames_checked_ends(body, &[param.as_str()], &[",", "allowedDirectories"])? {
        return Err("the factory's callback renames without moveFile: not a shape this reading judges".into());
    }
    let imported = imported_from(server, "./lib.js");
    if !["validatePath", "moveFile"].iter().all(|n| imported.iter().any(|i| i == n))
        || server.windows(2).any(|w| w[0].is("function") && (w[1].is("validatePath") || w[1].is("moveFile")))
    {
        return Err("validatePath and moveFile are not lib.js's, imported under their own names".into());
    }
    factory::factory_list(root, server)?;
    let lib = tokens_of(root, "dist/lib.js")?;
    let containment = lib_validate(&lib, true)?;
    factory::anchored_rename(root, &lib)?;
    for file in files::find(root, &|p| p.starts_with("dist/") && p.ends_with(".js")) {
        patched(&tokens_of(root, &file.0)?, &file.0)?;
    }
    boundary_files(root)?;
    let where_ = format!(
        "dist/server.js:{}: move_file hands what validatePath returns for both ends, against the factory's own list, to moveFile's anchored rename, checked at a `/` boundary, a missing end walked by names equal under NFC",
        server[name].line
    );
    Ok((where_, containment))
}

/// In `body`: `const S = await validatePath(ARGS.source LIST);` and `const D =
/// await validatePath(ARGS.destination LIST);` once each (ARGS spelled by
/// `args`, LIST by `list`: nothing, or 2.x's `, allowedDirectories`), no other validatePath, then `await fs.rename(S, D);` (or `(D,
/// S)`: the verdict names both ends alike) as the one use of `fs` and of
/// each constant besides its declaration, with no `catch` in between; or
/// `await moveFile(S, D);` (either order too) with no use of `fs` at all.
/// Whether the move goes through moveFile.
fn renames_checked_ends(body: &[Token], args: &[&str], list: &[&str]) -> Result<bool, String> {
    let check = |end: &str| -> Result<(usize, String), String> {
        let mut words = vec!["=", "await", "validatePath", "("];
        words.extend_from_slice(args);
        words.extend_from_slice(&[".", end]);
        words.extend_from_slice(list);
        words.extend_from_slice(&[")", ";"]);
        let at = once(body, &words, &format!("the check of the {end}"))?;
        match at.checked_sub(2).map(|k| (&body[k], &body[k + 1])) {
            Some((decl, local)) if decl.is("const") => Ok((at, local.text.clone())),
            _ => Err(format!("validatePath's result for the {end} is not a const of its own")),
        }
    };
    let (source_at, source) = check("source")?;
    let (destination_at, destination) = check("destination")?;
    if source == destination || body.iter().filter(|t| t.is("validatePath")).count() != 2 {
        return Err("validatePath is called otherwise than once per end".into());
    }
    let (s, d) = (source.as_str(), destination.as_str());
    let through_lib = body.iter().any(|t| t.is("moveFile"));
    let (callee, fs_expected): (&[&str], usize) = if through_lib { (&["await", "moveFile", "("], 0) } else { (&["await", "fs", ".", "rename", "("], 1) };
    let (forward, backward) = ([callee, &[s, ",", d, ")", ";"]].concat(), [callee, &[d, ",", s, ")", ";"]].concat());
    let rename = once(body, &forward, "the rename").or_else(|_| once(body, &backward, "the rename"))?;
    if through_lib && body.iter().filter(|t| t.is("moveFile")).count() != 1 {
        return Err("moveFile is called more than once".into());
    }
    let fs_uses = body.iter().filter(|t| t.is("fs")).count();
    let uses = |name: &str| body.iter().filter(|t| t.is(name)).count();
    if rename < source_at.max(destination_at) || fs_uses != fs_expected || uses(s) != 2 || uses(d) != 2 || body.iter().any(|t| t.is("catch")) {
        return Err("the rename comes before a check, another file operation runs, a checked end is used otherwise, or a refusal is caught".into());
    }
    Ok(through_lib)
}

/// lib.js's `moveFile(FROM, TO)` (imported by the entry under its own name,
/// defined there nowhere): no file operation but `fs.lstat(TO)` and one
/// `await fs.rename(FROM, TO);`. Whatever it makes of lstat's answer, it
/// renames nothing else: the verdicts are a rename's (a destination it
/// refuses is a move that did not happen).
fn moves_in_lib(index: &[Token], lib: &[Token]) -> Result<(), String> {
    if !imported_from(index, "./lib.js").iter().any(|n| n == "moveFile") || index.windows(2).any(|w| w[0].is("function") && w[1].is("moveFile")) {
        return Err("moveFile is not lib.js's, imported under its own name".into());
    }
    let body = function_body(lib, "moveFile", "dist/lib.js")?;
    let parameters = parameters(lib, "moveFile");
    let [from, to] = parameters.as_slice() else {
        return Err("moveFile does not take two parameters".into());
    };
    for i in (0..body.len().saturating_sub(3)).filter(|&i| body[i].is("fs")) {
        let lstat = spells(body, i, &["fs", ".", "lstat", "(", to.as_str(), ")"]);
        let rename = spells(body, i, &["fs", ".", "rename", "(", from.as_str(), ",", to.as_str(), ")", ";"]) && i > 0 && body[i - 1].is("await");
        if !lstat && !rename {
            return Err(format!("dist/lib.js:{}: moveFile runs a file operation besides lstat of the destination and its rename", body[i].line));
        }
    }
    let renames = body.iter().filter(|t| t.is("rename")).count();
    let rebound = |n: &str| (0..body.len().saturating_sub(2)).any(|i| body[i].is(n) && body[i + 1].is("=") && !body[i + 2].is("="));
    if renames != 1 || rebound(from) || rebound(to) {
        return Err("moveFile renames more than once or binds its ends again".into());
    }
    Ok(())
}

/// write_file's boundary reading of validatePath, and no check of it
/// short-circuited: no `&&`, `||` or boolean literal in the body (none of
/// the reviewed bodies has one; `false && !isPathWithin…` would skip a check).
fn checks_unconditionally(validate: &[Token]) -> Result<(), String> {
    boundary_validate(validate)?;
    no_short_circuit(validate)
}

/// lib.js: validatePath checks at a boundary after resolving links (or walks
/// a missing end, the walked shape), and the list is written only by its
/// setter; no file patches a module. With `through_lib`, the entry moves
/// through lib.js's moveFile ([`moves_in_lib`]).
fn boundary_lib(root: &Path, through_lib: bool) -> Result<Containment, String> {
    let lib = tokens_of(root, "dist/lib.js")?;
    let containment = lib_validate(&lib, true)?;
    if through_lib {
        moves_in_lib(&tokens_of(root, "dist/index.js")?, &lib)?;
    }
    state(&lib)?;
    for file in files::find(root, &|p| p.starts_with("dist/") && p.ends_with(".js")) {
        patched(&tokens_of(root, &file.0)?, &file.0)?;
    }
    boundary_files(root)?;
    Ok(containment)
}

pub fn verdict(shape: &Shape, args: &Map<String, Value>, ctx: &Context) -> (Verdict, String) {
    let (where_, containment) = match shape {
        Shape::Understood(where_, containment) => (where_.as_str(), *containment),
        Shape::NotUnderstood(why) => return (Verdict::CannotJudge, why.clone()),
    };
    let (Some(source), Some(destination)) = (args.get("source").and_then(Value::as_str), args.get("destination").and_then(Value::as_str)) else {
        return (Verdict::CannotJudge, "the call has no string source and destination".into());
    };
    let Some(dir) = ctx.config["allowed_directories"].as_str() else {
        return (Verdict::Unknown, format!("{where_}; not one allowed directory: a link in one may lead into another"));
    };
    let (Some((from, from_climbs)), Some((to, to_climbs)), Some((dir, _))) = (normalize(source), normalize(destination), normalize(dir)) else {
        return (Verdict::Unknown, format!("{where_}; an end is relative, from home or has characters the server may rewrite"));
    };
    let below = |file: &str| dir == "/" && file != "/" || file.strip_prefix(&dir).is_some_and(|rest| rest.starts_with('/'));
    let inside = |file: &str| file == dir || below(file);
    let unfolded = |s: &str| s.is_ascii() && !s.chars().any(|c| c.is_ascii_uppercase());
    if containment == Containment::PrefixFolded && !(unfolded(&from) && unfolded(&to) && unfolded(&dir)) {
        return (Verdict::Unknown, format!("{where_}; an end or {dir} changes when folded: the check compares other strings than the ends renamed"));
    }
    let climbs = from_climbs || to_climbs;
    let effects = |scopes: [&str; 2]| {
        [source, destination]
            .iter()
            .zip(scopes)
            .map(|(end, scope)| Effect { op: "filesystem:move".into(), resource: (*end).into(), exposure: 0, mutation: true, write_scopes: vec![scope.into()] })
            .collect::<Vec<_>>()
    };
    let judged = |effects: Vec<Effect>, what: String| {
        let breaches = ctx.breaches(&effects);
        if breaches.is_empty() { (Verdict::Safe, what) } else { (Verdict::Unsafe, format!("{what}: {}", breaches.join("; "))) }
    };
    if containment.at_boundary() {
        if !inside(&from) || !inside(&to) {
            return (Verdict::Reject, format!("{where_}; {from} or {to} is outside {dir}: validatePath throws before the rename"));
        }
        if climbs || !below(&from) || !below(&to) {
            return (Verdict::Unknown, format!("{where_}; an end climbs back or names the directory itself"));
        }
        if containment == Containment::Walked && (twin_below(&from, &dir) || twin_below(&to, &dir)) {
            return (Verdict::Unknown, format!("{where_}; an end has a `K` below {dir}: a name with no exact entry may be walked to its Kelvin-sign twin"));
        }
        return judged(effects([dir.as_str(), dir.as_str()]), format!("{where_}; {source} and {destination} are both inside {dir}"));
    }
    if !from.starts_with(&dir) || !to.starts_with(&dir) {
        return (Verdict::Reject, format!("{where_}; {from} or {to} does not start with {dir}: validatePath throws before the rename"));
    }
    if climbs {
        return (Verdict::Unknown, format!("{where_}; an end climbs back"));
    }
    if inside(&from) && inside(&to) {
        return (Verdict::Unknown, format!("{where_}; both ends are inside {dir}, but a link there may resolve to a sibling that passes the prefix test"));
    }
    judged(effects([source, destination]), format!("{where_}; both ends pass the prefix test and one lies outside {dir}"))
}
