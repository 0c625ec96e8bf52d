//! The dispatch table: which language crate reads a profile's language, what
//! its loader is given, and the settings only that language reads.
//!
//! `fcd-frontends`, the shared core, defines [`Lang`], the [`Frontend`]
//! trait and what a loader answers ([`Loaded`]); each language is a crate of
//! its own that depends on the core, so the core cannot name them. The table
//! that picks one lives here, in the stage that runs the frontends, and
//! nowhere else. What a language's loader reads of the profile is handed to
//! it here as plain data: the language crates never read a profile.

use std::path::Path;

use fcd_frontends::loader::Loaded;
use fcd_frontends::{Escalation, Frontend, Lang, LanguageSettings, SourceFile};
use fcd_model::error::InputError;

use crate::profile::Profile;

/// The frontend that reads `lang` (the JavaScript frontend reads TypeScript too).
pub fn frontend(lang: Lang) -> &'static dyn Frontend {
    match lang {
        Lang::Python => &fcd_frontend_python::Python,
        Lang::Go => &fcd_frontend_go::Go,
        Lang::CSharp => &fcd_frontend_csharp::CSharp,
        Lang::JavaScript | Lang::TypeScript => &fcd_frontend_javascript::JavaScript,
    }
}

/// Adds the files the profile names beyond its globs to the `selected` ones
/// (JavaScript: the npm manifest its entry points start from), before the
/// selection is judged and loaded.
pub fn named(root: &Path, profile: &Profile, selected: &mut Vec<SourceFile>) -> Result<Result<(), Escalation>, InputError> {
    match &profile.entry {
        Some(entry) => fcd_frontend_javascript::loader::read_manifests(root, entry, selected),
        None => Ok(Ok(())),
    }
}

/// What the runtime of the profile's language loads beyond the `selected`
/// files of the release at `root`, by that language's loader.
pub fn load(root: &Path, profile: &Profile, selected: &[SourceFile]) -> Result<Result<Loaded, Escalation>, InputError> {
    match profile.language {
        Lang::Python => fcd_frontend_python::loader::load(root, selected, &|f| profile.excluded.is_match(f), toml_data),
        Lang::Go => fcd_frontend_go::loader::load(root, selected),
        Lang::CSharp => fcd_frontend_csharp::loader::load(root, selected),
        // Node starts from what package.json names; the frontend follows its
        // imports from there once the files are parsed.
        Lang::JavaScript | Lang::TypeScript => Ok(fcd_frontend_javascript::loader::load(profile.entry.as_ref(), selected, profile.language)),
    }
}

/// What the profile says that only its language's frontend reads, in that
/// frontend's own settings type (the core carries it as [`LanguageSettings`]).
pub fn settings(profile: &Profile) -> LanguageSettings {
    match profile.language {
        Lang::Python => LanguageSettings::default(),
        Lang::Go => LanguageSettings::new(fcd_frontend_go::Settings {
            imports: profile.imports.clone(),
            handoff: profile.handoff.clone(),
            pinned_functions: profile.pinned_functions.clone(),
        }),
        Lang::CSharp => LanguageSettings::new(fcd_frontend_csharp::Settings { inert_attributes: profile.inert_attributes.clone() }),
        Lang::JavaScript | Lang::TypeScript => LanguageSettings::new(fcd_frontend_javascript::Settings {
            helpers: profile.helpers.clone(),
            read_only_callees: profile.read_only_callees.clone(),
            pinned_functions: profile.pinned_functions.clone(),
            unread_functions: profile.unread_functions.clone(),
            registration_wrappers: profile.registration_wrappers.clone(),
        }),
    }
}

/// A TOML document of a release (Python's `pyproject.toml`) as a data tree,
/// for a loader: no frontend parses TOML, so the compiler, which reads the
/// profiles' TOML, reads it for them. A date reads as null: no loader rule
/// reads one, and null answers every question a rule asks (no string, no
/// table, no array) as a date does.
fn toml_data(text: &str) -> Result<serde_json::Value, String> {
    let doc: toml::Table = toml::from_str(text).map_err(|e| e.message().to_owned())?;
    Ok(data(toml::Value::Table(doc)))
}

fn data(value: toml::Value) -> serde_json::Value {
    use serde_json::Value as Data;
    match value {
        toml::Value::String(s) => Data::String(s),
        toml::Value::Integer(i) => Data::from(i),
        toml::Value::Float(f) => serde_json::Number::from_f64(f).map_or(Data::Null, Data::Number),
        toml::Value::Boolean(b) => Data::Bool(b),
        toml::Value::Datetime(_) => Data::Null,
        toml::Value::Array(items) => Data::Array(items.into_iter().map(data).collect()),
        // In the table's own order (sorted keys), which a loader's first refusal follows.
        toml::Value::Table(table) => Data::Object(table.into_iter().map(|(k, v)| (k, data(v))).collect()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn toml_data_keeps_what_a_loader_reads() {
        let doc = toml_data("[project.scripts]\nb = \"pkg.cli:main\"\na = 1\nwhen = 1979-05-27\n[tool.x]\nlist = [\"p\", 2.5]\n").unwrap();
        let scripts = doc["project"]["scripts"].as_object().unwrap();
        assert_eq!(scripts.keys().collect::<Vec<_>>(), ["a", "b", "when"], "sorted, as the table iterates");
        assert_eq!(scripts["b"].as_str(), Some("pkg.cli:main"));
        assert!(scripts["when"].is_null() && doc.get("project").and_then(|p| p.get("scripts")).and_then(|s| s.get("when")).is_some());
        assert_eq!(doc["tool"]["x"]["list"][0].as_str(), Some("p"));
        assert!(!toml_data("[project\n").unwrap_err().is_empty(), "the parser's own message");
    }
}
