//! The common IR every frontend emits: anchors, callees, source facts,
//! escalations and the effect record.
//!
//! These types are language-neutral on purpose: the summarizer, the verifier
//! and the runtime only ever see this module's vocabulary, so a new language
//! adds a frontend and nothing downstream changes.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// Where a fact, region or escalation comes from: file, line span and a hash
/// of the anchored text, so a reviewer can find it and a verifier can notice
/// when the text under it changed.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Anchor {
    /// Path relative to the release root, `/`-separated.
    pub file: String,
    /// 1-based first line.
    pub line: u32,
    /// 1-based last line.
    pub end_line: u32,
    /// `sha256:` of the anchored source text.
    pub hash: String,
}

impl Anchor {
    pub fn new(file: &str, line: u32, end_line: u32, text: &str) -> Anchor {
        Anchor { file: file.to_owned(), line, end_line, hash: sha256_text(text) }
    }

    /// An anchor for a whole file or a point where no node exists (a parse error).
    pub fn at_line(file: &str, line: u32) -> Anchor {
        Anchor { file: file.to_owned(), line, end_line: line, hash: String::new() }
    }
}

impl fmt::Display for Anchor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

/// `sha256:HEX` of a text.
pub fn sha256_text(text: &str) -> String {
    let digest = Sha256::digest(text.as_bytes());
    let mut out = String::with_capacity(7 + 64);
    out.push_str("sha256:");
    for b in digest.iter() {
        out.push(char::from_digit((b >> 4) as u32, 16).unwrap_or('0'));
        out.push(char::from_digit((b & 15) as u32, 16).unwrap_or('0'));
    }
    out
}

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
}

/// Why registration must go to a human instead of producing a summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EscalationCode {
    RegionMissing,
    RegionAmbiguous,
    InventoryViolation,
    DynamicCallee,
    FactMissing,
    ShapeMismatch,
    ParseError,
    /// A construct of the language's build or loader (a Go build constraint, a
    /// `replace` in go.mod, a vendor directory) that decides which code is
    /// compiled and that the frontend does not interpret.
    LoaderConstruct,
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
            EscalationCode::LoaderConstruct => "loader_construct",
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

/// A release whose source leaves the profile: data, not an error.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Escalation {
    pub code: EscalationCode,
    pub detail: String,
    pub anchor: Option<Anchor>,
}

impl Escalation {
    pub fn new(code: EscalationCode, detail: impl Into<String>, anchor: Option<Anchor>) -> Escalation {
        Escalation { code, detail: detail.into(), anchor }
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

/// A value a fact records: what the summarizer may substitute into rule templates.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(untagged)]
pub enum FactValue {
    Bool(bool),
    Int(i64),
    Text(String),
    List(Vec<FactValue>),
}

/// A typed statement about the source, anchored where it was read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Fact {
    /// The profile's name for the fact.
    pub name: String,
    /// The generic fact kind (`call`, `guard`, …).
    pub kind: String,
    /// The region it was found in.
    pub region: String,
    pub anchor: Anchor,
    /// What the fact says, by key, in a fixed order.
    pub values: BTreeMap<String, FactValue>,
}

/// Exposure of an effect's result, ordered `none < private < public`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Exposure {
    None,
    Private,
    Public,
}

impl Exposure {
    pub fn parse(s: &str) -> Option<Exposure> {
        match s {
            "none" => Some(Exposure::None),
            "private" => Some(Exposure::Private),
            "public" => Some(Exposure::Public),
            _ => None,
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Exposure::None => "none",
            Exposure::Private => "private",
            Exposure::Public => "public",
        }
    }
}

/// The common effect record: what one handler path does to the world.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Effect {
    pub domain: String,
    pub operation: String,
    pub principal: String,
    pub destination: String,
    pub resource: String,
    pub exposure: Exposure,
    pub mutation: bool,
    pub write_scopes: Vec<String>,
}
