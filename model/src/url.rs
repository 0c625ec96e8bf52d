//! URLs as the program that fetches them reads them.
//!
//! A rule that decides where a request goes by a pattern over the URL text
//! reads less than the client does: `http://2130706433/`, `http://127.1/`,
//! `http://0x7f.0.0.1/` and `http://[::ffff:127.0.0.1]/` are all loopback to
//! a WHATWG parser, `http://public.example@127.0.0.1/` has the host after
//! the `@`, and a backslash or a tab inside the authority is read in ways no
//! pattern anticipates. So the one URL test a rule has, [`UrlTest::holds`],
//! parses the text with the grammar the release's own parser implements and
//! classifies the host that parser yields: a domain name, or an address by
//! the IANA special-purpose registries. A text the grammar does not parse
//! cannot be evaluated (UNKNOWN), never "does not hold", because a negated
//! test or a later rule would read that as a pass.
//!
//! The grammar `whatwg` is the `url` crate's implementation of the WHATWG URL
//! Standard, the same crate pydantic-core's `AnyUrl` parses with: a profile
//! whose release validates its URL argument with pydantic 2 reads it as the
//! release does. Naming the parser in the rule records that claim in the
//! summary.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use serde::{Deserialize, Serialize};

/// The schemes whose host the WHATWG grammar parses as a host.
const SPECIAL: &[&str] = &["http", "https", "ws", "wss", "ftp", "file"];

/// The grammars a URL test may name.
pub const PARSERS: &[&str] = &["whatwg"];

/// What a URL argument must be, by a named parser.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UrlTest {
    /// The grammar: `whatwg`.
    pub parser: String,
    /// When set, the scheme (lower case, as the parser yields it) is one of these.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schemes: Option<Vec<String>>,
    /// When set, the host's class is one of these.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hosts: Option<Vec<HostClass>>,
}

/// What a URL's host is, by what a connection to it reaches.
///
/// An IPv4-mapped IPv6 address (`::ffff:a.b.c.d`) is the IPv4 address it
/// maps (a socket given it connects to that IPv4 address); every other class
/// is the address's own. Where registries overlap, the narrower block wins.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HostClass {
    /// A domain name: where it leads is the resolver's answer at the time.
    Name,
    /// `127.0.0.0/8`, `::1`.
    Loopback,
    /// `10.0.0.0/8`, `172.16.0.0/12`, `192.168.0.0/16` (RFC 1918), `fc00::/7` (unique local).
    Private,
    /// `169.254.0.0/16` (where most cloud metadata services answer), `fe80::/10`.
    LinkLocal,
    /// `100.64.0.0/10`, carrier-grade NAT (RFC 6598).
    Shared,
    /// `0.0.0.0/8` and `::` (Linux connects `0.0.0.0` to the local host).
    Unspecified,
    /// `224.0.0.0/4`, `ff00::/8`.
    Multicast,
    /// `64:ff9b::/96`, the well-known NAT64 prefix: a translator forwards it
    /// to the IPv4 address in its low 32 bits, whatever class that has.
    Nat64,
    /// Every other special-purpose block (documentation, benchmarking,
    /// `240.0.0.0/4`, broadcast, `192.0.0.0/24`, 6to4, Teredo, the
    /// deprecated IPv4-compatible `::/96`, …): not a public destination, but
    /// not one of the classes above either.
    Reserved,
    /// An address in none of the blocks above.
    Public,
}

impl HostClass {
    pub const ALL: &'static [HostClass] = &[
        HostClass::Name,
        HostClass::Loopback,
        HostClass::Private,
        HostClass::LinkLocal,
        HostClass::Shared,
        HostClass::Unspecified,
        HostClass::Multicast,
        HostClass::Nat64,
        HostClass::Reserved,
        HostClass::Public,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            HostClass::Name => "name",
            HostClass::Loopback => "loopback",
            HostClass::Private => "private",
            HostClass::LinkLocal => "link-local",
            HostClass::Shared => "shared",
            HostClass::Unspecified => "unspecified",
            HostClass::Multicast => "multicast",
            HostClass::Nat64 => "nat64",
            HostClass::Reserved => "reserved",
            HostClass::Public => "public",
        }
    }

    pub fn parse(s: &str) -> Option<HostClass> {
        HostClass::ALL.iter().copied().find(|c| c.as_str() == s)
    }

    /// The class of an address.
    pub fn of(address: IpAddr) -> HostClass {
        match address {
            IpAddr::V4(v4) => v4_class(v4),
            IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
                Some(v4) => v4_class(v4),
                None => v6_class(v6),
            },
        }
    }
}

fn in_v4(a: Ipv4Addr, net: [u8; 4], len: u32) -> bool {
    let mask = if len == 0 { 0 } else { u32::MAX << (32 - len) };
    u32::from(a) & mask == u32::from(Ipv4Addr::from(net)) & mask
}

fn in_v6(a: Ipv6Addr, net: [u16; 8], len: u32) -> bool {
    let mask = if len == 0 { 0 } else { u128::MAX << (128 - len) };
    u128::from(a) & mask == u128::from(Ipv6Addr::from(net)) & mask
}

fn v4_class(a: Ipv4Addr) -> HostClass {
    let classes: &[([u8; 4], u32, HostClass)] = &[
        ([0, 0, 0, 0], 8, HostClass::Unspecified),
        ([127, 0, 0, 0], 8, HostClass::Loopback),
        ([10, 0, 0, 0], 8, HostClass::Private),
        ([172, 16, 0, 0], 12, HostClass::Private),
        ([192, 168, 0, 0], 16, HostClass::Private),
        ([169, 254, 0, 0], 16, HostClass::LinkLocal),
        ([100, 64, 0, 0], 10, HostClass::Shared),
        ([224, 0, 0, 0], 4, HostClass::Multicast),
        ([192, 0, 0, 0], 24, HostClass::Reserved),
        ([192, 0, 2, 0], 24, HostClass::Reserved),
        ([192, 88, 99, 0], 24, HostClass::Reserved),
        ([198, 18, 0, 0], 15, HostClass::Reserved),
        ([198, 51, 100, 0], 24, HostClass::Reserved),
        ([203, 0, 113, 0], 24, HostClass::Reserved),
        ([240, 0, 0, 0], 4, HostClass::Reserved),
    ];
    classes.iter().find(|(net, len, _)| in_v4(a, *net, *len)).map_or(HostClass::Public, |(_, _, c)| *c)
}

fn v6_class(a: Ipv6Addr) -> HostClass {
    if a.is_unspecified() {
        return HostClass::Unspecified;
    }
    if a.is_loopback() {
        return HostClass::Loopback;
    }
    let classes: &[([u16; 8], u32, HostClass)] = &[
        ([0xfc00, 0, 0, 0, 0, 0, 0, 0], 7, HostClass::Private),
        ([0xfe80, 0, 0, 0, 0, 0, 0, 0], 10, HostClass::LinkLocal),
        ([0xff00, 0, 0, 0, 0, 0, 0, 0], 8, HostClass::Multicast),
        ([0x64, 0xff9b, 0, 0, 0, 0, 0, 0], 96, HostClass::Nat64),
        ([0x64, 0xff9b, 1, 0, 0, 0, 0, 0], 48, HostClass::Reserved),
        // The deprecated IPv4-compatible addresses, `::a.b.c.d`.
        ([0, 0, 0, 0, 0, 0, 0, 0], 96, HostClass::Reserved),
        ([0x100, 0, 0, 0, 0, 0, 0, 0], 64, HostClass::Reserved),
        ([0x2001, 0, 0, 0, 0, 0, 0, 0], 23, HostClass::Reserved),
        ([0x2001, 0xdb8, 0, 0, 0, 0, 0, 0], 32, HostClass::Reserved),
        ([0x2002, 0, 0, 0, 0, 0, 0, 0], 16, HostClass::Reserved),
        ([0x3fff, 0, 0, 0, 0, 0, 0, 0], 20, HostClass::Reserved),
        ([0x5f00, 0, 0, 0, 0, 0, 0, 0], 16, HostClass::Reserved),
    ];
    classes.iter().find(|(net, len, _)| in_v6(a, *net, *len)).map_or(HostClass::Public, |(_, _, c)| *c)
}

/// A URL as the grammar reads it: its scheme and its host's class.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedUrl {
    pub scheme: String,
    /// `None` for a URL without a host (`mailto:x`, `data:…`).
    pub host: Option<HostClass>,
}

impl UrlTest {
    /// Reads `text` with the test's grammar; `Err` when it does not parse
    /// (or the grammar is unknown), which the caller must treat as UNKNOWN.
    pub fn parse(&self, text: &str) -> Result<ParsedUrl, String> {
        if self.parser != "whatwg" {
            return Err(format!("no URL grammar `{}`", self.parser));
        }
        let url = url::Url::parse(text).map_err(|e| format!("the WHATWG URL grammar does not parse it: {e}"))?;
        // Only the special schemes (http, https, ws, wss, ftp, file) have a
        // host the grammar parses; any other scheme's host is opaque text
        // (`gopher://127.1/` keeps `127.1`), which each program reads its own way.
        if url.host().is_some() && !SPECIAL.contains(&url.scheme()) {
            return Err(format!("the host of a `{}:` URL is opaque to the WHATWG grammar", url.scheme()));
        }
        let host = url.host().map(|h| match h {
            url::Host::Domain(_) => HostClass::Name,
            url::Host::Ipv4(a) => HostClass::of(IpAddr::V4(a)),
            url::Host::Ipv6(a) => HostClass::of(IpAddr::V6(a)),
        });
        Ok(ParsedUrl { scheme: url.scheme().to_owned(), host })
    }

    /// Whether `text` parses and its scheme and host class are among the
    /// test's (a URL without a host passes no `hosts` list).
    pub fn holds(&self, text: &str) -> Result<bool, String> {
        let parsed = self.parse(text)?;
        let scheme = self.schemes.as_ref().is_none_or(|s| s.contains(&parsed.scheme));
        let host = self.hosts.as_ref().is_none_or(|h| parsed.host.is_some_and(|c| h.contains(&c)));
        Ok(scheme && host)
    }
}

impl std::fmt::Display for UrlTest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "is a URL by the {} grammar", self.parser)?;
        if let Some(s) = &self.schemes {
            write!(f, " with a scheme in [{}]", s.join(", "))?;
        }
        if let Some(h) = &self.hosts {
            let names: Vec<&str> = h.iter().map(|c| c.as_str()).collect();
            write!(f, " with a host in [{}]", names.join(", "))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(text: &str) -> Option<HostClass> {
        UrlTest { parser: "whatwg".into(), schemes: None, hosts: None }.parse(text).unwrap().host
    }

    #[test]
    fn every_spelling_of_loopback_is_loopback() {
        for text in [
            "http://127.0.0.1/",
            "http://2130706433/",
            "http://127.1/",
            "http://0x7f.0.0.1/",
            "http://0177.0.0.1/",
            "http://[::1]/",
            "http://[::ffff:127.0.0.1]/",
            "http://[::ffff:7f00:1]/",
            "HTTP://LOCALHOST.:80@127.0.0.1/",
            "http://user:pw@127.0.0.1:8080/x",
            "http:\\\\127.0.0.1\\x",
            "http://127.0.0.1\t/",
        ] {
            assert_eq!(class(text), Some(HostClass::Loopback), "{text}");
        }
    }

    #[test]
    fn addresses_take_the_narrowest_block() {
        let cases = [
            ("http://169.254.169.254/latest/meta-data/", HostClass::LinkLocal),
            ("http://[fd00:ec2::254]/", HostClass::Private),
            ("http://100.100.100.200/", HostClass::Shared),
            ("http://10.1.2.3/", HostClass::Private),
            ("http://172.31.255.255/", HostClass::Private),
            ("http://172.32.0.1/", HostClass::Public),
            ("http://0.0.0.0/", HostClass::Unspecified),
            ("http://0/", HostClass::Unspecified),
            ("http://[::]/", HostClass::Unspecified),
            ("http://224.0.0.1/", HostClass::Multicast),
            ("http://[64:ff9b::a9fe:a9fe]/", HostClass::Nat64),
            ("http://[64:ff9b:1::1]/", HostClass::Reserved),
            ("http://[::7f00:1]/", HostClass::Reserved),
            ("http://192.0.2.1/", HostClass::Reserved),
            ("http://255.255.255.255/", HostClass::Reserved),
            ("http://[2001:db8::1]/", HostClass::Reserved),
            ("http://8.8.8.8/", HostClass::Public),
            ("http://[2606:4700::1111]/", HostClass::Public),
            ("https://example.com/", HostClass::Name),
            ("https://xn--nxasmq6b.example/", HostClass::Name),
            ("https://ex\u{e4}mple.com/", HostClass::Name),
            ("ftp://10.0.0.1/", HostClass::Private),
        ];
        for (text, want) in cases {
            assert_eq!(class(text), Some(want), "{text}");
        }
    }

    #[test]
    fn a_text_the_grammar_refuses_cannot_be_evaluated() {
        let t = UrlTest { parser: "whatwg".into(), schemes: Some(vec!["http".into()]), hosts: None };
        for text in ["", "not a url", "http://[::1/", "http://256.0.0.1/", "http://a b/"] {
            assert!(t.holds(text).is_err(), "{text}");
        }
        assert!(UrlTest { parser: "rfc3986".into(), schemes: None, hosts: None }.holds("http://x/").is_err());
    }

    #[test]
    fn scheme_and_host_both_hold() {
        let t = UrlTest { parser: "whatwg".into(), schemes: Some(vec!["http".into(), "https".into()]), hosts: Some(vec![HostClass::Public]) };
        assert_eq!(t.holds("HTTPS://8.8.8.8/"), Ok(true));
        assert_eq!(t.holds("https://example.com/"), Ok(false), "a name is not an address");
        assert_eq!(t.holds("file:///etc/passwd"), Ok(false), "a file URL has another scheme and no host");
        assert!(t.holds("gopher://8.8.8.8/").is_err(), "an opaque host is not classified");
        let no_host = UrlTest { parser: "whatwg".into(), schemes: None, hosts: Some(HostClass::ALL.to_vec()) };
        assert_eq!(no_host.holds("data:text/plain,x"), Ok(false), "no host is in no class");
    }
}
