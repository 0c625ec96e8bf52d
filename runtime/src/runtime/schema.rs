//! The runtime's SQLite file: connection settings (WAL, full durability) and
//! the table definitions, created if missing. Every other module reads and
//! writes only the tables declared here.

use std::path::Path;

use rusqlite::Connection;

use super::refusal::StorageError;

/// The tables. `CREATE … IF NOT EXISTS`, so opening an existing store changes nothing.
const DDL: &str = "CREATE TABLE IF NOT EXISTS secrets (name TEXT PRIMARY KEY, value BLOB NOT NULL);
     CREATE TABLE IF NOT EXISTS epochs (
         epoch_id TEXT PRIMARY KEY, tool TEXT NOT NULL, artifact_digest TEXT NOT NULL, config_digest TEXT NOT NULL,
         summary_digest TEXT NOT NULL, state TEXT NOT NULL, revision INTEGER NOT NULL, drained_seq INTEGER, stale_seq INTEGER);
     CREATE TABLE IF NOT EXISTS evidence (
         id INTEGER PRIMARY KEY, kind TEXT NOT NULL, tool TEXT NOT NULL, args_digest TEXT,
         source_epoch TEXT NOT NULL, target_epoch TEXT NOT NULL, valid_from INTEGER NOT NULL, valid_until INTEGER NOT NULL,
         seq INTEGER NOT NULL, revoked INTEGER NOT NULL DEFAULT 0);
     CREATE TABLE IF NOT EXISTS formations (
         id INTEGER PRIMARY KEY, snapshot_digest TEXT NOT NULL, tool TEXT NOT NULL, args_digest TEXT NOT NULL,
         principal TEXT NOT NULL, source_epoch TEXT NOT NULL, successor_epoch TEXT, successor_evidence INTEGER,
         expires_at INTEGER NOT NULL, seq INTEGER NOT NULL, revoked INTEGER NOT NULL DEFAULT 0);
     CREATE TABLE IF NOT EXISTS leases (
         id INTEGER PRIMARY KEY, formation INTEGER NOT NULL, epoch TEXT NOT NULL, generation INTEGER NOT NULL,
         nonce TEXT NOT NULL, state TEXT NOT NULL, used INTEGER NOT NULL DEFAULT 0, admitted_seq INTEGER NOT NULL);
     CREATE TABLE IF NOT EXISTS resolutions (lease INTEGER PRIMARY KEY, outcome TEXT NOT NULL, signature TEXT NOT NULL);
     CREATE TABLE IF NOT EXISTS audit (seq INTEGER PRIMARY KEY AUTOINCREMENT, entry TEXT NOT NULL, prev TEXT NOT NULL, hash TEXT NOT NULL);";

/// Opens (creating if needed) the store at `path` with its tables.
pub(crate) fn open(path: &Path) -> Result<Connection, StorageError> {
    let conn = Connection::open(path)?;
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "synchronous", "FULL")?;
    conn.busy_timeout(std::time::Duration::from_secs(30))?;
    conn.execute_batch(DDL)?;
    Ok(conn)
}
