//! `fcd gateway serve --listen ADDR`: the gateway over MCP's Streamable HTTP
//! transport (rmcp's, protocol revisions 2025-03-26 to 2026-07-28), mounted
//! at `/mcp`. Every request passes the bearer-token check first
//! ([`crate::auth`]): a missing, expired, wrongly addressed or wrongly
//! signed token is answered 401 with a `WWW-Authenticate: Bearer` challenge
//! and reaches nothing. A verified token's principal goes with the request
//! to the handler, which decides the call under that principal's contracts
//! exactly as on stdio. No listener runs without authentication unless the
//! configuration says `allow_unauthenticated = true`.

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

/// Who may call: tokens checked by `Auth`, or (said explicitly) everyone as one principal.
enum Door {
    Tokens(Auth),
    Open(String),
}

async fn authenticate(State(door): State<Arc<Door>>, mut request: Request, next: Next) -> Response {
    let who = match &*door {
        Door::Open(principal) => Ok(Authenticated(principal.clone())),
        Door::Tokens(auth) => auth.principal(request.headers().get(header::AUTHORIZATION).and_then(|v| v.to_str().ok())),
    };
    match who {
        Ok(principal) => {
            request.extensions_mut().insert(principal);
            next.run(request).await
        }
        Err(why) => {
            tracing::info!(target: "fcd::gateway", refused = "unauthenticated", detail = %why, "an HTTP request without a valid bearer token");
            let challenge = format!("Bearer error=\"invalid_token\", error_description=\"{}\"", why.replace(['"', '\\'], "'"));
            let mut response = (StatusCode::UNAUTHORIZED, format!("fcd gateway: {why}\n")).into_response();
            if let Ok(value) = HeaderValue::from_str(&challenge) {
                response.headers_mut().insert(header::WWW_AUTHENTICATE, value);
            }
            response
        }
    }
}

/// Serves the gateway on `listen` until SIGINT or SIGTERM; prints the bound
/// address on stderr (`listening on ADDR`, useful with port 0).
pub async fn serve_http(gateway: Gateway, listen: &str) -> Result<(), StartError> {
    let fail = |m: String| StartError(m);
    let http = gateway.config.http.clone().unwrap_or_default();
    let door = if http.allow_unauthenticated { Door::Open(gateway.config.principal.clone()) } else { Door::Tokens(Auth::load(&http).map_err(fail)?) };
    let listener = tokio::net::TcpListener::bind(listen).await.map_err(|e| fail(format!("cannot listen on {listen}: {e}")))?;
    let bound = listener.local_addr().map_err(|e| fail(e.to_string()))?;
    let stop = CancellationToken::new();
    let mut hosts = vec!["localhost".to_owned(), "127.0.0.1".to_owned(), "::1".to_owned(), bound.to_string()];
    hosts.extend(http.allowed_hosts.iter().cloned());
    let mut config = StreamableHttpServerConfig::default().with_allowed_hosts(hosts);
    config.cancellation_token = stop.clone();
    config.max_request_body_bytes = gateway.config.max_message_bytes;
    let gateway = Arc::new(gateway);
    let marker = gateway.keep_store_marked();
    let for_sessions = gateway.clone();
    let service = StreamableHttpService::new(
        move || Ok(Handler { gateway: for_sessions.clone(), principal: Principal::FromToken }),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let app = axum::Router::new().nest_service("/mcp", service).layer(axum::middleware::from_fn_with_state(Arc::new(door), authenticate));
    eprintln!("fcd gateway: listening on {bound} (Streamable HTTP at /mcp)");
    let shutdown = stop.clone();
    let served = axum::serve(listener, app).with_graceful_shutdown(async move {
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
    });
    let ended = served.await.map_err(|e| fail(format!("the HTTP listener failed: {e}")));
    if let Some(marker) = marker {
        marker.abort();
    }
    gateway.record_store_mark();
    ended
}
