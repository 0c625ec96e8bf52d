//! The languages fcd reads and the one interface every frontend implements.
//!
//! A frontend answers three questions about parsed source: where a reviewed
//! region is, which callees each of its call sites resolves to, and whether a
//! generic fact holds. Everything else (file discovery, counting regions,
//! inventories, summaries) is language-neutral and lives outside the trait.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use crate::ir::{Anchor, Escalation, EscalationCode, Fact, FactValue, Identity};
use crate::spec::{ArgPattern, FactSpec, RegionKind};
use crate::ts::{Node, Syntax};

/// A source language with a frontend.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Lang {
    Python,
    Go,
    CSharp,
    /// JavaScript; a profile in this language also reads `.ts` files as TypeScript.
    JavaScript,
    TypeScript,
}

impl Lang {
    pub const ALL: [Lang; 5] = [Lang::Python, Lang::Go, Lang::CSharp, Lang::JavaScript, Lang::TypeScript];

    /// The name profiles use for the language.
    pub fn name(self) -> &'static str {
        match self {
            Lang::Python => "python",
            Lang::Go => "go",
            Lang::CSharp => "csharp",
            Lang::JavaScript => "javascript",
            Lang::TypeScript => "typescript",
        }
    }

    pub fn from_name(name: &str) -> Option<Lang> {
        Lang::ALL.into_iter().find(|l| l.name() == name)
    }

    /// The frontend for this language.
    pub fn frontend(self) -> &'static dyn Frontend {
        match self {
            Lang::Python => &crate::python::Python,
            Lang::Go => &crate::go::Go,
            Lang::CSharp => &crate::csharp::CSharp,
            Lang::JavaScript | Lang::TypeScript => &crate::javascript::JavaScript,
        }
    }

    /// Whether a file of the release is source this language parses (an npm
    /// manifest is read as data, not parsed).
    pub fn parses(self, path: &str) -> bool {
        match self {
            Lang::JavaScript | Lang::TypeScript => [".js", ".mjs", ".cjs", ".ts", ".mts", ".cts", ".jsx", ".tsx"].iter().any(|e| path.ends_with(e)),
            _ => true,
        }
    }

    /// The grammar for one file of a release in this language: the JavaScript
    /// family reads an npm bundle (`.js`) and its TypeScript source (`.ts`) alike.
    pub fn for_file(self, path: &str) -> Lang {
        match self {
            Lang::JavaScript | Lang::TypeScript if path.ends_with(".ts") || path.ends_with(".mts") || path.ends_with(".cts") => {
                Lang::TypeScript
            }
            Lang::JavaScript | Lang::TypeScript => Lang::JavaScript,
            other => other,
        }
    }
}

impl fmt::Display for Lang {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One located region: the file it lives in and its syntax node.
#[derive(Clone, Copy)]
pub struct Region<'a> {
    pub name: &'a str,
    pub file: &'a str,
    pub node: Node<'a>,
    /// Every selected file of the release, for facts that resolve names
    /// across a package (a constant default, say).
    pub trees: &'a [(&'a str, &'a Syntax)],
}

impl<'a> Region<'a> {
    /// The anchor of any node of this region's file.
    pub fn anchor(&self, node: Node<'_>) -> Anchor {
        Anchor::new(self.file, node.line(), node.end_line(), node.text())
    }
}

/// A fact together with the node it was read from, so later facts (a guard
/// before a sink) can refer to it.
#[derive(Clone)]
pub struct Found<'a> {
    pub fact: Fact,
    pub node: Node<'a>,
}

/// What a language must provide. Kept small: two required methods for
/// structure, one per generic fact kind.
pub trait Frontend: Sync {
    /// Every node in `syntax` that the region kind names; counting them is the caller's job.
    fn find_regions<'a>(&self, syntax: &'a Syntax, kind: &RegionKind) -> Vec<Node<'a>>;

    /// Every call site inside the region, in source order, with its callee identity.
    fn calls<'a>(&self, region: &Region<'a>) -> Vec<(Node<'a>, Identity)>;

    /// Extracts one fact. `Ok(None)` means the source does not state it;
    /// `Err` means the source has a shape the profile does not accept.
    fn extract<'a>(
        &self,
        region: &Region<'a>,
        spec: &FactSpec,
        found: &BTreeMap<String, Found<'a>>,
    ) -> Result<Option<Found<'a>>, Escalation>;

    /// The paths the runtime loads, starting from the `entries` (`opaque`
    /// holds the source files that did not parse, with their text), or `None`
    /// when the language has no such notion: every selected file then counts.
    fn loaded(&self, _entries: &[String], _trees: &[(&str, &Syntax)], _opaque: &[(&str, &str)]) -> Result<Option<BTreeSet<String>>, Escalation> {
        Ok(None)
    }

    /// Checks every loaded file against what the located regions trust (a
    /// reviewed name reassigned elsewhere, say); the default trusts the regions alone.
    fn check_release(&self, _trees: &[(&str, &Syntax)], _opaque: &[(&str, &str)], _regions: &[Region<'_>]) -> Result<(), Escalation> {
        Ok(())
    }
}

/// Aligns call arguments with argument patterns, skipping optional patterns
/// that do not match; returns the patterns that matched (without their `?`).
/// Shared by every frontend so the meaning of a pattern list is one thing.
pub fn align<T>(args: &[T], patterns: &[ArgPattern], matches: &dyn Fn(&T, &ArgPattern) -> bool) -> Option<Vec<String>> {
    match (args.split_first(), patterns.split_first()) {
        (None, None) => Some(Vec::new()),
        (None, Some((p, rest))) => p.optional.then(|| align(args, rest, matches)).flatten(),
        (Some(_), None) => None,
        (Some((a, args_rest)), Some((p, rest))) => {
            if matches(a, p)
                && let Some(mut tail) = align(args_rest, rest, matches)
            {
                let mut shown = p.clone();
                shown.optional = false;
                tail.insert(0, shown.to_string());
                return Some(tail);
            }
            if p.optional { align(args, rest, matches) } else { None }
        }
    }
}

/// Builds the facts and escalations of one fact extraction, the same way in every frontend.
pub struct FactSite<'r, 'a> {
    pub region: &'r Region<'a>,
    pub spec: &'r FactSpec,
}

impl<'a> FactSite<'_, 'a> {
    /// A `shape_mismatch` naming the fact, anchored at `node`.
    pub fn mismatch(&self, node: Node<'_>, detail: String) -> Escalation {
        self.escalate(EscalationCode::ShapeMismatch, node, detail)
    }

    pub fn escalate(&self, code: EscalationCode, node: Node<'_>, detail: String) -> Escalation {
        Escalation::new(code, format!("fact `{}`: {detail}", self.spec.name), Some(self.region.anchor(node)))
    }

    /// The fact this extraction found at `node`.
    pub fn fact(&self, node: Node<'a>, values: BTreeMap<String, FactValue>) -> Found<'a> {
        Found {
            fact: Fact {
                name: self.spec.name.clone(),
                kind: self.spec.kind.name().to_owned(),
                region: self.region.name.to_owned(),
                anchor: self.region.anchor(node),
                values,
            },
            node,
        }
    }

    /// The one call a call fact accepts: none is no fact, two or more escalate.
    pub fn one_call(&self, calls: &[Node<'a>], callee: &str) -> Result<Option<Node<'a>>, Escalation> {
        match calls {
            [] => Ok(None),
            [one] => Ok(Some(*one)),
            [_, second, ..] => {
                let lines: Vec<String> = calls.iter().map(|c| c.line().to_string()).collect();
                Err(self.mismatch(
                    *second,
                    format!("{} calls to `{callee}` (lines {}); the profile accepts exactly one", calls.len(), lines.join(", ")),
                ))
            }
        }
    }
}
