//! `fcd profile test` and `fcd profile init`.

use std::path::PathBuf;

use fcd_frontends::Lang;

use super::{Format, Io, Status, print, print_json, write_atomic};
use crate::profile_test;
use fcd_model::error::InputError;

#[derive(Debug, clap::Subcommand)]
pub enum ProfileCommand {
    /// Runs a profile against its fixtures and the outcomes declared in DIR/tests/*.toml.
    Test {
        /// The profile directory.
        dir: PathBuf,
        /// Output: text for people (every case's decisions), or one JSON document.
        #[arg(long, value_enum, default_value_t)]
        format: Format,
        /// Only this case (repeatable); a case it compares its rules with runs too.
        #[arg(long = "case", value_name = "NAME")]
        cases: Vec<String>,
        /// Text output shows only the failed cases (the counts still cover every case run).
        #[arg(long)]
        failures: bool,
    },
    /// Writes a starting profile for one handler: its region, and its inventory filled in
    /// from the release's source; every word to review is a TODO and the one rule answers UNKNOWN.
    Init {
        /// The release's language: python, go, csharp, javascript or typescript.
        #[arg(long)]
        lang: String,
        /// Release root: unpacked sdist or npm package, or the repository at a tag.
        #[arg(long)]
        source: PathBuf,
        /// The handler function (the region `handler`).
        #[arg(long)]
        function: String,
        /// The MCP tool name the handler serves.
        #[arg(long)]
        tool: String,
        /// The new profile's directory (its name is the profile's id); it gets DIR/profile.toml,
        /// which must not exist yet. Without it, the profile is printed.
        #[arg(long)]
        out: Option<PathBuf>,
    },
}

pub fn run(c: ProfileCommand, io: &mut Io<'_>) -> Result<Status, InputError> {
    match c {
        ProfileCommand::Test { dir, format, cases, failures } => {
            let report = profile_test::run_cases(&dir, &cases)?;
            match format {
                Format::Json => print_json(io, &serde_json::to_value(&report).unwrap_or_default())?,
                Format::Text => print(io, &report.text(failures))?,
            }
            Ok(if report.passed() { Status::Success } else { Status::Refused })
        }
        ProfileCommand::Init { lang, source, function, tool, out } => {
            let language = Lang::from_name(&lang).ok_or_else(|| InputError::new("--lang", format!("no frontend for language `{lang}`")))?;
            let id = match &out {
                Some(dir) => dir.file_name().and_then(|n| n.to_str()).map(str::to_owned).ok_or_else(|| InputError::new(dir, "--out names no directory"))?,
                None => tool.replace('_', "-"),
            };
            let init = fcd_compiler::init::Init { lang: language, source: &source, function: &function, tool: &tool, id: &id };
            let text = fcd_compiler::init::starting_profile(&init)?;
            match out {
                Some(dir) => {
                    let file = dir.join(fcd_compiler::profile::PROFILE_FILE);
                    if file.exists() {
                        return Err(InputError::new(&file, "already exists: init writes a new profile only"));
                    }
                    std::fs::create_dir_all(&dir).map_err(|e| InputError::new(&dir, format!("cannot create: {e}")))?;
                    write_atomic(&file, text.as_bytes())?;
                    print(io, &format!("wrote {}\n", file.display()))?;
                }
                None => print(io, &text)?,
            }
            Ok(Status::Success)
        }
    }
}
