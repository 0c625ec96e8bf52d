//! A `reject` claims the handler refused the call and nothing happened. That
//! holds only when nothing with an effect runs before the refusal: a log
//! written, a file touched or a request sent beside the check has happened
//! by the time the handler refuses. So when a summary is compiled, every call
//! of the refusing region that starts at or before the end of the refusing
//! fact (the guard's `if`, or the fact `refused-at` names) must be one the
//! profile reviewed as having no effect (`inventory.REGION.no-effect`);
//! otherwise the rule decides UNKNOWN, naming the call, and no certificate
//! says "rejected, no effect" for it.
//!
//! Source order stands for "runs before": a call on the guard's own lines
//! counts as before it, which only ever turns a reject into UNKNOWN. A call
//! inside a function the region defines (a nested `def`, a lambda) runs when
//! that function is called, not where it is written, and is left out.

use std::collections::{BTreeMap, BTreeSet};

use fcd_frontends::Analysis;
use fcd_model::rules::{Outcome, Rule};

use crate::profile::RuleTemplate;

/// The template's rule as the summary keeps it: a `reject` stays one only
/// when every call before the refusal has no effect by the profile's review.
pub fn checked(template: &RuleTemplate, analysis: &Analysis, no_effect: &BTreeMap<String, BTreeSet<String>>) -> Rule {
    let rule = template.rule.clone();
    let Outcome::Reject(code) = &rule.then else { return rule };
    match before_refusal(template, analysis, no_effect) {
        Ok(()) => rule,
        Err(why) => Rule { then: Outcome::Unknown(format!("{code}: {why}")), ..rule },
    }
}

/// `Ok` when every call of the refusing region up to the refusal is reviewed as having no effect.
fn before_refusal(template: &RuleTemplate, analysis: &Analysis, no_effect: &BTreeMap<String, BTreeSet<String>>) -> Result<(), String> {
    let found = |name: &str| analysis.facts.iter().find(|f| f.name == name);
    let refusal = match &template.refused_at {
        Some(name) => found(name),
        None => template.requires.iter().filter_map(|name| found(name)).find(|f| f.kind == "guard"),
    }
    .ok_or("the handler refuses at a fact the release does not have, so what runs before it is not known")?;
    let region =
        analysis.regions.iter().find(|r| r.name == refusal.region).ok_or_else(|| format!("the refusing region `{}` is not in the release", refusal.region))?;
    let reviewed = no_effect.get(&refusal.region);
    for call in &region.calls {
        let at = &call.anchor;
        // A call in a function the region defines runs when that is called:
        // what such a function does is reviewed where it is installed or called.
        if call.deferred || at.file != refusal.anchor.file || at.line > refusal.anchor.end_line {
            continue;
        }
        let callee = call.identity.to_string();
        if !reviewed.is_some_and(|r| r.contains(&callee)) {
            return Err(format!(
                "the handler refuses only after `{callee}` ({}:{}) may have run, which the profile does not review as having no effect \
                 (inventory.{}.no-effect): the refusal does not mean nothing happened",
                at.file, at.line, refusal.region
            ));
        }
    }
    Ok(())
}
