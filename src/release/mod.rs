//! Official releases into a registry, for `fcd release add` and the release
//! job (`cargo xtask releases`): [`spec`] reads what to add and what the
//! profile's releases.toml lists, [`fetch`] downloads (or archives) and
//! verifies the artifact and unpacks it safely, and [`add`] registers it,
//! has a second process regenerate it and admits the epoch.

pub mod add;
pub mod fetch;
pub mod spec;
