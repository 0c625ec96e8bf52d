//! The summarizer: facts in, ordered first-match rules and a digest-bound summary out.
//!
//! A summary is a pure function of the profile bytes, the source closure, the
//! release identity and the configuration: no clock, no host, no map with a
//! random order. It is stored as RFC 8785 canonical JSON, and its digests
//! (profile, source closure, facts, rules, the whole summary) let a second
//! process or a later reader prove it was neither regenerated differently nor
//! edited.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::{Deserialize, Serialize};

use fcd_frontends::{Analysis, Anchor, Fact};

use crate::canon;
use crate::error::{InputError, text_of};
use crate::profile::{ArgSpec, Envelope, Profile};
use crate::rules::{Outcome, Predicate, Rule};
use crate::source::Closure;

/// The format tag of summaries this build reads and writes.
pub const FORMAT: &str = "fcd-summary/1";

/// Which profile a summary was compiled from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProfileRef {
    pub id: String,
    pub version: u32,
    pub digest: String,
}

/// A located region and the distinct callees it calls, for reviewers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegionSummary {
    pub name: String,
    pub anchor: Anchor,
    pub callees: Vec<String>,
}

/// A compiled, digest-bound summary of one handler path in one release.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Summary {
    pub format: String,
    pub compiler: String,
    pub profile: ProfileRef,
    pub language: String,
    pub tool: String,
    pub release: String,
    /// `sha256:` of the official artifact, when the registry published one.
    pub artifact_digest: Option<String>,
    /// `sha256:` of the registered configuration (canonical JSON; `{}` when none).
    pub config_digest: String,
    pub source: Closure,
    pub envelope: Envelope,
    pub arguments: BTreeMap<String, ArgSpec>,
    pub regions: Vec<RegionSummary>,
    pub facts: Vec<StoredFact>,
    pub facts_digest: String,
    pub rules: Vec<Rule>,
    pub rules_digest: String,
    /// Digest of everything above (the summary without this field).
    pub summary_digest: String,
}

/// A fact as stored in a summary (the frontends' [`Fact`], readable back).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StoredFact {
    pub name: String,
    pub kind: String,
    pub region: String,
    pub anchor: Anchor,
    pub values: BTreeMap<String, fcd_frontends::FactValue>,
}

impl From<Fact> for StoredFact {
    fn from(f: Fact) -> StoredFact {
        StoredFact { name: f.name, kind: f.kind, region: f.region, anchor: f.anchor, values: f.values }
    }
}

/// Release identity and configuration a summary is bound to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Binding {
    pub release: String,
    pub artifact_digest: Option<String>,
    pub config_digest: String,
}

/// The rule every summary ends with: what no reviewed rule covers is UNKNOWN.
pub fn catch_all() -> Rule {
    Rule { when: Predicate::Always, then: Outcome::Unknown("no rule of the profile covers this call".into()), facts: Vec::new(), note: None }
}

/// Compiles a summary from a profile, the analysis of a release and its binding.
pub fn compile(profile: &Profile, closure: Closure, analysis: Analysis, binding: Binding) -> Summary {
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
        .map(|t| t.rule.clone())
        .collect();
    rules.push(catch_all());
    let facts: Vec<StoredFact> = analysis.facts.into_iter().map(StoredFact::from).collect();
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

impl Summary {
    /// The digest of the summary without its `summary_digest` field.
    pub fn content_digest(&self) -> String {
        let mut value = serde_json::to_value(self).unwrap_or_default();
        if let Some(obj) = value.as_object_mut() {
            obj.remove("summary_digest");
        }
        canon::digest(&value)
    }

    /// The canonical bytes written to disk.
    pub fn to_canonical(&self) -> Vec<u8> {
        canon::to_canonical(self)
    }

    /// Every digest that does not match the content it covers, by name.
    pub fn integrity_problems(&self) -> Vec<String> {
        let mut problems = Vec::new();
        if self.facts_digest != canon::digest(&self.facts) {
            problems.push("facts_digest".to_owned());
        }
        if self.rules_digest != canon::digest(&self.rules) {
            problems.push("rules_digest".to_owned());
        }
        if self.source.digest != canon::digest(&self.source.files) {
            problems.push("source.digest".to_owned());
        }
        if self.summary_digest != self.content_digest() {
            problems.push("summary_digest".to_owned());
        }
        problems
    }

    /// Reads a summary and refuses one whose digests do not match its content.
    pub fn load(path: &Path) -> Result<Summary, InputError> {
        let bytes = std::fs::read(path).map_err(|e| InputError::new(path, format!("cannot read: {e}")))?;
        Summary::parse(path, bytes)
    }

    /// [`Summary::load`] of bytes already read; `path` names them in errors.
    pub fn parse(path: &Path, bytes: Vec<u8>) -> Result<Summary, InputError> {
        let text = text_of(path, bytes)?;
        let summary: Summary = serde_json::from_str(&text).map_err(|e| InputError::json(path, &e))?;
        if summary.format != FORMAT {
            return Err(InputError::new(path, format!("format `{}` is not `{FORMAT}`", summary.format)));
        }
        let problems = summary.integrity_problems();
        if !problems.is_empty() {
            return Err(InputError::new(
                path,
                format!("{} does not match the summary's content: the summary was altered after it was compiled", problems.join(", ")),
            ));
        }
        if summary.rules.last() != Some(&catch_all()) {
            return Err(InputError::new(path, "the rules do not end with the catch-all UNKNOWN rule"));
        }
        Ok(summary)
    }

    /// The named digests two summaries of the same inputs must share, in a fixed order.
    pub fn digests(&self) -> Vec<(&'static str, String)> {
        vec![
            ("profile", self.profile.digest.clone()),
            ("source", self.source.digest.clone()),
            ("config", self.config_digest.clone()),
            ("facts", self.facts_digest.clone()),
            ("rules", self.rules_digest.clone()),
            ("summary", self.summary_digest.clone()),
        ]
    }
}
