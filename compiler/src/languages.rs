//! The dispatch table: which frontend crate reads a profile's language.
//!
//! `fcd-frontends`, the shared core, defines [`Lang`] and the [`Frontend`]
//! trait; each language is a crate of its own that depends on the core, so
//! the core cannot name them. The table that picks one lives here, in the
//! stage that runs the frontends, and nowhere else.

use fcd_frontends::{Frontend, Lang};

/// The frontend that reads `lang` (the JavaScript frontend reads TypeScript too).
pub fn frontend(lang: Lang) -> &'static dyn Frontend {
    match lang {
        Lang::Python => &fcd_frontend_python::Python,
        Lang::Go => &fcd_frontend_go::Go,
        Lang::CSharp => &fcd_frontend_csharp::CSharp,
        Lang::JavaScript | Lang::TypeScript => &fcd_frontend_javascript::JavaScript,
    }
}
