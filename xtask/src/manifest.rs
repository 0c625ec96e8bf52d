//! `profiles/<id>/releases.toml`: the official releases a profile was developed
//! against, where to get each one, its digest, and what must come of it.
//!
//! ```toml
//! [[release]]
//! id = "mcp-server-git-2025.9.25"   # names the cache entries and the registered release
//! regime = "unguarded"              # key into canonical.json's per-call `expect`
//! # escalate = "region_missing"     # instead of `regime`: registration must escalate with this code
//! [release.pypi]                    # exactly one source table: pypi, npm or git
//! package = "mcp-server-git"
//! version = "2025.9.25"
//! sha256 = "…"                      # the registry's digest of the sdist
//! ```
//!
//! Parsing is strict (`deny_unknown_fields`), then a second pass checks what
//! serde cannot and names the file, line and release in every error.

use std::collections::BTreeSet;
use std::path::Path;

use anyhow::{Context, Result, bail};
use serde::Deserialize;
use toml::Spanned;

use fcd_frontends::EscalationCode;

/// The file name inside a profile directory.
pub const FILE: &str = "releases.toml";

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawManifest {
    release: Vec<Spanned<RawRelease>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRelease {
    id: String,
    regime: Option<String>,
    escalate: Option<EscalationCode>,
    pypi: Option<PypiSource>,
    npm: Option<NpmSource>,
    git: Option<GitSource>,
    dir: Option<DirSource>,
    case: Option<CaseSource>,
}

/// A case of the profile's own tests (`tests/*.toml`), materialized from its
/// base fixture and declared edits: a release that left the profile's shape
/// on purpose, kept in the job so that it can never register silently.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CaseSource {
    pub name: String,
    /// The profile directory (set when loaded: the folder of releases.toml).
    #[serde(skip)]
    pub profile: std::path::PathBuf,
}

/// A release already on disk (a vendored tree, a build output), relative to releases.toml.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DirSource {
    pub path: std::path::PathBuf,
}

/// An sdist on PyPI, fetched with `pip download`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PypiSource {
    pub package: String,
    pub version: String,
    /// Lower-case hex sha256 of the sdist, as the registry publishes it.
    pub sha256: String,
}

/// A package on the npm registry, fetched with `npm pack`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NpmSource {
    pub package: String,
    pub version: String,
    /// Lower-case hex sha256 of the packed tarball.
    pub sha256: String,
    /// The registry's own `dist.integrity` (`sha512-BASE64`), checked as well when given.
    pub integrity: Option<String>,
}

/// A tag of an official git repository, read from a local mirror.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GitSource {
    pub repository: String,
    pub tag: String,
    /// The commit the tag must point to.
    pub commit: String,
    /// Only these folders of the tag (the part that holds the handler and its
    /// package); the whole tree when empty.
    #[serde(default)]
    pub paths: Vec<String>,
}

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
    /// A release named on the command line: nobody has reviewed what it should give.
    Unreviewed,
}

impl std::fmt::Display for Expectation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Expectation::Regime(r) => write!(f, "regime {r}"),
            Expectation::Escalate(c) => write!(f, "escalate {c}"),
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
        let line = e.span().map(|s| fcd::error::line_col(text, s.start).0);
        anyhow::anyhow!("{}{}: {}", path.display(), line.map(|l| format!(":{l}")).unwrap_or_default(), e.message().trim_end())
    })?;
    let mut seen = BTreeSet::new();
    let mut releases = Vec::new();
    for spanned in raw.release {
        let line = fcd::error::line_col(text, spanned.span().start).0;
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
    let expect = match (raw.regime, raw.escalate) {
        (Some(regime), None) => {
            if !regimes.contains(&regime) {
                bail!("release `{id}`: regime `{regime}` is not one of canonical.json's regimes ({})", regimes.join(", "));
            }
            Expectation::Regime(regime)
        }
        (None, Some(code)) => Expectation::Escalate(code),
        _ => bail!("release `{id}`: give exactly one of `regime` (it registers) and `escalate` (it must escalate)"),
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
        (None, None, Some(g), None) => Source::Git(g),
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
    fn escalating_release_parses_its_code() {
        let r =
            check(&format!("[[release]]\nid = \"a\"\nescalate = \"region_missing\"\n[release.pypi]\npackage = \"p\"\nversion = \"1\"\nsha256 = \"{HEX}\"\n"))
                .unwrap();
        assert_eq!(r[0].expect, Expectation::Escalate(EscalationCode::RegionMissing));
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
        let profiles = crate::workspace_root().join("profiles");
        for entry in std::fs::read_dir(&profiles).unwrap() {
            let dir = entry.unwrap().path();
            let path = dir.join(FILE);
            if path.is_file() {
                let canonical = fcd::canonical::Canonical::load(&dir.join(fcd::canonical::FILE)).unwrap();
                let releases = load(&path, &canonical.regimes).unwrap_or_else(|e| panic!("{e:#}"));
                assert!(releases.iter().all(|r| crate::fetch::check_supported(r).is_ok()), "{}", path.display());
            }
        }
    }

    #[test]
    fn path_like_id_is_refused() {
        let e = check(&format!("[[release]]\nid = \"../x\"\nregime = \"guarded\"\n[release.pypi]\npackage = \"p\"\nversion = \"1\"\nsha256 = \"{HEX}\"\n"))
            .unwrap_err();
        assert!(format!("{e:#}").contains("release id `../x`"), "{e:#}");
    }
}
