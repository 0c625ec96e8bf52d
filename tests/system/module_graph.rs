//! The module graph of a crate, read from its source the way rustc resolves
//! paths, for tidy's cycle check: every `crate::`, `super::` and `self::`
//! path (in `use` trees with their groups, and inline in code), from every
//! file and every inline `mod NAME { … }`, resolved to the deepest module it
//! names. A check that read only top-level `crate::` paths let three cycles
//! through (nested modules reached by `super::`), so this one reads them all.
//!
//! Comments, strings and a file's `#[cfg(test)]` tail are not code that
//! imports. Lifetimes are told from char literals by their closing quote.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// A module's path from the crate root (empty for the root).
pub type Module = Vec<String>;

#[derive(Default)]
pub struct Graph {
    pub modules: BTreeSet<Module>,
    /// `from` names something in `to` (both modules of the crate).
    pub edges: BTreeSet<(Module, Module)>,
}

#[derive(Debug, PartialEq)]
enum Token {
    Ident(String),
    Path,
    Open,
    Close,
    Comma,
    Semi,
    Star,
    Other,
}

/// Reads every `.rs` file under `src` (a crate's source root).
pub fn read(src: &Path) -> Graph {
    let mut files = Vec::new();
    for entry in walkdir::WalkDir::new(src).into_iter().filter_map(Result::ok) {
        let path = entry.path();
        if path.extension().is_some_and(|x| x == "rs") {
            files.push(path.to_path_buf());
        }
    }
    let mut graph = Graph::default();
    let mut paths = Vec::new();
    for path in &files {
        let module = file_module(&path.strip_prefix(src).unwrap().with_extension(""));
        let text = std::fs::read_to_string(path).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        graph.modules.insert(module.clone());
        walk(&lex(code), module, &mut graph.modules, &mut paths);
    }
    for (from, path) in paths {
        if let Some(to) = (1..=path.len()).rev().map(|n| path[..n].to_vec()).find(|p| graph.modules.contains(p))
            && to != from
        {
            graph.edges.insert((from, to));
        }
    }
    graph
}

/// `a/b.rs` and `a/b/mod.rs` are `a::b`; `lib.rs` and `main.rs` the root.
fn file_module(relative: &Path) -> Module {
    let mut parts: Module = relative.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
    if parts.last().is_some_and(|l| l == "mod") || (parts.len() == 1 && (parts[0] == "lib" || parts[0] == "main")) {
        parts.pop();
    }
    parts
}

fn lex(code: &str) -> Vec<Token> {
    let chars: Vec<char> = code.chars().collect();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if c == 'r' && (next == Some('"') || (next == Some('#') && raw_string_start(&chars, i + 1))) {
            let hashes = chars[i + 1..].iter().take_while(|&&h| h == '#').count();
            i += 2 + hashes;
            while i < chars.len() && !(chars[i] == '"' && chars[i + 1..].iter().take(hashes).filter(|&&h| h == '#').count() == hashes) {
                i += 1;
            }
            i += 1 + hashes;
            tokens.push(Token::Other);
        } else if c == '"' {
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            tokens.push(Token::Other);
        } else if c == '\'' {
            // A char literal closes within a few characters ('x', '\n', '\u{1F600}'); a lifetime does not.
            let close = if next == Some('\\') {
                chars[i + 2..].iter().position(|&q| q == '\'').map(|p| i + 2 + p)
            } else {
                (chars.get(i + 2) == Some(&'\'')).then_some(i + 2)
            };
            i = close.map_or(i + 1, |e| e + 1);
            tokens.push(Token::Other);
        } else if c.is_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            tokens.push(Token::Ident(chars[start..i].iter().collect()));
        } else {
            i += 1;
            tokens.push(match c {
                ':' if next == Some(':') => {
                    i += 1;
                    Token::Path
                }
                '{' => Token::Open,
                '}' => Token::Close,
                ',' => Token::Comma,
                ';' => Token::Semi,
                '*' => Token::Star,
                c if c.is_whitespace() => continue,
                _ => Token::Other,
            });
        }
    }
    tokens
}

fn raw_string_start(chars: &[char], at: usize) -> bool {
    let hashes = chars[at..].iter().take_while(|&&h| h == '#').count();
    chars.get(at + hashes) == Some(&'"')
}

/// Walks one file's tokens: inline modules, `use` trees and inline paths.
fn walk(tokens: &[Token], file: Module, modules: &mut BTreeSet<Module>, paths: &mut Vec<(Module, Module)>) {
    // The module each open brace belongs to; an inline module's closes it.
    let mut stack: Vec<Option<Module>> = Vec::new();
    let current = |stack: &[Option<Module>]| stack.iter().rev().find_map(Clone::clone).unwrap_or_else(|| file.clone());
    let mut i = 0;
    while i < tokens.len() {
        let ident = |k: usize| match tokens.get(k) {
            Some(Token::Ident(s)) => Some(s.as_str()),
            _ => None,
        };
        match &tokens[i] {
            Token::Ident(m) if m == "mod" && ident(i + 1).is_some() && tokens.get(i + 2) == Some(&Token::Open) => {
                let mut inline = current(&stack);
                inline.push(ident(i + 1).unwrap().to_owned());
                modules.insert(inline.clone());
                stack.push(Some(inline));
                i += 3;
            }
            Token::Ident(u) if u == "use" => {
                let here = current(&stack);
                let mut k = i + 1;
                let mut found = Vec::new();
                use_tree(tokens, &mut k, Vec::new(), &mut found);
                paths.extend(found.into_iter().filter_map(|p| resolve(&here, &p)).map(|p| (here.clone(), p)));
                i = k;
            }
            Token::Ident(first)
                if matches!(first.as_str(), "crate" | "super" | "self")
                    && tokens.get(i + 1) == Some(&Token::Path)
                    && (i == 0 || tokens[i - 1] != Token::Path) =>
            {
                let mut path = vec![first.clone()];
                let mut k = i + 1;
                while tokens.get(k) == Some(&Token::Path) {
                    match ident(k + 1) {
                        Some(s) => path.push(s.to_owned()),
                        None => break,
                    }
                    k += 2;
                }
                let here = current(&stack);
                if let Some(p) = resolve(&here, &path) {
                    paths.push((here, p));
                }
                i = k;
            }
            Token::Open => {
                stack.push(None);
                i += 1;
            }
            Token::Close => {
                stack.pop();
                i += 1;
            }
            _ => i += 1,
        }
    }
}

/// Every path a `use` tree names, from `prefix`; stops after its `;`.
fn use_tree(tokens: &[Token], k: &mut usize, prefix: Vec<String>, out: &mut Vec<Vec<String>>) {
    let mut path = prefix;
    loop {
        match tokens.get(*k) {
            Some(Token::Ident(s)) if s == "as" => *k += 2,
            Some(Token::Ident(s)) => {
                path.push(s.clone());
                *k += 1;
            }
            Some(Token::Path) => *k += 1,
            Some(Token::Star) => *k += 1,
            Some(Token::Open) => {
                *k += 1;
                loop {
                    use_tree(tokens, k, path.clone(), out);
                    match tokens.get(*k) {
                        Some(Token::Comma) => *k += 1,
                        Some(Token::Close) => {
                            *k += 1;
                            break;
                        }
                        _ => break,
                    }
                    if tokens.get(*k) == Some(&Token::Close) {
                        *k += 1;
                        break;
                    }
                }
                return;
            }
            Some(Token::Semi) => {
                *k += 1;
                out.push(path);
                return;
            }
            _ => {
                out.push(path);
                return;
            }
        }
    }
}

/// A path from `here` as an absolute module path, when it starts at the
/// crate, a parent or this module (`self` inside a group names the prefix).
fn resolve(here: &Module, path: &[String]) -> Option<Module> {
    let mut base = match path.first().map(String::as_str) {
        Some("crate") => Vec::new(),
        Some("super") | Some("self") => here.clone(),
        _ => return None,
    };
    let mut rest = &path[1..];
    if path[0] == "super" {
        base.pop()?;
        while rest.first().is_some_and(|s| s == "super") {
            base.pop()?;
            rest = &rest[1..];
        }
    }
    base.extend(rest.iter().filter(|s| *s != "self").cloned());
    Some(base)
}

/// Cycles among sibling modules, at every level: an edge between two
/// modules counts between their ancestors just below the module holding
/// both; a module naming its own parent or child is not a cycle.
pub fn cycles(graph: &Graph) -> Vec<Vec<Module>> {
    let mut siblings: BTreeMap<Module, BTreeSet<Module>> = BTreeMap::new();
    for (from, to) in &graph.edges {
        let common = from.iter().zip(to).take_while(|(a, b)| a == b).count();
        if common == from.len() || common == to.len() {
            continue;
        }
        siblings.entry(from[..=common].to_vec()).or_default().insert(to[..=common].to_vec());
    }
    let mut found = Vec::new();
    let mut reported = BTreeSet::new();
    for start in siblings.keys() {
        let mut path = vec![start.clone()];
        if back_to(&siblings, start, &mut path, &mut BTreeSet::new()) {
            let members: BTreeSet<Module> = path.iter().cloned().collect();
            if reported.insert(members) {
                found.push(path);
            }
        }
    }
    found
}

fn back_to(graph: &BTreeMap<Module, BTreeSet<Module>>, start: &Module, path: &mut Vec<Module>, seen: &mut BTreeSet<Module>) -> bool {
    let Some(next) = graph.get(path.last().unwrap()) else { return false };
    for n in next {
        if n == start {
            return true;
        }
        if seen.insert(n.clone()) {
            path.push(n.clone());
            if back_to(graph, start, path, seen) {
                return true;
            }
            path.pop();
        }
    }
    false
}

#[test]
fn the_reader_sees_super_groups_nested_and_inline_modules() {
    let dir = tempfile::tempdir().unwrap();
    let write = |p: &str, text: &str| {
        let path = dir.path().join(p);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write("lib.rs", "//! r\nmod a;\nmod b;\n");
    write("a/mod.rs", "//! a\nmod x;\nmod y;\n");
    write("a/x.rs", "//! x\nuse super::{y::{Y, self}, z as w};\nfn f<'a>(s: &'a str) -> char { let _ = \"crate::b::B\"; 'c' }\n");
    write("a/y.rs", "//! y\nmod inner {\n    pub fn g() { super::super::x::f(\"\"); }\n}\n");
    write("b.rs", "//! b\n// use crate::a::x;\nfn h() { crate::a::y::inner::g(); }\n#[cfg(test)]\nmod tests { use crate::a::x; }\n");
    let graph = read(dir.path());
    let m = |s: &str| s.split("::").map(str::to_owned).collect::<Module>();
    let edges: BTreeSet<(Module, Module)> = graph.edges.clone();
    assert!(edges.contains(&(m("a::x"), m("a::y"))), "a `super::` group: {edges:?}");
    assert!(edges.contains(&(m("a::y::inner"), m("a::x"))), "an inline module's `super::super::`: {edges:?}");
    assert!(edges.contains(&(m("b"), m("a::y::inner"))), "an inline path to a nested inline module: {edges:?}");
    assert!(!edges.iter().any(|(f, t)| f == &m("a::x") && t == &m("b")), "a string is not a path: {edges:?}");
    assert!(!edges.iter().any(|(f, _)| f == &m("b") && edges.contains(&(m("b"), m("a::x")))), "neither a comment nor the test tail: {edges:?}");
    let cycles = cycles(&graph);
    assert_eq!(cycles.len(), 1, "x and y name each other: {cycles:?}");
    assert_eq!(cycles[0].iter().collect::<BTreeSet<_>>(), [m("a::x"), m("a::y")].iter().collect::<BTreeSet<_>>());
}
