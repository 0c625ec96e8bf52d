//! SARIF 2.1.0 for code-scanning UIs: one run per profile, a result per
//! escalation pointing at its anchor in the release source, a result per
//! problem of the job, stable `partialFingerprints`, and the release, summary
//! and profile digests in the run properties.

use std::collections::BTreeMap;

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// What the report needs of one release.
pub struct ReleaseView {
    pub profile: String,
    pub release: String,
    pub root: String,
    pub summary_digest: Option<String>,
    pub profile_digest: Option<String>,
    pub artifact_digest: Option<String>,
    /// (code, detail, file, line)
    pub escalation: Option<(String, String, Option<String>, Option<u64>)>,
    pub problems: Vec<String>,
    pub skipped: bool,
}

const CODES: &[(&str, &str)] = &[
    ("region_missing", "A reviewed region is not in the release"),
    ("region_ambiguous", "A reviewed region is defined more than once"),
    ("inventory_violation", "A region calls something outside its reviewed inventory"),
    ("dynamic_callee", "A region calls something chosen at run time"),
    ("fact_missing", "A required fact is not in the release"),
    ("shape_mismatch", "The source has a shape the profile does not accept"),
    ("parse_error", "A selected file does not parse"),
    ("job_problem", "The release differs from what the job expects"),
];

fn fingerprint(parts: &[&str]) -> String {
    let digest = Sha256::digest(parts.join("\u{1f}").as_bytes());
    digest.iter().take(16).map(|b| format!("{b:02x}")).collect()
}

/// The SARIF log of a run of the release job.
pub fn log(releases: &[ReleaseView]) -> Value {
    let mut by_profile: BTreeMap<&str, Vec<&ReleaseView>> = BTreeMap::new();
    for r in releases {
        by_profile.entry(r.profile.as_str()).or_default().push(r);
    }
    let rules: Vec<Value> =
        CODES.iter().map(|(id, text)| json!({"id": id, "name": id, "shortDescription": {"text": text}, "defaultConfiguration": {"level": "error"}})).collect();
    let runs: Vec<Value> = by_profile
        .into_iter()
        .map(|(profile, views)| {
            let mut results = Vec::new();
            let mut bases = serde_json::Map::new();
            for v in &views {
                let base = format!("RELEASE_{}", v.release.to_ascii_uppercase().replace(['-', '.', '/'], "_"));
                if !v.root.is_empty() {
                    let uri = format!("file://{}/", v.root.trim_end_matches('/'));
                    bases.insert(base.clone(), json!({"uri": uri, "description": {"text": format!("the source of release {}", v.release)}}));
                }
                if let Some((code, detail, file, line)) = &v.escalation {
                    let mut location = json!({"physicalLocation": {"artifactLocation": {"uri": file.clone().unwrap_or_default(), "uriBaseId": base}}});
                    if let Some(l) = line {
                        location["physicalLocation"]["region"] = json!({"startLine": l});
                    }
                    results.push(json!({
                        "ruleId": code,
                        "level": "error",
                        "message": {"text": format!("{}: {detail}", v.release)},
                        "locations": if file.is_some() { json!([location]) } else { json!([]) },
                        "partialFingerprints": {"fcdEscalation/v1": fingerprint(&[profile, &v.release, code, file.as_deref().unwrap_or(""), detail])},
                        "properties": {"release": v.release},
                    }));
                }
                for p in &v.problems {
                    results.push(json!({
                        "ruleId": "job_problem",
                        "level": "error",
                        "message": {"text": format!("{}: {p}", v.release)},
                        "partialFingerprints": {"fcdJobProblem/v1": fingerprint(&[profile, &v.release, p])},
                        "properties": {"release": v.release},
                    }));
                }
            }
            let releases: Vec<Value> = views
                .iter()
                .map(|v| {
                    json!({
                        "release": v.release,
                        "summary_digest": v.summary_digest,
                        "profile_digest": v.profile_digest,
                        "artifact_digest": v.artifact_digest,
                        "run": !v.skipped,
                    })
                })
                .collect();
            json!({
                "tool": {"driver": {"name": "fcd", "version": env!("CARGO_PKG_VERSION"), "informationUri": "https://fcd.dev", "rules": rules}},
                "automationDetails": {"id": format!("fcd-releases/{profile}/")},
                "originalUriBaseIds": bases,
                "results": results,
                "properties": {"profile": profile, "releases": releases},
            })
        })
        .collect();
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": runs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(escalation: Option<(String, String, Option<String>, Option<u64>)>, problems: Vec<String>) -> ReleaseView {
        ReleaseView {
            profile: "git-diff".into(),
            release: "mcp-server-git-9.9.9".into(),
            root: "/tmp/release".into(),
            summary_digest: Some("sha256:ab".into()),
            profile_digest: Some("sha256:cd".into()),
            artifact_digest: None,
            escalation,
            problems,
            skipped: false,
        }
    }

    fn sample() -> Value {
        log(&[
            view(Some(("inventory_violation".into(), "calls `open`".into(), Some("src/mcp_server_git/server.py".into()), Some(12))), vec![]),
            view(None, vec!["call B: decision unsafe, canonical.json expects reject".into()]),
        ])
    }

    #[test]
    fn the_log_validates_against_the_sarif_2_1_0_schema() {
        let schema: Value = serde_json::from_str(include_str!("../tests/data/sarif-schema-2.1.0.json")).unwrap();
        let validator = jsonschema::draft4::new(&schema).expect("the OASIS schema compiles");
        let log = sample();
        let errors: Vec<String> = validator.iter_errors(&log).map(|e| format!("{} at {}", e, e.instance_path)).collect();
        assert!(errors.is_empty(), "{errors:#?}");
        // The validator is not vacuous: a log without `version` is refused.
        let mut broken = log.clone();
        broken.as_object_mut().unwrap().remove("version");
        assert!(!validator.is_valid(&broken));
    }

    #[test]
    fn escalations_point_at_their_anchor_with_stable_fingerprints() {
        let log = sample();
        let result = &log["runs"][0]["results"][0];
        assert_eq!(result["ruleId"], "inventory_violation");
        assert_eq!(result["locations"][0]["physicalLocation"]["region"]["startLine"], 12);
        assert_eq!(log["runs"][0]["automationDetails"]["id"], "fcd-releases/git-diff/");
        assert_eq!(result["partialFingerprints"], sample()["runs"][0]["results"][0]["partialFingerprints"]);
        assert_eq!(log["runs"][0]["properties"]["releases"][0]["summary_digest"], "sha256:ab");
    }
}
