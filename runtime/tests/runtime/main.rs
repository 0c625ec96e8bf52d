//! The runtime through its library interface, one test binary: the property
//! tests of DESIGN.md's invariants on SQLite and on a real etcd cluster, and
//! a store the runtime did not write itself. What goes through the `fcd`
//! binary (processes, faults, durability) is tested with it, in tests/system/.

mod etcd_access;
mod properties;
mod store;
