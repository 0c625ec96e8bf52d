//! The canonical calls of a profile (`../shared/canonical/<profile>.json`,
//! copied byte for byte to `profiles/<profile>/canonical.json`): the exact
//! calls, environment, contract and expected decision per regime that every
//! test, the demo and the release job judge.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

use crate::verdict::{Call, CallInput, Contract, Env, Verdict};
use fcd_model::error::{InputError, read_json};

/// The file name inside a profile directory.
pub const FILE: &str = "canonical.json";

#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Canonical {
    pub profile: String,
    pub tool: String,
    pub regimes: Vec<String>,
    #[serde(default)]
    pub notes: String,
    pub env: Env,
    pub contract: Contract,
    pub calls: BTreeMap<String, CanonicalCall>,
    /// The file it was read from: errors about its calls name it.
    #[serde(skip)]
    pub file: PathBuf,
}

#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CanonicalCall {
    pub arguments: serde_json::Map<String, Value>,
    /// Regime -> expected decision.
    pub expect: BTreeMap<String, Verdict>,
}

/// The JSON Schema of `canonical.json`.
pub fn json_schema() -> serde_json::Value {
    let mut schema = schemars::schema_for!(Canonical);
    schema.insert("title".into(), "fcd canonical calls (canonical.json)".into());
    schema.to_value()
}

impl Canonical {
    pub fn load(path: &Path) -> Result<Canonical, InputError> {
        let mut c: Canonical = read_json(path)?;
        c.file = path.to_owned();
        for (name, call) in &c.calls {
            for regime in call.expect.keys() {
                if !c.regimes.contains(regime) {
                    return Err(InputError::new(path, format!("call {name} expects regime `{regime}`, which `regimes` does not list")));
                }
            }
        }
        Ok(c)
    }

    /// The formed call named `name`.
    pub fn call(&self, name: &str) -> Option<Call> {
        self.calls.get(name).map(|c| Call { tool: self.tool.clone(), arguments: c.arguments.clone() })
    }

    /// The formed call named `name`, as input to [`crate::verdict::check_call`].
    pub fn input(&self, name: &str) -> Option<CallInput> {
        self.call(name).map(|call| CallInput::new(call, &self.file))
    }
}
