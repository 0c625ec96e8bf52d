//! The triage view of `cargo xtask releases --history`: hundreds of release
//! outcomes folded into a few groups a person can act on — escalations by
//! cause (code, the callee, fact or region the detail names, anchor file),
//! automatic registrations by regime, and failures by stage — each with its
//! size and its first and last release in version order.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::LazyLock;
use std::time::Duration;

use serde::Serialize;

use crate::versions;

/// What came of one published release; one JSON Lines object.
#[derive(Debug, Clone, Serialize)]
pub struct Record {
    pub profile: String,
    pub release: String,
    /// The version or tag, for ordering.
    pub version: String,
    /// `pypi`, `npm` or `git`.
    pub source: String,
    /// `sha256:HEX` of the artifact (none for a git tag: see `provenance`).
    pub artifact_sha256: Option<String>,
    pub provenance: String,
    pub downloaded: bool,
    /// The release root on disk (empty when it was never materialized).
    pub root: String,
    #[serde(flatten)]
    pub status: Status,
    /// Wall time of the whole release, and of its download or materialization part.
    pub seconds: f64,
    pub materialize_seconds: f64,
    /// With `--oracle`, an automatic registration beside the independent
    /// oracle: `agrees (3/3)`, `DISAGREES on B, C` or `unjudged (…)`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub oracle: Option<String>,
    /// Why the oracle disagreed or could not judge, call by call.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub oracle_problems: Vec<String>,
}

/// The outcome of one release.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Status {
    /// Registered, regenerated to the same digest, decided under the canonical env.
    Automatic {
        summary_digest: String,
        regime: String,
        decisions: BTreeMap<String, String>,
    },
    Escalated {
        code: String,
        detail: String,
        file: Option<String>,
        line: Option<u64>,
    },
    /// The release could not be judged: download, materialize, register (an
    /// input error) or regeneration (a different digest the second time).
    Failed {
        stage: String,
        message: String,
    },
    /// Not run, with why (a git history without --git-mirror).
    NotRun {
        reason: String,
    },
}

/// One group of the triage.
#[derive(Debug, Clone, Serialize)]
pub struct Group {
    pub profile: String,
    /// `automatic`, `escalated`, `failed` or `not_run`.
    pub kind: String,
    /// The regime, the escalation code, the failing stage or why not run.
    pub what: String,
    /// Escalations: the callee, fact or region named in the detail; failures: the message without versions.
    pub cause: Option<String>,
    /// Escalations: the anchor file.
    pub file: Option<String>,
    pub size: usize,
    pub first: String,
    pub last: String,
    /// The first release's record index (its anchor, its detail).
    #[serde(skip)]
    pub first_index: usize,
    /// Unbroken stretches of the profile's releases from one source (npm, a
    /// repository's tags) in version order: 1 when
    /// the group is one run of consecutive releases, more when other outcomes
    /// come between (a cause that went away and came back).
    pub stretches: usize,
}

static VERSIONISH: LazyLock<regex::Regex> = LazyLock::new(|| regex::Regex::new(r"\bv?\d[\w.+\-]*").unwrap_or_else(|_| unreachable!()));

/// The cause an escalation's detail names: its first backquoted token, else
/// the detail with versions, line numbers and other numbers replaced by `#`.
pub fn cause(detail: &str) -> String {
    // A multi-shape profile's escalation leads with the closest shape's name:
    // the cause is in that shape's own reason, which follows.
    let detail = match detail.strip_prefix("no reviewed shape matches; the closest, `").and_then(|r| r.split_once("`: ")) {
        Some((_, reason)) => reason.rsplit_once(" (other shapes: ").map_or(reason, |(own, _)| own),
        None => detail,
    };
    if let Some((_, rest)) = detail.split_once('`')
        && let Some((token, _)) = rest.split_once('`')
        && !token.trim().is_empty()
    {
        return token.trim().to_owned();
    }
    let stripped = VERSIONISH.replace_all(detail, "#");
    stripped.split_whitespace().collect::<Vec<_>>().join(" ")
}

static HASHED_CHUNK: LazyLock<regex::Regex> = LazyLock::new(|| regex::Regex::new(r"([-.])[A-Za-z0-9]{8,}(\.[cm]?js)$").unwrap_or_else(|_| unreachable!()));

/// A file name with a bundler's content hash folded (`dist/chunk-6QETXS44.js`
/// is `dist/chunk-*.js`), so one cause in many bundles is one group.
fn unhashed(file: &str) -> String {
    HASHED_CHUNK.replace(file, "$1*$2").into_owned()
}

/// Groups the records, each group's releases in version order; groups by profile, then kind, then size.
pub fn group(records: &[Record]) -> Vec<Group> {
    /// Profile, kind, what, cause, file.
    type GroupKey = (String, u8, String, Option<String>, Option<String>);
    let mut groups: BTreeMap<GroupKey, Vec<usize>> = BTreeMap::new();
    for (i, r) in records.iter().enumerate() {
        let key = match &r.status {
            Status::Automatic { regime, .. } => (0, regime.clone(), None, None),
            Status::Escalated { code, detail, file, .. } => (1, code.clone(), Some(cause(detail)), file.as_deref().map(unhashed)),
            Status::Failed { stage, message } => (2, stage.clone(), Some(cause_of_failure(message)), None),
            Status::NotRun { reason } => (3, reason.clone(), None, None),
        };
        groups.entry((r.profile.clone(), key.0, key.1, key.2, key.3)).or_default().push(i);
    }
    // Each record's position among its profile's releases from the same source, in version order.
    let mut order: Vec<usize> = (0..records.len()).collect();
    order.sort_by(|a, b| {
        let (ra, rb) = (&records[*a], &records[*b]);
        (&ra.profile, &ra.source)
            .cmp(&(&rb.profile, &rb.source))
            .then_with(|| versions::compare(&ra.version, &rb.version))
            .then_with(|| ra.release.cmp(&rb.release))
    });
    let mut position = vec![0; records.len()];
    for (p, i) in order.iter().enumerate() {
        position[*i] = p;
    }
    let mut out: Vec<Group> = groups
        .into_iter()
        .map(|((profile, kind, what, cause, file), mut members)| {
            members.sort_by(|a, b| versions::compare(&records[*a].version, &records[*b].version).then_with(|| records[*a].release.cmp(&records[*b].release)));
            let (first, last) = (members[0], members[members.len() - 1]);
            Group {
                profile,
                kind: ["automatic", "escalated", "failed", "not_run"][kind as usize].to_owned(),
                what,
                cause,
                file,
                size: members.len(),
                first: records[first].release.clone(),
                last: records[last].release.clone(),
                first_index: first,
                stretches: 1 + members.windows(2).filter(|w| position[w[1]] != position[w[0]] + 1).count(),
            }
        })
        .collect();
    let rank = |k: &str| ["automatic", "escalated", "failed", "not_run"].iter().position(|x| *x == k).unwrap_or(4);
    out.sort_by(|a, b| a.profile.cmp(&b.profile).then(rank(&a.kind).cmp(&rank(&b.kind))).then(b.size.cmp(&a.size)).then(a.what.cmp(&b.what)));
    out
}

/// A failure message folded so that the same failure of many releases is one group.
fn cause_of_failure(message: &str) -> String {
    let first_line = message.lines().next().unwrap_or("");
    // Past the command and paths, to the tool's own words when it gave some.
    let said = first_line.rfind("error:").map_or(first_line, |i| &first_line[i..]);
    let folded = VERSIONISH.replace_all(said, "#");
    let folded: String = folded.split_whitespace().collect::<Vec<_>>().join(" ");
    folded.chars().take(160).collect()
}

/// The triage table, the totals per profile and the wall time.
pub fn text(records: &[Record], groups: &[Group], notes: &[String], wall: Duration) -> String {
    let mut rows = vec![["profile", "group", "cause", "anchor file", "size (stretches)", "first", "last"].map(str::to_owned)];
    for g in groups {
        let what = match g.kind.as_str() {
            "automatic" => format!("automatic: {}", g.what),
            "escalated" => format!("escalated {}", g.what),
            "failed" => format!("FAILED {}", g.what),
            _ => format!("not run: {}", g.what),
        };
        rows.push([
            g.profile.clone(),
            what,
            g.cause.clone().unwrap_or_else(|| "-".into()),
            g.file.clone().unwrap_or_else(|| "-".into()),
            if g.stretches > 1 { format!("{} ({})", g.size, g.stretches) } else { g.size.to_string() },
            g.first.clone(),
            g.last.clone(),
        ]);
    }
    let mut t = table(&rows);
    t.push('\n');
    t.push_str(&totals(records, notes, wall));
    t
}

fn table(rows: &[[String; 7]]) -> String {
    const WIDEST: usize = 70;
    let clip = |c: &String| if c.chars().count() > WIDEST { format!("{}…", c.chars().take(WIDEST - 1).collect::<String>()) } else { c.clone() };
    let widths: Vec<usize> = (0..7).map(|i| rows.iter().map(|r| clip(&r[i]).chars().count()).max().unwrap_or(0)).collect();
    let mut t = String::new();
    for (n, row) in rows.iter().enumerate() {
        let cells: Vec<String> = row.iter().zip(&widths).map(|(c, w)| format!("{:<w$}", clip(c))).collect();
        let _ = writeln!(t, "{}", cells.join(" | ").trim_end());
        if n == 0 {
            let _ = writeln!(t, "{}", widths.iter().map(|w| "-".repeat(*w)).collect::<Vec<_>>().join("-|-"));
        }
    }
    t
}

/// Per profile: automatic / escalated / failed (and not run); then the notes and the wall time.
pub fn totals(records: &[Record], notes: &[String], wall: Duration) -> String {
    let mut per: BTreeMap<&str, [usize; 4]> = BTreeMap::new();
    for r in records {
        let slot = match r.status {
            Status::Automatic { .. } => 0,
            Status::Escalated { .. } => 1,
            Status::Failed { .. } => 2,
            Status::NotRun { .. } => 3,
        };
        per.entry(r.profile.as_str()).or_default()[slot] += 1;
    }
    let mut t = String::new();
    for (profile, [a, e, f, n]) in &per {
        let _ = write!(t, "{profile}: {} releases: {a} automatic / {e} escalated / {f} failed", a + e + f + n);
        if *n > 0 {
            let _ = write!(t, " ({n} not run)");
        }
        t.push('\n');
    }
    let mut judged: BTreeMap<&str, [usize; 3]> = BTreeMap::new();
    for r in records {
        if let Some(o) = &r.oracle {
            let slot = if o.starts_with("agrees") {
                0
            } else if o.starts_with("unjudged") {
                2
            } else {
                1
            };
            judged.entry(r.profile.as_str()).or_default()[slot] += 1;
        }
    }
    for (profile, [agree, differ, unjudged]) in &judged {
        let _ = writeln!(t, "{profile}: oracle agrees on {agree} automatic releases, differs or cannot judge on {differ}, has no judge for {unjudged}");
    }
    for r in records.iter().filter(|r| r.oracle.as_deref().is_some_and(|o| !o.starts_with("agrees") && !o.starts_with("unjudged"))) {
        let _ = writeln!(t, "oracle {}: {}/{}", r.oracle.as_deref().unwrap_or_default(), r.profile, r.release);
        for p in &r.oracle_problems {
            let _ = writeln!(t, "    ! {p}");
        }
    }
    for note in notes {
        let _ = writeln!(t, "note: {note}");
    }
    let downloaded = records.iter().filter(|r| r.downloaded).count();
    let busy: f64 = records.iter().map(|r| r.seconds).sum();
    let fetching: f64 = records.iter().map(|r| r.materialize_seconds).sum();
    let _ = writeln!(
        t,
        "{} releases in {:.2} s wall time ({busy:.1} s of worker time, {fetching:.1} s of it downloading and materializing); {downloaded} artifacts downloaded by this run",
        records.len(),
        wall.as_secs_f64()
    );
    t
}

/// SARIF: one result per escalation group at its first release's anchor, and
/// one per failure group, through the release job's SARIF writer.
pub fn sarif(records: &[Record], groups: &[Group]) -> serde_json::Value {
    let views: Vec<crate::sarif::ReleaseView> = groups
        .iter()
        .filter(|g| g.kind == "escalated" || g.kind == "failed")
        .map(|g| {
            let first = &records[g.first_index];
            let span = if g.first == g.last { format!("1 release, {}", g.first) } else { format!("{} releases, {} … {}", g.size, g.first, g.last) };
            let (escalation, problems) = match &first.status {
                Status::Escalated { code, detail, file, line } => (Some((code.clone(), format!("{span}: {detail}"), file.clone(), *line)), Vec::new()),
                Status::Failed { stage, message } => (None, vec![format!("{stage} failed for {span}: {message}")]),
                _ => (None, Vec::new()),
            };
            crate::sarif::ReleaseView {
                profile: g.profile.clone(),
                release: first.release.clone(),
                root: first.root.clone(),
                summary_digest: None,
                profile_digest: None,
                artifact_digest: first.artifact_sha256.clone(),
                escalation,
                problems,
                skipped: false,
            }
        })
        .collect();
    crate::sarif::log(&views)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(release: &str, status: Status) -> Record {
        Record {
            profile: "p".into(),
            release: format!("x-{release}"),
            version: release.into(),
            source: "git".into(),
            artifact_sha256: None,
            provenance: String::new(),
            downloaded: false,
            root: "/tmp/r".into(),
            status,
            seconds: 0.0,
            materialize_seconds: 0.0,
            oracle: None,
            oracle_problems: Vec::new(),
        }
    }

    fn escalated(code: &str, detail: &str, file: &str) -> Status {
        Status::Escalated { code: code.into(), detail: detail.into(), file: Some(file.into()), line: Some(3) }
    }

    fn automatic(regime: &str) -> Status {
        Status::Automatic { summary_digest: "sha256:0".into(), regime: regime.into(), decisions: BTreeMap::new() }
    }

    #[test]
    fn hashed_bundle_chunks_fold_and_shape_prefixes_are_skipped() {
        assert_eq!(unhashed("dist/chunk-6QETXS44.js"), "dist/chunk-*.js");
        assert_eq!(unhashed("dist/index.js"), "dist/index.js");
        assert_eq!(unhashed("src/api/requests.ts"), "src/api/requests.ts");
        assert_eq!(cause("no reviewed shape matches; the closest, `default`: region `handler`: no function `git_diff` (other shapes: `x`: y)"), "handler");
        assert_eq!(cause("no reviewed shape matches; the closest, `default`: no file matches [**/s.py] (other shapes: `x`: y)"), "no file matches [**/s.py]");
    }

    #[test]
    fn cause_is_the_first_backquoted_token_else_the_detail_without_numbers() {
        assert_eq!(cause("region `create_repository` calls `os.open`, outside its inventory"), "create_repository");
        assert_eq!(cause("required fact `allow_pragma` (a call) is not in region `r`"), "allow_pragma");
        assert_eq!(cause("no file of the release matches source.files [src/**/*.py]"), "no file of the release matches source.files [src/**/*.py]");
        assert_eq!(cause("parse error at line 12 in v1.2.3-rc.1 (2 errors)"), "parse error at line # in # (# errors)");
        assert_eq!(cause("an empty `` token then `x`"), "an empty `` token then `x`", "an empty token is no cause");
        assert_eq!(cause(""), "");
    }

    #[test]
    fn groups_fold_by_cause_and_span_first_to_last_in_version_order() {
        let records = vec![
            record("v0.10.0", escalated("region_missing", "region `handler` is not defined in v0.10.0", "a.go")),
            record("v0.9.1", escalated("region_missing", "region `handler` is not defined in v0.9.1", "a.go")),
            record("v0.2.0", escalated("region_missing", "region `handler` is not defined", "b.go")),
            record("v1.0.0", automatic("default-true")),
            record("v1.1.0", automatic("default-true")),
            record("v0.11.0", escalated("fact_missing", "required fact `flag`", "a.go")),
            record("v0.1.0", Status::Failed { stage: "download".into(), message: "pip download failed for x==0.1.0".into() }),
            record("v0.1.1", Status::Failed { stage: "download".into(), message: "pip download failed for x==0.1.1".into() }),
            record(
                "v0.3.0",
                Status::Failed { stage: "materialize".into(), message: "/m: git archive v0.3.0: error: invalid object 100755 8642ab for 'x'\nmore".into() },
            ),
        ];
        let groups = group(&records);
        type Row<'a> = (&'a str, &'a str, Option<&'a str>, Option<&'a str>, usize, &'a str, &'a str);
        let summary: Vec<Row<'_>> = groups
            .iter()
            .map(|g| (g.kind.as_str(), g.what.as_str(), g.cause.as_deref(), g.file.as_deref(), g.size, g.first.as_str(), g.last.as_str()))
            .collect();
        assert_eq!(
            summary,
            [
                ("automatic", "default-true", None, None, 2, "x-v1.0.0", "x-v1.1.0"),
                ("escalated", "region_missing", Some("handler"), Some("a.go"), 2, "x-v0.9.1", "x-v0.10.0"),
                ("escalated", "fact_missing", Some("flag"), Some("a.go"), 1, "x-v0.11.0", "x-v0.11.0"),
                ("escalated", "region_missing", Some("handler"), Some("b.go"), 1, "x-v0.2.0", "x-v0.2.0"),
                ("failed", "download", Some("pip download failed for x==#"), None, 2, "x-v0.1.0", "x-v0.1.1"),
                ("failed", "materialize", Some("error: invalid object # # for 'x'"), None, 1, "x-v0.3.0", "x-v0.3.0"),
            ]
        );
        assert_eq!(records[groups[1].first_index].version, "v0.9.1");
        // Version order: 0.1.0 F, 0.1.1 F, 0.2.0 E(b.go), 0.3.0 F, 0.9.1 E, 0.10.0 E, 0.11.0 E(fact), 1.0.0 A, 1.1.0 A.
        let stretches: Vec<usize> = groups.iter().map(|g| g.stretches).collect();
        assert_eq!(stretches, [1, 1, 1, 1, 1, 1]);
        let interrupted = group(&[records[0].clone(), records[2].clone(), records[1].clone()]);
        assert_eq!(interrupted.iter().map(|g| (g.file.as_deref(), g.stretches)).collect::<Vec<_>>(), [(Some("a.go"), 1), (Some("b.go"), 1)]);
        let mut later = records[0].clone();
        later.version = "v2.0.0".into();
        let gap = group(&[records[1].clone(), records[3].clone(), later]);
        assert_eq!(gap.iter().find(|g| g.kind == "escalated").map(|g| g.stretches), Some(2), "an automatic release between");
        let t = text(&records, &groups, &["n".into()], Duration::from_millis(1500));
        assert!(t.contains("p: 9 releases: 2 automatic / 4 escalated / 3 failed"), "{t}");
        assert!(t.contains("1.50 s wall time"), "{t}");
        let log = sarif(&records, &groups);
        let results = log["runs"][0]["results"].as_array().unwrap();
        assert_eq!(results.len(), 5, "three escalation groups and two failure groups");
        assert_eq!(results[0]["properties"]["release"], "x-v0.9.1");
    }
}
