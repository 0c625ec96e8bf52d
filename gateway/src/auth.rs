//! Who is calling over HTTP: the bearer token of every request, checked as
//! the MCP authorization specification asks of a resource server. The token
//! is a JWT whose signature verifies against a key of the configured JWKS
//! file, whose issuer and audience are the configured ones, and which has
//! not expired; its subject (or the configured claim) names the principal
//! whose contracts apply. Anything else is 401, and nothing of the request
//! reaches the gateway's handler.
//!
//! The algorithm is the key's, never the token's: a key says `alg`, or its
//! type fixes one (Ed25519 is EdDSA, P-256 ES256, P-384 ES384, RSA RS256),
//! and a token signed otherwise is refused. Symmetric (`oct`) keys are not
//! accepted, so a public key can never be used as an HMAC secret.

use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, Jwk, JwkSet};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::Value;

use crate::config::Http;

/// The principal a verified token names (inserted into the HTTP request for the handler).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Authenticated(pub String);

/// One usable key of the JWKS file.
struct Key {
    id: Option<String>,
    algorithm: Algorithm,
    key: DecodingKey,
}

/// The token check of one gateway, as configured.
pub struct Auth {
    keys: Vec<Key>,
    issuer: String,
    audience: String,
    claim: String,
    prefix: String,
}

/// The algorithm a key verifies, from its own `alg` or its type.
fn algorithm(jwk: &Jwk) -> Result<Algorithm, String> {
    let by_type = match &jwk.algorithm {
        AlgorithmParameters::OctetKeyPair(_) => Algorithm::EdDSA,
        AlgorithmParameters::EllipticCurve(p) => match p.curve {
            EllipticCurve::P256 => Algorithm::ES256,
            EllipticCurve::P384 => Algorithm::ES384,
            ref other => return Err(format!("an elliptic-curve key on {other:?}, which JWT signatures do not use here")),
        },
        AlgorithmParameters::RSA(_) => Algorithm::RS256,
        AlgorithmParameters::OctetKey(_) => return Err("a symmetric (`oct`) key: only public keys verify tokens here".into()),
    };
    let Some(said) = jwk.common.key_algorithm else { return Ok(by_type) };
    let said: Algorithm = said.to_string().parse().map_err(|_| format!("`alg` {said} is not a signature algorithm"))?;
    if family(said) != family(by_type) {
        return Err(format!("`alg` {said:?} does not fit the key's type ({by_type:?})"));
    }
    Ok(said)
}

/// Which kind of key an algorithm verifies with.
fn family(a: Algorithm) -> &'static str {
    match a {
        Algorithm::EdDSA => "Ed25519",
        Algorithm::ES256 | Algorithm::ES384 => "elliptic curve",
        Algorithm::RS256 | Algorithm::RS384 | Algorithm::RS512 | Algorithm::PS256 | Algorithm::PS384 | Algorithm::PS512 => "RSA",
        Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512 => "symmetric",
    }
}

impl Auth {
    /// Reads the JWKS file and the checks of `http` (paths resolved by [`crate::Config::load`]).
    pub fn load(http: &Http) -> Result<Auth, String> {
        let (Some(jwks), Some(issuer), Some(audience)) = (&http.jwks, &http.issuer, &http.audience) else {
            return Err("[http] needs `jwks`, `issuer` and `audience` to check bearer tokens (or `allow_unauthenticated = true`, said explicitly)".into());
        };
        let path = jwks.clone();
        let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let set: JwkSet = serde_json::from_str(&text).map_err(|e| format!("{}: not a JWKS ({e})", path.display()))?;
        let mut keys = Vec::new();
        for (i, jwk) in set.keys.iter().enumerate() {
            let name = jwk.common.key_id.clone().unwrap_or_else(|| format!("#{i}"));
            let algorithm = algorithm(jwk).map_err(|e| format!("{}: key {name}: {e}", path.display()))?;
            let key = DecodingKey::from_jwk(jwk).map_err(|e| format!("{}: key {name}: {e}", path.display()))?;
            keys.push(Key { id: jwk.common.key_id.clone(), algorithm, key });
        }
        if keys.is_empty() {
            return Err(format!("{}: no key", path.display()));
        }
        Ok(Auth { keys, issuer: issuer.clone(), audience: audience.clone(), claim: http.principal_claim.clone(), prefix: http.principal_prefix.clone() })
    }

    /// The principal of a request whose `Authorization` header is `header`, or why not.
    pub fn principal(&self, header: Option<&str>) -> Result<Authenticated, String> {
        let header = header.ok_or("no bearer token")?;
        // The scheme is case-insensitive (RFC 7235); the token follows one space.
        let token = header
            .split_once(' ')
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
            .map(|(_, t)| t.trim())
            .ok_or("the Authorization header is not a bearer token")?;
        let head = jsonwebtoken::decode_header(token).map_err(|e| format!("not a JWT ({e})"))?;
        let key = match &head.kid {
            Some(kid) => self.keys.iter().find(|k| k.id.as_deref() == Some(kid)).ok_or_else(|| format!("no key `{kid}` in the JWKS"))?,
            None if self.keys.len() == 1 => &self.keys[0],
            None => return Err("the token names no key (`kid`) and the JWKS holds several".into()),
        };
        if head.alg != key.algorithm {
            return Err(format!("the token is signed with {:?}, the key verifies {:?}", head.alg, key.algorithm));
        }
        let mut validation = Validation::new(key.algorithm);
        validation.set_issuer(&[&self.issuer]);
        validation.set_audience(&[&self.audience]);
        validation.set_required_spec_claims(&["exp", "iss", "aud"]);
        validation.leeway = 30;
        let data =
            jsonwebtoken::decode::<serde_json::Map<String, Value>>(token, &key.key, &validation).map_err(|e| format!("the token does not verify: {e}"))?;
        let named = data
            .claims
            .get(&self.claim)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .ok_or_else(|| format!("the token has no `{}` claim naming a principal", self.claim))?;
        Ok(Authenticated(format!("{}{named}", self.prefix)))
    }
}

#[cfg(test)]
mod tests {
    use ed25519_dalek::pkcs8::EncodePrivateKey;
    use jsonwebtoken::{EncodingKey, Header, encode};
    use serde_json::json;

    use super::*;

    fn auth(dir: &std::path::Path, keys: Value) -> Result<Auth, String> {
        std::fs::write(dir.join("jwks.json"), json!({ "keys": keys }).to_string()).unwrap();
        let http = Http {
            jwks: Some(dir.join("jwks.json")),
            issuer: Some("https://issuer.test".into()),
            audience: Some("https://fcd.test/mcp".into()),
            principal_prefix: "user:".into(),
            ..Http::default()
        };
        Auth::load(&http)
    }

    #[test]
    fn the_key_not_the_token_chooses_the_algorithm() {
        let dir = tempfile::tempdir().unwrap();
        let key = ed25519_dalek::SigningKey::from_bytes(&[3; 32]);
        let public = key.verifying_key().to_bytes();
        let x = {
            use base64::Engine as _;
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(public)
        };
        let checks = auth(dir.path(), json!([{"kty": "OKP", "crv": "Ed25519", "kid": "k1", "x": x}])).unwrap();
        let claims = json!({"iss": "https://issuer.test", "aud": "https://fcd.test/mcp", "sub": "alice", "exp": 4_000_000_000u64});
        let mut eddsa = Header::new(Algorithm::EdDSA);
        eddsa.kid = Some("k1".into());
        let der = key.to_pkcs8_der().unwrap();
        let good = encode(&eddsa, &claims, &EncodingKey::from_ed_der(der.as_bytes())).unwrap();
        assert_eq!(checks.principal(Some(&format!("Bearer {good}"))), Ok(Authenticated("user:alice".into())));
        assert_eq!(checks.principal(Some(&format!("bearer {good}"))), Ok(Authenticated("user:alice".into())), "the scheme is case-insensitive");
        assert!(checks.principal(Some(&format!("Basic {good}"))).is_err());
        // The classic confusion: an HMAC over the token with the public key as the secret.
        let mut hs = Header::new(Algorithm::HS256);
        hs.kid = Some("k1".into());
        let forged = encode(&hs, &claims, &EncodingKey::from_secret(&public)).unwrap();
        let why = checks.principal(Some(&format!("Bearer {forged}"))).unwrap_err();
        assert!(why.contains("HS256"), "{why}");
        // No subject, no principal.
        let anonymous = encode(
            &eddsa,
            &json!({"iss": "https://issuer.test", "aud": "https://fcd.test/mcp", "exp": 4_000_000_000u64}),
            &EncodingKey::from_ed_der(der.as_bytes()),
        )
        .unwrap();
        assert!(checks.principal(Some(&format!("Bearer {anonymous}"))).unwrap_err().contains("`sub`"));
    }

    #[test]
    fn symmetric_keys_and_missing_checks_are_refused_at_load() {
        let dir = tempfile::tempdir().unwrap();
        let err = auth(dir.path(), json!([{"kty": "oct", "k": "c2VjcmV0"}])).err().unwrap();
        assert!(err.contains("symmetric"), "{err}");
        let err = Auth::load(&Http::default()).err().unwrap();
        assert!(err.contains("allow_unauthenticated"), "{err}");
    }
}
