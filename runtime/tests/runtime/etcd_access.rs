//! Issue 28, point 3: the runtime reaches etcd over TLS with a client
//! certificate, and as an etcd user whose role is confined to the store's
//! key prefix. A real 3-member cluster is started with certificates
//! generated in the test; every way of reaching it that should not work is
//! refused as a storage failure before anything is decided.

use fcd_runtime::runtime::{EvidenceKind, Runtime, StoreSpec};
use fcd_testkit::{etcd, invariants, tools};

/// One call from formation to completion on a fresh epoch pair, and a clean audit check.
fn one_call(rt: &mut Runtime, tag: &str) {
    let (source, target) = (format!("{tag}-a"), format!("{tag}-b"));
    rt.register_epoch(&source, "tool", "sha256:a", "sha256:c", "sha256:s").unwrap();
    rt.register_epoch(&target, "tool", "sha256:a2", "sha256:c2", "sha256:s2").unwrap();
    let edge = rt.add_evidence(EvidenceKind::Edge, "tool", None, &source, &target, 0, 10_000).unwrap();
    let formed = rt.form("snap", "tool", "sha256:args", "user:alice", &source, Some(edge), 100, 900).unwrap();
    let lease = rt.admit(formed, 100).unwrap();
    assert_eq!(rt.fence(&lease.token, "sha256:a", "sha256:c", lease.generation, 100).unwrap(), lease.id);
    rt.complete(lease.id).unwrap();
    invariants::check_audit(rt).unwrap();
}

/// Opening `spec` is refused as a storage failure whose detail contains `why`.
fn refused(spec: &str, why: &str) {
    let spec = StoreSpec::parse(spec).unwrap_or_else(|e| panic!("{spec}: {e}"));
    match Runtime::open_store(&spec) {
        Ok(_) => panic!("{spec} was opened"),
        Err(e) => {
            assert_eq!(e.code, "storage", "{spec}: {e:?}");
            assert!(e.detail.to_lowercase().contains(why), "{spec}: `{}` does not say `{why}`", e.detail);
        }
    }
}

#[test]
fn etcd_over_tls_with_a_client_certificate_and_a_user_confined_to_the_store_prefix() {
    let test = "etcd_over_tls_with_a_client_certificate_and_a_user_confined_to_the_store_prefix";
    if !tools::tools_or_skip(test, etcd::available()) {
        return;
    }
    let cluster = etcd::Cluster::start_tls().unwrap_or_else(|e| panic!("{test}: {e}"));
    let tls = cluster.tls().unwrap().clone();
    let endpoints = cluster.endpoints().join(",");
    assert!(endpoints.starts_with("https://"), "{endpoints}");

    // TLS with the client certificate: the runtime works, and the audit checks.
    let store = cluster.store("fcd");
    let mut rt = Runtime::open_store(&StoreSpec::parse(&store).unwrap()).unwrap();
    one_call(&mut rt, "tls");
    drop(rt);

    // Not TLS, no client certificate, or a CA that did not sign the members' certificates: refused.
    let plain = endpoints.replace("https://", "http://");
    refused(&format!("etcd:{plain}?prefix=/fcd/"), "etcd");
    refused(&format!("etcd:{endpoints}?prefix=/fcd/&ca={}", tls.ca.display()), "etcd");
    refused(
        &format!("etcd:{endpoints}?prefix=/fcd/&ca={}&cert={}&key={}", tls.client_cert.display(), tls.client_cert.display(), tls.client_key.display()),
        "unknownissuer",
    );
    refused(&format!("etcd:{endpoints}?prefix=/fcd/&ca=/nonexistent/ca.pem"), "/nonexistent/ca.pem");

    // etcd authentication on: user `fcd` may read and write /fcd/ only.
    let password = cluster.enable_auth("/fcd/", "fcd", "fcd-secret-7", "root-secret-9").unwrap();
    let as_fcd = format!("{store}&user=fcd&password-file={}", password.display());
    let mut rt = Runtime::open_store(&StoreSpec::parse(&as_fcd).unwrap()).unwrap();
    one_call(&mut rt, "auth");
    assert!(rt.verify_audit().unwrap() >= 12, "both calls' decisions are in one log");
    drop(rt);

    // The certificate alone names no user; a wrong password, a missing file,
    // or another prefix than the role allows: refused.
    refused(&store, "permission denied");
    let wrong = password.with_file_name("wrong.password");
    std::fs::write(&wrong, "not-the-password\n").unwrap();
    refused(&format!("{store}&user=fcd&password-file={}", wrong.display()), "authentication failed");
    refused(&format!("{store}&user=fcd&password-file=/nonexistent/pw"), "/nonexistent/pw");
    refused(&as_fcd.replace("prefix=/fcd/", "prefix=/elsewhere/"), "permission denied");
}
