//! `fcd profile test`.

use std::path::PathBuf;

use super::{Format, Io, Status, print, print_json};
use crate::error::InputError;
use crate::profile_test;

#[derive(Debug, clap::Subcommand)]
pub enum ProfileCommand {
    /// Runs a profile against its fixtures and the outcomes declared in DIR/tests/*.toml.
    Test {
        /// The profile directory.
        dir: PathBuf,
        /// Output: text for people, or one JSON document.
        #[arg(long, value_enum, default_value_t)]
        format: Format,
    },
}

pub fn run(c: ProfileCommand, io: &mut Io<'_>) -> Result<Status, InputError> {
    let ProfileCommand::Test { dir, format } = c;
    let report = profile_test::run(&dir)?;
    match format {
        Format::Json => print_json(io, &serde_json::to_value(&report).unwrap_or_default())?,
        Format::Text => print(io, &report.to_text())?,
    }
    Ok(if report.passed() { Status::Success } else { Status::Refused })
}
