//! The digest that pins release code by what it reaches (`source.pinned-functions`).
//!
//! A language that pins a function of the release (JavaScript, Go) collects
//! its closure: the definition itself and, transitively, every definition of
//! the release its text reaches, each as a name and its tokens (comments
//! left out). The digest is written once, here, so that every language binds
//! the same way: the definitions sorted by name, then by tokens, each
//! hashed as `NAME\nTOKENS\n\n`. A change to any definition, an added one or
//! a removed one changes it.

/// `sha256:` over the definitions of a closure, each `(name, tokens)`, in
/// the order [`sort`] leaves them.
pub fn digest<'s>(definitions: impl IntoIterator<Item = (&'s str, &'s str)>) -> String {
    let text: String = definitions.into_iter().map(|(name, tokens)| format!("{name}\n{tokens}\n\n")).collect();
    fcd_model::canon::sha256(text.as_bytes())
}

/// Sorts a closure's definitions as [`digest`] hashes them: by name, then by tokens.
pub fn sort<T>(definitions: &mut [T], key: impl Fn(&T) -> (&str, &str)) {
    definitions.sort_by(|a, b| key(a).cmp(&key(b)));
}

/// How a pin covers release code whose closure has `digest` (`None`: it
/// cannot be pinned): `listed` is what `source.pinned-functions` lists for
/// its name. `None` when nothing is listed: each caller says what that means.
pub fn coverage(listed: Option<&Vec<String>>, digest: Option<&str>) -> Option<&'static str> {
    let listed = listed?;
    Some(match digest {
        Some(d) if listed.iter().any(|l| l == d) => "pinned (`source.pinned-functions`), digest listed",
        _ => "pinned (`source.pinned-functions`), digest not listed",
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn coverage_says_whether_the_listed_digests_hold_the_closures() {
        let listed = vec!["sha256:a".to_owned()];
        assert_eq!(super::coverage(Some(&listed), Some("sha256:a")), Some("pinned (`source.pinned-functions`), digest listed"));
        assert_eq!(super::coverage(Some(&listed), Some("sha256:b")), Some("pinned (`source.pinned-functions`), digest not listed"));
        assert_eq!(super::coverage(Some(&listed), None), Some("pinned (`source.pinned-functions`), digest not listed"));
        assert_eq!(super::coverage(None, Some("sha256:a")), None);
    }

    #[test]
    fn the_digest_follows_names_and_tokens_in_order() {
        let mut defs = vec![("b", "func b ( ) { }"), ("a", "func a ( ) { b ( ) }")];
        super::sort(&mut defs, |d| (d.0, d.1));
        assert_eq!(defs[0].0, "a");
        let one = super::digest(defs.iter().copied());
        assert_eq!(one, fcd_model::canon::sha256(b"a\nfunc a ( ) { b ( ) }\n\nb\nfunc b ( ) { }\n\n"));
        assert_ne!(one, super::digest([("a", "func a ( ) { b ( ) }")]));
    }
}
