//! The vocabulary shared by every stage: where something was read (an
//! anchor), what a source fact says, and the effect record a rule yields.
//!
//! Language-neutral on purpose: the frontends emit these, the summarizer
//! stores them, the verifier and runtime read them, and none of the latter
//! needs a parser to do so.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::canon;

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
        Anchor { file: file.to_owned(), line, end_line, hash: canon::sha256(text.as_bytes()) }
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema)]
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
