//! The registry: admitted epochs, their manifests, summaries and the
//! second-process regeneration evidence, in SQLite (WAL).
//!
//! A summary is admitted only with evidence that another process rebuilt it
//! to the same digest, and only in one transaction with its manifest, so a
//! reader never sees half an admission. `verify` re-derives every digest from
//! the stored bytes: a summary edited after admission, a manifest that no
//! longer matches its summary, or a missing regeneration is reported.

use std::path::Path;

use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;
use serde_json::{Value, json};

use fcd_model::canon;
use fcd_model::error::InputError;
use fcd_model::summary::Summary;

/// The registration manifest of a release: what the epoch id is the digest of.
pub fn manifest(summary: &Summary) -> Value {
    json!({
        "tool": summary.tool,
        "profile": {"id": summary.profile.id, "version": summary.profile.version, "digest": summary.profile.digest},
        "descriptor_digest": null,
        "artifact_digest": summary.artifact_digest,
        "source_digest": summary.source.digest,
        "config_digest": summary.config_digest,
        "flags": [],
        "dependencies": [],
    })
}

/// The epoch id: the digest of the canonical manifest.
pub fn epoch_id(summary: &Summary) -> String {
    canon::digest(&manifest(summary))
}

/// A runtime store as a gateway last saw it: its identity
/// ([`crate::runtime::Runtime::identity`]) and the last entry of its audit
/// log then (sequence 0 and no hash for an empty log). Kept in the registry,
/// outside the store, so a store replaced, recreated or cut back is noticed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreMark {
    pub identity: String,
    pub audit_seq: i64,
    pub audit_hash: String,
}

/// Evidence that a separate process rebuilt a summary.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Regeneration {
    pub process: u32,
    pub summary_digest: String,
}

/// One admitted epoch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Epoch {
    pub epoch_id: String,
    pub profile: String,
    pub release: String,
    pub summary_digest: String,
    pub regenerated_by: Option<u32>,
}

/// What the release job last saw of a release. (Named apart from a rule's
/// `Outcome` in the model, which is what a matched rule says of a call.)
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReleaseStatus {
    /// `automatic` or `escalated`.
    pub status: String,
    pub code: Option<String>,
}

/// One stored epoch as read back, before any check.
struct StoredEpoch {
    id: String,
    release: String,
    manifest: String,
    digest: String,
    bytes: Option<Vec<u8>>,
}

pub struct Registry {
    db: Connection,
    path: std::path::PathBuf,
}

fn sql_error(path: &Path, e: rusqlite::Error) -> InputError {
    InputError::new(path, format!("registry: {e}"))
}

impl Registry {
    /// Opens (creating if needed) the registry at `path`.
    pub fn open(path: &Path) -> Result<Registry, InputError> {
        let db = Connection::open(path).map_err(|e| sql_error(path, e))?;
        let err = |e| sql_error(path, e);
        db.pragma_update(None, "journal_mode", "WAL").map_err(err)?;
        db.busy_timeout(std::time::Duration::from_secs(10)).map_err(err)?;
        db.execute_batch(
            "CREATE TABLE IF NOT EXISTS summaries (summary_digest TEXT PRIMARY KEY, bytes BLOB NOT NULL);
             CREATE TABLE IF NOT EXISTS epochs (
                 epoch_id TEXT PRIMARY KEY, profile TEXT NOT NULL, release TEXT NOT NULL,
                 manifest TEXT NOT NULL, summary_digest TEXT NOT NULL REFERENCES summaries(summary_digest));
             CREATE TABLE IF NOT EXISTS regenerations (summary_digest TEXT NOT NULL, process INTEGER NOT NULL, regenerated_digest TEXT NOT NULL);
             CREATE TABLE IF NOT EXISTS outcomes (profile TEXT NOT NULL, release TEXT NOT NULL, status TEXT NOT NULL, code TEXT, PRIMARY KEY (profile, release));
             CREATE TABLE IF NOT EXISTS accepted_escalations (profile TEXT NOT NULL, release TEXT NOT NULL, code TEXT NOT NULL, PRIMARY KEY (profile, release));
             CREATE TABLE IF NOT EXISTS bound_stores (store TEXT PRIMARY KEY, identity TEXT NOT NULL, audit_seq INTEGER NOT NULL, audit_hash TEXT NOT NULL);",
        )
        .map_err(err)?;
        Ok(Registry { db, path: path.to_owned() })
    }

    fn err(&self, e: rusqlite::Error) -> InputError {
        sql_error(&self.path, e)
    }

    /// The runtime store bound to `store` (its name: a SQLite file's absolute
    /// path, an etcd cluster's endpoints and prefix), as last recorded.
    pub fn bound_store(&self, store: &str) -> Result<Option<StoreMark>, InputError> {
        self.db
            .query_row("SELECT identity, audit_seq, audit_hash FROM bound_stores WHERE store = ?1", params![store], |r| {
                Ok(StoreMark { identity: r.get(0)?, audit_seq: r.get(1)?, audit_hash: r.get(2)? })
            })
            .optional()
            .map_err(|e| self.err(e))
    }

    /// Records `mark` for `store`. With `rebind`, whatever was bound before
    /// is replaced (the operator started over on another store); without it
    /// the mark only moves forward, on the same store: a gateway that stops
    /// after another never moves the mark back.
    pub fn bind_store(&self, store: &str, mark: &StoreMark, rebind: bool) -> Result<(), InputError> {
        let sql = if rebind {
            "INSERT OR REPLACE INTO bound_stores VALUES (?1, ?2, ?3, ?4)"
        } else {
            "INSERT INTO bound_stores VALUES (?1, ?2, ?3, ?4) ON CONFLICT(store) DO UPDATE SET audit_seq = excluded.audit_seq, audit_hash = excluded.audit_hash
             WHERE bound_stores.identity = excluded.identity AND excluded.audit_seq > bound_stores.audit_seq"
        };
        self.db.execute(sql, params![store, mark.identity, mark.audit_seq, mark.audit_hash]).map_err(|e| self.err(e))?;
        Ok(())
    }

    /// Admits a summary with its regeneration evidence; refuses a summary whose
    /// digests do not hold or whose regeneration did not reproduce it.
    pub fn admit(&mut self, summary: &Summary, regeneration: &Regeneration) -> Result<String, InputError> {
        let problems = summary.integrity_problems();
        if !problems.is_empty() {
            return Err(InputError::new(&self.path, format!("refusing summary {}: {} do not match its content", summary.summary_digest, problems.join(", "))));
        }
        if regeneration.summary_digest != summary.summary_digest {
            return Err(InputError::new(
                &self.path,
                format!("refusing summary {}: the second process produced {}", summary.summary_digest, regeneration.summary_digest),
            ));
        }
        let id = epoch_id(summary);
        let manifest = String::from_utf8(canon::to_canonical(&manifest(summary))).unwrap_or_default();
        let tx = self.db.transaction().map_err(|e| sql_error(&self.path, e))?;
        tx.execute("INSERT OR REPLACE INTO summaries VALUES (?1, ?2)", params![summary.summary_digest, summary.to_canonical()])
            .map_err(|e| sql_error(&self.path, e))?;
        tx.execute(
            "INSERT OR REPLACE INTO epochs VALUES (?1, ?2, ?3, ?4, ?5)",
            params![id, summary.profile.id, summary.release, manifest, summary.summary_digest],
        )
        .map_err(|e| sql_error(&self.path, e))?;
        tx.execute("INSERT INTO regenerations VALUES (?1, ?2, ?3)", params![summary.summary_digest, regeneration.process, regeneration.summary_digest])
            .map_err(|e| sql_error(&self.path, e))?;
        tx.commit().map_err(|e| sql_error(&self.path, e))?;
        Ok(id)
    }

    /// Every admitted epoch, by profile and release.
    pub fn list(&self) -> Result<Vec<Epoch>, InputError> {
        let mut stmt = self
            .db
            .prepare(
                "SELECT e.epoch_id, e.profile, e.release, e.summary_digest,
                        (SELECT MAX(process) FROM regenerations r WHERE r.summary_digest = e.summary_digest)
                 FROM epochs e ORDER BY e.profile, e.release, e.epoch_id",
            )
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([], |r| Ok(Epoch { epoch_id: r.get(0)?, profile: r.get(1)?, release: r.get(2)?, summary_digest: r.get(3)?, regenerated_by: r.get(4)? }))
            .map_err(|e| self.err(e))?;
        rows.collect::<Result<_, _>>().map_err(|e| self.err(e))
    }

    /// The manifest and summary of an epoch, found by epoch id or release.
    pub fn show(&self, key: &str) -> Result<Option<(Value, Value)>, InputError> {
        let row: Option<(String, Vec<u8>)> = self
            .db
            .query_row(
                "SELECT e.manifest, s.bytes FROM epochs e JOIN summaries s USING (summary_digest)
                 WHERE e.epoch_id = ?1 OR e.release = ?1 ORDER BY e.epoch_id LIMIT 1",
                params![key],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()
            .map_err(|e| self.err(e))?;
        Ok(row.map(|(m, s)| (serde_json::from_str(&m).unwrap_or(Value::Null), serde_json::from_slice(&s).unwrap_or(Value::Null))))
    }

    /// Every way a stored epoch is not what was admitted.
    pub fn verify(&self) -> Result<Vec<String>, InputError> {
        let mut stmt = self
            .db
            .prepare("SELECT e.epoch_id, e.release, e.manifest, e.summary_digest, s.bytes FROM epochs e LEFT JOIN summaries s USING (summary_digest)")
            .map_err(|e| self.err(e))?;
        let rows: Vec<StoredEpoch> = stmt
            .query_map([], |r| Ok(StoredEpoch { id: r.get(0)?, release: r.get(1)?, manifest: r.get(2)?, digest: r.get(3)?, bytes: r.get(4)? }))
            .map_err(|e| self.err(e))?
            .collect::<Result<_, _>>()
            .map_err(|e| self.err(e))?;
        let mut problems = Vec::new();
        for row in rows {
            problems.extend(self.check(row)?.1);
        }
        Ok(problems)
    }

    /// The summary of admitted epoch `epoch_id` (by its exact id), only if
    /// every check of [`Registry::verify`] holds for it: its summary reads,
    /// is intact and canonical, its manifest matches it, the id is the
    /// manifest's digest, and a second process regenerated it. `Ok(None)`
    /// when no such epoch was admitted; the problems when it is not intact.
    pub fn admitted(&self, epoch_id: &str) -> Result<Result<Option<Summary>, Vec<String>>, InputError> {
        let row: Option<StoredEpoch> = self
            .db
            .query_row(
                "SELECT e.epoch_id, e.release, e.manifest, e.summary_digest, s.bytes FROM epochs e LEFT JOIN summaries s USING (summary_digest)
                 WHERE e.epoch_id = ?1",
                params![epoch_id],
                |r| Ok(StoredEpoch { id: r.get(0)?, release: r.get(1)?, manifest: r.get(2)?, digest: r.get(3)?, bytes: r.get(4)? }),
            )
            .optional()
            .map_err(|e| self.err(e))?;
        let Some(row) = row else { return Ok(Ok(None)) };
        let (summary, problems) = self.check(row)?;
        Ok(match (summary, problems.is_empty()) {
            (Some(s), true) => Ok(Some(s)),
            _ => Err(problems),
        })
    }

    /// The summary of a stored epoch (when it reads) and every way it is not what was admitted.
    fn check(&self, row: StoredEpoch) -> Result<(Option<Summary>, Vec<String>), InputError> {
        let StoredEpoch { id, release, manifest: manifest_text, digest, bytes } = row;
        let mut problems = Vec::new();
        let Some(bytes) = bytes else {
            problems.push(format!("{release}: epoch {id} has no stored summary"));
            return Ok((None, problems));
        };
        let summary: Summary = match serde_json::from_slice(&bytes) {
            Ok(s) => s,
            Err(e) => {
                problems.push(format!("{release}: the stored summary does not read: {e}"));
                return Ok((None, problems));
            }
        };
        let broken = summary.integrity_problems();
        if !broken.is_empty() {
            problems.push(format!("{release}: the stored summary was altered ({} do not match)", broken.join(", ")));
        }
        if summary.summary_digest != digest {
            problems.push(format!("{release}: the stored summary is {}, the epoch admitted {digest}", summary.summary_digest));
        }
        if canon::sha256(&bytes) != canon::sha256(&summary.to_canonical()) {
            problems.push(format!("{release}: the stored summary is not in canonical form"));
        }
        let expected = String::from_utf8(canon::to_canonical(&manifest(&summary))).unwrap_or_default();
        if manifest_text != expected {
            problems.push(format!("{release}: the manifest no longer matches the summary's digests"));
        }
        if epoch_id(&summary) != id {
            problems.push(format!("{release}: epoch id {id} is not the digest of its manifest"));
        }
        let regenerated: i64 = self
            .db
            .query_row("SELECT COUNT(*) FROM regenerations WHERE summary_digest = ?1 AND regenerated_digest = ?1", params![digest], |r| r.get(0))
            .map_err(|e| self.err(e))?;
        if regenerated == 0 {
            problems.push(format!("{release}: no second-process regeneration reproduced {digest}"));
        }
        Ok((Some(summary), problems))
    }

    /// What the job saw last time for this release.
    pub fn previous_outcome(&self, profile: &str, release: &str) -> Result<Option<ReleaseStatus>, InputError> {
        self.db
            .query_row("SELECT status, code FROM outcomes WHERE profile = ?1 AND release = ?2", params![profile, release], |r| {
                Ok(ReleaseStatus { status: r.get(0)?, code: r.get(1)? })
            })
            .optional()
            .map_err(|e| self.err(e))
    }

    pub fn record_outcome(&self, profile: &str, release: &str, outcome: &ReleaseStatus) -> Result<(), InputError> {
        self.db
            .execute("INSERT OR REPLACE INTO outcomes VALUES (?1, ?2, ?3, ?4)", params![profile, release, outcome.status, outcome.code])
            .map(|_| ())
            .map_err(|e| self.err(e))
    }

    /// Records that a person reviewed this release's escalation.
    pub fn accept_escalation(&self, profile: &str, release: &str, code: &str) -> Result<(), InputError> {
        self.db.execute("INSERT OR REPLACE INTO accepted_escalations VALUES (?1, ?2, ?3)", params![profile, release, code]).map(|_| ()).map_err(|e| self.err(e))
    }

    /// The reviewed escalation code of a release, if one was accepted.
    pub fn accepted_escalation(&self, profile: &str, release: &str) -> Result<Option<String>, InputError> {
        self.db
            .query_row("SELECT code FROM accepted_escalations WHERE profile = ?1 AND release = ?2", params![profile, release], |r| r.get(0))
            .optional()
            .map_err(|e| self.err(e))
    }
}
