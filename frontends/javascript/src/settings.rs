//! What a JavaScript profile says that only the JavaScript frontend reads:
//! the regions read only for what they call (`helper`), the callees a
//! reviewer read as never changing what they are handed
//! (`source.read-only-callees`), the functions pinned by the digest of
//! what they reach (`source.pinned-functions`) and those still trusted by
//! name (`source.unread-functions`), and the wrappers of a registering
//! method a reviewer read (`source.registration-wrappers`). The compiler builds them from the profile;
//! the core carries them in [`Env::language`].

use std::collections::BTreeMap;

use fcd_frontends::frontend::Env;

/// The JavaScript part of what a profile says beyond regions and facts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Settings {
    /// Regions read only for what they call: functions of the release on
    /// the call path whose module state is not trusted state.
    pub helpers: Vec<String>,
    /// Callee identities a reviewer read as never changing, keeping or
    /// calling back what they are handed (a logger, a schema printer):
    /// module state a region reads may be passed to them.
    pub read_only_callees: Vec<String>,
    /// Functions of the release a region may call although no region reads
    /// them, each with the digests of its closure a reviewer read
    /// (`source.pinned-functions`, see `pinned.rs`). Any other one escalates.
    pub pinned_functions: BTreeMap<String, Vec<String>>,
    /// Functions of the release a region may call although nothing reads
    /// or pins them (`source.unread-functions`): trusted by name, and listed
    /// so that the trust is seen. A debt: each should be pinned.
    pub unread_functions: Vec<String>,
    /// Digests of wrappers of a registering method a reviewer read
    /// (`source.registration-wrappers`, see `route.rs`): a replacement
    /// `server.registerTool = (…) => …` whose digest is listed is the
    /// reviewed code around every callback, not an escalation.
    pub registration_wrappers: Vec<String>,
}

/// What a profile that sets none says: no helper, nothing read-only, nothing pinned.
static NONE: Settings = Settings {
    helpers: Vec::new(),
    read_only_callees: Vec::new(),
    pinned_functions: BTreeMap::new(),
    unread_functions: Vec::new(),
    registration_wrappers: Vec::new(),
};

impl Settings {
    /// The JavaScript settings `env` carries (none set: nothing listed).
    pub(crate) fn of(env: &Env) -> &Settings {
        env.language.get::<Settings>().unwrap_or(&NONE)
    }
}
