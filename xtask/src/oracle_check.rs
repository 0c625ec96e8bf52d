//! `cargo xtask releases --oracle`: the compiler's decisions beside the
//! independent oracle's. Any disagreement, and any call the oracle cannot
//! judge, is a problem: agreement is only counted when both judged the same.

use std::path::Path;

use anyhow::{Context, Result};

use fcd_oracle::{Judgement, Verdict};

/// What the comparison found.
pub struct Report {
    /// One line for the table: `agrees (3/3)` or `DISAGREES on B, C`.
    pub summary: String,
    /// Side-by-side explanations of every disagreement or refusal.
    pub problems: Vec<String>,
}

/// Runs the oracle on a release root and compares with `(call, decision, why)` of the compiler.
/// A profile the oracle has no judge for is reported `unjudged`: no second
/// judge looked at it, which is neither agreement nor a disagreement.
pub fn run(profile: &str, profile_dir: &Path, root: &Path, decisions: &[(String, String, String)]) -> Result<Report> {
    if !fcd_oracle::PROFILES.contains(&profile) {
        return Ok(Report { summary: format!("unjudged (the oracle has no judge for {profile})"), problems: Vec::new() });
    }
    let path = profile_dir.join(fcd_verify::canonical_calls::FILE);
    let text = std::fs::read_to_string(&path).with_context(|| format!("{}: cannot read", path.display()))?;
    let canonical: serde_json::Value = serde_json::from_str(&text).with_context(|| format!("{}: not JSON", path.display()))?;
    let judgements = fcd_oracle::judge(profile, root, &canonical).map_err(anyhow::Error::msg)?;
    Ok(compare(decisions, &judgements))
}

/// Compares the two judges call by call.
pub fn compare(decisions: &[(String, String, String)], judgements: &[Judgement]) -> Report {
    let mut problems = Vec::new();
    let mut differing = Vec::new();
    for (call, decision, why) in decisions {
        let Some(j) = judgements.iter().find(|j| &j.call == call) else {
            problems.push(format!("oracle: no verdict for call {call}"));
            differing.push(call.clone());
            continue;
        };
        if j.verdict == Verdict::CannotJudge {
            problems.push(format!("oracle cannot judge call {call} (never counted as agreement): {}", j.explanation));
            differing.push(call.clone());
        } else if j.verdict.as_str() != decision {
            problems.push(format!(
                "call {call}: the judges disagree\n        compiler: {decision:<8} {why}\n        oracle:   {:<8} {}",
                j.verdict.as_str(),
                j.explanation
            ));
            differing.push(call.clone());
        }
    }
    let summary =
        if differing.is_empty() { format!("agrees ({}/{})", decisions.len(), decisions.len()) } else { format!("DISAGREES on {}", differing.join(", ")) };
    Report { summary, problems }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    use fcd_compiler::register::{Registration, Request, register};
    use fcd_verify::verdict::{check_call, decide};

    /// The compiler's decisions on a source tree, as the release job records them.
    fn compiler(profile_dir: &Path, source: &Path) -> Vec<(String, String, String)> {
        let profile = fcd_compiler::profile::Profile::load(profile_dir).unwrap();
        let request = Request { source: source.to_owned(), release: Some("test".into()), ..Request::default() };
        let Registration::Registered(summary) = register(&profile, &request).unwrap() else { panic!("escalated") };
        let path = profile_dir.join(fcd_verify::canonical_calls::FILE);
        let canonical = fcd_verify::canonical_calls::Canonical::load(&path).unwrap();
        canonical
            .calls
            .keys()
            .map(|name| {
                let call = canonical.call(name).unwrap();
                let input = fcd_verify::verdict::CallInput::new(call, &path);
                let d = decide(&check_call(&summary, &input).unwrap(), &canonical.env, &canonical.contract);
                (name.clone(), d.decision.as_str().to_owned(), format!("rule {:?}", d.matched_rule))
            })
            .collect()
    }

    fn root() -> PathBuf {
        crate::workspace_root().to_owned()
    }

    #[test]
    fn both_judges_agree_on_the_fixtures() {
        for (profile, fixture) in
            [("git-diff", "guarded"), ("git-diff", "unguarded"), ("github-create-repository", "default-true"), ("git-add", "index"), ("git-add", "cli")]
        {
            let dir = root().join("profiles").join(profile);
            let source = root().join("fixtures").join(profile).join(fixture);
            let report = run(profile, &dir, &source, &compiler(&dir, &source)).unwrap();
            assert!(report.problems.is_empty(), "{profile}/{fixture}: {:?}", report.problems);
            assert_eq!(report.summary, "agrees (3/3)");
        }
    }

    /// A guard spelled `"\x2d"`: the compiler only accepts plain literals, so it
    /// sees no guard and judges the unguarded way (wrong, but closed); the
    /// oracle decodes the escape and sees the guard. The job must stop.
    #[test]
    fn a_fixture_only_one_judge_gets_right_fails_with_a_side_by_side_report() {
        let dir = root().join("profiles/git-diff");
        let source = root().join("xtask/tests/fixtures/escaped-dash-guard");
        let report = run("git-diff", &dir, &source, &compiler(&dir, &source)).unwrap();
        assert_eq!(report.summary, "DISAGREES on B, C");
        assert_eq!(report.problems.len(), 2);
        let b = &report.problems[0];
        assert!(b.contains("call B: the judges disagree") && b.contains("compiler: unsafe") && b.contains("oracle:   reject"), "{b}");
    }

    /// A profile without a judge (git-diff's files under another id) is unjudged, never agreeing.
    #[test]
    fn a_profile_without_a_judge_is_unjudged() {
        let dir = root().join("profiles/git-diff");
        let source = root().join("fixtures/git-diff/guarded");
        let report = run("no-judge-for-this", &dir, &source, &compiler(&dir, &source)).unwrap();
        assert_eq!(report.summary, "unjudged (the oracle has no judge for no-judge-for-this)");
        assert!(report.problems.is_empty());
    }

    #[test]
    fn cannot_judge_is_never_agreement() {
        let judgements = vec![Judgement { call: "A".into(), verdict: Verdict::CannotJudge, explanation: "no sink".into() }];
        let report = compare(&[("A".into(), "safe".into(), "rule 3".into())], &judgements);
        assert_eq!(report.summary, "DISAGREES on A");
        assert!(report.problems[0].contains("cannot judge"));
    }
}
