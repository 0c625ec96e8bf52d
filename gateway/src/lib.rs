//! fcd-gateway: `fcd gateway`, an MCP proxy in front of stock tool servers
//! that puts every `tools/call` through the admission runtime. The client
//! sees the tool list of the epoch it formed against; each call is formed,
//! admitted, checked at the final hop against what is installed and
//! configured at that moment, and only then forwarded ([`proxy`]). The
//! configuration is one TOML file ([`config`]); what runs is measured by
//! [`measure`].
//!
//! It depends on the runtime and the verifier, never on a parser: a
//! gateway host builds no tree-sitter.

pub mod config;
pub mod measure;
pub mod proxy;

pub use config::Config;
pub use proxy::{Gateway, StartError, serve_stdio};
