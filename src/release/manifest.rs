//! `profiles/<id>/releases.toml`: the official releases a profile was developed
//! against, where to get each one, its digest, and what must come of it.
//! Read by `fcd profile check-releases` and the release job
//! (`cargo xtask releases`), both through [`super::job`].
//!
//! ```toml
//! [[release]]
//! id = "mcp-server-git-2025.9.25"   # names the cache entries and the registered release
//! regime = "unguarded"              # key into canonical.json's per-call `expect`
//! # escalate = "region_missing"     # instead of `regime`: registration must escalate with this code
//! # expect = { A = "safe", B = "safe" } # instead: each canonical call's decision, for a
//! #                                   # reviewed release no canonical regime describes
//! [release.pypi]                    # exactly one source table: pypi, npm or git
//! package = "mcp-server-git"
//! version = "2025.9.25"
//! sha256 = "…"                      # the registry's digest of the sdist
//! ```
//!
//! Parsing is strict (`deny_unknown_fields`), then a second pass checks what
//! serde cannot and names the file, line and release in every error.
//!
//! A `[release.git]` names `repository`, `tag` and the `commit` the tag must
//! point to; a release published from an untagged commit leaves `tag` out and
//! gives the full 40-digit `commit`, which is then the revision read.
//!
//! An optional `[history]` table says where every *published* release of the
//! profile's tool is listed, for `cargo xtask releases --history` (a triage of
//! all of them, not a pinned expectation). At least one source is given; each
//! at most once:
//!
//! ```toml
//! [history]
//! pypi = "mcp-server-git"              # every PyPI version (sdists)
//! npm = "@bytebase/dbhub"              # every npm version
//! [history.git]                        # the tags of a repository, from --git-mirror
//! repository = "bytebase/dbhub"        # OWNER/REPO
//! tags = "^v[0-9]"                     # a regex the tag must match (required)
//! paths = ["tools/X"]                  # optional: only these paths of each tag
//! ```

use std::collections::BTreeSet;
use std::path::Path;

use anyhow::{Context, Result, bail};
use serde::Deserialize;
use toml::Spanned;

use fcd_frontends::EscalationCode;

/// The file name inside a profile directory.
pub const FILE: &str = "releases.toml";

/// `releases.toml`: the official releases a profile was developed against
/// (`[[release]]`) and where every published release is listed (`[history]`).
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct RawManifest {
    #[schemars(with = "Vec<RawRelease>")]
    release: Vec<Spanned<RawRelease>>,
    /// Read by [`load_history`]; accepted here so the release job reads the same file.
    #[allow(dead_code)]
    #[schemars(with = "Option<RawHistory>")]
    history: Option<toml::Value>,
}

/// The JSON Schema of `releases.toml`.
pub fn json_schema() -> serde_json::Value {
    let mut schema = schemars::schema_for!(RawManifest);
    schema.insert("title".into(), "fcd release manifest (releases.toml)".into());
    schema.to_value()
}

/// The file as [`load_history`] reads it: only `[history]` matters.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawHistoryFile {
    #[allow(dead_code)]
    release: Option<toml::Value>,
    history: Option<Spanned<RawHistory>>,
}

/// Where every published release of the profile's tool is listed, for `cargo xtask releases --history`.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct RawHistory {
    /// A PyPI project: every version's sdist.
    #[schemars(with = "Option<String>")]
    pypi: Option<Spanned<String>>,
    /// An npm package: every version's tarball.
    #[schemars(with = "Option<String>")]
    npm: Option<Spanned<String>>,
    /// The matching tags of a repository, read from a `--git-mirror`.
    #[schemars(with = "Option<RawHistoryGit>")]
    git: Option<Spanned<RawHistoryGit>>,
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct RawHistoryGit {
    /// OWNER/REPO.
    #[schemars(with = "String")]
    repository: Spanned<String>,
    /// A regex every listed tag must match.
    #[schemars(with = "String")]
    tags: Spanned<String>,
    /// Only these paths of each tag.
    #[serde(default)]
    #[schemars(with = "Vec<String>")]
    paths: Vec<Spanned<String>>,
}

/// Where every published release of a profile's tool is listed (`[history]`).
#[derive(Debug, Clone, Default)]
pub struct History {
    /// A PyPI project: every version's sdist.
    pub pypi: Option<String>,
    /// An npm package: every version's tarball.
    pub npm: Option<String>,
    /// The matching tags of a repository, read from a local mirror.
    pub git: Option<HistoryGit>,
}

/// `[history.git]`.
#[derive(Debug, Clone)]
pub struct HistoryGit {
    pub repository: String,
    pub tags: regex::Regex,
    pub paths: Vec<String>,
}

/// Reads the `[history]` table of a releases.toml, if it has one.
pub fn load_history(path: &Path) -> Result<Option<History>> {
    let text = std::fs::read_to_string(path).with_context(|| format!("{}: cannot read", path.display()))?;
    parse_history(path, &text)
}

fn parse_history(path: &Path, text: &str) -> Result<Option<History>> {
    let at = |offset: usize| format!("{}:{}", path.display(), fcd_model::error::line_col(text, offset).0);
    let raw: RawHistoryFile = toml::from_str(text).map_err(|e| {
        let line = e.span().map(|s| fcd_model::error::line_col(text, s.start).0);
        anyhow::anyhow!("{}{}: {}", path.display(), line.map(|l| format!(":{l}")).unwrap_or_default(), e.message().trim_end())
    })?;
    let Some(spanned) = raw.history else { return Ok(None) };
    let table_at = at(spanned.span().start);
    let raw = spanned.into_inner();
    let mut history = History::default();
    if let Some(p) = raw.pypi {
        let ok = !p.get_ref().is_empty() && p.get_ref().chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
        if !ok {
            bail!("{}: [history] pypi `{}` is not a PyPI project name (ASCII letters, digits, `-`, `_`, `.`)", at(p.span().start), p.get_ref());
        }
        history.pypi = Some(p.into_inner());
    }
    if let Some(n) = raw.npm {
        let name = n.get_ref();
        let bare = name.strip_prefix('@').and_then(|s| s.split_once('/')).map_or(name.as_str(), |(_, b)| b);
        let plain = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '-' | '_' | '.'));
        let scope_ok = name.strip_prefix('@').map_or(!name.contains('/'), |s| s.split_once('/').is_some_and(|(scope, _)| plain(scope)));
        if !plain(bare) || !scope_ok {
            bail!("{}: [history] npm `{name}` is not an npm package name (NAME or @SCOPE/NAME, lower case)", at(n.span().start));
        }
        history.npm = Some(n.into_inner());
    }
    if let Some(g) = raw.git {
        let g = g.into_inner();
        let repository = g.repository.get_ref();
        let part = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')) && !s.starts_with('.');
        if !repository.split_once('/').is_some_and(|(o, r)| part(o) && part(r)) {
            bail!("{}: [history.git] repository `{repository}` is not OWNER/REPO", at(g.repository.span().start));
        }
        let tags = regex::Regex::new(g.tags.get_ref()).map_err(|e| anyhow::anyhow!("{}: [history.git] tags is not a regex: {e}", at(g.tags.span().start)))?;
        let mut paths = Vec::new();
        for p in g.paths {
            let bad = p.get_ref().is_empty() || p.get_ref().starts_with('/') || p.get_ref().split('/').any(|c| c == "..");
            if bad {
                bail!("{}: [history.git] path `{}` must be relative to the repository, without `..`", at(p.span().start), p.get_ref());
            }
            paths.push(p.into_inner());
        }
        history.git = Some(HistoryGit { repository: g.repository.into_inner(), tags, paths });
    }
    if history.pypi.is_none() && history.npm.is_none() && history.git.is_none() {
        bail!("{table_at}: [history] names no source; give pypi, npm or [history.git]");
    }
    Ok(Some(history))
}

/// One official release: its id, what must come of it (`regime` or `escalate`) and exactly one source table.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct RawRelease {
    /// Names the cache entries and the registered release.
    id: String,
    /// A regime of canonical.json whose per-call `expect` must hold.
    regime: Option<String>,
    /// Instead of `regime`: registration must escalate with this code.
    escalate: Option<EscalationCode>,
    expect: Option<std::collections::BTreeMap<String, String>>,
    pypi: Option<PypiSource>,
    npm: Option<NpmSource>,
    git: Option<GitSource>,
    dir: Option<DirSource>,
    case: Option<CaseSource>,
}

/// A case of the profile's own tests (`tests/*.toml`), materialized from its
/// base fixture and declared edits: a release that left the profile's shape
/// on purpose, kept in the job so that it can never register silently.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CaseSource {
    pub name: String,
    /// The profile directory (set when loaded: the folder of releases.toml).
    #[serde(skip)]
    pub profile: std::path::PathBuf,
}

/// A release already on disk (a vendored tree, a build output), relative to releases.toml.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DirSource {
    pub path: std::path::PathBuf,
}

// The registry and git sources are those the fetcher reads
// (`fcd release add` reads the same tables of releases.toml).
use super::fetch::{GitSource, NpmSource, PypiSource};

/// Where a release comes from.
#[derive(Debug, Clone)]
pub enum Source {
    Pypi(PypiSource),
    Npm(NpmSource),
    Git(GitSource),
    Dir(DirSource),
    Case(CaseSource),
}

impl Source {
    /// What the source names, for messages.
    pub fn describe(&self) -> String {
        match self {
            Source::Pypi(p) => format!("{}=={}", p.package, p.version),
            Source::Npm(n) => format!("{}@{}", n.package, n.version),
            Source::Git(g) if g.tag.is_empty() => format!("{} commit {}", g.repository, g.commit),
            Source::Git(g) => format!("{} tag {} (commit {})", g.repository, g.tag, g.commit),
            Source::Dir(d) => format!("directory {}", d.path.display()),
            Source::Case(c) => format!("test case {}", c.name),
        }
    }
}

/// What registering a release must give.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expectation {
    /// A summary whose canonical decisions are those of this regime.
    Regime(String),
    /// An escalation with this code.
    Escalate(EscalationCode),
    /// A summary with exactly these decisions, call by call (a reviewed
    /// representative whose decisions no canonical regime lists).
    Decisions(std::collections::BTreeMap<String, String>),
    /// A release named on the command line: nobody has reviewed what it should give.
    Unreviewed,
}

impl std::fmt::Display for Expectation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Expectation::Regime(r) => write!(f, "regime {r}"),
            Expectation::Escalate(c) => write!(f, "escalate {c}"),
            Expectation::Decisions(d) => write!(f, "decisions {}", d.iter().map(|(c, v)| format!("{c}={v}")).collect::<Vec<_>>().join(", ")),
            Expectation::Unreviewed => f.write_str("unreviewed"),
        }
    }
}

/// One validated release.
#[derive(Debug, Clone)]
pub struct Release {
    pub id: String,
    pub expect: Expectation,
    pub source: Source,
}

/// Reads and validates a releases.toml; `regimes` are the canonical regimes a
/// release may name.
pub fn load(path: &Path, regimes: &[String]) -> Result<Vec<Release>> {
    let text = std::fs::read_to_string(path).with_context(|| format!("{}: cannot read", path.display()))?;
    parse(path, &text, regimes)
}

fn parse(path: &Path, text: &str, regimes: &[String]) -> Result<Vec<Release>> {
    let raw: RawManifest = toml::from_str(text).map_err(|e| {
        let line = e.span().map(|s| fcd_model::error::line_col(text, s.start).0);
        anyhow::anyhow!("{}{}: {}", path.display(), line.map(|l| format!(":{l}")).unwrap_or_default(), e.message().trim_end())
    })?;
    let mut seen = BTreeSet::new();
    let mut releases = Vec::new();
    for spanned in raw.release {
        let line = fcd_model::error::line_col(text, spanned.span().start).0;
        let at = format!("{}:{line}", path.display());
        let mut release = validate(spanned.into_inner(), regimes).with_context(|| at.clone())?;
        // A directory release is relative to the releases.toml that names it.
        if let Source::Dir(d) = &mut release.source {
            d.path = path.parent().unwrap_or(Path::new(".")).join(&d.path);
        }
        if let Source::Case(c) = &mut release.source {
            c.profile = path.parent().unwrap_or(Path::new(".")).to_path_buf();
        }
        if !seen.insert(release.id.clone()) {
            bail!("{at}: release id `{}` appears twice", release.id);
        }
        releases.push(release);
    }
    if releases.is_empty() {
        bail!("{}: lists no [[release]]", path.display());
    }
    Ok(releases)
}

fn validate(raw: RawRelease, regimes: &[String]) -> Result<Release> {
    let id = raw.id;
    check_id(&id)?;
    let expect = match (raw.regime, raw.escalate, raw.expect) {
        (None, None, Some(decisions)) => {
            const DECISIONS: &[&str] = &["safe", "unsafe", "reject", "unknown"];
            if let Some((call, d)) = decisions.iter().find(|(_, d)| !DECISIONS.contains(&d.as_str())) {
                bail!("release `{id}`: expect.{call} = `{d}` is not one of {}", DECISIONS.join(", "));
            }
            if decisions.is_empty() {
                bail!("release `{id}`: `expect` names no call");
            }
            Expectation::Decisions(decisions)
        }
        (Some(regime), None, None) => {
            if !regimes.contains(&regime) {
                bail!("release `{id}`: regime `{regime}` is not one of canonical.json's regimes ({})", regimes.join(", "));
            }
            Expectation::Regime(regime)
        }
        (None, Some(code), None) => Expectation::Escalate(code),
        _ => {
            bail!("release `{id}`: give exactly one of `regime` (it registers), `expect` (it registers with these decisions) and `escalate` (it must escalate)")
        }
    };
    let local = match (raw.dir, raw.case) {
        (Some(_), Some(_)) => bail!("release `{id}`: give exactly one source table, not both [release.dir] and [release.case]"),
        (dir, case) => dir.map(Source::Dir).or(case.map(Source::Case)),
    };
    let source = match (raw.pypi, raw.npm, raw.git, local) {
        (Some(p), None, None, None) => {
            check_sha256(&id, &p.sha256)?;
            Source::Pypi(p)
        }
        (None, Some(n), None, None) => {
            check_sha256(&id, &n.sha256)?;
            Source::Npm(n)
        }
        (None, None, Some(g), None) => {
            let full = g.commit.len() == 40 && g.commit.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
            if g.tag.is_empty() && !full {
                bail!("release `{id}`: a git release without `tag` is named by its `commit`, 40 lower-case hex digits (got `{}`)", g.commit);
            }
            Source::Git(g)
        }
        (None, None, None, Some(local)) => local,
        _ => bail!("release `{id}`: give exactly one source table: [release.pypi], [release.npm], [release.git], [release.dir] or [release.case]"),
    };
    Ok(Release { id, expect, source })
}

/// A release id names directories in the cache, so it must be a plain file name.
fn check_id(id: &str) -> Result<()> {
    let plain = id.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if id.is_empty() || id.starts_with('.') || !plain {
        bail!("release id `{id}`: use ASCII letters, digits, `-`, `_` and `.`, not starting with `.`");
    }
    Ok(())
}

fn check_sha256(id: &str, hex: &str) -> Result<()> {
    if hex.len() != 64 || !hex.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) {
        bail!("release `{id}`: sha256 `{hex}` is not 64 lower-case hex digits");
    }
    Ok(())
}

/// A release named on the command line: `PROFILE=pypi:NAME==VERSION`,
/// `PROFILE=npm:NAME@VERSION` or `PROFILE=git:OWNER/REPO@TAG`. Its digest is
/// taken on first use and reported, never trusted from anywhere else.
pub fn parse_extra(text: &str) -> Result<(String, Release)> {
    let Some((profile, spec)) = text.split_once('=') else {
        bail!("`{text}` is not PROFILE=pypi:NAME==VERSION, PROFILE=npm:NAME@VERSION or PROFILE=git:OWNER/REPO@TAG");
    };
    let (source, id) = if let Some(p) = spec.strip_prefix("pypi:") {
        let (package, version) = p.split_once("==").with_context(|| format!("`{spec}`: pypi:NAME==VERSION"))?;
        (Source::Pypi(PypiSource { package: package.into(), version: version.into(), sha256: String::new() }), format!("{package}-{version}"))
    } else if let Some(n) = spec.strip_prefix("npm:") {
        let (package, version) = n.rsplit_once('@').filter(|(p, _)| !p.is_empty()).with_context(|| format!("`{spec}`: npm:NAME@VERSION"))?;
        let name = package.trim_start_matches('@').replace('/', "-");
        (Source::Npm(NpmSource { package: package.into(), version: version.into(), sha256: String::new(), integrity: None }), format!("{name}-{version}-npm"))
    } else if let Some(g) = spec.strip_prefix("git:") {
        let (repository, tag) = g.split_once('@').with_context(|| format!("`{spec}`: git:OWNER/REPO@TAG"))?;
        let name = repository.replace('/', "-");
        (Source::Git(GitSource { repository: repository.into(), tag: tag.into(), commit: String::new(), paths: Vec::new() }), format!("{name}-{tag}"))
    } else {
        bail!("`{spec}`: a release is pypi:…, npm:… or git:…");
    };
    let id: String = id.chars().map(|c| if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') { c } else { '-' }).collect();
    check_id(&id)?;
    Ok((profile.to_owned(), Release { id, expect: Expectation::Unreviewed, source }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str) -> Result<Vec<Release>> {
        parse(Path::new("releases.toml"), text, &["unguarded".to_owned(), "guarded".to_owned()])
    }

    const HEX: &str = "487d9359d67dd73187d77db0200601f21d6dc9d0d79e8df69b012ceb2c9923e4";

    #[test]
    fn pypi_release_with_regime_parses() {
        let r =
            check(&format!("[[release]]\nid = \"a-1\"\nregime = \"guarded\"\n[release.pypi]\npackage = \"p\"\nversion = \"1\"\nsha256 = \"{HEX}\"\n")).unwrap();
        assert_eq!(r[0].expect, Expectation::Regime("guarded".into()));
        assert!(matches!(r[0].source, Source::Pypi(_)));
    }

    #[test]
    fn listed_decisions_parse_and_are_checked() {
        let release = |expect: &str| format!("[[release]]\nid = \"a\"\n{expect}\n[release.pypi]\npackage = \"p\"\nversion = \"1\"\nsha256 = \"{HEX}\"\n");
        let r = check(&release("expect = { A = \"safe\", B = \"unknown\" }")).unwrap();
        let want: std::collections::BTreeMap<String, String> = [("A", "safe"), ("B", "unknown")].iter().map(|(c, d)| ((*c).into(), (*d).into())).collect();
        assert_eq!(r[0].expect, Expectation::Decisions(want));
        let e = check(&release("expect = { A = \"fine\" }")).unwrap_err();
        assert!(format!("{e:#}").contains("expect.A = `fine`"), "{e:#}");
        let e = check(&release("regime = \"guarded\"\nexpect = { A = \"safe\" }")).unwrap_err();
        assert!(format!("{e:#}").contains("exactly one of"), "{e:#}");
        let e = check(&release("expect = {}")).unwrap_err();
        assert!(format!("{e:#}").contains("names no call"), "{e:#}");
    }

    #[test]
    fn escalating_release_parses_its_code() {
        let r =
            check(&format!("[[release]]\nid = \"a\"\nescalate = \"region_missing\"\n[release.pypi]\npackage = \"p\"\nversion = \"1\"\nsha256 = \"{HEX}\"\n"))
                .unwrap();
        assert_eq!(r[0].expect, Expectation::Escalate(EscalationCode::RegionMissing));
    }

    #[test]
    fn a_git_release_without_a_tag_is_named_by_its_full_commit() {
        let commit = "5e6c344ffaaa4238844dfd6ae3ec248530778437";
        let r = check(&format!("[[release]]\nid = \"a\"\nescalate = \"parse_error\"\n[release.git]\nrepository = \"o/r\"\ncommit = \"{commit}\"\n")).unwrap();
        assert!(matches!(&r[0].source, Source::Git(g) if g.rev() == commit && g.tag.is_empty()));
        let e = check("[[release]]\nid = \"a\"\nescalate = \"parse_error\"\n[release.git]\nrepository = \"o/r\"\ncommit = \"5e6c344\"\n").unwrap_err();
        assert!(format!("{e:#}").contains("40 lower-case hex digits"), "{e:#}");
    }

    #[test]
    fn unknown_key_is_an_error_with_its_line() {
        let e = check("[[release]]\nid = \"a\"\nregim = \"guarded\"\n").unwrap_err();
        assert!(format!("{e:#}").starts_with("releases.toml:3:"), "{e:#}");
    }

    #[test]
    fn regime_and_escalate_together_are_refused() {
        let e = check(&format!(
            "[[release]]\nid = \"a\"\nregime = \"guarded\"\nescalate = \"parse_error\"\n[release.pypi]\npackage = \"p\"\nversion = \"1\"\nsha256 = \"{HEX}\"\n"
        ))
        .unwrap_err();
        assert!(format!("{e:#}").contains("exactly one of `regime`"), "{e:#}");
    }

    #[test]
    fn a_test_case_release_and_a_directory_together_are_refused() {
        let r = check("[[release]]\nid = \"a\"\nescalate = \"parse_error\"\n[release.case]\nname = \"c\"\n").unwrap();
        assert!(matches!(&r[0].source, Source::Case(c) if c.name == "c"));
        let e = check("[[release]]\nid = \"a\"\nescalate = \"parse_error\"\n[release.case]\nname = \"c\"\n[release.dir]\npath = \"d\"\n").unwrap_err();
        assert!(format!("{e:#}").contains("not both"), "{e:#}");
    }

    #[test]
    fn unknown_regime_is_refused() {
        let e = check(&format!("[[release]]\nid = \"a\"\nregime = \"patched\"\n[release.pypi]\npackage = \"p\"\nversion = \"1\"\nsha256 = \"{HEX}\"\n"))
            .unwrap_err();
        assert!(format!("{e:#}").contains("regime `patched`"), "{e:#}");
    }

    #[test]
    fn every_committed_manifest_is_valid() {
        let profiles = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("profiles");
        for entry in std::fs::read_dir(&profiles).unwrap() {
            let dir = entry.unwrap().path();
            let path = dir.join(FILE);
            if path.is_file() {
                let canonical = fcd_verify::canonical_calls::Canonical::load(&dir.join(fcd_verify::canonical_calls::FILE)).unwrap();
                let releases = load(&path, &canonical.regimes).unwrap_or_else(|e| panic!("{e:#}"));
                assert!(load_history(&path).unwrap_or_else(|e| panic!("{e:#}")).is_some(), "{}: no [history]", path.display());
                assert!(!releases.is_empty(), "{}", path.display());
            }
        }
    }

    fn history(text: &str) -> Result<Option<History>> {
        parse_history(Path::new("releases.toml"), text)
    }

    #[test]
    fn history_with_every_source_parses() {
        let h = history(
            "[[release]]\nid = \"a\"\n[history]\npypi = \"mcp-server-git\"\nnpm = \"@bytebase/dbhub\"\n[history.git]\nrepository = \"o/r\"\ntags = \"^v\\\\d\"\npaths = [\"a/b\"]\n",
        )
        .unwrap()
        .unwrap();
        assert_eq!(h.pypi.as_deref(), Some("mcp-server-git"));
        assert_eq!(h.npm.as_deref(), Some("@bytebase/dbhub"));
        let g = h.git.unwrap();
        assert!(g.tags.is_match("v1.0") && !g.tags.is_match("latest"));
        assert_eq!(g.paths, ["a/b"]);
        assert!(history("[[release]]\nid = \"a\"\n").unwrap().is_none());
    }

    #[test]
    fn history_errors_name_file_and_line() {
        let cases = [
            ("[history]\npypy = \"x\"\n", "releases.toml:2:"),
            ("[history]\n", "releases.toml:1: [history] names no source"),
            ("[history]\npypi = \"a b\"\n", "releases.toml:2: [history] pypi"),
            ("[history]\nnpm = \"@Scope\"\n", "releases.toml:2: [history] npm"),
            ("\n[history.git]\nrepository = \"o\"\ntags = \".\"\n", "releases.toml:3: [history.git] repository"),
            ("[history.git]\nrepository = \"o/r\"\ntags = \"(\"\n", "releases.toml:3: [history.git] tags is not a regex"),
            ("[history.git]\nrepository = \"o/r\"\npaths = [\"x\"]\n", "releases.toml:1:"),
            ("[history.git]\nrepository = \"o/r\"\ntags = \".\"\npaths = [\"../x\"]\n", "releases.toml:4: [history.git] path"),
        ];
        for (text, want) in cases {
            let e = format!("{:#}", history(text).unwrap_err());
            assert!(e.starts_with(want), "{text:?}: {e}");
        }
    }

    #[test]
    fn path_like_id_is_refused() {
        let e = check(&format!("[[release]]\nid = \"../x\"\nregime = \"guarded\"\n[release.pypi]\npackage = \"p\"\nversion = \"1\"\nsha256 = \"{HEX}\"\n"))
            .unwrap_err();
        assert!(format!("{e:#}").contains("release id `../x`"), "{e:#}");
    }
}
