//! What frontends emit besides the shared vocabulary of `fcd-model`
//! (anchors, facts, effects, re-exported here): callee identities, call
//! sites and escalations, which only the compiler sees.

use std::fmt;

use serde::{Deserialize, Serialize};

use fcd_model::effect::Anchor;

/// The resolved identity of a call site's callee.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(tag = "kind", content = "name", rename_all = "snake_case")]
pub enum Identity {
    /// A dotted path such as `git.Repo.git.diff`.
    Path(String),
    /// A name or attribute chain whose root has no known meaning (a local of
    /// unknown type, a parameter without annotation); the text is the source spelling.
    Unresolved(String),
    /// A callee whose target cannot be known statically (`getattr(o, n)()`, `eval`, …);
    /// the text says what it is.
    Dynamic(String),
}

/// One call inside a region.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CallSite {
    pub identity: Identity,
    pub anchor: Anchor,
    /// Inside a function the region defines (a nested `def`, a lambda): it
    /// runs when that function is called, not where it is written.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub deferred: bool,
}

/// Why registration must go to a human instead of producing a summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EscalationCode {
    RegionMissing,
    RegionAmbiguous,
    InventoryViolation,
    DynamicCallee,
    FactMissing,
    ShapeMismatch,
    ParseError,
}

impl EscalationCode {
    pub fn as_str(self) -> &'static str {
        match self {
            EscalationCode::RegionMissing => "region_missing",
            EscalationCode::RegionAmbiguous => "region_ambiguous",
            EscalationCode::InventoryViolation => "inventory_violation",
            EscalationCode::DynamicCallee => "dynamic_callee",
            EscalationCode::FactMissing => "fact_missing",
            EscalationCode::ShapeMismatch => "shape_mismatch",
            EscalationCode::ParseError => "parse_error",
        }
    }
}

impl fmt::Display for Identity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Identity::Path(p) => f.write_str(p),
            Identity::Unresolved(t) => write!(f, "{t} (unresolved)"),
            Identity::Dynamic(t) => write!(f, "{t} (dynamic)"),
        }
    }
}

impl fmt::Display for EscalationCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Release code a region calls that no region of the profile reads, as
/// `fcd debug region` shows it: how the profile covers it, and the code it
/// reaches (JavaScript, Go: the closure a `source.pinned-functions` digest binds).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReachedCode {
    pub region: String,
    /// The definition the call needs: `f`, `C.m`, `static C.m`, `C.constructor`
    /// (JavaScript); `pkg/utils.NewToolResultError` (Go, another package of the module).
    pub callee: String,
    /// Where the region calls it.
    pub call: Anchor,
    /// The call as resolved, then how the profile covers it (pinned, trusted by name, unread).
    pub covered: String,
    /// The digest of the code it reaches, or why it has none.
    pub digest: Result<String, String>,
    /// The definitions that code is made of, by name, with where each is.
    pub definitions: Vec<(String, Anchor)>,
}

/// A release whose source leaves the profile: data, not an error.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Escalation {
    pub code: EscalationCode,
    pub detail: String,
    pub anchor: Option<Anchor>,
    /// Whether it arose while facts were read, so every region was located
    /// and its surroundings accepted: how far the analysis got, for choosing
    /// the closest of several shapes. Not part of what is reported.
    #[serde(skip)]
    pub reading_facts: bool,
}

impl Escalation {
    pub fn new(code: EscalationCode, detail: impl Into<String>, anchor: Option<Anchor>) -> Escalation {
        Escalation { code, detail: detail.into(), anchor, reading_facts: false }
    }
}

impl fmt::Display for Escalation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.anchor {
            Some(a) => write!(f, "{}: {} ({a})", self.code, self.detail),
            None => write!(f, "{}: {}", self.code, self.detail),
        }
    }
}

/// One file of a release, as read from disk.
#[derive(Debug, Clone)]
pub struct SourceFile {
    /// Path relative to the release root, `/`-separated.
    pub path: String,
    pub bytes: Vec<u8>,
}
