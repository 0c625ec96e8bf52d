//! `fcd gateway serve --listen ADDR`: the gateway over MCP's Streamable HTTP
//! transport (rmcp's, protocol revisions 2025-03-26 to 2026-07-28), mounted
//! at `/mcp`. Every request passes the bearer-token check first
//! ([`crate::auth`]): a missing, expired, wrongly addressed or wrongly
//! signed token is answered 401 with a `WWW-Authenticate: Bearer` challenge
//! and reaches nothing. A verified token's principal goes with the request
//! to the handler, which decides the call under that principal's contracts
//! exactly as on stdio. No listener runs without authentication unless the
//! configuration says `allow_unauthenticated = true`.
//!
//! As the MCP authorization specification asks of a resource server, the
//! gateway publishes RFC 9728 protected resource metadata: its resource
//! identifier (the configured audience) and the authorization server that
//! issues its tokens (the configured issuer), at the well-known URL derived
//! from the resource identifier, without authentication; and every 401
//! challenge names that URL (`resource_metadata=`), so a client that has no
//! token learns where to get one.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use crate::auth::{Auth, Authenticated};
use crate::proxy::{Gateway, Handler, Principal, StartError};

/// Who may call: tokens checked by `Auth` (with the metadata URL a challenge
/// names, when the audience is an HTTP URL), or (said explicitly) everyone as one principal.
enum Door {
    Tokens(Auth, Option<String>),
    Open(String),
}

/// RFC 9728 protected resource metadata for a gateway whose tokens carry
/// `audience` (its resource identifier) and come from `issuer`: the local
/// paths it is served at, its absolute URL, and the document. The
/// well-known path goes between the identifier's authority and its path
/// (`https://h/mcp` -> `https://h/.well-known/oauth-protected-resource/mcp`);
/// the bare well-known path is served too, for clients that probe the root.
/// `None` when the audience is not an `http(s)://` URL.
fn resource_metadata(audience: &str, issuer: &str) -> Option<(Vec<String>, String, String)> {
    const WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";
    let (scheme, rest) = audience.split_once("://")?;
    if !matches!(scheme, "http" | "https") || rest.contains(['?', '#']) {
        return None;
    }
    let (authority, path) = rest.find('/').map_or((rest, ""), |i| rest.split_at(i));
    if authority.is_empty() {
        return None;
    }
    let path = path.trim_end_matches('/');
    let local = format!("{WELL_KNOWN}{path}");
    let url = format!("{scheme}://{authority}{local}");
    let document = serde_json::json!({
        "resource": audience,
        "authorization_servers": [issuer],
        "bearer_methods_supported": ["header"],
        "resource_name": "fcd gateway",
    })
    .to_string();
    let mut paths = vec![local];
    if !path.is_empty() {
        paths.push(WELL_KNOWN.to_owned());
    }
    Some((paths, url, document))
}

async fn authenticate(State(door): State<Arc<Door>>, mut request: Request, next: Next) -> Response {
    let who = match &*door {
        Door::Open(principal) => Ok(Authenticated(principal.clone())),
        Door::Tokens(auth, _) => auth.principal(request.headers().get(header::AUTHORIZATION).and_then(|v| v.to_str().ok())),
    };
    match who {
        Ok(principal) => {
            request.extensions_mut().insert(principal);
            next.run(request).await
        }
        Err(why) => {
            tracing::info!(target: "fcd::gateway", refused = "unauthenticated", detail = %why, "an HTTP request without a valid bearer token");
            let metadata = match &*door {
                Door::Tokens(_, Some(url)) => format!("resource_metadata=\"{url}\", "),
                _ => String::new(),
            };
            let challenge = format!("Bearer {metadata}error=\"invalid_token\", error_description=\"{}\"", why.replace(['"', '\\'], "'"));
            let mut response = (StatusCode::UNAUTHORIZED, format!("fcd gateway: {why}\n")).into_response();
            if let Ok(value) = HeaderValue::from_str(&challenge) {
                response.headers_mut().insert(header::WWW_AUTHENTICATE, value);
            }
            response
        }
    }
}

/// How long a client may take over its TLS handshake before the connection is dropped.
const HANDSHAKE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// The listener's TLS configuration from a PEM certificate chain and key.
fn tls_config(certificate: &std::path::Path, key: &std::path::Path) -> Result<Arc<rustls::ServerConfig>, String> {
    use rustls::pki_types::pem::PemObject as _;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(certificate)
        .and_then(|certs| certs.collect())
        .map_err(|e| format!("[http] tls_certificate {}: {e}", certificate.display()))?;
    if chain.is_empty() {
        return Err(format!("[http] tls_certificate {}: no certificate in it", certificate.display()));
    }
    let key = PrivateKeyDer::from_pem_file(key).map_err(|e| format!("[http] tls_key {}: {e}", key.display()))?;
    // ring, as the etcd client's TLS uses: aws-lc-rs (rustls' post-quantum default) needs cmake to build.
    #[allow(deprecated)]
    let provider = rustls::crypto::ring::default_provider();
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(provider))
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS: {e}"))?
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .map_err(|e| format!("[http] the TLS certificate and key do not make a server identity: {e}"))?;
    Ok(Arc::new(config))
}

/// A TCP listener whose connections are handed on once their TLS handshake
/// is done: handshakes run on tasks of their own, each with a deadline, so
/// a slow or silent client never holds up the others.
struct TlsListener {
    ready: tokio::sync::mpsc::Receiver<(tokio_rustls::server::TlsStream<tokio::net::TcpStream>, std::net::SocketAddr)>,
    local: std::net::SocketAddr,
}

impl TlsListener {
    fn new(tcp: tokio::net::TcpListener, config: Arc<rustls::ServerConfig>) -> std::io::Result<TlsListener> {
        let local = tcp.local_addr()?;
        let acceptor = tokio_rustls::TlsAcceptor::from(config);
        let (tx, ready) = tokio::sync::mpsc::channel(64);
        tokio::spawn(async move {
            loop {
                let Ok((stream, peer)) = tcp.accept().await else {
                    // Out of descriptors and the like: wait a little rather than spin.
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                    continue;
                };
                let (acceptor, sender) = (acceptor.clone(), tx.clone());
                tokio::spawn(async move {
                    match tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(stream)).await {
                        Ok(Ok(tls)) => {
                            let _ = sender.send((tls, peer)).await;
                        }
                        Ok(Err(e)) => tracing::info!(target: "fcd::gateway", %peer, error = %e, "a TLS handshake failed"),
                        Err(_) => tracing::info!(target: "fcd::gateway", %peer, "a TLS handshake did not finish in time"),
                    }
                });
                if tx.is_closed() {
                    return;
                }
            }
        });
        Ok(TlsListener { ready, local })
    }
}

impl axum::serve::Listener for TlsListener {
    type Io = tokio_rustls::server::TlsStream<tokio::net::TcpStream>;
    type Addr = std::net::SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        match self.ready.recv().await {
            Some(connection) => connection,
            // The accepting task ended only with the listener: nothing more comes.
            None => std::future::pending().await,
        }
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        Ok(self.local)
    }
}

/// Serves the gateway on `listen` until SIGINT or SIGTERM; prints the bound
/// address on stderr (`listening on ADDR`, useful with port 0).
pub async fn serve_http(gateway: Gateway, listen: &str) -> Result<(), StartError> {
    let fail = |m: String| StartError(m);
    let http = gateway.config.http.clone().unwrap_or_default();
    let metadata = match (&http.audience, &http.issuer) {
        (Some(audience), Some(issuer)) if !http.allow_unauthenticated => resource_metadata(audience, issuer),
        _ => None,
    };
    let door = if http.allow_unauthenticated {
        Door::Open(gateway.config.principal.clone())
    } else {
        Door::Tokens(Auth::load(&http).map_err(fail)?, metadata.as_ref().map(|(_, url, _)| url.clone()))
    };
    let listener = tokio::net::TcpListener::bind(listen).await.map_err(|e| fail(format!("cannot listen on {listen}: {e}")))?;
    let bound = listener.local_addr().map_err(|e| fail(e.to_string()))?;
    let stop = CancellationToken::new();
    let mut hosts = vec!["localhost".to_owned(), "127.0.0.1".to_owned(), "::1".to_owned(), bound.to_string()];
    hosts.extend(http.allowed_hosts.iter().cloned());
    let mut config = StreamableHttpServerConfig::default().with_allowed_hosts(hosts);
    config.cancellation_token = stop.clone();
    config.max_request_body_bytes = gateway.config.max_message_bytes;
    // No SSE priming event before each response: it tells a client where to resume a broken
    // stream, and without an event store the gateway has nothing to resume from.
    config.sse_retry = None;
    let gateway = Arc::new(gateway);
    let marker = gateway.keep_store_marked();
    let for_sessions = gateway.clone();
    let service = StreamableHttpService::new(
        move || Ok(Handler { gateway: for_sessions.clone(), principal: Principal::FromToken }),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let mut app = axum::Router::new().nest_service("/mcp", service).layer(axum::middleware::from_fn_with_state(Arc::new(door), authenticate));
    // Added after the token check's layer: the metadata is public, as RFC 9728 has it.
    if let Some((paths, _, document)) = metadata {
        let document: Arc<str> = document.into();
        for path in paths {
            let document = document.clone();
            app = app.route(&path, axum::routing::get(move || std::future::ready(([(header::CONTENT_TYPE, "application/json")], document.to_string()))));
        }
    }
    let tls = match (&http.tls_certificate, &http.tls_key) {
        (Some(certificate), Some(key)) => Some(tls_config(certificate, key).map_err(fail)?),
        _ => None,
    };
    let scheme = if tls.is_some() { "https" } else { "http" };
    eprintln!("fcd gateway: listening on {bound} (Streamable HTTP at {scheme}://{bound}/mcp)");
    let shutdown = stop.clone();
    let signalled = async move {
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
        let term = async {
            match term.as_mut() {
                Some(t) => {
                    t.recv().await;
                }
                None => std::future::pending::<()>().await,
            }
        };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            () = term => {}
        }
        shutdown.cancel();
    };
    let served = match tls {
        Some(config) => {
            let listener = TlsListener::new(listener, config).map_err(|e| fail(e.to_string()))?;
            axum::serve(listener, app).with_graceful_shutdown(signalled).await
        }
        None => axum::serve(listener, app).with_graceful_shutdown(signalled).await,
    };
    let ended = served.map_err(|e| fail(format!("the HTTP listener failed: {e}")));
    if let Some(marker) = marker {
        marker.abort();
    }
    gateway.record_store_mark();
    ended
}

#[cfg(test)]
mod tests {
    use super::resource_metadata;

    #[test]
    fn the_metadata_url_puts_the_well_known_path_between_authority_and_path() {
        let (paths, url, document) = resource_metadata("https://fcd.example/mcp", "https://issuer.example").unwrap();
        assert_eq!(url, "https://fcd.example/.well-known/oauth-protected-resource/mcp");
        assert_eq!(paths, ["/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"]);
        let document: serde_json::Value = serde_json::from_str(&document).unwrap();
        assert_eq!(document["resource"], "https://fcd.example/mcp");
        assert_eq!(document["authorization_servers"], serde_json::json!(["https://issuer.example"]));
        let (paths, url, _) = resource_metadata("http://127.0.0.1:8080/", "i").unwrap();
        assert_eq!(
            (paths.as_slice(), url.as_str()),
            (["/.well-known/oauth-protected-resource".to_owned()].as_slice(), "http://127.0.0.1:8080/.well-known/oauth-protected-resource")
        );
        for not_a_url in ["fcd-gateway", "urn:fcd:gw", "https://", "https://h/p?q=1", "ftp://h/p"] {
            assert!(resource_metadata(not_a_url, "i").is_none(), "{not_a_url}");
        }
    }
}
