//! Argument values a release turns back into command-line tokens. Some
//! servers do not read a tool's JSON arguments themselves: they write each
//! one out as `--NAME VALUE` and hand the list to an option parser (the
//! Azure MCP server's System.CommandLine commands). That parser reads a
//! token by its own grammar, not by where it came from: a value
//! `--public-network-access=true`, an array element `--public-network-access`,
//! a response file `@FILE` or a lone `--` becomes an option or a directive of
//! its own, which the rules, reading the JSON argument, never see.
//!
//! So a profile names the parser of each argument it knows is
//! re-tokenized, and a call is decided only when every token the release
//! makes of such a value is a plain value by a closed allowlist: it starts
//! with an ASCII letter or digit and holds no whitespace or control
//! character, whatever options the command has. Anything else is UNKNOWN.
//! The summary records the parser and the allowlist each argument was
//! decided with.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The option parsers fcd reads re-tokenized arguments for.
pub const PARSERS: &[&str] = &["system-commandline"];

/// The allowlist every re-tokenized value is checked with, as the summary records it.
pub const PLAIN: &str = "each token starts with an ASCII letter or digit and holds no whitespace or control character";

/// How the release re-reads one argument: the parser and the allowlist.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Retokenized {
    /// The option parser the tokens go to (one of [`PARSERS`]).
    pub parser: String,
    /// What a token must be to be read as a plain value ([`PLAIN`]).
    pub plain: String,
}

impl Retokenized {
    /// The grammar of `parser`, when fcd knows it.
    pub fn of(parser: &str) -> Option<Retokenized> {
        PARSERS.contains(&parser).then(|| Retokenized { parser: parser.to_owned(), plain: PLAIN.to_owned() })
    }

    /// Whether every token the release makes of `value` is a plain value.
    /// A null is left out by the release (the option is absent); a boolean
    /// is `true` or `false`; a number its JSON text; a string itself; an
    /// array one token per element, each read the same way. An object, or
    /// an array inside an array, is no token fcd reads.
    pub fn check(&self, value: &Value) -> Result<(), String> {
        match value {
            Value::Null => Ok(()),
            Value::Array(items) => items.iter().enumerate().try_for_each(|(i, item)| match item {
                Value::Array(_) | Value::Object(_) => Err(format!("element {i} is not a single token")),
                Value::Null => Err(format!("element {i} is null, which the release writes as an empty token")),
                leaf => self.token(&leaf_text(leaf)).map_err(|why| format!("element {i} {why}")),
            }),
            Value::Object(_) => Err("an object is not a token the parser reads as a value".into()),
            leaf => self.token(&leaf_text(leaf)),
        }
    }

    fn token(&self, token: &str) -> Result<(), String> {
        let plain = token.chars().next().is_some_and(|c| c.is_ascii_alphanumeric()) && !token.chars().any(|c| c.is_whitespace() || c.is_control());
        if plain {
            return Ok(());
        }
        let shown: String = token.chars().take(60).collect();
        let what = match token.chars().next() {
            None => "is an empty token".to_owned(),
            Some('-') => format!("`{shown}` may be read by {} as an option, not a value", self.parser),
            Some('@') => format!("`{shown}` may be read by {} as a response file of more tokens", self.parser),
            Some('[') => format!("`{shown}` may be read by {} as a directive", self.parser),
            _ => format!("`{shown}` is outside the tokens fcd reads as plain values ({})", self.plain),
        };
        Err(what)
    }
}

/// The token text of a JSON boolean, number or string.
fn leaf_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn plain_values_pass_and_anything_the_parser_could_read_otherwise_does_not() {
        let g = Retokenized::of("system-commandline").unwrap();
        for ok in [json!("westus"), json!("rg-1"), json!("cache_1.a"), json!(true), json!(3), json!(["RedisJSON", "RediSearch"]), json!(null)] {
            assert_eq!(g.check(&ok), Ok(()), "{ok}");
        }
        for (bad, why) in [
            (json!("--public-network-access=true"), "as an option"),
            (json!(["RedisJSON", "--public-network-access"]), "element 1 `--public-network-access` may be read"),
            (json!("-x"), "as an option"),
            (json!("--"), "as an option"),
            (json!(-1), "as an option"),
            (json!("@args.rsp"), "response file"),
            (json!("[diagram]"), "directive"),
            (json!(""), "empty token"),
            (json!("west us"), "outside the tokens"),
            (json!("west\tus"), "outside the tokens"),
            (json!("\u{2014}public"), "outside the tokens"),
            (json!({"a": 1}), "object"),
            (json!([["a"]]), "not a single token"),
            (json!([null]), "empty token"),
        ] {
            let e = g.check(&bad).unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
        }
        assert_eq!(Retokenized::of("getopt"), None, "only parsers fcd reads");
    }
}
