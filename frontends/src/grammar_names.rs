//! A test that every node kind and field name a frontend compares against
//! exists in its grammar.
//!
//! The frontends compare kinds as strings (`n.kind() == "call_expression"`,
//! `matches!(n.kind(), "a" | "b")`, `match n.kind() { "a" => … }`) and read
//! fields by name (`field_child("body")`). A misspelt or renamed one never
//! matches and fails silently, often open; this test reads each frontend's
//! source text and looks every such string up in the grammar(s) of its language.

use std::path::Path;

use crate::language::Lang;
use crate::ts::grammar;

/// A token of Rust source, as far as this scan needs one.
#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Str(String),
    Ident(String),
    Punct(char),
}

/// Tokens of `src` with their 1-based lines; comments left out.
fn tokens(src: &str) -> Vec<(Tok, usize)> {
    let chars: Vec<char> = src.chars().collect();
    let (mut out, mut i, mut line) = (Vec::new(), 0, 1);
    while i < chars.len() {
        let c = chars[i];
        match c {
            '\n' => {
                line += 1;
                i += 1;
            }
            '/' if chars.get(i + 1) == Some(&'/') => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            '"' | 'r' if c == '"' || (chars.get(i + 1) == Some(&'#') && chars.get(i + 2) == Some(&'"')) => {
                // A string, or a raw string `r#"…"#` (no escapes).
                let raw = c == 'r';
                let (start, mut s) = (line, String::new());
                i += if raw { 3 } else { 1 };
                while i < chars.len() && !(chars[i] == '"' && (!raw || chars.get(i + 1) == Some(&'#'))) {
                    if chars[i] == '\\' && !raw {
                        s.push(chars[i]);
                        i += 1;
                    }
                    if let Some(&ch) = chars.get(i) {
                        line += usize::from(ch == '\n');
                        s.push(ch);
                    }
                    i += 1;
                }
                i += if raw { 2 } else { 1 };
                out.push((Tok::Str(s), start));
            }
            '\'' => {
                // A char literal (`'x'`, `'\n'`, `'"'`) or a lifetime (`'a`).
                if chars.get(i + 1) == Some(&'\\') {
                    i += 2;
                    while i < chars.len() && chars[i] != '\'' {
                        i += 1;
                    }
                    i += 1;
                } else if chars.get(i + 2) == Some(&'\'') {
                    i += 3;
                } else {
                    i += 1;
                }
            }
            c if c.is_alphanumeric() || c == '_' => {
                let mut s = String::new();
                while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                    s.push(chars[i]);
                    i += 1;
                }
                out.push((Tok::Ident(s), line));
            }
            c if c.is_whitespace() => i += 1,
            c => {
                out.push((Tok::Punct(c), line));
                i += 1;
            }
        }
    }
    out
}

fn ident(t: Option<&(Tok, usize)>, name: &str) -> bool {
    matches!(t, Some((Tok::Ident(s), _)) if s == name)
}

fn punct(t: Option<&(Tok, usize)>, c: char) -> bool {
    matches!(t, Some((Tok::Punct(p), _)) if *p == c)
}

/// Whether the tokens ending just before `end` are `kind ( )`.
fn ends_with_kind(toks: &[(Tok, usize)], end: usize) -> bool {
    end >= 3 && ident(toks.get(end - 3), "kind") && punct(toks.get(end - 2), '(') && punct(toks.get(end - 1), ')')
}

/// The index of the bracket closing the one opened at `open`.
fn closing(toks: &[(Tok, usize)], open: usize) -> usize {
    let mut depth = 0usize;
    for (j, (t, _)) in toks.iter().enumerate().skip(open) {
        match t {
            Tok::Punct('(' | '[' | '{') => depth += 1,
            Tok::Punct(')' | ']' | '}') => {
                depth -= 1;
                if depth == 0 {
                    return j;
                }
            }
            _ => {}
        }
    }
    toks.len()
}

/// The strings of patterns between `from` and `to` at bracket depth 0,
/// up to a guard (`if`) or an arm's `=>`; `arms` restarts after each arm.
fn pattern_strings(toks: &[(Tok, usize)], from: usize, to: usize, arms: bool, out: &mut Vec<(String, usize)>) {
    let (mut depth, mut in_pattern) = (0i32, true);
    let mut j = from;
    while j < to {
        let t = &toks[j].0;
        match t {
            Tok::Punct('(' | '[' | '{') => depth += 1,
            Tok::Punct(')' | ']' | '}') => {
                depth -= 1;
                // An arm body in braces ends its arm.
                if depth == 0 && arms && matches!(t, Tok::Punct('}')) {
                    in_pattern = true;
                    if punct(toks.get(j + 1), ',') {
                        j += 1;
                    }
                }
            }
            Tok::Punct(',') if depth == 0 && arms => in_pattern = true,
            Tok::Punct('=') if depth == 0 && punct(toks.get(j + 1), '>') => in_pattern = false,
            Tok::Ident(s) if depth == 0 && s == "if" => in_pattern = false,
            Tok::Str(s) if depth == 0 && in_pattern => out.push((s.clone(), toks[j].1)),
            _ => {}
        }
        j += 1;
    }
}

/// Every node kind `src` compares a `kind()` against, with its line.
fn kinds(src: &str) -> Vec<(String, usize)> {
    let toks = tokens(src);
    let mut out = Vec::new();
    // Lists of kinds: `const NAME: &[&str] = &[…]`, used as `NAME.contains(&….kind())`.
    let mut lists: Vec<(String, Vec<(String, usize)>)> = Vec::new();
    for i in 0..toks.len() {
        // `….kind() == "x"` and `!= "x"`
        if ends_with_kind(&toks, i)
            && (punct(toks.get(i), '=') || punct(toks.get(i), '!'))
            && punct(toks.get(i + 1), '=')
            && let Some((Tok::Str(s), line)) = toks.get(i + 2)
        {
            out.push((s.clone(), *line));
        }
        // `matches!(….kind(), "a" | "b")`
        if ident(toks.get(i), "matches") && punct(toks.get(i + 1), '!') && punct(toks.get(i + 2), '(') {
            let end = closing(&toks, i + 2);
            let comma = (i + 3..end).find(|&j| punct(toks.get(j), ',') && depth_at(&toks, i + 3, j) == 0);
            if let Some(comma) = comma
                && ends_with_kind(&toks, comma)
            {
                pattern_strings(&toks, comma + 1, end, false, &mut out);
            }
        }
        // `match ….kind() { "a" | "b" => …, … }`
        if ident(toks.get(i), "match") {
            let open = (i + 1..toks.len()).find(|&j| punct(toks.get(j), '{') && depth_at(&toks, i + 1, j) == 0);
            if let Some(open) = open
                && ends_with_kind(&toks, open)
            {
                pattern_strings(&toks, open + 1, closing(&toks, open), true, &mut out);
            }
        }
        if ident(toks.get(i), "const") && punct(toks.get(i + 2), ':') && punct(toks.get(i + 3), '&') && punct(toks.get(i + 4), '[') {
            let Some((Tok::Ident(name), _)) = toks.get(i + 1) else { continue };
            let Some(open) = (i + 5..toks.len()).find(|&j| punct(toks.get(j), '=')).map(|eq| eq + 2) else { continue };
            if punct(toks.get(open), '[') {
                let strings = toks[open..closing(&toks, open)].iter().filter_map(|(t, l)| if let Tok::Str(s) = t { Some((s.clone(), *l)) } else { None });
                lists.push((name.clone(), strings.collect()));
            }
        }
    }
    for (name, strings) in lists {
        let used = (0..toks.len()).any(|i| {
            ident(toks.get(i), &name) && punct(toks.get(i + 1), '.') && ident(toks.get(i + 2), "contains") && punct(toks.get(i + 3), '(') && {
                let end = closing(&toks, i + 3);
                ends_with_kind(&toks, end)
            }
        });
        if used {
            out.extend(strings);
        }
    }
    out
}

/// The bracket depth at `at`, counted from `from`.
fn depth_at(toks: &[(Tok, usize)], from: usize, at: usize) -> i32 {
    toks[from..at].iter().fold(0, |d, (t, _)| match t {
        Tok::Punct('(' | '[' | '{') => d + 1,
        Tok::Punct(')' | ']' | '}') => d - 1,
        _ => d,
    })
}

/// Every field name `src` reads (`field_child("x")`, `field_children("x")`, `items("x")`).
fn fields(src: &str) -> Vec<(String, usize)> {
    let toks = tokens(src);
    let mut out = Vec::new();
    for i in 0..toks.len() {
        let reads = ["field_child", "field_children", "items"].iter().any(|m| ident(toks.get(i), m));
        if reads
            && punct(toks.get(i + 1), '(')
            && let Some((Tok::Str(s), line)) = toks.get(i + 2)
        {
            out.push((s.clone(), *line));
        }
    }
    out
}

/// The source of `path` without its test module.
fn non_test_source(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    match text.find("#[cfg(test)]") {
        Some(at) => text[..at].to_owned(),
        None => text,
    }
}

fn is_kind(lang: Lang, kind: &str) -> bool {
    grammar(lang).id_for_node_kind(kind, true) != 0 || grammar(lang).id_for_node_kind(kind, false) != 0
}

/// Names in `src` that none of `langs` knows, as `file:line: what`.
fn unknown_names(file: &str, src: &str, langs: &[Lang]) -> Vec<String> {
    let mut bad = Vec::new();
    for (kind, line) in kinds(src) {
        if !langs.iter().any(|l| is_kind(*l, &kind)) {
            bad.push(format!("{file}:{line}: node kind `{kind}` is not in the {langs:?} grammar"));
        }
    }
    for (field, line) in fields(src) {
        if !langs.iter().any(|l| grammar(*l).field_id_for_name(&field).is_some()) {
            bad.push(format!("{file}:{line}: field `{field}` is not in the {langs:?} grammar"));
        }
    }
    bad
}

#[test]
fn every_kind_and_field_a_frontend_names_is_in_its_grammar() {
    // Each language is its own crate beside this one (`frontends/<dir>/src`).
    let crates = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dirs: [(&str, &[Lang]); 4] =
        [("python", &[Lang::Python]), ("go", &[Lang::Go]), ("csharp", &[Lang::CSharp]), ("javascript", &[Lang::JavaScript, Lang::TypeScript])];
    let (mut bad, mut checked) = (Vec::new(), 0);
    for (dir, langs) in dirs {
        // Every module, those in directories (`loader/`) too.
        let src = crates.join(dir).join("src");
        let files: Vec<_> = walkdir::WalkDir::new(&src).sort_by_file_name().into_iter().map(|e| e.expect("frontend directory").into_path()).collect();
        for path in files.iter().filter(|p| p.extension().is_some_and(|e| e == "rs")) {
            let text = non_test_source(path);
            checked += kinds(&text).len() + fields(&text).len();
            let shown = path.strip_prefix(&src).unwrap_or(path).to_string_lossy();
            bad.extend(unknown_names(&format!("{dir}/{shown}"), &text, langs));
        }
    }
    assert!(checked > 300, "the scan found only {checked} names: it no longer reads the frontends' comparisons");
    assert!(bad.is_empty(), "names no grammar knows:\n{}", bad.join("\n"));
}

#[test]
fn the_scan_reads_every_form_of_comparison() {
    let src = r#"
        const LIST: &[&str] = &["in_list"];
        fn f(n: Node<'_>) {
            if n.kind() == "eq" || n.kind() != "ne" || LIST.contains(&n.kind()) {}
            let _ = matches!(n.kind(), "m1" | "m2" if n.text() == "guard");
            match n.kind() {
                "a1" | "a2" => { match x { "not_a_kind" => {} } }
                "b" if n.text() == "guard" => 1,
                _ => 2,
            }
            n.field_child("f1").items("f2");
            // n.kind() == "commented"
        }
    "#;
    let mut found: Vec<String> = kinds(src).into_iter().map(|(k, _)| k).collect();
    found.sort();
    assert_eq!(found, ["a1", "a2", "b", "eq", "in_list", "m1", "m2", "ne"]);
    let fields: Vec<String> = fields(src).into_iter().map(|(f, _)| f).collect();
    assert_eq!(fields, ["f1", "f2"]);
    assert_eq!(unknown_names("x.rs", "fn f(n: Node) { n.kind() == \"function_definitio\"; }", &[Lang::Python]).len(), 1);
    assert!(unknown_names("x.rs", "fn f(n: Node) { n.kind() == \"function_definition\"; n.field_child(\"body\"); }", &[Lang::Python]).is_empty());
}
