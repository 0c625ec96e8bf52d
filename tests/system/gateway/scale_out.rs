//! Issue 28, point 4: scale-out. Eight `fcd gateway serve` processes share
//! one runtime store on a 3-member etcd cluster, each listening on
//! Streamable HTTP with its own stock mcp-server-git behind it, each driven
//! by several official-SDK clients at once; the cluster's leader is killed
//! while the calls run. Over the whole history every runtime invariant and
//! `fcd audit check` hold, no call reaches a server without its lease's
//! token having passed the fence, every call that ran is reported to its
//! client as run, and calls go on after the leader is gone.

use super::*;
use fcd_testkit::{etcd, invariants};
use std::collections::BTreeMap;

/// Gateways, clients per gateway, and calls per client.
const GATEWAYS: usize = 8;
const SESSIONS: usize = 3;
const CALLS: usize = 8;

#[test]
fn eight_gateways_on_one_etcd_cluster_keep_every_invariant_through_a_killed_leader() {
    let test = "eight_gateways_on_one_etcd_cluster_keep_every_invariant_through_a_killed_leader";
    let Some(r) = releases() else { return };
    if !tools::tools_or_skip(test, etcd::available()) {
        return;
    }
    let mut cluster = etcd::Cluster::start().unwrap_or_else(|e| panic!("{test}: {e}"));
    let store = cluster.store("scale-out");
    let w = world(r, &[&r.guarded_summary]);

    // Token checks as a deployment has them: alice's token, verified by every gateway.
    use base64::Engine as _;
    let issuer_key = ed25519_dalek::SigningKey::from_bytes(&[11; 32]);
    let x = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(issuer_key.verifying_key().as_bytes());
    let jwks = json!({"keys": [{"kty": "OKP", "crv": "Ed25519", "kid": "k1", "alg": "EdDSA", "use": "sig", "x": x}]});
    std::fs::write(w.path("jwks.json"), jwks.to_string()).unwrap();
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    let claims = json!({"iss": "https://issuer.test", "aud": "https://fcd.test/mcp", "sub": "alice", "exp": now + 3600, "iat": now});
    let token = jwt(&issuer_key, "k1", &claims);

    // One configuration per gateway: the same store, registry and contract, its own server log.
    let top = "principal = \"user:nobody\"\nissuer_key = \"issuer.pem\"\n\n[http]\njwks = \"jwks.json\"\nissuer = \"https://issuer.test\"\naudience = \"https://fcd.test/mcp\"\nprincipal_prefix = \"user:\"\n";
    let server = format!("name = \"git\"\ndestination = {}\ntools = [\"git_diff\"]", toml_str(&format!("local:{}", w.repo.display())));
    let gateways: Vec<HttpGateway> = (0..GATEWAYS)
        .map(|i| {
            let rel = w.release(&[&w.guarded], w.server(&r.guarded, &format!("server-{i}.log")), &r.guarded);
            let written = write_config(w.dir.path(), top, &[("user:alice", "git_diff", "contract.json")], &server, &[rel]);
            let config = w.path(&format!("gateway-{i}.toml"));
            std::fs::rename(&written, &config).unwrap();
            on_store(&config, &store);
            HttpGateway::start(&config)
        })
        .collect();

    // Every gateway's clients at once; the leader is killed once a third of the calls reached a server.
    let total = GATEWAYS * SESSIONS * CALLS;
    let seen = || (0..GATEWAYS).map(|i| w.calls_seen(&format!("server-{i}.log"))).sum::<usize>();
    let reports: Vec<Value> = std::thread::scope(|s| {
        let drivers: Vec<_> = gateways
            .iter()
            .map(|g| {
                let plan = json!({"url": format!("http://{}/mcp", g.addr), "headers": {"Authorization": format!("Bearer {token}")},
                    "sessions": SESSIONS, "calls": vec![call("git_diff", w.args("main")); CALLS]});
                s.spawn(move || stock::drive(&plan).unwrap())
            })
            .collect();
        wait_until("a third of the calls ran", || seen() >= total / 3);
        let leader = cluster.leader().expect("the cluster has a leader");
        cluster.kill(leader);
        eprintln!("{test}: killed member {leader}, the leader, after {} of {total} calls reached a server", seen());
        drivers.into_iter().map(|d| d.join().unwrap()).collect()
    });

    // Every call was answered: the diff, or a refusal (a storage one while the cluster elected a leader).
    let results: Vec<&Value> = reports.iter().flat_map(|r| r["results"].as_array().unwrap()).collect();
    let failed: Vec<&Value> = reports.iter().flat_map(|r| r["failed"].as_array().unwrap()).collect();
    assert!(failed.is_empty(), "sessions ended early: {failed:?}");
    assert_eq!(results.len(), total, "every call answered");
    let ran = results.iter().filter(|r| r["error"] == false).count();
    let mut refusals: BTreeMap<String, usize> = BTreeMap::new();
    for r in results.iter().filter(|r| r["error"] != false) {
        *refusals.entry(refused(r).unwrap_or("not fcd's").to_owned()).or_default() += 1;
    }
    eprintln!("{test}: {ran} of {total} calls ran, refused: {refusals:?}");
    assert!(results.iter().filter(|r| r["error"] == false).all(|r| r["text"].as_str().unwrap().contains("second line")), "a diff is the stock handler's");
    assert!(refusals.keys().all(|code| code == "storage"), "only the store's outage refuses a safe call: {refusals:?}");
    assert!(ran >= total / 2, "calls go on after the leader is killed: {ran} of {total}");

    // The whole history: invariants, the audit check, and effects only behind a spent token.
    let rt = Runtime::open_store(&fcd_runtime::runtime::StoreSpec::parse(&store).unwrap()).unwrap();
    invariants::check_invariants(&rt, &invariants::Model::default(), &[w.guarded.as_str()]).unwrap();
    invariants::check_audit(&rt).unwrap();
    let leases = rt.leases().unwrap();
    let used = leases.iter().filter(|l| l.used).count();
    let (servers_saw, completed) = (seen(), leases.iter().filter(|l| l.state == LeaseState::Completed).count());
    eprintln!("{test}: {} leases, {used} fenced, {completed} completed; the servers saw {servers_saw} calls", leases.len());
    // A call the server ran is reported to its client as run and completed (a
    // completion the outage interrupted is tried again); a refused one never
    // reached a server. A fence whose answer was lost in the outage may have
    // spent a token whose call was then refused: fail closed, never the reverse.
    assert_eq!((servers_saw, completed), (ran, ran), "calls that ran, seen by the servers, completed");
    assert!(servers_saw <= used, "every call a server saw passed the fence: saw {servers_saw}, fenced {used}");
    let checked = Command::new(fcd_bin()).args(["audit", "check", "--store", &store]).output().unwrap();
    assert_eq!(checked.status.code(), Some(0), "{}{}", String::from_utf8_lossy(&checked.stdout), String::from_utf8_lossy(&checked.stderr));
    drop(gateways);
}
