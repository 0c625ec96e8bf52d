//! `[source]`: the globs that select a release's files and, for JavaScript,
//! the npm manifest the closure starts from.

use std::collections::BTreeMap;

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

use fcd_frontend_javascript::loader::EntrySpec;
use fcd_frontends::Lang;

use super::Validator;
use super::schema::{RawSource, Spanned};
use fcd_model::error::InputError;

impl Validator<'_> {
    /// The globs under `key`, each matching within path segments; every bad
    /// glob is recorded. `required`: the list may not be empty.
    pub(super) fn globs(&self, globs: &[Spanned<String>], key: &str, required: bool) -> Option<GlobSet> {
        if required && globs.is_empty() {
            self.report(format!("key `{key}`: list at least one glob"));
            return None;
        }
        let mut builder = GlobSetBuilder::new();
        let mut ok = true;
        for g in globs {
            match GlobBuilder::new(g.get_ref()).literal_separator(true).build() {
                Ok(glob) => {
                    builder.add(glob);
                }
                Err(e) => {
                    ok = false;
                    self.keep(self.err::<()>(g.span(), key, format!("bad glob: {e}")));
                }
            }
        }
        if !ok {
            return None;
        }
        let set = builder.build().ok();
        if set.is_none() {
            self.report(format!("key `{key}`: the globs do not compile together"));
        }
        set
    }

    /// `source.package` and `source.built`: JavaScript only, relative paths.
    pub(super) fn entry(&self, source: &RawSource, language: Lang) -> Result<Option<EntrySpec>, InputError> {
        let Some(manifest) = &source.package else {
            if !source.built.is_empty() {
                return Err(InputError::new(self.file, "key `source.built`: needs `source.package`"));
            }
            return Ok(None);
        };
        if language != Lang::JavaScript {
            return self.err(manifest.span(), "source.package", "only a `javascript` profile reads an npm manifest");
        }
        let relative = |p: &str| !p.is_empty() && !p.starts_with('/') && !p.split('/').any(|s| s == ".." || s == "." || s.is_empty());
        if !relative(manifest.get_ref()) {
            return self.err(manifest.span(), "source.package", "a `/`-separated path inside the release root");
        }
        for (from, to) in &source.built {
            if !relative(from) || !relative(to) {
                return self.err(manifest.span(), "source.built", format!("`{from}` = `{to}`: paths inside the release root"));
            }
        }
        let built = source.built.iter().map(|(a, b)| (a.clone(), b.clone())).collect();
        Ok(Some(EntrySpec { manifest: manifest.get_ref().clone(), built }))
    }

    /// `source.inert-attributes`: C# only, simple attribute names (`JsonSourceGenerationOptions`).
    pub(super) fn inert_attributes(&self, source: &RawSource, language: Lang) -> Result<Vec<String>, InputError> {
        let mut out = Vec::new();
        for a in &source.inert_attributes {
            if language != Lang::CSharp {
                return self.err(a.span(), "source.inert-attributes", "only a `csharp` profile lists attributes");
            }
            let name = a.get_ref();
            let simple = name.chars().next().is_some_and(|c| c.is_ascii_uppercase()) && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !simple || name.ends_with("Attribute") {
                return self.err(
                    a.span(),
                    "source.inert-attributes",
                    format!("`{name}` is not a simple attribute name as written (no namespace, no `Attribute` suffix)"),
                );
            }
            out.push(name.clone());
        }
        Ok(out)
    }

    /// `source.signal-listeners`: `sha256:` token digests, as `body` facts spell them.
    pub(super) fn signal_listeners(&self, source: &RawSource) -> Result<Vec<String>, InputError> {
        self.digests(&source.signal_listeners, "source.signal-listeners")
    }

    /// `source.registration-wrappers`: JavaScript only, `sha256:` digests
    /// of the wrappers of a registering method a reviewer read.
    pub(super) fn registration_wrappers(&self, source: &RawSource, language: Lang) -> Result<Vec<String>, InputError> {
        if let Some(first) = source.registration_wrappers.first().filter(|_| language != Lang::JavaScript) {
            return self.err(first.span(), "source.registration-wrappers", "only a `javascript` profile lists wrappers of a registering method");
        }
        self.digests(&source.registration_wrappers, "source.registration-wrappers")
    }

    /// A list of `sha256:` digests (64 lower-case hex digits) under `key`.
    fn digests(&self, list: &[Spanned<String>], key: &str) -> Result<Vec<String>, InputError> {
        let mut out = Vec::new();
        for d in list {
            let digest = d.get_ref();
            let hex = digest.strip_prefix("sha256:").unwrap_or_default();
            if hex.len() != 64 || !hex.chars().all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c)) {
                return self.err(d.span(), key, "list `sha256:` digests (64 lower-case hex digits)");
            }
            out.push(digest.clone());
        }
        Ok(out)
    }

    /// `source.pinned-functions`: JavaScript and Go, each a function of the
    /// release as the closed call path names it with the `sha256:` digests
    /// of the code it reaches that a reviewer read.
    pub(super) fn pinned_functions(&self, source: &RawSource, language: Lang) -> Result<BTreeMap<String, Vec<String>>, InputError> {
        let mut out = BTreeMap::new();
        for (f, digests) in &source.pinned_functions {
            let name = match language {
                Lang::Go => self.package_name(f)?,
                _ => self.release_function(f, "source.pinned-functions", language)?,
            };
            if digests.is_empty() {
                return self.err(f.span(), "source.pinned-functions", format!("`{name}` lists no digest: pin the code a reviewer read"));
            }
            out.insert(name, self.digests(digests, "source.pinned-functions")?);
        }
        Ok(out)
    }

    /// `source.unread-functions`: JavaScript only, each a function of the
    /// release as the closed call path names it, trusted by name; never one
    /// that `source.pinned-functions` pins.
    pub(super) fn unread_functions(&self, source: &RawSource, language: Lang) -> Result<Vec<String>, InputError> {
        let mut out = Vec::new();
        for f in &source.unread_functions {
            let name = self.release_function(f, "source.unread-functions", language)?;
            if source.pinned_functions.keys().any(|p| p.get_ref() == &name) {
                return self.err(
                    f.span(),
                    "source.unread-functions",
                    format!("`{name}` is pinned by digest in `source.pinned-functions`: do not trust it by name too"),
                );
            }
            out.push(name);
        }
        Ok(out)
    }

    /// A name of one of the release's other packages as the Go closed call
    /// path spells it: the package's directory relative to the module root,
    /// a dot, the name (`pkg/utils.NewToolResultError`); for the function
    /// literals a function installs around requests, the function, `#`, the
    /// installing API (`internal/ghmcp.NewMCPServer#AddReceivingMiddleware`).
    fn package_name(&self, f: &Spanned<String>) -> Result<String, InputError> {
        let name = f.get_ref();
        let ident = |w: &str| w.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_') && w.chars().all(|c| c.is_alphanumeric() || c == '_');
        let segment = |s: &str| !s.is_empty() && s != "." && s != ".." && s.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '~'));
        let (function, api) = name.split_once('#').map_or((name.as_str(), None), |(f, a)| (f, Some(a)));
        let spelled = api.is_none_or(ident) && function.rsplit_once('.').is_some_and(|(dir, last)| ident(last) && dir.split('/').all(segment));
        if !spelled {
            return self.err(
                f.span(),
                "source.pinned-functions",
                format!("`{name}` is not a name of a package of the release as the Go closed call path spells it (`pkg/utils.NewToolResultError`: the package's directory under the module root, a dot, the name)"),
            );
        }
        Ok(name.clone())
    }

    /// A function of the release as the closed call path names it (`f`,
    /// `Class.method`, `static Class.method`, `Class.constructor`), in a
    /// JavaScript profile.
    fn release_function(&self, f: &Spanned<String>, key: &str, language: Lang) -> Result<String, InputError> {
        if language != Lang::JavaScript {
            return self.err(f.span(), key, "only a `javascript` profile names functions of the release here");
        }
        let name = f.get_ref();
        let bare = name.strip_prefix("static ").unwrap_or(name);
        let word = |w: &str| !w.is_empty() && w.chars().all(|ch| ch.is_ascii_alphanumeric() || ch == '_' || ch == '$');
        if !(bare.split('.').count() <= 2 && bare.split('.').all(word)) || (bare != name && !bare.contains('.')) {
            return self.err(
                f.span(),
                key,
                format!("`{name}` is not a function of the release as the closed call path names it (`f`, `Class.method`, `static Class.method`)"),
            );
        }
        Ok(name.clone())
    }

    /// `source.read-only-callees`: JavaScript only, callee identities as an
    /// inventory spells them (`console.error`, `zod-to-json-schema:zodToJsonSchema`).
    pub(super) fn read_only_callees(&self, source: &RawSource, language: Lang) -> Result<Vec<String>, InputError> {
        let mut out = Vec::new();
        for c in &source.read_only_callees {
            if language != Lang::JavaScript {
                return self.err(c.span(), "source.read-only-callees", "only a `javascript` profile lists read-only callees");
            }
            let name = c.get_ref();
            let plain =
                |s: &str| !s.is_empty() && s.split('.').all(|w| !w.is_empty() && w.chars().all(|ch| ch.is_ascii_alphanumeric() || ch == '_' || ch == '$'));
            let spelled = match name.split_once(':') {
                Some((package, path)) => !package.is_empty() && !package.starts_with('.') && !package.contains(char::is_whitespace) && plain(path),
                None => plain(name),
            };
            if !spelled {
                return self.err(
                    c.span(),
                    "source.read-only-callees",
                    format!("`{name}` is not a callee identity of a global (`console.error`) or a package import (`PACKAGE:NAME`)"),
                );
            }
            out.push(name.clone());
        }
        Ok(out)
    }
}
