//! `cargo xtask schemas`: the JSON Schemas of the files a profile author
//! writes, generated from the Rust types that read them (schemars) and
//! committed under `schemas/`, where editors find them (`.taplo.toml` for
//! the TOML files, `.vscode/settings.json` for canonical.json, which must
//! stay byte-identical to its shared copy and so cannot name its schema).
//!
//! A test checks that the committed schemas are the generated ones and that
//! every profile.toml, tests/*.toml, releases.toml and canonical.json in the
//! repository validates against its schema.

use std::path::Path;

use anyhow::{Context, Result};

/// Each schema's file name under `schemas/` and the schema.
pub fn all() -> Vec<(&'static str, serde_json::Value)> {
    vec![
        ("profile.schema.json", fcd_compiler::profile::json_schema()),
        ("tests.schema.json", fcd::profile_test::json_schema()),
        ("releases.schema.json", fcd::release::manifest::json_schema()),
        ("canonical.schema.json", fcd_verify::canonical_calls::json_schema()),
    ]
}

/// A schema as committed: pretty JSON and a final newline.
fn text(schema: &serde_json::Value) -> String {
    let mut text = serde_json::to_string_pretty(schema).unwrap_or_default();
    text.push('\n');
    text
}

/// Writes every schema into `root/schemas/`.
pub fn run(root: &Path) -> Result<bool> {
    let dir = root.join("schemas");
    std::fs::create_dir_all(&dir).with_context(|| format!("{}: cannot create", dir.display()))?;
    for (name, schema) in all() {
        let path = dir.join(name);
        std::fs::write(&path, text(&schema)).with_context(|| format!("{}: cannot write", path.display()))?;
        println!("wrote {}", path.display());
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use serde_json::Value;

    use super::*;

    /// Every file of the repository a schema describes, with its schema's name.
    fn described(root: &Path) -> Vec<(PathBuf, &'static str)> {
        let mut files = Vec::new();
        let mut dirs = vec![root.to_owned()];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())).filter_map(Result::ok) {
                let path = entry.path();
                let name = entry.file_name().to_string_lossy().into_owned();
                if path.is_dir() {
                    // Build outputs, caches and the fuzz corpora are not the repository's files.
                    if !(dir == root && ["target", ".git", ".cache", "fuzz"].contains(&name.as_str())) {
                        dirs.push(path);
                    }
                    continue;
                }
                let in_tests = dir.file_name().is_some_and(|d| d == "tests");
                // A profile's tests/ sits beside its profile.toml.
                let profile_tests = in_tests && dir.parent().is_some_and(|p| p.join("profile.toml").is_file());
                let schema = match name.as_str() {
                    "profile.toml" => "profile.schema.json",
                    "releases.toml" => "releases.schema.json",
                    "canonical.json" => "canonical.schema.json",
                    _ if profile_tests && name.ends_with(".toml") => "tests.schema.json",
                    _ => continue,
                };
                files.push((path, schema));
            }
        }
        files.sort();
        files
    }

    fn document(path: &Path) -> Value {
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        if path.extension().is_some_and(|e| e == "json") {
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        } else {
            let value: toml::Value = toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            serde_json::to_value(value).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        }
    }

    #[test]
    fn the_committed_schemas_are_the_generated_ones() {
        let dir = crate::workspace_root().join("schemas");
        for (name, schema) in all() {
            let committed = std::fs::read_to_string(dir.join(name)).unwrap_or_default();
            assert!(committed == text(&schema), "schemas/{name} is not what the types generate: run `cargo xtask schemas`");
        }
    }

    #[test]
    fn every_described_file_in_the_repository_validates() {
        let root = crate::workspace_root();
        let schemas: Vec<(&str, jsonschema::Validator)> =
            all().into_iter().map(|(name, schema)| (name, jsonschema::validator_for(&schema).unwrap_or_else(|e| panic!("{name}: {e}")))).collect();
        let files = described(root);
        let mut counts = std::collections::BTreeMap::new();
        for (path, name) in &files {
            let (_, validator) = schemas.iter().find(|(n, _)| n == name).expect("a schema by that name");
            let errors: Vec<String> = validator.iter_errors(&document(path)).map(|e| format!("{} at {}", e, e.instance_path)).collect();
            assert!(errors.is_empty(), "{} does not validate against schemas/{name}:\n{}", path.display(), errors.join("\n"));
            *counts.entry(*name).or_insert(0) += 1;
        }
        // Every kind of file is there: the walk found what it was meant to.
        for (name, _) in &schemas {
            assert!(counts.get(name).copied().unwrap_or(0) >= 4, "{name}: {counts:?}");
        }
        eprintln!("validated {} files: {counts:?}", files.len());
    }

    #[test]
    fn a_bad_file_does_not_validate() {
        let (_, schema) = all().into_iter().find(|(n, _)| *n == "profile.schema.json").expect("the profile schema");
        let validator = jsonschema::validator_for(&schema).expect("a valid schema");
        let path = crate::workspace_root().join("profiles/git-diff/profile.toml");
        let mut doc = document(&path);
        assert!(validator.is_valid(&doc));
        doc["facts"]["sink"]["calee"] = Value::from("x");
        assert!(!validator.is_valid(&doc), "an unknown fact key is refused");
        let mut doc = document(&path);
        doc["regions"]["handler"]["funtion"] = Value::from("x");
        assert!(!validator.is_valid(&doc), "an unknown region key is refused");
    }
}
