//! Why the runtime said no: a [`Refusal`] carries one of the reason codes
//! every part of fcd shares ([`fcd_model::refusal::RefusalCode`]), and a
//! failure of the store itself ([`StorageError`]) is kept apart from a
//! refusal of the request.

use fcd_model::refusal::RefusalCode;
use serde::Serialize;

/// The store failed (SQLite, randomness, or a value in the database that the
/// runtime cannot read). Not a judgement on the request: the CLI reports it
/// as an error, not as a refusal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StorageError {
    pub detail: String,
}

impl StorageError {
    pub fn new(detail: impl Into<String>) -> StorageError {
        StorageError { detail: detail.into() }
    }
}

impl From<rusqlite::Error> for StorageError {
    fn from(e: rusqlite::Error) -> StorageError {
        StorageError { detail: e.to_string() }
    }
}

impl std::fmt::Display for StorageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", RefusalCode::Storage.as_str(), self.detail)
    }
}

impl std::error::Error for StorageError {}

/// Why the runtime refused an operation: a reason code and words.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Refusal {
    pub code: RefusalCode,
    pub detail: String,
}

impl Refusal {
    /// Whether the store failed, rather than the request being refused.
    pub fn is_storage(&self) -> bool {
        self.code == RefusalCode::Storage
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code, self.detail)
    }
}

impl std::error::Error for Refusal {}

impl From<StorageError> for Refusal {
    fn from(e: StorageError) -> Refusal {
        Refusal { code: RefusalCode::Storage, detail: e.detail }
    }
}

impl From<rusqlite::Error> for Refusal {
    fn from(e: rusqlite::Error) -> Refusal {
        StorageError::from(e).into()
    }
}

/// `Err(Refusal)` with this code and words.
pub(crate) fn refuse<T>(code: RefusalCode, detail: impl Into<String>) -> Result<T, Refusal> {
    Err(Refusal { code, detail: detail.into() })
}
