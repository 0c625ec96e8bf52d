//! fcd-gateway: `fcd gateway`, an MCP proxy in front of stock tool servers
//! that decides every `tools/call` before a server sees it. The client sees
//! the tools of each tool's source release, each with its policy; each call
//! is decided on the summary of the release that will run it against the
//! principal's contract ([`decide`]), formed with the successor the gateway
//! captured, admitted, checked at the final hop against what the server was
//! started from and what is configured now, and only then forwarded
//! ([`proxy`]). The configuration is one TOML file ([`config`]); what runs
//! is measured by [`measure`] and started by [`upstream`].
//!
//! It depends on the runtime and the verifier, never on a parser: a
//! gateway host builds no tree-sitter.

pub mod auth;
mod bound_store;
pub mod config;
pub mod decide;
pub mod framing;
pub mod http;
pub mod init;
mod listener;
pub mod measure;
mod oversized;
mod private_dir;
pub mod proxy;
pub mod refused;
mod steps;
mod store_file;
pub mod upstream;

pub use config::Config;
pub use http::serve_http;
pub use proxy::{Gateway, StartError, serve_stdio};
pub use refused::Refused;
