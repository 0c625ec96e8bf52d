//! The languages fcd reads: their names in profiles, which files each
//! parses and with which grammar. Plain data, below every frontend.

use std::fmt;

/// A source language with a frontend.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Lang {
    Python,
    Go,
    CSharp,
    /// JavaScript; a profile in this language also reads `.ts` files as TypeScript.
    JavaScript,
    TypeScript,
}

impl Lang {
    pub const ALL: [Lang; 5] = [Lang::Python, Lang::Go, Lang::CSharp, Lang::JavaScript, Lang::TypeScript];

    /// The name profiles use for the language.
    pub fn name(self) -> &'static str {
        match self {
            Lang::Python => "python",
            Lang::Go => "go",
            Lang::CSharp => "csharp",
            Lang::JavaScript => "javascript",
            Lang::TypeScript => "typescript",
        }
    }

    pub fn from_name(name: &str) -> Option<Lang> {
        Lang::ALL.into_iter().find(|l| l.name() == name)
    }

    /// Whether this language's frontend parses the file; others in a closure
    /// are read as data by the language's loader: Go's go.mod by
    /// [`crate::Frontend::loaded`], an npm manifest before parsing
    /// ([`crate::loader::Loaded::entries`]), a C# project by [`crate::Frontend::build_file`].
    pub fn parses(self, path: &str) -> bool {
        match self {
            Lang::Go => path.ends_with(".go"),
            Lang::JavaScript | Lang::TypeScript => [".js", ".mjs", ".cjs", ".ts", ".mts", ".cts", ".jsx", ".tsx"].iter().any(|e| path.ends_with(e)),
            _ => true,
        }
    }

    /// The grammar for one file of a release in this language: the JavaScript
    /// family reads an npm bundle (`.js`) and its TypeScript source (`.ts`) alike.
    pub fn for_file(self, path: &str) -> Lang {
        match self {
            Lang::JavaScript | Lang::TypeScript if path.ends_with(".ts") || path.ends_with(".mts") || path.ends_with(".cts") => Lang::TypeScript,
            Lang::JavaScript | Lang::TypeScript => Lang::JavaScript,
            other => other,
        }
    }
}

impl fmt::Display for Lang {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
