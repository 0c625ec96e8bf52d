//! The frontends through their public interface, one test binary: each
//! language's regions, callee identities and facts, and the fact kinds read
//! through all four languages alike. It links tree-sitter and the model
//! only, so editing a frontend rebuilds and reruns just this.

mod ambient;
mod common;
mod csharp;
mod defaults;
mod fields;
mod go;
mod guards;
mod javascript;
mod python;
