//! fcd-runtime: the admission runtime ([`runtime`]: epochs, formation
//! authority, leases, revocation, the final-hop fence) on SQLite or on an
//! etcd cluster, and the registry of admitted summaries ([`registry`]) on
//! SQLite.
//!
//! It depends on `fcd-model` alone: the runtime never parses source.

pub mod registry;
pub mod runtime;

/// `if_test_hooks! { { ITEMS… } else { ITEMS… } }` expands the first items
/// when fcd-runtime is built with `test-hooks`, the second otherwise. It lets
/// a dependent crate (the CLI) define its hidden test flags only where the
/// hooks they call exist, without a feature of its own.
#[cfg(feature = "test-hooks")]
#[macro_export]
macro_rules! if_test_hooks {
    ({ $($on:item)* } else { $($off:item)* }) => { $($on)* };
}

/// `if_test_hooks! { { ITEMS… } else { ITEMS… } }` expands the first items
/// when fcd-runtime is built with `test-hooks`, the second otherwise. It lets
/// a dependent crate (the CLI) define its hidden test flags only where the
/// hooks they call exist, without a feature of its own.
#[cfg(not(feature = "test-hooks"))]
#[macro_export]
macro_rules! if_test_hooks {
    ({ $($on:item)* } else { $($off:item)* }) => { $($off)* };
}
