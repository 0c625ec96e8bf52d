//! The dispatch table: which frontend crate reads a profile's language, and
//! the settings only that language reads.
//!
//! `fcd-frontends`, the shared core, defines [`Lang`] and the [`Frontend`]
//! trait; each language is a crate of its own that depends on the core, so
//! the core cannot name them. The table that picks one lives here, in the
//! stage that runs the frontends, and nowhere else.

use fcd_frontends::{Frontend, Lang, LanguageSettings};

use crate::profile::Profile;

/// The frontend that reads `lang` (the JavaScript frontend reads TypeScript too).
pub fn frontend(lang: Lang) -> &'static dyn Frontend {
    match lang {
        Lang::Python => &fcd_frontend_python::Python,
        Lang::Go => &fcd_frontend_go::Go,
        Lang::CSharp => &fcd_frontend_csharp::CSharp,
        Lang::JavaScript | Lang::TypeScript => &fcd_frontend_javascript::JavaScript,
    }
}

/// What the profile says that only its language's frontend reads, in that
/// frontend's own settings type (the core carries it as [`LanguageSettings`]).
pub fn settings(profile: &Profile) -> LanguageSettings {
    match profile.language {
        Lang::Python => LanguageSettings::default(),
        Lang::Go => LanguageSettings::new(fcd_frontend_go::Settings { imports: profile.imports.clone(), handoff: profile.handoff.clone() }),
        Lang::CSharp => LanguageSettings::new(fcd_frontend_csharp::Settings { inert_attributes: profile.inert_attributes.clone() }),
        Lang::JavaScript | Lang::TypeScript => LanguageSettings::new(fcd_frontend_javascript::Settings {
            helpers: profile.helpers.clone(),
            read_only_callees: profile.read_only_callees.clone(),
            pinned_functions: profile.pinned_functions.clone(),
            unread_functions: profile.unread_functions.clone(),
        }),
    }
}
