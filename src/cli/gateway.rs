//! `fcd gateway serve --config FILE`: the MCP gateway on stdio, in front of
//! the stock servers its configuration names (docs/gateway.md). It writes
//! nothing on stdout but MCP messages; a gateway that cannot start is an
//! input error (exit 2) naming why.

use std::path::PathBuf;

use super::{Io, Status};
use crate::error::InputError;

#[derive(Debug, clap::Subcommand)]
pub enum GatewayCommand {
    /// Serves MCP on stdio: every tools/call is formed, admitted, fenced and only then forwarded.
    Serve {
        /// The gateway's TOML configuration.
        #[arg(long)]
        config: PathBuf,
    },
}

pub fn run(c: GatewayCommand, _io: &mut Io<'_>) -> Result<Status, InputError> {
    let GatewayCommand::Serve { config: path } = c;
    let config = fcd_gateway::Config::load(&path)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| InputError::new(&path, format!("no async runtime: {e}")))?;
    runtime.block_on(async {
        let gateway = fcd_gateway::Gateway::start(config).await.map_err(|e| InputError::new(&path, e.to_string()))?;
        fcd_gateway::serve_stdio(gateway).await.map_err(|e| InputError::new(&path, e.to_string()))
    })?;
    Ok(Status::Success)
}
