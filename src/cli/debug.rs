//! `fcd debug`: views for profile authors.

use std::path::PathBuf;

use fcd_frontends::{Lang, SourceFile};

use super::{Io, Status, print};
use fcd_compiler::profile::Profile;
use fcd_model::error::InputError;

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
    /// Shows a release through a profile: every call site of each region with its resolved
    /// identity (ready to paste into an inventory), the candidates of each fact and whether
    /// it was found, is absent or the first reason it does not match. Decides nothing.
    Region {
        /// Profile directory or its profile.toml.
        #[arg(long)]
        profile: PathBuf,
        /// Release root: unpacked sdist or npm package, or the repository at a tag.
        #[arg(long)]
        source: PathBuf,
        /// Only this region and its facts (default: every region).
        #[arg(long)]
        region: Option<String>,
        /// The profile's shape to read the release with (default: the top-level one).
        #[arg(long)]
        shape: Option<String>,
        /// Print, instead, the text of the release code this callee reaches (each definition
        /// with its file and lines): what a `source.pinned-functions` digest binds, for review.
        #[arg(long, value_name = "NAME")]
        closure: Option<String>,
    },
}

pub fn run(c: DebugCommand, io: &mut Io<'_>) -> Result<Status, InputError> {
    let (file, lang) = match c {
        DebugCommand::Tree { file, lang } => (file, lang),
        DebugCommand::Region { profile, source, region, shape, closure } => {
            let profile = Profile::load(&profile)?;
            let view = fcd_compiler::inspect::view(&profile, &source, shape.as_deref(), region.as_deref())?;
            match closure {
                None => print(io, &view.to_text())?,
                Some(name) => print(io, &view.closure_text(&name).map_err(|why| InputError::new(&source, why))?)?,
            }
            return Ok(Status::Success);
        }
    };
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
