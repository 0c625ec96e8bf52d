//! The summarizer: facts in, ordered first-match rules and a digest-bound summary out.
//!
//! A summary is a pure function of the profile bytes, the source closure, the
//! release identity and the configuration: no clock, no host, no map with a
//! random order. It is stored as RFC 8785 canonical JSON, and its digests
//! (profile, source closure, facts, rules, the whole summary) let a second
//! process or a later reader prove it was neither regenerated differently nor
//! edited.

use std::collections::BTreeSet;

use fcd_frontends::Analysis;

use crate::profile::Profile;
use fcd_model::canon;
use fcd_model::rules::Rule;
use fcd_model::summary::{Closure, FORMAT, ProfileRef, RegionSummary, Summary, catch_all};

/// Release identity and configuration a summary is bound to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReleaseBinding {
    pub release: String,
    pub artifact_digest: Option<String>,
    pub config_digest: String,
}

/// Compiles a summary from a profile, the analysis of a release and its binding.
pub fn compile(profile: &Profile, closure: Closure, analysis: Analysis, binding: ReleaseBinding) -> Summary {
    let present: BTreeSet<&str> = analysis.facts.iter().map(|f| f.name.as_str()).collect();
    let mut rules: Vec<Rule> = profile
        .rules
        .iter()
        .filter(|t| t.requires.iter().all(|f| present.contains(f.as_str())))
        .filter(|t| t.unless.iter().all(|f| !present.contains(f.as_str())))
        .filter(|t| {
            t.fact_equals.iter().all(|(fact, key, want)| {
                analysis
                    .facts
                    .iter()
                    .find(|f| f.name == *fact)
                    .and_then(|f| f.values.get(key))
                    .is_some_and(|v| serde_json::to_value(v).ok().as_ref() == Some(want))
            })
        })
        .map(|t| crate::reject::checked(t, &analysis, &profile.no_effect))
        .collect();
    rules.push(catch_all());
    let facts = analysis.facts;
    let regions = analysis
        .regions
        .into_iter()
        .map(|r| RegionSummary {
            name: r.name,
            anchor: r.anchor,
            callees: r.calls.iter().map(|c| c.identity.to_string()).collect::<BTreeSet<_>>().into_iter().collect(),
        })
        .collect();
    let mut summary = Summary {
        format: FORMAT.into(),
        compiler: format!("fcd {}", env!("CARGO_PKG_VERSION")),
        profile: ProfileRef { id: profile.id.clone(), version: profile.version, digest: profile.digest.clone() },
        shape: profile.shape.clone(),
        language: profile.language.name().into(),
        tool: profile.tool.clone(),
        release: binding.release,
        artifact_digest: binding.artifact_digest,
        config_digest: binding.config_digest,
        source: closure,
        envelope: profile.envelope.clone(),
        arguments: profile.arguments.clone(),
        regions,
        facts_digest: canon::digest(&facts),
        facts,
        rules_digest: canon::digest(&rules),
        rules,
        summary_digest: String::new(),
    };
    summary.summary_digest = summary.content_digest();
    summary
}
