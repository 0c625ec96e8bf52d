//! A call the gateway refused (its code one of fcd's shared
//! [`RefusalCode`]s), and the MCP error result the client reads:
//! `fcd refused this call: CODE: DETAIL` in words, and
//! `{"fcd": {"refused": CODE, "detail": DETAIL, …}}` as structured content,
//! so that both an agent and a program can tell why.

use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{Value, json};

use fcd_model::refusal::RefusalCode;
use fcd_runtime::runtime::Refusal;

/// A refusal: its code (docs/gateway.md lists them all), the detail in
/// words, and what else a program may want to read (the decision).
#[derive(Debug, Clone, PartialEq)]
pub struct Refused {
    pub code: RefusalCode,
    pub detail: String,
    pub extra: serde_json::Map<String, Value>,
}

impl Refused {
    pub fn new(code: RefusalCode, detail: impl Into<String>) -> Refused {
        Refused { code, detail: detail.into(), extra: serde_json::Map::new() }
    }

    /// The same refusal with `key` set in its structured content.
    pub fn with(mut self, key: &str, value: Value) -> Refused {
        self.extra.insert(key.to_owned(), value);
        self
    }

    /// The MCP error result the client receives.
    pub fn result(&self) -> CallToolResult {
        let mut r = CallToolResult::error(vec![ContentBlock::text(format!("fcd refused this call: {}: {}", self.code, self.detail))]);
        let mut fcd = serde_json::Map::new();
        fcd.insert("refused".into(), json!(self.code.as_str()));
        fcd.insert("detail".into(), json!(self.detail));
        fcd.extend(self.extra.clone());
        r.structured_content = Some(json!({ "fcd": fcd }));
        r
    }
}

impl From<&Refusal> for Refused {
    fn from(r: &Refusal) -> Refused {
        Refused::new(r.code, r.detail.clone())
    }
}
