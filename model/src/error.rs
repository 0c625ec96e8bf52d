//! Input errors: what a person must fix before fcd can decide anything.
//!
//! Every error names the file, the line where one is known, and what is wrong.
//! The CLI maps all of them to exit code 2. Escalations and refusals are not
//! errors: they are outcomes (see `register` and `certify`).

use std::fmt;
use std::path::{Path, PathBuf};

/// A problem with an input file or argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputError {
    pub file: PathBuf,
    /// 1-based line, where one is known.
    pub line: Option<usize>,
    /// 1-based column, where one is known.
    pub column: Option<usize>,
    pub message: String,
}

impl InputError {
    pub fn new(file: impl AsRef<Path>, message: impl Into<String>) -> InputError {
        InputError { file: file.as_ref().to_owned(), line: None, column: None, message: message.into() }
    }

    pub fn at(file: impl AsRef<Path>, line: usize, column: usize, message: impl Into<String>) -> InputError {
        InputError { file: file.as_ref().to_owned(), line: Some(line), column: Some(column), message: message.into() }
    }

    /// The error at byte `offset` of `text`.
    pub fn at_offset(file: impl AsRef<Path>, text: &str, offset: usize, message: impl Into<String>) -> InputError {
        let (line, column) = line_col(text, offset);
        InputError::at(file, line, column, message)
    }

    /// A serde_json error, with its line and column.
    pub fn json(file: impl AsRef<Path>, err: &serde_json::Error) -> InputError {
        let message = strip_position(&err.to_string());
        if err.line() == 0 { InputError::new(file, message) } else { InputError::at(file, err.line(), err.column(), message) }
    }
}

/// 1-based line and column of a byte offset.
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

/// serde_json appends " at line L column C"; we print the position first instead.
fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(i) => message[..i].to_owned(),
        None => message.to_owned(),
    }
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
            if let Some(col) = self.column {
                write!(f, ":{col}")?;
            }
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for InputError {}

/// Reads a file as UTF-8 text, naming the file in any error.
pub fn read_text(path: &Path) -> Result<String, InputError> {
    let bytes = std::fs::read(path).map_err(|e| InputError::new(path, format!("cannot read: {e}")))?;
    text_of(path, bytes)
}

/// Bytes said to come from `path` as UTF-8 text, naming the file, line and
/// column of the first invalid byte.
pub fn text_of(path: &Path, bytes: Vec<u8>) -> Result<String, InputError> {
    String::from_utf8(bytes).map_err(|e| {
        let offset = e.utf8_error().valid_up_to();
        let text = String::from_utf8_lossy(&e.as_bytes()[..offset]).into_owned();
        InputError::at_offset(path, &text, offset, "not UTF-8 text")
    })
}

/// Reads a JSON file into a value, naming file, line and column on failure.
pub fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, InputError> {
    let text = read_text(path)?;
    serde_json::from_str(&text).map_err(|e| InputError::json(path, &e))
}

/// The 1-based line where `"key"` first appears in a JSON text, to point a
/// semantic error (a wrong type, an unknown key) at its place.
pub fn line_of_key(text: &str, key: &str) -> Option<usize> {
    let needle = format!("\"{key}\"");
    text.find(&needle).map(|i| line_col(text, i).0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_col_counts_from_one() {
        assert_eq!(line_col("ab\ncd", 4), (2, 2));
        assert_eq!(line_col("", 10), (1, 1));
    }

    #[test]
    fn display_names_file_line_and_column() {
        let e = InputError::at("p.toml", 3, 7, "unknown key `x`");
        assert_eq!(e.to_string(), "p.toml:3:7: unknown key `x`");
    }
}
