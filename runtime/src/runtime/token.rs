//! Lease tokens: `ID.NONCE.MAC`, an HMAC-SHA256 under the store's key over
//! the lease, its epoch's registered artifact and configuration, and its
//! generation. A MAC, so the final-hop check costs microseconds; one
//! spelling only, so a respelled token is not accepted in its place.

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

use crate::canon;

type HmacSha256 = Hmac<Sha256>;

/// What a token binds.
pub(crate) struct Binding<'a> {
    pub id: i64,
    pub nonce: &'a str,
    pub epoch: &'a str,
    pub artifact: &'a str,
    pub config: &'a str,
    pub generation: i64,
}

/// The MAC of a binding under `key`.
pub(crate) fn mac(key: &[u8], b: &Binding<'_>) -> String {
    let Ok(mut mac) = <HmacSha256 as KeyInit>::new_from_slice(key) else { return String::new() };
    mac.update(format!("fcd-lease|{}|{}|{}|{}|{}|{}", b.id, b.nonce, b.epoch, b.artifact, b.config, b.generation).as_bytes());
    canon::hex(&mac.finalize().into_bytes())
}

/// The token of a binding: `ID.NONCE.MAC`.
pub(crate) fn mint(key: &[u8], b: &Binding<'_>) -> String {
    format!("{}.{}.{}", b.id, b.nonce, mac(key, b))
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
}
