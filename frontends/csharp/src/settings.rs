//! What a C# profile says that only the C# frontend reads: the attributes a
//! reviewer read as inert on a plain model type (`source.inert-attributes`).
//! The compiler builds them from the profile; the core carries them in
//! [`Env::language`].

use fcd_frontends::frontend::Env;

/// The C# part of what a profile says beyond regions and facts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Settings {
    /// Attributes a reviewer read as inert on a plain model type (the
    /// type's own attribute list only), by simple name without `Attribute`.
    pub inert_attributes: Vec<String>,
}

/// What a profile that sets none says: no attribute is inert.
static NONE: Settings = Settings { inert_attributes: Vec::new() };

impl Settings {
    /// The C# settings `env` carries (none set: nothing listed).
    pub(crate) fn of(env: &Env) -> &Settings {
        env.language.get::<Settings>().unwrap_or(&NONE)
    }
}
