//! The shared core through every language, one test binary: the fact kinds
//! written once (guards, defaults, fields), the process-wide state check and
//! the table of which language reads which kind, each read through all four
//! frontends alike, each picked by the compiler's table
//! (`fcd_compiler::languages::frontend`). Each language's own cases are its
//! crate's test binary (`frontends/<language>/tests/`). It links tree-sitter,
//! the model, the four frontends and the compiler: no SQLite, etcd or MCP SDK.

mod ambient;
mod defaults;
mod fields;
mod guards;
mod support;
