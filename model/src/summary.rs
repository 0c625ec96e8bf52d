//! A summary: what one release's handler path does, as ordered first-match
//! rules bound by digests to the profile, source closure, facts and
//! configuration it was compiled from.
//!
//! The types and their integrity checks live here, with no parser behind
//! them, so that reading and checking a summary (the verifier, the runtime,
//! the registry) never needs the frontends. Compiling one is the compiler's.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::canon;
use crate::effect::{Anchor, Fact};
use crate::error::{InputError, text_of};
use crate::rules::{Outcome, Predicate, Rule, ValueType};

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
    /// The reviewed shape of the profile the release has, when the profile has several.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shape: Option<String>,
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
    pub facts: Vec<Fact>,
    pub facts_digest: String,
    pub rules: Vec<Rule>,
    pub rules_digest: String,
    /// Digest of everything above (the summary without this field).
    pub summary_digest: String,
}

/// One file of the closure and its digest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileDigest {
    pub path: String,
    pub digest: String,
}

/// The files a summary was computed from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Closure {
    /// Digest of `files` (canonical JSON).
    pub digest: String,
    pub files: Vec<FileDigest>,
}

impl Closure {
    /// The closure of `(path, bytes)` files, in the order given.
    pub fn of<'a>(files: impl IntoIterator<Item = (&'a str, &'a [u8])>) -> Closure {
        let files: Vec<FileDigest> = files.into_iter().map(|(path, bytes)| FileDigest { path: path.to_owned(), digest: canon::sha256(bytes) }).collect();
        Closure { digest: canon::digest(&files), files }
    }
}

/// The reviewed acceptance envelope, in words, carried into every summary.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Envelope {
    /// The source structure the profile accepts.
    pub structure: String,
    /// The argument domain it supports.
    pub arguments: String,
    /// The effects it models.
    pub effects: String,
    /// What it assumes about the world outside the source.
    pub assumptions: Vec<String>,
    /// When a call is UNKNOWN or rejected.
    pub unknown: String,
    /// Where the modeled effect ends.
    pub completeness: String,
}

/// One argument of the tool's input schema.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArgSpec {
    #[serde(rename = "type")]
    pub ty: ValueType,
    pub required: bool,
    /// The option parser the release hands this value to as command-line
    /// tokens, and the allowlist each token was checked with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<crate::command_line::Retokenized>,
}

/// The rule every summary ends with: what no reviewed rule covers is UNKNOWN.
pub fn catch_all() -> Rule {
    Rule { when: Predicate::Always, then: Outcome::Unknown("no rule of the profile covers this call".into()), facts: Vec::new(), note: None, source: None }
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
