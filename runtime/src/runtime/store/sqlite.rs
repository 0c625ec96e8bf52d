//! The embedded store: one SQLite file (WAL) on one host. A decision runs
//! inside one `BEGIN IMMEDIATE` transaction: no other writer can change what
//! it reads before it commits, so it runs exactly once, and a crash leaves
//! the whole decision or none of it.
//!
//! Every commit is fsynced (`synchronous = FULL`) unless the store was
//! opened with [`CallDurability::ProcessCrash`]: then per-call commits
//! (formation, admission, fence, completion) are written to the WAL without
//! fsync (`synchronous = NORMAL`), which a crash of the process survives and
//! a crash of the host may undo. A completion ([`Commit::Closing`]) is
//! written without fsync in either mode: the next fsynced commit, a
//! [`Store::flush`] or the store's close puts it on stable storage. WAL
//! frames carry cumulative checksums and recovery stops at the first frame
//! that does not verify, so what a host crash undoes is always a suffix of
//! the history: the commits after the last fsync, which every durable
//! commit (authority, lifecycle) performs.
//! Such a writer registers itself in `call_writers` (with the host's boot id
//! and its pid) durably before its first unsynced commit and removes itself
//! durably when it closes; a writer found there from an earlier boot was
//! open when its host went down, so calls may be missing from the store, and
//! [`View::lost_calls`] says so until an operator acknowledges it.

use std::path::Path;

use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

use super::super::audit;
use super::super::audit::AuditEntry;
use super::super::refusal::{Refusal, StorageError};
use super::super::state::{LeaseState, State};
use super::{
    CallDurability, Commit, DecideFn, EpochRecord, EvidenceKind, EvidenceRecord, FormationRecord, IdKind, LeaseRecord, Store, StoredLease, View, Write,
};

/// The tables. `CREATE … IF NOT EXISTS`, so opening an existing store changes nothing.
const DDL: &str = "CREATE TABLE IF NOT EXISTS secrets (name TEXT PRIMARY KEY, value BLOB NOT NULL);
     CREATE TABLE IF NOT EXISTS epochs (
         epoch_id TEXT PRIMARY KEY, tool TEXT NOT NULL, artifact_digest TEXT NOT NULL, config_digest TEXT NOT NULL,
         summary_digest TEXT NOT NULL, state TEXT NOT NULL, revision INTEGER NOT NULL, drained_seq INTEGER, stale_seq INTEGER);
     CREATE TABLE IF NOT EXISTS evidence (
         id INTEGER PRIMARY KEY, kind TEXT NOT NULL, tool TEXT NOT NULL, args_digest TEXT, principal TEXT,
         source_epoch TEXT NOT NULL, target_epoch TEXT NOT NULL, valid_from INTEGER NOT NULL, valid_until INTEGER NOT NULL,
         seq INTEGER NOT NULL, revoked INTEGER NOT NULL DEFAULT 0);
     CREATE TABLE IF NOT EXISTS formations (
         id INTEGER PRIMARY KEY, snapshot_digest TEXT NOT NULL, tool TEXT NOT NULL, args_digest TEXT NOT NULL,
         principal TEXT NOT NULL, source_epoch TEXT NOT NULL, successor_epoch TEXT, successor_evidence INTEGER,
         expires_at INTEGER NOT NULL, seq INTEGER NOT NULL, revoked INTEGER NOT NULL DEFAULT 0, latest_lease INTEGER);
     CREATE TABLE IF NOT EXISTS leases (
         id INTEGER PRIMARY KEY, formation INTEGER NOT NULL, epoch TEXT NOT NULL, generation INTEGER NOT NULL,
         nonce TEXT NOT NULL, state TEXT NOT NULL, used INTEGER NOT NULL DEFAULT 0, admitted_seq INTEGER NOT NULL);
     CREATE TABLE IF NOT EXISTS resolutions (lease INTEGER PRIMARY KEY, outcome TEXT NOT NULL, signature TEXT NOT NULL);
     CREATE TABLE IF NOT EXISTS audit (seq INTEGER PRIMARY KEY AUTOINCREMENT, entry TEXT NOT NULL, prev TEXT NOT NULL, hash TEXT NOT NULL);
     CREATE TABLE IF NOT EXISTS call_writers (id TEXT PRIMARY KEY, boot TEXT NOT NULL, pid INTEGER NOT NULL);";

/// The SQLite store.
pub(crate) struct SqliteStore {
    conn: Connection,
    durability: CallDurability,
    /// The connection's `synchronous` setting now (`FULL` or `NORMAL`).
    synchronous: &'static str,
    /// The host's boot id, where the host tells it.
    boot: Option<String>,
    /// This store's row in `call_writers` (process-crash durability only).
    writer: Option<String>,
    /// Whether a commit since the last fsync was written without one.
    unsynced: bool,
}

/// The host's boot id: it changes on every boot, so a writer recorded with
/// another one was open when its host went down.
fn boot_id() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok().map(|s| s.trim().to_owned()).filter(|s| !s.is_empty())
}

/// Whether process `pid` of this boot is still running.
fn alive(pid: i64) -> bool {
    pid == i64::from(std::process::id()) || Path::new(&format!("/proc/{pid}")).exists()
}

impl SqliteStore {
    /// Opens (creating if needed) the store at `path` with its tables;
    /// per-call commits as durable as `durability` says.
    pub(crate) fn open(path: &Path, durability: CallDurability) -> Result<SqliteStore, StorageError> {
        let conn = Connection::open(path)?;
        // Every statement is prepared once per connection and kept (prepare_cached): a decision's
        // dozen statements were parsed again on every call, a large share of its time.
        conn.set_prepared_statement_cache_capacity(64);
        let mode: String = conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))?;
        conn.pragma_update(None, "synchronous", "FULL")?;
        conn.busy_timeout(std::time::Duration::from_secs(30))?;
        conn.execute_batch(DDL)?;
        add_latest_lease(&conn)?;
        add_column(&conn, "evidence", "principal", "TEXT")?;
        add_column(&conn, "epochs", "server_config_digest", "TEXT")?;
        let mut store = SqliteStore { conn, durability, synchronous: "FULL", boot: boot_id(), writer: None, unsynced: false };
        store.settle_writers()?;
        if durability == CallDurability::ProcessCrash {
            if !mode.eq_ignore_ascii_case("wal") {
                return Err(StorageError::new(format!("process-crash durability needs a WAL journal; {} keeps `{mode}`", path.display())));
            }
            let Some(boot) = store.boot.clone() else {
                return Err(StorageError::new(
                    "process-crash durability needs the host's boot id (/proc/sys/kernel/random/boot_id) to tell a host crash from a process crash",
                ));
            };
            let id = super::nonce()?;
            // Durable before the first unsynced commit: a host crash from here on is seen at the next open.
            store.conn.prepare_cached("INSERT INTO call_writers VALUES (?1, ?2, ?3)")?.execute(params![id, boot, i64::from(std::process::id())])?;
            store.writer = Some(id);
        }
        Ok(store)
    }

    /// Forgets writers of this boot whose process is gone: the host kept
    /// running, so their unsynced commits are in its page cache, and this
    /// fsynced commit puts them on stable storage with it.
    fn settle_writers(&mut self) -> Result<(), StorageError> {
        let Some(boot) = self.boot.clone() else { return Ok(()) };
        let rows: Vec<(String, i64)> = self
            .conn
            .prepare("SELECT id, pid FROM call_writers WHERE boot = ?1")?
            .query_map(params![boot], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<Result<_, _>>()?;
        let gone: Vec<&String> = rows.iter().filter(|(_, pid)| !alive(*pid)).map(|(id, _)| id).collect();
        if !gone.is_empty() {
            let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            for id in gone {
                tx.prepare_cached("DELETE FROM call_writers WHERE id = ?1 AND boot = ?2")?.execute(params![id, boot])?;
            }
            tx.commit()?;
        }
        Ok(())
    }

    /// Sets the connection's `synchronous` for the next commit.
    fn synchronous(&mut self, want: &'static str) -> Result<(), StorageError> {
        if self.synchronous != want {
            self.conn.pragma_update(None, "synchronous", want)?;
            self.synchronous = want;
        }
        Ok(())
    }

    /// The writers that were open when their host went down (another boot), as `ID (boot B, pid P)`.
    fn lost_writers(conn: &Connection, boot: Option<&str>) -> Result<Vec<String>, StorageError> {
        let rows: Vec<(String, String, i64)> = conn
            .prepare("SELECT id, boot, pid FROM call_writers ORDER BY id")?
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
            .collect::<Result<_, _>>()?;
        Ok(rows.into_iter().filter(|(_, b, _)| Some(b.as_str()) != boot).map(|(id, b, pid)| format!("{id} (boot {b}, pid {pid})")).collect())
    }
}

impl Drop for SqliteStore {
    fn drop(&mut self) {
        // Closing cleanly: one fsynced commit puts every unsynced one before it on stable storage,
        // and the flush covers a store with no such commit to make (a completion in `full`).
        if let Some(id) = self.writer.take()
            && self.synchronous("FULL").is_ok()
        {
            let _ = self.conn.execute("DELETE FROM call_writers WHERE id = ?1", params![id]);
        }
        let _ = self.flush();
    }
}

/// A store made before formations recorded their latest lease gets the
/// column, filled from its leases (the highest lease id of each formation).
fn add_latest_lease(conn: &Connection) -> Result<(), StorageError> {
    let has = |c: &Connection| {
        c.prepare_cached("SELECT COUNT(*) FROM pragma_table_info('formations') WHERE name = 'latest_lease'")?.query_row([], |r| r.get::<_, i64>(0))
    };
    if has(conn)? == 0 {
        // Checked again under the write lock: another process may have added it meanwhile.
        let tx = rusqlite::Transaction::new_unchecked(conn, TransactionBehavior::Immediate)?;
        if has(&tx)? == 0 {
            tx.execute_batch(
                "ALTER TABLE formations ADD COLUMN latest_lease INTEGER;
                 UPDATE formations SET latest_lease = (SELECT MAX(id) FROM leases WHERE leases.formation = formations.id);",
            )?;
        }
        tx.commit()?;
    }
    Ok(())
}

/// A store made before a table had `column` gets it (empty in the old rows).
fn add_column(conn: &Connection, table: &str, column: &str, ty: &str) -> Result<(), StorageError> {
    let has = |c: &Connection| {
        c.prepare_cached(&format!("SELECT COUNT(*) FROM pragma_table_info('{table}') WHERE name = ?1"))?.query_row([column], |r| r.get::<_, i64>(0))
    };
    if has(conn)? == 0 {
        // Checked again under the write lock: another process may have added it meanwhile.
        let tx = rusqlite::Transaction::new_unchecked(conn, TransactionBehavior::Immediate)?;
        if has(&tx)? == 0 {
            tx.execute_batch(&format!("ALTER TABLE {table} ADD COLUMN {column} {ty};"))?;
        }
        tx.commit()?;
    }
    Ok(())
}

/// Reads through one connection (inside the decision's transaction, or not, for queries).
struct SqliteView<'c> {
    conn: &'c Connection,
    boot: Option<&'c str>,
}

fn epoch_state(epoch: &str, s: &str) -> Result<State, StorageError> {
    State::parse(s).map_err(|e| StorageError::new(format!("epoch {epoch}: {}", e.detail)))
}

fn lease_state(id: i64, s: &str) -> Result<LeaseState, StorageError> {
    LeaseState::parse(s).map_err(|e| StorageError::new(format!("lease {id}: {}", e.detail)))
}

impl View for SqliteView<'_> {
    fn epoch(&mut self, id: &str) -> Result<Option<EpochRecord>, StorageError> {
        type Row = (String, String, String, String, Option<String>, String, i64);
        let row: Option<Row> = self
            .conn
            .prepare_cached(
                "SELECT tool, artifact_digest, config_digest, summary_digest, server_config_digest, state, revision FROM epochs WHERE epoch_id = ?1",
            )?
            .query_row(params![id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?, r.get(6)?)))
            .optional()?;
        let Some((tool, artifact, config, summary, server_config, state, generation)) = row else { return Ok(None) };
        Ok(Some(EpochRecord { id: id.to_owned(), tool, artifact, config, summary, server_config, state: epoch_state(id, &state)?, generation }))
    }

    fn evidence(&mut self, id: i64) -> Result<Option<EvidenceRecord>, StorageError> {
        type Row = (String, String, Option<String>, Option<String>, String, String, i64, i64, i64);
        let row: Option<Row> = self
            .conn
            .prepare_cached(
                "SELECT kind, tool, args_digest, principal, source_epoch, target_epoch, valid_from, valid_until, revoked FROM evidence WHERE id = ?1",
            )?
            .query_row(params![id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?, r.get(6)?, r.get(7)?, r.get(8)?)))
            .optional()?;
        let Some((kind, tool, args_digest, principal, source, target, valid_from, valid_until, revoked)) = row else { return Ok(None) };
        let kind = EvidenceKind::parse(&kind)?;
        Ok(Some(EvidenceRecord { id, kind, tool, args_digest, principal, source, target, valid_from, valid_until, revoked: revoked != 0 }))
    }

    fn formation(&mut self, id: i64) -> Result<Option<FormationRecord>, StorageError> {
        Ok(self
            .conn
            .prepare_cached(
                "SELECT snapshot_digest, tool, args_digest, principal, source_epoch, successor_epoch, successor_evidence, expires_at, revoked,
                 latest_lease FROM formations WHERE id = ?1",
            )?
            .query_row(params![id], |r| {
                Ok(FormationRecord {
                    id,
                    snapshot: r.get(0)?,
                    tool: r.get(1)?,
                    args_digest: r.get(2)?,
                    principal: r.get(3)?,
                    source: r.get(4)?,
                    successor: r.get(5)?,
                    successor_evidence: r.get(6)?,
                    expires_at: r.get(7)?,
                    revoked: r.get::<_, i64>(8)? != 0,
                    latest_lease: r.get(9)?,
                })
            })
            .optional()?)
    }

    fn lease(&mut self, id: i64) -> Result<Option<LeaseRecord>, StorageError> {
        let row: Option<(i64, String, i64, String, String, i64)> = self
            .conn
            .prepare_cached("SELECT formation, epoch, generation, nonce, state, used FROM leases WHERE id = ?1")?
            .query_row(params![id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?)))
            .optional()?;
        let Some((formation, epoch, generation, nonce, state, used)) = row else { return Ok(None) };
        Ok(Some(LeaseRecord { id, formation, epoch, generation, nonce, state: lease_state(id, &state)?, used: used != 0 }))
    }

    fn open_leases(&mut self, epoch: &str) -> Result<usize, StorageError> {
        let mut stmt = self.conn.prepare_cached("SELECT state, COUNT(*) FROM leases WHERE epoch = ?1 GROUP BY state")?;
        let counts: Vec<(String, i64)> = stmt.query_map(params![epoch], |r| Ok((r.get(0)?, r.get(1)?)))?.collect::<Result<_, _>>()?;
        let mut open = 0;
        for (state, n) in counts {
            if LeaseState::parse(&state)?.open() {
                open += usize::try_from(n).unwrap_or(0);
            }
        }
        Ok(open)
    }

    fn resolver(&mut self) -> Result<Option<[u8; 32]>, StorageError> {
        let key: Option<Vec<u8>> = self.conn.prepare_cached("SELECT value FROM secrets WHERE name = 'resolver'")?.query_row([], |r| r.get(0)).optional()?;
        Ok(key.and_then(|k| <[u8; 32]>::try_from(k).ok()))
    }

    fn next_id(&mut self, kind: IdKind) -> Result<i64, StorageError> {
        // The next rowid, as an INTEGER PRIMARY KEY would give it: the transaction holds the write lock.
        let table = match kind {
            IdKind::Evidence => "evidence",
            IdKind::Formation => "formations",
            IdKind::Lease => "leases",
        };
        Ok(self.conn.prepare_cached(&format!("SELECT COALESCE(MAX(id), 0) + 1 FROM {table}"))?.query_row([], |r| r.get(0))?)
    }

    fn all_leases(&mut self) -> Result<Vec<StoredLease>, StorageError> {
        let mut stmt = self.conn.prepare("SELECT id, formation, epoch, generation, nonce, state, used, admitted_seq FROM leases ORDER BY id")?;
        type Row = (i64, i64, String, i64, String, String, i64, i64);
        let rows: Vec<Row> =
            stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?, r.get(6)?, r.get(7)?)))?.collect::<Result<_, _>>()?;
        rows.into_iter()
            .map(|(id, formation, epoch, generation, nonce, state, used, admitted_seq)| {
                let state = lease_state(id, &state)?;
                Ok(StoredLease { record: LeaseRecord { id, formation, epoch, generation, nonce, state, used: used != 0 }, admitted_seq })
            })
            .collect()
    }

    fn lost_calls(&mut self) -> Result<Option<String>, StorageError> {
        let lost = SqliteStore::lost_writers(self.conn, self.boot)?;
        Ok((!lost.is_empty()).then(|| {
            format!(
                "a writer with process-crash durability was open when its host went down ({}): the last calls may be missing from the store; \
                 account for them (the stock servers' own logs), then `fcd runtime acknowledge-lost-calls`",
                lost.join(", ")
            )
        }))
    }
}

/// Appends an audit entry in the current transaction; returns its sequence number.
fn append(tx: &Connection, entry: &serde_json::Value) -> Result<i64, StorageError> {
    let text = audit::entry_text(entry);
    let prev: String = tx.prepare_cached("SELECT hash FROM audit ORDER BY seq DESC LIMIT 1")?.query_row([], |r| r.get(0)).optional()?.unwrap_or_default();
    tx.prepare_cached("INSERT INTO audit (entry, prev, hash) VALUES (?1, ?2, ?3)")?.execute(params![text, prev, audit::chain(&prev, &text)])?;
    Ok(tx.last_insert_rowid())
}

/// Applies one write inside the decision's transaction, stamped with its sequence number.
fn apply(tx: &Connection, write: &Write, seq: i64) -> Result<(), StorageError> {
    match write {
        Write::NewEpoch(e) => {
            tx.prepare_cached(
                "INSERT OR IGNORE INTO epochs (epoch_id, tool, artifact_digest, config_digest, summary_digest, server_config_digest, state, revision)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            )?
            .execute(params![e.id, e.tool, e.artifact, e.config, e.summary, e.server_config, e.state.as_str(), e.generation])?;
        }
        Write::EpochState { epoch, to } => {
            let sql = match to {
                State::Draining => "UPDATE epochs SET state = ?2, drained_seq = ?3 WHERE epoch_id = ?1",
                State::Stale => "UPDATE epochs SET state = ?2, stale_seq = ?3 WHERE epoch_id = ?1",
                // Hiding and advertising again record no sequence; ?3 is bound and ignored.
                State::Advertised | State::HiddenButValid => "UPDATE epochs SET state = ?2 WHERE epoch_id = ?1 AND ?3 IS NOT NULL",
            };
            tx.prepare_cached(sql)?.execute(params![epoch, to.as_str(), seq])?;
        }
        Write::NewEvidence(e) => {
            tx.prepare_cached(
                "INSERT INTO evidence (id, kind, tool, args_digest, principal, source_epoch, target_epoch, valid_from, valid_until, seq)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            )?
            .execute(params![e.id, e.kind.as_str(), e.tool, e.args_digest, e.principal, e.source, e.target, e.valid_from, e.valid_until, seq])?;
        }
        Write::NewFormation(f) => {
            tx.prepare_cached(
                "INSERT INTO formations (id, snapshot_digest, tool, args_digest, principal, source_epoch, successor_epoch, successor_evidence, expires_at, seq)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            )?
            .execute(params![
                f.id,
                f.snapshot,
                f.tool,
                f.args_digest,
                f.principal,
                f.source,
                f.successor,
                f.successor_evidence,
                f.expires_at,
                seq
            ])?;
        }
        Write::RevokeEvidence(id) => {
            tx.prepare_cached("UPDATE evidence SET revoked = 1 WHERE id = ?1")?.execute(params![id])?;
        }
        Write::RevokeFormation(id) => {
            tx.prepare_cached("UPDATE formations SET revoked = 1 WHERE id = ?1")?.execute(params![id])?;
        }
        Write::LatestLease { formation, lease } => {
            tx.prepare_cached("UPDATE formations SET latest_lease = ?2 WHERE id = ?1")?.execute(params![formation, lease])?;
        }
        Write::NewLease(l) => {
            tx.prepare_cached("INSERT INTO leases (id, formation, epoch, generation, nonce, state, admitted_seq) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)")?
                .execute(params![l.id, l.formation, l.epoch, l.generation, l.nonce, l.state.as_str(), seq])?;
        }
        Write::LeaseState { id, to } => {
            tx.prepare_cached("UPDATE leases SET state = ?2 WHERE id = ?1")?.execute(params![id, to.as_str()])?;
        }
        Write::LeaseUsed(id) => {
            tx.prepare_cached("UPDATE leases SET used = 1 WHERE id = ?1")?.execute(params![id])?;
        }
        Write::Resolution { lease, outcome, signature } => {
            tx.prepare_cached("INSERT INTO resolutions VALUES (?1, ?2, ?3)")?.execute(params![lease, outcome, signature])?;
        }
    }
    Ok(())
}

impl Store for SqliteStore {
    fn decide(&mut self, commit: Commit, decide: &mut DecideFn<'_>) -> Result<i64, Refusal> {
        let unsynced = match commit {
            Commit::Durable => false,
            Commit::Call => self.durability == CallDurability::ProcessCrash,
            Commit::Closing => true,
        };
        self.synchronous(if unsynced { "NORMAL" } else { "FULL" })?;
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(StorageError::from)?;
        let decision = decide(&mut SqliteView { conn: &tx, boot: self.boot.as_deref() })?;
        let seq = append(&tx, &decision.audit)?;
        for write in &decision.writes {
            apply(&tx, write, seq)?;
        }
        tx.commit().map_err(StorageError::from)?;
        // An fsynced commit of the WAL puts every frame before it on stable storage too.
        self.unsynced = unsynced;
        Ok(seq)
    }

    fn reader(&self) -> Box<dyn View + '_> {
        Box::new(SqliteView { conn: &self.conn, boot: self.boot.as_deref() })
    }

    fn flush(&mut self) -> Result<(), StorageError> {
        if !self.unsynced {
            return Ok(());
        }
        // The unsynced commits are frames of the WAL (a checkpoint may have copied some into the
        // database file, which SQLite fsyncs when a checkpoint completes): fsyncing the WAL keeps them.
        let path = self.conn.path().map(|p| format!("{p}-wal")).ok_or_else(|| StorageError::new("the store has no file"))?;
        match std::fs::File::open(&path) {
            Ok(wal) => wal.sync_data().map_err(|e| StorageError::new(format!("cannot fsync {path}: {e}")))?,
            // No WAL: the last connection checkpointed it into the database file and removed it.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(StorageError::new(format!("cannot open {path} to fsync it: {e}"))),
        }
        self.unsynced = false;
        Ok(())
    }

    fn lifecycle_seqs(&self, epoch: &str) -> Result<(Option<i64>, Option<i64>), StorageError> {
        Ok(self
            .conn
            .prepare_cached("SELECT drained_seq, stale_seq FROM epochs WHERE epoch_id = ?1")?
            .query_row(params![epoch], |r| Ok((r.get(0)?, r.get(1)?)))?)
    }

    fn mac_key(&mut self) -> Result<Vec<u8>, StorageError> {
        let existing: Option<Vec<u8>> = self.conn.prepare_cached("SELECT value FROM secrets WHERE name = 'mac'")?.query_row([], |r| r.get(0)).optional()?;
        if let Some(k) = existing {
            return Ok(k);
        }
        let mut key = vec![0u8; 32];
        getrandom::fill(&mut key).map_err(|e| StorageError::new(format!("no randomness: {e}")))?;
        self.conn.prepare_cached("INSERT OR IGNORE INTO secrets VALUES ('mac', ?1)")?.execute(params![key])?;
        Ok(self.conn.prepare_cached("SELECT value FROM secrets WHERE name = 'mac'")?.query_row([], |r| r.get(0))?)
    }

    fn set_resolver(&self, key: &[u8; 32]) -> Result<(), StorageError> {
        self.conn.prepare_cached("INSERT OR REPLACE INTO secrets VALUES ('resolver', ?1)")?.execute(params![key.to_vec()])?;
        Ok(())
    }

    fn audit(&self) -> Result<Vec<AuditEntry>, StorageError> {
        let mut stmt = self.conn.prepare("SELECT seq, entry, prev, hash FROM audit ORDER BY seq")?;
        let rows = stmt.query_map([], |r| Ok(AuditEntry { seq: r.get(0)?, entry: r.get(1)?, prev: r.get(2)?, hash: r.get(3)?, chain: String::new() }))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    fn audit_last(&self) -> Result<Option<AuditEntry>, StorageError> {
        let mut stmt = self.conn.prepare_cached("SELECT seq, entry, prev, hash FROM audit ORDER BY seq DESC LIMIT 1")?;
        let mut rows = stmt.query_map([], |r| Ok(AuditEntry { seq: r.get(0)?, entry: r.get(1)?, prev: r.get(2)?, hash: r.get(3)?, chain: String::new() }))?;
        Ok(rows.next().transpose()?)
    }

    fn acknowledge_lost_calls(&mut self) -> Result<Vec<String>, Refusal> {
        self.synchronous("FULL")?;
        let boot = self.boot.clone();
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(StorageError::from)?;
        let lost = SqliteStore::lost_writers(&tx, boot.as_deref())?;
        if lost.is_empty() {
            return Ok(lost);
        }
        append(&tx, &serde_json::json!({"op": "acknowledge_lost_calls", "writers": lost}))?;
        match &boot {
            Some(b) => tx.prepare_cached("DELETE FROM call_writers WHERE boot != ?1")?.execute(params![b]).map_err(StorageError::from)?,
            None => tx.prepare_cached("DELETE FROM call_writers")?.execute([]).map_err(StorageError::from)?,
        };
        tx.commit().map_err(StorageError::from)?;
        Ok(lost)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Decides nothing but an audit entry, committed as `commit` says.
    fn commit(store: &mut SqliteStore, commit: Commit) {
        store.decide(commit, &mut |_| Ok(super::super::Recorded { writes: Vec::new(), audit: serde_json::json!({"op": "test"}) })).unwrap();
    }

    #[test]
    fn a_completion_waits_for_no_fsync_and_the_next_fsynced_commit_or_a_flush_covers_it() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = SqliteStore::open(&dir.path().join("runtime.sqlite"), CallDurability::Full).unwrap();
        commit(&mut store, Commit::Call);
        assert!(!store.unsynced, "in full, an admission is fsynced");
        commit(&mut store, Commit::Closing);
        assert!(store.unsynced && store.synchronous == "NORMAL", "a completion is written without an fsync");
        commit(&mut store, Commit::Call);
        assert!(!store.unsynced && store.synchronous == "FULL", "the next fsynced commit puts it on stable storage");
        commit(&mut store, Commit::Closing);
        store.flush().unwrap();
        assert!(!store.unsynced, "so does a flush");
        commit(&mut store, Commit::Closing);
        commit(&mut store, Commit::Durable);
        assert!(!store.unsynced, "and any durable decision");
    }

    #[test]
    fn in_process_crash_every_per_call_commit_is_unsynced_until_a_durable_one() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = SqliteStore::open(&dir.path().join("runtime.sqlite"), CallDurability::ProcessCrash).unwrap();
        for kind in [Commit::Call, Commit::Closing] {
            commit(&mut store, kind);
            assert!(store.unsynced);
        }
        commit(&mut store, Commit::Durable);
        assert!(!store.unsynced);
    }
}
