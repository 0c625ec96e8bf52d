//! Registration: one release of one profile, from source directory to summary
//! or escalation.
//!
//! The pipeline is DESIGN.md's: select the files, let the frontend locate
//! regions and extract facts, run the call-site guard, check required facts,
//! compile the summary. Any step that finds a shape outside the profile stops
//! with an [`Escalation`]; nothing is written by this module.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use fcd_frontends::{Escalation, EscalationCode};
use fcd_model::effect::Anchor;

use crate::closure;
use crate::inventory;
use crate::languages;
use crate::profile::Profile;
use crate::summary::{self, ReleaseBinding};
use fcd_model::canon;
use fcd_model::error::{InputError, read_json};
use fcd_model::summary::Summary;

/// What registration was asked to bind the summary to.
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// Release root: the unpacked sdist, npm package or repository at a tag.
    pub source: PathBuf,
    /// Release id; the source directory's name when not given.
    pub release: Option<String>,
    /// `sha256:HEX` of the official artifact.
    pub artifact_digest: Option<String>,
    /// The registered configuration, a JSON object ([`read_config`] reads one).
    pub config: Option<Config>,
}

/// A registered configuration: always a JSON object.
pub type Config = serde_json::Map<String, serde_json::Value>;

/// Reads a configuration file: a JSON object, else an error naming the file.
pub fn read_config(path: &Path) -> Result<Config, InputError> {
    match read_json(path)? {
        serde_json::Value::Object(config) => Ok(config),
        _ => Err(InputError::new(path, "a configuration is a JSON object")),
    }
}

/// The outcome of registering a release.
#[derive(Debug, Clone)]
pub enum Registration {
    Registered(Box<Summary>),
    Escalated(Escalation),
}

/// The digest of a registered configuration: canonical JSON of the object, `{}` when none.
pub fn config_digest(config: Option<&Config>) -> String {
    canon::digest(&config.cloned().unwrap_or_default())
}

/// Registers one release; input problems are errors, source shapes outside the
/// profile are escalations.
///
/// A profile with several reviewed shapes registers the release against each:
/// exactly one must match. None matching escalates with the reason of the
/// closest shape (the one whose analysis got furthest), the others' reasons
/// after it, each once, with the shapes it stopped (`the same` for the
/// closest's); two matching escalate as ambiguous: the choice is never left
/// to order.
pub fn register(profile: &Profile, req: &Request) -> Result<Registration, InputError> {
    if profile.alternatives.is_empty() {
        return register_shape(profile, req);
    }
    // Source globs, the closure and the language are shared by every shape:
    // the release is read and parsed once, then analysed under each shape.
    let release = match prepare(profile, req)? {
        Ok(release) => release,
        Err(escalated) => return Ok(escalated),
    };
    let parsed = fcd_frontends::parse_files(languages::frontend(profile.language), &release.files);
    let mut matched = Vec::new();
    let mut escalated: Vec<(&str, Escalation)> = Vec::new();
    for shape in std::iter::once(profile).chain(&profile.alternatives) {
        let name = shape.shape.as_deref().unwrap_or("default");
        match register_prepared(shape, req, &release, &parsed)? {
            Registration::Registered(summary) => matched.push((name, summary)),
            Registration::Escalated(e) => escalated.push((name, e)),
        }
    }
    Ok(match matched.as_slice() {
        [(_, summary)] => Registration::Registered(summary.clone()),
        [] => {
            // The first of the shapes that got furthest; the others' reasons follow.
            let best = escalated.iter().map(|(_, e)| progress(e)).max().unwrap_or(0);
            let index = escalated.iter().position(|(_, e)| progress(e) == best).unwrap_or(0);
            let (name, e) = escalated.remove(index);
            // Shapes that escalate for one reason are named together, once, so the
            // reason an author can act on is not lost among copies of it.
            let mut groups: Vec<(Vec<&str>, &str)> = Vec::new();
            for (n, o) in &escalated {
                match groups.iter_mut().find(|(_, detail)| *detail == o.detail) {
                    Some((names, _)) => names.push(n),
                    None => groups.push((vec![n], &o.detail)),
                }
            }
            let others: Vec<String> = groups
                .iter()
                .map(|(names, detail)| {
                    let names: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
                    format!("{}: {}", names.join(", "), if *detail == e.detail { "the same" } else { detail })
                })
                .collect();
            Registration::Escalated(Escalation::new(
                e.code,
                format!("no reviewed shape matches; the closest, `{name}`: {} (other shapes: {})", e.detail, others.join("; ")),
                e.anchor,
            ))
        }
        several => {
            let names: Vec<&str> = several.iter().map(|(n, _)| *n).collect();
            Registration::Escalated(Escalation::new(
                EscalationCode::ShapeMismatch,
                format!("the release matches {} reviewed shapes ({}): which one it has is ambiguous", names.len(), names.join(", ")),
                None,
            ))
        }
    })
}

/// How far an analysis got before it escalated: a shape whose regions were
/// all found but a fact was missing is closer than one whose region was not.
/// Facts are read only after every region, its inventory and surroundings
/// were accepted, so a fact whose flow or body does not hold (a shape
/// mismatch while facts were read) is as far as a missing fact, and further
/// than an unreviewed callee: its reason is the one an author can act on.
/// Between equals, the first shape wins.
fn progress(e: &Escalation) -> u8 {
    match e.code {
        EscalationCode::RegionMissing => 0,
        EscalationCode::ParseError | EscalationCode::RegionAmbiguous => 1,
        EscalationCode::ShapeMismatch if e.reading_facts => 4,
        EscalationCode::ShapeMismatch => 2,
        EscalationCode::InventoryViolation | EscalationCode::DynamicCallee => 3,
        EscalationCode::FactMissing => 4,
    }
}

/// A release read for registration: its closure's files, their digest and
/// (JavaScript) the entries the runtime starts from. The same for every shape.
pub(crate) struct Prepared {
    pub(crate) files: Vec<fcd_frontends::SourceFile>,
    closure: fcd_model::summary::Closure,
    pub(crate) entries: Option<Vec<String>>,
    /// The files loaded only as code the regions may reach, and the release's packages (`fcd_frontends::loader::Loaded`).
    pub(crate) libraries: std::collections::BTreeSet<String>,
    pub(crate) packages: BTreeMap<String, String>,
    pub(crate) unread: BTreeMap<String, String>,
}

/// Registers one release against one shape of a profile.
fn register_shape(profile: &Profile, req: &Request) -> Result<Registration, InputError> {
    let release = match prepare(profile, req)? {
        Ok(release) => release,
        Err(escalated) => return Ok(escalated),
    };
    let parsed = fcd_frontends::parse_files(languages::frontend(profile.language), &release.files);
    register_prepared(profile, req, &release, &parsed)
}

/// Reads the release's closure as the profile's source globs select it;
/// `Err` is an escalation (no file, a closure fcd does not interpret).
pub(crate) fn prepare(profile: &Profile, req: &Request) -> Result<Result<Prepared, Registration>, InputError> {
    if let Some(d) = &req.artifact_digest
        && !canon::is_sha256(d)
    {
        return Err(InputError::new(&req.source, format!("--artifact-digest `{d}` is not sha256: followed by 64 lower-case hex digits")));
    }
    let mut files = match closure::collect(&req.source, profile)? {
        Ok(files) => files,
        Err(e) => return Ok(Err(Registration::Escalated(e))),
    };
    if files.is_empty() {
        return Ok(Err(Registration::Escalated(Escalation::new(
            EscalationCode::RegionMissing,
            format!("no file of the release matches source.files [{}]", profile.files.join(", ")),
            None,
        ))));
    }
    // The closure is what the runtime loads: the package around the selected
    // files is analysed too, and the packaging files are digested.
    let loaded = match languages::load(&req.source, profile, &files)? {
        Ok(loaded) => loaded,
        Err(e) => return Ok(Err(Registration::Escalated(e))),
    };
    files.extend(loaded.sources);
    let libraries = loaded.libraries.iter().map(|f| f.path.clone()).collect();
    files.extend(loaded.libraries);
    files.sort_by(|a, b| a.path.cmp(&b.path));
    let mut digested: Vec<_> = files.iter().chain(&loaded.manifests).cloned().collect();
    digested.sort_by(|a, b| a.path.cmp(&b.path));
    let closure = closure::closure(&digested);
    Ok(Ok(Prepared { files, closure, entries: loaded.entries, libraries, packages: loaded.packages, unread: loaded.unread }))
}

impl Prepared {
    /// What the frontends are told of this release under `profile`: the profile's
    /// [`fcd_frontends::Env`] with what the loader found (entries, libraries, packages).
    pub(crate) fn env(&self, profile: &Profile) -> fcd_frontends::Env {
        fcd_frontends::Env {
            entries: self.entries.clone(),
            libraries: self.libraries.clone(),
            packages: self.packages.clone(),
            unread: self.unread.clone(),
            ..profile.env()
        }
    }
}

/// Registers a prepared release against one shape of a profile.
fn register_prepared(profile: &Profile, req: &Request, release: &Prepared, parsed: &fcd_frontends::Parsed<'_>) -> Result<Registration, InputError> {
    let name = match &req.release {
        Some(r) => r.clone(),
        None => req.source.canonicalize().ok().and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned())).unwrap_or_else(|| "unnamed".into()),
    };
    let binding = ReleaseBinding { release: name, artifact_digest: req.artifact_digest.clone(), config_digest: config_digest(req.config.as_ref()) };
    let (files, closure) = (&release.files, release.closure.clone());
    let env = release.env(profile);
    let analysis = match fcd_frontends::analyze_parsed(parsed, &profile.regions, &profile.fact_specs(), &env) {
        Ok(a) => a,
        Err(e) => return Ok(Registration::Escalated(e)),
    };
    if let Err(e) = inventory::check(&analysis.regions, |r| profile.inventories.get(r)) {
        return Ok(Registration::Escalated(e));
    }
    for request in profile.facts.iter().filter(|f| f.required) {
        if !analysis.facts.iter().any(|f| f.name == request.spec.name) {
            let region = analysis.regions.iter().find(|r| r.name == request.spec.region);
            return Ok(Registration::Escalated(Escalation::new(
                EscalationCode::FactMissing,
                format!("required fact `{}` ({}) is not in region `{}`", request.spec.name, describe(&request.spec.kind), request.spec.region),
                region.map(|r| r.anchor.clone()).or_else(|| files.first().map(|f| Anchor::at_line(&f.path, 1))),
            )));
        }
    }
    if let Err(e) = every_call_covered(profile, &analysis) {
        return Ok(Registration::Escalated(e));
    }
    // Wiring is all or nothing: a fact found without the facts it implies is a
    // partial wiring (registered but not bound, bound but not passed, …).
    for request in &profile.facts {
        let Some(present) = analysis.facts.iter().find(|f| f.name == request.spec.name) else { continue };
        for implied in &request.implies {
            if !analysis.facts.iter().any(|f| &f.name == implied) {
                return Ok(Registration::Escalated(Escalation::new(
                    EscalationCode::FactMissing,
                    format!("partial wiring: `{}` is present ({}:{}) but `{implied}` is missing", request.spec.name, present.anchor.file, present.anchor.line),
                    Some(present.anchor.clone()),
                )));
            }
        }
    }
    Ok(Registration::Registered(Box::new(summary::compile(profile, closure, analysis, binding))))
}

/// Where a profile reviews several shapes of calls to one callee (`matching`
/// facts marked `exhaustive`), each call of that callee in the region must be
/// one those facts found: a call of another shape (an added option, a second
/// sink) would otherwise go unseen beside the reviewed ones.
fn every_call_covered(profile: &Profile, analysis: &fcd_frontends::Analysis) -> Result<(), Escalation> {
    // (region, callee) -> the exhaustive facts on it, and the calls they found.
    type Shapes<'p> = (Vec<&'p str>, Vec<&'p Anchor>);
    let mut covered: BTreeMap<(&str, &str), Shapes<'_>> = BTreeMap::new();
    for request in profile.facts.iter().filter(|f| f.exhaustive) {
        let fcd_frontends::FactKind::Call { callee, .. } = &request.spec.kind else { continue };
        let entry = covered.entry((request.spec.region.as_str(), callee.as_str())).or_default();
        entry.0.push(&request.spec.name);
        entry.1.extend(analysis.facts.iter().filter(|f| f.name == request.spec.name).map(|f| &f.anchor));
    }
    for ((region, callee), (facts, anchors)) in covered {
        let Some(report) = analysis.regions.iter().find(|r| r.name == region) else { continue };
        let want = fcd_frontends::Identity::Path(callee.to_owned());
        if let Some(call) = report.calls.iter().find(|c| c.identity == want && !anchors.contains(&&c.anchor)) {
            return Err(Escalation::new(
                EscalationCode::ShapeMismatch,
                format!("region `{region}`: the call to `{callee}` at line {} has none of the reviewed shapes ({})", call.anchor.line, facts.join(", ")),
                Some(call.anchor.clone()),
            ));
        }
    }
    Ok(())
}

fn describe(kind: &fcd_frontends::FactKind) -> String {
    match kind {
        fcd_frontends::FactKind::Call { callee, .. } => format!("a call to `{callee}`"),
        fcd_frontends::FactKind::Guard { callee, .. } => format!("a guard testing `{callee}`"),
        fcd_frontends::FactKind::Default { argument, .. } => format!("how argument `{argument}` is read and defaulted"),
        fcd_frontends::FactKind::Field { field, .. } => format!("what the field `{field}` receives"),
        fcd_frontends::FactKind::Option { property, argument, .. } => format!("the option `{argument}` bound to the property `{property}`"),
        fcd_frontends::FactKind::Pass { sink, from } => format!("`{from}`'s value passed to `{sink}`"),
        fcd_frontends::FactKind::Map { from } => format!("the mapping of the parameter `{from}` feeds"),
        fcd_frontends::FactKind::Key { key } => format!("the template value of `{key}`"),
        fcd_frontends::FactKind::Flow { from, sink, .. } => format!("`{from}`'s value reaching `{sink}`"),
        fcd_frontends::FactKind::Table { row, member } => format!("whether row `{row}` holds `{member}`"),
        fcd_frontends::FactKind::Exit { returns, .. } => format!("a `return {returns}` under its reviewed comparisons"),
        fcd_frontends::FactKind::Body { .. } => "a reviewed body".to_owned(),
        fcd_frontends::FactKind::Hook { before, attribute, .. } => format!("the `{attribute}` hook on the object `{before}` calls through"),
    }
}

/// The JSON form of a registration, as DESIGN.md's CLI contract gives it.
pub fn registration_json(r: &Registration) -> Value {
    match r {
        Registration::Registered(s) => {
            let mut out = json!({
                "status": "registered",
                "profile": s.profile.id,
                "release": s.release,
                "summary_digest": s.summary_digest,
                "rules": s.rules,
                "facts": s.facts,
            });
            // Only a profile with several reviewed shapes says which one the release has.
            if let (Some(shape), Some(object)) = (&s.shape, out.as_object_mut()) {
                object.insert("shape".into(), json!(shape));
            }
            out
        }
        Registration::Escalated(e) => json!({ "status": "escalated", "reason": escalation_json(e) }),
    }
}

pub fn escalation_json(e: &Escalation) -> Value {
    json!({
        "code": e.code.as_str(),
        "detail": e.detail,
        "anchor": e.anchor.as_ref().map(|a| json!({"file": a.file, "line": a.line})),
    })
}
