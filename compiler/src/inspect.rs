//! What a frontend sees of a release through a profile, for `fcd debug
//! region`: every region located, every call site's resolved identity (in
//! the inventory's own spelling, ready to paste), and for every fact the
//! call sites that could be it and whether it was found, is absent, or the
//! first reason it escalates.
//!
//! It runs the same steps as registration (closure, frontends, guard) but
//! never stops at the first escalation: each region and each fact is
//! analysed on its own, with only the facts it refers to, so one problem
//! hides no other. It decides nothing; it only reports.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::Path;

use fcd_frontends::ir::ReachedCode;
use fcd_frontends::{Escalation, FactKind, FactSpec, Identity, RegionReport};

use crate::profile::Profile;
use crate::register::{Registration, Request, prepare};
use fcd_model::error::InputError;

/// One region as the frontend located it, or why it was not.
pub struct RegionView {
    pub name: String,
    pub located: Result<Option<RegionReport>, Escalation>,
    pub inventory: BTreeSet<String>,
}

/// One fact: the call sites that could be it, and what came of it.
pub struct FactView {
    pub name: String,
    pub kind: String,
    pub region: String,
    pub required: bool,
    /// The callee a `call` or `guard` fact looks for.
    pub callee: Option<String>,
    /// Call sites of its region whose identity is that callee (`file:line`).
    pub candidates: Vec<String>,
    /// With no candidate: the region's call-site identity closest to the callee (a typo, a moved call).
    pub closest: Option<String>,
    pub outcome: Result<Option<fcd_model::effect::Fact>, Escalation>,
}

/// The whole view.
pub struct View {
    pub profile: String,
    pub shape: String,
    /// The release's closure escalated before any region could be read.
    pub closure: Option<Escalation>,
    /// The regions read together escalated (then each is shown read alone).
    pub together: Option<Escalation>,
    pub regions: Vec<RegionView>,
    pub facts: Vec<FactView>,
    /// The files the frontend analysed as what the release runs (empty when the regions together escalated).
    pub loaded: Vec<String>,
    /// The release code the regions call that no region reads, once per
    /// callee, with the code it reaches (each region read alone).
    pub reached: Vec<ReachedCode>,
    /// The release's files as read, for [`View::closure_text`].
    files: Vec<fcd_frontends::SourceFile>,
}

/// The view of `source` through `profile` (its top-level shape, or the one
/// named), for every region or only `only`.
pub fn view(profile: &Profile, source: &Path, shape: Option<&str>, only: Option<&str>) -> Result<View, InputError> {
    let profile = match shape {
        None => profile,
        Some(name) if profile.shape.as_deref() == Some(name) => profile,
        Some(name) => profile.alternatives.iter().find(|p| p.shape.as_deref() == Some(name)).ok_or_else(|| {
            let known: Vec<&str> = profile.shape.iter().chain(profile.alternatives.iter().filter_map(|p| p.shape.as_ref())).map(String::as_str).collect();
            InputError::new(&profile.path, format!("no shape `{name}` (shapes: {})", if known.is_empty() { "none".into() } else { known.join(", ") }))
        })?,
    };
    if let Some(r) = only
        && !profile.regions.iter().any(|s| s.name == r)
    {
        let known: Vec<&str> = profile.regions.iter().map(|s| s.name.as_str()).collect();
        return Err(InputError::new(&profile.path, format!("no region `{r}` (regions: {})", known.join(", "))));
    }
    let mut view = View {
        profile: profile.id.clone(),
        shape: profile.shape.clone().unwrap_or_else(|| "default".into()),
        closure: None,
        together: None,
        regions: Vec::new(),
        facts: Vec::new(),
        loaded: Vec::new(),
        reached: Vec::new(),
        files: Vec::new(),
    };
    let request = Request { source: source.to_owned(), ..Request::default() };
    let prepared = match prepare(profile, &request)? {
        Ok(p) => p,
        Err(Registration::Escalated(e)) => {
            view.closure = Some(e);
            return Ok(view);
        }
        Err(Registration::Registered(_)) => unreachable!("preparing registers nothing"),
    };
    let parsed = fcd_frontends::parse_files(crate::languages::frontend(profile.language), &prepared.files);
    let env = prepared.env(profile);
    let wanted = |name: &str| only.is_none_or(|r| r == name);
    // Every region together, as registration reads them (the checks across
    // regions need all of them); when that escalates, each region alone, so
    // that the others still show.
    let together = fcd_frontends::analyze_parsed(&parsed, &profile.regions, &[], &env);
    let alone = fcd_frontends::Env { alone: true, ..env.clone() };
    match &together {
        Err(e) => view.together = Some(e.clone()),
        Ok(a) => view.loaded = a.loaded.clone(),
    }
    for spec in profile.regions.iter().filter(|r| wanted(&r.name)) {
        let read_alone = fcd_frontends::analyze_parsed(&parsed, std::slice::from_ref(spec), &[], &alone);
        for code in read_alone.iter().flat_map(|a| &a.reached) {
            if !view.reached.iter().any(|r| r.callee == code.callee) {
                view.reached.push(code.clone());
            }
        }
        let located = match &together {
            Ok(a) => Ok(a.regions.iter().find(|r| r.name == spec.name).cloned()),
            Err(_) => read_alone.map(|a| a.regions.into_iter().next()),
        };
        view.regions.push(RegionView { name: spec.name.clone(), located, inventory: profile.inventories.get(&spec.name).cloned().unwrap_or_default() });
    }
    // Facts are read with every region, or, when the regions together
    // escalate, with those that are located alone (a fact of another region
    // then shows that region's escalation).
    let regions: Vec<fcd_frontends::RegionSpec> = match &together {
        Ok(_) => profile.regions.clone(),
        Err(_) => profile
            .regions
            .iter()
            .filter(|r| {
                view.regions.iter().find(|v| v.name == r.name).map_or_else(
                    || fcd_frontends::analyze_parsed(&parsed, std::slice::from_ref(*r), &[], &alone).is_ok(),
                    |v| v.located.as_ref().is_ok_and(Option::is_some),
                )
            })
            .cloned()
            .collect(),
    };
    for request in profile.facts.iter().filter(|f| wanted(&f.spec.region)) {
        let spec = &request.spec;
        let facts = with_references(&profile.fact_specs(), spec);
        let outcome = match view.regions.iter().find(|v| v.name == spec.region).map(|v| &v.located) {
            Some(Err(e)) => Err(e.clone()),
            _ => fcd_frontends::analyze_parsed(&parsed, &regions, &facts, &alone).map(|a| a.facts.into_iter().find(|f| f.name == spec.name)),
        };
        let callee = match &spec.kind {
            FactKind::Call { callee, .. } | FactKind::Guard { callee, .. } => Some(callee.clone()),
            _ => None,
        };
        let sites = view.regions.iter().find(|r| r.name == spec.region).and_then(|r| r.located.as_ref().ok().cloned().flatten());
        let candidates = match (&callee, &sites) {
            (Some(c), Some(report)) => report
                .calls
                .iter()
                .filter(|s| matches!(&s.identity, Identity::Path(p) if p == c))
                .map(|s| format!("{}:{}", s.anchor.file, s.anchor.line))
                .collect(),
            _ => Vec::new(),
        };
        let closest = match (&callee, &sites) {
            (Some(c), Some(report)) if candidates.is_empty() => {
                let paths: Vec<&str> = report.calls.iter().filter_map(|s| if let Identity::Path(p) = &s.identity { Some(p.as_str()) } else { None }).collect();
                crate::profile::diagnose::closest(c, paths).map(str::to_owned)
            }
            _ => None,
        };
        view.facts.push(FactView {
            closest,
            name: spec.name.clone(),
            kind: spec.kind.name().to_owned(),
            region: spec.region.clone(),
            required: request.required,
            callee,
            candidates,
            outcome,
        });
    }
    view.files = prepared.files;
    Ok(view)
}

impl View {
    /// The text a pinned function's digest binds, for a reviewer to read:
    /// each definition it reaches, with its file and lines, in the order the
    /// digest hashes them. `Err` says why there is none.
    pub fn closure_text(&self, callee: &str) -> Result<String, String> {
        let Some(code) = self.reached.iter().find(|r| r.callee == callee || r.callee.strip_prefix("static ") == Some(callee)) else {
            let known: Vec<&str> = self.reached.iter().map(|r| r.callee.as_str()).collect();
            return Err(format!(
                "no region calls release code `{callee}` that no region reads (such callees here: {})",
                if known.is_empty() { "none".to_owned() } else { known.join(", ") }
            ));
        };
        let digest = code.digest.as_ref().map_err(|why| format!("`{callee}` cannot be pinned: {why}"))?;
        let mut t = format!("// `{}` reaches {}, digest {digest}\n", code.callee, definitions(code.definitions.len()));
        for (name, at) in &code.definitions {
            let text = self.files.iter().find(|f| f.path == at.file).map(|f| String::from_utf8_lossy(&f.bytes).into_owned()).unwrap_or_default();
            let _ = writeln!(t, "\n// {name}: {}:{}-{}", at.file, at.line, at.end_line);
            for line in text.lines().skip(at.line.saturating_sub(1) as usize).take((at.end_line + 1).saturating_sub(at.line) as usize) {
                let _ = writeln!(t, "{line}");
            }
        }
        Ok(t)
    }
}

fn definitions(n: usize) -> String {
    if n == 1 { "1 definition".into() } else { format!("{n} definitions") }
}

/// `fact` and every fact it refers to (a guard's `before`, a field's `sink`
/// and `from`, …), transitively, in the profile's order.
fn with_references(all: &[FactSpec], fact: &FactSpec) -> Vec<FactSpec> {
    let mut names = BTreeSet::from([fact.name.clone()]);
    // A `state:` argument is checked against the regions pinned by `body` facts.
    let state =
        matches!(&fact.kind, FactKind::Call { args: Some(args), .. } if args.iter().any(|a| matches!(a.shape, fcd_frontends::spec::ArgShape::State(_))));
    if state {
        names.extend(all.iter().filter(|f| matches!(f.kind, FactKind::Body { .. })).map(|f| f.name.clone()));
    }
    loop {
        let before = names.len();
        for f in all.iter().filter(|f| names.contains(&f.name)).cloned().collect::<Vec<_>>() {
            names.extend(references(&f.kind));
        }
        if names.len() == before {
            break;
        }
    }
    all.iter().filter(|f| names.contains(&f.name)).cloned().collect()
}

fn references(kind: &FactKind) -> Vec<String> {
    match kind {
        FactKind::Guard { before, .. } | FactKind::Hook { before, .. } => vec![before.clone()],
        FactKind::Field { sink, from, .. } => sink.iter().cloned().chain([from.clone()]).collect(),
        FactKind::Pass { sink, from } | FactKind::Flow { from, sink, .. } => vec![sink.clone(), from.clone()],
        FactKind::Map { from } => vec![from.clone()],
        _ => Vec::new(),
    }
}

impl View {
    /// The view as text for a person.
    pub fn to_text(&self) -> String {
        let mut t = String::new();
        let _ = writeln!(t, "profile {} (shape {})", self.profile, self.shape);
        if let Some(e) = &self.closure {
            let _ = writeln!(t, "the release's closure escalates before any region is read: {e}");
            return t;
        }
        if let Some(e) = &self.together {
            let _ = writeln!(t, "the regions read together escalate: {e}\n(each region below is read alone)");
        }
        for r in &self.regions {
            match &r.located {
                Err(e) => {
                    let _ = writeln!(t, "\nregion {}: not located: {e}", r.name);
                }
                Ok(None) => {
                    let _ = writeln!(t, "\nregion {}: absent (optional)", r.name);
                }
                Ok(Some(report)) => {
                    let _ = writeln!(t, "\nregion {} at {}:{}-{}", r.name, report.anchor.file, report.anchor.line, report.anchor.end_line);
                    let _ = writeln!(t, "  body digest {} (what a `body` fact of this region lists)", report.body_digest);
                    let mut called = BTreeSet::new();
                    let mut calls: Vec<&fcd_frontends::CallSite> = report.calls.iter().collect();
                    calls.sort_by(|a, b| (&a.anchor.file, a.anchor.line).cmp(&(&b.anchor.file, b.anchor.line)));
                    for call in calls {
                        let shown = call.identity.to_string();
                        let mark = match &call.identity {
                            Identity::Path(p) if r.inventory.contains(p) => "ok ",
                            Identity::Path(_) => "NEW",
                            _ => "ESC",
                        };
                        if let Identity::Path(p) = &call.identity {
                            called.insert(p.clone());
                        }
                        let _ = writeln!(t, "  {mark} {shown:<60} {}:{}", call.anchor.file, call.anchor.line);
                    }
                    let unused: Vec<&String> = r.inventory.iter().filter(|c| !called.contains(*c)).collect();
                    if !unused.is_empty() {
                        let _ = writeln!(t, "  inventory entries not called here: {}", unused.iter().map(|c| format!("`{c}`")).collect::<Vec<_>>().join(", "));
                    }
                    let paste: Vec<String> = called.iter().map(|c| format!("{c:?}")).collect();
                    let _ = writeln!(t, "  [inventory.{}]\n  callees = [{}]", r.name, paste.join(", "));
                }
            }
        }
        if !self.reached.is_empty() {
            let _ = writeln!(t, "\nrelease code the regions call that no region reads (`--closure NAME` prints what it reaches)");
        }
        for r in &self.reached {
            let _ = writeln!(t, "  {} (region {} at {}:{}): {}", r.callee, r.region, r.call.file, r.call.line, r.covered);
            match &r.digest {
                Ok(digest) => {
                    let _ = writeln!(t, "    reaches {}, digest {digest} (what `source.pinned-functions` lists)", definitions(r.definitions.len()));
                }
                Err(why) => {
                    let _ = writeln!(t, "    cannot be pinned: {why}");
                }
            }
        }
        if !self.facts.is_empty() {
            let _ = writeln!(t, "\nfacts");
        }
        for f in &self.facts {
            let required = if f.required { ", required" } else { "" };
            let _ = writeln!(t, "  {} ({} in {}{required})", f.name, f.kind, f.region);
            if let Some(c) = &f.callee {
                let sites = if f.candidates.is_empty() { "none".to_owned() } else { f.candidates.join(", ") };
                let _ = writeln!(t, "    candidates: call sites resolving to `{c}`: {sites}");
                if let Some(near) = &f.closest {
                    let _ = writeln!(t, "    did you mean `{near}`? (a call site of the region)");
                }
            }
            match &f.outcome {
                Ok(Some(found)) => {
                    let values: Vec<String> = found.values.iter().map(|(k, v)| format!("{k} = {}", serde_json::to_string(v).unwrap_or_default())).collect();
                    let _ = writeln!(t, "    found at {}:{}: {}", found.anchor.file, found.anchor.line, values.join(", "));
                }
                Ok(None) => {
                    let _ = writeln!(t, "    absent{}", if f.required { " (registration escalates fact_missing)" } else { "" });
                }
                Err(e) => {
                    let _ = writeln!(t, "    does not match: {e}");
                }
            }
        }
        t
    }
}
