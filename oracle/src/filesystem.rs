//! The oracle for the MCP filesystem server's `write_file`.
//!
//! From the envelope: the entry `dist/index.js` registers `write_file` once,
//! with a callback written in place that awaits `validatePath(P.path)` into a
//! `const` and hands that constant and `P.content` to `writeFileContent`,
//! nothing else. `validatePath` (in `dist/lib.js`) refuses a path outside the
//! allowed directories with `isPathWithinAllowedDirectories`, whose test
//! needs a separator after the directory (`startsWith(dir + path.sep)`), and
//! resolves links with `fs.realpath` before checking again; a containment
//! test by plain prefix (`.startsWith(dir)`) is the older, leaky shape.
//! `writeFileContent` creates exclusively (`wx`). The oracle reads tokens
//! only; anything else in those places is a shape it cannot judge.
//!
//! Verdicts, for one allowed directory: a path outside it is refused; one
//! strictly below it is written inside it (write scope: the directory);
//! the directory itself, a relative or home path, odd characters, a `..`
//! that comes back, or several directories: unknown.
//!
//! The dispatcher shape (up to 2025.8): one
//! `setRequestHandler(CallToolRequestSchema, async (P) => …)` in
//! `dist/index.js` whose `switch (name)` on `const { name, arguments: A } =
//! P.params` has one `case "write_file":` that parses `A` with a zod schema
//! of two strings into a `const` and awaits `validatePath(R.data.path)` into
//! another. Then either it hands that to lib.js's `writeFileContent` with
//! `R.data.content` (lib.js read as above: boundary), or it writes itself:
//! exclusively (`wx`), else on `EEXIST` through a temporary sibling renamed
//! over it, with the entry's own `validatePath` checking as above (boundary;
//! its list a module `const`, or a `let` the MCP roots protocol replaces);
//! or with `fs.writeFile` in place (2025.3 and before), where `validatePath`
//! tests `normalizePath(x).startsWith(dir)` (`normalizePath` being
//! `path.normalize`) over a module `const` list nothing changes: a path whose
//! normalized form does not start with the directory is refused; one that
//! starts with it as a string but lies outside it is written (the sibling
//! `/srv/data2` of `/srv/data`); one inside is unknown when a refused link
//! falls through to the new-file branch (no `ENOENT` test) or the write
//! follows links (no `wx`), since a link there may lead out.
//!
//! The walked shape (2026.8.31): lib.js's `validatePath` (after a refusal of
//! a Windows drive path, a lone `if` that only throws) hands a path that
//! does not exist to `resolveUnicodeEquivalentPath`, which starts from the
//! realpath of an allowed directory and, name by name, takes an entry whose
//! NFC form (`normalize("NFC")`, no other form) equals the name, resolves
//! each step with `fs.realpath(path.join(…))` and checks it at once with
//! `isPathWithinAllowedDirectories(normalizePath(step), allowedDirectories)`
//! before anything else, and returns the last step or `path.join(step, …)`
//! for the missing rest. It stays inside the directory; but a name with no
//! exact entry may be matched to another entry, and within the plain
//! characters only `K` has such a twin (U+212A KELVIN SIGN): a path with `K`
//! below the directory is unknown. Its `writeFileContent` may stat the file
//! and `chmod` it (the file itself, nothing else) after a replacing write.

use std::path::Path;

use serde_json::{Map, Value};

use crate::Verdict;
use crate::contract::{Context, Effect};
use crate::factory;
use crate::files;
pub(crate) use crate::js_tokens::{close, function_body, once, parameters, spells, tokens_of};
use crate::lex::{Kind, Token};

/// What the oracle understood of the release.
pub enum Shape {
    Understood(String, Containment),
    NotUnderstood(String),
}

/// How the handler's check confines the path.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Containment {
    /// Inside the directory at a `/` boundary, links resolved and checked.
    Boundary,
    /// A plain string prefix of the normalized path; a link inside may lead out.
    Prefix,
    /// The same prefix test on the path and directory folded to lower case
    /// (`path.normalize(p).toLowerCase()`), the path written as given.
    PrefixFolded,
    /// The boundary check, a missing path walked from the directory by names
    /// equal under NFC: inside, but a `K` below the directory may name a twin.
    Walked,
}

impl Containment {
    /// Inside at a `/` boundary, links resolved and checked.
    pub fn at_boundary(self) -> bool {
        matches!(self, Containment::Boundary | Containment::Walked)
    }
}

pub fn read(root: &Path) -> Shape {
    let dispatched = tokens_of(root, "dist/index.js").is_ok_and(|index| (0..index.len()).any(|i| spells(&index, i, &["case", "\"write_file", ":"])));
    let understood = if dispatched { dispatcher(root) } else { understand(root) };
    match understood {
        Ok((where_, containment)) => Shape::Understood(where_, containment),
        Err(why) => Shape::NotUnderstood(why),
    }
}

/// The callback `file` (the entry `dist/index.js`, or 2.x's `dist/server.js`) registers for `tool`: the tool named once,
/// as the first argument of a `registerTool` call (no tool registered under
/// a computed name), whose last argument is `async (P) => {…}` or `async
/// function (P) {…}`. The index of the name, the parameter and the body's braces.
/// A call inside `wrapper` (the token range of 2.x's reviewed registerTool
/// wrapper, whose call of the original takes the name it is given) is not a registration.
pub(crate) fn registered_callback(index: &[Token], tool: &str, file: &str, wrapper: std::ops::Range<usize>) -> Result<(usize, String, usize, usize), String> {
    let names: Vec<usize> = (0..index.len()).filter(|&i| index[i].str_value() == Some(tool)).collect();
    let [name] = names.as_slice() else {
        return Err(format!("{file} names {tool} {} times", names.len()));
    };
    if !(*name >= 3 && spells(index, name - 3, &[".", "registerTool", "("])) {
        return Err(format!("{tool} is not the first argument of a registerTool call"));
    }
    // Any registration under a computed name could be this tool's.
    if let Some(i) =
        (0..index.len()).find(|&i| spells(index, i, &["registerTool", "("]) && index.get(i + 2).and_then(Token::str_value).is_none() && !wrapper.contains(&i))
    {
        return Err(format!("{file}:{}: a tool is registered under a name that is not a plain string", index[i].line));
    }
    let call_end = close(index, name - 1).ok_or("the registration never closes")?;
    // The callback: the last argument, `async (P) => {…}` or `async function (P) {…}`.
    let mut depth = 0;
    let mut last_comma = None;
    for (j, t) in index.iter().enumerate().take(call_end).skip(name - 1) {
        match t.text.as_str() {
            "(" | "{" | "[" if t.kind == Kind::Punct => depth += 1,
            ")" | "}" | "]" if t.kind == Kind::Punct => depth -= 1,
            "," if t.kind == Kind::Punct && depth == 1 && j + 1 < call_end && !index[j + 1].is(")") => last_comma = Some(j),
            _ => {}
        }
    }
    let at = last_comma.map(|c| c + 1).filter(|&j| spells(index, j, &["async", "("]) || spells(index, j, &["async", "function", "("]));
    let at = at.ok_or(format!("{tool} is registered without an async callback written in place as its last argument"))?;
    let open = if index[at + 1].is("function") { at + 2 } else { at + 1 };
    let (Some(param), true) = (index.get(open + 1), index.get(open + 2).is_some_and(|t| t.is(")"))) else {
        return Err("the callback does not take one plain parameter".into());
    };
    let body_open = (open + 2..call_end).find(|&j| index[j].is("{")).ok_or("the callback has no block body")?;
    let body_end = close(index, body_open).ok_or("the callback never closes")?;
    if body_end + 1 != call_end && !(body_end + 2 == call_end && index[body_end + 1].is(",")) {
        return Err("the callback is not the registration's last argument".into());
    }
    Ok((*name, param.text.clone(), body_open, body_end))
}

fn understand(root: &Path) -> Result<(String, Containment), String> {
    if let Some(server) = factory::server_tokens(root, "write_file") {
        return understand_factory(root, &server);
    }
    let index = tokens_of(root, "dist/index.js")?;
    let name = callback_writes(&index, "dist/index.js", &[], 0..0)?;
    let containment = boundary_lib(root)?;
    let walk = if containment == Containment::Walked { ", a missing path walked by names equal under NFC" } else { "" };
    let where_ = format!(
        "dist/index.js:{}: write_file writes what validatePath returns, which is checked at a `/` boundary after resolving links{walk}",
        index[name].line
    );
    Ok((where_, containment))
}

/// The 2.x layout ([`factory`]): the factory's callback hands its own list to
/// lib.js's validatePath, whose result it writes through the anchored helpers.
fn understand_factory(root: &Path, server: &[Token]) -> Result<(String, Containment), String> {
    let wrapper = factory::wrapper(server)?;
    let name = callback_writes(server, "dist/server.js", &[",", "allowedDirectories"], wrapper)?;
    let imported = imported_from(server, "./lib.js");
    if !["validatePath", "writeFileContent"].iter().all(|n| imported.iter().any(|i| i == n))
        || server.windows(2).any(|w| w[0].is("function") && (w[1].is("validatePath") || w[1].is("writeFileContent")))
    {
        return Err("validatePath and writeFileContent are not lib.js's, imported under their own names".into());
    }
    factory::factory_list(root, server)?;
    let lib = tokens_of(root, "dist/lib.js")?;
    let containment = lib_validate(&lib, false)?;
    factory::anchored_write(root, &lib)?;
    boundary_files(root)?;
    let where_ = format!(
        "dist/server.js:{}: write_file writes, through the anchored helpers, what validatePath returns for the factory's own list, checked at a `/` boundary after resolving links, a missing path walked by names equal under NFC",
        server[name].line
    );
    Ok((where_, containment))
}

/// The registered write_file callback of `tokens` (`file`): it awaits
/// `validatePath(P.path` then `list`, `)` into a `const` of its own, hands
/// that and `P.content` to writeFileContent once, and uses neither
/// otherwise. The index of the tool's name.
fn callback_writes(tokens: &[Token], file: &str, list: &[&str], wrapper: std::ops::Range<usize>) -> Result<usize, String> {
    let (name, param, body_open, body_end) = registered_callback(tokens, "write_file", file, wrapper)?;
    let body = &tokens[body_open + 1..body_end];
    let p = param.as_str();
    let words: Vec<&str> = ["=", "await", "validatePath", "(", p, ".", "path"].into_iter().chain(list.iter().copied()).chain([")", ";"]).collect();
    let checks: Vec<usize> = (0..body.len()).filter(|&i| spells(body, i, &words)).collect();
    let [check] = checks.as_slice() else {
        return Err(format!("the callback awaits validatePath({p}.path) {} times", checks.len()));
    };
    let checked = match check.checked_sub(2).map(|k| (&body[k], &body[k + 1])) {
        Some((decl, local)) if decl.is("const") => local.text.clone(),
        _ => return Err("validatePath's result is not a const of its own".into()),
    };
    let writes: Vec<usize> = (0..body.len()).filter(|&i| body[i].is("writeFileContent")).collect();
    let [write] = writes.as_slice() else {
        return Err(format!("the callback calls writeFileContent {} times", writes.len()));
    };
    if !spells(body, *write, &["writeFileContent", "(", checked.as_str(), ",", p, ".", "content", ")", ";"]) {
        return Err("writeFileContent is not handed the checked path and the content".into());
    }
    if body.iter().filter(|t| t.is(&checked)).count() != 2 || body.windows(2).any(|w| w[0].is(p) && w[1].is("=")) {
        return Err("the checked path or the arguments are used or bound otherwise".into());
    }
    Ok(name)
}

/// `validatePath`'s body checks containment with isPathWithinAllowedDirectories
/// three times (the path, a link's target, a new file's parent), resolves
/// links twice, never tests a string prefix itself, and lets only a missing
/// file (`ENOENT`) fall through to the parent's check.
pub(crate) fn boundary_validate(validate: &[Token]) -> Result<(), String> {
    let contained = validate.iter().filter(|t| t.is("isPathWithinAllowedDirectories")).count();
    let resolved = (0..validate.len()).filter(|&i| spells(validate, i, &["fs", ".", "realpath", "("])).count();
    if contained < 3 || resolved < 2 {
        return Err(format!("validatePath checks containment {contained} times and resolves links {resolved} times, not 3 and 2"));
    }
    if validate.iter().any(|t| t.is("startsWith")) {
        return Err("validatePath tests a plain string prefix itself".into());
    }
    // Only a missing file falls through to the parent's check; any other failure (a refused link) is thrown.
    if !validate.iter().any(|t| t.str_value() == Some("ENOENT")) {
        return Err("validatePath does not tell a missing file from a refused link".into());
    }
    Ok(())
}

/// No file of dist/ patches a module or a prototype, and
/// isPathWithinAllowedDirectories (path-validation.js) tests at a separator.
pub(crate) fn boundary_files(root: &Path) -> Result<(), String> {
    for file in files::find(root, &|p| p.starts_with("dist/") && p.ends_with(".js")) {
        patched(&tokens_of(root, &file.0)?, &file.0)?;
    }
    let validation = tokens_of(root, "dist/path-validation.js")?;
    let within = function_body(&validation, "isPathWithinAllowedDirectories", "dist/path-validation.js")?;
    let boundary = (0..within.len()).any(|i| {
        spells(within, i, &["startsWith", "("])
            && within.get(i + 3).is_some_and(|t| t.is("+"))
            && (spells(within, i + 4, &["path", ".", "sep", ")"]) || spells(within, i + 4, &["\"/", ")"]))
    });
    // (2.x) `const W = D.endsWith(path.sep) ? D : D + path.sep;` then `startsWith(W)`:
    // a separator appended unless the directory already ends with one.
    let appended = (0..within.len()).any(|i| {
        let (Some(w), Some(d)) = (within.get(i + 1), within.get(i + 3)) else { return false };
        let (w, d) = (w.text.as_str(), d.text.as_str());
        within[i].is("const")
            && spells(within, i + 2, &["=", d, ".", "endsWith", "(", "path", ".", "sep", ")", "?", d, ":", d, "+", "path", ".", "sep", ";"])
            && (i + 20..within.len()).any(|k| spells(within, k, &["startsWith", "(", w, ")"]))
    });
    let boundary = boundary || appended;
    if !boundary {
        return Err("isPathWithinAllowedDirectories has no test at a separator (startsWith(dir + path.sep))".into());
    }
    Ok(())
}

/// lib.js: validatePath checks at a boundary after resolving links (or walks
/// a missing path, [`lib_validate`]), the list is written only by its
/// setter, writeFileContent creates exclusively and touches nothing but the
/// file and its temporary sibling.
fn boundary_lib(root: &Path) -> Result<Containment, String> {
    let lib = tokens_of(root, "dist/lib.js")?;
    let containment = lib_validate(&lib, false)?;
    state(&lib)?;
    let write_body = function_body(&lib, "writeFileContent", "dist/lib.js")?;
    if !write_body.iter().any(|t| t.str_value() == Some("wx")) {
        return Err("writeFileContent does not create exclusively (wx)".into());
    }
    let parameters = parameters(&lib, "writeFileContent");
    let [file, ..] = parameters.as_slice() else {
        return Err("writeFileContent takes no parameter".into());
    };
    for i in (0..write_body.len().saturating_sub(5)).filter(|&i| write_body[i].is("fs") && write_body[i + 1].is(".")) {
        let call = &write_body[i + 2];
        if !["writeFile", "rename", "unlink", "stat", "chmod"].iter().any(|m| call.is(m)) {
            return Err(format!("dist/lib.js:{}: writeFileContent calls fs.{}", call.line, call.text));
        }
        // The mode bits restored on the file written, not on anything else.
        if call.is("chmod") && !spells(write_body, i + 3, &["(", file.as_str(), ","]) {
            return Err(format!("dist/lib.js:{}: writeFileContent changes the mode of something else than the file", call.line));
        }
    }
    boundary_files(root)?;
    Ok(containment)
}

/// lib.js's validatePath: the boundary check ([`boundary_validate`]; with
/// `unconditional`, none of its checks short-circuited), or (2026.8.31) the
/// walked shape (module docs): after a lone drive-path refusal, the same
/// checks of the path and a link's target, a missing path handed to
/// resolveUnicodeEquivalentPath ([`nfc_walk`]), nothing short-circuited.
pub(crate) fn lib_validate(lib: &[Token], unconditional: bool) -> Result<Containment, String> {
    let validate = function_body(lib, "validatePath", "dist/lib.js")?;
    if !validate.iter().any(|t| t.is("resolveUnicodeEquivalentPath")) {
        boundary_validate(validate)?;
        if unconditional {
            no_short_circuit(validate)?;
        }
        return Ok(Containment::Boundary);
    }
    let validate = without_drive_refusal(validate)?;
    // (2.x) a refused path respelled onto an allowed directory's own spelling, then checked again.
    let respelled = factory::respelled(lib, &validate)?;
    let needed = if respelled { 3 } else { 2 };
    let contained = validate.iter().filter(|t| t.is("isPathWithinAllowedDirectories")).count();
    let resolved = (0..validate.len()).filter(|&i| spells(&validate, i, &["fs", ".", "realpath", "("])).count();
    if contained < needed || resolved < 1 || validate.iter().any(|t| t.is("startsWith")) {
        return Err(format!("validatePath checks containment {contained} times and resolves links {resolved} times, not {needed} and 1, or tests a prefix"));
    }
    if respelled {
        // The respelling comes after the first check and before the one that refuses.
        let at = (0..validate.len()).find(|&i| validate[i].is("respellAllowedDirectoryPrefix")).unwrap_or(0);
        let before = validate[..at].iter().filter(|t| t.is("isPathWithinAllowedDirectories")).count();
        let refusal = (at..validate.len()).find(|&i| validate[i].is("isPathWithinAllowedDirectories"));
        let realpath = (0..validate.len()).find(|&i| spells(&validate, i, &["fs", ".", "realpath", "("]));
        if before != 1 || refusal.zip(realpath).is_none_or(|(r, p)| r > p) {
            return Err("validatePath respells a path elsewhere than between its first check and the one that refuses".into());
        }
    }
    if !validate.iter().any(|t| t.str_value() == Some("ENOENT")) {
        return Err("validatePath does not tell a missing path from a refused link".into());
    }
    once(&validate, &["return", "await", "resolveUnicodeEquivalentPath", "("], "the walk of a missing path")?;
    if validate.iter().filter(|t| t.is("resolveUnicodeEquivalentPath")).count() != 1 {
        return Err("validatePath calls resolveUnicodeEquivalentPath otherwise than to return what it gives".into());
    }
    no_short_circuit(&validate)?;
    // (2.x) the allowed list a second parameter.
    let asked = match parameters(lib, "resolveUnicodeEquivalentPath").as_slice() {
        [asked] => asked.clone(),
        [asked, list] if list == "allowedDirectories" => asked.clone(),
        _ => return Err("resolveUnicodeEquivalentPath does not take the path (and the allowed list)".into()),
    };
    nfc_walk(lib, function_body(lib, "resolveUnicodeEquivalentPath", "dist/lib.js")?, &asked)?;
    Ok(Containment::Walked)
}

/// No `&&`, `||` or boolean literal: none of the reviewed bodies has one
/// (`false && !isPathWithin…` would skip a check).
pub(crate) fn no_short_circuit(validate: &[Token]) -> Result<(), String> {
    if validate.iter().any(|t| t.is("&&") || t.is("||") || t.is("false") || t.is("true")) {
        return Err("validatePath combines or short-circuits its checks".into());
    }
    Ok(())
}

/// validatePath's tokens without its one refusal of a Windows drive path:
/// `if (process.platform !== "win32" && …) { throw new Error(…); }`, whose
/// condition reads no check and whose block only throws. Without such an
/// `if`, the tokens as they are.
fn without_drive_refusal(validate: &[Token]) -> Result<Vec<Token>, String> {
    let at: Vec<usize> = (0..validate.len()).filter(|&i| spells(validate, i, &["if", "(", "process", ".", "platform", "!=", "=", "\"win32", "&&"])).collect();
    let [at] = at.as_slice() else {
        return if at.is_empty() { Ok(validate.to_vec()) } else { Err("validatePath tests the platform more than once".into()) };
    };
    let condition_end = close(validate, at + 1).ok_or("the drive test never closes")?;
    let condition = &validate[at + 2..condition_end];
    // (The scanner reads `!==` and `===` as `!=`, `==` and a lone `=`.)
    let binds = (0..condition.len()).any(|i| condition[i].is("=") && !(i > 0 && (condition[i - 1].is("!=") || condition[i - 1].is("=="))));
    if binds || condition.iter().any(|t| t.is("isPathWithinAllowedDirectories") || t.is("realpath") || t.is("return")) {
        return Err("the drive test reads a check or binds a value".into());
    }
    let block = condition_end + 1;
    let block_end = if validate.get(block).is_some_and(|t| t.is("{")) { close(validate, block) } else { None };
    let block_end = block_end.ok_or("the drive test has no block")?;
    let thrown = spells(validate, block + 1, &["throw", "new", "Error", "("])
        && close(validate, block + 4).is_some_and(|end| end + 2 == block_end && validate[end + 1].is(";"));
    if !thrown || validate.get(block_end + 1).is_some_and(|t| t.is("else")) {
        return Err("the drive test does anything but throw".into());
    }
    Ok(validate[..*at].iter().chain(&validate[block_end + 1..]).cloned().collect())
}

/// resolveUnicodeEquivalentPath (module docs): compares names only by their
/// NFC form, calls no file-system function but realpath and readdir, binds
/// its step once to the realpath of an allowed directory and once more, in
/// the walk, to `await fs.realpath(path.join(…))` followed at once by the
/// check `if (!isPathWithinAllowedDirectories(normalizePath(STEP),
/// allowedDirectories)) { throw …`, and returns only the step, the step
/// joined with the rest, or (no allowed directory holding it: validatePath
/// refused that path already) the path as given.
fn nfc_walk(lib: &[Token], walk: &[Token], asked: &str) -> Result<(), String> {
    let forms: Vec<usize> = (0..walk.len()).filter(|&i| spells(walk, i, &[".", "normalize", "("])).collect();
    let keys = (0..walk.len()).filter(|&i| spells(walk, i, &["unicodeMatchKey", "("])).count();
    if forms.is_empty() && keys >= 2 {
        // (2.x) names compared by unicodeMatchKey: NFC with space separators as a space.
        crate::factory::match_key(lib)?;
    } else if forms.is_empty()
        || forms.iter().any(|&i| walk.get(i + 3).and_then(Token::str_value) != Some("NFC") || !walk.get(i + 4).is_some_and(|t| t.is(")")))
    {
        return Err("resolveUnicodeEquivalentPath compares names by another form than NFC".into());
    }
    if walk.iter().any(|t| t.is("startsWith")) {
        return Err("resolveUnicodeEquivalentPath tests a plain string prefix".into());
    }
    for i in (0..walk.len().saturating_sub(2)).filter(|&i| walk[i].is("fs") && walk[i + 1].is(".")) {
        if !(walk[i + 2].is("realpath") || walk[i + 2].is("readdir")) {
            return Err(format!("dist/lib.js:{}: resolveUnicodeEquivalentPath calls fs.{}", walk[i].line, walk[i + 2].text));
        }
    }
    // (2.x) whether a name exists, by entryExists: `fs.lstat` only.
    if walk.iter().any(|t| t.is("entryExists")) {
        let exists = function_body(lib, "entryExists", "dist/lib.js")?;
        let ops: Vec<&str> =
            (0..exists.len().saturating_sub(2)).filter(|&i| exists[i].is("fs") && exists[i + 1].is(".")).map(|i| exists[i + 2].text.as_str()).collect();
        if ops != ["lstat"] {
            return Err("entryExists runs another file operation than lstat".into());
        }
    }
    // A step: `X = await fs.realpath(path.join(…))`, or (2.x) of a `const C = path.join(…)` bound just before.
    let joined: Vec<String> = (0..walk.len())
        .filter(|&i| walk[i].is("const") && spells(walk, i + 2, &["=", "path", ".", "join", "("]))
        .map(|i| walk[i + 1].text.clone())
        .filter(|c| (0..walk.len().saturating_sub(1)).filter(|&k| walk[k].is(c) && walk[k + 1].is("=")).count() == 1)
        .collect();
    let steps: Vec<usize> = (0..walk.len())
        .filter(|&i| {
            walk[i].kind == Kind::Ident
                && (spells(walk, i + 1, &["=", "await", "fs", ".", "realpath", "(", "path", ".", "join", "("])
                    || joined.iter().any(|c| spells(walk, i + 1, &["=", "await", "fs", ".", "realpath", "(", c.as_str(), ")", ";"])))
        })
        .collect();
    let [step] = steps.as_slice() else {
        return Err(format!("resolveUnicodeEquivalentPath resolves a step {} times, not once", steps.len()));
    };
    let x = walk[*step].text.as_str();
    let end = (*step..walk.len()).find(|&i| walk[i].is(";")).ok_or("the step never ends")?;
    let checked = ["if", "(", "!", "isPathWithinAllowedDirectories", "(", "normalizePath", "(", x, ")", ",", "allowedDirectories", ")", ")", "{", "throw"];
    let mut format = checked;
    format[5] = "normalizePathFormat";
    if !spells(walk, end + 1, &checked) && !spells(walk, end + 1, &format) {
        return Err("a step of the walk is not checked at once".into());
    }
    once(walk, &["let", x, "=", "await", "fs", ".", "realpath", "("], "the walk's start")?;
    let bound = (0..walk.len().saturating_sub(2)).filter(|&i| walk[i].is(x) && walk[i + 1].is("=") && !walk[i + 2].is("=")).count();
    if bound != 2 {
        return Err("the walk's step is bound otherwise".into());
    }
    if (0..walk.len().saturating_sub(2)).any(|i| walk[i].is(asked) && walk[i + 1].is("=") && !walk[i + 2].is("=")) {
        return Err("the walk binds the path it was given again".into());
    }
    for r in (0..walk.len()).filter(|&r| walk[r].is("return")) {
        let step_or_rest = spells(walk, r + 1, &[x, ";"]) || spells(walk, r + 1, &["path", ".", "join", "(", x, ","]);
        let as_given = spells(walk, r + 1, &[asked, ";"]);
        if !step_or_rest && !as_given {
            return Err(format!("dist/lib.js:{}: the walk returns something else than its step", walk[r].line));
        }
    }
    Ok(())
}

/// The `case "TOOL": {` clause of the one CallToolRequestSchema handler of
/// `dist/index.js` (no file patching a module or a prototype), which parses
/// the request's arguments once into a `const` with a schema of the string
/// `fields` and never binds the request, its name, its arguments or the
/// parse result again. The case's index, its closing brace and the parse result.
pub(crate) fn dispatcher_clause(root: &Path, index: &[Token], tool: &str, fields: &[&str]) -> Result<(usize, usize, String), String> {
    for file in files::find(root, &|p| p.starts_with("dist/") && p.ends_with(".js")) {
        patched(&tokens_of(root, &file.0)?, &file.0)?;
    }
    // The tool is named by its case and, as data, by the tool list's `name:` entry.
    let label = format!("\"{tool}");
    let case = once(index, &["case", label.as_str(), ":", "{"], &format!("`case \"{tool}\": {{`"))?;
    for i in (0..index.len()).filter(|&i| index[i].str_value() == Some(tool) && i != case + 1) {
        if !(i >= 2 && index[i - 2].is("name") && index[i - 1].is(":")) {
            return Err(format!("dist/index.js:{}: {tool} is named outside its case and the tool list", index[i].line));
        }
    }
    // The one handler for tool calls, and what its switch tests.
    let handler = once(index, &[".", "setRequestHandler", "(", "CallToolRequestSchema", ",", "async", "("], "the CallToolRequestSchema handler")?;
    let request = index.get(handler + 7).filter(|t| t.kind == Kind::Ident).ok_or("the handler does not take one plain parameter")?.text.clone();
    if !spells(index, handler + 8, &[")", "=>", "{"]) {
        return Err("the handler does not take one plain parameter".into());
    }
    let handler_end = close(index, handler + 10).ok_or("the handler never closes")?;
    if case < handler || handler_end <= case {
        return Err(format!("the {tool} case is not in the CallToolRequestSchema handler"));
    }
    let body = &index[handler + 11..handler_end];
    let destructured = once(body, &["const", "{", "name", ",", "arguments", ":"], "the request's destructuring")?;
    let args = body.get(destructured + 6).filter(|t| t.kind == Kind::Ident).ok_or("the arguments are not bound to a name")?.text.clone();
    if !spells(body, destructured + 7, &["}", "=", request.as_str(), ".", "params", ";"]) {
        return Err("the tool name and arguments are not read from the request's params".into());
    }
    once(body, &["switch", "(", "name", ")", "{"], "`switch (name)`")?;
    // An assignment (not a declaration: another clause's `const` is its own block's).
    let rebound = |name: &str| {
        (0..body.len().saturating_sub(1))
            .any(|i| body[i].is(name) && body[i + 1].is("=") && !(i > 0 && ["const", "let", "var"].iter().any(|d| body[i - 1].is(d))))
    };
    if rebound("name") || rebound(args.as_str()) || rebound(request.as_str()) {
        return Err("the request, its tool name or its arguments are bound again".into());
    }
    // The case: parse, then check, each once.
    let case_end = close(index, case + 3).ok_or(format!("the {tool} case never closes"))?;
    let clause = &index[case + 4..case_end];
    let parse = (0..clause.len())
        .find(|&i| spells(clause, i, &["const"]) && spells(clause, i + 2, &["="]) && spells(clause, i + 4, &[".", "safeParse", "(", args.as_str(), ")", ";"]));
    let parse = parse.ok_or("the case does not parse the arguments into a const with a schema's safeParse")?;
    let (parsed, schema) = (clause[parse + 1].text.clone(), clause[parse + 3].text.clone());
    schema_of_strings(index, &schema, fields)?;
    let declared = (0..clause.len()).filter(|&i| spells(clause, i, &["const", parsed.as_str()]) || spells(clause, i, &["let", parsed.as_str()])).count();
    if rebound(parsed.as_str()) || declared != 1 {
        return Err("the parse result is bound again".into());
    }
    if (0..clause.len()).any(|i| {
        spells(clause, i, &[parsed.as_str(), ".", "data", "."]) && clause.get(i + 5).is_some_and(|t| t.is("=") && clause.get(i + 6).is_none_or(|u| !u.is("=")))
    }) {
        return Err("a field of the parsed arguments is assigned".into());
    }
    handlers_imported(index)?;
    schema_readers(index, &schema)?;
    Ok((case, case_end, parsed))
}

/// The dispatcher shape (see the module docs): the case, its parse and its
/// check read from `dist/index.js`; then how it writes and what checks.
fn dispatcher(root: &Path) -> Result<(String, Containment), String> {
    let index = tokens_of(root, "dist/index.js")?;
    let (case, case_end, parsed) = dispatcher_clause(root, &index, "write_file", &["path", "content"])?;
    let clause = &index[case + 4..case_end];
    let check = once(clause, &["=", "await", "validatePath", "(", parsed.as_str(), ".", "data", ".", "path", ")", ";"], "the check of the parsed path")?;
    let checked = match check.checked_sub(2).map(|k| (&clause[k], &clause[k + 1])) {
        Some((decl, local)) if decl.is("const") => local.text.clone(),
        _ => return Err("validatePath's result is not a const of its own".into()),
    };
    let line = index[case].line;
    let uses_checked = clause.iter().filter(|t| t.is(&checked)).count();
    // The write: writeFileContent of lib.js ...
    if clause.iter().any(|t| t.is("writeFileContent")) {
        let write =
            once(clause, &["await", "writeFileContent", "(", checked.as_str(), ",", parsed.as_str(), ".", "data", ".", "content", ")", ";"], "the write")?;
        if write < check || clause.iter().filter(|t| t.is("writeFileContent")).count() != 1 || uses_checked != 2 {
            return Err("the case writes before its check, more than once, or uses the checked path otherwise".into());
        }
        let containment = boundary_lib(root)?;
        let where_ =
            format!("dist/index.js:{line}: write_file hands what validatePath returns to writeFileContent, checked at a `/` boundary after resolving links");
        return Ok((where_, containment));
    }
    // ... or written out in the case, with the entry's own validatePath over a constant list.
    let write = once(clause, &["await", "fs", ".", "writeFile", "(", checked.as_str(), ",", parsed.as_str(), ".", "data", ".", "content", ","], "the write")?;
    if write < check {
        return Err("the case writes before its check".into());
    }
    let validate = function_body(&index, "validatePath", "dist/index.js")?;
    let normalize = function_body(&index, "normalizePath", "dist/index.js")?;
    let plain = normalize.len() == 8 && spells(normalize, 0, &["return", "path", ".", "normalize", "("]) && normalize[6].is(")") && normalize[7].is(";");
    // `return path.normalize(P).toLowerCase();`, P its own parameter.
    let folded = normalize.len() == 12
        && spells(normalize, 0, &["return", "path", ".", "normalize", "("])
        && spells(normalize, 6, &[")", ".", "toLowerCase", "(", ")", ";"]);
    if !plain && !folded {
        return Err("normalizePath is not just path.normalize, or path.normalize folded to lower case".into());
    }
    entry_list(root, &index)?;
    list_readers(&index)?;
    if validate.iter().any(|t| t.is("isPathWithinAllowedDirectories")) {
        boundary_validate(validate)?;
        replaced_exclusively(clause, write, &checked, &parsed)?;
        boundary_files(root)?;
        let where_ = format!(
            "dist/index.js:{line}: write_file writes what validatePath returns exclusively or by rename, checked at a `/` boundary after resolving links"
        );
        return Ok((where_, Containment::Boundary));
    }
    if clause.iter().filter(|t| t.is("writeFile")).count() != 1 || uses_checked != 2 {
        return Err("the case writes more than once, or uses the checked path otherwise".into());
    }
    // The check: a plain string prefix.
    let prefix_tests = (0..validate.len())
        .filter(|&i| spells(validate, i, &[".", "some", "(", "dir", "=>"]) && spells(validate, i + 6, &[".", "startsWith", "(", "dir", ")", ")"]))
        .count();
    let resolved = (0..validate.len()).filter(|&i| spells(validate, i, &["fs", ".", "realpath", "("])).count();
    if prefix_tests != 3 || resolved != 2 {
        return Err(format!("validatePath tests a string prefix {prefix_tests} times and resolves links {resolved} times, not 3 and 2"));
    }
    // A path inside is unknown only because a link there may lead out: say so from the source.
    let link_falls_through = !validate.iter().any(|t| t.str_value() == Some("ENOENT"));
    let write_follows_links = !clause.iter().any(|t| t.str_value() == Some("wx"));
    if !link_falls_through && !write_follows_links {
        return Err("validatePath tells a missing file from a refused link and the write creates exclusively: not the shape this reading judges".into());
    }
    if folded {
        let where_ = format!(
            "dist/index.js:{line}: write_file writes what validatePath returns, which tests the directory as a string prefix of both folded to lower case"
        );
        return Ok((where_, Containment::PrefixFolded));
    }
    let where_ = format!("dist/index.js:{line}: write_file writes what validatePath returns, which tests the directory as a plain string prefix");
    Ok((where_, Containment::Prefix))
}

/// The case's own write, from its first `fs.writeFile` at `first`:
/// `fs.writeFile(CHECKED, R.data.content, { …, flag: "wx" })`, and only on
/// `EEXIST` a temporary file `${CHECKED}.….tmp` (a sibling) written and
/// renamed over CHECKED; nothing else is written or renamed.
fn replaced_exclusively(clause: &[Token], first: usize, checked: &str, parsed: &str) -> Result<(), String> {
    let refuse = |why: &str| Err(format!("the case's write {why}"));
    let options_open = first + 13;
    let options_end = if clause.get(options_open).is_some_and(|t| t.is("{")) { close(clause, options_open) } else { None };
    let Some(options_end) = options_end else { return refuse("has no options object") };
    if !clause[options_open..options_end].iter().any(|t| t.str_value() == Some("wx")) {
        return refuse("does not create exclusively (wx)");
    }
    if !clause.iter().any(|t| t.str_value() == Some("EEXIST")) {
        return refuse("does not replace only an existing file (EEXIST)");
    }
    let sibling = format!("${{{checked}}}.");
    let temp_decl = (0..clause.len()).find(|&i| {
        clause[i].is("const")
            && clause.get(i + 2).is_some_and(|t| t.is("="))
            && clause.get(i + 3).and_then(Token::str_value).is_some_and(|v| v.starts_with(&sibling) && v.ends_with(".tmp"))
            && clause.get(i + 4).is_some_and(|t| t.is(";"))
    });
    let Some(temp_decl) = temp_decl else { return refuse("has no temporary sibling of the checked path") };
    let temp = clause[temp_decl + 1].text.clone();
    let writes = (0..clause.len()).filter(|&i| spells(clause, i, &["fs", ".", "writeFile", "("])).count();
    let temp_write = once(clause, &["await", "fs", ".", "writeFile", "(", temp.as_str(), ",", parsed, ".", "data", ".", "content", ","], "the temporary write");
    let rename = once(clause, &["await", "fs", ".", "rename", "(", temp.as_str(), ",", checked, ")", ";"], "the rename");
    let renames = clause.iter().filter(|t| t.is("rename")).count();
    let temps = clause.iter().filter(|t| t.is(&temp)).count();
    if writes != 2 || temp_write.is_err() || rename.is_err() || renames != 1 || clause.iter().filter(|t| t.is(checked)).count() != 3 || temps > 4 {
        return refuse("writes or renames anything but the checked path and its temporary sibling");
    }
    Ok(())
}

/// The names `import { … } from "SPEC"` binds (by their own names only).
pub(crate) fn imported_from(index: &[Token], spec: &str) -> Vec<String> {
    let mut out = Vec::new();
    for i in (0..index.len()).filter(|&i| index[i].is("import") && index.get(i + 1).is_some_and(|t| t.is("{"))) {
        let Some(end) = close(index, i + 1) else { continue };
        let from = index.get(end + 1).is_some_and(|t| t.is("from")) && index.get(end + 2).and_then(Token::str_value) == Some(spec);
        let plain = index[i + 2..end].iter().all(|t| t.is(",") || t.kind == Kind::Ident) && !index[i + 2..end].iter().any(|t| t.is("as"));
        if from && plain {
            out.extend(index[i + 2..end].iter().filter(|t| t.kind == Kind::Ident).map(|t| t.text.clone()));
        }
    }
    out
}

/// Every request handler is registered for a schema the SDK's types module
/// exports, by its own name: an alias could be the tool-call schema again.
pub(crate) fn handlers_imported(index: &[Token]) -> Result<(), String> {
    let schemas = imported_from(index, "@modelcontextprotocol/sdk/types.js");
    for i in (0..index.len()).filter(|&i| spells(index, i, &["setRequestHandler", "("])) {
        let named = index.get(i + 2).is_some_and(|t| schemas.contains(&t.text)) && index.get(i + 3).is_some_and(|t| t.is(","));
        if !named {
            return Err(format!("dist/index.js:{}: a handler is registered for a schema not imported from the SDK by its name", index[i].line));
        }
    }
    Ok(())
}

/// `CALLEE(…, NAME)` at `i`: the name is the last argument of a call of `callee`.
fn handed_to(index: &[Token], i: usize, callee: &[&str]) -> bool {
    index.get(i + 1).is_some_and(|t| t.is(")"))
        && (0..i)
            .rev()
            .find(|&j| index[j].is("(") && close(index, j) == Some(i + 1))
            .is_some_and(|open| open >= callee.len() && spells(index, open - callee.len(), callee))
}

/// The schema is only read: parsed, or handed to zodToJsonSchema of its package.
pub(crate) fn schema_readers(index: &[Token], schema: &str) -> Result<(), String> {
    if !imported_from(index, "zod-to-json-schema").iter().any(|n| n == "zodToJsonSchema")
        || index.windows(2).any(|w| w[0].is("function") && w[1].is("zodToJsonSchema"))
    {
        return Err("zodToJsonSchema is not the package's".into());
    }
    for i in (0..index.len()).filter(|&i| index[i].is(schema)) {
        let ok = (i > 0 && index[i - 1].is("const")) || spells(index, i + 1, &[".", "safeParse", "("]) || handed_to(index, i, &["zodToJsonSchema"]);
        if !ok {
            return Err(format!("dist/index.js:{}: {schema} is used otherwise than parsed or printed", index[i].line));
        }
    }
    Ok(())
}

/// The entry's constant list is only read: searched, joined, handed to
/// isPathWithinAllowedDirectories or to console.error, which nothing replaces.
pub(crate) fn list_readers(index: &[Token]) -> Result<(), String> {
    if (0..index.len()).any(|i| {
        index[i].is("console")
            && (spells(index, i + 1, &[".", "error", "="])
                || spells(index, i + 1, &["="])
                || (i > 0 && ["const", "let", "var", "function"].iter().any(|d| index[i - 1].is(d))))
    }) {
        return Err("console is replaced or bound by the module".into());
    }
    for i in (0..index.len()).filter(|&i| index[i].is("allowedDirectories")) {
        let length = spells(index, i + 1, &[".", "length"]) && index.get(i + 3).is_none_or(|t| !t.is("="));
        let read = spells(index, i + 1, &[".", "some", "("]) || spells(index, i + 1, &[".", "join", "("]) || length;
        let handed = handed_to(index, i, &["console", ".", "error"]) || handed_to(index, i, &["isPathWithinAllowedDirectories"]);
        // Its declaration, or the roots' copy [`roots_list`] counts.
        let bound = i > 0 && (index[i - 1].is("const") || index[i - 1].is("let"));
        if !(bound || read || handed || spells(index, i + 1, &["=", "["])) {
            return Err(format!("dist/index.js:{}: the allowed-directory list is used otherwise than read", index[i].line));
        }
    }
    Ok(())
}

/// `const NAME = z.object({ F: z.string(), … })` of exactly the string `fields`, in order, once.
pub(crate) fn schema_of_strings(index: &[Token], name: &str, fields: &[&str]) -> Result<(), String> {
    let at = once(index, &["const", name, "=", "z", ".", "object", "(", "{"], &format!("the schema {name}"))?;
    let end = close(index, at + 7).ok_or("the schema never closes")?;
    let text: String = index[at + 8..end].iter().map(|t| t.text.as_str()).collect();
    let want = fields.iter().map(|f| format!("{f}:z.string()")).collect::<Vec<_>>().join(",");
    if text != want && text != format!("{want},") {
        return Err(format!("the schema {name} is not an object of the strings {}", fields.join(" and ")));
    }
    Ok(())
}

/// The entry's allowed-directory list: a module `const` nothing changes, or
/// one the MCP roots protocol replaces ([`roots_list`]).
pub(crate) fn entry_list(root: &Path, index: &[Token]) -> Result<(), String> {
    match constant_list(index) {
        Ok(()) => Ok(()),
        Err(constant) => roots_list(root, index).map_err(|roots| format!("{constant}; {roots}")),
    }
}

/// (2025.7.29, 2025.8.18) `let allowedDirectories = …` once, assigned once
/// more, in `updateAllowedDirectoriesFromRoots`, as `allowedDirectories =
/// [...V];` of a `const V = await getValidRootDirectories(…)` there, which
/// is imported from roots-utils.js, a file that writes nothing; never
/// changed in place. The roots a client sets are the list config names (an
/// assumption of the envelope), so the verdicts are the constant list's.
fn roots_list(root: &Path, index: &[Token]) -> Result<(), String> {
    once(index, &["let", "allowedDirectories", "="], "the allowed-directory list's `let`")?;
    let setter = function_body(index, "updateAllowedDirectoriesFromRoots", "dist/index.js")?;
    let copy = once(setter, &["allowedDirectories", "=", "["], "the copy of the roots into the list")?;
    let end = (copy..setter.len()).find(|&i| setter[i].is(";")).ok_or("the copy into the list never ends")?;
    let text: String = setter[copy..=end].iter().map(|t| t.text.as_str()).collect();
    let valid = text.strip_prefix("allowedDirectories=[...").and_then(|rest| rest.strip_suffix("];")).unwrap_or_default().to_owned();
    if valid.is_empty() || !valid.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$') {
        return Err("the list is not a copy of one name".into());
    }
    once(setter, &["const", valid.as_str(), "=", "await", "getValidRootDirectories", "("], "the valid roots' binding")?;
    let bound = (0..setter.len()).filter(|&i| setter[i].is(&valid) && setter.get(i + 1).is_some_and(|t| t.is("=")) && !setter[i + 2].is("=")).count();
    if bound != 1 {
        return Err("the valid roots are bound again".into());
    }
    let binds = (0..index.len().saturating_sub(2)).filter(|&i| index[i].is("allowedDirectories") && index[i + 1].is("=") && !index[i + 2].is("=")).count();
    let changed = (0..index.len().saturating_sub(3)).any(|i| {
        let member = |m: &str| index[i].is("allowedDirectories") && index[i + 1].is(".") && index[i + 2].is(m);
        ["push", "unshift", "splice", "fill", "copyWithin", "sort", "reverse", "pop", "shift"].iter().any(|m| member(m))
            || (member("length") && index.get(i + 3).is_some_and(|t| t.is("=")))
    });
    // A parameter of that name (`(allowedDirectories)`, `(allowedDirectories, …`) is another list;
    // a test such as `if (allowedDirectories.length …` is a read.
    let parameter = |i: usize| index[i - 1].is("(") && index.get(i + 1).is_some_and(|t| t.is(",") || t.is(")"));
    let other_binding =
        (1..index.len()).any(|i| index[i].is("allowedDirectories") && (["const", "var", "function"].iter().any(|d| index[i - 1].is(d)) || parameter(i)));
    if binds != 2 || changed || other_binding {
        return Err("the allowed-directory list is bound again or changed outside updateAllowedDirectoriesFromRoots".into());
    }
    once(index, &["import", "{", "getValidRootDirectories", "}", "from", "\"./roots-utils.js"], "the import of getValidRootDirectories")?;
    let roots = tokens_of(root, "dist/roots-utils.js")?;
    let writes =
        ["writeFile", "appendFile", "rename", "unlink", "rm", "rmdir", "mkdir", "copyFile", "symlink", "chmod", "open", "createWriteStream", "truncate"];
    if let Some(t) = roots.iter().find(|t| writes.iter().any(|w| t.is(w))) {
        return Err(format!("dist/roots-utils.js:{}: `{}` may write", t.line, t.text));
    }
    Ok(())
}

/// The allowed-directory list is a module `const`, declared once and never changed.
pub(crate) fn constant_list(index: &[Token]) -> Result<(), String> {
    once(index, &["const", "allowedDirectories", "="], "the allowed-directory list's declaration")?;
    let changed = (0..index.len().saturating_sub(3)).any(|i| {
        let member = |m: &str| index[i].is("allowedDirectories") && index[i + 1].is(".") && index[i + 2].is(m);
        let declared = |d: &str| i > 0 && index[i - 1].is(d);
        (index[i].is("allowedDirectories") && index[i + 1].is("=") && !index[i + 2].is("=") && !declared("const"))
            || ["push", "unshift", "splice", "fill", "copyWithin", "sort", "reverse", "length", "pop", "shift"]
                .iter()
                .any(|m| member(m) && !(*m == "length" && index.get(i + 3).is_none_or(|t| !t.is("="))))
    });
    let other_binding = (1..index.len()).any(|i| index[i].is("allowedDirectories") && ["let", "var", "function", "("].iter().any(|d| index[i - 1].is(d)));
    if changed || other_binding {
        return Err("the allowed-directory list is bound again or changed".into());
    }
    Ok(())
}

/// The allowed-directory list of lib.js is written only by
/// `setAllowedDirectories(D)`, as `allowedDirectories = [...D];`, and never
/// changed in place.
pub(crate) fn state(lib: &[Token]) -> Result<(), String> {
    let setter = function_body(lib, "setAllowedDirectories", "dist/lib.js")?;
    let text: String = setter.iter().map(|t| t.text.as_str()).collect();
    let copied = text.strip_prefix("allowedDirectories=[...").and_then(|rest| rest.strip_suffix("];"));
    let copies = copied.is_some_and(|d| !d.is_empty() && d.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$'));
    if !copies {
        return Err("setAllowedDirectories does not just copy its argument into the list".into());
    }
    let binds = |i: usize| lib[i].is("allowedDirectories") && lib[i + 1].is("=") && !lib[i + 2].is("=");
    let declared = |i: usize| i > 0 && ["let", "const", "var"].iter().any(|d| lib[i - 1].is(d));
    let declarations = (0..lib.len().saturating_sub(2)).filter(|&i| binds(i) && declared(i)).count();
    let assigned = (0..lib.len().saturating_sub(2)).filter(|&i| binds(i) && !declared(i)).count();
    if declarations != 1 {
        return Err(format!("lib.js declares the allowed-directory list {declarations} times"));
    }
    let changed = (0..lib.len().saturating_sub(2)).any(|i| {
        let member = |m: &str| lib[i].is("allowedDirectories") && lib[i + 1].is(".") && lib[i + 2].is(m);
        ["push", "unshift", "splice", "fill", "copyWithin", "sort", "reverse"].iter().any(|m| member(m))
            || (member("length") && lib.get(i + 3).is_some_and(|t| t.is("=")) && lib.get(i + 4).is_none_or(|t| !t.is("=")))
    });
    if assigned != 1 || changed {
        return Err("the allowed-directory list is assigned or changed outside setAllowedDirectories".into());
    }
    Ok(())
}

/// No file replaces a member of the file system or path modules, or writes a prototype.
pub(crate) fn patched(tokens: &[Token], file: &str) -> Result<(), String> {
    for i in 0..tokens.len().saturating_sub(3) {
        let module_member = (tokens[i].is("fs") || tokens[i].is("path")) && tokens[i + 1].is(".") && tokens[i + 3].is("=");
        if (module_member && tokens.get(i + 4).is_none_or(|t| !t.is("="))) || tokens[i].is("prototype") || tokens[i].is("__proto__") {
            return Err(format!("{file}:{}: a module member or a prototype is replaced", tokens[i].line));
        }
    }
    Ok(())
}

/// An absolute path of plain characters, `.` and empty segments dropped and
/// `..` folded; `None` outside that domain.
pub(crate) fn normalize(path: &str) -> Option<(String, bool)> {
    let plain = |c: char| c.is_ascii_alphanumeric() || "._+=,@~/-".contains(c);
    if !path.starts_with('/') || !path.chars().all(plain) {
        return None;
    }
    let mut parts: Vec<&str> = Vec::new();
    let mut climbs = false;
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                climbs = true;
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    Some((format!("/{}", parts.join("/")), climbs))
}

pub fn verdict(shape: &Shape, args: &Map<String, Value>, ctx: &Context) -> (Verdict, String) {
    let (where_, containment) = match shape {
        Shape::Understood(where_, containment) => (where_.as_str(), *containment),
        Shape::NotUnderstood(why) => return (Verdict::CannotJudge, why.clone()),
    };
    let Some(path) = args.get("path").and_then(Value::as_str) else {
        return (Verdict::CannotJudge, "the call has no string path".into());
    };
    let Some(dir) = ctx.config["allowed_directories"].as_str() else {
        return (Verdict::Unknown, format!("{where_}; not one allowed directory: a link in one may lead into another"));
    };
    let (Some((file, climbs)), Some((dir, _))) = (normalize(path), normalize(dir)) else {
        return (Verdict::Unknown, format!("{where_}; {path} is relative, from home or has characters the server may rewrite"));
    };
    let below = dir == "/" && file != "/" || file.strip_prefix(&dir).is_some_and(|rest| rest.starts_with('/'));
    // Folding changes neither string only when neither holds an upper-case
    // letter or anything beyond ASCII: then the folded test is the plain one.
    let unfolded = |s: &str| s.is_ascii() && !s.chars().any(|c| c.is_ascii_uppercase());
    if containment == Containment::PrefixFolded && !(unfolded(&file) && unfolded(&dir)) {
        return (Verdict::Unknown, format!("{where_}; {file} or {dir} changes when folded: the check compares other strings than the path written"));
    }
    if !containment.at_boundary() {
        return prefix_verdict(where_, path, &file, &dir, climbs, file == dir || below, ctx);
    }
    if file != dir && !below {
        return (Verdict::Reject, format!("{where_}; {file} is outside {dir}: validatePath throws before any write"));
    }
    if climbs || file == dir {
        return (Verdict::Unknown, format!("{where_}; {path} climbs back or names the directory itself"));
    }
    if containment == Containment::Walked && twin_below(&file, &dir) {
        return (Verdict::Unknown, format!("{where_}; {path} has a `K` below {dir}: a name with no exact entry may be walked to its Kelvin-sign twin"));
    }
    let write = Effect { op: "filesystem:write".into(), resource: path.into(), exposure: 0, mutation: true, write_scopes: vec![dir.clone()] };
    let breaches = ctx.breaches(&[write]);
    if breaches.is_empty() {
        (Verdict::Safe, format!("{where_}; {path} is written inside {dir}, inside the contract"))
    } else {
        (Verdict::Unsafe, format!("{where_}; {}", breaches.join("; ")))
    }
}

/// Whether a name below `dir` holds `K`, the one plain character with a twin
/// under NFC (U+212A KELVIN SIGN), which the walk may take for it.
pub(crate) fn twin_below(file: &str, dir: &str) -> bool {
    file.strip_prefix(dir).unwrap_or(file).contains('K')
}

/// The string-prefix shape's verdict: refused unless the normalized path
/// starts with the directory; inside it, unknown (a link may lead out); a
/// sibling whose name starts like the directory is written where it names.
fn prefix_verdict(where_: &str, path: &str, file: &str, dir: &str, climbs: bool, inside: bool, ctx: &Context) -> (Verdict, String) {
    if !file.starts_with(dir) {
        return (Verdict::Reject, format!("{where_}; {file} does not start with {dir}: validatePath throws before any write"));
    }
    if climbs {
        return (Verdict::Unknown, format!("{where_}; {path} climbs back"));
    }
    if inside {
        return (Verdict::Unknown, format!("{where_}; {path} is inside {dir}, but a link there whose target is refused is still written through"));
    }
    let write = Effect { op: "filesystem:write".into(), resource: path.into(), exposure: 0, mutation: true, write_scopes: vec![path.into()] };
    let breaches = ctx.breaches(&[write]);
    if breaches.is_empty() {
        (Verdict::Safe, format!("{where_}; {path} passes the prefix test and its write is inside the contract"))
    } else {
        (Verdict::Unsafe, format!("{where_}; {path} passes the prefix test outside {dir}: {}", breaches.join("; ")))
    }
}
