//! Lease tokens: `ID.NONCE.MAC`, an HMAC-SHA256 under the store's key over
//! the lease, its epoch's registered artifact and configuration, and its
//! generation. A MAC, so the final-hop check costs microseconds; one
//! spelling only, so a respelled token is not accepted in its place.

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

use super::refusal::StorageError;
use fcd_model::canon;

type HmacSha256 = Hmac<Sha256>;

/// What a token binds.
pub(crate) struct TokenBinding<'a> {
    pub id: i64,
    pub nonce: &'a str,
    pub epoch: &'a str,
    pub artifact: &'a str,
    pub config: &'a str,
    pub generation: i64,
}

/// The MAC state of a binding under `key`; a key HMAC cannot take is a storage error.
fn keyed(key: &[u8], b: &TokenBinding<'_>) -> Result<HmacSha256, StorageError> {
    let mut mac = <HmacSha256 as KeyInit>::new_from_slice(key).map_err(|e| StorageError::new(format!("the store's token key is unusable: {e}")))?;
    mac.update(format!("fcd-lease|{}|{}|{}|{}|{}|{}", b.id, b.nonce, b.epoch, b.artifact, b.config, b.generation).as_bytes());
    Ok(mac)
}

/// The token of a binding: `ID.NONCE.MAC`.
pub(crate) fn mint(key: &[u8], b: &TokenBinding<'_>) -> Result<String, StorageError> {
    Ok(format!("{}.{}.{}", b.id, b.nonce, canon::hex(&keyed(key, b)?.finalize().into_bytes())))
}

/// Whether `mac` (hex, as in a token) is the binding's MAC, compared in
/// constant time; a MAC that is not lowercase hex of the right length is not.
pub(crate) fn verifies(key: &[u8], b: &TokenBinding<'_>, mac: &str) -> Result<bool, StorageError> {
    let Some(raw) = unhex(mac) else { return Ok(false) };
    Ok(keyed(key, b)?.verify_slice(&raw).is_ok())
}

/// Lowercase hex to bytes, in the one spelling [`canon::hex`] writes.
fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) || !text.bytes().all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(&c)) {
        return None;
    }
    (0..text.len()).step_by(2).map(|i| u8::from_str_radix(&text[i..i + 2], 16).ok()).collect()
}

/// Splits `ID.NONCE.MAC`. The id must be written exactly as the runtime
/// writes it (no sign, no leading zero), so a token has one spelling only and
/// a respelled one (`042.…`, `+42.…`) is not accepted in its place.
pub(crate) fn parse(token: &str) -> Option<(i64, String, String)> {
    let mut parts = token.splitn(3, '.');
    let id_text = parts.next()?;
    let id: i64 = id_text.parse().ok()?;
    if id.to_string() != id_text {
        return None;
    }
    Some((id, parts.next()?.to_owned(), parts.next()?.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_has_one_spelling() {
        assert_eq!(parse("42.n.m"), Some((42, "n".into(), "m".into())));
        assert_eq!(parse("042.n.m"), None);
        assert_eq!(parse("+42.n.m"), None);
        assert_eq!(parse("42.n"), None);
    }

    #[test]
    fn a_mac_verifies_only_in_its_own_spelling() {
        let b = TokenBinding { id: 1, nonce: "n", epoch: "e", artifact: "a", config: "c", generation: 1 };
        let token = mint(b"key", &b).unwrap();
        let mac = token.rsplit('.').next().unwrap();
        assert!(verifies(b"key", &b, mac).unwrap());
        assert!(!verifies(b"other", &b, mac).unwrap());
        assert!(!verifies(b"key", &b, &mac.to_uppercase()).unwrap());
        assert!(!verifies(b"key", &b, &mac[..62]).unwrap());
        assert!(!verifies(b"key", &TokenBinding { generation: 2, ..b }, mac).unwrap());
    }
}
