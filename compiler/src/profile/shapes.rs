//! `[shapes.NAME]`: further reviewed shapes of the same handler in one
//! profile. A release of an older or newer shape (a renamed function, a
//! classifier moved to another module) is reviewed once, and the review
//! carries over to every release of that shape.
//!
//! A shape is the top-level regions, imports, inventories and facts with its
//! own entries replacing or adding by name and `drop` removing some; the
//! arguments, envelope, source globs and rules are shared. Each shape is
//! validated as a whole profile, so its errors name their lines like any other.

use super::Validator;
use super::schema::{RawProfile, RawShape, Spanned};
use fcd_model::error::InputError;

impl Validator<'_> {
    /// The profile as shape `name` describes it.
    pub(super) fn shaped(&self, base: &RawProfile, name: &str, shape: &Spanned<RawShape>, base_name: &str) -> Result<RawProfile, InputError> {
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
                return self.err(d.span(), &format!("{key}.drop"), format!("`{}` is not in the top-level shape", d.get_ref()));
            }
        }
        merged.regions.extend(s.regions.clone());
        merged.imports.extend(s.imports.clone());
        for (k, v) in &s.inventory {
            merged.inventory.retain(|existing, _| existing.get_ref() != k.get_ref());
            merged.inventory.insert(k.clone(), v.clone());
        }
        merged.facts.extend(s.facts.clone());
        Ok(merged)
    }
}
