//! The `default` fact, written once for every language: how a tool argument
//! is read and what it is when the caller omits it.
//!
//! The construct is the same wherever it appears: one call names the
//! argument (by a string literal, or in C# by the definition that names it),
//! its result is bound to a variable, the callee is one of the profile's
//! reviewed helpers, and the helper's rule says what an omitted argument
//! becomes (the helper's zero value, or one of the call's own arguments, a
//! literal or a constant). What a language answers through [`DefaultShape`]
//! is syntax and binding: which calls read the argument and what variable
//! they bind, which other reads bypass every helper, that the variable and
//! the map the helper reads stay as the fact says, and what a literal is.

use std::collections::BTreeMap;

use crate::facts::{CallShape, FactSite, literal_text};
use crate::frontend::Found;
use crate::ir::{Escalation, Identity};
use crate::spec::{DefaultRule, FactKind};
use crate::ts::Node;
use fcd_model::effect::FactValue;

/// One read of the argument: the call and the variable its result is bound to.
pub struct Read<'a> {
    pub call: Node<'a>,
    /// The variable as the language spells it (`private`, `options.Public`).
    pub variable: String,
    /// The node that binds it.
    pub target: Node<'a>,
}

/// What a language answers for a `default` fact; [`extract`] does the rest.
pub trait DefaultShape<'a>: CallShape<'a> {
    /// A read of `argument` that bypasses every helper (`args["x"]`), when there is one: it escalates.
    fn direct_read(&self, argument: &str) -> Option<Node<'a>>;

    /// Every call naming `argument` whose result is bound to a variable.
    fn reads(&self, argument: &str) -> Vec<Read<'a>>;

    /// The identity a helper is reviewed under.
    fn helper_identity(&self, call: Node<'a>) -> Identity;

    /// The read holds: its variable is bound nowhere else, and what the helper
    /// reads (the argument map) reaches it unchanged; `helpers` are the
    /// reviewed helpers' identities (the only calls that may touch the map,
    /// where the language has no reviewed regions to say so).
    fn check_read(&self, read: &Read<'a>, helpers: &[&str]) -> Result<(), Escalation>;

    /// The default a helper's `arg:INDEX` rule names: argument `index` of
    /// `call`, a literal (or what the language lets stand for one, a constant),
    /// with where it was read.
    fn argument_default(&self, call: Node<'a>, index: usize, helper: &str) -> Result<(FactValue, String), Escalation>;

    /// A default declared elsewhere that overrides the helper's rule (C#: the
    /// option definition's own default), with where it was read.
    fn declared_default(&self, _call: Node<'a>) -> Result<Option<(FactValue, String)>, Escalation> {
        Ok(None)
    }
}

/// The `default` fact `site` asks for: the one read of its argument, by a reviewed helper.
pub fn extract<'a, L: DefaultShape<'a>>(lang: &L, site: &FactSite<'_, 'a>) -> Result<Option<Found<'a>>, Escalation> {
    let FactKind::Default { argument, helpers, .. } = &site.spec.kind else {
        return Err(site.mismatch(site.region.node, "not a default fact".into()));
    };
    if let Some(direct) = lang.direct_read(argument) {
        return Err(site.mismatch(direct, format!("argument `{argument}` is read directly (`{}`), not through a reviewed helper", direct.compact_text())));
    }
    let reads = lang.reads(argument);
    let read = match reads.as_slice() {
        [] => return Ok(None),
        [one] => one,
        [_, second, ..] => {
            return Err(site.mismatch(second.call, format!("argument `{argument}` is read {} times; the profile accepts one read", reads.len())));
        }
    };
    let (helper, rule) = reviewed_helper(site, read.call, lang.helper_identity(read.call), helpers, &format!("argument `{argument}` is read"))?;
    let reviewed: Vec<&str> = helpers.iter().map(|(h, _)| h.as_str()).collect();
    lang.check_read(read, &reviewed)?;
    let (mut value, mut source) = match rule {
        DefaultRule::Zero(text) => zero_default(site, read.call, text)?,
        DefaultRule::Arg(i) => lang.argument_default(read.call, *i, &helper)?,
    };
    if let Some((v, where_)) = lang.declared_default(read.call)? {
        value = v;
        source = where_;
    }
    Ok(Some(site.fact(read.call, values(argument, read.variable.clone(), helper, value, source))))
}

/// The values of a `default` fact.
fn values(argument: &str, variable: String, helper: String, default: FactValue, source: String) -> BTreeMap<String, FactValue> {
    let mut values = BTreeMap::new();
    values.insert("argument".into(), FactValue::Text(argument.to_owned()));
    values.insert("variable".into(), FactValue::Text(variable));
    values.insert("helper".into(), FactValue::Text(helper));
    values.insert("default".into(), default);
    values.insert("source".into(), FactValue::Text(source));
    values
}

/// The helper of a `default` fact and its reviewed rule: `identity` (of the
/// `call` that reads the argument) must be one of the profile's `helpers`.
/// `what` says how the argument reaches it ("argument `x` is read").
fn reviewed_helper<'h>(
    site: &FactSite<'_, '_>,
    call: Node<'_>,
    identity: Identity,
    helpers: &'h [(String, DefaultRule)],
    what: &str,
) -> Result<(String, &'h DefaultRule), Escalation> {
    let helper = match identity {
        Identity::Path(p) => p,
        other => return Err(site.mismatch(call, format!("{what} by `{other}`"))),
    };
    match helpers.iter().find(|(h, _)| *h == helper) {
        Some((_, rule)) => Ok((helper, rule)),
        None => {
            let known: Vec<&str> = helpers.iter().map(|(h, _)| h.as_str()).collect();
            Err(site.mismatch(call, format!("{what} by `{helper}`, not a reviewed helper ({})", known.join(", "))))
        }
    }
}

/// The default a helper's zero-value rule states, from the profile's spelling.
fn zero_default(site: &FactSite<'_, '_>, call: Node<'_>, text: &str) -> Result<(FactValue, String), Escalation> {
    match literal_text(text) {
        Some(v) => Ok((v, "zero value of the helper".to_owned())),
        None => Err(site.mismatch(call, format!("the profile's zero value `{text}` is not a literal"))),
    }
}
