//! `fcd debug`: views for profile authors.

use std::path::PathBuf;

use fcd_frontends::{Lang, SourceFile};

use super::{Io, Status, print};
use crate::error::InputError;

#[derive(Debug, clap::Subcommand)]
pub enum DebugCommand {
    /// Prints the syntax tree of a file as the frontend sees it (named nodes, fields, positions).
    Tree {
        /// The source file to parse.
        file: PathBuf,
        /// Language of the file (python, go, csharp, javascript, typescript);
        /// by default, the one its extension names.
        #[arg(long)]
        lang: Option<String>,
    },
}

pub fn run(c: DebugCommand, io: &mut Io<'_>) -> Result<Status, InputError> {
    let DebugCommand::Tree { file, lang } = c;
    let lang = match lang {
        Some(name) => Lang::from_name(&name).ok_or_else(|| InputError::new(&file, format!("no frontend for language `{name}`")))?,
        None => by_extension(&file).ok_or_else(|| InputError::new(&file, "cannot tell the language from the extension: give --lang"))?,
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

/// The language a file's extension names.
fn by_extension(file: &std::path::Path) -> Option<Lang> {
    match file.extension()?.to_str()? {
        "py" | "pyi" => Some(Lang::Python),
        "go" => Some(Lang::Go),
        "cs" => Some(Lang::CSharp),
        "js" | "mjs" | "cjs" | "jsx" => Some(Lang::JavaScript),
        "ts" | "mts" | "cts" | "tsx" => Some(Lang::TypeScript),
        _ => None,
    }
}
