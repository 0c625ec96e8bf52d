//! What a frontend is asked to find: regions and fact specifications.
//!
//! The profile compiler (crate `fcd`) turns reviewed TOML into these plain
//! values; frontends never read TOML themselves. The vocabulary is generic on
//! purpose: a call with an argument shape, a guard that exits before a node.
//! Languages implement the vocabulary; profiles combine it.

use std::fmt;

/// A reviewed source span, by name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegionSpec {
    /// The profile's name for the region.
    pub name: String,
    pub kind: RegionKind,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RegionKind {
    /// A function (or method) definition with this name, anywhere in the files.
    Function(String),
}

impl fmt::Display for RegionKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RegionKind::Function(name) => write!(f, "function `{name}`"),
        }
    }
}

/// One expected argument of a call or a guard test.
///
/// Written in profiles as `param:NAME`, `str:TEXT` or `format:TEMPLATE`, with
/// a trailing `?` when the argument may be absent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgPattern {
    pub shape: ArgShape,
    pub optional: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArgShape {
    /// The region's parameter NAME, unchanged since entry.
    Param(String),
    /// A plain string literal with exactly this content.
    Str(String),
    /// A formatted string whose literal parts are the template's and whose
    /// holes (`{name}`) are exactly these identifiers.
    Format(String),
}

impl ArgPattern {
    /// Parses the profile spelling; the error says what is accepted.
    pub fn parse(text: &str) -> Result<ArgPattern, String> {
        let (body, optional) = match text.strip_suffix('?') {
            Some(b) => (b, true),
            None => (text, false),
        };
        let shape = if let Some(name) = body.strip_prefix("param:") {
            if name.is_empty() || !name.chars().all(|c| c.is_alphanumeric() || c == '_') {
                return Err(format!("`{text}`: a parameter name is letters, digits and `_`"));
            }
            ArgShape::Param(name.to_owned())
        } else if let Some(s) = body.strip_prefix("str:") {
            ArgShape::Str(s.to_owned())
        } else if let Some(t) = body.strip_prefix("format:") {
            ArgShape::Format(t.to_owned())
        } else {
            return Err(format!(
                "`{text}` is not an argument pattern: expected `param:NAME`, `str:TEXT` or `format:TEMPLATE`, optionally ending in `?`"
            ));
        };
        Ok(ArgPattern { shape, optional })
    }
}

impl fmt::Display for ArgPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.shape {
            ArgShape::Param(n) => write!(f, "param:{n}")?,
            ArgShape::Str(s) => write!(f, "str:{s}")?,
            ArgShape::Format(t) => write!(f, "format:{t}")?,
        }
        if self.optional {
            f.write_str("?")?;
        }
        Ok(())
    }
}

/// A fact to extract from one region.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FactSpec {
    /// The profile's name for the fact.
    pub name: String,
    pub region: String,
    pub kind: FactKind,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FactKind {
    /// Exactly one call to `callee` in the region, whose positional arguments
    /// match `args` and which takes no keyword or splat arguments.
    Call { callee: String, args: Vec<ArgPattern> },
    /// A conditional at the top level of the region whose test is a call to
    /// `callee` on `receiver` with `args`, whose body exits on every path, and
    /// which runs before the call fact `before`.
    Guard { callee: String, receiver: ArgPattern, args: Vec<ArgPattern>, before: String },
}

impl FactKind {
    /// The generic kind's name, as profiles spell it.
    pub fn name(&self) -> &'static str {
        match self {
            FactKind::Call { .. } => "call",
            FactKind::Guard { .. } => "guard",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arg_patterns_round_trip() {
        for text in ["param:target", "str:-", "format:--unified={n}?", "str:"] {
            assert_eq!(ArgPattern::parse(text).unwrap().to_string(), text);
        }
    }

    #[test]
    fn unknown_arg_pattern_says_what_is_accepted() {
        let err = ArgPattern::parse("literal:x").unwrap_err();
        assert!(err.contains("param:NAME"), "{err}");
        assert!(ArgPattern::parse("param:a b").is_err());
    }
}
