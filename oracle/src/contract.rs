//! The oracle's own containment check of an effect in a contract.
//!
//! Written again on purpose, from DESIGN.md's definition of a contract, so a
//! mistake in the compiler's check shows up as a disagreement.

use serde_json::Value;

/// An effect as the oracle models it.
#[derive(Debug, Clone)]
pub struct Effect {
    pub op: String,
    pub resource: String,
    /// 0 none, 1 private, 2 public.
    pub exposure: u8,
    pub mutation: bool,
    pub write_scopes: Vec<String>,
}

/// The authenticated caller and the call's contract.
#[derive(Debug, Clone)]
pub struct Context {
    pub principal: String,
    pub destination: String,
    /// The authenticated configuration (`env.config`).
    pub config: Value,
    contract: Value,
}

fn level(name: &str) -> Option<u8> {
    ["none", "private", "public"].iter().position(|n| *n == name).map(|p| p as u8)
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array().map(|a| a.iter().filter_map(|s| s.as_str().map(str::to_owned)).collect()).unwrap_or_default()
}

/// `value` equals a prefix, or continues it after a `/`; `..` never passes.
fn inside(value: &str, prefixes: &[String]) -> bool {
    if value.split('/').any(|part| part == "..") {
        return false;
    }
    prefixes.iter().any(|p| {
        if p.is_empty() || value == p {
            return true;
        }
        match value.strip_prefix(p.as_str()) {
            Some(rest) => p.ends_with('/') || rest.starts_with('/'),
            None => false,
        }
    })
}

impl Context {
    pub fn from_canonical(doc: &Value) -> Result<Context, String> {
        let env = &doc["env"];
        Ok(Context {
            principal: env["principal"].as_str().ok_or("env.principal is missing")?.to_owned(),
            destination: env["destination"].as_str().ok_or("env.destination is missing")?.to_owned(),
            config: env["config"].clone(),
            contract: doc["contract"].clone(),
        })
    }

    /// The account name of the principal (`user:alice` -> `alice`).
    pub fn login(&self) -> &str {
        self.principal.split_once(':').map_or(&self.principal, |(_, l)| l)
    }

    /// The reasons the effects leave the contract; empty when they all fit.
    pub fn breaches(&self, effects: &[Effect]) -> Vec<String> {
        let c = &self.contract;
        let mut out = Vec::new();
        if c["principal"].as_str() != Some(self.principal.as_str()) {
            out.push(format!("the contract is not for {}", self.principal));
        }
        if !strings(&c["destinations"]).contains(&self.destination) {
            out.push(format!("destination {} is not in the contract", self.destination));
        }
        let max = c["max_exposure"].as_str().and_then(level).unwrap_or(0);
        for e in effects {
            if !strings(&c["allow"]).contains(&e.op) {
                out.push(format!("{} is not allowed", e.op));
            }
            if !inside(&e.resource, &strings(&c["resources"])) {
                out.push(format!("{} touches {} outside the contract", e.op, e.resource));
            }
            if e.exposure > max {
                out.push(format!("{} is more exposed than the contract allows", e.op));
            }
            if e.mutation && c["mutation"] != Value::Bool(true) {
                out.push(format!("{} mutates", e.op));
            }
            for s in &e.write_scopes {
                if !inside(s, &strings(&c["write_scopes"])) {
                    out.push(format!("{} writes {s} outside the contract", e.op));
                }
            }
        }
        out
    }
}
