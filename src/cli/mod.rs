//! The `fcd` command: argument parsing, output formats and the one place that
//! maps outcomes to exit codes.
//!
//! Exit codes (DESIGN.md): 0 success, 1 a decision without certificate
//! (unsafe, reject, unknown, a refused certificate, digests that differ),
//! 2 a usage or input error, 3 registration escalated.

mod audit;
mod certify;
mod debug;
mod demo;
mod gateway;
mod keygen;
mod profile;
mod register;
mod registry;
mod release;
mod runtime;

use std::ffi::OsString;
use std::io::Write;

use clap::{Parser, Subcommand, ValueEnum};

use fcd_model::error::InputError;

/// What happened, before it becomes an exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Success,
    /// A decision without certificate, a refusal or a mismatch.
    Refused,
    Escalated,
}

impl Status {
    pub fn code(self) -> u8 {
        match self {
            Status::Success => 0,
            Status::Refused => 1,
            Status::Escalated => 3,
        }
    }
}

/// Exit code of a usage or input error.
pub const INPUT_ERROR: u8 = 2;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum Format {
    /// Human text.
    #[default]
    Text,
    /// One JSON document.
    Json,
}

/// fcd keeps an agent's tool call from changing meaning between the moment a
/// model forms it and the moment a server executes it.
#[derive(Debug, Parser)]
#[command(name = "fcd", version, about, max_term_width = 100)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    Register(register::RegisterArgs),
    Regenerate(register::RegenerateArgs),
    Certify(certify::CertifyArgs),
    VerifyCert(certify::VerifyArgs),
    Keygen(keygen::KeygenArgs),
    /// Authoring tools: run a profile against its fixture cases.
    #[command(subcommand)]
    Profile(profile::ProfileCommand),
    Demo(DemoArgs),
    /// The admission runtime: epochs, formation, admission, leases, revocation, the final-hop fence.
    #[command(subcommand)]
    Runtime(runtime::RuntimeCommand),
    /// Recorded histories: check a runtime store's audit log against the lifecycle's safety properties.
    #[command(subcommand)]
    Audit(audit::AuditCommand),
    /// The MCP gateway: stock servers behind formation, admission and the final-hop fence.
    #[command(subcommand)]
    Gateway(gateway::GatewayCommand),
    /// The registry of admitted epochs: list, show, verify.
    #[command(subcommand)]
    Registry(registry::RegistryCommand),
    /// Official releases: fetch, verify, register, regenerate in a second process and admit.
    #[command(subcommand)]
    Release(release::ReleaseCommand),
    /// Views for profile authors: what a frontend sees.
    #[command(subcommand)]
    Debug(debug::DebugCommand),
}

/// Runs the whole pipeline on the bundled git-diff fixtures and prints each canonical decision.
#[derive(Debug, clap::Args)]
struct DemoArgs {
    /// Output: text for people, or one JSON document.
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

/// Where a subcommand writes.
pub struct Io<'a> {
    pub out: &'a mut dyn Write,
    pub err: &'a mut dyn Write,
}

/// Runs `fcd` with these arguments (the first is the program name) and returns the exit code.
pub fn run<I, T>(args: I, out: &mut dyn Write, err: &mut dyn Write) -> u8
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() { INPUT_ERROR } else { 0 };
            let text = e.render().to_string();
            let _ = if e.use_stderr() { err.write_all(text.as_bytes()) } else { out.write_all(text.as_bytes()) };
            return code;
        }
    };
    let mut io = Io { out, err };
    let result = match cli.command {
        Command::Register(a) => register::register(a, &mut io),
        Command::Regenerate(a) => register::regenerate(a, &mut io),
        Command::Certify(a) => certify::certify(a, &mut io),
        Command::VerifyCert(a) => certify::verify(a, &mut io),
        Command::Keygen(a) => keygen::keygen(a, &mut io),
        Command::Profile(c) => profile::run(c, &mut io),
        Command::Demo(a) => demo::run(a.format, &mut io),
        Command::Registry(c) => registry::run(c, &mut io),
        Command::Release(c) => release::run(c, &mut io),
        Command::Runtime(c) => runtime::run(c, &mut io),
        Command::Audit(c) => audit::run(c, &mut io),
        Command::Gateway(c) => gateway::run(c, &mut io),
        Command::Debug(c) => debug::run(c, &mut io),
    };
    match result {
        Ok(status) => status.code(),
        Err(e) => {
            let _ = writeln!(io.err, "error: {e}");
            INPUT_ERROR
        }
    }
}

/// Writes a JSON document followed by a newline.
pub fn print_json(io: &mut Io<'_>, value: &serde_json::Value) -> Result<(), InputError> {
    let text = serde_json::to_string_pretty(value).unwrap_or_default();
    writeln!(io.out, "{text}").map_err(|e| InputError::new("<stdout>", e.to_string()))
}

/// Writes text to standard output.
pub fn print(io: &mut Io<'_>, text: &str) -> Result<(), InputError> {
    io.out.write_all(text.as_bytes()).map_err(|e| InputError::new("<stdout>", e.to_string()))
}

pub use crate::files::write_atomic;

/// Seconds since the Unix epoch, or `now` when a test fixes the clock.
pub fn unix_now(now: Option<u64>) -> u64 {
    now.unwrap_or_else(|| std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0))
}

/// Unix seconds as an RFC 3339 UTC time (`2026-12-01T09:54:36Z`), for text output.
pub fn rfc3339(secs: u64) -> String {
    let days = secs / 86_400;
    let rest = secs % 86_400;
    // Civil date from days since 1970-01-01 (H. Hinnant's algorithm, proleptic Gregorian).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z", rest / 3_600, rest % 3_600 / 60, rest % 60)
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    /// Every argument of every command says what it is in `--help`.
    #[test]
    fn every_argument_has_help() {
        fn walk(cmd: &clap::Command, path: &str, missing: &mut Vec<String>) {
            let path = format!("{path} {}", cmd.get_name());
            if cmd.get_about().is_none() && cmd.get_long_about().is_none() {
                missing.push(format!("{path} (the command)"));
            }
            for arg in cmd.get_arguments().filter(|a| !["help", "version"].contains(&a.get_id().as_str())) {
                if arg.get_help().is_none() && arg.get_long_help().is_none() {
                    missing.push(format!("{path} --{}", arg.get_id()));
                }
            }
            for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
                walk(sub, &path, missing);
            }
        }
        let mut missing = Vec::new();
        walk(&super::Cli::command(), "", &mut missing);
        assert!(missing.is_empty(), "without help text:\n{}", missing.join("\n"));
    }

    #[test]
    fn rfc3339_writes_utc_dates() {
        assert_eq!(super::rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(super::rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(super::rfc3339(1_796_118_876), "2026-12-01T09:54:36Z");
        assert_eq!(super::rfc3339(4_102_444_799), "2099-12-31T23:59:59Z");
    }
}
