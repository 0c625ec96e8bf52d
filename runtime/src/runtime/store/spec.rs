//! Which store a runtime opens, as the CLI and a gateway's configuration
//! name it: `sqlite:FILE` (one host, the embedded default) or
//! `etcd:ENDPOINT,ENDPOINT,…` (a replicated cluster), optionally followed by
//! `?` and `&`-separated settings: `prefix=/KEYS/` so several runtimes can
//! share one cluster apart, and how the runtime reaches a cluster that
//! demands it: TLS (`https://` endpoints with `ca=FILE`, and `cert=FILE` and
//! `key=FILE` for a client certificate) and etcd user authentication
//! (`user=NAME` with `password-file=FILE`). A password is never written in
//! the spelling itself, which shows in process lists and logs.

use std::path::PathBuf;

/// A store to open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreSpec {
    /// A SQLite file on this host.
    Sqlite(PathBuf),
    /// An etcd cluster: its client endpoints (`http://HOST:PORT` or
    /// `https://HOST:PORT`), the key prefix the runtime owns, and how it
    /// authenticates.
    Etcd { endpoints: Vec<String>, prefix: String, access: EtcdAccess },
}

/// How the runtime reaches an etcd cluster beyond its addresses. Files are
/// read when the store is opened; a file that does not read is an error
/// naming it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct EtcdAccess {
    /// The CA certificates (PEM) the members' certificates must chain to;
    /// present exactly when the endpoints are `https://`.
    pub ca: Option<PathBuf>,
    /// A client certificate and its private key (PEM), for members started
    /// with `--client-cert-auth`.
    pub identity: Option<(PathBuf, PathBuf)>,
    /// etcd user authentication: the user, and the file holding its password.
    pub user: Option<(String, PathBuf)>,
}

/// The key prefix of an etcd store when none is given.
pub const DEFAULT_ETCD_PREFIX: &str = "/fcd/runtime/";

const ETCD_FORM: &str = "etcd:ENDPOINT[,ENDPOINT…][?prefix=/KEYS/][&ca=FILE][&cert=FILE&key=FILE][&user=NAME&password-file=FILE]";

impl StoreSpec {
    /// Reads `sqlite:FILE` or `etcd:ENDPOINTS[?SETTINGS]`; the error says what is wrong.
    pub fn parse(text: &str) -> Result<StoreSpec, String> {
        if let Some(path) = text.strip_prefix("sqlite:") {
            if path.is_empty() {
                return Err("`sqlite:` needs a file: sqlite:FILE".into());
            }
            return Ok(StoreSpec::Sqlite(PathBuf::from(path)));
        }
        let Some(rest) = text.strip_prefix("etcd:") else {
            return Err(format!("`{text}` is not a store: give sqlite:FILE or {ETCD_FORM}"));
        };
        let (list, settings) = rest.split_once('?').unwrap_or((rest, ""));
        let mut prefix = None;
        let (mut ca, mut cert, mut key, mut user, mut password) = (None, None, None, None, None);
        for setting in settings.split('&').filter(|s| !s.is_empty()) {
            let Some((name, value)) = setting.split_once('=') else {
                return Err(format!("etcd setting `{setting}`: give NAME=VALUE ({ETCD_FORM})"));
            };
            if value.is_empty() {
                return Err(format!("etcd setting `{name}` is empty"));
            }
            let slot = match name {
                "prefix" => &mut prefix,
                "ca" => &mut ca,
                "cert" => &mut cert,
                "key" => &mut key,
                "user" => &mut user,
                "password-file" => &mut password,
                "password" => {
                    return Err(
                        "etcd setting `password`: a password is not written in the store's name (process lists and logs show it); give password-file=FILE"
                            .into(),
                    );
                }
                other => return Err(format!("unknown etcd setting `{other}` ({ETCD_FORM})")),
            };
            if slot.is_some() {
                return Err(format!("etcd setting `{name}` is given twice"));
            }
            *slot = Some(value.to_owned());
        }
        let mut access = EtcdAccess { ca: ca.map(PathBuf::from), ..EtcdAccess::default() };
        let prefix = prefix.unwrap_or_else(|| DEFAULT_ETCD_PREFIX.to_owned());
        if !prefix.starts_with('/') || !prefix.ends_with('/') || prefix.len() < 2 {
            return Err(format!("etcd key prefix `{prefix}`: it starts and ends with `/` and names something between"));
        }
        let mut endpoints = Vec::new();
        let mut schemes = Vec::new();
        for endpoint in list.split(',') {
            let endpoint = endpoint.trim();
            let (scheme, host) = match endpoint.split_once("://") {
                Some(("http", host)) => ("http", host),
                Some(("https", host)) => ("https", host),
                Some(_) => return Err(format!("etcd endpoint `{endpoint}`: give HOST:PORT, http://HOST:PORT or https://HOST:PORT")),
                None => (if access.ca.is_some() { "https" } else { "http" }, endpoint),
            };
            let Some((name, port)) = host.rsplit_once(':') else {
                return Err(format!("etcd endpoint `{endpoint}`: give HOST:PORT, http://HOST:PORT or https://HOST:PORT"));
            };
            if name.is_empty() || port.parse::<u16>().is_err() || host.contains('/') {
                return Err(format!("etcd endpoint `{endpoint}`: give HOST:PORT, http://HOST:PORT or https://HOST:PORT"));
            }
            schemes.push(scheme);
            endpoints.push(format!("{scheme}://{host}"));
        }
        let tls = schemes.iter().all(|s| *s == "https");
        if !tls && schemes.contains(&"https") {
            return Err("etcd endpoints: some are https:// and some http://; a cluster is reached one way".into());
        }
        if tls && access.ca.is_none() {
            return Err("etcd endpoints are https://: give ca=FILE, the CA certificates the members' certificates chain to".into());
        }
        if !tls && (access.ca.is_some() || cert.is_some() || key.is_some()) {
            return Err("etcd TLS settings (ca, cert, key) need https:// endpoints".into());
        }
        access.identity = match (cert, key) {
            (Some(c), Some(k)) => Some((PathBuf::from(c), PathBuf::from(k))),
            (None, None) => None,
            _ => return Err("etcd client certificate: give both cert=FILE and key=FILE".into()),
        };
        access.user = match (user, password) {
            (Some(u), Some(p)) => Some((u, PathBuf::from(p))),
            (None, None) => None,
            (Some(_), None) => return Err("etcd user: give password-file=FILE beside user=NAME".into()),
            (None, Some(_)) => return Err("etcd password-file: give user=NAME beside it".into()),
        };
        Ok(StoreSpec::Etcd { endpoints, prefix, access })
    }

    /// Where the store is, without how it is reached: a SQLite file's path,
    /// or an etcd cluster's endpoints and prefix (the same cluster reached
    /// with other credentials is the same store).
    pub fn place(&self) -> String {
        match self {
            StoreSpec::Sqlite(path) => format!("sqlite:{}", path.display()),
            StoreSpec::Etcd { endpoints, prefix, .. } => format!("etcd:{}?prefix={prefix}", endpoints.join(",")),
        }
    }
}

impl std::fmt::Display for StoreSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.place())?;
        if let StoreSpec::Etcd { access, .. } = self {
            if let Some(ca) = &access.ca {
                write!(f, "&ca={}", ca.display())?;
            }
            if let Some((cert, key)) = &access.identity {
                write!(f, "&cert={}&key={}", cert.display(), key.display())?;
            }
            if let Some((user, password)) = &access.user {
                write!(f, "&user={user}&password-file={}", password.display())?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_stores_read_and_bad_ones_say_why() {
        assert_eq!(StoreSpec::parse("sqlite:/tmp/r.sqlite"), Ok(StoreSpec::Sqlite("/tmp/r.sqlite".into())));
        assert_eq!(
            StoreSpec::parse("etcd:127.0.0.1:2379,http://127.0.0.1:2380"),
            Ok(StoreSpec::Etcd {
                endpoints: vec!["http://127.0.0.1:2379".into(), "http://127.0.0.1:2380".into()],
                prefix: DEFAULT_ETCD_PREFIX.into(),
                access: EtcdAccess::default()
            })
        );
        let spec = StoreSpec::parse("etcd:h:1?prefix=/t/1/").unwrap();
        assert_eq!(StoreSpec::parse(&spec.to_string()), Ok(spec));
        for bad in ["sqlite:", "etcd:", "etcd:host", "etcd:h:x", "etcd:h:1?prefix=t", "https://h:1", "etcd:ftp://h:1", "runtime.sqlite"] {
            assert!(StoreSpec::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn tls_and_user_settings_read_and_round_trip() {
        let text = "etcd:https://a:1,b:2?prefix=/p/&ca=/c/ca.pem&cert=/c/me.pem&key=/c/me.key&user=fcd&password-file=/c/pw";
        let spec = StoreSpec::parse(text).unwrap();
        let StoreSpec::Etcd { endpoints, access, .. } = &spec else { panic!("{spec:?}") };
        assert_eq!(endpoints, &["https://a:1", "https://b:2"], "a bare HOST:PORT takes TLS when a CA is given");
        assert_eq!(access.identity, Some(("/c/me.pem".into(), "/c/me.key".into())));
        assert_eq!(access.user, Some(("fcd".into(), "/c/pw".into())));
        assert_eq!(StoreSpec::parse(&spec.to_string()), Ok(spec.clone()));
        assert_eq!(spec.place(), "etcd:https://a:1,https://b:2?prefix=/p/", "where the store is, not how it is reached");
    }

    #[test]
    fn tls_and_user_settings_that_cannot_work_are_refused_with_the_reason() {
        for (bad, why) in [
            ("etcd:https://h:1", "give ca=FILE"),
            ("etcd:http://h:1?ca=/ca", "need https://"),
            ("etcd:https://h:1,http://h:2?ca=/ca", "one way"),
            ("etcd:https://h:1?ca=/ca&cert=/c", "both cert=FILE and key=FILE"),
            ("etcd:h:1?user=u", "password-file"),
            ("etcd:h:1?password-file=/p", "user=NAME"),
            ("etcd:h:1?user=u&password=hunter2", "not written"),
            ("etcd:h:1?prefix=/a/&prefix=/b/", "twice"),
            ("etcd:h:1?colour=blue", "unknown etcd setting"),
            ("etcd:h:1?user=", "empty"),
        ] {
            let e = StoreSpec::parse(bad).unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
        }
    }
}
