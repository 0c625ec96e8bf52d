//! The 2.x layout of the MCP filesystem server, read for write_file and
//! move_file (shared by [`crate::filesystem`] and [`crate::move_file`]).
//!
//! `dist/index.js` only starts the server; `dist/server.js` builds it per
//! connection in a factory whose own `let allowedDirectories` holds the
//! allowed list, handed to lib.js's `validatePath` as its second argument.
//! The oracle accepts it when, reading tokens only:
//!
//! - the list ([`factory_list`]): declared once as `let allowedDirectories
//!   = [...X]`, assigned only inside `updateAllowedDirectoriesFromRoots`,
//!   there only as `[...V]` of a `const V = await getValidRootDirectories(…)`
//!   (roots-utils.js writes nothing) or `[]`; never changed in place; every
//!   other use a read (`.length`, `.join(`), or the last argument of
//!   `validatePath`, of `console.error`, or the third of
//!   `searchFilesWithValidation`, whose body hands its list parameter only
//!   to `validatePath`;
//! - `server.registerTool` replaced once ([`wrapper`]), by a wrapper that
//!   touches no file and whose inner callback only returns the original
//!   handler called with its own arguments, or an error result;
//! - validatePath respells a refused path ([`respelled`]) only by
//!   `respellAllowedDirectoryPrefix`, which maps names equal under
//!   `unicodeMatchKey` (NFC, space separators as a space) and nothing else,
//!   before the check that decides; for a directory of plain ASCII names that
//!   is the identity on a refused path of plain characters, so the verdicts
//!   are the walked shape's (a directory outside plain characters is
//!   unknown there already);
//! - the write or the rename is anchored ([`anchored_write`],
//!   [`anchored_rename`]): pinned-directory.js opens or renames the last
//!   name of the validated path inside its own parent, entered by chdir, and
//!   a new file is created exclusively (`O_EXCL`); no other file operation
//!   than those the anchored helpers need.

use std::path::Path;

use crate::js_tokens::{close, function_body, once, parameters, spells, tokens_of};
use crate::lex::{Kind, Token};

/// The factory's file, when `dist/index.js` does not name `tool` and
/// `dist/server.js` does: the 2.x layout.
pub(crate) fn server_tokens(root: &Path, tool: &str) -> Option<Vec<Token>> {
    let index = tokens_of(root, "dist/index.js").ok()?;
    if index.iter().any(|t| t.str_value() == Some(tool)) {
        return None;
    }
    let server = tokens_of(root, "dist/server.js").ok()?;
    server.iter().any(|t| t.str_value() == Some(tool)).then_some(server)
}

const LIST: &str = "allowedDirectories";

/// The factory's allowed list is only read, or replaced by its roots updater (module docs).
pub(crate) fn factory_list(root: &Path, server: &[Token]) -> Result<(), String> {
    once(server, &["let", LIST, "=", "[", ".", ".", "."], "the allowed list's `let`")?;
    let updater = function_body(server, "updateAllowedDirectoriesFromRoots", "dist/server.js")?;
    // The updater's place in the file, to tell its assignments from others.
    let start = (0..server.len()).find(|&i| spells(server, i, &["function", "updateAllowedDirectoriesFromRoots", "("])).unwrap_or(0);
    let end = start + updater.len() + 8;
    let valid = (0..updater.len())
        .find(|&i| spells(updater, i, &["const"]) && spells(updater, i + 2, &["=", "await", "getValidRootDirectories", "("]))
        .map(|i| updater[i + 1].text.clone())
        .ok_or("the roots updater does not bind getValidRootDirectories' answer")?;
    for i in (0..server.len()).filter(|&i| server[i].is(LIST)) {
        let next = |k: usize| server.get(i + k);
        let assigned = next(1).is_some_and(|t| t.is("=")) && next(2).is_none_or(|t| !t.is("="));
        let declared = i > 0 && server[i - 1].is("let");
        if assigned && !declared {
            let copy = spells(server, i + 1, &["=", "[", ".", ".", ".", valid.as_str(), "]", ";"]) || spells(server, i + 1, &["=", "[", "]", ";"]);
            if !(start < i && i < end && copy) {
                return Err(format!("dist/server.js:{}: the allowed list is assigned outside its roots updater, or to something else", server[i].line));
            }
            continue;
        }
        let length = spells(server, i + 1, &[".", "length"]) && next(3).is_none_or(|t| !t.is("="));
        let joined = spells(server, i + 1, &[".", "join", "("]);
        let handed = last_argument_of(server, i, &["validatePath"]) || last_argument_of(server, i, &["console", ".", "error"]) || searched(server, i);
        if !(declared || length || joined || handed) {
            return Err(format!("dist/server.js:{}: the allowed list is used otherwise than read or handed to validatePath", server[i].line));
        }
    }
    let bound_again = (0..updater.len().saturating_sub(1)).any(|i| updater[i].is(&valid) && updater[i + 1].is("=") && !(i > 0 && updater[i - 1].is("const")));
    if bound_again {
        return Err("the valid roots are bound again".into());
    }
    let imports = |name: &str, spec: &str| once(server, &["import", "{", name, "}", "from", &format!("\"{spec}")], &format!("the import of {name}"));
    imports("getValidRootDirectories", "./roots-utils.js")?;
    let roots = tokens_of(root, "dist/roots-utils.js")?;
    let writes =
        ["writeFile", "appendFile", "rename", "unlink", "rm", "rmdir", "mkdir", "copyFile", "symlink", "chmod", "open", "createWriteStream", "truncate"];
    if let Some(t) = roots.iter().find(|t| writes.iter().any(|w| t.is(w))) {
        return Err(format!("dist/roots-utils.js:{}: `{}` may write", t.line, t.text));
    }
    searched_list_read(&tokens_of(root, "dist/lib.js")?)
}

/// `CALLEE(…, NAME)` at `i`: the name is the last argument of a call of `callee`.
fn last_argument_of(tokens: &[Token], i: usize, callee: &[&str]) -> bool {
    tokens.get(i + 1).is_some_and(|t| t.is(")"))
        && tokens.get(i.wrapping_sub(1)).is_some_and(|t| t.is(",") || t.is("("))
        && (0..i).rev().find(|&j| tokens[j].is("(") && close(tokens, j) == Some(i + 1)).is_some_and(|open| {
            open >= callee.len() && spells(tokens, open - callee.len(), callee) && !(open > callee.len() && tokens[open - callee.len() - 1].is("function"))
        })
}

/// `searchFilesWithValidation(A, B, NAME, …)`: the list as the third argument.
fn searched(tokens: &[Token], i: usize) -> bool {
    (0..i).rev().find(|&j| tokens[j].is("(") && close(tokens, j).is_some_and(|end| end > i)).is_some_and(|open| {
        open >= 1 && tokens[open - 1].is("searchFilesWithValidation") && {
            let commas = (open + 1..i).filter(|&k| tokens[k].is(",") && depth(tokens, open, k) == 1).count();
            commas == 2 && tokens.get(i + 1).is_some_and(|t| t.is(","))
        }
    })
}

/// The bracket depth at `k` counted from the `(` at `open` (1 just inside it).
fn depth(tokens: &[Token], open: usize, k: usize) -> i32 {
    let mut d = 0;
    for t in &tokens[open..k] {
        match t.text.as_str() {
            "(" | "[" | "{" if t.kind == Kind::Punct => d += 1,
            ")" | "]" | "}" if t.kind == Kind::Punct => d -= 1,
            _ => {}
        }
    }
    d
}

/// lib.js's searchFilesWithValidation, if any, hands its list parameter only to validatePath.
fn searched_list_read(lib: &[Token]) -> Result<(), String> {
    if !lib.windows(2).any(|w| w[0].is("function") && w[1].is("searchFilesWithValidation")) {
        return Ok(());
    }
    let list = parameters(lib, "searchFilesWithValidation").get(2).cloned().ok_or("searchFilesWithValidation has no list parameter")?;
    let body = function_body(lib, "searchFilesWithValidation", "dist/lib.js")?;
    for i in (0..body.len()).filter(|&i| body[i].is(&list)) {
        if !last_argument_of(body, i, &["validatePath"]) {
            return Err(format!("dist/lib.js:{}: searchFilesWithValidation uses the allowed list otherwise than to validate", body[i].line));
        }
    }
    Ok(())
}

/// `server.registerTool = …` once: a wrapper whose text touches no file and
/// no process state, and whose inner callback returns only `H(...A)`, the
/// original handler `H` (the wrapper's third parameter) with its own rest
/// arguments `A`, or an object literal holding `isError: true`. Its token range.
pub(crate) fn wrapper(server: &[Token]) -> Result<std::ops::Range<usize>, String> {
    let at = once(server, &[".", "registerTool", "=", "(", "(", "name", ","], "the replacement of registerTool")
        .or_else(|_| once(server, &[".", "registerTool", "=", "("], "the replacement of registerTool"))?;
    let end = (at..server.len()).find(|&i| server[i].is(";") && depth(server, at, i) == 0).ok_or("the wrapper never ends")?;
    let text = &server[at..end];
    if let Some(t) = text.iter().find(|t| ["fs", "process", "require", "import", "eval", "globalThis"].iter().any(|w| t.is(w))) {
        return Err(format!("dist/server.js:{}: the registerTool wrapper uses `{}`", t.line, t.text));
    }
    // The wrapper's parameters `(name, config, HANDLER) =>`, then the inner `async (...ARGS) =>`.
    let params = (0..text.len()).find(|&i| text[i].is("(") && text.get(i + 1).is_some_and(|t| t.kind == Kind::Ident)).ok_or("the wrapper has no parameters")?;
    let params_end = close(text, params).ok_or("the wrapper's parameters never close")?;
    let names: Vec<&Token> = text[params + 1..params_end].iter().filter(|t| t.kind == Kind::Ident).collect();
    let [_, _, handler] = names.as_slice() else { return Err("the wrapper does not take a name, a configuration and a handler".into()) };
    let rest = (0..text.len()).find(|&i| spells(text, i, &["async", "(", ".", ".", "."])).ok_or("the wrapper's callback does not take its arguments whole")?;
    let args = text.get(rest + 5).filter(|t| t.kind == Kind::Ident).ok_or("the wrapper's callback has no rest parameter")?;
    for r in (0..text.len()).filter(|&r| text[r].is("return")) {
        let calls = spells(text, r + 1, &[handler.text.as_str(), "(", ".", ".", ".", args.text.as_str(), ")", ";"]);
        let error =
            text.get(r + 1).is_some_and(|t| t.is("{")) && close(text, r + 1).is_some_and(|e| (r + 2..e).any(|k| spells(text, k, &["isError", ":", "true"])));
        if !calls && !error {
            return Err(format!("dist/server.js:{}: the registerTool wrapper returns something else than the handler's call or an error", text[r].line));
        }
    }
    let calls = (0..text.len()).filter(|&i| text[i].is(&handler.text)).count();
    if calls != 2 || text.iter().filter(|t| t.is(&args.text)).count() != 2 {
        return Err("the wrapper uses its handler or the call's arguments otherwise".into());
    }
    Ok(at..end)
}

/// validatePath's one respelling (module docs), when it has one: the refused
/// path replaced by `respellAllowedDirectoryPrefix(P, allowedDirectories)`,
/// whose body compares names only by `unicodeMatchKey` and returns only the
/// path it was given or `path.join(DIR, ...REST)`; `unicodeMatchKey` is
/// `return N.normalize("NFC").replace(/\p{Zs}/gu, " ");`.
pub(crate) fn respelled(lib: &[Token], validate: &[Token]) -> Result<bool, String> {
    if !validate.iter().any(|t| t.is("respellAllowedDirectoryPrefix")) {
        return Ok(false);
    }
    once(validate, &["=", "respellAllowedDirectoryPrefix", "("], "the respelling")?;
    match_key(lib)?;
    let body = function_body(lib, "respellAllowedDirectoryPrefix", "dist/lib.js")?;
    let [asked, _] = parameters(lib, "respellAllowedDirectoryPrefix").try_into().map_err(|_| "respellAllowedDirectoryPrefix does not take two parameters")?;
    let keys = (0..body.len()).filter(|&i| spells(body, i, &["unicodeMatchKey", "("])).count();
    let compared = (0..body.len()).any(|i| body[i].is("===") || (body[i].is("==") && body.get(i + 1).is_some_and(|t| t.is("="))));
    if keys != 2 || !compared || body.iter().any(|t| t.is("normalize") || t.is("toLowerCase") || t.is("fs")) {
        return Err("respellAllowedDirectoryPrefix compares names otherwise than by unicodeMatchKey".into());
    }
    for r in (0..body.len()).filter(|&r| body[r].is("return")) {
        if !spells(body, r + 1, &[asked.as_str(), ";"]) && !spells(body, r + 1, &["path", ".", "join", "("]) {
            return Err(format!("dist/lib.js:{}: respellAllowedDirectoryPrefix returns something else than a respelled path", body[r].line));
        }
    }
    Ok(true)
}

/// `function unicodeMatchKey(N) { return N.normalize("NFC").replace(/\p{Zs}/gu, " "); }`.
pub(crate) fn match_key(lib: &[Token]) -> Result<(), String> {
    let body = function_body(lib, "unicodeMatchKey", "dist/lib.js")?;
    let [name] = parameters(lib, "unicodeMatchKey").try_into().map_err(|_| "unicodeMatchKey does not take one parameter")?;
    let text: Vec<&str> = body.iter().map(|t| t.str_value().unwrap_or(&t.text)).collect();
    let want = ["return", name.as_str(), ".", "normalize", "(", "NFC", ")", ".", "replace", "(", "/\\p{Zs}/gu", ",", " ", ")", ";"];
    if text != want {
        return Err("unicodeMatchKey is not the NFC form with space separators as a space".into());
    }
    Ok(())
}

/// lib.js's writeFileContent(F, C): `await createFileInDirectory(F, C)`, and
/// on `EEXIST` `await overwriteInPlace(F, C)`, whose body lstat's F, refuses
/// anything but a regular file and hands F, C and the stat to
/// overwriteFileInDirectory; both anchored in pinned-directory.js ([`anchored_file`]).
pub(crate) fn anchored_write(root: &Path, lib: &[Token]) -> Result<(), String> {
    let body = function_body(lib, "writeFileContent", "dist/lib.js")?;
    let [file, content] = parameters(lib, "writeFileContent").try_into().map_err(|_| "writeFileContent does not take two parameters")?;
    let (f, c) = (file.as_str(), content.as_str());
    once(body, &["await", "createFileInDirectory", "(", f, ",", c, ")", ";"], "the exclusive create")?;
    once(body, &["await", "overwriteInPlace", "(", f, ",", c, ")", ";"], "the replacement")?;
    if body.iter().any(|t| t.is("fs")) || !body.iter().any(|t| t.str_value() == Some("EEXIST")) {
        return Err("writeFileContent runs a file operation itself, or replaces on another failure than EEXIST".into());
    }
    let over = function_body(lib, "overwriteInPlace", "dist/lib.js")?;
    let [o_file, o_content] = parameters(lib, "overwriteInPlace").try_into().map_err(|_| "overwriteInPlace does not take two parameters")?;
    let seen = (0..over.len())
        .find(|&i| spells(over, i, &["const"]) && spells(over, i + 2, &["=", "await", "fs", ".", "lstat", "(", o_file.as_str(), ")", ";"]))
        .map(|i| over[i + 1].text.clone())
        .ok_or("overwriteInPlace does not lstat the file")?;
    once(over, &["if", "(", "!", seen.as_str(), ".", "isFile", "(", ")", ")"], "the regular-file test")?;
    once(
        over,
        &["await", "overwriteFileInDirectory", "(", o_file.as_str(), ",", o_content.as_str(), ",", seen.as_str(), ")", ";"],
        "the anchored replacement",
    )?;
    if over.iter().filter(|t| t.is("fs")).count() != 1 {
        return Err("overwriteInPlace runs another file operation".into());
    }
    anchored_file(root, true)
}

/// lib.js's moveFile(FROM, TO): `fs.lstat(TO)` and one
/// `renameIntoDirectory(FROM, TO);`, anchored ([`anchored_file`]).
pub(crate) fn anchored_rename(root: &Path, lib: &[Token]) -> Result<(), String> {
    let body = function_body(lib, "moveFile", "dist/lib.js")?;
    let [from, to] = parameters(lib, "moveFile").try_into().map_err(|_| "moveFile does not take two parameters")?;
    once(body, &["renameIntoDirectory", "(", from.as_str(), ",", to.as_str(), ")", ";"], "the anchored rename")?;
    for i in (0..body.len()).filter(|&i| body[i].is("fs")) {
        if !spells(body, i, &["fs", ".", "lstat", "(", to.as_str(), ")"]) {
            return Err(format!("dist/lib.js:{}: moveFile runs a file operation besides lstat of the destination", body[i].line));
        }
    }
    let rebound = |n: &str| (0..body.len().saturating_sub(2)).any(|i| body[i].is(n) && body[i + 1].is("=") && !body[i + 2].is("="));
    if rebound(&from) || rebound(&to) {
        return Err("moveFile binds its ends again".into());
    }
    anchored_file(root, false)
}

/// pinned-directory.js: `inDirectory(D, A)` enters D by `process.chdir(D)`
/// (through `enterDirectory`) and runs A; the open of a file is of
/// `path.basename(F)` inside `inDirectory(path.dirname(F), …)`, a new file's
/// with `O_EXCL`; the rename is of the source to `path.basename(TO)` inside
/// `inDirectory(path.dirname(TO), …)`; the only file operations are those.
fn anchored_file(root: &Path, writes: bool) -> Result<(), String> {
    let pinned = tokens_of(root, "dist/pinned-directory.js")?;
    once(&pinned, &["process", ".", "chdir", "(", "directory", ")", ";"], "the entry into the anchor")?;
    if writes {
        let open = function_body(&pinned, "openInDirectory", "dist/pinned-directory.js")?;
        let params = parameters(&pinned, "openInDirectory");
        let file = params.first().ok_or("openInDirectory takes no parameter")?.as_str();
        let leaf = once(open, &["=", "path", ".", "basename", "(", file, ")", ";"], "the leaf of the file opened")?;
        let name = match leaf.checked_sub(2).map(|k| (&open[k], &open[k + 1])) {
            Some((decl, name)) if decl.is("const") => name.text.clone(),
            _ => return Err("the leaf opened is not a const of its own".into()),
        };
        once(open, &["return", "inDirectory", "(", "path", ".", "dirname", "(", file, ")", ","], "the anchor of the open")?;
        once(open, &["fs", ".", "openSync", "(", name.as_str(), ","], "the open of the leaf")?;
        let create = function_body(&pinned, "createFileInDirectory", "dist/pinned-directory.js")?;
        if !(0..create.len()).any(|i| spells(create, i, &["fs", ".", "constants", ".", "O_EXCL"])) {
            return Err("createFileInDirectory does not create exclusively (O_EXCL)".into());
        }
    } else {
        let rename = function_body(&pinned, "renameIntoDirectory", "dist/pinned-directory.js")?;
        let [from, to] = parameters(&pinned, "renameIntoDirectory").try_into().map_err(|_| "renameIntoDirectory does not take two parameters")?;
        let want = [
            "inDirectory",
            "(",
            "path",
            ".",
            "dirname",
            "(",
            to.as_str(),
            ")",
            ",",
            "(",
            ")",
            "=>",
            "fs",
            ".",
            "renameSync",
            "(",
            from.as_str(),
            ",",
            "path",
            ".",
            "basename",
            "(",
            to.as_str(),
            ")",
            ")",
            ")",
            ";",
        ];
        if rename.iter().map(|t| t.text.as_str()).collect::<Vec<_>>() != want || rename.iter().any(|t| t.str_value().is_some()) {
            return Err("renameIntoDirectory does not rename the source to the destination's leaf inside its anchored parent".into());
        }
    }
    let allowed = [
        "openSync",
        "fstatSync",
        "lstatSync",
        "closeSync",
        "ftruncate",
        "ftruncateSync",
        "writeFile",
        "writeFileSync",
        "close",
        "renameSync",
        "mkdirSync",
        "constants",
    ];
    for i in (0..pinned.len().saturating_sub(2)).filter(|&i| pinned[i].is("fs") && pinned[i + 1].is(".")) {
        if !allowed.iter().any(|a| pinned[i + 2].is(a)) {
            return Err(format!("dist/pinned-directory.js:{}: fs.{} is not an operation of the anchored helpers", pinned[i].line, pinned[i + 2].text));
        }
    }
    Ok(())
}
