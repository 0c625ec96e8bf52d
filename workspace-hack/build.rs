//! Empty: cargo considers a crate's [build-dependencies] only when it has a
//! build script, and workspace-hack unifies build-dependency features too.
fn main() {}
