//! The one place that serializes for hashing.
//!
//! Everything fcd hashes or signs is first written as RFC 8785 canonical JSON
//! (JCS: object keys sorted by UTF-16 code units, no insignificant white space,
//! ECMAScript number and string forms), so that any implementation can
//! recompute a digest from the same values. Digests are written `sha256:HEX`.

use serde::Serialize;
use sha2::{Digest, Sha256};

/// Canonical JSON bytes of a value.
pub fn to_canonical<T: Serialize>(value: &T) -> Vec<u8> {
    // Serializing our own plain data (strings, integers, booleans, maps with
    // string keys) cannot fail; a failure here is a bug, and the digest of an
    // empty document would still never match a real one.
    serde_json_canonicalizer::to_vec(value).unwrap_or_default()
}

/// Canonical JSON bytes of a value that may not serialize (a value read from
/// outside, such as a client's tool arguments): the failure is an error,
/// never an empty document.
pub fn try_canonical<T: Serialize>(value: &T) -> Result<Vec<u8>, String> {
    serde_json_canonicalizer::to_vec(value).map_err(|e| format!("cannot be written as canonical JSON: {e}"))
}

/// `sha256:HEX` of the canonical JSON of a value that may not serialize.
pub fn try_digest<T: Serialize>(value: &T) -> Result<String, String> {
    Ok(sha256(&try_canonical(value)?))
}

/// `sha256:HEX` of raw bytes.
pub fn sha256(bytes: &[u8]) -> String {
    format!("sha256:{}", hex(&Sha256::digest(bytes)))
}

/// `sha256:HEX` of the canonical JSON of a value.
pub fn digest<T: Serialize>(value: &T) -> String {
    sha256(&to_canonical(value))
}

/// Lower-case hexadecimal.
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(DIGITS[(b >> 4) as usize] as char);
        out.push(DIGITS[(b & 15) as usize] as char);
    }
    out
}

/// Whether `s` has the form `sha256:` followed by 64 lower-case hex digits.
pub fn is_sha256(s: &str) -> bool {
    s.strip_prefix("sha256:").is_some_and(|h| h.len() == 64 && h.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_form_sorts_keys_and_drops_space() {
        let v: serde_json::Value = serde_json::from_str(r#"{ "b": 1, "a": [true, "é\n"] }"#).unwrap();
        assert_eq!(String::from_utf8(to_canonical(&v)).unwrap(), "{\"a\":[true,\"é\\n\"],\"b\":1}");
    }

    #[test]
    fn digest_of_empty_object_is_stable() {
        assert_eq!(digest(&serde_json::json!({})), "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a");
        assert!(is_sha256(&digest(&1)));
        assert!(!is_sha256("sha256:ABC"));
    }
}
