//! The oracle for the reference Git server's `git_add`.
//!
//! From the envelope: `files` goes unchanged either to GitPython's index,
//! `repo.index.add(files)`, or, splatted after a literal `"--"`, to the git
//! executable, `repo.git.add("--", *files)`; a `repo.git.add(".")` for the
//! whole tree may stand beside either. git stages only what lies inside the
//! working tree (it refuses a path outside it, one beyond a symbolic link, a
//! `.git` directory and ignored paths), so every call stages inside the
//! repository. GitPython's index, at the versions the release admits, stages
//! a file named through `..` from outside the tree and the files of a `.git`
//! directory; for any other path what it stages depends on the repository
//! (ignored paths, linked directories, nested repositories), which the source
//! cannot tell: unknown. The oracle reads the function by indentation and
//! tokens, and follows the tool name to it ([`crate::git_route`]).

use std::path::Path;

use serde_json::{Map, Value};

use crate::Verdict;
use crate::contract::{Context, Effect};
use crate::git_route::Tool;
use crate::lex::{Kind, Token};

/// `git_add(repo, files)`, routed with the call's files.
const TOOL: Tool = Tool { name: "git_add", argument: "files", arity: 2 };

/// Where the paths go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sink {
    /// `repo.index.add(files)`: GitPython writes the index itself.
    Index,
    /// `repo.git.add("--", *files)`: the git executable, after the end of options.
    Cli,
}

/// What the oracle understood of the release.
pub enum Shape {
    Understood { sink: Sink, where_: String },
    NotUnderstood(String),
}

pub fn read(root: &Path) -> Shape {
    match handler(root) {
        Ok((sink, where_)) => Shape::Understood { sink, where_ },
        Err(why) => Shape::NotUnderstood(why),
    }
}

/// The one sink of the handler and where it and the route were seen.
fn handler(root: &Path) -> Result<(Sink, String), String> {
    let (file, tokens, def, route) = crate::git_route::server_function(root, &TOOL)?;
    let name = file.as_str();
    library(name, &tokens)?;
    // A decorator would run instead of the function it names.
    let previous = tokens[..def].iter().rev().skip_while(|t| t.kind == Kind::Newline).take_while(|t| t.kind != Kind::Newline).last();
    if previous.is_some_and(|t| t.is("@")) {
        return Err(format!("{name}:{}: git_add is decorated", tokens[def].line));
    }
    let header: Vec<&Token> = tokens[def..].iter().take_while(|t| t.kind != Kind::Newline).collect();
    if !header.iter().any(|t| t.is("files")) {
        return Err(format!("{name}:{}: git_add takes no `files`", tokens[def].line));
    }
    let body = crate::git_diff::body_lines(&tokens, def);
    let mut index = Vec::new();
    let mut cli = Vec::new();
    // A `for NAME in files:` loop that can only refuse: its element and indent.
    let mut check_loop: Option<(String, usize)> = None;
    for line in &body {
        if let Some((element, indent)) = check_loop.take().filter(|(_, indent)| line[0].indent > *indent) {
            refusal_only(name, line, &element)?;
            check_loop = Some((element, indent));
            continue;
        }
        if let [f, element, in_, files, colon] = line.as_slice()
            && f.is("for")
            && in_.is("in")
            && files.is("files")
            && colon.is(":")
        {
            check_loop = Some((element.text.clone(), f.indent));
            continue;
        }
        for (i, t) in line.iter().enumerate() {
            if t.is("files") && !plain_use(line, i) && !listed_by_helper(&tokens, line, i) {
                return Err(format!("{name}:{}: files is used other than tested, handed whole to index.add or splatted", t.line));
            }
        }
        for args in calls(line, "index", "add") {
            let args: Vec<&[Token]> = args.iter().map(Vec::as_slice).collect();
            if !matches!(args.as_slice(), [[f]] if f.is("files")) {
                return Err(format!("{name}:{}: index.add is not handed files alone", line[0].line));
            }
            index.push(line[0].line);
        }
        for args in calls(line, "git", "add") {
            let args: Vec<&[Token]> = args.iter().map(Vec::as_slice).collect();
            match args.as_slice() {
                [[dot]] if dot.str_value() == Some(".") => {}
                [[dashes], [star, f]] if dashes.str_value() == Some("--") && star.is("*") && f.is("files") => cli.push(line[0].line),
                _ => return Err(format!("{name}:{}: git.add with arguments other than \".\" or \"--\", *files", line[0].line)),
            }
        }
    }
    match (index.as_slice(), cli.as_slice()) {
        ([at], []) => Ok((Sink::Index, format!("{route}; {name}:{at}: the paths go to GitPython's index.add"))),
        ([], [at]) => Ok((Sink::Cli, format!("{route}; {name}:{at}: the paths go to git add after `--`"))),
        _ => Err(format!("{name}: git_add hands files to {} index.add and {} git add calls, not to one", index.len(), cli.len())),
    }
}

/// A line of a loop over the paths that only checks them: the element is
/// used only as the right operand of a path join, `(root / ELEMENT)`, and the
/// only calls are path resolution and the refusal (`Path`, `resolve`,
/// `relative_to`, `ValueError`). Whatever it lets through still goes to the
/// sink, so it changes no effect; it can only refuse.
fn refusal_only(name: &str, line: &[Token], element: &str) -> Result<(), String> {
    for (i, t) in line.iter().enumerate() {
        if t.is(element) && !(i > 0 && line[i - 1].is("/") && line.get(i + 1).is_some_and(|n| n.is(")"))) {
            return Err(format!("{name}:{}: the loop over files uses {element} other than in a path join", t.line));
        }
        let keyword = ["except", "if", "elif", "not", "and", "or", "in", "raise", "return"].contains(&t.text.as_str());
        let checking = ["Path", "resolve", "relative_to", "ValueError"].contains(&t.text.as_str());
        if t.kind == Kind::Ident && !keyword && !checking && line.get(i + 1).is_some_and(|n| n.is("(")) {
            return Err(format!("{name}:{}: the loop over files calls {}", t.line, t.text));
        }
        if t.is("files") {
            return Err(format!("{name}:{}: the loop over files touches the list", t.line));
        }
    }
    Ok(())
}

/// `HELPER(repo, files)`, HELPER a function of the file whose whole body (a
/// docstring aside) is `return REPO.git.ls_files("--stage", "--", *FILES)` over its own two
/// parameters: it lists the index entries of the paths, which only reads.
fn listed_by_helper(tokens: &[Token], line: &[Token], i: usize) -> bool {
    let at = |back: usize| i.checked_sub(back).map(|j| &line[j]);
    let (Some(comma), Some(_repo), Some(open), Some(helper)) = (at(1), at(2), at(3), at(4)) else { return false };
    if !(comma.is(",") && open.is("(") && helper.kind == Kind::Ident && line.get(i + 1).is_some_and(|t| t.is(")"))) {
        return false;
    }
    let defs: Vec<usize> = (0..tokens.len().saturating_sub(1)).filter(|&d| tokens[d].is("def") && tokens[d + 1].is(&helper.text)).collect();
    let [def] = defs.as_slice() else { return false };
    let header: Vec<&Token> = tokens[*def..].iter().take_while(|t| t.kind != Kind::Newline).collect();
    // `def NAME ( REPO [: T] , FILES [: T] ) …`: the first names after `(` and `,`.
    let params: Vec<&str> = header.windows(2).filter(|w| w[0].is("(") || w[0].is(",")).map(|w| w[1].text.as_str()).collect();
    let [repo, files, ..] = params.as_slice() else { return false };
    let body = crate::git_diff::body_lines(tokens, *def);
    // A docstring first, if any, then the one statement.
    let docstring = |l: &[Token]| matches!(l, [s] if matches!(s.kind, Kind::Str(_)));
    let statements: Vec<&Vec<Token>> = body.iter().enumerate().filter(|(i, l)| !(*i == 0 && docstring(l))).map(|(_, l)| l).collect();
    let [only] = statements.as_slice() else { return false };
    let listed = matches!(only.get(..6), Some([ret, r, d1, g, d2, ls]) if ret.is("return") && r.is(repo) && d1.is(".") && g.is("git") && d2.is(".") && ls.is("ls_files"));
    let args = calls(only, "git", "ls_files");
    let one_call = only.iter().filter(|t| t.is("(")).count() == 1 && only.last().is_some_and(|t| t.is(")"));
    let [one] = args.as_slice() else { return false };
    let one: Vec<&[Token]> = one.iter().map(Vec::as_slice).collect();
    listed
        && one_call
        && matches!(one.as_slice(),
            [[stage], [dashes], [star, f]] if stage.str_value() == Some("--stage") && dashes.str_value() == Some("--") && star.is("*") && f.is(files))
}

/// `git` is GitPython imported plainly, and nothing in the file replaces an
/// `add` (GitPython's `Git.add`, say) by assignment.
fn library(name: &str, tokens: &[Token]) -> Result<(), String> {
    let lines: Vec<&[Token]> = tokens.split(|t| t.kind == Kind::Newline).filter(|l| !l.is_empty()).collect();
    if !lines.iter().any(|l| matches!(l, [import, git] if import.is("import") && git.is("git"))) {
        return Err(format!("{name}: no plain `import git`"));
    }
    for l in &lines {
        if l.windows(2).any(|w| w[0].is("as") && w[1].is("git")) || l.first().is_some_and(|t| t.is("git")) && l.iter().any(|t| t.is("=")) {
            return Err(format!("{name}:{}: `git` is bound to something else", l[0].line));
        }
        if l.windows(3).any(|w| w[0].is(".") && w[1].is("add") && w[2].is("=")) {
            return Err(format!("{name}:{}: an `add` is replaced", l[0].line));
        }
    }
    Ok(())
}

/// `files` tested (`if files == ["."]`, `if not files:`), handed whole to `.index.add(files)`,
/// or splatted (`*files`, which hands on its elements, never the list):
/// nothing else may touch the list.
fn plain_use(line: &[Token], i: usize) -> bool {
    let at = |back: usize, text: &str| i.checked_sub(back).is_some_and(|j| line[j].is(text));
    let after = line.get(i + 1);
    let tested = after.is_some_and(|a| a.is("==") || a.is("!=")) && (at(1, "if") || at(1, "elif"))
        || after.is_some_and(|a| a.is(":")) && at(1, "not") && (at(2, "if") || at(2, "elif"));
    let whole = at(1, "(") && at(2, "add") && at(3, ".") && at(4, "index") && after.is_some_and(|a| a.is(")"));
    let splatted = at(1, "*") && after.is_some_and(|a| a.is(")") || a.is(","));
    tested || whole || splatted
}

/// The arguments, split at top-level commas, of every `….HEAD.METHOD(…)` on the line.
fn calls(line: &[Token], head: &str, method: &str) -> Vec<Vec<Vec<Token>>> {
    let starts = (0..line.len().saturating_sub(4))
        .filter(|&i| line[i].is(".") && line[i + 1].is(head) && line[i + 2].is(".") && line[i + 3].is(method) && line[i + 4].is("("));
    starts.map(|at| crate::lex::call_arguments(&line[at + 5..])).collect()
}

pub fn verdict(shape: &Shape, args: &Map<String, Value>, ctx: &Context) -> (Verdict, String) {
    let (sink, where_) = match shape {
        Shape::Understood { sink, where_ } => (*sink, where_.as_str()),
        Shape::NotUnderstood(why) => return (Verdict::CannotJudge, why.clone()),
    };
    let (Some(repo), Some(files)) = (args.get("repo_path").and_then(Value::as_str), args.get("files").and_then(Value::as_array)) else {
        return (Verdict::CannotJudge, "the call lacks a string repo_path or a files array".into());
    };
    let Some(paths) = files.iter().map(Value::as_str).collect::<Option<Vec<&str>>>() else {
        return (Verdict::Unknown, format!("{where_}; an element of files is not a path"));
    };
    let stage = Effect { op: "git:add".into(), resource: repo.into(), exposure: 0, mutation: true, write_scopes: vec![] };
    let read = |resource: String| Effect { op: "filesystem:read".into(), resource, exposure: 0, mutation: false, write_scopes: vec![] };
    let effects = match sink {
        Sink::Cli => vec![stage],
        Sink::Index => {
            let segment = |wanted: &dyn Fn(&str) -> bool| paths.iter().any(|p| p.split('/').any(wanted));
            let climbs = segment(&|s| s == "..");
            let metadata = segment(&|s| s.eq_ignore_ascii_case(".git"));
            if !climbs && !metadata {
                return (
                    Verdict::Unknown,
                    format!(
                        "{where_}; what the index stages for these paths depends on the repository (ignored paths, linked directories, nested repositories)"
                    ),
                );
            }
            let mut effects = vec![stage];
            if climbs {
                effects.push(read(format!("{repo}/..")));
            }
            if metadata {
                effects.push(read(format!("{repo}/.git")));
            }
            effects
        }
    };
    let breaches = ctx.breaches(&effects);
    if breaches.is_empty() {
        (Verdict::Safe, format!("{where_}; git stages inside {repo} only, inside the contract"))
    } else {
        (Verdict::Unsafe, format!("{where_}; {}", breaches.join("; ")))
    }
}
