//! Certificates: an in-toto Statement in a DSSE envelope, signed with ed25519.
//!
//! We use the ecosystem's envelope instead of a home-made one so standard
//! tooling can inspect a certificate: the subject is the target artifact, the
//! predicate (type [`PREDICATE_TYPE`]) binds the call (argument digest,
//! principal, destination), the profile, summary, contract, configuration and
//! source digests, the effects, and a validity interval. The envelope is stored
//! as canonical JSON, so a verifier can refuse any altered byte, not only the
//! signed ones.

use std::collections::BTreeMap;
use std::path::Path;

use base64::Engine;
use base64::engine::general_purpose::STANDARD as B64;
use ed25519_dalek::pkcs8::spki::der::pem::LineEnding;
use ed25519_dalek::pkcs8::{DecodePrivateKey, DecodePublicKey, EncodePrivateKey, EncodePublicKey};
use ed25519_dalek::{Signature, Signer, SigningKey, VerifyingKey};
use serde::{Deserialize, Serialize};

use fcd_model::effect::Effect;

use fcd_model::canon;
use fcd_model::error::{InputError, read_text};
use fcd_model::refusal::RefusalCode;
use fcd_model::summary::ProfileRef;

pub const PAYLOAD_TYPE: &str = "application/vnd.in-toto+json";
pub const STATEMENT_TYPE: &str = "https://in-toto.io/Statement/v1";
pub const PREDICATE_TYPE: &str = "https://fcd.dev/attestation/call-certificate/v1";

/// A DSSE envelope.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DsseEnvelope {
    #[serde(rename = "payloadType")]
    pub payload_type: String,
    /// Base64 of the statement's canonical JSON.
    pub payload: String,
    pub signatures: Vec<DsseSignature>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DsseSignature {
    pub keyid: String,
    pub sig: String,
}

/// An in-toto Statement v1 carrying a call certificate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Statement {
    #[serde(rename = "_type")]
    pub statement_type: String,
    pub subject: Vec<Subject>,
    #[serde(rename = "predicateType")]
    pub predicate_type: String,
    pub predicate: CallCertificate,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Subject {
    pub name: String,
    /// Algorithm -> hex digest, as in-toto writes it.
    pub digest: BTreeMap<String, String>,
}

/// What a certificate binds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CallCertificate {
    pub decision: String,
    pub tool: String,
    pub release: String,
    pub arguments_digest: String,
    pub principal: String,
    pub destination: String,
    pub profile: ProfileRef,
    pub summary_digest: String,
    pub contract_digest: String,
    pub config_digest: String,
    pub source_digest: String,
    pub artifact_digest: Option<String>,
    pub matched_rule: usize,
    pub effects: Vec<Effect>,
    /// Unix seconds, inclusive.
    pub valid_from: u64,
    /// Unix seconds, inclusive.
    pub valid_until: u64,
    /// Key id of the issuer.
    pub issuer: String,
    /// For compatibility evidence, the release the call was formed against:
    /// the certificate then says the call keeps its meaning from that source
    /// to this release, and the runtime accepts it only between these two.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<SourceRelease>,
}

/// The source release a migration certificate names, by its digests.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SourceRelease {
    pub release: String,
    pub artifact_digest: Option<String>,
    pub source_digest: String,
    pub summary_digest: String,
}

/// What names a release's artifact: the registry's artifact digest when it
/// published one, else the digest of its source closure. The certificate's
/// subject, and the artifact a runtime epoch of the release is registered with.
pub fn subject_digest<'a>(artifact_digest: Option<&'a str>, source_digest: &'a str) -> &'a str {
    artifact_digest.unwrap_or(source_digest)
}

/// Why a certificate is not accepted: `expired` outside its validity
/// interval, `untrusted_certificate` for everything else (not signed by a
/// trusted key, altered, or not an fcd call certificate), with the words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub code: RefusalCode,
    pub detail: String,
}

impl Refusal {
    fn untrusted(detail: impl Into<String>) -> Refusal {
        Refusal { code: RefusalCode::UntrustedCertificate, detail: detail.into() }
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.detail)
    }
}

/// The latest `valid_until` a certificate states: 2^53 − 1, the largest
/// integer RFC 8785 writes as an integer. A later instant would be written as
/// a float, which the verifier cannot read back as a time, so the issued
/// certificate would never verify.
pub const MAX_VALID_UNTIL: u64 = (1 << 53) - 1;

/// DSSE pre-authentication encoding: what is actually signed.
pub fn pae(payload_type: &str, payload: &[u8]) -> Vec<u8> {
    let mut out = format!("DSSEv1 {} {} {} ", payload_type.len(), payload_type, payload.len()).into_bytes();
    out.extend_from_slice(payload);
    out
}

/// `sha256:` of the raw public key: the key id.
pub fn key_id(key: &VerifyingKey) -> String {
    canon::sha256(key.as_bytes())
}

/// Signs a statement into an envelope.
pub fn sign(statement: &Statement, key: &SigningKey) -> DsseEnvelope {
    let payload = canon::to_canonical(statement);
    let sig: Signature = key.sign(&pae(PAYLOAD_TYPE, &payload));
    DsseEnvelope {
        payload_type: PAYLOAD_TYPE.into(),
        payload: B64.encode(&payload),
        signatures: vec![DsseSignature { keyid: key_id(&key.verifying_key()), sig: B64.encode(sig.to_bytes()) }],
    }
}

/// Verifies an envelope file's bytes with a public key at time `now`.
pub fn verify(bytes: &[u8], key: &VerifyingKey, now: u64) -> Result<Statement, Refusal> {
    verify_by(bytes, std::slice::from_ref(key), now)
}

/// Verifies an envelope file's bytes at time `now`: it must be signed by one
/// of `issuers`, and the issuer it names must be that key.
pub fn verify_by(bytes: &[u8], issuers: &[VerifyingKey], now: u64) -> Result<Statement, Refusal> {
    let statement = signed_statement(bytes, issuers)?;
    let p = &statement.predicate;
    if now < p.valid_from {
        return Err(Refusal { code: RefusalCode::Expired, detail: format!("not valid before {} (now {now})", p.valid_from) });
    }
    if now > p.valid_until {
        return Err(Refusal { code: RefusalCode::Expired, detail: format!("expired at {} (now {now})", p.valid_until) });
    }
    Ok(statement)
}

/// The statement of an envelope signed by one of `issuers`, in its issued form.
fn signed_statement(bytes: &[u8], issuers: &[VerifyingKey]) -> Result<Statement, Refusal> {
    let refuse = Refusal::untrusted;
    let envelope: DsseEnvelope = serde_json::from_slice(bytes).map_err(|e| Refusal::untrusted(format!("not a DSSE envelope: {e}")))?;
    let trimmed = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    if canon::to_canonical(&envelope) != trimmed {
        return Err(refuse("the envelope is not in the canonical form it was issued in: it was altered"));
    }
    if envelope.payload_type != PAYLOAD_TYPE {
        return Err(Refusal::untrusted(format!("payload type `{}` is not `{PAYLOAD_TYPE}`", envelope.payload_type)));
    }
    let payload = B64.decode(&envelope.payload).map_err(|_| refuse("the payload is not base64"))?;
    let signer = issuers.iter().find(|key| {
        let id = key_id(key);
        envelope.signatures.iter().filter(|s| s.keyid == id).any(|s| {
            B64.decode(&s.sig)
                .ok()
                .and_then(|raw| Signature::from_slice(&raw).ok())
                .is_some_and(|sig| key.verify_strict(&pae(PAYLOAD_TYPE, &payload), &sig).is_ok())
        })
    });
    let Some(signer) = signer else {
        let ids: Vec<String> = issuers.iter().map(key_id).collect();
        return Err(Refusal::untrusted(format!("no signature by a trusted key ({}) verifies: wrong key or altered certificate", ids.join(", "))));
    };
    let statement: Statement = serde_json::from_slice(&payload).map_err(|e| Refusal::untrusted(format!("the statement is malformed: {e}")))?;
    if statement.statement_type != STATEMENT_TYPE || statement.predicate_type != PREDICATE_TYPE {
        return Err(refuse("not an fcd call certificate (statement or predicate type)"));
    }
    let p = &statement.predicate;
    if p.issuer != key_id(signer) {
        return Err(refuse("the issuer named inside the certificate is not the signing key"));
    }
    if p.decision != "safe" {
        return Err(refuse("a certificate only ever certifies a safe decision"));
    }
    Ok(statement)
}

/// Creates a key pair: `path` (PKCS#8 PEM, private, mode 0600) and `path.pub`
/// (SubjectPublicKeyInfo PEM). Existing files are never overwritten.
pub fn keygen(path: &Path) -> Result<String, InputError> {
    let public = public_path(path);
    for p in [path, public.as_path()] {
        if p.exists() {
            return Err(InputError::new(p, "already exists; fcd never overwrites a key"));
        }
    }
    let mut seed = [0u8; 32];
    getrandom::fill(&mut seed).map_err(|e| InputError::new(path, format!("no randomness for a key: {e}")))?;
    let key = SigningKey::from_bytes(&seed);
    let private = key.to_pkcs8_pem(LineEnding::LF).map_err(|e| InputError::new(path, format!("cannot encode the key: {e}")))?;
    let public_pem = key.verifying_key().to_public_key_pem(LineEnding::LF).map_err(|e| InputError::new(&public, format!("cannot encode the key: {e}")))?;
    write_new(path, private.as_bytes(), true)?;
    write_new(&public, public_pem.as_bytes(), false)?;
    Ok(key_id(&key.verifying_key()))
}

/// The public key file that belongs to a private key file.
pub fn public_path(path: &Path) -> std::path::PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(".pub");
    s.into()
}

fn write_new(path: &Path, bytes: &[u8], private: bool) -> Result<(), InputError> {
    use std::io::Write;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    if private {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let _ = private;
    let mut f = options.open(path).map_err(|e| InputError::new(path, format!("cannot create: {e}")))?;
    f.write_all(bytes).map_err(|e| InputError::new(path, format!("cannot write: {e}")))
}

/// Reads a private key (PKCS#8 PEM).
pub fn load_signing_key(path: &Path) -> Result<SigningKey, InputError> {
    let text = read_text(path)?;
    SigningKey::from_pkcs8_pem(&text).map_err(|e| InputError::new(path, format!("not an ed25519 PKCS#8 PEM private key: {e}")))
}

/// Reads a public key (SubjectPublicKeyInfo PEM), or the public half of a private key file.
pub fn load_verifying_key(path: &Path) -> Result<VerifyingKey, InputError> {
    let text = read_text(path)?;
    if let Ok(k) = VerifyingKey::from_public_key_pem(&text) {
        return Ok(k);
    }
    SigningKey::from_pkcs8_pem(&text).map(|k| k.verifying_key()).map_err(|_| InputError::new(path, "not an ed25519 public key in PEM (SubjectPublicKeyInfo)"))
}

/// Everything a certificate is issued from: a checked call (with its
/// summary), the context and contract it was decided under, and the safe
/// decision itself.
pub struct Issue<'a> {
    pub call: crate::verdict::CheckedCall<'a>,
    pub env: &'a crate::verdict::Env,
    pub contract: &'a crate::verdict::Contract,
    pub decision: crate::verdict::Certifiable<'a>,
    /// Unix seconds.
    pub now: u64,
    pub valid_for: u64,
    /// For compatibility evidence: the summary of the release the call was
    /// formed against (the certificate then names it as its source).
    pub source: Option<&'a fcd_model::summary::Summary>,
}

/// Issues a signed certificate. Only a safe decision can be given
/// ([`crate::verdict::Decision::certifiable`]), so there is nothing to refuse here.
pub fn issue(i: &Issue<'_>, key: &SigningKey) -> DsseEnvelope {
    let (summary, call) = (i.call.summary(), i.call.call());
    let subject = subject_digest(summary.artifact_digest.as_deref(), &summary.source.digest);
    let hex = subject.strip_prefix("sha256:").unwrap_or(subject).to_owned();
    let statement = Statement {
        statement_type: STATEMENT_TYPE.into(),
        subject: vec![Subject { name: format!("{}@{}", summary.tool, summary.release), digest: BTreeMap::from([("sha256".to_owned(), hex)]) }],
        predicate_type: PREDICATE_TYPE.into(),
        predicate: CallCertificate {
            decision: "safe".into(),
            tool: summary.tool.clone(),
            release: summary.release.clone(),
            arguments_digest: canon::digest(&call.arguments),
            principal: i.env.principal.clone(),
            destination: i.env.destination.clone(),
            profile: summary.profile.clone(),
            summary_digest: summary.summary_digest.clone(),
            contract_digest: canon::digest(i.contract),
            config_digest: summary.config_digest.clone(),
            source_digest: summary.source.digest.clone(),
            artifact_digest: summary.artifact_digest.clone(),
            matched_rule: i.decision.rule(),
            effects: i.decision.effects().to_vec(),
            valid_from: i.now,
            valid_until: i.now.saturating_add(i.valid_for).min(MAX_VALID_UNTIL),
            issuer: key_id(&key.verifying_key()),
            source: i.source.map(|s| SourceRelease {
                release: s.release.clone(),
                artifact_digest: s.artifact_digest.clone(),
                source_digest: s.source.digest.clone(),
                summary_digest: s.summary_digest.clone(),
            }),
        },
    };
    sign(&statement, key)
}
