//! `fcd debug`: views for profile authors.

use std::path::PathBuf;

use fcd_frontends::{Lang, SourceFile};

use super::{Io, Status, print};
use crate::error::InputError;

#[derive(Debug, clap::Subcommand)]
pub enum DebugCommand {
    /// Prints the syntax tree of a file as the frontend sees it (named nodes, fields, positions).
    Tree {
        file: PathBuf,
        /// Language of the file.
        #[arg(long, default_value = "python")]
        lang: String,
    },
}

pub fn run(c: DebugCommand, io: &mut Io<'_>) -> Result<Status, InputError> {
    let DebugCommand::Tree { file, lang } = c;
    let Some(lang) = Lang::from_name(&lang) else {
        return Err(InputError::new(&file, format!("no frontend for language `{lang}`")));
    };
    let bytes = std::fs::read(&file).map_err(|e| InputError::new(&file, format!("cannot read: {e}")))?;
    let source = SourceFile { path: file.display().to_string(), bytes };
    match fcd_frontends::parse(lang, &source) {
        Ok(syntax) => {
            print(io, &syntax.root().to_sexp())?;
            print(io, "\n")?;
            Ok(Status::Success)
        }
        Err(e) => Err(InputError::new(&file, e.to_string())),
    }
}
