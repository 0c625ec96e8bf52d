//! The admission runtime: formation authority, epoch lifecycle, leases,
//! revocation and the final-hop fence, in one SQLite file.
//!
//! Every decision runs in one `BEGIN IMMEDIATE` transaction, so admission and
//! the start of a drain are serialized (invariant 3) and a crash leaves either
//! the whole decision or none of it. A formation fixes its authority when it is
//! created — the exact source epoch and at most one captured successor — and
//! nothing written later can widen it (invariant 1). The fence accepts a
//! lease's MAC token once, only for the registered artifact and configuration
//! (invariant 5). Every operation appends to a hash-chained audit log.

use std::path::Path;

use ed25519_dalek::{Signature, VerifyingKey};
use hmac::{Hmac, KeyInit, Mac};
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};
use serde::Serialize;
use sha2::Sha256;

use crate::canon;

/// Lifecycle of an epoch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub enum State {
    #[serde(rename = "ADVERTISED")]
    Advertised,
    #[serde(rename = "HIDDEN_BUT_VALID")]
    HiddenButValid,
    #[serde(rename = "DRAINING")]
    Draining,
    #[serde(rename = "STALE")]
    Stale,
}

impl State {
    pub fn as_str(self) -> &'static str {
        match self {
            State::Advertised => "ADVERTISED",
            State::HiddenButValid => "HIDDEN_BUT_VALID",
            State::Draining => "DRAINING",
            State::Stale => "STALE",
        }
    }

    fn parse(s: &str) -> State {
        match s {
            "ADVERTISED" => State::Advertised,
            "HIDDEN_BUT_VALID" => State::HiddenButValid,
            "DRAINING" => State::Draining,
            _ => State::Stale,
        }
    }

    /// Whether new leases may start on an epoch in this state.
    pub fn eligible(self) -> bool {
        matches!(self, State::Advertised | State::HiddenButValid)
    }
}

/// Why the runtime refused an operation: a reason code and words.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Refusal {
    pub code: &'static str,
    pub detail: String,
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code, self.detail)
    }
}

impl std::error::Error for Refusal {}

fn refuse<T>(code: &'static str, detail: impl Into<String>) -> Result<T, Refusal> {
    Err(Refusal { code, detail: detail.into() })
}

fn db(e: rusqlite::Error) -> Refusal {
    Refusal { code: "storage", detail: e.to_string() }
}

/// Compatibility evidence for a successor: a generated certificate (one call)
/// or a signed manual edge (every call of a tool).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum EvidenceKind {
    Certificate,
    Edge,
}

/// A lease: the right to run one admitted invocation on one epoch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Lease {
    pub id: i64,
    pub formation: i64,
    pub epoch: String,
    pub generation: i64,
    /// The single-use final-hop token.
    pub token: String,
}

/// A snapshot of the store, for invariant checks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LeaseRow {
    pub id: i64,
    pub formation: i64,
    pub epoch: String,
    pub state: String,
    pub used: bool,
    /// Audit sequence number of the admission.
    pub admitted_seq: i64,
}

pub struct Runtime {
    conn: Connection,
}

type HmacSha256 = Hmac<Sha256>;

impl Runtime {
    /// Opens (creating if needed) the runtime store at `path`.
    pub fn open(path: &Path) -> Result<Runtime, Refusal> {
        let conn = Connection::open(path).map_err(db)?;
        conn.pragma_update(None, "journal_mode", "WAL").map_err(db)?;
        conn.pragma_update(None, "synchronous", "FULL").map_err(db)?;
        conn.busy_timeout(std::time::Duration::from_secs(30)).map_err(db)?;
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS secrets (name TEXT PRIMARY KEY, value BLOB NOT NULL);
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
             CREATE TABLE IF NOT EXISTS audit (seq INTEGER PRIMARY KEY AUTOINCREMENT, entry TEXT NOT NULL, prev TEXT NOT NULL, hash TEXT NOT NULL);",
        )
        .map_err(db)?;
        let runtime = Runtime { conn };
        runtime.secret()?;
        Ok(runtime)
    }

    /// The MAC key of this store, created once.
    fn secret(&self) -> Result<Vec<u8>, Refusal> {
        let existing: Option<Vec<u8>> = self.conn.query_row("SELECT value FROM secrets WHERE name = 'mac'", [], |r| r.get(0)).optional().map_err(db)?;
        if let Some(k) = existing {
            return Ok(k);
        }
        let mut key = vec![0u8; 32];
        getrandom::fill(&mut key).map_err(|e| Refusal { code: "storage", detail: format!("no randomness: {e}") })?;
        self.conn.execute("INSERT OR IGNORE INTO secrets VALUES ('mac', ?1)", params![key]).map_err(db)?;
        self.conn.query_row("SELECT value FROM secrets WHERE name = 'mac'", [], |r| r.get(0)).map_err(db)
    }

    /// Registers the public key whose signatures resolve uncertain leases.
    pub fn set_resolver(&self, key: &VerifyingKey) -> Result<(), Refusal> {
        self.conn.execute("INSERT OR REPLACE INTO secrets VALUES ('resolver', ?1)", params![key.as_bytes().to_vec()]).map_err(db)?;
        Ok(())
    }

    fn txn(&mut self) -> Result<rusqlite::Transaction<'_>, Refusal> {
        self.conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(db)
    }

    /// Registers an epoch (ADVERTISED). Registering it again is a no-op.
    pub fn register_epoch(&mut self, epoch: &str, tool: &str, artifact: &str, config: &str, summary: &str) -> Result<(), Refusal> {
        let tx = self.txn()?;
        tx.execute(
            "INSERT OR IGNORE INTO epochs (epoch_id, tool, artifact_digest, config_digest, summary_digest, state, revision) VALUES (?1, ?2, ?3, ?4, ?5, 'ADVERTISED', 1)",
            params![epoch, tool, artifact, config, summary],
        )
        .map_err(db)?;
        audit(&tx, &serde_json::json!({"op": "register_epoch", "epoch": epoch}))?;
        tx.commit().map_err(db)
    }

    /// Moves an epoch along its lifecycle. DRAINING reaches STALE only when
    /// no admitted or uncertain lease remains on it.
    pub fn transition(&mut self, epoch: &str, to: State) -> Result<(), Refusal> {
        let tx = self.txn()?;
        let Some(from) = state_of(&tx, epoch)? else { return refuse("unknown_epoch", format!("no epoch {epoch}")) };
        let allowed = matches!(
            (from, to),
            (State::Advertised, State::HiddenButValid)
                | (State::HiddenButValid, State::Advertised)
                | (State::Advertised | State::HiddenButValid, State::Draining)
                | (State::Draining, State::Stale)
        );
        if !allowed {
            return refuse("bad_transition", format!("{epoch} is {}, cannot become {}", from.as_str(), to.as_str()));
        }
        if to == State::Stale {
            let open: i64 = tx
                .query_row("SELECT COUNT(*) FROM leases WHERE epoch = ?1 AND state IN ('admitted', 'uncertain')", params![epoch], |r| r.get(0))
                .map_err(db)?;
            if open > 0 {
                return refuse("leases_outstanding", format!("{open} admitted or uncertain leases remain on {epoch}"));
            }
        }
        let seq = audit(&tx, &serde_json::json!({"op": "transition", "epoch": epoch, "from": from.as_str(), "to": to.as_str()}))?;
        let sql = match to {
            State::Draining => "UPDATE epochs SET state = ?2, drained_seq = ?3 WHERE epoch_id = ?1",
            State::Stale => "UPDATE epochs SET state = ?2, stale_seq = ?3 WHERE epoch_id = ?1",
            // Hiding and advertising again record no sequence; ?3 is bound and ignored.
            _ => "UPDATE epochs SET state = ?2 WHERE epoch_id = ?1 AND ?3 IS NOT NULL",
        };
        tx.execute(sql, params![epoch, to.as_str(), seq]).map_err(db)?;
        tx.commit().map_err(db)
    }

    /// Records compatibility evidence from `source` to `target`; returns its id.
    #[allow(clippy::too_many_arguments)] // reason: the evidence record is this flat list of fields
    pub fn add_evidence(
        &mut self,
        kind: EvidenceKind,
        tool: &str,
        args_digest: Option<&str>,
        source: &str,
        target: &str,
        valid_from: u64,
        valid_until: u64,
    ) -> Result<i64, Refusal> {
        if kind == EvidenceKind::Certificate && args_digest.is_none() {
            return refuse("bad_evidence", "a certificate is for one call: give its arguments digest");
        }
        let tx = self.txn()?;
        let seq = audit(&tx, &serde_json::json!({"op": "add_evidence", "source": source, "target": target}))?;
        let kind_text = if kind == EvidenceKind::Certificate { "certificate" } else { "edge" };
        tx.execute(
            "INSERT INTO evidence (kind, tool, args_digest, source_epoch, target_epoch, valid_from, valid_until, seq) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            params![kind_text, tool, args_digest, source, target, valid_from as i64, valid_until as i64, seq],
        )
        .map_err(db)?;
        let id = tx.last_insert_rowid();
        tx.commit().map_err(db)?;
        Ok(id)
    }

    /// Forms a call: binds the snapshot, tool, arguments and principal to the
    /// exact source epoch and, if `successor` names evidence that exists and
    /// verifies now, that one successor. Authority is fixed here.
    #[allow(clippy::too_many_arguments)] // reason: the formation record is this flat list of fields
    pub fn form(
        &mut self,
        snapshot: &str,
        tool: &str,
        args_digest: &str,
        principal: &str,
        source: &str,
        successor: Option<i64>,
        now: u64,
        ttl: u64,
    ) -> Result<i64, Refusal> {
        let tx = self.txn()?;
        let Some(state) = state_of(&tx, source)? else { return refuse("unknown_epoch", format!("no epoch {source}")) };
        if !state.eligible() {
            return refuse("source_not_eligible", format!("{source} is {}", state.as_str()));
        }
        let captured = match successor {
            None => None,
            Some(id) => {
                type Row = (String, String, Option<String>, String, String, i64, i64, i64);
                let row: Option<Row> = tx
                    .query_row(
                        "SELECT kind, tool, args_digest, source_epoch, target_epoch, valid_from, valid_until, revoked FROM evidence WHERE id = ?1",
                        params![id],
                        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?, r.get(6)?, r.get(7)?)),
                    )
                    .optional()
                    .map_err(db)?;
                let Some((kind, ev_tool, ev_args, ev_source, target, from, until, revoked)) = row else {
                    return refuse("not_captured", format!("evidence {id} does not exist at formation"));
                };
                if revoked != 0 {
                    return refuse("revoked", format!("evidence {id} is revoked"));
                }
                if (now as i64) < from || (now as i64) > until {
                    return refuse("expired", format!("evidence {id} is not valid now"));
                }
                if ev_tool != tool || ev_source != source || (kind == "certificate" && ev_args.as_deref() != Some(args_digest)) {
                    return refuse("not_captured", format!("evidence {id} is not for this call from {source}"));
                }
                Some((target, id))
            }
        };
        let seq = audit(&tx, &serde_json::json!({"op": "form", "source": source, "successor": captured.as_ref().map(|c| &c.0)}))?;
        tx.execute(
            "INSERT INTO formations (snapshot_digest, tool, args_digest, principal, source_epoch, successor_epoch, successor_evidence, expires_at, seq)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            params![
                snapshot,
                tool,
                args_digest,
                principal,
                source,
                captured.as_ref().map(|c| &c.0),
                captured.as_ref().map(|c| c.1),
                now.saturating_add(ttl) as i64,
                seq
            ],
        )
        .map_err(db)?;
        let id = tx.last_insert_rowid();
        tx.commit().map_err(db)?;
        Ok(id)
    }

    /// Admits a formed call, in one transaction with every lifecycle change:
    /// the exact source while it is ADVERTISED or HIDDEN_BUT_VALID; the
    /// captured successor only once the source is STALE and the successor is
    /// eligible. Returns a lease with a single-use token.
    pub fn admit(&mut self, formation: i64, now: u64) -> Result<Lease, Refusal> {
        let key = self.secret()?;
        let tx = self.txn()?;
        let lease = admit_in(&tx, &key, formation, now)?;
        tx.commit().map_err(db)?;
        Ok(lease)
    }

    /// Admission that sleeps inside its transaction before committing: for the crash test.
    pub fn admit_and_stall(&mut self, formation: i64, now: u64, stall: std::time::Duration) -> Result<Lease, Refusal> {
        let key = self.secret()?;
        let tx = self.txn()?;
        let lease = admit_in(&tx, &key, formation, now)?;
        std::thread::sleep(stall);
        tx.commit().map_err(db)?;
        Ok(lease)
    }

    /// Marks an admitted lease completed.
    pub fn complete(&mut self, lease: i64) -> Result<(), Refusal> {
        self.lease_state(lease, &["admitted"], "completed")
    }

    /// Marks an admitted lease uncertain: its epoch stays DRAINING until a signed resolution.
    pub fn mark_uncertain(&mut self, lease: i64) -> Result<(), Refusal> {
        self.lease_state(lease, &["admitted"], "uncertain")
    }

    /// Resolves an uncertain lease with a signature of the registered resolver over
    /// `fcd-resolution|LEASE|OUTCOME`.
    pub fn resolve(&mut self, lease: i64, outcome: &str, signature: &[u8]) -> Result<(), Refusal> {
        let key: Option<Vec<u8>> = self.conn.query_row("SELECT value FROM secrets WHERE name = 'resolver'", [], |r| r.get(0)).optional().map_err(db)?;
        let Some(key) = key.and_then(|k| <[u8; 32]>::try_from(k).ok()).and_then(|k| VerifyingKey::from_bytes(&k).ok()) else {
            return refuse("no_resolver", "no resolver key is registered");
        };
        let sig = Signature::from_slice(signature).map_err(|_| Refusal { code: "bad_signature", detail: "not an ed25519 signature".into() })?;
        if key.verify_strict(resolution_message(lease, outcome).as_bytes(), &sig).is_err() {
            return refuse("bad_signature", format!("the resolution of lease {lease} is not signed by the resolver"));
        }
        let tx = self.txn()?;
        let state: Option<String> = tx.query_row("SELECT state FROM leases WHERE id = ?1", params![lease], |r| r.get(0)).optional().map_err(db)?;
        if state.as_deref() != Some("uncertain") {
            return refuse("not_uncertain", format!("lease {lease} is {}", state.unwrap_or_else(|| "unknown".into())));
        }
        tx.execute("UPDATE leases SET state = 'resolved' WHERE id = ?1", params![lease]).map_err(db)?;
        tx.execute("INSERT INTO resolutions VALUES (?1, ?2, ?3)", params![lease, outcome, canon::hex(signature)]).map_err(db)?;
        audit(&tx, &serde_json::json!({"op": "resolve", "lease": lease, "outcome": outcome}))?;
        tx.commit().map_err(db)
    }

    fn lease_state(&mut self, lease: i64, from: &[&str], to: &str) -> Result<(), Refusal> {
        let tx = self.txn()?;
        let state: Option<String> = tx.query_row("SELECT state FROM leases WHERE id = ?1", params![lease], |r| r.get(0)).optional().map_err(db)?;
        let Some(state) = state else { return refuse("unknown_lease", format!("no lease {lease}")) };
        if !from.contains(&state.as_str()) {
            return refuse("bad_transition", format!("lease {lease} is {state}, cannot become {to}"));
        }
        tx.execute("UPDATE leases SET state = ?2 WHERE id = ?1", params![lease, to]).map_err(db)?;
        audit(&tx, &serde_json::json!({"op": to, "lease": lease}))?;
        tx.commit().map_err(db)
    }

    /// Revokes evidence (`evidence:ID`) or a formation (`formation:ID`).
    pub fn revoke(&mut self, handle: &str) -> Result<(), Refusal> {
        let (table, id) = match handle.split_once(':') {
            Some(("evidence", id)) => ("evidence", id),
            Some(("formation", id)) => ("formations", id),
            _ => return refuse("bad_handle", format!("`{handle}` is not evidence:ID or formation:ID")),
        };
        let id: i64 = id.parse().map_err(|_| Refusal { code: "bad_handle", detail: format!("`{handle}`: the id is a number") })?;
        let tx = self.txn()?;
        let n = tx.execute(&format!("UPDATE {table} SET revoked = 1 WHERE id = ?1"), params![id]).map_err(db)?;
        if n == 0 {
            return refuse("bad_handle", format!("no {handle}"));
        }
        audit(&tx, &serde_json::json!({"op": "revoke", "handle": handle}))?;
        tx.commit().map_err(db)
    }

    /// The final-hop check, before the handler runs: the token is the lease's
    /// own, unused, for this generation, and the artifact and configuration
    /// about to run are the epoch's registered ones. Accepted once.
    pub fn fence(&mut self, token: &str, artifact: &str, config: &str, generation: i64) -> Result<i64, Refusal> {
        let key = self.secret()?;
        let Some((id, nonce, mac)) = parse_token(token) else { return refuse("bad_token", "not a lease token") };
        let tx = self.txn()?;
        type Row = (String, i64, String, String, i64, String, String);
        let row: Option<Row> = tx
            .query_row(
                "SELECT l.epoch, l.generation, l.nonce, l.state, l.used, e.artifact_digest, e.config_digest
                 FROM leases l JOIN epochs e ON e.epoch_id = l.epoch WHERE l.id = ?1",
                params![id],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?, r.get(6)?)),
            )
            .optional()
            .map_err(db)?;
        let Some((epoch, lease_generation, stored_nonce, state, used, registered_artifact, registered_config)) = row else {
            return refuse("unknown_token", format!("no lease {id}"));
        };
        let expected = token_mac(&key, id, &stored_nonce, &epoch, &registered_artifact, &registered_config, lease_generation);
        if stored_nonce != nonce || expected != mac {
            return refuse("bad_token", format!("the token of lease {id} does not verify"));
        }
        if used != 0 {
            return refuse("replay", format!("the token of lease {id} was already used"));
        }
        if generation != lease_generation {
            return refuse("stale_generation", format!("generation {generation}, the lease holds {lease_generation}"));
        }
        if artifact != registered_artifact {
            return refuse("final_hop_artifact_mismatch", format!("{artifact} is not {epoch}'s artifact {registered_artifact}"));
        }
        if config != registered_config {
            return refuse("final_hop_config_mismatch", format!("{config} is not {epoch}'s configuration {registered_config}"));
        }
        if state != "admitted" {
            return refuse("lease_not_admitted", format!("lease {id} is {state}"));
        }
        tx.execute("UPDATE leases SET used = 1 WHERE id = ?1", params![id]).map_err(db)?;
        audit(&tx, &serde_json::json!({"op": "fence", "lease": id}))?;
        tx.commit().map_err(db)?;
        Ok(id)
    }

    /// The state of an epoch.
    pub fn state(&self, epoch: &str) -> Result<Option<State>, Refusal> {
        state_of(&self.conn, epoch)
    }

    /// The artifact and configuration digests registered for an epoch.
    pub fn epoch_digests(&self, epoch: &str) -> Result<Option<(String, String)>, Refusal> {
        self.conn
            .query_row("SELECT artifact_digest, config_digest FROM epochs WHERE epoch_id = ?1", params![epoch], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()
            .map_err(db)
    }

    /// Every lease, for invariant checks and reports.
    pub fn leases(&self) -> Result<Vec<LeaseRow>, Refusal> {
        let mut stmt = self.conn.prepare("SELECT id, formation, epoch, state, used, admitted_seq FROM leases ORDER BY id").map_err(db)?;
        let rows = stmt
            .query_map([], |r| {
                Ok(LeaseRow {
                    id: r.get(0)?,
                    formation: r.get(1)?,
                    epoch: r.get(2)?,
                    state: r.get(3)?,
                    used: r.get::<_, i64>(4)? != 0,
                    admitted_seq: r.get(5)?,
                })
            })
            .map_err(db)?;
        rows.collect::<Result<_, _>>().map_err(db)
    }

    /// A formation's fixed authority: (source, captured successor).
    pub fn authority(&self, formation: i64) -> Result<Option<(String, Option<String>)>, Refusal> {
        self.conn
            .query_row("SELECT source_epoch, successor_epoch FROM formations WHERE id = ?1", params![formation], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()
            .map_err(db)
    }

    /// Audit sequence numbers at which an epoch began draining and became stale.
    pub fn lifecycle_seqs(&self, epoch: &str) -> Result<(Option<i64>, Option<i64>), Refusal> {
        self.conn.query_row("SELECT drained_seq, stale_seq FROM epochs WHERE epoch_id = ?1", params![epoch], |r| Ok((r.get(0)?, r.get(1)?))).map_err(db)
    }

    /// Checks the audit log's hash chain; returns the number of entries.
    pub fn verify_audit(&self) -> Result<usize, Refusal> {
        let mut stmt = self.conn.prepare("SELECT seq, entry, prev, hash FROM audit ORDER BY seq").map_err(db)?;
        let rows: Vec<(i64, String, String, String)> =
            stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))).map_err(db)?.collect::<Result<_, _>>().map_err(db)?;
        let mut prev = String::new();
        for (seq, entry, stored_prev, hash) in &rows {
            if *stored_prev != prev || *hash != chain(&prev, entry) {
                return refuse("audit_broken", format!("audit entry {seq} does not follow from the one before"));
            }
            prev = hash.clone();
        }
        Ok(rows.len())
    }
}

fn state_of(conn: &Connection, epoch: &str) -> Result<Option<State>, Refusal> {
    let s: Option<String> = conn.query_row("SELECT state FROM epochs WHERE epoch_id = ?1", params![epoch], |r| r.get(0)).optional().map_err(db)?;
    Ok(s.map(|s| State::parse(&s)))
}

fn admit_in(tx: &rusqlite::Transaction<'_>, key: &[u8], formation: i64, now: u64) -> Result<Lease, Refusal> {
    type Row = (String, Option<String>, Option<i64>, i64, i64);
    let row: Option<Row> = tx
        .query_row("SELECT source_epoch, successor_epoch, successor_evidence, expires_at, revoked FROM formations WHERE id = ?1", params![formation], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
        })
        .optional()
        .map_err(db)?;
    let Some((source, successor, evidence, expires_at, revoked)) = row else {
        return refuse("unknown_formation", format!("no formation {formation}"));
    };
    if revoked != 0 {
        return refuse("revoked", format!("formation {formation} is revoked"));
    }
    if now as i64 > expires_at {
        return refuse("expired", format!("formation {formation} expired at {expires_at}"));
    }
    let source_state = state_of(tx, &source)?.unwrap_or(State::Stale);
    let target = match source_state {
        s if s.eligible() => source.clone(),
        State::Draining => return refuse("source_draining", format!("{source} is draining: no new leases")),
        _ => {
            let (Some(successor), Some(evidence)) = (successor, evidence) else {
                return refuse("not_captured", format!("{source} is stale and formation {formation} captured no successor"));
            };
            let (ev_revoked, until): (i64, i64) =
                tx.query_row("SELECT revoked, valid_until FROM evidence WHERE id = ?1", params![evidence], |r| Ok((r.get(0)?, r.get(1)?))).map_err(db)?;
            if ev_revoked != 0 {
                return refuse("revoked", format!("the evidence for {successor} is revoked"));
            }
            if now as i64 > until {
                return refuse("expired", format!("the evidence for {successor} expired at {until}"));
            }
            let state = state_of(tx, &successor)?.unwrap_or(State::Stale);
            if !state.eligible() {
                return refuse("successor_ineligible", format!("{successor} is {}", state.as_str()));
            }
            successor
        }
    };
    let (artifact, config, generation): (String, String, i64) = tx
        .query_row("SELECT artifact_digest, config_digest, revision FROM epochs WHERE epoch_id = ?1", params![target], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        })
        .map_err(db)?;
    let mut nonce = [0u8; 16];
    getrandom::fill(&mut nonce).map_err(|e| Refusal { code: "storage", detail: format!("no randomness: {e}") })?;
    let nonce = canon::hex(&nonce);
    let seq = audit(tx, &serde_json::json!({"op": "admit", "formation": formation, "epoch": target}))?;
    tx.execute(
        "INSERT INTO leases (formation, epoch, generation, nonce, state, admitted_seq) VALUES (?1, ?2, ?3, ?4, 'admitted', ?5)",
        params![formation, target, generation, nonce, seq],
    )
    .map_err(db)?;
    let id = tx.last_insert_rowid();
    let mac = token_mac(key, id, &nonce, &target, &artifact, &config, generation);
    Ok(Lease { id, formation, epoch: target, generation, token: format!("{id}.{nonce}.{mac}") })
}

fn token_mac(key: &[u8], id: i64, nonce: &str, epoch: &str, artifact: &str, config: &str, generation: i64) -> String {
    let Ok(mut mac) = <HmacSha256 as KeyInit>::new_from_slice(key) else { return String::new() };
    mac.update(format!("fcd-lease|{id}|{nonce}|{epoch}|{artifact}|{config}|{generation}").as_bytes());
    canon::hex(&mac.finalize().into_bytes())
}

/// Splits `ID.NONCE.MAC`. The id must be written exactly as the runtime
/// writes it (no sign, no leading zero), so a token has one spelling only and
/// a respelled one (`042.…`, `+42.…`) is not accepted in its place.
fn parse_token(token: &str) -> Option<(i64, String, String)> {
    let mut parts = token.splitn(3, '.');
    let id_text = parts.next()?;
    let id: i64 = id_text.parse().ok()?;
    if id.to_string() != id_text {
        return None;
    }
    Some((id, parts.next()?.to_owned(), parts.next()?.to_owned()))
}

/// What a resolver signs.
pub fn resolution_message(lease: i64, outcome: &str) -> String {
    format!("fcd-resolution|{lease}|{outcome}")
}

fn chain(prev: &str, entry: &str) -> String {
    canon::sha256(format!("{prev}\n{entry}").as_bytes())
}

/// Appends an audit entry in the current transaction; returns its sequence number.
fn audit(tx: &Connection, entry: &serde_json::Value) -> Result<i64, Refusal> {
    let text = String::from_utf8(canon::to_canonical(entry)).unwrap_or_default();
    let prev: String = tx.query_row("SELECT hash FROM audit ORDER BY seq DESC LIMIT 1", [], |r| r.get(0)).optional().map_err(db)?.unwrap_or_default();
    tx.execute("INSERT INTO audit (entry, prev, hash) VALUES (?1, ?2, ?3)", params![text, prev, chain(&prev, &text)]).map_err(db)?;
    Ok(tx.last_insert_rowid())
}
