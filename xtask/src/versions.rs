//! Every published version of a package or tag of a repository, and their
//! order, for `cargo xtask releases --history`.
//!
//! Lists come from the registries' own clients (`pip index versions`, `npm
//! view … versions --json`) or a local mirror's tags, and registry lists are
//! cached under `<cache>/history/` so a warm run needs no network. The order
//! understands semver and PEP 440 well enough for a triage: `v0.10.0` comes
//! after `v0.9.1`, `1.0.0-rc.1` and `1.0rc1` before `1.0.0`, `1.0.post1` after.

use std::cmp::Ordering;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime};

use anyhow::{Context, Result, bail};

/// How long a cached registry list is used without asking the registry again.
const FRESH: Duration = Duration::from_secs(24 * 60 * 60);

/// One piece of a version after its numeric release part.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Ident {
    Num(u64),
    Text(String),
}

/// A sort key: prefix (text before the first digit, a leading `v` dropped),
/// the release numbers without trailing zeros, the phase (dev < pre-release <
/// final < post) and the rest, identifier by identifier.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Key {
    prefix: String,
    release: Vec<u64>,
    phase: u8,
    tail: Vec<Ident>,
}

fn key(version: &str) -> Key {
    let v = version.trim();
    let start = v.find(|c: char| c.is_ascii_digit()).unwrap_or(v.len());
    let mut prefix = v[..start].to_ascii_lowercase();
    if prefix == "v" {
        prefix.clear();
    }
    let mut rest = &v[start..];
    let mut release = Vec::new();
    loop {
        let digits = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
        if digits == 0 {
            break;
        }
        release.push(rest[..digits].parse::<u64>().unwrap_or(u64::MAX));
        rest = &rest[digits..];
        match rest.strip_prefix('.') {
            Some(r) if r.starts_with(|c: char| c.is_ascii_digit()) => rest = r,
            _ => break,
        }
    }
    while release.last() == Some(&0) && release.len() > 1 {
        release.pop();
    }
    // Semver build metadata does not order.
    let rest = rest.split('+').next().unwrap_or("").to_ascii_lowercase();
    let trimmed = rest.trim_start_matches(['-', '.', '_']);
    let phase = if trimmed.is_empty() {
        2
    } else if trimmed.starts_with("post") || trimmed.starts_with("rev") {
        3
    } else if trimmed.starts_with("dev") {
        0
    } else {
        1
    };
    Key { prefix, release, phase, tail: idents(trimmed) }
}

/// `beta.31` -> [beta, 31]; `rc1` -> [rc, 1].
fn idents(text: &str) -> Vec<Ident> {
    let mut out = Vec::new();
    let mut current = String::new();
    let flush = |current: &mut String, out: &mut Vec<Ident>| {
        if !current.is_empty() {
            out.push(match current.parse::<u64>() {
                Ok(n) if current.bytes().all(|b| b.is_ascii_digit()) => Ident::Num(n),
                _ => Ident::Text(std::mem::take(current)),
            });
            current.clear();
        }
    };
    for c in text.chars() {
        if matches!(c, '.' | '-' | '_') {
            flush(&mut current, &mut out);
            continue;
        }
        let boundary = current.chars().last().is_some_and(|last| last.is_ascii_digit() != c.is_ascii_digit());
        if boundary {
            flush(&mut current, &mut out);
        }
        current.push(c);
    }
    flush(&mut current, &mut out);
    out
}

/// Orders two versions or tags; equal keys fall back to the text, so the order is total.
pub fn compare(a: &str, b: &str) -> Ordering {
    key(a).cmp(&key(b)).then_with(|| a.cmp(b))
}

/// Sorts versions or tags in place, oldest first.
pub fn sort(versions: &mut [String]) {
    versions.sort_by(|a, b| compare(a, b));
}

/// A version list and where it came from.
#[derive(Debug)]
pub struct Listed {
    pub versions: Vec<String>,
    /// Said in the report: `registry`, `cache`, or why the cache was used.
    pub origin: String,
}

/// Every version of a PyPI project, through `pip index versions`.
pub fn pypi(project: &str, cache: &Path, refresh: bool) -> Result<Listed> {
    cached(&list_file(cache, "pypi", project), refresh, || {
        let out = Command::new("pip")
            .args(["index", "versions", project, "--disable-pip-version-check"])
            .output()
            .context("cannot run `pip` (is it installed and on PATH?)")?;
        if !out.status.success() {
            bail!("pip index versions {project}: {}", String::from_utf8_lossy(&out.stderr).trim());
        }
        parse_pip_index(&String::from_utf8_lossy(&out.stdout)).with_context(|| format!("pip index versions {project}"))
    })
}

/// Every version of an npm package, through `npm view PKG versions --json`.
pub fn npm(package: &str, cache: &Path, refresh: bool) -> Result<Listed> {
    cached(&list_file(cache, "npm", package), refresh, || {
        let out = Command::new("npm").args(["view", package, "versions", "--json"]).output().context("cannot run npm (is Node.js installed?)")?;
        if !out.status.success() {
            bail!("npm view {package} versions: {}", String::from_utf8_lossy(&out.stderr).trim());
        }
        parse_npm_view(&out.stdout).with_context(|| format!("npm view {package} versions"))
    })
}

/// The tags of a local bare mirror that match `pattern`, in version order.
pub fn git_tags(mirror: &Path, pattern: &regex::Regex) -> Result<Vec<String>> {
    let out =
        Command::new("git").arg("--git-dir").arg(mirror).args(["tag", "--list"]).output().with_context(|| format!("{}: cannot run git", mirror.display()))?;
    if !out.status.success() {
        bail!("{}: git tag --list: {}", mirror.display(), String::from_utf8_lossy(&out.stderr).trim());
    }
    let mut tags: Vec<String> = String::from_utf8_lossy(&out.stdout).lines().map(str::trim).filter(|t| pattern.is_match(t)).map(str::to_owned).collect();
    sort(&mut tags);
    Ok(tags)
}

fn list_file(cache: &Path, registry: &str, name: &str) -> PathBuf {
    let name: String = name.chars().map(|c| if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') { c } else { '_' }).collect();
    cache.join("history").join(format!("{registry}-{name}.versions.json"))
}

/// A fresh cached list, else the registry's (cached afterwards), else a stale
/// cached one with the registry's error in `origin`.
fn cached(file: &Path, refresh: bool, query: impl FnOnce() -> Result<Vec<String>>) -> Result<Listed> {
    let read = || -> Option<Vec<String>> { serde_json::from_slice(&std::fs::read(file).ok()?).ok() };
    let age = std::fs::metadata(file).and_then(|m| m.modified()).ok().and_then(|t| SystemTime::now().duration_since(t).ok());
    if !refresh
        && age.is_some_and(|a| a < FRESH)
        && let Some(mut versions) = read()
    {
        sort(&mut versions);
        return Ok(Listed { versions, origin: format!("cached list {}", file.display()) });
    }
    match query() {
        Ok(mut versions) => {
            sort(&mut versions);
            if let Some(dir) = file.parent() {
                std::fs::create_dir_all(dir).with_context(|| format!("{}: cannot create", dir.display()))?;
            }
            std::fs::write(file, serde_json::to_vec_pretty(&versions)?).with_context(|| format!("{}: cannot write", file.display()))?;
            Ok(Listed { versions, origin: "registry".to_owned() })
        }
        Err(e) => match read() {
            Some(mut versions) => {
                sort(&mut versions);
                Ok(Listed { versions, origin: format!("STALE cached list {} (the registry failed: {e:#})", file.display()) })
            }
            None => Err(e),
        },
    }
}

/// `Available versions: 2.0, 1.0` from `pip index versions`.
fn parse_pip_index(text: &str) -> Result<Vec<String>> {
    let Some(line) = text.lines().find_map(|l| l.trim().strip_prefix("Available versions:")) else {
        bail!("no `Available versions:` line in {text:?}");
    };
    let versions: Vec<String> = line.split(',').map(str::trim).filter(|v| !v.is_empty()).map(str::to_owned).collect();
    if versions.is_empty() {
        bail!("the registry lists no version");
    }
    Ok(versions)
}

/// npm prints an array, or a bare string when there is one version.
fn parse_npm_view(bytes: &[u8]) -> Result<Vec<String>> {
    match serde_json::from_slice::<serde_json::Value>(bytes).context("not JSON")? {
        serde_json::Value::String(v) => Ok(vec![v]),
        serde_json::Value::Array(items) => {
            items.into_iter().map(|v| v.as_str().map(str::to_owned).context("a version that is not a string")).collect::<Result<Vec<_>>>()
        }
        other => bail!("expected a list of versions, got {other}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sorted(list: &[&str]) -> Vec<String> {
        let mut v: Vec<String> = list.iter().map(|s| (*s).to_owned()).collect();
        sort(&mut v);
        v
    }

    #[test]
    fn semver_tags_order_numerically_with_pre_releases_first() {
        assert_eq!(
            sorted(&["v0.10.0", "v0.9.1", "v0.1.0", "v0.1.0-rc.2", "v0.1.0-rc.10", "v0.2.0", "v1.0.0"]),
            ["v0.1.0-rc.2", "v0.1.0-rc.10", "v0.1.0", "v0.2.0", "v0.9.1", "v0.10.0", "v1.0.0"]
        );
    }

    #[test]
    fn pep_440_orders_dev_pre_final_post() {
        assert_eq!(
            sorted(&["1.0.post1", "1.0", "1.0rc1", "1.0a1", "1.0b2", "1.0.dev3", "0.9", "2025.9.25", "2025.12.18"]),
            ["0.9", "1.0.dev3", "1.0a1", "1.0b2", "1.0rc1", "1.0", "1.0.post1", "2025.9.25", "2025.12.18"]
        );
        assert_eq!(compare("1.0", "1.0.0"), Ordering::Less, "equal keys fall back to the text");
        assert_eq!(key("1.0"), key("1.0.0"));
    }

    #[test]
    fn prefixed_tags_order_within_their_prefix() {
        assert_eq!(
            sorted(&["Azure.Mcp.Server-2.0.0-beta.31", "Azure.Mcp.Server-2.0.0", "Azure.Mcp.Server-2.0.0-beta.4", "Azure.Mcp.Server-0.9.0"]),
            ["Azure.Mcp.Server-0.9.0", "Azure.Mcp.Server-2.0.0-beta.4", "Azure.Mcp.Server-2.0.0-beta.31", "Azure.Mcp.Server-2.0.0"]
        );
        assert_eq!(compare("v1.2.3", "1.2.3"), Ordering::Greater);
        assert_eq!(key("v1.2.3"), key("1.2.3"), "a leading v does not order");
        assert_eq!(compare("1.0.0+build.5", "1.0.0-rc.1"), Ordering::Greater);
        // Nonsense still orders, without panicking.
        assert_eq!(sorted(&["latest", "", "99999999999999999999999"]).len(), 3);
    }

    #[test]
    fn registry_outputs_parse() {
        assert_eq!(parse_pip_index("x (2.0)\nAvailable versions: 2.0, 1.0\n").unwrap(), ["2.0", "1.0"]);
        assert!(parse_pip_index("nothing").is_err());
        assert_eq!(parse_npm_view(br#"["0.1.0","0.2.0"]"#).unwrap(), ["0.1.0", "0.2.0"]);
        assert_eq!(parse_npm_view(br#""0.1.0""#).unwrap(), ["0.1.0"]);
        assert!(parse_npm_view(b"{}").is_err());
    }

    #[test]
    fn a_failing_registry_falls_back_to_a_cached_list_and_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let file = list_file(dir.path(), "pypi", "p");
        assert!(cached(&file, true, || bail!("offline")).is_err());
        let fresh = cached(&file, true, || Ok(vec!["0.10".into(), "0.9".into()])).unwrap();
        assert_eq!((fresh.versions.as_slice(), fresh.origin.as_str()), (&["0.9".to_owned(), "0.10".to_owned()][..], "registry"));
        let warm = cached(&file, false, || panic!("a warm run asks no registry")).unwrap();
        assert!(warm.origin.starts_with("cached list"), "{}", warm.origin);
        let stale = cached(&file, true, || bail!("offline")).unwrap();
        assert!(stale.origin.starts_with("STALE") && stale.origin.contains("offline"), "{}", stale.origin);
        assert_eq!(stale.versions.len(), 2);
    }
}
