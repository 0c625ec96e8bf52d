//! The oracle for the reference fetch server's `fetch`.
//!
//! From the envelope: the call's `url` reaches one `client.get(url, …)` in
//! `fetch_url`, redirects followed. Where nothing checks the address (no
//! request hook), a URL whose host is a loopback, private, link-local,
//! shared or unspecified address reaches it, and anything else may be
//! redirected anywhere: unknown. Where `fetch_url` and the robots.txt check
//! both install `_refuse_private_destination` as the client's request hook
//! under `if not allow_private_ips:` before their request, and the server
//! runs without private addresses allowed, such a host is refused before
//! any request, and a public address or a name is fetched from a public
//! address. The oracle reads the host with its own small reading of the
//! URL standard (scheme, userinfo, IPv4 numbers in decimal, octal or hex,
//! bracketed IPv6), and says unknown for anything it does not read.

use std::net::{Ipv4Addr, Ipv6Addr};
use std::path::Path;

use serde_json::{Map, Value};

use crate::Verdict;
use crate::contract::{Context, Effect};
use crate::lex::{Dialect, Kind, Token};

/// What the oracle understood of the release.
pub enum Shape {
    /// Nothing checks where the request goes.
    Open(String),
    /// Both requests are preceded by the private-address hook.
    Hooked(String),
    NotUnderstood(String),
}

pub fn read(root: &Path) -> Shape {
    match shape(root) {
        Ok(s) => s,
        Err(why) => Shape::NotUnderstood(why),
    }
}

fn shape(root: &Path) -> Result<Shape, String> {
    let files = crate::files::find(root, &|p| p.ends_with("mcp_server_fetch/server.py"));
    let [(name, path)] = files.as_slice() else { return Err(format!("{} files named mcp_server_fetch/server.py", files.len())) };
    let src = std::fs::read_to_string(path).map_err(|e| format!("{name}: {e}"))?;
    let tokens = crate::lex::scan(&src, Dialect::Python)?;
    let function = |wanted: &str| -> Option<Vec<Vec<Token>>> {
        let defs: Vec<usize> = (1..tokens.len()).filter(|&i| tokens[i - 1].is("def") && tokens[i].is(wanted)).collect();
        match defs.as_slice() {
            [one] => Some(crate::git_diff::body_lines(&tokens, *one)),
            _ => None,
        }
    };
    let fetch = function("fetch_url").ok_or(format!("{name}: not one fetch_url"))?;
    let get = fetch.iter().position(|l| l.windows(4).any(|w| w[0].is("client") && w[1].is(".") && w[2].is("get") && w[3].is("(")));
    let get = get.ok_or(format!("{name}: fetch_url calls no client.get"))?;
    // `client.get(url, …)`, or `client.get(str(url), …)` of the model's URL object.
    let at = fetch[get].windows(3).position(|w| w[0].is("client") && w[2].is("get")).map_or(0, |i| i + 4);
    let rest: Vec<&str> = fetch[get].iter().skip(at).take(5).map(|t| t.text.as_str()).collect();
    let first_argument = match rest.as_slice() {
        ["url", ",", ..] | ["url", ")", ..] => Some("url"),
        ["str", "(", "url", ")", "," | ")"] => Some("url"),
        _ => None,
    };
    if first_argument != Some("url") {
        return Err(format!("{name}:{}: client.get is not handed url first", fetch[get][0].line));
    }
    let hooks_anywhere = tokens.iter().any(|t| t.is("event_hooks"));
    if !hooks_anywhere {
        return Ok(Shape::Open(format!("{name}:{}: fetch_url hands url to client.get, and no request hook is installed anywhere", fetch[get][0].line)));
    }
    let robots = function("check_may_autonomously_fetch_url").ok_or(format!("{name}: hooks are installed, but there is not one robots.txt check"))?;
    let robots_get = robots.iter().position(|l| l.windows(3).any(|w| w[0].is("client") && w[1].is(".") && w[2].is("get")));
    let robots_get = robots_get.ok_or(format!("{name}: the robots.txt check calls no client.get"))?;
    for (what, body, at) in [("fetch_url", &fetch, get), ("the robots.txt check", &robots, robots_get)] {
        if !hooked_before(body, at) {
            return Err(format!("{name}: {what} does not install _refuse_private_destination under `if not allow_private_ips:` before its request"));
        }
    }
    if !function("_refuse_private_destination").is_some_and(|b| b.iter().any(|l| l.iter().any(|t| t.is("raise")))) {
        return Err(format!("{name}: the hook _refuse_private_destination raises nothing"));
    }
    Ok(Shape::Hooked(format!("{name}:{}: the private-address hook is installed before the page's and the robots.txt request", fetch[get][0].line)))
}

/// Before the request, under `if not allow_private_ips:`, either
/// `client.event_hooks = {"request": [_refuse_private_destination]}` or
/// `hooks.append(_refuse_private_destination)` into a list `hooks = []`
/// (or `hooks: … = []`) that `client.event_hooks = {"request": hooks}`
/// installs before the request; no other line touches `event_hooks`, and
/// the list is only appended to before it is installed.
fn hooked_before(body: &[Vec<Token>], request: usize) -> bool {
    let texts: Vec<String> = body
        .iter()
        .map(|l| l.iter().map(|t| if let Kind::Str(Some(s)) = &t.kind { format!("{s:?}") } else { t.text.clone() }).collect::<Vec<_>>().join(" "))
        .collect();
    let guarded = |i: usize| i >= 1 && texts[i - 1] == "if not allow_private_ips :";
    let touches = texts.iter().filter(|l| l.contains("event_hooks")).count();
    if touches != 1 {
        return false;
    }
    let literal = texts.iter().position(|l| l == "client . event_hooks = { \"request\" : [ _refuse_private_destination ] }");
    if let Some(at) = literal {
        return at < request && guarded(at) && texts[at + 1..request].iter().all(|l| l == "try :");
    }
    let installed = texts.iter().position(|l| l == "client . event_hooks = { \"request\" : hooks }");
    let appended = texts.iter().position(|l| l == "hooks . append ( _refuse_private_destination )");
    let created = texts.iter().position(|l| l == "hooks = [ ]" || (l.starts_with("hooks :") && l.ends_with("= [ ]")));
    let (Some(installed), Some(appended), Some(created)) = (installed, appended, created) else { return false };
    let list_uses = texts
        .iter()
        .enumerate()
        .filter(|(_, l)| l.split(' ').any(|w| w == "hooks"))
        .all(|(i, l)| i == created || i == installed || (l.starts_with("hooks . append (") && i < installed) || (l == "if hooks :" && i + 1 == installed));
    created < appended && appended < installed && installed < request && guarded(appended) && list_uses
}

/// Where a URL leads, as the oracle reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Host {
    /// Loopback, RFC 1918, unique local, link-local, shared or unspecified.
    Private,
    Multicast,
    /// Any other special-purpose block (documentation, NAT64, 6to4, …).
    Special,
    Public,
    Name,
}

/// The scheme and host class of an http(s) URL; `None` for anything else or
/// anything the oracle does not read.
fn read_url(url: &str) -> Option<(String, Host)> {
    if url.chars().any(|c| c.is_whitespace() || c == '\\' || c == '%' || c.is_control()) {
        return None;
    }
    let (scheme, rest) = url.split_once("://")?;
    let scheme = scheme.to_ascii_lowercase();
    if scheme != "http" && scheme != "https" {
        return None;
    }
    let authority = rest.split(['/', '?', '#']).next()?;
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = if let Some(inner) = host_port.strip_prefix('[') {
        let (inner, _) = inner.split_once(']')?;
        let ip: Ipv6Addr = inner.parse().ok()?;
        return Some((
            scheme,
            match ip.to_ipv4_mapped() {
                Some(v4) => v4_class(v4),
                None => v6_class(ip),
            },
        ));
    } else {
        host_port.split(':').next()?.to_ascii_lowercase()
    };
    if host.is_empty() {
        return None;
    }
    match v4_numbers(&host) {
        Some(Some(ip)) => Some((scheme, v4_class(ip))),
        Some(None) => None,
        None => Some((scheme, Host::Name)),
    }
}

/// The URL standard's IPv4 reading: up to four dot-separated numbers, each
/// decimal, `0x` hexadecimal or `0`-led octal, the last filling the rest.
/// `None` when the host is a name; `Some(None)` when it looks numeric but is
/// not a valid address (which the standard refuses).
fn v4_numbers(host: &str) -> Option<Option<Ipv4Addr>> {
    let host = host.strip_suffix('.').unwrap_or(host);
    let parts: Vec<&str> = host.split('.').collect();
    let last = parts.last()?;
    let numeric = |p: &str| !p.is_empty() && (p.chars().all(|c| c.is_ascii_digit()) || p.starts_with("0x") && p[2..].chars().all(|c| c.is_ascii_hexdigit()));
    if !numeric(last) {
        return None;
    }
    let value = |p: &str| -> Option<u64> {
        if let Some(hex) = p.strip_prefix("0x") {
            return if hex.is_empty() { Some(0) } else { u64::from_str_radix(hex, 16).ok() };
        }
        if p.len() > 1 && p.starts_with('0') {
            return u64::from_str_radix(&p[1..], 8).ok();
        }
        p.parse().ok()
    };
    if parts.len() > 4 || !parts.iter().all(|p| numeric(p)) {
        return Some(None);
    }
    let Some(numbers) = parts.iter().map(|p| value(p)).collect::<Option<Vec<u64>>>() else { return Some(None) };
    let (init, tail) = numbers.split_at(numbers.len() - 1);
    if init.iter().any(|n| *n > 255) || tail[0] >= 1u64 << (8 * (5 - numbers.len())) {
        return Some(None);
    }
    let mut address = tail[0];
    for (i, n) in init.iter().enumerate() {
        address += n << (8 * (3 - i));
    }
    Some(Some(Ipv4Addr::from(address as u32)))
}

fn v4_class(ip: Ipv4Addr) -> Host {
    let [a, b, c, _] = ip.octets();
    match (a, b, c) {
        (0, _, _) | (127, _, _) | (10, _, _) | (192, 168, _) | (169, 254, _) => Host::Private,
        (172, 16..=31, _) | (100, 64..=127, _) => Host::Private,
        (224..=239, _, _) => Host::Multicast,
        (192, 0, 0) | (192, 0, 2) | (192, 88, 99) | (198, 18..=19, _) | (198, 51, 100) | (203, 0, 113) | (240..=255, _, _) => Host::Special,
        _ => Host::Public,
    }
}

fn v6_class(ip: Ipv6Addr) -> Host {
    let s = ip.segments();
    if ip.is_unspecified() || ip.is_loopback() || s[0] & 0xfe00 == 0xfc00 || s[0] & 0xffc0 == 0xfe80 {
        return Host::Private;
    }
    if s[0] & 0xff00 == 0xff00 {
        return Host::Multicast;
    }
    // NAT64, IPv4-compatible, discard-only, TEREDO and the ORCHID/benchmarking
    // blocks of 2001::/23, documentation, 6to4, the new documentation and SRv6 blocks.
    let special = (s[0] == 0x64 && s[1] == 0xff9b)
        || s[..6] == [0; 6]
        || (s[0] == 0x100 && s[1..4] == [0; 3])
        || (s[0] == 0x2001 && s[1] < 0x200)
        || (s[0] == 0x2001 && s[1] == 0xdb8)
        || s[0] == 0x2002
        || s[0] & 0xfff0 == 0x3ff0
        || s[0] == 0x5f00;
    if special { Host::Special } else { Host::Public }
}

pub fn verdict(shape: &Shape, args: &Map<String, Value>, ctx: &Context) -> (Verdict, String) {
    let (hooked, where_) = match shape {
        Shape::Open(w) => (false, w.as_str()),
        Shape::Hooked(w) => (true, w.as_str()),
        Shape::NotUnderstood(why) => return (Verdict::CannotJudge, why.clone()),
    };
    let Some(url) = args.get("url").and_then(Value::as_str) else { return (Verdict::CannotJudge, "the call has no string url".into()) };
    let Some((_, host)) = read_url(url) else { return (Verdict::Unknown, format!("{where_}; the oracle reads no http(s) host in {url}")) };
    let get = |destination: &str| {
        let mut at = ctx.clone();
        at.destination = destination.to_owned();
        let effect = Effect { op: "http:get".into(), resource: url.into(), exposure: 2, mutation: false, write_scopes: vec![] };
        at.breaches(&[effect])
    };
    let judged = |breaches: Vec<String>, what: &str| {
        if breaches.is_empty() { (Verdict::Safe, format!("{where_}; {what}")) } else { (Verdict::Unsafe, format!("{where_}; {what}: {}", breaches.join("; "))) }
    };
    if !hooked {
        return match host {
            Host::Private => judged(get("net:private"), "the request goes to a private address"),
            _ => (Verdict::Unknown, format!("{where_}; redirects are followed unchecked, so where the request ends is the remote's to say")),
        };
    }
    if ctx.config.get("allow_private_ips") != Some(&Value::Bool(false)) {
        return (Verdict::Unknown, format!("{where_}; the server may allow private addresses"));
    }
    match host {
        Host::Private | Host::Multicast => (Verdict::Reject, format!("{where_}; the hook refuses the address before any request")),
        Host::Public | Host::Name => judged(get("net:public"), "every request passes the hook, which lets only public addresses through"),
        Host::Special => (Verdict::Unknown, format!("{where_}; a special-purpose address whose fate the oracle does not decide")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_oracle_reads_numeric_hosts_as_the_standard_does() {
        let class = |u: &str| read_url(u).map(|(_, h)| h);
        assert_eq!(class("http://2130706433:8080/x"), Some(Host::Private));
        assert_eq!(class("http://0x7f.1/"), Some(Host::Private));
        assert_eq!(class("http://0177.0.0.1/"), Some(Host::Private));
        assert_eq!(class("http://a@169.254.169.254/"), Some(Host::Private));
        assert_eq!(class("http://[::ffff:10.0.0.1]/"), Some(Host::Private));
        assert_eq!(class("http://[64:ff9b::a9fe:a9fe]/"), Some(Host::Special));
        assert_eq!(class("https://8.8.8.8/"), Some(Host::Public));
        assert_eq!(class("https://example.com/"), Some(Host::Name));
        assert_eq!(class("http://256.1.1.1/"), None);
        assert_eq!(class("file:///etc/passwd"), None);
        assert_eq!(class("http://a\\b/"), None);
    }
}
