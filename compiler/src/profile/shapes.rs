//! `[shapes.NAME]`: further reviewed shapes of the same handler in one
//! profile. A release of an older or newer shape (a renamed function, a
//! classifier moved to another module) is reviewed once, and the review
//! carries over to every release of that shape.
//!
//! A shape is the top-level regions, imports, inventories and facts with its
//! own entries replacing or adding by name and `drop` removing some; the
//! arguments, envelope, source globs and rules are shared. A shape may be
//! written as a change of another shape (`extends`), and may patch an
//! inventory by entry (`add`, `remove`) instead of replacing it. Each shape
//! is validated as a whole profile, so its errors name their lines like any other.

use std::collections::BTreeMap;

use super::Validator;
use super::schema::{RawProfile, RawShape, Spanned};
use fcd_model::error::InputError;

impl Validator<'_> {
    /// The profile as shape `name` describes it: the top-level shape, or the
    /// shape it `extends` (itself resolved so, without cycles), changed by it.
    pub(super) fn resolved(
        &self,
        top: &RawProfile,
        shapes: &BTreeMap<String, Spanned<RawShape>>,
        name: &str,
        base_name: &str,
        seen: &mut Vec<String>,
    ) -> Result<RawProfile, InputError> {
        let shape = &shapes[name];
        let from = match &shape.get_ref().extends {
            None => top.clone(),
            Some(other) if other.get_ref() == base_name => top.clone(),
            Some(other) => {
                let key = format!("shapes.{name}.extends");
                if !shapes.contains_key(other.get_ref()) {
                    let known: Vec<&str> = shapes.keys().map(String::as_str).chain([base_name]).collect();
                    return self.err(other.span(), &key, format!("no shape `{}` (shapes: {})", other.get_ref(), known.join(", ")));
                }
                if seen.iter().any(|s| s == other.get_ref()) || other.get_ref() == name {
                    return self.err(other.span(), &key, format!("`{}` extends, through other shapes, `{name}` itself", other.get_ref()));
                }
                seen.push(name.to_owned());
                self.resolved(top, shapes, other.get_ref(), base_name, seen)?
            }
        };
        self.shaped(&from, name, shape, base_name)
    }

    /// `shape` applied to `base`.
    fn shaped(&self, base: &RawProfile, name: &str, shape: &Spanned<RawShape>, base_name: &str) -> Result<RawProfile, InputError> {
        let key = format!("shapes.{name}");
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
            return self.err(shape.span(), &key, "a shape's name is ASCII letters, digits, `-` and `_`");
        }
        if name == base_name {
            return self.err(shape.span(), &key, format!("`{name}` is already the top-level shape's name (`profile.shape`)"));
        }
        let s = shape.get_ref();
        if s.description.trim().is_empty() {
            return self.err(shape.span(), &format!("{key}.description"), "must say what the shape is and which reviewed release it comes from");
        }
        let mut merged = base.clone();
        for d in &s.drop {
            let removed = match d.get_ref().split_once('.') {
                Some(("regions", n)) => merged.regions.remove(n).is_some(),
                Some(("facts", n)) => merged.facts.remove(n).is_some(),
                Some(("imports", n)) => merged.imports.remove(n).is_some(),
                Some(("inventory", n)) => {
                    let before = merged.inventory.len();
                    merged.inventory.retain(|k, _| k.get_ref() != n);
                    merged.inventory.len() != before
                }
                _ => {
                    return self.err(
                        d.span(),
                        &format!("{key}.drop"),
                        format!("`{}` is not `regions.NAME`, `inventory.NAME`, `facts.NAME` or `imports.NAME`", d.get_ref()),
                    );
                }
            };
            if !removed {
                return self.err(d.span(), &format!("{key}.drop"), format!("`{}` is not in the shape this one starts from", d.get_ref()));
            }
        }
        merged.regions.extend(s.regions.clone());
        merged.imports.extend(s.imports.clone());
        for (k, v) in &s.inventory {
            let ikey = format!("{key}.inventory.{}", k.get_ref());
            let patch = !v.add.is_empty() || !v.remove.is_empty();
            if patch && !v.callees.is_empty() {
                return self.err(
                    k.span(),
                    &ikey,
                    "an inventory either lists `callees` (replacing the one the shape starts from) or patches it with `add` and `remove`, not both",
                );
            }
            let mut entry = v.clone();
            if patch {
                let Some(current) = merged.inventory.iter().find(|(existing, _)| existing.get_ref() == k.get_ref()).map(|(_, i)| i.clone()) else {
                    return self.err(k.span(), &ikey, "`add` and `remove` patch an inventory the shape starts from, and there is none of this name");
                };
                entry = current;
                for r in &v.remove {
                    if !entry.callees.contains(r) {
                        return self.err(k.span(), &format!("{ikey}.remove"), format!("`{r}` is not in the inventory the shape starts from"));
                    }
                    entry.callees.retain(|c| c != r);
                    entry.no_effect.retain(|c| c != r);
                }
                for a in &v.add {
                    if entry.callees.contains(a) {
                        return self.err(k.span(), &format!("{ikey}.add"), format!("`{a}` is already in the inventory the shape starts from"));
                    }
                    entry.callees.push(a.clone());
                }
                // `no-effect` beside a patch adds to the list it starts from.
                entry.no_effect.extend(v.no_effect.iter().filter(|n| !entry.no_effect.contains(n)).cloned().collect::<Vec<_>>());
            }
            merged.inventory.retain(|existing, _| existing.get_ref() != k.get_ref());
            merged.inventory.insert(k.clone(), entry);
        }
        merged.facts.extend(s.facts.clone());
        Ok(merged)
    }
}
