//! `fcd profile test DIR`: a profile against its fixtures, as `sg test` and
//! `semgrep --test` run rules against theirs.
//!
//! `DIR/tests/*.toml` declare cases: a fixture source tree and what must come
//! of it (registered with a regime whose canonical decisions must hold,
//! registered with the same rules as another case, or escalated with a code).
//! Every mismatch is reported with what was expected and what came.
//!
//! A case's tree is either a fixture directory (`source`) or a base fixture
//! with declared edits (`base` + `[[case.edit]]`, see [`crate::edits`]),
//! materialized into a temporary directory for the run. A case may also state
//! the `truth`: the decision each canonical call really has on that source,
//! established by reading or running it. Whatever registration gives, a
//! certificate (`safe`) for a call whose truth is not `safe` fails the case.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use fcd_compiler::profile::Profile;
use fcd_compiler::register::{Registration, Request, register};
use fcd_edits::Edit;
use fcd_model::error::{InputError, read_text};
use fcd_model::summary::Summary;
use fcd_verify::canonical_calls::{self, Canonical};
use fcd_verify::verdict::{Call, CallInput, Verdict, check_call, decide};

/// `tests/*.toml`: a profile's fixture cases for `fcd profile test`.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct CaseFile {
    #[serde(rename = "case")]
    cases: Vec<Case>,
}

/// One declared case of a profile's tests.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Case {
    pub name: String,
    /// Release root of the fixture, relative to the case file.
    source: Option<PathBuf>,
    /// A base release root, relative to the case file, that `edit` changes.
    base: Option<PathBuf>,
    #[serde(default)]
    edit: Vec<Edit>,
    #[serde(default)]
    pub description: String,
    /// The regime whose canonical decisions must hold.
    regime: Option<String>,
    /// The escalation code registration must give.
    escalate: Option<String>,
    /// Another case whose rules this one must reproduce exactly.
    same_rules_as: Option<String>,
    /// Further calls with their expected decisions.
    #[serde(default)]
    calls: Vec<RawCall>,
    /// The true decision of canonical calls on this source: no certificate
    /// may be issued for a call whose truth is not `safe`.
    #[serde(default)]
    pub truth: BTreeMap<String, Verdict>,
    /// The case file that declares this case (set when loaded).
    #[serde(skip)]
    pub file: PathBuf,
}

/// A case's release root on disk; a temporary tree lives as long as this value.
pub struct Root {
    pub path: PathBuf,
    _tmp: Option<tempfile::TempDir>,
}

impl Case {
    /// The regime whose canonical decisions this case must get, if it names one.
    pub fn regime(&self) -> Option<&str> {
        self.regime.as_deref()
    }

    /// The release root this case registers: its fixture directory, or its
    /// base with the declared edits applied in a temporary directory.
    pub fn root(&self) -> Result<Root, InputError> {
        let dir = self.file.parent().unwrap_or(Path::new("."));
        let err = |m: &str| InputError::new(&self.file, format!("case `{}`: {m}", self.name));
        match (&self.source, &self.base) {
            (Some(source), None) if self.edit.is_empty() => Ok(Root { path: dir.join(source), _tmp: None }),
            (None, Some(base)) => {
                let tmp = tempfile::tempdir().map_err(|e| err(&format!("cannot create a temporary directory: {e}")))?;
                let path = tmp.path().join("release");
                std::fs::create_dir(&path).map_err(|e| err(&e.to_string()))?;
                fcd_edits::materialize(&dir.join(base), &self.edit, &path).map_err(|m| err(&m))?;
                Ok(Root { path, _tmp: Some(tmp) })
            }
            (Some(_), None) => Err(err("edits need a `base`, not a `source`")),
            _ => Err(err("give exactly one of `source` (a fixture directory) and `base` (with `[[case.edit]]`)")),
        }
    }
}

impl Case {
    /// Writes this case's release tree into `dest` (which must not exist):
    /// a copy of its fixture, or its base with the declared edits applied.
    pub fn materialize_into(&self, dest: &Path) -> Result<(), InputError> {
        let dir = self.file.parent().unwrap_or(Path::new("."));
        let err = |m: String| InputError::new(&self.file, format!("case `{}`: {m}", self.name));
        let (base, edits): (&Path, &[Edit]) = match (&self.source, &self.base) {
            (Some(source), None) if self.edit.is_empty() => (source, &[]),
            (None, Some(base)) => (base, &self.edit),
            _ => return Err(err("give exactly one of `source` (a fixture directory) and `base` (with `[[case.edit]]`)".into())),
        };
        std::fs::create_dir_all(dest).map_err(|e| err(format!("{}: {e}", dest.display())))?;
        fcd_edits::materialize(&dir.join(base), edits, dest).map_err(err)
    }
}

/// The JSON Schema of `tests/*.toml`.
pub fn json_schema() -> serde_json::Value {
    let mut schema = schemars::schema_for!(CaseFile);
    schema.insert("title".into(), "fcd profile test cases (tests/*.toml)".into());
    schema.to_value()
}

/// Every case declared in `DIR/tests/*.toml`, in file then declaration order.
pub fn load_cases(dir: &Path) -> Result<Vec<Case>, InputError> {
    let tests = dir.join("tests");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&tests)
        .map_err(|e| InputError::new(&tests, format!("cannot list the profile's tests: {e}")))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    let mut cases = Vec::new();
    for file in files {
        let text = read_text(&file)?;
        let parsed: CaseFile = toml::from_str(&text).map_err(|e| match e.span() {
            Some(s) => InputError::at_offset(&file, &text, s.start, e.message().trim_end()),
            None => InputError::new(&file, e.message().trim_end()),
        })?;
        for mut case in parsed.cases {
            case.file = file.clone();
            cases.push(case);
        }
    }
    if cases.is_empty() {
        return Err(InputError::new(&tests, "declares no case: a profile is tested by its fixtures"));
    }
    Ok(cases)
}

/// A further call and its expected decision.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct RawCall {
    name: String,
    #[schemars(with = "serde_json::Map<String, serde_json::Value>")]
    arguments: toml::Table,
    expect: Verdict,
}

/// One comparison of a case.
#[derive(Debug, Clone, Serialize)]
pub struct Check {
    pub what: String,
    pub expected: String,
    pub actual: String,
    pub ok: bool,
}

impl Check {
    /// Whether this check is a call's decision (canonical or declared).
    pub fn is_decision(&self) -> bool {
        self.what.starts_with("canonical call ") || self.what.starts_with("call ")
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct CaseReport {
    pub file: String,
    pub name: String,
    pub description: String,
    pub outcome: String,
    pub checks: Vec<Check>,
}

impl CaseReport {
    pub fn passed(&self) -> bool {
        self.checks.iter().all(|c| c.ok)
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub profile: String,
    pub cases: Vec<CaseReport>,
}

impl Report {
    pub fn passed(&self) -> bool {
        self.cases.iter().all(CaseReport::passed)
    }

    pub fn to_text(&self) -> String {
        self.text(false)
    }

    /// The report as text; with `failures_only`, the counts and the failed
    /// cases alone.
    pub fn text(&self, failures_only: bool) -> String {
        let failed = self.cases.iter().filter(|c| !c.passed()).count();
        let mut t = String::new();
        let _ = writeln!(t, "profile {}: {} cases, {} passed, {} failed", self.profile, self.cases.len(), self.cases.len() - failed, failed);
        for c in self.cases.iter().filter(|c| !failures_only || !c.passed()) {
            let _ = writeln!(t, "  {:<5} {:<28} {} ({})", if c.passed() { "ok" } else { "FAIL" }, c.name, c.outcome, c.file);
            // Every decision is shown, so an author sees which rule answered
            // each call; a failed check adds what was expected.
            for check in &c.checks {
                if check.ok {
                    if check.is_decision() {
                        let _ = writeln!(t, "        {}: {}", check.what, check.actual);
                    }
                    continue;
                }
                let _ = writeln!(t, "        {}:", check.what);
                let _ = writeln!(t, "          - expected {}", check.expected);
                let _ = writeln!(t, "          + got      {}", check.actual);
            }
        }
        t
    }
}

/// Runs every case file of a profile directory.
pub fn run(dir: &Path) -> Result<Report, InputError> {
    run_cases(dir, &[])
}

/// Runs the named cases of a profile directory (every case when `only` is
/// empty), and the cases they compare their rules with (`same-rules-as`).
/// A name no case has is an error that lists the cases.
pub fn run_cases(dir: &Path, only: &[String]) -> Result<Report, InputError> {
    let profile = Profile::load(dir)?;
    let profile_dir = profile.path.parent().unwrap_or(Path::new(".")).to_owned();
    let canonical_path = profile_dir.join(canonical_calls::FILE);
    let canonical = Canonical::load(&canonical_path)?;
    let cases = load_cases(&profile_dir)?;
    let mut wanted: BTreeSet<String> = only.iter().cloned().collect();
    for name in &wanted {
        if !cases.iter().any(|c| c.name == *name) {
            let names: Vec<&str> = cases.iter().map(|c| c.name.as_str()).collect();
            let hint = fcd_compiler::profile::did_you_mean(name, names.iter().copied());
            return Err(InputError::new(&profile_dir, format!("no case `{name}`{hint} (cases: {})", names.join(", "))));
        }
    }
    // A case compared with another needs that one to run first.
    loop {
        let needed: Vec<String> =
            cases.iter().filter(|c| wanted.contains(&c.name)).filter_map(|c| c.same_rules_as.clone()).filter(|n| !wanted.contains(n)).collect();
        if needed.is_empty() {
            break;
        }
        wanted.extend(needed);
    }
    let mut summaries: BTreeMap<String, Summary> = BTreeMap::new();
    let mut reports = Vec::new();
    for case in cases.into_iter().filter(|c| wanted.is_empty() || wanted.contains(&c.name)) {
        reports.push(run_case(&profile, &canonical, &canonical_path, case, &mut summaries)?);
    }
    Ok(Report { profile: profile.id, cases: reports })
}

fn run_case(
    profile: &Profile,
    canonical: &Canonical,
    canonical_path: &Path,
    case: Case,
    summaries: &mut BTreeMap<String, Summary>,
) -> Result<CaseReport, InputError> {
    let file = case.file.as_path();
    let root = case.root()?;
    // The canonical environment's configuration is the one registered: the
    // canonical calls are decided under it.
    let config = canonical.env.config.as_object().cloned();
    let request = Request { source: root.path.clone(), release: Some(case.name.clone()), config, ..Request::default() };
    let outcome = register(profile, &request)?;
    let mut checks = Vec::new();
    let shown = match &outcome {
        Registration::Registered(_) => "registered".to_owned(),
        Registration::Escalated(e) => format!("escalated {e}"),
    };
    let expected_outcome = match &case.escalate {
        Some(code) => format!("escalated {code}"),
        None => "registered".to_owned(),
    };
    let actual_outcome = match &outcome {
        Registration::Registered(_) => "registered".to_owned(),
        Registration::Escalated(e) => format!("escalated {}", e.code),
    };
    checks.push(Check { what: "registration".into(), ok: expected_outcome == actual_outcome, expected: expected_outcome, actual: shown.clone() });
    if let Registration::Escalated(e) = &outcome
        && case.escalate.is_some()
        && e.anchor.is_none()
        && e.code != fcd_frontends::EscalationCode::RegionMissing
    {
        checks.push(Check { what: "escalation anchor".into(), expected: "file:line".into(), actual: "none".into(), ok: false });
    }
    if let Registration::Registered(summary) = &outcome {
        if let Some(regime) = &case.regime {
            if !canonical.regimes.contains(regime) {
                return Err(InputError::new(file, format!("case `{}`: regime `{regime}` is not one of {:?}", case.name, canonical.regimes)));
            }
            for (name, c) in &canonical.calls {
                let call = canonical.call(name).unwrap_or_else(|| Call { tool: canonical.tool.clone(), arguments: c.arguments.clone() });
                let Some(expect) = c.expect.get(regime) else { continue };
                checks.push(judge(summary, &format!("canonical call {name}"), &CallInput::new(call, canonical_path), *expect, canonical)?);
            }
        }
        for extra in &case.calls {
            let arguments = match serde_json::to_value(&extra.arguments) {
                Ok(serde_json::Value::Object(m)) => m,
                _ => return Err(InputError::new(file, format!("case `{}`: call `{}` has unusable arguments", case.name, extra.name))),
            };
            let call = Call { tool: canonical.tool.clone(), arguments };
            checks.push(judge(summary, &format!("call {}", extra.name), &CallInput::new(call, file), extra.expect, canonical)?);
        }
        for (name, truth) in &case.truth {
            let Some(call) = canonical.call(name) else {
                return Err(InputError::new(file, format!("case `{}`: truth names `{name}`, which is not a canonical call", case.name)));
            };
            let input = CallInput::new(call, file);
            let d = decide(&check_call(summary, &input)?, &canonical.env, &canonical.contract);
            let ok = d.decision != Verdict::Safe || *truth == Verdict::Safe;
            checks.push(Check {
                what: format!("no certificate against the truth for canonical call {name}"),
                expected: format!("not safe (truly {})", truth.as_str()),
                actual: d.decision.as_str().to_owned(),
                ok,
            });
        }
        if let Some(other) = &case.same_rules_as {
            let Some(reference) = summaries.get(other) else {
                return Err(InputError::new(file, format!("case `{}`: same-rules-as `{other}` names no earlier registered case", case.name)));
            };
            checks.push(Check {
                what: format!("rules identical to case {other}"),
                expected: reference.rules_digest.clone(),
                actual: summary.rules_digest.clone(),
                ok: reference.rules_digest == summary.rules_digest,
            });
        }
        summaries.insert(case.name.clone(), (**summary).clone());
    }
    Ok(CaseReport {
        file: file.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default(),
        name: case.name,
        description: case.description,
        outcome: shown,
        checks,
    })
}

fn judge(summary: &Summary, what: &str, input: &CallInput, expect: Verdict, canonical: &Canonical) -> Result<Check, InputError> {
    let call = check_call(summary, input)?;
    let d = decide(&call, &canonical.env, &canonical.contract);
    let named = |i: usize| summary.rules.get(i).map_or_else(|| format!("rule {i}"), |rule| rule.named(i));
    let actual = match (&d.reason, d.matched_rule) {
        (Some(r), Some(i)) => format!("{} ({}: {r})", d.decision.as_str(), named(i)),
        (None, Some(i)) => format!("{} ({})", d.decision.as_str(), named(i)),
        (Some(r), None) => format!("{} ({r})", d.decision.as_str()),
        (None, None) => d.decision.as_str().to_owned(),
    };
    Ok(Check { what: what.to_owned(), expected: expect.as_str().to_owned(), actual, ok: d.decision == expect })
}
