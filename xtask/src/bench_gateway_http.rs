//! The HTTP half of `cargo xtask bench-gateway`, against a fair baseline: a
//! stock server that itself speaks Streamable HTTP (@bytebase/dbhub, its
//! `execute_sql` on a scratch SQLite file in read-only mode), so the direct
//! path and the gateway paths all reach the client over HTTP. The direct
//! path is the official client to dbhub's own HTTP transport; the gateway
//! paths are the official client to `fcd gateway serve --listen` (bearer
//! token verified on every request), which runs dbhub over stdio (how a
//! gateway fronts a local server) or over HTTP (`url`), in `process-crash`
//! and `full`. Paths take turns, round after round, in one run.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use serde_json::json;

use crate::bench_gateway::{Path, ROUNDS, logged_gateway, quantile, steps_of};
use fcd_compiler::profile::Profile;
use fcd_compiler::register::{Registration, Request, register};
use fcd_runtime::registry::{Regeneration, Registry};
use fcd_testkit::stock;

const DBHUB: &str = "0.24.0";

fn free_port() -> Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// dbhub on its own HTTP transport, killed when dropped.
struct Direct(Child);

impl Drop for Direct {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

pub fn run(root: &std::path::Path, fcd: &std::path::Path, calls: usize, http_table: &str, token: &str) -> Result<bool> {
    stock::npm_available().map_err(|e| anyhow!(e))?;
    let release = stock::dbhub_release(DBHUB).map_err(|e| anyhow!(e))?;
    let scratch = root.join("target/bench-gateway-http");
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch)?;
    let db = scratch.join("app.db");
    let conn = rusqlite::Connection::open(&db)?;
    conn.execute_batch("CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (7);")?;
    drop(conn);
    let dbhub_toml = scratch.join("dbhub.toml");
    std::fs::write(
        &dbhub_toml,
        format!(
            "[[sources]]\nid = \"scratch\"\ndsn = {}\n\n[[tools]]\nname = \"execute_sql\"\nsource = \"scratch\"\nreadonly = true\n",
            serde_json::to_string(&format!("sqlite://{}", db.display()))?
        ),
    )?;
    let dir = root.join("profiles/dbhub-execute-sql");
    let canonical: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.join("canonical.json"))?)?;
    let config = canonical["env"]["config"].as_object().cloned().context("canonical.json: env.config is not an object")?;
    std::fs::write(scratch.join("registered-config.json"), canonical["env"]["config"].to_string())?;
    let destination = format!("sqlite:{}", db.display());
    let mut contract = canonical["contract"].clone();
    contract["destinations"] = json!([destination]);
    std::fs::write(scratch.join("contract.json"), contract.to_string())?;
    let profile = Profile::load(&dir).map_err(|e| anyhow!("{e}"))?;
    let request = Request {
        source: release.source.clone(),
        release: Some(release.id.clone()),
        artifact_digest: Some(release.tarball_digest.clone()),
        config: Some(config),
    };
    let Registration::Registered(summary) = register(&profile, &request).map_err(|e| anyhow!("{e}"))? else { bail!("dbhub {DBHUB} escalated") };
    let mut registry = Registry::open(&scratch.join("registry.sqlite")).map_err(|e| anyhow!("{e}"))?;
    let epoch =
        registry.admit(&summary, &Regeneration { process: std::process::id(), summary_digest: summary.summary_digest.clone() }).map_err(|e| anyhow!("{e}"))?;
    drop(registry);
    std::fs::write(scratch.join("jwks.json"), std::fs::read(root.join("target/bench-gateway/jwks.json"))?)?;
    let call = json!({"tool": "execute_sql", "arguments": canonical["calls"]["A"]["arguments"]});
    let (node, script) = (release.node.to_string_lossy().into_owned(), release.installed.join("dist/index.js").to_string_lossy().into_owned());
    let toml_text = dbhub_toml.to_string_lossy().into_owned();

    // The direct path: dbhub's own HTTP transport, started once.
    let direct_port = free_port()?;
    let mut direct = Direct(
        Command::new(&node)
            .args([&script, "--transport", "http", "--host", "127.0.0.1", "--port", &direct_port.to_string(), "--config", &toml_text])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .context("dbhub does not start")?,
    );
    let deadline = Instant::now() + Duration::from_secs(60);
    while std::net::TcpStream::connect(("127.0.0.1", direct_port)).is_err() {
        if Instant::now() > deadline || direct.0.try_wait()?.is_some() {
            bail!("dbhub did not listen on port {direct_port}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let direct_url = format!("http://127.0.0.1:{direct_port}/mcp");

    // The gateway paths: (durability, dbhub over stdio or over HTTP).
    let mut paths = Vec::new();
    for (durability, upstream_http) in [("process-crash", false), ("full", false), ("process-crash", true)] {
        let tag = format!("{durability}-{}", if upstream_http { "http" } else { "stdio" });
        let store = scratch.join(format!("runtime-{tag}.sqlite"));
        let (command, extra) = if upstream_http {
            let port = free_port()?;
            let command = vec![
                node.clone(),
                script.clone(),
                "--transport".into(),
                "http".into(),
                "--host".into(),
                "127.0.0.1".into(),
                "--port".into(),
                port.to_string(),
                "--config".into(),
                toml_text.clone(),
            ];
            (command, format!("url = \"http://127.0.0.1:{port}/mcp\"\n"))
        } else {
            (vec![node.clone(), script.clone(), "--transport".into(), "stdio".into(), "--config".into(), toml_text.clone()], String::new())
        };
        let config = format!(
            "runtime = {}\nregistry = \"registry.sqlite\"\nprincipal = \"user:alice\"\ncall_durability = {}\nlog = \"json\"\n\n\
             [[contract]]\nprincipal = \"user:alice\"\ntool = \"execute_sql\"\nfile = \"contract.json\"\n\n\
             [[server]]\nname = \"db\"\ntools = [\"execute_sql\"]\ndestination = {}\n\n\
             [[server.release]]\nepochs = [{}]\ncommand = {}\ninstalled = {{ root = {}, strip = \"\" }}\n\
             config_file = \"registered-config.json\"\nserver_config = [\"dbhub.toml\"]\n{extra}{http_table}",
            serde_json::to_string(&format!("sqlite:{}", store.display()))?,
            serde_json::to_string(durability)?,
            serde_json::to_string(&destination)?,
            serde_json::to_string(&epoch)?,
            serde_json::to_string(&command)?,
            serde_json::to_string(&release.installed.to_string_lossy())?,
        );
        let config_path = scratch.join(format!("gateway-{tag}.toml"));
        std::fs::write(&config_path, config)?;
        let log = scratch.join(format!("gateway-{tag}.log"));
        let gateway = logged_gateway(fcd, &config_path, &log, true);
        let name = format!("gateway over HTTP, {durability}, dbhub on {}", if upstream_http { "HTTP" } else { "stdio" });
        paths.push(Path { name, command: gateway, http: Some(token.to_owned()), store: Some((store, log)) });
    }

    let per_round = calls.div_ceil(ROUNDS);
    let warm = (per_round / 10).max(2);
    let mut direct_micros = Vec::new();
    let mut timings: Vec<Vec<f64>> = vec![Vec::new(); paths.len()];
    let timed = |report: serde_json::Value| -> Result<Vec<f64>> {
        Ok(report["micros"].as_array().context("the client timed nothing")?.iter().skip(warm).filter_map(serde_json::Value::as_f64).collect())
    };
    for _ in 0..ROUNDS {
        let report = stock::drive(&json!({"url": direct_url, "calls": [call], "repeat": per_round + warm})).map_err(|e| anyhow!(e))?;
        direct_micros.extend(timed(report)?);
        for (path, into) in paths.iter().zip(&mut timings) {
            into.extend(timed(path.drive(&call, per_round + warm)?)?);
        }
    }
    drop(direct);
    let quantiles = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        (quantile(&v, 0.5) / 1000.0, quantile(&v, 0.95) / 1000.0)
    };
    let direct = quantiles(direct_micros);
    println!();
    println!(
        "execute_sql (canonical call A) on @bytebase/dbhub {DBHUB}, {} calls per path in {ROUNDS} interleaved rounds; every path over HTTP to the client:",
        per_round * ROUNDS
    );
    println!("{:<48} {:>9} {:>9} {:>9} {:>9}", "path", "p50 ms", "p95 ms", "+p50 ms", "+p95 ms");
    println!("{:<48} {:>9.3} {:>9.3}", "dbhub direct, its own HTTP transport", direct.0, direct.1);
    let mut met = true;
    for (path, timed) in paths.iter().zip(timings) {
        let (p50, p95) = quantiles(timed);
        let target = if path.name.contains("process-crash") { 0.5 } else { 1.0 };
        met &= p50 - direct.0 <= target;
        println!("{:<48} {p50:>9.3} {p95:>9.3} {:>9.3} {:>9.3}", path.name, p50 - direct.0, p95 - direct.1);
        let (_, log) = path.store.as_ref().context("a gateway path without its log")?;
        steps_of(log, warm, true)?;
    }
    println!("  end to end over HTTP (gateway path minus dbhub's own HTTP): {}", if met { "met on every path" } else { "not met on every path" });
    Ok(met)
}
