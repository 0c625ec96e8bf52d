//! `fcd audit check --store STORE`: checks a runtime store's recorded history
//! (its hash-chained audit log, read through the `Runtime` facade, so a
//! SQLite file or an etcd cluster alike) against the lifecycle's safety properties
//! (docs/lifecycle.md) and names each violation with the events that make
//! it. Exit 0 when the history keeps every property, 1 when it breaks one,
//! 2 when the store cannot be read.

use std::path::PathBuf;

use super::{Format, Io, Status, print, print_json};
use fcd_model::error::InputError;
use fcd_runtime::runtime::{Runtime, StoreSpec};

#[derive(Debug, clap::Subcommand)]
pub enum AuditCommand {
    /// Checks a recorded history against the safety properties; exits 1 naming each violation.
    Check {
        /// The runtime store whose audit log is checked: a SQLite file, sqlite:FILE or etcd:ENDPOINT[,ENDPOINT…][?prefix=/KEYS/][&ca=…&cert=…&key=…&user=…&password-file=…].
        #[arg(long)]
        store: String,
        /// Output: text for people, or one JSON document.
        #[arg(long, value_enum, default_value_t)]
        format: Format,
    },
}

pub fn run(c: AuditCommand, io: &mut Io<'_>) -> Result<Status, InputError> {
    let AuditCommand::Check { store, format } = c;
    // `sqlite:FILE` or `etcd:…` names a store (a mistake in it is reported as
    // such); anything else is a SQLite file, which must exist (a check never creates one).
    let spec = if store.starts_with("sqlite:") || store.starts_with("etcd:") {
        StoreSpec::parse(&store).map_err(|e| InputError::new(&store, e))?
    } else {
        StoreSpec::Sqlite(PathBuf::from(&store))
    };
    if let StoreSpec::Sqlite(path) = &spec
        && !path.is_file()
    {
        return Err(InputError::new(path, "no runtime store here"));
    }
    let rt = Runtime::open_store(&spec).map_err(|e| InputError::new(&store, e.to_string()))?;
    let report = fcd_lifecycle::audit_check::check_runtime(&rt).map_err(|e| InputError::new(&store, e.to_string()))?;
    match format {
        Format::Text => print(io, &report.text())?,
        Format::Json => print_json(io, &serde_json::to_value(&report).unwrap_or_default())?,
    }
    Ok(if report.violations.is_empty() { Status::Success } else { Status::Refused })
}
