//! Effect templates and test patterns, compiled once when a profile or a
//! summary is read, never again per decision.
//!
//! A [`Template`] is text with `{arg.NAME}`, `{env.PATH}` and `{CAPTURE}`
//! placeholders (`{a|b}`: the first alternative with a non-empty value;
//! `{{` and `}}` are literal braces). A [`Pattern`] is a regular expression.
//! Both serialize as the text they were written as, so summaries and their
//! digests are the same as if they were plain strings; reading one that does
//! not compile is an error, not a decision.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use regex::Regex;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// One piece of a template.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Text(String),
    /// A placeholder: its `|`-separated alternatives, in order.
    Slot(Vec<String>),
}

/// A parsed `{…}` template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    source: String,
    parts: Vec<Part>,
}

/// Why a template could not be filled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateGap(pub String);

impl FromStr for Template {
    type Err = String;

    fn from_str(source: &str) -> Result<Template, String> {
        let mut parts = Vec::new();
        let mut text = String::new();
        let mut rest = source;
        while let Some(i) = rest.find(['{', '}']) {
            text.push_str(&rest[..i]);
            let tail = &rest[i..];
            if let Some(t) = tail.strip_prefix("{{") {
                text.push('{');
                rest = t;
                continue;
            }
            if let Some(t) = tail.strip_prefix("}}") {
                text.push('}');
                rest = t;
                continue;
            }
            let Some(close) = tail.find('}').filter(|_| tail.starts_with('{')) else {
                return Err(format!("unbalanced brace in `{source}`"));
            };
            if !text.is_empty() {
                parts.push(Part::Text(std::mem::take(&mut text)));
            }
            parts.push(Part::Slot(tail[1..close].split('|').map(str::to_owned).collect()));
            rest = &tail[close + 1..];
        }
        text.push_str(rest);
        if !text.is_empty() {
            parts.push(Part::Text(text));
        }
        Ok(Template { source: source.to_owned(), parts })
    }
}

impl Template {
    /// The text the template was written as.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// Whether the template has no placeholder.
    pub fn is_fixed(&self) -> bool {
        self.parts.iter().all(|p| matches!(p, Part::Text(_)))
    }

    /// Every placeholder as written between the braces (`a|b` for alternatives).
    pub fn placeholders(&self) -> Vec<String> {
        self.parts
            .iter()
            .filter_map(|p| match p {
                Part::Slot(alternatives) => Some(alternatives.join("|")),
                Part::Text(_) => None,
            })
            .collect()
    }

    /// Fills the placeholders: `value` gives one alternative's value or why it has none.
    pub fn render(&self, value: &dyn Fn(&str) -> Result<String, TemplateGap>) -> Result<String, TemplateGap> {
        let mut out = String::with_capacity(self.source.len());
        for part in &self.parts {
            match part {
                Part::Text(t) => out.push_str(t),
                Part::Slot(alternatives) => {
                    let mut gap = None;
                    let found = alternatives.iter().find_map(|a| match value(a) {
                        Ok(v) if !v.is_empty() => Some(v),
                        Ok(_) => {
                            gap = Some(TemplateGap(format!("`{a}` is empty")));
                            None
                        }
                        Err(g) => {
                            gap = Some(g);
                            None
                        }
                    });
                    match found {
                        Some(v) => out.push_str(&v),
                        None => return Err(gap.unwrap_or_else(|| TemplateGap(format!("no value for `{{{}}}`", alternatives.join("|"))))),
                    }
                }
            }
        }
        Ok(out)
    }
}

impl fmt::Display for Template {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source)
    }
}

impl Serialize for Template {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.source)
    }
}

impl<'de> Deserialize<'de> for Template {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Template, D::Error> {
        String::deserialize(d)?.parse().map_err(serde::de::Error::custom)
    }
}

/// A regular expression, compiled once.
#[derive(Debug, Clone)]
pub struct Pattern {
    regex: Regex,
}

impl Pattern {
    pub fn new(source: &str) -> Result<Pattern, regex::Error> {
        Regex::new(source).map(|regex| Pattern { regex })
    }

    pub fn as_str(&self) -> &str {
        self.regex.as_str()
    }

    /// The names of its named groups.
    pub fn capture_names(&self) -> impl Iterator<Item = &str> {
        self.regex.capture_names().flatten()
    }

    /// The named groups of a match, or `None` when it does not match.
    pub fn captures(&self, text: &str) -> Option<BTreeMap<String, String>> {
        let caps = self.regex.captures(text)?;
        Some(self.capture_names().filter_map(|n| caps.name(n).map(|m| (n.to_owned(), m.as_str().to_owned()))).collect())
    }
}

impl PartialEq for Pattern {
    fn eq(&self, other: &Pattern) -> bool {
        self.as_str() == other.as_str()
    }
}

impl fmt::Display for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Pattern {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Pattern {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Pattern, D::Error> {
        let source = String::deserialize(d)?;
        Pattern::new(&source).map_err(|e| serde::de::Error::custom(format!("`{source}` is not a valid regular expression: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_parse_once_and_print_as_written() {
        let t: Template = "w {a|b} {{x}} {c}".parse().unwrap();
        assert_eq!(t.placeholders(), ["a|b", "c"]);
        assert_eq!(t.as_str(), "w {a|b} {{x}} {c}");
        let filled = t.render(&|k| if k == "a" { Ok(String::new()) } else { Ok(k.to_uppercase()) }).unwrap();
        assert_eq!(filled, "w B {x} C");
        assert!("{open".parse::<Template>().is_err());
        assert!("close}".parse::<Template>().is_err());
        assert!("plain".parse::<Template>().unwrap().is_fixed());
        assert_eq!(serde_json::to_string(&t).unwrap(), "\"w {a|b} {{x}} {c}\"");
    }

    #[test]
    fn patterns_compile_on_read_and_compare_by_text() {
        let p: Pattern = serde_json::from_str("\"^--output=(?P<path>.+)$\"").unwrap();
        assert_eq!(p.captures("--output=/x").unwrap()["path"], "/x");
        assert!(p.captures("x").is_none());
        assert!(serde_json::from_str::<Pattern>("\"(\"").is_err(), "a pattern that does not compile is refused when read");
        assert_eq!(p, Pattern::new("^--output=(?P<path>.+)$").unwrap());
    }
}
