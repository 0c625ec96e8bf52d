//! Profiles: reviewed acceptance envelopes, read from TOML in two phases.
//!
//! Phase one deserializes the [`schema`] structs, which deny unknown keys, so
//! a typo is an error with line, column and the expected keys (toml's own
//! message). Phase two validates references and values into a [`Profile`]:
//! [`source`] (globs, npm entry), [`regions`] (regions, imports, inventories),
//! [`facts`] (one enum variant per fact kind, its keys read by [`fields`];
//! facts are read here, one by one, so a bad fact hides no other) and
//! [`rules`]. Phase two collects every error, each naming the file, the line
//! and the key, and reports them together. A profile is data over generic
//! fact kinds: adding one never needs Rust. Every key is documented in
//! `profiles/README.md`.

pub(crate) mod diagnose;

/// " (did you mean `X`?)" for a name close to one of `known`, else "".
pub use diagnose::did_you_mean;
mod facts;
mod fields;
#[cfg(test)]
mod load_checks;
mod regions;
mod rules;
mod schema;
mod shapes;
mod source;
#[cfg(test)]
mod tests;

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use globset::GlobSet;

use fcd_frontends::{FactSpec, Lang, RegionKind, RegionSpec};

use fcd_model::canon;
use fcd_model::error::{InputError, read_text};
use fcd_model::rules::{Rule, ValueType};
use fcd_model::summary::{ArgSpec, Envelope};
pub use schema::json_schema;

/// The file name of a profile inside its directory.
pub const PROFILE_FILE: &str = "profile.toml";

/// A rule as the profile writes it: the rule plus the facts it needs.
#[derive(Debug, Clone, PartialEq)]
pub struct RuleTemplate {
    /// The rule applies only when all these facts were found.
    pub requires: Vec<String>,
    /// The rule applies only when none of these facts were found.
    pub unless: Vec<String>,
    /// The rule applies only when these fact values (`FACT.KEY`) are these,
    /// decided when the summary is compiled.
    pub fact_equals: Vec<(String, String, serde_json::Value)>,
    /// (A `reject`) the fact where the handler refuses: `refused-at`, or the
    /// rule's required `guard` fact when it names none.
    pub refused_at: Option<String>,
    pub rule: Rule,
}

/// A fact the profile asks for and whether its absence escalates.
#[derive(Debug, Clone, PartialEq)]
pub struct FactRequest {
    pub spec: FactSpec,
    pub required: bool,
    /// Facts that must also be found when this one is (wiring that is all or nothing).
    pub implies: Vec<String>,
    /// (`call` with `matching`) The exhaustive facts on this callee in this
    /// region account for every call of it there: any other call escalates.
    pub exhaustive: bool,
}

/// A validated profile.
#[derive(Debug, Clone)]
pub struct Profile {
    /// The `profile.toml` it was read from.
    pub path: PathBuf,
    /// `sha256:` of the profile file's bytes: any edit is a new profile.
    pub digest: String,
    pub id: String,
    pub version: u32,
    pub language: Lang,
    pub tool: String,
    pub description: String,
    pub envelope: Envelope,
    pub arguments: BTreeMap<String, ArgSpec>,
    pub files: Vec<String>,
    pub globs: GlobSet,
    /// Files the globs select that are not part of the closure (tests, say).
    pub excluded: GlobSet,
    /// (JavaScript) the npm manifest the closure starts from, and build mappings.
    pub entry: Option<fcd_frontend_javascript::loader::EntrySpec>,
    pub regions: Vec<RegionSpec>,
    /// Package name -> accepted import-path patterns (`[imports]`).
    pub imports: BTreeMap<String, Vec<String>>,
    /// Region -> how its handler literal reaches its tool (`via`, `beside`, `wrapped-by`, `registered-by`).
    pub handoff: BTreeMap<String, fcd_frontend_go::Handoff>,
    /// Regions read only for what they call (`helper = true`).
    pub helpers: Vec<String>,
    /// (C#) type-level attributes reviewed as inert on plain model types (`source.inert-attributes`).
    pub inert_attributes: Vec<String>,
    /// (JavaScript) callees reviewed as only reading what they are handed (`source.read-only-callees`).
    pub read_only_callees: Vec<String>,
    /// (JavaScript) release functions pinned by the digests of the code they
    /// reach (`source.pinned-functions`).
    pub pinned_functions: BTreeMap<String, Vec<String>>,
    /// (JavaScript) release functions trusted by name (`source.unread-functions`): a debt.
    pub unread_functions: Vec<String>,
    /// Token digests of signal listeners a reviewer read (`source.signal-listeners`).
    pub signal_listeners: Vec<String>,
    /// (JavaScript) digests of wrappers of a registering method a reviewer
    /// read (`source.registration-wrappers`).
    pub registration_wrappers: Vec<String>,
    pub inventories: BTreeMap<String, BTreeSet<String>>,
    /// Region -> the callees of its inventory a reviewer read as having no
    /// effect: the only calls that may run before a refusal a `reject` relies on.
    pub no_effect: BTreeMap<String, BTreeSet<String>>,
    pub facts: Vec<FactRequest>,
    pub rules: Vec<RuleTemplate>,
    /// The reviewed shape these regions, inventories and facts describe, when
    /// the profile has several (`[shapes]`); `None` for a one-shape profile.
    pub shape: Option<String>,
    /// The profile's other reviewed shapes, each a whole profile of its own
    /// (same digest, arguments, envelope and rules; its own regions,
    /// inventories and facts). Registration picks the one that matches.
    pub alternatives: Vec<Profile>,
}

impl Profile {
    /// Loads `profile.toml` from a directory, or the TOML file itself.
    pub fn load(path: &Path) -> Result<Profile, InputError> {
        let file = if path.is_dir() { path.join(PROFILE_FILE) } else { path.to_owned() };
        let text = read_text(&file)?;
        Profile::parse(&file, &text)
    }

    /// Parses and validates profile text; `file` names it in errors. When
    /// validation finds several problems, the error holds them all, one per
    /// line in file order, each with its position (see [`joined`]).
    pub fn parse(file: &Path, text: &str) -> Result<Profile, InputError> {
        let mut raw: schema::RawProfile = toml::from_str(text).map_err(|e| {
            let message = diagnose::with_suggestion(e.message().trim_end());
            match e.span() {
                Some(span) => InputError::at_offset(file, text, span.start, format!("{message}\n{}", diagnose::snippet(text, span.start))),
                None => InputError::new(file, message),
            }
        })?;
        let shapes = std::mem::take(&mut raw.shapes);
        let shape_facts = raw.facts.keys().chain(shapes.values().flat_map(|s| s.get_ref().facts.keys())).cloned().collect();
        let v = Validator { file, text, errors: RefCell::new(Vec::new()), shape_facts, grammars: RefCell::default() };
        let base = raw.profile.shape.as_ref().map_or_else(|| "default".to_owned(), |s| s.get_ref().clone());
        if shapes.is_empty()
            && let Some(s) = &raw.profile.shape
        {
            v.keep(v.err::<()>(s.span(), "profile.shape", "names the top-level shape only when `[shapes]` adds others"));
        }
        // The shapes are checked once the top-level one is sound: an error in
        // what they share is reported once, not once per shape.
        let merged: Vec<(&String, schema::RawProfile)> =
            shapes.keys().filter_map(|name| v.keep(v.resolved(&raw, &shapes, name, &base, &mut Vec::new())).map(|m| (name, m))).collect();
        let profile = v.profile(raw);
        let mut alternatives = Vec::new();
        if v.errors.borrow().is_empty() {
            for (name, merged) in merged {
                if let Some(mut alternative) = v.profile(merged) {
                    alternative.shape = Some(name.clone());
                    alternatives.push(alternative);
                }
            }
        }
        let profile = profile.map(|mut p| {
            if !shapes.is_empty() {
                p.shape = Some(base);
                p.alternatives = alternatives;
            }
            p
        });
        match (profile, joined(v.errors.into_inner())) {
            (Some(profile), None) => Ok(profile),
            (_, Some(err)) => Err(err),
            (None, None) => Err(InputError::new(file, "the profile does not validate")),
        }
    }

    /// What the frontends are told beyond regions and facts.
    pub fn env(&self) -> fcd_frontends::Env {
        fcd_frontends::Env {
            tool: self.tool.clone(),
            reviewed: self
                .regions
                .iter()
                .filter_map(|r| match &r.kind {
                    RegionKind::Function(f) => Some(f.rsplit('.').next().unwrap_or(f).to_owned()),
                    _ => None,
                })
                .collect(),
            signal_listeners: self.signal_listeners.clone(),
            entries: None,
            alone: false,
            libraries: Default::default(),
            packages: Default::default(),
            unread: Default::default(),
            language: crate::languages::settings(self),
        }
    }

    /// The fact specifications to hand to a frontend.
    pub fn fact_specs(&self) -> Vec<FactSpec> {
        self.facts.iter().map(|f| f.spec.clone()).collect()
    }
}

/// Several errors as one: the first (in file order) carries the position,
/// and every further one follows on its own line, `file:line:column: reason`.
pub fn joined(mut errors: Vec<InputError>) -> Option<InputError> {
    errors.sort_by_key(|e| (e.line.unwrap_or(usize::MAX), e.column.unwrap_or(0)));
    errors.dedup();
    let mut iter = errors.into_iter();
    let mut first = iter.next()?;
    for e in iter {
        first.message.push('\n');
        first.message.push_str(&e.to_string());
    }
    Some(first)
}

/// Phase two: validates a [`schema::RawProfile`], recording every error.
struct Validator<'a> {
    file: &'a Path,
    text: &'a str,
    errors: RefCell<Vec<InputError>>,
    /// Every fact name of every shape: a rule may require a fact only some
    /// shapes define (it does not apply in the others).
    shape_facts: BTreeSet<String>,
    /// The SQL grammars `[interpreters]` lists, by dialect, for `sql-read` tests.
    grammars: RefCell<BTreeMap<String, fcd_model::sql::SqlGrammar>>,
}

/// A byte range of the profile text, for error positions.
type Span = std::ops::Range<usize>;

impl Validator<'_> {
    /// An error at the key written before the value at `span` (or at `span`
    /// itself when none is), with its source line and a caret.
    fn err<T>(&self, span: Span, key: &str, message: impl std::fmt::Display) -> Result<T, InputError> {
        let at = diagnose::key_at(self.text, span.start);
        let snippet = diagnose::snippet(self.text, at);
        Err(InputError::at_offset(self.file, self.text, at, format!("key `{key}`: {message}\n{snippet}")))
    }

    /// Records an error that has no position.
    fn report(&self, message: impl Into<String>) {
        self.errors.borrow_mut().push(InputError::new(self.file, message));
    }

    /// The value, or `None` with its error recorded.
    fn keep<T>(&self, result: Result<T, InputError>) -> Option<T> {
        result.map_err(|e| self.errors.borrow_mut().push(e)).ok()
    }

    fn unknown_of(&self, what: &str, name: &str, known: &BTreeSet<&str>) -> String {
        let known: Vec<&str> = known.iter().copied().collect();
        let hint = diagnose::did_you_mean(name, known.iter().copied());
        format!("{what} `{name}` is not defined (defined: {}){hint}", if known.is_empty() { "none".into() } else { known.join(", ") })
    }

    /// The whole profile, or `None` when any part has an error (recorded).
    fn profile(&self, raw: schema::RawProfile) -> Option<Profile> {
        let header = raw.profile;
        let id = header.id.get_ref().clone();
        if id.is_empty() || !id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
            self.keep(self.err::<()>(header.id.span(), "profile.id", "an id is ASCII letters, digits, `-` and `_`"));
        }
        // `profiles/<id>/profile.toml`: the directory names the profile.
        let dir = self.file.parent().and_then(Path::file_name).and_then(|d| d.to_str());
        if self.file.file_name().is_some_and(|f| f == PROFILE_FILE)
            && let Some(dir) = dir
            && dir != id
        {
            self.keep(self.err::<()>(header.id.span(), "profile.id", format!("`{id}` is not the name of the profile's directory, `{dir}`")));
        }
        let language = Lang::from_name(header.language.get_ref());
        if language.is_none() {
            let known: Vec<&str> = Lang::ALL.iter().map(|l| l.name()).collect();
            let hint = diagnose::did_you_mean(header.language.get_ref(), known.iter().copied());
            self.keep(self.err::<()>(
                header.language.span(),
                "profile.language",
                format!("`{}` has no frontend (known: {}){hint}", header.language.get_ref(), known.join(", ")),
            ));
        }
        for (key, value) in [
            ("structure", &raw.envelope.structure),
            ("arguments", &raw.envelope.arguments),
            ("effects", &raw.envelope.effects),
            ("unknown", &raw.envelope.unknown),
            ("completeness", &raw.envelope.completeness),
        ] {
            if value.trim().is_empty() {
                self.report(format!("key `envelope.{key}`: must say what was reviewed, not be empty"));
            }
        }

        let mut arguments = BTreeMap::new();
        for (name, spec) in &raw.arguments {
            let tokens = match spec.get_ref().tokens.as_deref().map(|p| (p, fcd_model::command_line::Retokenized::of(p))) {
                None => None,
                Some((_, Some(grammar))) => Some(grammar),
                Some((parser, None)) => {
                    let known = fcd_model::command_line::PARSERS.join(", ");
                    self.keep(self.err::<()>(
                        spec.span(),
                        &format!("arguments.{name}.tokens"),
                        format!("`{parser}` is not an option parser fcd reads tokens for ({known})"),
                    ));
                    None
                }
            };
            match ValueType::parse(&spec.get_ref().ty) {
                Some(ty) => {
                    arguments.insert(name.clone(), ArgSpec { ty, required: spec.get_ref().required, tokens });
                }
                None => {
                    self.keep(self.err::<()>(
                        spec.span(),
                        &format!("arguments.{name}.type"),
                        format!("`{}` is not one of string, integer, number, boolean, object, array", spec.get_ref().ty),
                    ));
                }
            }
        }

        let globs = self.globs(&raw.source.files, "source.files", true);
        let excluded = self.globs(&raw.source.exclude, "source.exclude", false);
        let entry = language.and_then(|language| self.keep(self.entry(&raw.source, language)));
        let inert_attributes = language.and_then(|language| self.keep(self.inert_attributes(&raw.source, language)));
        let read_only_callees = language.and_then(|language| self.keep(self.read_only_callees(&raw.source, language)));
        let pinned_functions = language.and_then(|language| self.keep(self.pinned_functions(&raw.source, language)));
        let unread_functions = language.and_then(|language| self.keep(self.unread_functions(&raw.source, language)));
        let signal_listeners = self.keep(self.signal_listeners(&raw.source));
        let registration_wrappers = language.and_then(|language| self.keep(self.registration_wrappers(&raw.source, language)));
        let regions = self.regions(&raw.regions, language);
        let imports = self.imports(&raw.imports);
        let inventories = self.inventories(&raw.inventory, &raw.regions);
        let (facts, facts_ok) = self.facts(&raw.facts, &raw.regions, language);
        self.callees_in_inventory(&raw.facts, &facts, &inventories);
        let facts = facts_ok.then_some(facts);
        let kinds = facts::kinds(&raw.facts);
        *self.grammars.borrow_mut() = self.interpreters(&raw.interpreters);
        let mut rules = Vec::new();
        for (i, rule) in raw.rules.iter().enumerate() {
            rules.extend(self.rule(i, rule, &kinds, &arguments));
        }
        if rules.len() == raw.rules.len() {
            self.shadowed(&raw.rules, &rules);
        }
        if raw.rules.is_empty() {
            self.report("key `rules`: a profile needs at least one rule");
        }
        if !self.errors.borrow().is_empty() {
            return None;
        }
        let (regions, handoff, helpers) = regions?;
        Some(Profile {
            path: self.file.to_owned(),
            digest: canon::sha256(self.text.as_bytes()),
            id,
            version: header.version,
            language: language?,
            tool: header.tool,
            description: header.description,
            envelope: raw.envelope,
            arguments,
            files: raw.source.files.iter().map(|g| g.get_ref().clone()).collect(),
            globs: globs?,
            excluded: excluded?,
            entry: entry?,
            regions,
            imports,
            handoff,
            helpers,
            inert_attributes: inert_attributes?,
            read_only_callees: read_only_callees?,
            pinned_functions: pinned_functions?,
            unread_functions: unread_functions?,
            signal_listeners: signal_listeners?,
            registration_wrappers: registration_wrappers?,
            inventories,
            no_effect: regions::no_effect(&raw.inventory),
            facts: facts?,
            rules,
            shape: None,
            alternatives: Vec::new(),
        })
    }
}
