//! A real 3-member etcd cluster for tests and the runtime benchmark: the
//! `etcd` binary (Debian's `etcd-server`) started on free loopback ports in a
//! scratch directory, with its members killed, stopped (SIGSTOP) and
//! restarted on demand, and every member killed when the cluster is dropped.
//! Where `etcd` is missing, [`Cluster::start`] says why and the caller skips
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
    child: Option<Child>,
    paused: bool,
}

/// A running cluster; dropping it kills every member and removes its data.
pub struct Cluster {
    dir: tempfile::TempDir,
    members: Vec<Member>,
    initial: String,
}

fn free_port() -> std::io::Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
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
        available()?;
        // A RAM-backed directory where there is one: every commit is an fsync.
        let dir = if std::path::Path::new("/dev/shm").is_dir() { tempfile::tempdir_in("/dev/shm") } else { tempfile::tempdir() }
            .map_err(|e| format!("no scratch directory: {e}"))?;
        let mut members = Vec::new();
        for i in 0..3 {
            let (client_port, peer_port) = (free_port().map_err(|e| e.to_string())?, free_port().map_err(|e| e.to_string())?);
            members.push(Member { name: format!("m{i}"), client_port, peer_port, child: None, paused: false });
        }
        let initial = members.iter().map(|m| format!("{}=http://127.0.0.1:{}", m.name, m.peer_port)).collect::<Vec<_>>().join(",");
        let mut cluster = Cluster { dir, members, initial };
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
        let client = format!("http://127.0.0.1:{}", m.client_port);
        let peer = format!("http://127.0.0.1:{}", m.peer_port);
        let log = std::fs::File::create(self.dir.path().join(format!("{}.log", m.name))).map_err(|e| e.to_string())?;
        let child = Command::new("etcd")
            .args(["--name", &m.name, "--data-dir"])
            .arg(self.data_dir(i))
            .args(["--listen-client-urls", &client, "--advertise-client-urls", &client])
            .args(["--listen-peer-urls", &peer, "--initial-advertise-peer-urls", &peer])
            .args(["--initial-cluster", &self.initial, "--initial-cluster-state", "new", "--initial-cluster-token", "fcd-test"])
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

    /// The client endpoints, `http://127.0.0.1:PORT`.
    pub fn endpoints(&self) -> Vec<String> {
        self.members.iter().map(|m| format!("http://127.0.0.1:{}", m.client_port)).collect()
    }

    /// `etcd:ENDPOINTS?prefix=/PREFIX/`, the store spelling of this cluster under its own prefix.
    pub fn store(&self, prefix: &str) -> String {
        format!("etcd:{}?prefix=/{prefix}/", self.endpoints().join(","))
    }

    /// Whether member `i` answers its health check (it has a leader and a quorum).
    pub fn healthy(&self, i: usize) -> bool {
        let Ok(mut s) = TcpStream::connect_timeout(&([127, 0, 0, 1], self.members[i].client_port).into(), Duration::from_millis(300)) else { return false };
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
        let mut s = TcpStream::connect_timeout(&([127, 0, 0, 1], self.members[i].client_port).into(), Duration::from_millis(300)).ok()?;
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
