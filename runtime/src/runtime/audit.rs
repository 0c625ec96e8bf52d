//! The hash-chained audit log: every operation appends one canonical JSON
//! entry in its own transaction, each entry's hash covering the one before,
//! so an edited or dropped entry breaks the chain. Its sequence numbers also
//! order admissions against lifecycle moves for the invariant checks.

use rusqlite::{Connection, OptionalExtension, params};

use super::refusal::{Refusal, RefusalCode, StorageError, refuse};
use crate::canon;

fn chain(prev: &str, entry: &str) -> String {
    canon::sha256(format!("{prev}\n{entry}").as_bytes())
}

/// Appends an audit entry in the current transaction; returns its sequence number.
pub(crate) fn append(tx: &Connection, entry: &serde_json::Value) -> Result<i64, StorageError> {
    let text = String::from_utf8(canon::to_canonical(entry)).unwrap_or_default();
    let prev: String = tx.query_row("SELECT hash FROM audit ORDER BY seq DESC LIMIT 1", [], |r| r.get(0)).optional()?.unwrap_or_default();
    tx.execute("INSERT INTO audit (entry, prev, hash) VALUES (?1, ?2, ?3)", params![text, prev, chain(&prev, &text)])?;
    Ok(tx.last_insert_rowid())
}

/// The id SQLite gives the next row of `table` (an `INTEGER PRIMARY KEY`,
/// rows never deleted), so an audit entry written before the insert can name
/// it; [`same_id`] checks the insert got it.
pub(crate) fn next_id(tx: &Connection, table: &str) -> Result<i64, StorageError> {
    Ok(tx.query_row(&format!("SELECT COALESCE(MAX(id), 0) + 1 FROM {table}"), [], |r| r.get(0))?)
}

/// Fails (rolling the decision back) if the row just inserted did not get the id its audit entry names.
pub(crate) fn same_id(tx: &Connection, audited: i64) -> Result<i64, StorageError> {
    let got = tx.last_insert_rowid();
    if got != audited {
        return Err(StorageError::new(format!("the audit log names row {audited}, the store gave {got}")));
    }
    Ok(got)
}

/// Every entry's sequence number and canonical JSON text, in order.
pub(crate) fn entries(conn: &Connection) -> Result<Vec<(i64, String)>, StorageError> {
    let mut stmt = conn.prepare("SELECT seq, entry FROM audit ORDER BY seq")?;
    let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?.collect::<Result<_, _>>()?;
    Ok(rows)
}

/// Checks the chain; returns the number of entries.
pub(crate) fn verify(conn: &Connection) -> Result<usize, Refusal> {
    let mut stmt = conn.prepare("SELECT seq, entry, prev, hash FROM audit ORDER BY seq")?;
    let rows: Vec<(i64, String, String, String)> = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?.collect::<Result<_, _>>()?;
    let mut prev = String::new();
    for (seq, entry, stored_prev, hash) in &rows {
        if *stored_prev != prev || *hash != chain(&prev, entry) {
            return refuse(RefusalCode::AuditBroken, format!("audit entry {seq} does not follow from the one before"));
        }
        prev = hash.clone();
    }
    Ok(rows.len())
}
