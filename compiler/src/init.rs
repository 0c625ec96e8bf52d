//! `fcd profile init`: a starting profile for one handler, written from the
//! release's own source so that an author begins from what the frontend sees.
//!
//! The handler is located as a region (the function named, or without one
//! what runs for the tool: its route, its registered callback or its
//! dispatcher case, whichever the release has exactly one of), its call sites are resolved
//! and written as its inventory (unresolved and dynamic ones as comments, to
//! review; when registration cannot read the handler yet, why), the source
//! glob names the one file that defines it, and every word a
//! reviewer must sign off is a placeholder. The one rule answers UNKNOWN, so
//! the profile certifies nothing until someone writes the rules. The text is
//! loaded once before it is returned: init never writes a profile fcd refuses.

use std::fmt::Write as _;
use std::path::Path;

use fcd_frontends::{Identity, Lang};

use crate::input_schema;
use crate::inspect;
use crate::profile::Profile;
use fcd_model::error::InputError;

/// What `fcd profile init` was asked for.
pub struct Init<'a> {
    pub lang: Lang,
    pub source: &'a Path,
    /// The handler function; none: the tool's route, callback or case.
    pub function: Option<&'a str>,
    pub tool: &'a str,
    pub id: &'a str,
}

/// The handler as the frontend first sees it: the one file of the release
/// that defines it, how the profile names it, and its call sites, resolved
/// from the parsed files alone (none of the closure's checks run here).
struct Located {
    file: String,
    kind: fcd_frontends::RegionKind,
    /// Identity, file and line of each call site.
    calls: Vec<(Identity, String, u32)>,
    /// The tool's input schema as the release declares it, or why none is proposed.
    schema: Result<input_schema::Declared, String>,
}

/// Parses every file the language reads (dependencies and hidden folders
/// left out) and finds the one definition of `init.function`.
fn locate(init: &Init<'_>) -> Result<Located, InputError> {
    let mut files = Vec::new();
    let walk = walkdir::WalkDir::new(init.source).sort_by_file_name().into_iter().filter_entry(|e| {
        let name = e.file_name().to_string_lossy();
        e.depth() == 0 || !(name.starts_with('.') || name == "node_modules" || name == "target")
    });
    for entry in walk.filter_map(Result::ok).filter(|e| e.file_type().is_file()) {
        let Ok(relative) = entry.path().strip_prefix(init.source) else { continue };
        let relative = relative.to_string_lossy().replace(std::path::MAIN_SEPARATOR, "/");
        let ours = match init.lang {
            Lang::Python => relative.ends_with(".py"),
            Lang::CSharp => relative.ends_with(".cs"),
            other => other.parses(&relative),
        };
        if !ours || entry.metadata().map_or(true, |m| m.len() > 4 << 20) {
            continue;
        }
        let bytes = std::fs::read(entry.path()).map_err(|e| InputError::new(entry.path(), format!("cannot read: {e}")))?;
        files.push(fcd_frontends::SourceFile { path: relative, bytes });
    }
    // A file that does not parse holds no definition fcd could read.
    let parsed: Vec<(&str, fcd_frontends::ts::Syntax)> =
        files.iter().filter_map(|f| fcd_frontends::parse(init.lang.for_file(&f.path), f).ok().map(|s| (f.path.as_str(), s))).collect();
    let trees: Vec<(&str, &fcd_frontends::ts::Syntax)> = parsed.iter().map(|(p, s)| (*p, s)).collect();
    let frontend = crate::languages::frontend(init.lang);
    use fcd_frontends::RegionKind;
    let kinds = match init.function {
        Some(f) => vec![RegionKind::Function(f.to_owned())],
        None => vec![RegionKind::Route(init.tool.to_owned()), RegionKind::Callback(init.tool.to_owned()), RegionKind::Case(init.tool.to_owned())],
    };
    // The first way of naming the handler that the release holds: exactly once, or it is an error.
    let mut found = None;
    for kind in kinds {
        let hits: Vec<(&str, fcd_frontends::ts::Node<'_>)> =
            trees.iter().flat_map(|(path, syntax)| frontend.find_regions(syntax, &kind).into_iter().map(move |node| (*path, node))).collect();
        match hits.as_slice() {
            [] => continue,
            [one] => {
                found = Some((*one, kind));
                break;
            }
            [(f, n), ..] => {
                return Err(InputError::new(
                    init.source,
                    format!("{} places hold the {kind} (first at {f}:{}): one handler is one region", hits.len(), n.line()),
                ));
            }
        }
    }
    let Some(((file, node), kind)) = found else {
        let what = match init.function {
            Some(f) => format!("no function `{f}` in the release"),
            None => format!("no route, registered callback or dispatcher case of the tool `{}` in the release: name the handler with --function", init.tool),
        };
        return Err(InputError::new(init.source, what));
    };
    let env = fcd_frontends::Env { tool: init.tool.to_owned(), ..fcd_frontends::Env::default() };
    let region = fcd_frontends::Region { name: "handler", file, node, trees: &trees, env: &env };
    let calls = frontend.calls(&region).into_iter().map(|(n, identity)| (identity, file.to_owned(), n.line())).collect();
    let schema = input_schema::read(init.lang, &trees, init.tool, Some((file, node)));
    Ok(Located { file: file.to_owned(), kind, calls, schema })
}

/// (Go) The packages the handler's file imports, by the name the source
/// uses, each accepted at the exact path imported (`[imports]`).
fn go_imports(init: &Init<'_>, file: &str) -> Result<Vec<(String, String)>, InputError> {
    let path = init.source.join(file);
    let bytes = std::fs::read(&path).map_err(|e| InputError::new(&path, format!("cannot read: {e}")))?;
    let source = fcd_frontends::SourceFile { path: file.to_owned(), bytes };
    let syntax = fcd_frontends::parse(Lang::Go, &source).map_err(|e| InputError::new(&path, e.to_string()))?;
    let mut imports = Vec::new();
    for spec in syntax.root().descendants().filter(|n| n.kind() == "import_spec") {
        let Some(import) = spec.field_child("path").map(|p| p.text().trim_matches(['"', '`']).to_owned()) else { continue };
        let name = spec.field_child("name").map_or_else(|| import.rsplit('/').next().unwrap_or(&import).to_owned(), |n| n.text().to_owned());
        // A blank or dot import binds no name a callee is spelled with.
        if name != "_" && name != "." && !imports.iter().any(|(n, _)| *n == name) {
            imports.push((name, import));
        }
    }
    Ok(imports)
}

fn quoted(items: &[String]) -> String {
    items.iter().map(|i| format!("{i:?}")).collect::<Vec<_>>().join(", ")
}

/// The profile text; `callees` and `notes` fill the handler's inventory.
/// What the profile's text is made of, besides what `fcd profile init` was asked.
struct Parts<'a> {
    kind: &'a fcd_frontends::RegionKind,
    files: &'a [String],
    imports: &'a [(String, String)],
    callees: &'a [String],
    notes: &'a [String],
    /// Each callee's first call site: `file:line: source line`.
    sites: &'a [(String, String)],
    /// The argument patterns the frontend read each site's call with, when
    /// a guess from its text matched ([`proposed_args`]).
    args: &'a [Option<Vec<String>>],
    /// The `[arguments]` table: the declared schema, or why none is proposed.
    schema: &'a Result<input_schema::Declared, String>,
}

fn text(init: &Init<'_>, parts: &Parts<'_>) -> String {
    let &Parts { kind, files, imports, callees, notes, sites, args, schema } = parts;
    let mut t = String::new();
    let _ = writeln!(t, "# Starting profile for `{}`, written by `fcd profile init` from the release", init.tool);
    let _ = writeln!(t, "# source: every line is a proposal to review (profiles/README.md documents each key).");
    let _ = writeln!(t, "\n[profile]\nid = {:?}\nversion = 1\nlanguage = {:?}\ntool = {:?}", init.id, init.lang.name(), init.tool);
    let _ = writeln!(t, "description = \"TODO: what the handler does and what a reviewer must know\"");
    let _ = writeln!(t, "\n[envelope]");
    for key in ["structure", "arguments", "effects"] {
        let _ = writeln!(t, "{key} = \"TODO: the reviewed {key}\"");
    }
    let _ = writeln!(t, "assumptions = []");
    let _ = writeln!(t, "unknown = \"TODO: when a call is UNKNOWN\"\ncompleteness = \"TODO: where the modelled effect ends\"");
    arguments(&mut t, schema);
    let _ = writeln!(t, "\n[source]\nfiles = [{}]", quoted(files));
    if !imports.is_empty() {
        let _ = writeln!(
            t,
            "\n# The packages the handler's file imports, at the exact paths imported\n# (a `*` within one segment accepts other versions).\n[imports]"
        );
        for (name, path) in imports {
            let _ = writeln!(
                t,
                "{} = [{path:?}]",
                if name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') { name.clone() } else { format!("{name:?}") }
            );
        }
    }
    let region = match kind {
        fcd_frontends::RegionKind::Function(n) => format!("function = {n:?}"),
        fcd_frontends::RegionKind::Literal(n) => format!("function = {n:?}\nliteral = true"),
        fcd_frontends::RegionKind::Route(n) => format!("route = {n:?}"),
        fcd_frontends::RegionKind::Callback(n) => format!("callback = {n:?}"),
        fcd_frontends::RegionKind::Case(n) => format!("case = {n:?}"),
        fcd_frontends::RegionKind::Variable(n) => format!("variable = {n:?}"),
    };
    let _ = writeln!(t, "\n[regions.handler]\n{region}");
    let _ = writeln!(t, "\n# Every call site of the handler as the frontend resolves it.\n[inventory.handler]");
    for n in notes {
        // A note is a comment: one line, whatever the message holds.
        let _ = writeln!(t, "# {}", n.replace(['\n', '\r'], " "));
    }
    let _ = writeln!(t, "callees = [{}]", quoted(callees));
    if !sites.is_empty() {
        let _ = writeln!(
            t,
            "\n# Candidate sinks: each callee's call sites in the handler (up to three), with the source line;\n\
             # the arguments are what the frontend reads the call with, or TODO where no guess matched.\n\
             # Keep the call whose effect the profile models, its arguments written as patterns\n\
             # (param:NAME, var:NAME, a literal, any: profiles/README.md, \"call\" facts)."
        );
        for (i, (callee, site)) in sites.iter().enumerate() {
            let read = args.get(i).cloned().flatten();
            let patterns = read.as_deref().map_or_else(|| "\"TODO\"".to_owned(), quoted);
            let _ = writeln!(t, "# facts.sink = {{ kind = \"call\", region = \"handler\", callee = {callee:?}, args = [{patterns}], required = true }}");
            let _ = writeln!(t, "#   at {}", site.replace(['\n', '\r'], " "));
        }
    }
    let _ = writeln!(t, "\n# TODO: facts (the sink call, guards, defaults) and rules; until then every call is UNKNOWN.");
    let _ = writeln!(t, "[[rules]]\nwhen = {{ always = true }}\nthen = {{ unknown = \"no rule reviewed yet\" }}");
    t
}

/// The `[arguments]` table: each declared argument as a proposal to review,
/// one whose type the declaration does not spell plainly as a comment to
/// fill in; without a declaration, why, and the table left to the author.
fn arguments(t: &mut String, schema: &Result<input_schema::Declared, String>) {
    match schema {
        Ok(declared) => {
            let _ = writeln!(t, "\n# The tool's arguments as the release declares them ({}):", declared.at);
            let _ = writeln!(t, "# review each type and `required` (a default makes an argument optional).\n[arguments]");
            for a in &declared.arguments {
                let key = if !a.name.is_empty() && a.name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
                    a.name.clone()
                } else {
                    format!("{:?}", a.name)
                };
                match a.ty {
                    Some(ty) => {
                        let _ = writeln!(t, "{key} = {{ type = {ty:?}, required = {} }}", a.required);
                    }
                    None => {
                        let _ = writeln!(t, "# {key} = {{ type = \"TODO\", required = {} }}  (its type is not spelled plainly)", a.required);
                    }
                }
            }
        }
        Err(why) => {
            let _ = writeln!(t, "\n# TODO: the tool's arguments, e.g. name = {{ type = \"string\", required = true }}");
            let _ = writeln!(t, "# (none proposed: {})\n[arguments]", why.replace(['\n', '\r'], " "));
        }
    }
}

/// Line `line` of the release's `file`, trimmed (empty when it cannot be read).
fn source_line(root: &Path, file: &str, line: u32) -> String {
    let text = std::fs::read(root.join(file)).map(|b| String::from_utf8_lossy(&b).into_owned()).unwrap_or_default();
    let line = text.lines().nth(line.saturating_sub(1) as usize).unwrap_or_default().trim();
    // One comment line, whatever the source holds.
    line.chars().take(160).collect()
}

/// The starting profile's text for `init`.
pub fn starting_profile(init: &Init<'_>) -> Result<String, InputError> {
    let located = locate(init)?;
    let imports = if init.lang == Lang::Go { go_imports(init, &located.file)? } else { Vec::new() };
    let files = vec![format!("**/{}", located.file)];
    let name = Path::new("init.toml");
    let bare = Parts { kind: &located.kind, files: &files, imports: &imports, callees: &[], notes: &[], sites: &[], args: &[], schema: &located.schema };
    let first = Profile::parse(name, &text(init, &bare))?;
    // The call sites as registration resolves them, through the closure the
    // runtime loads; when that reading escalates, as the parsed files alone
    // give them, with the escalation noted for the author.
    let view = inspect::view(&first, init.source, None, Some("handler"))?;
    let mut notes = Vec::new();
    let calls: Vec<(Identity, String, u32)> = match (&view.closure, view.regions.first().map(|r| &r.located)) {
        (None, Some(Ok(Some(report)))) => report.calls.iter().map(|c| (c.identity.clone(), c.anchor.file.clone(), c.anchor.line)).collect(),
        (Some(e), _) | (None, Some(Err(e))) => {
            notes.push(format!("registration does not read the handler yet: {e}"));
            located.calls
        }
        _ => located.calls,
    };
    let mut callees = Vec::new();
    let mut sites = Vec::new();
    for (identity, file, line) in calls {
        match identity {
            Identity::Path(p) => {
                // Each callee's call sites, up to three: the sink may be the second.
                let site = format!("{file}:{line}: {}", source_line(init.source, &file, line));
                if sites.iter().filter(|(c, _)| *c == p).count() < 3 && !sites.iter().any(|(c, s)| *c == p && *s == site) {
                    sites.push((p.clone(), site));
                }
                if !callees.contains(&p) {
                    callees.push(p);
                }
            }
            other => notes.push(format!("escalates as written: {other} at {file}:{line}")),
        }
    }
    callees.sort();
    let parts =
        Parts { kind: &located.kind, files: &files, imports: &imports, callees: &callees, notes: &notes, sites: &sites, args: &[], schema: &located.schema };
    let args = proposed_args(init, &parts, &calls_at(init, &sites));
    let parts = Parts { args: &args, ..parts };
    let text = text(init, &parts);
    Profile::parse(name, &text)?;
    Ok(text)
}

/// Each candidate sink's first call: its callee, file and line, read back
/// from the `file:line: source` of its site.
fn calls_at(init: &Init<'_>, sites: &[(String, String)]) -> Vec<Option<Vec<String>>> {
    sites
        .iter()
        .map(|(callee, site)| {
            let mut parts = site.splitn(3, ':');
            let (file, line) = (parts.next()?, parts.next()?.parse::<usize>().ok()?);
            let text = std::fs::read(init.source.join(file)).ok()?;
            let text = String::from_utf8_lossy(&text);
            // The call starts on its line; its arguments may run over the next ones.
            let from: String = text.lines().skip(line.saturating_sub(1)).take(40).collect::<Vec<_>>().join("\n");
            let last = callee.rsplit(['.', ':', '#']).next().unwrap_or(callee).trim_end_matches("()");
            guessed_args(&from, last)
        })
        .collect()
}

/// The argument patterns the call `NAME(…)` at the start of `text` suggests,
/// one per argument, from its text alone: `param:X` for a bare name, `str:V`
/// for a plain string literal, `*param:X` for a splat, `arg:K` for
/// `…["K"]`, else `any`. `None` for keyword arguments or text that does not
/// hold the call. A guess is only a guess: [`proposed_args`] keeps it when
/// the frontend reads the call with it.
fn guessed_args(text: &str, name: &str) -> Option<Vec<String>> {
    let start = text.find(&format!("{name}("))? + name.len() + 1;
    let mut args = vec![String::new()];
    let (mut depth, mut quote) = (0usize, None::<char>);
    let mut escaped = false;
    for c in text[start..].chars() {
        match quote {
            Some(q) => {
                if !escaped && c == q {
                    quote = None;
                }
                escaped = !escaped && c == '\\';
            }
            None if c == '"' || c == '\'' || c == '`' => quote = Some(c),
            None if "([{".contains(c) => depth += 1,
            None if ")]}".contains(c) && depth == 0 => {
                let args: Vec<String> = args.into_iter().map(|a| a.trim().to_owned()).filter(|a| !a.is_empty()).collect();
                return args.iter().map(|a| guess(a)).collect();
            }
            None if ")]}".contains(c) => depth -= 1,
            None if c == ',' && depth == 0 => {
                args.push(String::new());
                continue;
            }
            None => {}
        }
        if let Some(last) = args.last_mut() {
            last.push(c);
        }
    }
    None
}

/// One argument's pattern, `None` for a keyword or named argument
/// (Python's `k=v`, C#'s `k: v`), which a call fact's `keywords` describe.
fn guess(arg: &str) -> Option<String> {
    let name = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '$') && !s.starts_with(|c: char| c.is_ascii_digit());
    let keyword = arg.split_once('=').is_some_and(|(k, v)| name(k.trim()) && !v.starts_with('=') && !k.ends_with(['!', '<', '>']));
    if keyword || arg.contains(": ") && name(arg.split(": ").next().unwrap_or_default().trim()) {
        return None;
    }
    let plain = |s: &str| !s.contains(['\\', '{', '$']);
    Some(if let Some(inner) = arg.strip_prefix("...").or_else(|| arg.strip_prefix('*')).filter(|i| name(i)) {
        format!("*param:{inner}")
    } else if name(arg) {
        format!("param:{arg}")
    } else if let Some(v) = ['"', '\''].iter().find_map(|q| arg.strip_prefix(*q)?.strip_suffix(*q)).filter(|v| plain(v)) {
        format!("str:{v}")
    } else if let Some(key) = arg.strip_suffix("\"]").and_then(|a| a.rsplit_once("[\"")).map(|(_, k)| k).filter(|k| name(k)) {
        format!("arg:{key}")
    } else {
        "any".to_owned()
    })
}

/// The guessed arguments the frontend reads each call with: every guess is
/// tried as a fact of a scratch profile (with `var:` for a `param:` that is
/// a local, then `any` for each), and only one that matches the call is
/// proposed; the others stay `TODO`.
fn proposed_args(init: &Init<'_>, parts: &Parts<'_>, guesses: &[Option<Vec<String>>]) -> Vec<Option<Vec<String>>> {
    let tries = |g: &Vec<String>| -> Vec<Vec<String>> {
        let locals: Vec<String> = g.iter().map(|a| a.strip_prefix("param:").map_or_else(|| a.clone(), |v| format!("var:{v}"))).collect();
        let loose: Vec<String> = g.iter().map(|a| if a.starts_with('*') { a.clone() } else { "any".to_owned() }).collect();
        vec![g.clone(), locals, loose]
    };
    let mut proposed: Vec<Option<Vec<String>>> = vec![None; parts.sites.len()];
    for round in 0..3 {
        let mut facts = String::new();
        for (i, ((callee, _), guess)) in parts.sites.iter().zip(guesses).enumerate() {
            let Some(g) = guess.as_ref().filter(|_| proposed[i].is_none()) else { continue };
            let args = quoted(&tries(g)[round]);
            let _ = writeln!(facts, "[facts.probe_{i}]\nkind = \"call\"\nregion = \"handler\"\ncallee = {callee:?}\nargs = [{args}]\nmatching = true");
        }
        if facts.is_empty() {
            break;
        }
        let scratch = format!("{}\n{facts}", text(init, parts));
        let Ok(profile) = Profile::parse(Path::new("init.toml"), &scratch) else { continue };
        let Ok(view) = inspect::view(&profile, init.source, None, Some("handler")) else { continue };
        for fact in &view.facts {
            let Some(i) = fact.name.strip_prefix("probe_").and_then(|i| i.parse::<usize>().ok()) else { continue };
            if let (Ok(Some(_)), Some(Some(g))) = (&fact.outcome, guesses.get(i)) {
                proposed[i] = Some(tries(g)[round].clone());
            }
        }
    }
    proposed
}
