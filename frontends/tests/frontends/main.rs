//! The shared core through every language, one test binary: the fact kinds
//! written once (guards, defaults, fields), the process-wide state check and
//! the table of which language reads which kind, each read through all four
//! frontends alike. Each language's own cases are its crate's test binary
//! (`frontends/<language>/tests/`). It links tree-sitter, the model and the
//! four frontends only.

mod ambient;
mod defaults;
mod fields;
mod guards;
mod support;

use fcd_frontends::{Frontend, Lang};

/// The frontend of a language, as the compiler's table picks it
/// (`fcd_compiler::languages`): the core cannot name the crates that depend on it.
pub fn frontend(lang: Lang) -> &'static dyn Frontend {
    match lang {
        Lang::Python => &fcd_frontend_python::Python,
        Lang::Go => &fcd_frontend_go::Go,
        Lang::CSharp => &fcd_frontend_csharp::CSharp,
        Lang::JavaScript | Lang::TypeScript => &fcd_frontend_javascript::JavaScript,
    }
}
