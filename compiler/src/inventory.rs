//! The call-site guard: every callee in a region must be in its reviewed inventory.
//!
//! Inventories hold identities, not positions or counts: moving a reviewed
//! call or calling it twice is the facts' business; calling anything new,
//! anything unresolved or anything dynamic escalates here.

use std::collections::BTreeSet;

use fcd_frontends::{Escalation, EscalationCode, Identity, RegionReport};

/// Checks each region's call sites against its inventory; the first call
/// outside it, in source order, escalates.
pub fn check<'p>(regions: &[RegionReport], inventory_of: impl Fn(&str) -> Option<&'p BTreeSet<String>>) -> Result<(), Escalation> {
    for region in regions {
        let empty = BTreeSet::new();
        let allowed = inventory_of(&region.name).unwrap_or(&empty);
        for call in &region.calls {
            match &call.identity {
                Identity::Path(path) if allowed.contains(path) => {}
                Identity::Path(path) => {
                    return Err(Escalation::new(
                        EscalationCode::InventoryViolation,
                        format!("region `{}` calls `{path}`, which is not in its reviewed inventory", region.name),
                        Some(call.anchor.clone()),
                    ));
                }
                Identity::Unresolved(text) => {
                    return Err(Escalation::new(
                        EscalationCode::InventoryViolation,
                        format!(
                            "region `{}` calls `{text}`, whose identity cannot be resolved (a local of unknown type or an unannotated parameter)",
                            region.name
                        ),
                        Some(call.anchor.clone()),
                    ));
                }
                Identity::Dynamic(text) => {
                    return Err(Escalation::new(
                        EscalationCode::DynamicCallee,
                        format!("region `{}` has a dynamic callee: {text}", region.name),
                        Some(call.anchor.clone()),
                    ));
                }
            }
        }
    }
    Ok(())
}
