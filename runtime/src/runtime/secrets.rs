//! The store's two keys: the MAC key of lease tokens, created once per store
//! from the OS's randomness, and the public key of the resolver whose
//! signatures settle uncertain leases.

use ed25519_dalek::VerifyingKey;
use rusqlite::{Connection, OptionalExtension, params};

use super::refusal::StorageError;

/// The MAC key of this store, created once.
pub(crate) fn mac_key(conn: &Connection) -> Result<Vec<u8>, StorageError> {
    let existing: Option<Vec<u8>> = conn.query_row("SELECT value FROM secrets WHERE name = 'mac'", [], |r| r.get(0)).optional()?;
    if let Some(k) = existing {
        return Ok(k);
    }
    let mut key = vec![0u8; 32];
    getrandom::fill(&mut key).map_err(|e| StorageError::new(format!("no randomness: {e}")))?;
    conn.execute("INSERT OR IGNORE INTO secrets VALUES ('mac', ?1)", params![key])?;
    Ok(conn.query_row("SELECT value FROM secrets WHERE name = 'mac'", [], |r| r.get(0))?)
}

/// Registers the resolver's public key, replacing any before it.
pub(crate) fn set_resolver(conn: &Connection, key: &VerifyingKey) -> Result<(), StorageError> {
    conn.execute("INSERT OR REPLACE INTO secrets VALUES ('resolver', ?1)", params![key.as_bytes().to_vec()])?;
    Ok(())
}

/// The resolver's key, if one is registered and reads as an ed25519 key.
pub(crate) fn resolver(conn: &Connection) -> Result<Option<VerifyingKey>, StorageError> {
    let key: Option<Vec<u8>> = conn.query_row("SELECT value FROM secrets WHERE name = 'resolver'", [], |r| r.get(0)).optional()?;
    Ok(key.and_then(|k| <[u8; 32]>::try_from(k).ok()).and_then(|k| VerifyingKey::from_bytes(&k).ok()))
}
