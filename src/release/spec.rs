//! What `fcd release add` is asked to add: a SPEC (`pypi:NAME==VERSION`,
//! `npm:NAME@VERSION`, `git:DIR@TAG`), and what the profile's releases.toml
//! lists for it.
//!
//! Names and versions are checked before any client sees them: nothing that
//! starts with `-` (an option to pip, npm or git), a version that starts with
//! a digit (a pinned release, not a dist-tag such as `latest` or a range).
//! releases.toml is read only for the `[[release]]` entries with a pypi, npm
//! or git table; `cargo xtask releases` checks the rest of the file.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::fetch::{GitSource, NpmSource, PypiSource};
use fcd_model::error::InputError;

/// The file of a profile directory that lists its reviewed releases.
pub const MANIFEST: &str = "releases.toml";

/// One release to add.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Spec {
    Pypi {
        package: String,
        version: String,
    },
    Npm {
        package: String,
        version: String,
    },
    /// A tag of a local git repository, bare or not.
    Git {
        repo: PathBuf,
        tag: String,
    },
}

const FORMS: &str = "pypi:NAME==VERSION, npm:NAME@VERSION or git:DIR@TAG";

impl Spec {
    /// Parses a SPEC; the error says what is wrong in words.
    pub fn parse(text: &str) -> Result<Spec, String> {
        if let Some(p) = text.strip_prefix("pypi:") {
            let (package, version) = p.split_once("==").ok_or_else(|| format!("a PyPI release is pypi:NAME==VERSION (got `{text}`)"))?;
            if !pypi_name(package) {
                return Err(format!(
                    "`{package}` is not a PyPI project name (ASCII letters, digits, `-`, `_`, `.`, starting and ending with a letter or digit)"
                ));
            }
            check_version(version, &['.', '-', '_', '+', '!'])?;
            Ok(Spec::Pypi { package: package.into(), version: version.into() })
        } else if let Some(n) = text.strip_prefix("npm:") {
            let (package, version) =
                n.rsplit_once('@').filter(|(p, _)| !p.is_empty()).ok_or_else(|| format!("an npm release is npm:NAME@VERSION (got `{text}`)"))?;
            if !npm_name(package) {
                return Err(format!("`{package}` is not an npm package name (NAME or @SCOPE/NAME: lower-case letters, digits, `-`, `_`, `.`)"));
            }
            check_version(version, &['.', '-', '+'])?;
            Ok(Spec::Npm { package: package.into(), version: version.into() })
        } else if let Some(g) = text.strip_prefix("git:") {
            let (repo, tag) = g.rsplit_once('@').ok_or_else(|| format!("a git release is git:DIR@TAG (got `{text}`)"))?;
            if repo.is_empty() {
                return Err(format!("`{text}` names no repository directory before `@`"));
            }
            let plain = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '/' | '+');
            if tag.is_empty() || tag.starts_with(['-', '.', '/']) || tag.ends_with(['/', '.']) || !tag.chars().all(plain) || tag.contains("..") {
                return Err(format!("`{tag}` is not a tag name (ASCII letters, digits, `.`, `_`, `-`, `+`, `/`; not starting with `-`)"));
            }
            Ok(Spec::Git { repo: PathBuf::from(repo), tag: tag.into() })
        } else {
            Err(format!("`{text}` is not a release: give {FORMS}"))
        }
    }

    /// The release id when releases.toml does not list the release: `NAME-VERSION`
    /// (PyPI), `NAME-VERSION-npm` (npm, scope joined with `-`), `DIR-TAG` (git, DIR's
    /// last component without `.git`); characters outside `[A-Za-z0-9._-]` become `-`.
    pub fn default_id(&self) -> String {
        let id = match self {
            Spec::Pypi { package, version } => format!("{package}-{version}"),
            Spec::Npm { package, version } => format!("{}-{version}-npm", package.trim_start_matches('@').replace('/', "-")),
            Spec::Git { repo, tag } => {
                let name = std::fs::canonicalize(repo).ok().and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()));
                let name = name.or_else(|| repo.file_name().map(|n| n.to_string_lossy().into_owned())).unwrap_or_else(|| "repository".into());
                format!("{}-{tag}", name.strip_suffix(".git").unwrap_or(&name))
            }
        };
        let id: String = id.chars().map(|c| if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') { c } else { '-' }).collect();
        id.trim_start_matches('.').to_owned()
    }
}

fn pypi_name(name: &str) -> bool {
    let edge = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric());
    edge(name.chars().next()) && edge(name.chars().last()) && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

fn npm_name(name: &str) -> bool {
    let plain = |s: &str| {
        !s.is_empty() && !s.starts_with(['.', '_', '-']) && s.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '-' | '_' | '.'))
    };
    match name.strip_prefix('@') {
        Some(scoped) => scoped.split_once('/').is_some_and(|(scope, bare)| plain(scope) && plain(bare)),
        None => plain(name),
    }
}

fn check_version(version: &str, punctuation: &[char]) -> Result<(), String> {
    let ok = version.starts_with(|c: char| c.is_ascii_digit()) && version.chars().all(|c| c.is_ascii_alphanumeric() || punctuation.contains(&c));
    if ok {
        Ok(())
    } else {
        Err(format!("`{version}` is not a pinned version (it starts with a digit; letters, digits and {})", punctuation.iter().collect::<String>()))
    }
}

/// PEP 503's normal form of a PyPI name: lower case, each run of `-_.` one `-`.
pub fn normalize_pypi(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        if matches!(c, '-' | '_' | '.') {
            if !out.ends_with('-') {
                out.push('-');
            }
        } else {
            out.push(c.to_ascii_lowercase());
        }
    }
    out
}

/// A `[[release]]` of releases.toml with a registry or git source.
#[derive(Debug, Clone)]
pub struct Listed {
    pub id: String,
    pub source: ListedSource,
}

#[derive(Debug, Clone)]
pub enum ListedSource {
    Pypi(PypiSource),
    Npm(NpmSource),
    Git(GitSource),
}

#[derive(Deserialize)]
struct File {
    #[serde(default)]
    release: Vec<Entry>,
}

/// Only what identifies a release and its digest; the release job checks every other key.
#[derive(Deserialize)]
struct Entry {
    id: String,
    pypi: Option<PypiSource>,
    npm: Option<NpmSource>,
    git: Option<GitSource>,
}

/// The pypi, npm and git releases `profile_dir/releases.toml` lists; none when there is no such file.
pub fn listed(profile_dir: &Path) -> Result<Vec<Listed>, InputError> {
    let path = profile_dir.join(MANIFEST);
    if !path.is_file() {
        return Ok(Vec::new());
    }
    let text = fcd_model::error::read_text(&path)?;
    let file: File = toml::from_str(&text).map_err(|e| match e.span() {
        Some(span) => InputError::at_offset(&path, &text, span.start, e.message().trim_end()),
        None => InputError::new(&path, e.message().trim_end()),
    })?;
    Ok(file
        .release
        .into_iter()
        .filter_map(|e| {
            let source = match (e.pypi, e.npm, e.git) {
                (Some(p), None, None) => ListedSource::Pypi(p),
                (None, Some(n), None) => ListedSource::Npm(n),
                (None, None, Some(g)) => ListedSource::Git(g),
                _ => return None,
            };
            Some(Listed { id: e.id, source })
        })
        .collect())
}

/// The listed PyPI release of this project (PEP 503 names) and version.
pub fn find_pypi<'a>(listed: &'a [Listed], package: &str, version: &str) -> Option<(&'a str, &'a PypiSource)> {
    listed.iter().find_map(|l| match &l.source {
        ListedSource::Pypi(p) if normalize_pypi(&p.package) == normalize_pypi(package) && p.version == version => Some((l.id.as_str(), p)),
        _ => None,
    })
}

/// The listed npm release of this package and version.
pub fn find_npm<'a>(listed: &'a [Listed], package: &str, version: &str) -> Option<(&'a str, &'a NpmSource)> {
    listed.iter().find_map(|l| match &l.source {
        ListedSource::Npm(n) if n.package == package && n.version == version => Some((l.id.as_str(), n)),
        _ => None,
    })
}

/// The listed git release whose reviewed commit is `commit` (a commit id names its whole tree).
pub fn find_git<'a>(listed: &'a [Listed], commit: &str) -> Option<(&'a str, &'a GitSource)> {
    listed.iter().find_map(|l| match &l.source {
        ListedSource::Git(g) if !g.commit.is_empty() && g.commit == commit => Some((l.id.as_str(), g)),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_parse() {
        assert_eq!(Spec::parse("pypi:mcp-server-git==2026.1.14"), Ok(Spec::Pypi { package: "mcp-server-git".into(), version: "2026.1.14".into() }));
        assert_eq!(Spec::parse("npm:@bytebase/dbhub@0.22.3"), Ok(Spec::Npm { package: "@bytebase/dbhub".into(), version: "0.22.3".into() }));
        assert_eq!(Spec::parse("git:/srv/x@y.git@v1.0"), Ok(Spec::Git { repo: "/srv/x@y.git".into(), tag: "v1.0".into() }));
        assert_eq!(Spec::parse("npm:@bytebase/dbhub@0.22.3").unwrap().default_id(), "bytebase-dbhub-0.22.3-npm");
        assert_eq!(Spec::parse("pypi:mcp-server-git==2026.1.14").unwrap().default_id(), "mcp-server-git-2026.1.14");
    }

    #[test]
    fn bad_specs_say_what_is_wrong() {
        for (spec, says) in [
            ("mcp-server-git==1", "is not a release"),
            ("pypi:mcp-server-git@1", "pypi:NAME==VERSION"),
            ("pypi:-r==1", "not a PyPI project name"),
            ("pypi:x==latest", "not a pinned version"),
            ("pypi:x==", "not a pinned version"),
            ("npm:dbhub", "npm:NAME@VERSION"),
            ("npm:@bytebase/dbhub@latest", "not a pinned version"),
            ("npm:Dbhub@1.0.0", "not an npm package name"),
            ("npm:--registry=x@1", "not an npm package name"),
            ("git:/srv/repo", "git:DIR@TAG"),
            ("git:@v1", "names no repository"),
            ("git:/srv/repo@--upload-pack=x", "not a tag name"),
            ("git:/srv/repo@", "not a tag name"),
        ] {
            let e = Spec::parse(spec).unwrap_err();
            assert!(e.contains(says), "{spec}: {e}");
        }
    }

    #[test]
    fn pypi_names_compare_in_normal_form() {
        assert_eq!(normalize_pypi("MCP_Server.-git"), "mcp-server-git");
        let listed = vec![Listed {
            id: "a".into(),
            source: ListedSource::Pypi(PypiSource { package: "mcp-server-git".into(), version: "1".into(), sha256: "x".into() }),
        }];
        assert_eq!(find_pypi(&listed, "mcp_server_git", "1").map(|(id, _)| id), Some("a"));
        assert!(find_pypi(&listed, "mcp-server-git", "1.0").is_none());
    }

    #[test]
    fn the_git_diff_manifest_lists_its_pypi_releases() {
        let listed = listed(&Path::new(env!("CARGO_MANIFEST_DIR")).join("profiles/git-diff")).unwrap();
        let (id, p) = find_pypi(&listed, "mcp-server-git", "2026.1.14").unwrap();
        assert_eq!(id, "mcp-server-git-2026.1.14");
        assert_eq!(p.sha256, "2cd74704c7b271ab1ed7be266120c20ae8ae7cc01e52dc6c549790402bad2b44");
    }
}
