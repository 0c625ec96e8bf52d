//! `fcd profile init`: a starting profile for one handler, written from the
//! release's own source so that an author begins from what the frontend sees.
//!
//! The handler function is located as a region, its call sites are resolved
//! and written as its inventory (unresolved and dynamic ones as comments, to
//! review), the source glob names the one file that defines it, and every word a
//! reviewer must sign off is a placeholder. The one rule answers UNKNOWN, so
//! the profile certifies nothing until someone writes the rules. The text is
//! loaded once before it is returned: init never writes a profile fcd refuses.

use std::fmt::Write as _;
use std::path::Path;

use fcd_frontends::{Identity, Lang};

use crate::error::InputError;
use crate::inspect;
use crate::profile::Profile;

/// What `fcd profile init` was asked for.
pub struct Init<'a> {
    pub lang: Lang,
    pub source: &'a Path,
    pub function: &'a str,
    pub tool: &'a str,
    pub id: &'a str,
}

/// Where the handler is defined: the one file of the release that defines
/// `function`, found by parsing every file the language reads (build
/// outputs and dependencies left out).
fn handler_file(init: &Init<'_>) -> Result<String, InputError> {
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
        if std::str::from_utf8(&bytes).is_ok_and(|t| t.contains(init.function)) {
            files.push(fcd_frontends::SourceFile { path: relative, bytes });
        }
    }
    let region = fcd_frontends::RegionSpec { name: "handler".into(), kind: fcd_frontends::RegionKind::Function(init.function.to_owned()), optional: false };
    let env = fcd_frontends::Env { tool: init.tool.to_owned(), ..fcd_frontends::Env::default() };
    let analysis = fcd_frontends::analyze_with(init.lang, &files, &[region], &[], &env)
        .map_err(|e| InputError::new(init.source, format!("function `{}`: {e}", init.function)))?;
    analysis
        .regions
        .first()
        .map(|r| r.anchor.file.clone())
        .ok_or_else(|| InputError::new(init.source, format!("no function `{}` in the release", init.function)))
}

fn quoted(items: &[String]) -> String {
    items.iter().map(|i| format!("{i:?}")).collect::<Vec<_>>().join(", ")
}

/// The profile text; `callees` and `notes` fill the handler's inventory.
fn text(init: &Init<'_>, files: &[String], callees: &[String], notes: &[String]) -> String {
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
    let _ = writeln!(t, "\n# TODO: the tool's arguments, e.g. name = {{ type = \"string\", required = true }}\n[arguments]");
    let _ = writeln!(t, "\n[source]\nfiles = [{}]", quoted(files));
    let _ = writeln!(t, "\n[regions.handler]\nfunction = {:?}", init.function);
    let _ = writeln!(t, "\n# Every call site of the handler as the frontend resolves it.\n[inventory.handler]");
    for n in notes {
        let _ = writeln!(t, "# {n}");
    }
    let _ = writeln!(t, "callees = [{}]", quoted(callees));
    let _ = writeln!(t, "\n# TODO: facts (the sink call, guards, defaults) and rules; until then every call is UNKNOWN.");
    let _ = writeln!(t, "[[rules]]\nwhen = {{ always = true }}\nthen = {{ unknown = \"no rule reviewed yet\" }}");
    t
}

/// The starting profile's text for `init`.
pub fn starting_profile(init: &Init<'_>) -> Result<String, InputError> {
    let files = vec![format!("**/{}", handler_file(init)?)];
    let name = Path::new("init.toml");
    let first = Profile::parse(name, &text(init, &files, &[], &[]))?;
    let view = inspect::view(&first, init.source, None, Some("handler"))?;
    if let Some(e) = &view.closure {
        return Err(InputError::new(init.source, format!("the release's closure escalates before the handler can be read: {e}")));
    }
    let region = match view.regions.first().map(|r| &r.located) {
        Some(Ok(Some(report))) => report,
        Some(Err(e)) => return Err(InputError::new(init.source, format!("function `{}`: {e}", init.function))),
        _ => return Err(InputError::new(init.source, format!("no function `{}` in the release", init.function))),
    };
    let mut callees = Vec::new();
    let mut notes = Vec::new();
    for call in &region.calls {
        match &call.identity {
            Identity::Path(p) if !callees.contains(p) => callees.push(p.clone()),
            Identity::Path(_) => {}
            other => notes.push(format!("escalates as written: {other} at {}:{}", call.anchor.file, call.anchor.line)),
        }
    }
    callees.sort();
    let text = text(init, &files, &callees, &notes);
    Profile::parse(name, &text)?;
    Ok(text)
}
