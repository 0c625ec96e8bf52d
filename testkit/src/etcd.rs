//! A real 3-member etcd cluster for tests and the runtime benchmark: the
//! `etcd` binary (Debian's `etcd-server`) started on free loopback ports in a
//! scratch directory, with its members killed, stopped (SIGSTOP) and
//! restarted on demand, and every member killed when the cluster is dropped.
//! [`Cluster::start_tls`] starts one whose clients must speak TLS and show a
//! certificate of a CA generated for it, and [`Cluster::enable_auth`] turns
//! on etcd's user authentication with a user confined to one key prefix.
//! Health and metrics are read from each member's plain-HTTP metrics
//! listener, so they work on either. Where `etcd` is missing, [`Cluster::start`] says why and the caller skips
//! (or fails, under FCD_REQUIRE_TOOLS).

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The election timeout the members run with (ms): short, so failover tests are quick.
pub const ELECTION_TIMEOUT_MS: u64 = 500;

struct Member {
    name: String,
    client_port: u16,
    peer_port: u16,
    metrics_port: u16,
    child: Option<Child>,
    paused: bool,
}

/// A running cluster; dropping it kills every member and removes its data.
pub struct Cluster {
    dir: tempfile::TempDir,
    members: Vec<Member>,
    initial: String,
    tls: Option<Tls>,
}

/// The PEM files of a TLS cluster, in its scratch directory: the CA that
/// signed every certificate, the members' certificate and key, and a
/// client's certificate and key.
#[derive(Debug, Clone)]
pub struct Tls {
    pub ca: PathBuf,
    pub member_cert: PathBuf,
    pub member_key: PathBuf,
    pub client_cert: PathBuf,
    pub client_key: PathBuf,
}

impl Tls {
    /// Writes a fresh CA, a member certificate for 127.0.0.1 and
    /// `localhost`, and a client certificate (common name `client_name`) into `dir`.
    pub fn generate(dir: &std::path::Path, client_name: &str) -> Result<Tls, String> {
        use rcgen::{BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair, KeyUsagePurpose};
        let e = |e: rcgen::Error| format!("certificate generation: {e}");
        let mut ca = CertificateParams::new(Vec::<String>::new()).map_err(e)?;
        ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca.distinguished_name.push(DnType::CommonName, "fcd test CA");
        ca.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign, KeyUsagePurpose::DigitalSignature];
        let ca_key = KeyPair::generate().map_err(e)?;
        let ca_cert = ca.self_signed(&ca_key).map_err(e)?;
        let issuer = Issuer::new(ca, ca_key);
        let leaf = |names: Vec<String>, common: &str, usages: Vec<ExtendedKeyUsagePurpose>| -> Result<(String, String), String> {
            let mut params = CertificateParams::new(names).map_err(e)?;
            params.distinguished_name.push(DnType::CommonName, common);
            params.extended_key_usages = usages;
            let key = KeyPair::generate().map_err(e)?;
            Ok((params.signed_by(&key, &issuer).map_err(e)?.pem(), key.serialize_pem()))
        };
        // etcd's own gateway dials the member with the member's certificate: it serves and is a client.
        let both = vec![ExtendedKeyUsagePurpose::ServerAuth, ExtendedKeyUsagePurpose::ClientAuth];
        let (member_cert, member_key) = leaf(vec!["127.0.0.1".into(), "localhost".into()], "fcd test member", both)?;
        let (client_cert, client_key) = leaf(Vec::new(), client_name, vec![ExtendedKeyUsagePurpose::ClientAuth])?;
        let tls = Tls {
            ca: dir.join("ca.pem"),
            member_cert: dir.join("member.pem"),
            member_key: dir.join("member.key"),
            client_cert: dir.join("client.pem"),
            client_key: dir.join("client.key"),
        };
        for (path, text) in [
            (&tls.ca, ca_cert.pem()),
            (&tls.member_cert, member_cert),
            (&tls.member_key, member_key),
            (&tls.client_cert, client_cert),
            (&tls.client_key, client_key),
        ] {
            std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))?;
        }
        Ok(tls)
    }
}

/// Whether the `etcd` binary runs here; the reason when it does not.
pub fn available() -> Result<(), String> {
    match Command::new("etcd").arg("--version").output() {
        Ok(out) if out.status.success() => Ok(()),
        Ok(out) => Err(format!("`etcd --version` failed: {}", String::from_utf8_lossy(&out.stderr))),
        Err(e) => Err(format!("no `etcd` binary ({e}); install Debian's etcd-server")),
    }
}

impl Cluster {
    /// Starts a 3-member cluster and waits until every member is healthy.
    pub fn start() -> Result<Cluster, String> {
        Cluster::start_with(false)
    }

    /// Starts a 3-member cluster whose clients must speak TLS and present a
    /// certificate signed by the CA generated for it ([`Cluster::tls`]).
    /// Members talk to each other over plain HTTP on loopback.
    pub fn start_tls() -> Result<Cluster, String> {
        Cluster::start_with(true)
    }

    /// Starts a cluster; a start that fails (a port another process took
    /// between choosing it and the member binding it) is tried once more on
    /// fresh ports.
    fn start_with(tls: bool) -> Result<Cluster, String> {
        available()?;
        match Cluster::try_start(tls) {
            Ok(cluster) => Ok(cluster),
            Err(first) => Cluster::try_start(tls).map_err(|again| format!("{again}\n(a first start failed too: {first})")),
        }
    }

    fn try_start(tls: bool) -> Result<Cluster, String> {
        // A RAM-backed directory where there is one: every commit is an fsync.
        let dir = if std::path::Path::new("/dev/shm").is_dir() { tempfile::tempdir_in("/dev/shm") } else { tempfile::tempdir() }
            .map_err(|e| format!("no scratch directory: {e}"))?;
        // Nine distinct ports: every listener is held until all are chosen.
        let held: Vec<TcpListener> = (0..9).map(|_| TcpListener::bind("127.0.0.1:0")).collect::<std::io::Result<_>>().map_err(|e| e.to_string())?;
        let ports: Vec<u16> = held.iter().map(|l| l.local_addr().map(|a| a.port())).collect::<std::io::Result<_>>().map_err(|e| e.to_string())?;
        drop(held);
        let members: Vec<Member> = (0..3)
            .map(|i| Member {
                name: format!("m{i}"),
                client_port: ports[3 * i],
                peer_port: ports[3 * i + 1],
                metrics_port: ports[3 * i + 2],
                child: None,
                paused: false,
            })
            .collect();
        let initial = members.iter().map(|m| format!("{}=http://127.0.0.1:{}", m.name, m.peer_port)).collect::<Vec<_>>().join(",");
        let tls = if tls { Some(Tls::generate(dir.path(), "fcd-test-client")?) } else { None };
        let mut cluster = Cluster { dir, members, initial, tls };
        for i in 0..3 {
            cluster.spawn(i)?;
        }
        cluster.wait_healthy(&[0, 1, 2], Duration::from_secs(30))?;
        Ok(cluster)
    }

    fn data_dir(&self, i: usize) -> PathBuf {
        self.dir.path().join(&self.members[i].name)
    }

    fn spawn(&mut self, i: usize) -> Result<(), String> {
        let m = &self.members[i];
        let client = format!("{}://127.0.0.1:{}", self.scheme(), m.client_port);
        let peer = format!("http://127.0.0.1:{}", m.peer_port);
        let log = std::fs::File::create(self.dir.path().join(format!("{}.log", m.name))).map_err(|e| e.to_string())?;
        let mut command = Command::new("etcd");
        if let Some(tls) = &self.tls {
            command.arg("--cert-file").arg(&tls.member_cert).arg("--key-file").arg(&tls.member_key);
            command.arg("--trusted-ca-file").arg(&tls.ca).arg("--client-cert-auth");
        }
        let child = command
            .args(["--name", &m.name, "--data-dir"])
            .arg(self.data_dir(i))
            .args(["--listen-client-urls", &client, "--advertise-client-urls", &client])
            .args(["--listen-peer-urls", &peer, "--initial-advertise-peer-urls", &peer])
            .args(["--initial-cluster", &self.initial, "--initial-cluster-state", "new", "--initial-cluster-token", "fcd-test"])
            .args(["--listen-metrics-urls", &format!("http://127.0.0.1:{}", m.metrics_port)])
            .args(["--heartbeat-interval", "50", "--election-timeout", &ELECTION_TIMEOUT_MS.to_string()])
            .args(["--logger", "zap", "--log-level", "warn"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .map_err(|e| format!("etcd does not start: {e}"))?;
        self.members[i].child = Some(child);
        self.members[i].paused = false;
        Ok(())
    }

    fn scheme(&self) -> &'static str {
        if self.tls.is_some() { "https" } else { "http" }
    }

    /// The client endpoints, `http://127.0.0.1:PORT` (`https://` on a TLS cluster).
    pub fn endpoints(&self) -> Vec<String> {
        self.members.iter().map(|m| format!("{}://127.0.0.1:{}", self.scheme(), m.client_port)).collect()
    }

    /// The scratch directory the members keep their data in (a RAM disk where there is one).
    pub fn data_root(&self) -> &std::path::Path {
        self.dir.path()
    }

    /// The certificates of a TLS cluster.
    pub fn tls(&self) -> Option<&Tls> {
        self.tls.as_ref()
    }

    /// `etcd:ENDPOINTS?prefix=/PREFIX/`, the store spelling of this cluster
    /// under its own prefix; on a TLS cluster with the CA and the client's certificate.
    pub fn store(&self, prefix: &str) -> String {
        let mut spec = format!("etcd:{}?prefix=/{prefix}/", self.endpoints().join(","));
        if let Some(tls) = &self.tls {
            spec.push_str(&format!("&ca={}&cert={}&key={}", tls.ca.display(), tls.client_cert.display(), tls.client_key.display()));
        }
        spec
    }

    /// Deletes the key under `prefix` that was created last (a tamperer
    /// cutting the newest record); returns its name. Plain clusters only.
    pub fn delete_newest_under(&self, prefix: &str) -> Result<String, String> {
        use etcd_client::{Client, GetOptions, SortOrder, SortTarget};
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| e.to_string())?;
        let endpoints = self.endpoints();
        rt.block_on(async {
            let mut client = Client::connect(&endpoints, None).await.map_err(|e| format!("etcd connect: {e}"))?;
            let newest = GetOptions::new().with_prefix().with_sort(SortTarget::Create, SortOrder::Descend).with_limit(1);
            let got = client.get(prefix, Some(newest)).await.map_err(|e| format!("etcd get: {e}"))?;
            let key = got.kvs().first().map(|kv| kv.key().to_vec()).ok_or_else(|| format!("no key under {prefix}"))?;
            client.delete(key.clone(), None).await.map_err(|e| format!("etcd delete: {e}"))?;
            Ok(String::from_utf8_lossy(&key).into_owned())
        })
    }

    /// Turns on etcd's user authentication: a `root` user (password
    /// `root_password`) with the root role, and user `user` whose only role
    /// may read and write keys under `prefix`. Returns the path of a file
    /// holding `user`'s password, for the store's `password-file=`.
    pub fn enable_auth(&self, prefix: &str, user: &str, password: &str, root_password: &str) -> Result<PathBuf, String> {
        use etcd_client::{Certificate, Client, ConnectOptions, Identity, Permission, TlsOptions};
        let mut options = ConnectOptions::new().with_connect_timeout(Duration::from_secs(5));
        if let Some(tls) = &self.tls {
            let read = |p: &PathBuf| std::fs::read(p).map_err(|e| format!("{}: {e}", p.display()));
            let config = TlsOptions::new()
                .ca_certificate(Certificate::from_pem(read(&tls.ca)?))
                .identity(Identity::from_pem(read(&tls.client_cert)?, read(&tls.client_key)?));
            options = options.with_tls(config);
        }
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| e.to_string())?;
        let endpoints = self.endpoints();
        rt.block_on(async {
            let mut c = Client::connect(&endpoints, Some(options)).await.map_err(|e| format!("etcd connect: {e}"))?;
            let e = |what: &'static str| move |err: etcd_client::Error| format!("etcd {what}: {err}");
            c.user_add("root", root_password, None).await.map_err(e("user add root"))?;
            c.role_add("root").await.map_err(e("role add root"))?;
            c.user_grant_role("root", "root").await.map_err(e("grant root"))?;
            c.role_add(user).await.map_err(e("role add"))?;
            c.role_grant_permission(user, Permission::read_write(prefix).with_prefix()).await.map_err(e("grant permission"))?;
            c.user_add(user, password, None).await.map_err(e("user add"))?;
            c.user_grant_role(user, user).await.map_err(e("grant role"))?;
            c.auth_enable().await.map_err(e("auth enable"))?;
            Ok::<(), String>(())
        })?;
        let file = self.dir.path().join(format!("{user}.password"));
        std::fs::write(&file, format!("{password}\n")).map_err(|e| format!("{}: {e}", file.display()))?;
        Ok(file)
    }

    /// Whether member `i` answers its health check (it has a leader and a quorum).
    pub fn healthy(&self, i: usize) -> bool {
        let Ok(mut s) = TcpStream::connect_timeout(&([127, 0, 0, 1], self.members[i].metrics_port).into(), Duration::from_millis(300)) else { return false };
        let _ = s.set_read_timeout(Some(Duration::from_secs(3)));
        if s.write_all(b"GET /health HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").is_err() {
            return false;
        }
        let mut body = String::new();
        let _ = s.read_to_string(&mut body);
        body.contains("\"health\":\"true\"")
    }

    /// Waits until every member in `which` is healthy.
    pub fn wait_healthy(&self, which: &[usize], limit: Duration) -> Result<(), String> {
        let start = Instant::now();
        while start.elapsed() < limit {
            if which.iter().all(|&i| self.healthy(i)) {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let logs: Vec<String> = (0..3).map(|i| std::fs::read_to_string(self.dir.path().join(format!("m{i}.log"))).unwrap_or_default()).collect();
        Err(format!("members {which:?} not healthy after {limit:?}; logs:\n{}", logs.join("\n---\n")))
    }

    /// Kills member `i` (SIGKILL) and reaps it.
    pub fn kill(&mut self, i: usize) {
        if let Some(mut child) = self.members[i].child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts a killed member again on its data directory.
    pub fn restart(&mut self, i: usize) -> Result<(), String> {
        self.kill(i);
        self.spawn(i)
    }

    fn signal(&mut self, i: usize, signal: &str) {
        if let Some(child) = &self.members[i].child {
            let _ = Command::new("kill").args([signal, &child.id().to_string()]).status();
        }
    }

    /// Pauses member `i` (SIGSTOP): it holds its ports but answers nothing.
    pub fn pause(&mut self, i: usize) {
        self.signal(i, "-STOP");
        self.members[i].paused = true;
    }

    /// Resumes a paused member (SIGCONT).
    pub fn resume(&mut self, i: usize) {
        self.signal(i, "-CONT");
        self.members[i].paused = false;
    }

    /// The member that is leader now, from the members' own logs of the metrics endpoint.
    pub fn leader(&self) -> Option<usize> {
        (0..self.members.len()).find(|&i| self.metric(i, "etcd_server_is_leader") == Some(1.0))
    }

    fn metric(&self, i: usize, name: &str) -> Option<f64> {
        let mut s = TcpStream::connect_timeout(&([127, 0, 0, 1], self.members[i].metrics_port).into(), Duration::from_millis(300)).ok()?;
        s.set_read_timeout(Some(Duration::from_secs(3))).ok()?;
        s.write_all(b"GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").ok()?;
        let mut body = String::new();
        let _ = s.read_to_string(&mut body);
        body.lines().find_map(|l| l.strip_prefix(name).and_then(|v| v.trim().parse().ok()))
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for i in 0..self.members.len() {
            if self.members[i].paused {
                self.resume(i);
            }
            self.kill(i);
        }
    }
}
