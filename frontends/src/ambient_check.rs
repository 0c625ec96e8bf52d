//! The process-wide state check over a release's whole closure: the first
//! operation [`crate::ambient`]'s tables say writes such state, outside a
//! region pinned by a `body` fact (or, for a signal listener, with a
//! function neither pinned nor listed in `source.signal-listeners`),
//! escalates, naming the operation, the state and why it matters.

use crate::ambient::{CWD, ENV, SIGNALS, UMASK, Use, Writes, classify};
use crate::frontend::{Lang, Program};
use crate::ir::{Escalation, EscalationCode};
use crate::spec::FactKind;
use crate::ts::Node;
use fcd_model::effect::Anchor;

/// Escalates on the first operation of the closure that writes process-wide
/// state outside a region pinned by a `body` fact.
pub fn check(lang: Lang, program: &Program<'_, '_>) -> Result<(), Escalation> {
    let frontend = lang.frontend();
    let pinned: Vec<_> =
        program.regions.iter().filter(|r| program.facts.iter().any(|f| f.region == r.name && matches!(f.kind, FactKind::Body { .. }))).collect();
    for (file, syntax) in program.trees {
        let table = lang.for_file(file).ambient_table();
        for op in frontend.ambient(file, syntax) {
            let Some(entry) = classify(table, &op.what) else { continue };
            let reviewed = |n: Node<'_>| pinned.iter().any(|r| r.file == *file && r.node.contains(n));
            let listener = op.handler.filter(|_| entry.state == SIGNALS).map(|h| (h, fcd_model::canon::sha256(h.token_text().as_bytes())));
            if reviewed(op.node) || listener.as_ref().is_some_and(|(h, digest)| reviewed(*h) || program.env.signal_listeners.contains(digest)) {
                continue;
            }
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
                    "`{}` writes process-wide state: {how} ({}), and {why}; only a region the profile pins with a `body` fact may",
                    op.node.compact_text().chars().take(80).collect::<String>(),
                    entry.path
                ),
                Some(Anchor::new(file, op.node.line(), op.node.end_line(), op.node.text())),
            ));
        }
    }
    Ok(())
}
