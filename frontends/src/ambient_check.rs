//! The process-wide state check over a release's whole closure: the first
//! operation [`crate::ambient`]'s tables say writes such state, outside a
//! region pinned by a `body` fact (or, for a signal listener, with a
//! function neither pinned nor listed in `source.signal-listeners`),
//! escalates, naming the operation, the state and why it matters. A loaded
//! file that does not parse cannot be read for such operations: when its
//! text names the root of any (`process`, `os`, `signal`, `logging`), it
//! escalates too.

use crate::ambient::{CWD, ENV, SIGNALS, UMASK, Use, Writes, classify};
use crate::frontend::{Frontend, Program};
use crate::ir::{Escalation, EscalationCode};
use crate::spec::FactKind;
use crate::ts::{Node, Syntax};
use fcd_model::effect::Anchor;

/// Escalates on the first operation of the closure that writes process-wide
/// state outside a region pinned by a `body` fact.
pub fn check(frontend: &dyn Frontend, program: &Program<'_, '_>) -> Result<(), Escalation> {
    let (lang, table) = (frontend.lang(), frontend.ambient_table());
    let pinned: Vec<_> =
        program.regions.iter().filter(|r| program.facts.iter().any(|f| f.region == r.name && matches!(f.kind, FactKind::Body { .. }))).collect();
    for (file, syntax) in program.trees {
        check_file(frontend, program, &pinned, file, syntax)?;
    }
    for (file, text) in program.opaque {
        // What the parser recovered is read only where every use of a root is a
        // plain name outside anything that did not parse; otherwise the file escalates.
        match Syntax::parse_recovering(lang.for_file(file), (*text).to_owned()) {
            Ok(recovered) if unparsed_use(table, &recovered).is_none() => check_file(frontend, program, &pinned, file, &recovered)?,
            Ok(recovered) => {
                let (root, line) = unparsed_use(table, &recovered).unwrap_or_default();
                return Err(opaque_escalation(file, root, line));
            }
            Err(_) => opaque_file(table, file, text)?,
        }
    }
    Ok(())
}

fn check_file(
    frontend: &dyn Frontend,
    program: &Program<'_, '_>,
    pinned: &[&crate::frontend::Region<'_>],
    file: &str,
    syntax: &Syntax,
) -> Result<(), Escalation> {
    let table = frontend.ambient_table();
    for op in frontend.ambient(file, syntax) {
        let Some(entry) = classify(table, &op.what) else { continue };
        let reviewed = |n: Node<'_>| pinned.iter().any(|r| r.file == file && r.node.contains(n));
        let listener = op.handler.filter(|_| entry.state == SIGNALS).map(|h| (h, fcd_model::canon::sha256(h.token_text().as_bytes())));
        if reviewed(op.node) || listener.as_ref().is_some_and(|(h, digest)| reviewed(*h) || program.env.signal_listeners.contains(digest)) {
            continue;
        }
        // A signal listener installed inside pinned code is still judged by its own function.
        let pinned = if listener.is_none() { frontend.pinned_code(program, file, op.node) } else { Err(String::new()) };
        let pin = match pinned {
            Ok(()) => continue,
            Err(why) if why.is_empty() => String::new(),
            Err(why) => format!(" (or a function pinned in `source.pinned-functions` whose closure holds it: {why})"),
        };
        let how = match &op.what {
            Use::Reference(p) if entry.writes == Writes::Object => format!("`{p}` changes {}", entry.state),
            Use::Reference(p) => format!("`{p}` is taken as a value, and calling it changes {}", entry.state),
            Use::Called { callee, .. } => format!("`{callee}(…)` changes {}", entry.state),
            Use::Written(p) => format!("writing `{p}` changes {}", entry.state),
        };
        let why = match entry.state {
            ENV => "every child process a sink starts (git, a database driver) inherits it",
            CWD => "every relative path a sink resolves depends on it",
            UMASK => "the mode of every file a sink creates depends on it",
            SIGNALS => match &listener {
                Some((h, digest)) => &*format!(
                    "its listener (line {}, token digest {digest}) runs at any point of a call; a reviewer who read it may list the digest in `source.signal-listeners`",
                    h.line()
                ),
                None => "a handler runs code no region shows, at any point of a call",
            },
            _ => "it decides what runs and where text goes on any event, in code no region shows",
        };
        return Err(Escalation::new(
            EscalationCode::ShapeMismatch,
            format!(
                "`{}` writes process-wide state: {how} ({}), and {why}; only a region the profile pins with a `body` fact may{pin}",
                op.node.compact_text().chars().take(80).collect::<String>(),
                entry.path
            ),
            Some(Anchor::new(file, op.node.line(), op.node.end_line(), op.node.text())),
        ));
    }
    Ok(())
}

/// The roots of a language's process-wide state (`process`, `os`, `signal`, `logging`).
fn roots(table: &crate::ambient::Table) -> Vec<&'static str> {
    let mut roots: Vec<&str> = table.entries.iter().map(|e| e.path.split('.').next().unwrap_or(e.path)).collect();
    roots.sort_unstable();
    roots.dedup();
    roots
}

/// Every whole-word occurrence of `word` in `text`, by byte offset.
fn occurrences<'t>(text: &'t str, word: &'t str) -> impl Iterator<Item = usize> + 't {
    text.match_indices(word).map(|(at, _)| at).filter(move |&at| {
        let edge = |c: Option<char>| c.is_none_or(|c| !c.is_alphanumeric() && c != '_' && c != '$');
        edge(text[..at].chars().next_back()) && edge(text[at + word.len()..].chars().next())
    })
}

/// In a recovered tree: the first use of a root that is neither a comment
/// nor a plain name away from what did not parse (a string, anything in the
/// statement that holds an error), with its line. Comments are allowed
/// anywhere: the lexer knows them by their delimiters (a recovery that
/// misread a string's or a regular expression's extent could still make
/// one of code; that is left).
fn unparsed_use(table: &crate::ambient::Table, syntax: &Syntax) -> Option<(&'static str, u32)> {
    let broken: Vec<Node<'_>> = syntax.root().descendants().filter(|n| matches!(n.kind(), "ERROR" | "MISSING")).collect();
    // Where an error sits, the statement around it may be read wrongly too: it is suspect whole.
    let suspect: Vec<std::ops::Range<usize>> = broken.iter().map(|n| statement_of(*n).byte_range()).collect();
    let text = syntax.text();
    for root in roots(table) {
        for at in occurrences(text, root) {
            let leaf = syntax.root().descendants().filter(|n| n.byte_range().start <= at && at + root.len() <= n.byte_range().end).last();
            // A comment is a token the lexer knows by its delimiters, wherever it sits.
            let comment = leaf.is_some_and(|n| n.kind().contains("comment"));
            let plain = leaf.is_some_and(|n| n.text() == root && n.children().next().is_none() && n.kind().contains("identifier"));
            let near_error = suspect.iter().any(|r| r.contains(&at));
            if !comment && (!plain || near_error) {
                let line = text[..at].matches('\n').count() as u32 + 1;
                return Some((root, line));
            }
        }
    }
    None
}

/// The statement (or declaration, or class member) holding `node`: the
/// ancestor right below a block-like node of any grammar.
fn statement_of(node: Node<'_>) -> Node<'_> {
    const BLOCKS: &[&str] = &["program", "module", "statement_block", "block", "class_body", "source_file", "compilation_unit", "declaration_list"];
    let mut at = node;
    while let Some(parent) = at.parent() {
        if BLOCKS.contains(&parent.kind()) {
            return at;
        }
        at = parent;
    }
    at
}

fn opaque_escalation(file: &str, root: &str, line: u32) -> Escalation {
    Escalation::new(
        EscalationCode::ParseError,
        format!(
            "a file the release loads does not parse, and it names `{root}`, whose process-wide state fcd would have to check, where the parser cannot be trusted"
        ),
        Some(Anchor::at_line(file, line)),
    )
}

/// A loaded file that cannot be parsed even with recovery (too large, too
/// deep) escalates when it names the root of any process-wide state of its
/// language's table (a whole word): what it does with it cannot be read.
fn opaque_file(table: &crate::ambient::Table, file: &str, text: &str) -> Result<(), Escalation> {
    for root in roots(table) {
        if let Some(at) = occurrences(text, root).next() {
            return Err(opaque_escalation(file, root, text[..at].matches('\n').count() as u32 + 1));
        }
    }
    Ok(())
}
