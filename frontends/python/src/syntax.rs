//! Python syntax the frontend reads without resolving a name: literals and
//! plain strings, f-string templates, what a decorator runs, and text clipped
//! for messages. Kept apart from name resolution ([`super::scope`]) and the
//! frontend's regions and facts, so that every module can read it.

use fcd_frontends::ts::Node;

/// What runs for a decorator: the decorator itself (`@X.tool(…)`, one call
/// site), and every call inside its arguments (`annotations=writes(…)`),
/// which runs when the decorated definition does.
pub(super) fn decorator_sites(decorator: Node<'_>) -> Vec<Node<'_>> {
    let top = decorator.named_children().find(|c| c.kind() != "comment");
    std::iter::once(decorator).chain(decorator.descendants().filter(|n| n.kind() == "call" && Some(*n) != top)).collect()
}

/// The first line of a text, at most 60 characters, for messages.
pub(super) fn clip(text: &str) -> String {
    let line = text.lines().next().unwrap_or_default();
    let mut out: String = line.chars().take(60).collect();
    if out.len() < text.len() {
        out.push('…');
    }
    out
}

/// The content of a plain string literal (no interpolation, no escapes), if it is one.
/// A Python literal a profile can spell: `True`, `False`, an integer, a plain string.
pub(super) fn literal(n: Node<'_>) -> Option<fcd_model::effect::FactValue> {
    match n.kind() {
        "true" => Some(fcd_model::effect::FactValue::Bool(true)),
        "false" => Some(fcd_model::effect::FactValue::Bool(false)),
        "integer" => n.text().replace('_', "").parse().ok().map(fcd_model::effect::FactValue::Int),
        _ => plain_string(n).map(fcd_model::effect::FactValue::Text),
    }
}

pub(super) fn plain_string(node: Node<'_>) -> Option<String> {
    string_text(node, false)
}

/// The template of an f-string whose holes are bare identifiers: `f"--u={n}"` -> `--u={n}`.
pub(super) fn format_template(node: Node<'_>) -> Option<String> {
    if node.kind() != "string" {
        return None;
    }
    let prefix = node.named_children().next().filter(|s| s.kind() == "string_start")?.text();
    if !prefix.to_ascii_lowercase().contains('f') {
        return None;
    }
    string_text(node, true)
}

/// A string literal's text without escapes; with `holes`, interpolations of
/// bare identifiers kept as `{name}`, otherwise none accepted.
fn string_text(node: Node<'_>, holes: bool) -> Option<String> {
    if node.kind() != "string" {
        return None;
    }
    let mut out = String::new();
    for part in node.named_children() {
        match part.kind() {
            "string_start" | "string_end" => {}
            "string_content" if !part.text().contains('\\') => out.push_str(part.text()),
            "interpolation" if holes => {
                let inner: Vec<Node<'_>> = part.named_children().collect();
                match inner.as_slice() {
                    [id] if id.kind() == "identifier" => {
                        out.push('{');
                        out.push_str(id.text());
                        out.push('}');
                    }
                    _ => return None,
                }
            }
            _ => return None,
        }
    }
    Some(out)
}
