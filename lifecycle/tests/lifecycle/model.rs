//! The exhaustive model check of the admission protocol: every property of
//! the catalogue on every reachable state and transition of the model, and
//! the catalogue, the specified lifecycles and docs/lifecycle.md kept equal.

use std::time::Instant;

use fcd_lifecycle::explore::Graph;
use fcd_lifecycle::properties::{self, EPOCH_LIFECYCLE, LEASE_LIFECYCLE, PROPERTIES};
use fcd_lifecycle::protocol::Protocol;
use fcd_runtime::runtime::{EPOCH_TRANSITIONS, LEASE_TRANSITIONS};

#[test]
fn every_property_holds_on_every_reachable_state() {
    let protocol = Protocol::default();
    let g = Graph::explore(&protocol);
    // The model is the protocol at full size, not a toy: it must reach well beyond a few states.
    assert!(g.states.len() > 10_000, "{}", g.summary());
    let start = Instant::now();
    let mut held = 0;
    for p in properties::model_checked() {
        let one = Instant::now();
        let result = properties::check(&protocol, &g, p.id);
        eprintln!("{} checked in {:.2?}", p.id, one.elapsed());
        result.unwrap_or_else(|cex| panic!("{cex}"));
        held += 1;
    }
    eprintln!("model check: {}; {held} properties hold, checked in {:.2?}", g.summary(), start.elapsed());

    // The fairness assumptions are needed: with none, a gateway may hold its
    // lease forever, an operator never retire, an agent never ask again. So
    // the liveness check does find fair-cycle counterexamples where they exist.
    for id in ["L1", "L2", "F1"] {
        let cex = properties::liveness(&protocol, &g, id, &|_, _| None).unwrap().expect_err(id);
        assert!(!cex.path.is_empty(), "{cex}");
        eprintln!("{id} without fairness fails, as it must:\n{cex}");
    }
}

#[test]
fn the_runtime_tables_are_the_specified_lifecycles() {
    assert_eq!(EPOCH_TRANSITIONS, EPOCH_LIFECYCLE);
    assert_eq!(LEASE_TRANSITIONS, LEASE_LIFECYCLE);
}

#[test]
fn docs_lifecycle_lists_every_property() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/lifecycle.md")).unwrap();
    for p in PROPERTIES {
        let heading = format!("**{}** {}", p.id, p.name);
        assert!(doc.contains(&heading), "docs/lifecycle.md lacks `{heading}`");
        assert!(doc.contains(p.formula), "docs/lifecycle.md lacks the formula of {}: `{}`", p.id, p.formula);
    }
}
