//! `[regions]`, `[imports]` and `[inventory]`: the reviewed source spans, the
//! import paths a package may be reached by, and each region's callees.

use std::collections::{BTreeMap, BTreeSet};

use fcd_frontend_go::Handoff;
use fcd_frontends::{Lang, RegionKind, RegionSpec};

use super::Validator;
use super::schema::{RawInventory, RawRegion, Spanned};

/// The regions in name order, and region -> how its handler literal reaches its tool.
/// The helper regions' names come third.
pub(super) type Regions = (Vec<RegionSpec>, BTreeMap<String, Handoff>, Vec<String>);

impl Validator<'_> {
    /// Every region, or `None` when any is malformed (each error recorded).
    pub(super) fn regions(&self, raw: &BTreeMap<String, Spanned<RawRegion>>, language: Option<Lang>) -> Option<Regions> {
        let mut regions = Vec::new();
        let mut handoffs = BTreeMap::new();
        let mut helpers = Vec::new();
        let mut ok = true;
        for (name, region) in raw {
            let r = region.get_ref();
            let kind = match (&r.function, &r.variable, &r.route, &r.callback, &r.case) {
                (Some(f), None, None, None, None) if !f.is_empty() && r.literal => RegionKind::Literal(f.clone()),
                (Some(f), None, None, None, None) if !f.is_empty() => RegionKind::Function(f.clone()),
                (None, Some(v), None, None, None) if !v.is_empty() && !r.literal => RegionKind::Variable(v.clone()),
                (None, None, Some(t), None, None) if !t.is_empty() && !r.literal => RegionKind::Route(t.clone()),
                (None, None, None, Some(t), None) if !t.is_empty() && !r.literal => RegionKind::Callback(t.clone()),
                (None, None, None, None, Some(t)) if !t.is_empty() && !r.literal => RegionKind::Case(t.clone()),
                _ => {
                    ok = false;
                    self.keep(self.err::<()>(
                        region.span(),
                        &format!("regions.{name}"),
                        "a region names one `function` (optionally `literal = true`), one `variable`, one `route`, one `callback` or one `case` (each a tool name)",
                    ));
                    continue;
                }
            };
            // A kind the profile's language never finds is a profile error, not
            // the release's (the region could never be located).
            if let (Some((key, what, finders)), Some(language)) = (fcd_frontends::support::region_kind_languages(&kind), language)
                && !finders.contains(&language)
            {
                let mut names: Vec<&str> = finders.iter().map(|l| if *l == Lang::TypeScript { "javascript" } else { l.name() }).collect();
                names.dedup();
                let who = if names.len() == 1 { format!("only {} does", names[0]) } else { format!("{} do", names.join(" and ")) };
                ok = false;
                self.keep(self.err::<()>(
                    region.span(),
                    &format!("regions.{name}.{key}"),
                    format!("the {} frontend does not find {what} ({who})", language.name()),
                ));
                continue;
            }
            // Only the JavaScript closed call path follows each call to the
            // file whose definition it reaches; elsewhere `file` could pick a
            // body that is not the one that runs.
            if r.file.is_some() && !matches!(language, Some(Lang::JavaScript | Lang::TypeScript)) {
                ok = false;
                self.keep(self.err::<()>(
                    region.span(),
                    &format!("regions.{name}.file"),
                    "`file` is for JavaScript profiles, whose closed call path checks that each call reaches the definition in that file",
                ));
                continue;
            }
            if let Some(file) = &r.file
                && !is_release_path(file)
            {
                ok = false;
                self.keep(self.err::<()>(
                    region.span(),
                    &format!("regions.{name}.file"),
                    format!("`{file}` is not a file of the release: write its path from the release root as an escalation prints it (`dist/index.js`), `/`-separated, without `.` or `..`"),
                ));
                continue;
            }
            if let Some((key, why)) = handoff_problem(r, &kind) {
                ok = false;
                self.keep(self.err::<()>(region.span(), &format!("regions.{name}.{key}"), why));
                continue;
            }
            let list = |v: &Option<Vec<String>>| v.clone().unwrap_or_default();
            let handoff = Handoff {
                via: list(&r.via),
                factory: list(&r.factory),
                beside: list(&r.beside),
                converted_by: list(&r.converted_by),
                wrapped_by: list(&r.wrapped_by),
                registered_by: list(&r.registered_by),
            };
            if handoff != Handoff::default() {
                handoffs.insert(name.clone(), handoff);
            }
            if r.helper {
                if !matches!((&kind, language), (RegionKind::Function(_), Some(Lang::JavaScript))) {
                    ok = false;
                    self.keep(self.err::<()>(region.span(), &format!("regions.{name}.helper"), "a helper is a JavaScript `function` region"));
                    continue;
                }
                helpers.push(name.clone());
            }
            regions.push(RegionSpec { name: name.clone(), kind, optional: r.optional, file: r.file.clone() });
        }
        ok.then_some((regions, handoffs, helpers))
    }

    /// `[imports]`: package -> import-path patterns; bad patterns are recorded.
    pub(super) fn imports(&self, raw: &BTreeMap<String, Vec<Spanned<String>>>) -> BTreeMap<String, Vec<String>> {
        let mut imports = BTreeMap::new();
        for (name, patterns) in raw {
            for p in patterns {
                let ok = !p.get_ref().is_empty() && p.get_ref().split('/').all(|seg| !seg.is_empty());
                if !ok {
                    self.keep(self.err::<()>(p.span(), &format!("imports.{name}"), "an import-path pattern is `/`-separated segments, `*` within one segment"));
                }
            }
            imports.insert(name.clone(), patterns.iter().map(|p| p.get_ref().clone()).collect());
        }
        imports
    }

    /// `[inventory]`: one per region, each of a defined region.
    pub(super) fn inventories(
        &self,
        raw: &BTreeMap<Spanned<String>, RawInventory>,
        regions: &BTreeMap<String, Spanned<RawRegion>>,
    ) -> BTreeMap<String, BTreeSet<String>> {
        let region_names: BTreeSet<&str> = regions.keys().map(String::as_str).collect();
        let mut inventories = BTreeMap::new();
        for (name, inv) in raw {
            if !region_names.contains(name.get_ref().as_str()) {
                self.keep(self.err::<()>(name.span(), &format!("inventory.{}", name.get_ref()), self.unknown_of("region", name.get_ref(), &region_names)));
                continue;
            }
            if !inv.add.is_empty() || !inv.remove.is_empty() {
                let key = format!("inventory.{}", name.get_ref());
                self.keep(self.err::<()>(name.span(), &key, "`add` and `remove` patch a shape's inventory; the top-level one lists its `callees`"));
            }
            inventories.insert(name.get_ref().clone(), inv.callees.iter().cloned().collect());
            for callee in inv.no_effect.iter().filter(|c| !inv.callees.contains(c)) {
                let key = format!("inventory.{}.no-effect", name.get_ref());
                self.keep(self.err::<()>(
                    name.span(),
                    &key,
                    format!("`{callee}` is not one of the region's `callees`: only a reviewed callee can be reviewed as having no effect"),
                ));
            }
        }
        for (name, region) in regions {
            if !inventories.contains_key(name) {
                self.keep(self.err::<()>(region.span(), &format!("regions.{name}"), "has no `[inventory]`: every region needs its reviewed callees"));
            }
        }
        inventories
    }
}

/// Region -> the callees of its inventory reviewed as having no effect (`inventory.REGION.no-effect`).
pub(super) fn no_effect(raw: &BTreeMap<Spanned<String>, RawInventory>) -> BTreeMap<String, BTreeSet<String>> {
    raw.iter().map(|(name, inv)| (name.get_ref().clone(), inv.no_effect.iter().cloned().collect())).collect()
}

/// What is wrong with a region's handoff keys (`via`, `factory`, `beside`,
/// `converted-by`, `wrapped-by`, `registered-by`): the key and why.
fn handoff_problem(r: &RawRegion, kind: &RegionKind) -> Option<(&'static str, &'static str)> {
    let keys = [
        ("via", &r.via),
        ("factory", &r.factory),
        ("beside", &r.beside),
        ("converted-by", &r.converted_by),
        ("wrapped-by", &r.wrapped_by),
        ("registered-by", &r.registered_by),
    ];
    if let Some((key, _)) = keys.iter().find(|(_, v)| v.as_ref().is_some_and(|v| !matches!(kind, RegionKind::Literal(_)) || v.is_empty())) {
        return Some((
            key,
            "`via`, `factory`, `beside`, `converted-by`, `wrapped-by` and `registered-by` are non-empty lists of calls or types, for a handler literal (`literal = true`)",
        ));
    }
    if r.factory.is_some() && r.via.is_none() {
        return Some(("factory", "`factory` goes with `via`: the factory literal is what is passed to the call"));
    }
    if r.via.is_some() && r.beside.is_some() {
        return Some(("beside", "a handler literal is passed `via` a call or returned `beside` one, not both"));
    }
    if r.converted_by.is_some() && r.beside.is_none() {
        return Some(("converted-by", "`converted-by` goes with `beside`: the handler is converted, bound and returned beside the tool"));
    }
    if r.wrapped_by.is_some() && r.registered_by.is_none() {
        return Some(("wrapped-by", "`wrapped-by` needs `registered-by`: where the wrapper's result may go"));
    }
    None
}

/// Whether `path` names a file below a release root: relative, `/`-separated,
/// no empty, `.` or `..` segment (it is compared with the paths anchors print).
fn is_release_path(path: &str) -> bool {
    !path.starts_with('/') && !path.contains('\\') && path.split('/').all(|seg| !seg.is_empty() && seg != "." && seg != "..")
}
