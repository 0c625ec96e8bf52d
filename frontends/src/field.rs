//! The `field` fact, written once for every language: what one member of an
//! object the handler builds receives, the variable an upstream fact follows
//! (a `default` fact's) or a literal.
//!
//! Which object, and what keeps its member as written until the sink, is the
//! language's answer through [`FieldShape`]: in Go, JavaScript and Python the
//! object is the sink's argument `arg` (a struct literal, an object literal,
//! a dict literal or a keyword argument), in C# the one member initializer of
//! the region. The rest (unwrapping, the variable or the literal, the values)
//! is here.

use std::collections::BTreeMap;

use crate::facts::{FactSite, upstream_variable};
use crate::frontend::Found;
use crate::ir::Escalation;
use crate::spec::FactKind;
use crate::ts::Node;
use fcd_model::effect::FactValue;

/// The member that sets the field: the node the fact anchors at, and the value it receives.
pub struct Member<'a> {
    pub element: Node<'a>,
    pub value: Node<'a>,
}

/// What a language answers for a `field` fact; [`extract`] does the rest.
pub trait FieldShape<'a> {
    /// The one member that sets `field` on the object the fact follows
    /// (the sink's argument `arg`, when the language needs a sink), once
    /// nothing else can change it before the sink; `None` when the object has
    /// no such member.
    fn member(&self, sink: Option<&Found<'a>>, arg: Option<usize>, field: &str) -> Result<Option<Member<'a>>, Escalation>;

    /// The value `wrap` holds: the argument of a call `wrap(VALUE)` (a value
    /// not so wrapped stays as it is), or in C# the nested initializer member `wrap`.
    fn unwrap(&self, member: &Member<'a>, field: &str, wrap: &str) -> Result<Node<'a>, Escalation>;

    /// Whether `value` is the upstream fact's `variable`, reaching the member
    /// only there (any other use escalates).
    fn is_variable(&self, value: Node<'a>, variable: &str) -> Result<bool, Escalation>;

    /// The literal `value` is, when it is one.
    fn literal(&self, value: Node<'a>) -> Option<FactValue>;

    /// Whether a member that receives neither the variable nor a literal
    /// states nothing when the upstream fact is absent (C#: the facts that
    /// imply the wiring report it) instead of escalating.
    fn absent_without_upstream(&self) -> bool {
        false
    }
}

/// The `field` fact `site` asks for, once its sink (when it names one) is found.
pub fn extract<'a, L: FieldShape<'a>>(lang: &L, site: &FactSite<'_, 'a>, found: &BTreeMap<String, Found<'a>>) -> Result<Option<Found<'a>>, Escalation> {
    let FactKind::Field { sink, arg, field, wrap, from } = &site.spec.kind else {
        return Err(site.mismatch(site.region.node, "not a field fact".into()));
    };
    let sink = match sink {
        Some(name) => match found.get(name) {
            Some(s) => Some(s),
            // Without the call it feeds, a field states nothing.
            None => return Ok(None),
        },
        None => None,
    };
    let Some(member) = lang.member(sink, *arg, field)? else { return Ok(None) };
    let value = match wrap {
        Some(w) => lang.unwrap(&member, field, w)?,
        None => member.value,
    };
    let upstream = found.get(from);
    let variable = upstream_variable(upstream);
    let mut values = BTreeMap::new();
    values.insert("field".into(), FactValue::Text(field.to_owned()));
    if !variable.is_empty() && lang.is_variable(value, &variable)? {
        values.insert("source".into(), FactValue::Text("argument".into()));
        values.insert("variable".into(), FactValue::Text(variable));
    } else if let Some(lit) = lang.literal(value) {
        values.insert("source".into(), FactValue::Text("literal".into()));
        values.insert("literal".into(), lit);
    } else if upstream.is_none() && lang.absent_without_upstream() {
        return Ok(None);
    } else {
        let neither = if variable.is_empty() { "not a literal".to_owned() } else { format!("neither `{variable}` nor a literal") };
        return Err(site.mismatch(value, format!("field `{field}` receives `{}`, {neither}", value.compact_text())));
    }
    Ok(Some(site.fact(member.element, values)))
}

/// The one member of a literal (`container`: "object", "dict") that sets
/// `field`, each member's plain key read by `key`: a member with no plain
/// key (`opaque` says what it may be) could set the field too, and a key set
/// twice is the last one's; both escalate.
pub fn keyed_member<'a>(
    site: &FactSite<'_, 'a>,
    members: impl Iterator<Item = Node<'a>>,
    key: impl Fn(Node<'a>) -> Option<String>,
    field: &str,
    container: &str,
    opaque: &str,
) -> Result<Option<Node<'a>>, Escalation> {
    let mut hits = Vec::new();
    for m in members.filter(|c| c.kind() != "comment") {
        match key(m) {
            Some(k) if k == field => hits.push(m),
            Some(_) => {}
            None => return Err(site.mismatch(m, format!("`{}` in the {container} could set `{field}` ({opaque})", m.compact_text()))),
        }
    }
    match hits.as_slice() {
        [] => Ok(None),
        [one] => Ok(Some(*one)),
        [_, second, ..] => Err(site.mismatch(*second, format!("`{field}` is set {} times in the {container} (the last one wins)", hits.len()))),
    }
}
