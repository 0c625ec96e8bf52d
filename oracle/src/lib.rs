//! fcd-oracle: an independent judge of the canonical calls.
//!
//! From a release's source tree alone, it decides for each canonical call
//! whether the call is safe, unsafe, rejected by the handler, unknown, or
//! that it cannot judge. It shares nothing with the compiler: no tree-sitter,
//! no frontends, no profiles, facts, rules or templates, no code of `src/`.
//! It reads tokens ([`lex`]) and checks each profile's envelope, written from
//! its description, with its own containment check ([`contract`]). The
//! release job compares its verdicts with the compiler's; agreement between
//! two judges that share nothing is evidence, disagreement stops the release.

pub mod contract;
pub mod lex;

mod azure;
mod contents;
mod dbhub;
mod factory;
mod fetch;
mod files;
mod filesystem;
mod gist;
mod git_add;
mod git_diff;
mod git_route;
mod github;
mod js_tokens;
mod move_file;

use std::path::Path;

use serde::Serialize;
use serde_json::Value;

/// The oracle's verdict on one call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "verdict", content = "why")]
pub enum Verdict {
    Safe,
    Unsafe,
    Reject,
    Unknown,
    /// The source has a shape the oracle does not understand; never agreement.
    CannotJudge,
}

impl Verdict {
    pub fn as_str(&self) -> &'static str {
        match self {
            Verdict::Safe => "safe",
            Verdict::Unsafe => "unsafe",
            Verdict::Reject => "reject",
            Verdict::Unknown => "unknown",
            Verdict::CannotJudge => "cannot judge",
        }
    }
}

/// A verdict with the oracle's reason, in words.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Judgement {
    pub call: String,
    pub verdict: Verdict,
    pub explanation: String,
}

/// A profile's judge of one call's arguments, once the release was read.
type Model = dyn Fn(&serde_json::Map<String, Value>) -> (Verdict, String);

/// The profiles the oracle can judge.
pub const PROFILES: &[&str] = &[
    "git-diff",
    "git-add",
    "github-create-repository",
    "github-create-gist",
    "github-create-or-update-file",
    "azure-redis-create",
    "dbhub-execute-sql",
    "filesystem-write-file",
    "filesystem-move-file",
    "fetch",
];

/// Judges every call of a canonical-calls document (`../shared/canonical/<profile>.json`)
/// against the release rooted at `root`.
pub fn judge(profile: &str, root: &Path, canonical: &Value) -> Result<Vec<Judgement>, String> {
    let ctx = contract::Context::from_canonical(canonical)?;
    let calls = canonical["calls"].as_object().ok_or("the canonical document has no `calls` object")?;
    let model: Box<Model> = match profile {
        "git-diff" => {
            let shape = git_diff::read(root);
            Box::new(move |args| git_diff::verdict(&shape, args, &ctx))
        }
        "git-add" => {
            let shape = git_add::read(root);
            Box::new(move |args| git_add::verdict(&shape, args, &ctx))
        }
        "github-create-repository" => {
            let shape = github::read(root);
            Box::new(move |args| github::verdict(&shape, args, &ctx))
        }
        "github-create-gist" => {
            let shape = gist::read(root);
            Box::new(move |args| gist::verdict(&shape, args, &ctx))
        }
        "github-create-or-update-file" => {
            let shape = contents::read(root);
            Box::new(move |args| contents::verdict(&shape, args, &ctx))
        }
        "azure-redis-create" => {
            let shape = azure::read(root);
            Box::new(move |args| azure::verdict(&shape, args, &ctx))
        }
        "dbhub-execute-sql" => {
            let shape = dbhub::read(root);
            Box::new(move |args| dbhub::verdict(&shape, args, &ctx))
        }
        "filesystem-write-file" => {
            let shape = filesystem::read(root);
            Box::new(move |args| filesystem::verdict(&shape, args, &ctx))
        }
        "filesystem-move-file" => {
            let shape = move_file::read(root);
            Box::new(move |args| move_file::verdict(&shape, args, &ctx))
        }
        "fetch" => {
            let shape = fetch::read(root);
            Box::new(move |args| fetch::verdict(&shape, args, &ctx))
        }
        other => return Err(format!("the oracle has no judge for profile `{other}` (it judges: {})", PROFILES.join(", "))),
    };
    Ok(calls
        .iter()
        .map(|(name, call)| {
            let empty = serde_json::Map::new();
            let args = call["arguments"].as_object().unwrap_or(&empty);
            let (verdict, explanation) = model(args);
            Judgement { call: name.clone(), verdict, explanation }
        })
        .collect())
}
