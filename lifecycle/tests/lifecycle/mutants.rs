//! Every safety property is really tested: for each one a deliberately
//! broken protocol (`fcd-lifecycle`'s `mutants` feature, which only this
//! test build enables) must be caught by the model checker, which prints
//! the counterexample trace. A property no mutant can violate would not be
//! tested at all. (That the correct protocol keeps every one of these
//! properties is `lifecycle/tests/lifecycle/model.rs`.)

use std::collections::BTreeSet;
use std::process::Command;

use fcd_lifecycle::explore::Graph;
use fcd_lifecycle::mutant::Mutant;
use fcd_lifecycle::properties::{self, Group, PROPERTIES};
use fcd_lifecycle::protocol::Protocol;

#[test]
fn every_mutant_is_caught_with_a_counterexample_trace() {
    let results: Vec<(Mutant, String)> = std::thread::scope(|scope| {
        // Two threads: the machine has two cores.
        let halves: Vec<Vec<Mutant>> = vec![Mutant::ALL.iter().copied().step_by(2).collect(), Mutant::ALL.iter().copied().skip(1).step_by(2).collect()];
        let handles: Vec<_> = halves
            .into_iter()
            .map(|mutants| {
                scope.spawn(move || {
                    mutants
                        .into_iter()
                        .map(|m| {
                            let protocol = Protocol { mutant: Some(m) };
                            let id = m.breaks();
                            let label = format!("{id} ({})", properties::property(id).unwrap().name);
                            // Breadth-first until the first broken step: the shortest counterexample.
                            let Err(cex) = Graph::explore_until(&protocol, &label, properties::safety(id).unwrap()) else {
                                panic!("mutant {m:?} is not caught by {id}: the property is not tested");
                            };
                            assert!(cex.path.len() > 1, "mutant {m:?}: the counterexample has no steps:\n{cex}");
                            (m, format!("mutant {m:?}: {cex}"))
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    let mut caught = BTreeSet::new();
    for (m, trace) in &results {
        println!("{trace}");
        caught.insert(m.breaks());
    }
    let safety: BTreeSet<&str> = PROPERTIES.iter().filter(|p| p.group == Group::Safety).map(|p| p.id).collect();
    assert_eq!(caught, safety, "every safety property has a mutant that breaks it");
}

#[test]
fn only_test_builds_carry_the_mutants() {
    // `cargo build --release` compiles the normal graph, where fcd-lifecycle has no `mutants`;
    // this crate's tests turn it on through a dev-dependency on the crate itself.
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let tree = |package: &str, edges: &str| {
        let out = Command::new(&cargo)
            .args(["tree", "--offline", "-p", package, "-e", edges, "-i", "fcd-lifecycle"])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .expect("cargo tree runs");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let shipped = tree("fcd", "features,normal");
    assert!(shipped.contains("fcd-lifecycle feature \"default\"") && !shipped.contains("mutants"), "{shipped}");
    let tested = tree("fcd-lifecycle", "features");
    assert!(tested.contains("fcd-lifecycle feature \"mutants\""), "the check reads the feature graph: {tested}");
}
