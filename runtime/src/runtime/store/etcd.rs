//! The replicated store: the runtime's records in an etcd cluster, one key
//! per record (every lease, formation, piece of evidence and epoch has its
//! own key; there is no shared record that every admission writes).
//!
//! A decision reads keys, then commits in one etcd transaction whose compares
//! cover everything it read: the mod revision of every key it read (zero for
//! a key it read as absent, such as its new lease's), and for a count over a
//! range (the leases that hold an epoch open) that no key in the range changed
//! since the read. If a compare fails, the transaction's other branch returns
//! the keys' current values and the decision runs again on them.
//!
//! Records this process read or wrote are kept as guesses: a decision may
//! start from them, but it commits only if the compares prove them current,
//! and a refusal decided on any guessed record is decided again on fresh
//! reads. A cluster that cannot be reached (or has no leader) fails the
//! request: nothing is ever decided from the guesses alone.
//!
//! Sequence numbers are etcd revisions: a decision's audit sequence is the
//! revision of its transaction, so a lease's admission, an epoch's drain and
//! its retirement are ordered exactly as the cluster committed them. The
//! audit entry is chained when it is written, in the decision's own
//! transaction: each store instance (a gateway process, a command) keeps a
//! chain of its own under `audit/chains/WRITER/N`, each entry's `prev` the
//! hash of the writer's entry before, so no two writers share a key and an
//! entry edited or dropped after it was written breaks its chain. The log
//! joins the chains by sequence ([`super::super::audit::verify`] checks
//! each). Stores written before write-time chains kept one chain sealed
//! after the fact from a queue; those entries are still read and checked.

use std::collections::BTreeMap;
use std::time::Duration;

use etcd_client::{
    Certificate, Client, Compare, CompareOp, ConnectOptions, GetOptions, Identity, KeyValue, SortOrder, SortTarget, TlsOptions, Txn, TxnOp, TxnOpResponse,
};
use serde::{Deserialize, Serialize};

use super::super::audit;
use super::super::audit::AuditEntry;
use super::super::refusal::{Refusal, StorageError};
use super::super::state::{LeaseState, State};
use super::spec::EtcdAccess;
use super::{Commit, DecideFn, EpochRecord, EvidenceKind, EvidenceRecord, FormationRecord, IdKind, LeaseRecord, Store, StoredLease, View, Write};
use fcd_model::canon;

/// How many ids of one kind a store reserves at a time: the block of a
/// reservation committed at revision R is `R * ID_BLOCK ..= R * ID_BLOCK + ID_BLOCK - 1`
/// (so an id read in decimal shows the revision that reserved it).
const ID_BLOCK: i64 = 1_000;
/// How often a decision is tried before contention is reported as a storage failure.
const ATTEMPTS: usize = 200;
/// How many guessed records a store keeps.
const CACHE_LIMIT: usize = 8_192;
/// How many queued audit entries one sealing transaction chains: two
/// operations each, under etcd's default limit of 128 per transaction.
const SEAL_BATCH: i64 = 60;

fn etcd_error(e: etcd_client::Error) -> StorageError {
    StorageError::new(format!("etcd: {e}"))
}

/// Stored forms of the records (JSON values). States and kinds are kept by
/// name; a name the runtime does not know is a storage error when read.
#[derive(Serialize, Deserialize)]
struct EpochValue {
    tool: String,
    artifact: String,
    config: String,
    summary: String,
    /// Absent in an epoch written before server configuration files were bound.
    #[serde(default)]
    server_config: Option<String>,
    state: String,
    generation: i64,
}

#[derive(Serialize, Deserialize)]
struct EvidenceValue {
    kind: String,
    tool: String,
    args_digest: Option<String>,
    /// A certificate's principal; absent in evidence written before certificates named it.
    #[serde(default)]
    principal: Option<String>,
    source: String,
    target: String,
    valid_from: i64,
    valid_until: i64,
    revoked: bool,
}

#[derive(Serialize, Deserialize)]
struct FormationValue {
    snapshot: String,
    tool: String,
    args_digest: String,
    principal: String,
    source: String,
    successor: Option<String>,
    successor_evidence: Option<i64>,
    expires_at: i64,
    revoked: bool,
    /// Absent in a formation written before admission recorded it.
    #[serde(default)]
    latest_lease: Option<i64>,
}

#[derive(Serialize, Deserialize)]
struct LeaseValue {
    formation: i64,
    epoch: String,
    generation: i64,
    nonce: String,
    state: String,
    used: bool,
}

#[derive(Serialize, Deserialize)]
struct ResolutionValue {
    outcome: String,
    signature: String,
}

/// A sealed audit entry, and the head of the chain.
#[derive(Serialize, Deserialize)]
struct SealedValue {
    entry: String,
    prev: String,
    hash: String,
}

#[derive(Serialize, Deserialize)]
struct HeadValue {
    seq: i64,
    hash: String,
}

fn encode<T: Serialize>(value: &T) -> Vec<u8> {
    serde_json::to_vec(value).unwrap_or_default()
}

fn decode<T: for<'de> Deserialize<'de>>(key: &[u8], bytes: &[u8]) -> Result<T, StorageError> {
    serde_json::from_slice(bytes).map_err(|e| StorageError::new(format!("etcd key {}: {e}", String::from_utf8_lossy(key))))
}

/// The key layout under the store's prefix. Epoch ids are hex-encoded so no
/// id can reach into another key's range; numeric ids are zero-padded so
/// keys sort by id.
struct Keys {
    prefix: String,
}

impl Keys {
    fn key(&self, rest: &str) -> Vec<u8> {
        format!("{}{rest}", self.prefix).into_bytes()
    }
    fn epoch(&self, id: &str) -> Vec<u8> {
        self.key(&format!("epoch/{}", canon::hex(id.as_bytes())))
    }
    fn drained(&self, id: &str) -> Vec<u8> {
        self.key(&format!("drained/{}", canon::hex(id.as_bytes())))
    }
    fn stale(&self, id: &str) -> Vec<u8> {
        self.key(&format!("stale/{}", canon::hex(id.as_bytes())))
    }
    /// The markers of the leases that hold an epoch open: one key per lease.
    fn open_range(&self, epoch: &str) -> Vec<u8> {
        self.key(&format!("open/{}/", canon::hex(epoch.as_bytes())))
    }
    fn open(&self, epoch: &str, lease: i64) -> Vec<u8> {
        let mut k = self.open_range(epoch);
        k.extend_from_slice(format!("{lease:020}").as_bytes());
        k
    }
    fn numbered(&self, kind: &str, id: i64) -> Vec<u8> {
        self.key(&format!("{kind}/{id:020}"))
    }
    fn evidence(&self, id: i64) -> Vec<u8> {
        self.numbered("evidence", id)
    }
    fn formation(&self, id: i64) -> Vec<u8> {
        self.numbered("formation", id)
    }
    fn lease(&self, id: i64) -> Vec<u8> {
        self.numbered("lease", id)
    }
    fn resolution(&self, id: i64) -> Vec<u8> {
        self.numbered("resolution", id)
    }
    /// A writer's id claims: each put to it reserves a block of ids.
    fn id_claim(&self, writer: &str) -> Vec<u8> {
        self.key(&format!("ids/claims/{writer}"))
    }
    fn secret(&self, name: &str) -> Vec<u8> {
        self.key(&format!("secret/{name}"))
    }
    fn queue(&self) -> Vec<u8> {
        self.key("audit/queue/")
    }
    fn sealed_range(&self) -> Vec<u8> {
        self.key("audit/sealed/")
    }
    fn sealed(&self, seq: i64) -> Vec<u8> {
        self.numbered("audit/sealed", seq)
    }
    fn head(&self) -> Vec<u8> {
        self.key("audit/head")
    }
    /// Every writer's audit chain.
    fn chains(&self) -> Vec<u8> {
        self.key("audit/chains/")
    }
    fn chain_range(&self, writer: &str) -> Vec<u8> {
        self.key(&format!("audit/chains/{writer}/"))
    }
    fn chain_link(&self, writer: &str, n: u64) -> Vec<u8> {
        self.key(&format!("audit/chains/{writer}/{n:020}"))
    }
}

/// How long one request may take before the store refuses (an answer that
/// never comes is no answer: the request may or may not have been applied).
const REQUEST_TIMEOUT: Duration = Duration::from_secs(2);

impl EtcdAccess {
    /// How every connection to the cluster is made: timeouts, and the TLS and
    /// user authentication this names (its files read now, an unreadable one
    /// named in the error). Public so the benchmark's raw floor connects as the
    /// store does.
    pub fn connect_options(&self) -> Result<ConnectOptions, StorageError> {
        let access = self;
        let read = |what: &str, path: &std::path::Path| std::fs::read(path).map_err(|e| StorageError::new(format!("etcd {what} {}: {e}", path.display())));
        let mut options = ConnectOptions::new()
            .with_connect_timeout(Duration::from_secs(2))
            .with_timeout(REQUEST_TIMEOUT)
            // A member that lost its leader answers at once instead of waiting out the timeout.
            .with_require_leader(true);
        if let Some(ca) = &access.ca {
            let mut tls = TlsOptions::new().ca_certificate(Certificate::from_pem(read("CA certificates", ca)?));
            if let Some((cert, key)) = &access.identity {
                tls = tls.identity(Identity::from_pem(read("client certificate", cert)?, read("client key", key)?));
            }
            options = options.with_tls(tls);
        }
        if let Some((user, file)) = &access.user {
            let password =
                String::from_utf8(read("password file", file)?).map_err(|_| StorageError::new(format!("etcd password file {}: not UTF-8", file.display())))?;
            // The file's last line break is not part of the password.
            let password = password.strip_suffix('\n').map(|p| p.strip_suffix('\r').unwrap_or(p)).unwrap_or(&password).to_owned();
            // An expired token is fetched again with the password, not reported as a failure.
            options = options.with_user(user.clone(), password).with_auto_token_refresh(true);
        }
        Ok(options)
    }
}

/// A tokio runtime on a thread of its own, running the store's etcd
/// requests while the caller blocks on the answer. The store is synchronous,
/// and its callers may themselves run inside a tokio runtime (the gateway
/// decides calls on its runtime's threads), where blocking on a runtime of
/// the store's own would panic; so the store never blocks on a runtime, it
/// hands each request to this one and waits for the reply.
struct Driver {
    rt: Option<tokio::runtime::Runtime>,
}

impl Driver {
    fn start() -> Result<Driver, StorageError> {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("fcd-etcd")
            .enable_all()
            .build()
            .map_err(|e| StorageError::new(format!("tokio: {e}")))?;
        Ok(Driver { rt: Some(rt) })
    }

    /// Runs `work` on the driver's runtime and waits for its output: on the
    /// driver's thread when the caller is inside another runtime, else on
    /// the caller's own.
    fn run<F>(&self, work: F) -> Result<F::Output, StorageError>
    where
        F: std::future::Future + Send + 'static,
        F::Output: Send + 'static,
    {
        let rt = self.rt.as_ref().ok_or_else(|| StorageError::new("etcd: the store is closed"))?;
        // A caller outside any runtime (the CLI, the benches) drives the request itself: no hop between threads.
        if tokio::runtime::Handle::try_current().is_err() {
            return Ok(rt.block_on(work));
        }
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        rt.spawn(async move {
            let _ = tx.send(work.await);
        });
        rx.recv().map_err(|_| StorageError::new("etcd: a request ended without an answer"))
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        // Not a blocking shutdown: the store may be dropped on a thread of another runtime.
        if let Some(rt) = self.rt.take() {
            rt.shutdown_background();
        }
    }
}

/// The connection: the [`Driver`] running one etcd client
/// on one member at a time (a random one first, to spread the load); after a
/// failed request the client moves to the next member, so a member that died
/// or hangs is not kept as the way in (the balanced channel of etcd-client
/// keeps routing requests to a dead member).
struct Conn {
    driver: Driver,
    endpoints: Vec<String>,
    /// (the member in use, its client)
    client: std::sync::Mutex<(usize, Client)>,
    /// How each client is connected (TLS and authentication included).
    options: ConnectOptions,
    keys: Keys,
}

impl Conn {
    fn kv(&self) -> etcd_client::KvClient {
        self.client.lock().unwrap_or_else(|e| e.into_inner()).1.kv_client()
    }

    /// Runs one request with the timeout; a failure replaces the client before it is reported.
    fn call<T, F>(&self, request: impl FnOnce(etcd_client::KvClient) -> F) -> Result<T, StorageError>
    where
        F: std::future::Future<Output = Result<T, etcd_client::Error>> + Send + 'static,
        T: Send + 'static,
    {
        let kv = self.kv();
        let pending = request(kv);
        // The timer is made inside the runtime: it needs its clock.
        let failure = match self.driver.run(async { tokio::time::timeout(REQUEST_TIMEOUT, pending).await })? {
            Ok(Ok(value)) => return Ok(value),
            Ok(Err(e)) => etcd_error(e),
            Err(_) => StorageError::new(format!("etcd: no answer within {REQUEST_TIMEOUT:?}")),
        };
        let mut client = self.client.lock().unwrap_or_else(|e| e.into_inner());
        let next = (client.0 + 1) % self.endpoints.len().max(1);
        if let Ok(Ok(fresh)) = self.driver.run(Client::connect([self.endpoints[next].clone()], Some(self.options.clone()))) {
            *client = (next, fresh);
        }
        Err(failure)
    }

    fn get(&self, key: Vec<u8>, options: Option<GetOptions>) -> Result<etcd_client::GetResponse, StorageError> {
        self.call(|mut kv| async move { kv.get(key, options).await })
    }

    /// Every key under `prefix`, in key order, read in pages of [`PAGE`]
    /// keys at the revision of the first page: one response per page stays
    /// under the client's message limit (4 MiB) however long the audit log
    /// or the lease table grows, and the pages are one consistent snapshot.
    fn all_under(&self, prefix: Vec<u8>) -> Result<Vec<KeyValue>, StorageError> {
        let end = prefix_end(&prefix);
        let (mut start, mut revision, mut out) = (prefix, 0, Vec::new());
        loop {
            let mut options = GetOptions::new().with_range(end.clone()).with_limit(PAGE);
            if revision > 0 {
                options = options.with_revision(revision);
            }
            let mut resp = self.get(start.clone(), Some(options))?;
            if revision == 0 {
                revision = resp.header().map(|h| h.revision()).ok_or_else(|| StorageError::new("etcd: a response without a header"))?;
            }
            let more = resp.more();
            let kvs = resp.take_kvs();
            let Some(last) = kvs.last() else { break };
            start = [last.key(), &[0]].concat();
            out.extend(kvs);
            if !more {
                break;
            }
        }
        Ok(out)
    }

    fn get_one(&self, key: &[u8]) -> Result<Option<KeyValue>, StorageError> {
        Ok(self.get(key.to_vec(), None)?.take_kvs().into_iter().next())
    }

    fn txn(&self, txn: Txn) -> Result<etcd_client::TxnResponse, StorageError> {
        self.call(|mut kv| async move { kv.txn(txn).await })
    }

    /// The current revision of the cluster (a linearizable read).
    fn revision(&self) -> Result<i64, StorageError> {
        let resp = self.get(self.keys.head(), Some(GetOptions::new().with_count_only()))?;
        resp.header().map(|h| h.revision()).ok_or_else(|| StorageError::new("etcd: a response without a header"))
    }

    /// Chains every queued audit entry up to revision `through` (and any queued before it).
    fn seal_through(&self, through: i64) -> Result<(), StorageError> {
        let mut conflicts = 0;
        while conflicts < ATTEMPTS {
            let head_kv = self.get_one(&self.keys.head())?;
            let (head, head_rev) = match &head_kv {
                Some(kv) => (decode::<HeadValue>(kv.key(), kv.value())?, kv.mod_revision()),
                None => (HeadValue { seq: 0, hash: String::new() }, 0),
            };
            if head.seq >= through {
                return Ok(());
            }
            let options = GetOptions::new().with_prefix().with_sort(SortTarget::Create, SortOrder::Ascend).with_limit(SEAL_BATCH);
            let queued = self.get(self.keys.queue(), Some(options))?.take_kvs();
            if queued.is_empty() {
                return Ok(());
            }
            let mut compares = vec![Compare::mod_revision(self.keys.head(), CompareOp::Equal, head_rev)];
            let mut ops = Vec::new();
            let mut prev = head.hash;
            let mut last = head.seq;
            for kv in &queued {
                let seq = kv.create_revision();
                if seq <= last {
                    return Err(StorageError::new(format!("etcd: audit entry {seq} is queued behind the sealed head {last}")));
                }
                let entry = String::from_utf8_lossy(kv.value()).into_owned();
                let hash = audit::chain(&prev, &entry);
                ops.push(TxnOp::put(self.keys.sealed(seq), encode(&SealedValue { entry, prev: prev.clone(), hash: hash.clone() }), None));
                ops.push(TxnOp::delete(kv.key().to_vec(), None));
                compares.push(Compare::mod_revision(kv.key().to_vec(), CompareOp::Equal, kv.mod_revision()));
                prev = hash;
                last = seq;
            }
            ops.push(TxnOp::put(self.keys.head(), encode(&HeadValue { seq: last, hash: prev }), None));
            // Another sealer may have won: read the head again and go on from there.
            if !self.txn(Txn::new().when(compares).and_then(ops))?.succeeded() {
                conflicts += 1;
            }
        }
        Err(StorageError::new("etcd: the audit queue could not be sealed (contention)"))
    }
}

/// One record read by a decision: its value (absent: `None`), its mod
/// revision (absent: 0), and whether it came from the guesses.
struct Read {
    value: Option<Vec<u8>>,
    mod_rev: i64,
    guessed: bool,
}

/// The etcd store.
pub(crate) struct EtcdStore {
    conn: Conn,
    /// Guesses: key -> (value, mod revision) as last seen by this process.
    cache: BTreeMap<Vec<u8>, (Vec<u8>, i64)>,
    /// Reserved id blocks: kind -> (next, last).
    ids: BTreeMap<IdKind, (i64, i64)>,
    /// This store's audit chain: its writer id, the number and hash of its
    /// next link's predecessor; `None` when a transaction's outcome was not
    /// known (read back from the cluster before the next decision).
    writer: String,
    chain: Option<(u64, String)>,
    /// The keys of each decision committed since the log was last taken.
    #[cfg(feature = "test-hooks")]
    key_log: Vec<super::TxnKeys>,
}

impl EtcdStore {
    /// Connects to the cluster at `endpoints`, keeping the runtime's keys under `prefix`.
    pub(crate) fn connect(endpoints: &[String], prefix: &str, access: &EtcdAccess) -> Result<EtcdStore, StorageError> {
        let driver = Driver::start()?;
        if endpoints.is_empty() {
            return Err(StorageError::new("etcd: no endpoints"));
        }
        let mut seed = [0u8; 8];
        getrandom::fill(&mut seed).map_err(|e| StorageError::new(format!("no randomness: {e}")))?;
        let first = (u64::from_le_bytes(seed) % endpoints.len() as u64) as usize;
        let options = access.connect_options()?;
        // The first member that answers, from a random one on: a dead member is not the store.
        let mut failures = Vec::new();
        let mut connected = None;
        for k in 0..endpoints.len() {
            let at = (first + k) % endpoints.len();
            // A client connects lazily: one read proves the member answers (and has a leader).
            let probe = endpoints[at].clone();
            let (options, head) = (options.clone(), Keys { prefix: prefix.to_owned() }.head());
            let answered = driver.run(async move {
                let mut client = Client::connect([probe], Some(options)).await?;
                tokio::time::timeout(REQUEST_TIMEOUT, client.get(head, Some(GetOptions::new().with_count_only())))
                    .await
                    .map_err(|_| etcd_client::Error::InvalidArgs(format!("no answer within {REQUEST_TIMEOUT:?}")))??;
                Ok::<Client, etcd_client::Error>(client)
            })?;
            match answered {
                Ok(client) => {
                    connected = Some((at, client));
                    break;
                }
                Err(e) => failures.push(format!("{}: {e}", endpoints[at])),
            }
        }
        let Some((first, client)) = connected else {
            return Err(StorageError::new(format!("etcd: no member answers ({})", failures.join("; "))));
        };
        let conn =
            Conn { driver, endpoints: endpoints.to_vec(), client: std::sync::Mutex::new((first, client)), options, keys: Keys { prefix: prefix.to_owned() } };
        let mut id = [0u8; 12];
        getrandom::fill(&mut id).map_err(|e| StorageError::new(format!("no randomness: {e}")))?;
        Ok(EtcdStore {
            conn,
            cache: BTreeMap::new(),
            ids: BTreeMap::new(),
            writer: canon::hex(&id),
            chain: Some((0, String::new())),
            #[cfg(feature = "test-hooks")]
            key_log: Vec::new(),
        })
    }

    /// This writer's last audit link as the cluster holds it: the number and
    /// hash the next link follows (none yet: 0 and the empty hash).
    fn chain_tail(&self) -> Result<(u64, String), StorageError> {
        let options = GetOptions::new().with_prefix().with_sort(SortTarget::Key, SortOrder::Descend).with_limit(1);
        let Some(kv) = self.conn.get(self.conn.keys.chain_range(&self.writer), Some(options))?.take_kvs().into_iter().next() else {
            return Ok((0, String::new()));
        };
        let key = String::from_utf8_lossy(kv.key()).into_owned();
        let n = key.rsplit('/').next().and_then(|n| n.parse::<u64>().ok()).ok_or_else(|| StorageError::new(format!("etcd key {key}: not an audit link")))?;
        let link: SealedValue = decode(kv.key(), kv.value())?;
        Ok((n + 1, link.hash))
    }

    /// Reserves a block of ids of `kind` with no shared key: one put to this
    /// writer's own claim key, whose transaction's revision R no other
    /// transaction has, so the block `R * ID_BLOCK …` is this store's alone.
    /// Blocks of independent writers never meet, and nothing is compared, so
    /// reservations never conflict. (Stores written before kept one counter
    /// per kind, `ids/KIND`, whose ids are all below every such block: a
    /// counter moved by at most 64 per revision. Every new record's key is
    /// compared absent at commit in any case.)
    fn reserve(&mut self, kind: IdKind) -> Result<(), StorageError> {
        let key = self.conn.keys.id_claim(&self.writer);
        let resp = self.conn.txn(Txn::new().and_then([TxnOp::put(key.clone(), kind.as_str(), None)]))?;
        #[cfg(feature = "test-hooks")]
        {
            let name = String::from_utf8_lossy(&key[self.conn.keys.prefix.len()..]).into_owned();
            self.key_log.push(super::TxnKeys { read: Vec::new(), written: vec![name] });
        }
        let revision = resp.header().map(|h| h.revision()).ok_or_else(|| StorageError::new("etcd: a response without a header"))?;
        let first = revision.checked_mul(ID_BLOCK).filter(|f| *f > 0).ok_or_else(|| StorageError::new(format!("etcd: revision {revision} leaves no ids")))?;
        self.ids.insert(kind, (first, first + ID_BLOCK - 1));
        Ok(())
    }

    #[cfg(feature = "test-hooks")]
    fn log_keys(&mut self, reads: &BTreeMap<Vec<u8>, Read>, ranges: &[(Vec<u8>, i64)], planned: &BTreeMap<Vec<u8>, Option<Vec<u8>>>, link: &[u8]) {
        let prefix = self.conn.keys.prefix.len();
        let name = |k: &[u8]| String::from_utf8_lossy(k.get(prefix..).unwrap_or(k)).into_owned();
        let mut read: Vec<String> = reads.keys().map(|k| name(k)).collect();
        read.extend(ranges.iter().map(|(k, _)| format!("{}*", name(k))));
        let mut written: Vec<String> = planned.keys().map(|k| name(k)).collect();
        written.push(name(link));
        self.key_log.push(super::TxnKeys { read, written });
    }

    fn remember(&mut self, key: Vec<u8>, value: Option<(Vec<u8>, i64)>) {
        if self.cache.len() >= CACHE_LIMIT {
            self.cache.clear();
        }
        match value {
            Some(v) => self.cache.insert(key, v),
            None => self.cache.remove(&key),
        };
    }
}

/// Reads for one run of a decision: each key is read once (from the guesses
/// or the cluster) and remembered with its revision for the compares.
struct DecisionView<'s> {
    store: &'s mut EtcdStore,
    reads: BTreeMap<Vec<u8>, Read>,
    /// Counted ranges and the revision they were counted at.
    ranges: Vec<(Vec<u8>, i64)>,
    /// Read only fresh values (a refusal is being checked again).
    fresh: bool,
}

impl DecisionView<'_> {
    fn read(&mut self, key: Vec<u8>) -> Result<Option<Vec<u8>>, StorageError> {
        if let Some(r) = self.reads.get(&key) {
            return Ok(r.value.clone());
        }
        let read = match self.store.cache.get(&key) {
            Some((value, rev)) if !self.fresh => Read { value: Some(value.clone()), mod_rev: *rev, guessed: true },
            _ => match self.store.conn.get_one(&key)? {
                Some(kv) => Read { value: Some(kv.value().to_vec()), mod_rev: kv.mod_revision(), guessed: false },
                None => Read { value: None, mod_rev: 0, guessed: false },
            },
        };
        let value = read.value.clone();
        self.reads.insert(key, read);
        Ok(value)
    }

    fn guessed(&self) -> bool {
        self.reads.values().any(|r| r.guessed)
    }
}

fn epoch_record(id: &str, key: &[u8], bytes: &[u8]) -> Result<EpochRecord, StorageError> {
    let v: EpochValue = decode(key, bytes)?;
    let state = State::parse(&v.state).map_err(|e| StorageError::new(format!("epoch {id}: {}", e.detail)))?;
    Ok(EpochRecord {
        id: id.to_owned(),
        tool: v.tool,
        artifact: v.artifact,
        config: v.config,
        summary: v.summary,
        server_config: v.server_config,
        state,
        generation: v.generation,
    })
}

fn evidence_record(id: i64, key: &[u8], bytes: &[u8]) -> Result<EvidenceRecord, StorageError> {
    let v: EvidenceValue = decode(key, bytes)?;
    Ok(EvidenceRecord {
        id,
        kind: EvidenceKind::parse(&v.kind)?,
        tool: v.tool,
        args_digest: v.args_digest,
        principal: v.principal,
        source: v.source,
        target: v.target,
        valid_from: v.valid_from,
        valid_until: v.valid_until,
        revoked: v.revoked,
    })
}

fn formation_record(id: i64, key: &[u8], bytes: &[u8]) -> Result<FormationRecord, StorageError> {
    let v: FormationValue = decode(key, bytes)?;
    Ok(FormationRecord {
        id,
        snapshot: v.snapshot,
        tool: v.tool,
        args_digest: v.args_digest,
        principal: v.principal,
        source: v.source,
        successor: v.successor,
        successor_evidence: v.successor_evidence,
        expires_at: v.expires_at,
        revoked: v.revoked,
        latest_lease: v.latest_lease,
    })
}

fn lease_record(id: i64, key: &[u8], bytes: &[u8]) -> Result<LeaseRecord, StorageError> {
    let v: LeaseValue = decode(key, bytes)?;
    let state = LeaseState::parse(&v.state).map_err(|e| StorageError::new(format!("lease {id}: {}", e.detail)))?;
    Ok(LeaseRecord { id, formation: v.formation, epoch: v.epoch, generation: v.generation, nonce: v.nonce, state, used: v.used })
}

fn resolver_key(bytes: &[u8]) -> Option<[u8; 32]> {
    let text = std::str::from_utf8(bytes).ok()?;
    let raw: Vec<u8> = (0..text.len()).step_by(2).map(|i| text.get(i..i + 2).and_then(|h| u8::from_str_radix(h, 16).ok())).collect::<Option<_>>()?;
    <[u8; 32]>::try_from(raw).ok()
}

/// Reads a decision makes and queries alike; `read` is where the bytes come from.
macro_rules! record_reads {
    () => {
        fn epoch(&mut self, id: &str) -> Result<Option<EpochRecord>, StorageError> {
            let key = self.keys().epoch(id);
            self.read(key.clone())?.map(|b| epoch_record(id, &key, &b)).transpose()
        }

        fn evidence(&mut self, id: i64) -> Result<Option<EvidenceRecord>, StorageError> {
            let key = self.keys().evidence(id);
            self.read(key.clone())?.map(|b| evidence_record(id, &key, &b)).transpose()
        }

        fn formation(&mut self, id: i64) -> Result<Option<FormationRecord>, StorageError> {
            let key = self.keys().formation(id);
            self.read(key.clone())?.map(|b| formation_record(id, &key, &b)).transpose()
        }

        fn lease(&mut self, id: i64) -> Result<Option<LeaseRecord>, StorageError> {
            let key = self.keys().lease(id);
            self.read(key.clone())?.map(|b| lease_record(id, &key, &b)).transpose()
        }

        fn resolver(&mut self) -> Result<Option<[u8; 32]>, StorageError> {
            let key = self.keys().secret("resolver");
            Ok(self.read(key)?.and_then(|b| resolver_key(&b)))
        }

        fn lost_calls(&mut self) -> Result<Option<String>, StorageError> {
            // Every decision is committed to a quorum before it returns: none is ever lost.
            Ok(None)
        }
    };
}

impl DecisionView<'_> {
    fn keys(&self) -> &Keys {
        &self.store.conn.keys
    }
}

impl View for DecisionView<'_> {
    record_reads!();

    fn open_leases(&mut self, epoch: &str) -> Result<usize, StorageError> {
        let range = self.keys().open_range(epoch);
        let resp = self.store.conn.get(range.clone(), Some(GetOptions::new().with_prefix().with_count_only()))?;
        let rev = resp.header().map(|h| h.revision()).ok_or_else(|| StorageError::new("etcd: a response without a header"))?;
        self.ranges.push((range, rev));
        Ok(usize::try_from(resp.count()).unwrap_or(0))
    }

    fn next_id(&mut self, kind: IdKind) -> Result<i64, StorageError> {
        let (next, last) = match self.store.ids.get(&kind) {
            Some(&(next, last)) if next <= last => (next, last),
            _ => {
                self.store.reserve(kind)?;
                self.store.ids.get(&kind).copied().ok_or_else(|| StorageError::new("etcd: no id reserved"))?
            }
        };
        // Spent whether or not the decision commits: an id is never offered twice.
        self.store.ids.insert(kind, (next + 1, last));
        let key = match kind {
            IdKind::Evidence => self.keys().evidence(next),
            IdKind::Formation => self.keys().formation(next),
            IdKind::Lease => self.keys().lease(next),
        };
        // The new record's key must still be absent when the decision commits.
        self.reads.insert(key, Read { value: None, mod_rev: 0, guessed: false });
        Ok(next)
    }

    fn all_leases(&mut self) -> Result<Vec<StoredLease>, StorageError> {
        Err(StorageError::new("a decision does not list every lease"))
    }
}

/// Reads for queries: always from the cluster, nothing remembered.
struct QueryView<'s> {
    conn: &'s Conn,
}

impl QueryView<'_> {
    fn keys(&self) -> &Keys {
        &self.conn.keys
    }

    fn read(&mut self, key: Vec<u8>) -> Result<Option<Vec<u8>>, StorageError> {
        Ok(self.conn.get_one(&key)?.map(|kv| kv.value().to_vec()))
    }
}

impl View for QueryView<'_> {
    record_reads!();

    fn open_leases(&mut self, epoch: &str) -> Result<usize, StorageError> {
        let resp = self.conn.get(self.keys().open_range(epoch), Some(GetOptions::new().with_prefix().with_count_only()))?;
        Ok(usize::try_from(resp.count()).unwrap_or(0))
    }

    fn next_id(&mut self, _kind: IdKind) -> Result<i64, StorageError> {
        Err(StorageError::new("a query allocates no ids"))
    }

    fn all_leases(&mut self) -> Result<Vec<StoredLease>, StorageError> {
        let kvs = self.conn.all_under(self.keys().key("lease/"))?;
        let mut leases = Vec::with_capacity(kvs.len());
        for kv in kvs {
            let key = String::from_utf8_lossy(kv.key()).into_owned();
            let id = key.rsplit('/').next().and_then(|n| n.parse::<i64>().ok()).ok_or_else(|| StorageError::new(format!("etcd key {key}: not a lease id")))?;
            leases.push(StoredLease { record: lease_record(id, kv.key(), kv.value())?, admitted_seq: kv.create_revision() });
        }
        Ok(leases)
    }
}

/// The keys a decision's writes put (`Some`) or delete (`None`), computed
/// from the values the decision read.
fn plan(keys: &Keys, reads: &BTreeMap<Vec<u8>, Read>, writes: &[Write]) -> Result<BTreeMap<Vec<u8>, Option<Vec<u8>>>, StorageError> {
    let mut out: BTreeMap<Vec<u8>, Option<Vec<u8>>> = BTreeMap::new();
    // The current bytes of a key this decision read (or already rewrote).
    fn current(out: &BTreeMap<Vec<u8>, Option<Vec<u8>>>, reads: &BTreeMap<Vec<u8>, Read>, key: &[u8]) -> Result<Vec<u8>, StorageError> {
        out.get(key)
            .cloned()
            .flatten()
            .or_else(|| reads.get(key).and_then(|r| r.value.clone()))
            .ok_or_else(|| StorageError::new(format!("etcd: a decision writes {} without having read it", String::from_utf8_lossy(key))))
    }
    for w in writes {
        match w {
            Write::NewEpoch(e) => {
                let v = EpochValue {
                    tool: e.tool.clone(),
                    artifact: e.artifact.clone(),
                    config: e.config.clone(),
                    summary: e.summary.clone(),
                    server_config: e.server_config.clone(),
                    state: e.state.as_str().to_owned(),
                    generation: e.generation,
                };
                out.insert(keys.epoch(&e.id), Some(encode(&v)));
            }
            Write::EpochState { epoch, to } => {
                let key = keys.epoch(epoch);
                let mut v: EpochValue = decode(&key, &current(&out, reads, &key)?)?;
                v.state = to.as_str().to_owned();
                out.insert(key, Some(encode(&v)));
                match to {
                    State::Draining => {
                        out.insert(keys.drained(epoch), Some(Vec::new()));
                    }
                    State::Stale => {
                        out.insert(keys.stale(epoch), Some(Vec::new()));
                    }
                    State::Advertised | State::HiddenButValid => {}
                }
            }
            Write::NewEvidence(e) => {
                let v = EvidenceValue {
                    kind: e.kind.as_str().to_owned(),
                    tool: e.tool.clone(),
                    args_digest: e.args_digest.clone(),
                    principal: e.principal.clone(),
                    source: e.source.clone(),
                    target: e.target.clone(),
                    valid_from: e.valid_from,
                    valid_until: e.valid_until,
                    revoked: e.revoked,
                };
                out.insert(keys.evidence(e.id), Some(encode(&v)));
            }
            Write::NewFormation(f) => {
                let v = FormationValue {
                    snapshot: f.snapshot.clone(),
                    tool: f.tool.clone(),
                    args_digest: f.args_digest.clone(),
                    principal: f.principal.clone(),
                    source: f.source.clone(),
                    successor: f.successor.clone(),
                    successor_evidence: f.successor_evidence,
                    expires_at: f.expires_at,
                    revoked: f.revoked,
                    latest_lease: f.latest_lease,
                };
                out.insert(keys.formation(f.id), Some(encode(&v)));
            }
            Write::RevokeEvidence(id) => {
                let key = keys.evidence(*id);
                let mut v: EvidenceValue = decode(&key, &current(&out, reads, &key)?)?;
                v.revoked = true;
                out.insert(key, Some(encode(&v)));
            }
            Write::RevokeFormation(id) => {
                let key = keys.formation(*id);
                let mut v: FormationValue = decode(&key, &current(&out, reads, &key)?)?;
                v.revoked = true;
                out.insert(key, Some(encode(&v)));
            }
            Write::LatestLease { formation, lease } => {
                let key = keys.formation(*formation);
                let mut v: FormationValue = decode(&key, &current(&out, reads, &key)?)?;
                v.latest_lease = Some(*lease);
                out.insert(key, Some(encode(&v)));
            }
            Write::NewLease(l) => {
                let v = LeaseValue {
                    formation: l.formation,
                    epoch: l.epoch.clone(),
                    generation: l.generation,
                    nonce: l.nonce.clone(),
                    state: l.state.as_str().to_owned(),
                    used: l.used,
                };
                out.insert(keys.lease(l.id), Some(encode(&v)));
                if l.state.open() {
                    out.insert(keys.open(&l.epoch, l.id), Some(Vec::new()));
                }
            }
            Write::LeaseState { id, to } => {
                let key = keys.lease(*id);
                let mut v: LeaseValue = decode(&key, &current(&out, reads, &key)?)?;
                v.state = to.as_str().to_owned();
                if !to.open() {
                    out.insert(keys.open(&v.epoch, *id), None);
                }
                out.insert(key, Some(encode(&v)));
            }
            Write::LeaseUsed(id) => {
                let key = keys.lease(*id);
                let mut v: LeaseValue = decode(&key, &current(&out, reads, &key)?)?;
                v.used = true;
                out.insert(key, Some(encode(&v)));
            }
            Write::Resolution { lease, outcome, signature } => {
                out.insert(keys.resolution(*lease), Some(encode(&ResolutionValue { outcome: outcome.clone(), signature: signature.clone() })));
            }
        }
    }
    Ok(out)
}

/// Whether a key holds a record worth keeping as a guess.
fn guessable(keys: &Keys, key: &[u8]) -> bool {
    ["epoch/", "evidence/", "formation/", "lease/", "secret/"].iter().any(|kind| key.starts_with(&keys.key(kind)))
}

impl Store for EtcdStore {
    /// Every commit is replicated to a quorum (and fsynced there) before it returns, whatever `commit` says.
    fn decide(&mut self, _commit: Commit, decide: &mut DecideFn<'_>) -> Result<i64, Refusal> {
        let mut fresh = false;
        for _ in 0..ATTEMPTS {
            let mut view = DecisionView { store: self, reads: BTreeMap::new(), ranges: Vec::new(), fresh };
            let decided = decide(&mut view);
            let guessed = view.guessed();
            let DecisionView { reads, ranges, .. } = view;
            let decision = match decided {
                Ok(d) => d,
                // A refusal decided on a guess is decided again on what the cluster holds now.
                Err(refusal) if guessed && !refusal.is_storage() => {
                    for key in reads.keys() {
                        self.cache.remove(key);
                    }
                    fresh = true;
                    continue;
                }
                Err(refusal) => return Err(refusal),
            };
            let keys = &self.conn.keys;
            let planned = plan(keys, &reads, &decision.writes)?;
            let mut compares: Vec<Compare> = reads.iter().map(|(k, r)| Compare::mod_revision(k.clone(), CompareOp::Equal, r.mod_rev)).collect();
            compares.extend(ranges.iter().map(|(range, rev)| Compare::mod_revision(range.clone(), CompareOp::Less, rev + 1).with_prefix()));
            let mut ops: Vec<TxnOp> = planned
                .iter()
                .map(|(k, v)| match v {
                    Some(v) => TxnOp::put(k.clone(), v.clone(), None),
                    None => TxnOp::delete(k.clone(), None),
                })
                .collect();
            // The entry is chained now, in this transaction, after this writer's last one.
            let (n, prev) = match self.chain.clone() {
                Some(c) => c,
                None => self.chain_tail()?,
            };
            let entry = audit::entry_text(&decision.audit);
            let hash = audit::chain(&prev, &entry);
            let link = keys.chain_link(&self.writer, n);
            compares.push(Compare::create_revision(link.clone(), CompareOp::Equal, 0));
            ops.push(TxnOp::put(link, encode(&SealedValue { entry, prev: prev.clone(), hash: hash.clone() }), None));
            let refresh: Vec<TxnOp> = reads.keys().map(|k| TxnOp::get(k.clone(), None)).collect();
            // Until the cluster answers, whether the link was written is not known.
            self.chain = None;
            let resp = self.conn.txn(Txn::new().when(compares).and_then(ops).or_else(refresh))?;
            self.chain = Some(if resp.succeeded() { (n + 1, hash) } else { (n, prev) });
            if resp.succeeded() {
                let seq = resp.header().map(|h| h.revision()).ok_or_else(|| StorageError::new("etcd: a response without a header"))?;
                #[cfg(feature = "test-hooks")]
                self.log_keys(&reads, &ranges, &planned, &self.conn.keys.chain_link(&self.writer, n));
                for (key, read) in reads {
                    if !read.guessed && guessable(&self.conn.keys, &key) {
                        self.remember(key, read.value.map(|v| (v, read.mod_rev)));
                    }
                }
                for (key, value) in planned {
                    if guessable(&self.conn.keys, &key) {
                        self.remember(key, value.map(|v| (v, seq)));
                    }
                }
                return Ok(seq);
            }
            // Something the decision read changed: take the current values and decide again.
            for (key, op) in reads.keys().zip(resp.op_responses()) {
                if let TxnOpResponse::Get(mut got) = op {
                    let value = got.take_kvs().into_iter().next().map(|kv| (kv.value().to_vec(), kv.mod_revision()));
                    if guessable(&self.conn.keys, key) {
                        self.remember(key.clone(), value);
                    }
                }
            }
        }
        Err(StorageError::new(format!("etcd: the decision kept conflicting with others ({ATTEMPTS} attempts)")).into())
    }

    fn reader(&self) -> Box<dyn View + '_> {
        Box::new(QueryView { conn: &self.conn })
    }

    fn lifecycle_seqs(&self, epoch: &str) -> Result<(Option<i64>, Option<i64>), StorageError> {
        let keys = &self.conn.keys;
        let gets = [keys.epoch(epoch), keys.drained(epoch), keys.stale(epoch)].map(|k| TxnOp::get(k, None));
        let resp = self.conn.txn(Txn::new().and_then(gets))?;
        let mut found = resp.op_responses().into_iter().map(|op| match op {
            TxnOpResponse::Get(mut g) => g.take_kvs().into_iter().next().map(|kv| kv.create_revision()),
            _ => None,
        });
        if found.next().flatten().is_none() {
            return Err(StorageError::new(format!("no epoch {epoch}")));
        }
        Ok((found.next().flatten(), found.next().flatten()))
    }

    fn mac_key(&mut self) -> Result<Vec<u8>, StorageError> {
        let key = self.conn.keys.secret("mac");
        if self.conn.get_one(&key)?.is_none() {
            let mut fresh = [0u8; 32];
            getrandom::fill(&mut fresh).map_err(|e| StorageError::new(format!("no randomness: {e}")))?;
            // Created once: whoever loses the race reads the winner's key.
            let txn =
                Txn::new().when([Compare::create_revision(key.clone(), CompareOp::Equal, 0)]).and_then([TxnOp::put(key.clone(), canon::hex(&fresh), None)]);
            self.conn.txn(txn)?;
        }
        let kv = self.conn.get_one(&key)?.ok_or_else(|| StorageError::new("etcd: the token key vanished"))?;
        let text = String::from_utf8_lossy(kv.value()).into_owned();
        let raw: Option<Vec<u8>> = (0..text.len()).step_by(2).map(|i| text.get(i..i + 2).and_then(|h| u8::from_str_radix(h, 16).ok())).collect();
        raw.filter(|k| k.len() == 32).ok_or_else(|| StorageError::new("etcd: the token key does not read as 32 bytes of hex"))
    }

    fn set_resolver(&self, key: &[u8; 32]) -> Result<(), StorageError> {
        let (k, v) = (self.conn.keys.secret("resolver"), canon::hex(key));
        self.conn.call(|mut kv| async move { kv.put(k, v, None).await })?;
        Ok(())
    }

    fn audit(&self) -> Result<Vec<AuditEntry>, StorageError> {
        let through = self.conn.revision()?;
        self.conn.seal_through(through)?;
        let keys = &self.conn.keys;
        let mut entries = Vec::new();
        for kv in self.conn.all_under(keys.sealed_range())? {
            let key = String::from_utf8_lossy(kv.key()).into_owned();
            let seq = key
                .rsplit('/')
                .next()
                .and_then(|n| n.parse::<i64>().ok())
                .ok_or_else(|| StorageError::new(format!("etcd key {key}: not an audit sequence")))?;
            let v: SealedValue = decode(kv.key(), kv.value())?;
            entries.push(AuditEntry { seq, entry: v.entry, prev: v.prev, hash: v.hash, chain: String::new() });
        }
        // An entry still queued at or below the sealed head was slipped in behind the chain: it shows, unchained.
        let last = entries.last().map_or(0, |e| e.seq);
        for kv in self.conn.all_under(keys.queue())? {
            if kv.create_revision() <= last {
                entries.push(AuditEntry {
                    seq: kv.create_revision(),
                    entry: String::from_utf8_lossy(kv.value()).into_owned(),
                    prev: String::new(),
                    hash: String::new(),
                    chain: String::new(),
                });
            }
        }
        // Every writer's chain, each link at the revision that created it.
        for kv in self.conn.all_under(keys.chains())? {
            let key = String::from_utf8_lossy(kv.key()).into_owned();
            let writer = key
                .strip_prefix(&String::from_utf8_lossy(&keys.chains()).into_owned())
                .and_then(|rest| rest.split_once('/'))
                .map(|(w, _)| w.to_owned())
                .ok_or_else(|| StorageError::new(format!("etcd key {key}: not an audit link")))?;
            let v: SealedValue = decode(kv.key(), kv.value())?;
            entries.push(AuditEntry { seq: kv.create_revision(), entry: v.entry, prev: v.prev, hash: v.hash, chain: writer });
        }
        entries.sort_by_key(|e| e.seq);
        Ok(entries)
    }

    /// The newest entry in a few reads: the newest link of any writer's
    /// chain (by the revision that created it) and the newest sealed entry
    /// of a store written before write-time chains. A store that still has
    /// queued entries from then is read whole (they are sealed first).
    fn audit_last(&self) -> Result<Option<AuditEntry>, StorageError> {
        let keys = &self.conn.keys;
        if self.conn.get(keys.queue(), Some(GetOptions::new().with_prefix().with_count_only()))?.count() > 0 {
            return Ok(self.audit()?.pop());
        }
        let newest = |range: Vec<u8>, by: SortTarget| -> Result<Option<KeyValue>, StorageError> {
            let options = GetOptions::new().with_prefix().with_sort(by, SortOrder::Descend).with_limit(1);
            Ok(self.conn.get(range, Some(options))?.take_kvs().into_iter().next())
        };
        let chains = String::from_utf8_lossy(&keys.chains()).into_owned();
        let linked = match newest(keys.chains(), SortTarget::Create)? {
            Some(kv) => {
                let key = String::from_utf8_lossy(kv.key()).into_owned();
                let writer = key.strip_prefix(&chains).and_then(|rest| rest.split_once('/')).map(|(w, _)| w.to_owned());
                let writer = writer.ok_or_else(|| StorageError::new(format!("etcd key {key}: not an audit link")))?;
                let v: SealedValue = decode(kv.key(), kv.value())?;
                Some(AuditEntry { seq: kv.create_revision(), entry: v.entry, prev: v.prev, hash: v.hash, chain: writer })
            }
            None => None,
        };
        let sealed = match newest(keys.sealed_range(), SortTarget::Key)? {
            Some(kv) => {
                let key = String::from_utf8_lossy(kv.key()).into_owned();
                let seq = key.rsplit('/').next().and_then(|n| n.parse::<i64>().ok());
                let seq = seq.ok_or_else(|| StorageError::new(format!("etcd key {key}: not an audit sequence")))?;
                let v: SealedValue = decode(kv.key(), kv.value())?;
                Some(AuditEntry { seq, entry: v.entry, prev: v.prev, hash: v.hash, chain: String::new() })
            }
            None => None,
        };
        Ok(linked.into_iter().chain(sealed).max_by_key(|e| e.seq))
    }

    fn acknowledge_lost_calls(&mut self) -> Result<Vec<String>, Refusal> {
        Ok(Vec::new())
    }

    #[cfg(feature = "test-hooks")]
    fn take_key_log(&mut self) -> Vec<super::TxnKeys> {
        std::mem::take(&mut self.key_log)
    }
}

/// Keys per page of [`Conn::all_under`].
const PAGE: i64 = 512;

/// The end of the key range that holds every key starting with `prefix`
/// (etcd's prefix rule: the prefix with its last byte below 0xff raised by
/// one, the 0xff bytes after it dropped; all keys when there is none).
fn prefix_end(prefix: &[u8]) -> Vec<u8> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < 0xff {
            end.push(last + 1);
            return end;
        }
    }
    vec![0]
}
