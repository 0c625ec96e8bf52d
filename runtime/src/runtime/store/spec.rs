//! Which store a runtime opens, as the CLI and a gateway's configuration
//! name it: `sqlite:FILE` (one host, the embedded default) or
//! `etcd:ENDPOINT,ENDPOINT,…` (a replicated cluster), optionally with
//! `?prefix=/KEYS/` so several runtimes can share one cluster apart.

use std::path::PathBuf;

/// A store to open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreSpec {
    /// A SQLite file on this host.
    Sqlite(PathBuf),
    /// An etcd cluster: its client endpoints (`http://HOST:PORT`) and the key prefix the runtime owns.
    Etcd { endpoints: Vec<String>, prefix: String },
}

/// The key prefix of an etcd store when none is given.
pub const DEFAULT_ETCD_PREFIX: &str = "/fcd/runtime/";

impl StoreSpec {
    /// Reads `sqlite:FILE` or `etcd:ENDPOINTS[?prefix=P]`; the error says what is wrong.
    pub fn parse(text: &str) -> Result<StoreSpec, String> {
        if let Some(path) = text.strip_prefix("sqlite:") {
            if path.is_empty() {
                return Err("`sqlite:` needs a file: sqlite:FILE".into());
            }
            return Ok(StoreSpec::Sqlite(PathBuf::from(path)));
        }
        let Some(rest) = text.strip_prefix("etcd:") else {
            return Err(format!("`{text}` is not a store: give sqlite:FILE or etcd:ENDPOINT[,ENDPOINT…][?prefix=/KEYS/]"));
        };
        let (list, prefix) = match rest.split_once("?prefix=") {
            Some((list, prefix)) => (list, prefix.to_owned()),
            None => (rest, DEFAULT_ETCD_PREFIX.to_owned()),
        };
        if !prefix.starts_with('/') || !prefix.ends_with('/') || prefix.len() < 2 {
            return Err(format!("etcd key prefix `{prefix}`: it starts and ends with `/` and names something between"));
        }
        let mut endpoints = Vec::new();
        for endpoint in list.split(',') {
            let endpoint = endpoint.trim();
            let host = endpoint.strip_prefix("http://").unwrap_or(endpoint);
            let Some((name, port)) = host.rsplit_once(':') else {
                return Err(format!("etcd endpoint `{endpoint}`: give HOST:PORT or http://HOST:PORT"));
            };
            if name.is_empty() || port.parse::<u16>().is_err() || host.contains('/') {
                return Err(format!("etcd endpoint `{endpoint}`: give HOST:PORT or http://HOST:PORT"));
            }
            endpoints.push(format!("http://{host}"));
        }
        Ok(StoreSpec::Etcd { endpoints, prefix })
    }
}

impl std::fmt::Display for StoreSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StoreSpec::Sqlite(path) => write!(f, "sqlite:{}", path.display()),
            StoreSpec::Etcd { endpoints, prefix } => write!(f, "etcd:{}?prefix={prefix}", endpoints.join(",")),
        }
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
            Ok(StoreSpec::Etcd { endpoints: vec!["http://127.0.0.1:2379".into(), "http://127.0.0.1:2380".into()], prefix: DEFAULT_ETCD_PREFIX.into() })
        );
        let spec = StoreSpec::parse("etcd:h:1?prefix=/t/1/").unwrap();
        assert_eq!(StoreSpec::parse(&spec.to_string()), Ok(spec));
        for bad in ["sqlite:", "etcd:", "etcd:host", "etcd:h:x", "etcd:h:1?prefix=t", "https://h:1", "etcd:https://h:1", "runtime.sqlite"] {
            assert!(StoreSpec::parse(bad).is_err(), "{bad}");
        }
    }
}
