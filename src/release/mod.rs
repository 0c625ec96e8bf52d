//! Official releases into a registry, for `fcd release add`, `fcd profile
//! check-releases` and the release job (`cargo xtask releases`): [`spec`]
//! reads what to add, [`manifest`] what a profile's releases.toml lists,
//! [`fetch`] downloads (or archives) and verifies the artifact and unpacks it
//! safely, [`add`] registers it, has a second process regenerate it and
//! admits the epoch, and [`job`] checks each listed release against what
//! releases.toml and canonical.json expect of it.

pub mod add;
pub mod fetch;
pub mod job;
pub mod manifest;
pub mod spec;
