//! fcd as a whole, one test binary: the `fcd` command end to end, the
//! gateway on stock servers with the official client, the real handlers run
//! on canonical calls, the runtime across processes and under etcd faults,
//! the snapshots of real outputs, tamper tests and tidy rules. What one crate
//! does alone is tested in that crate (frontends/, runtime/, lifecycle/, oracle/).

mod ambient_mutations;
mod audit_check;
mod call_shapes;
mod check_releases;
mod cli;
mod closed_path;
mod dbhub_runs;
mod fcd_cli;
mod filesystem_runs;
mod gateway;
mod gateway_walkthrough;
mod git_add_runs;
mod git_diff_runs;
mod module_graph;
mod move_file_runs;
mod profiles;
mod release_add;
mod runtime_certificates;
mod runtime_durability;
mod runtime_etcd_faults;
mod runtime_experiments;
mod runtime_processes;
mod shapes;
mod snapshots;
mod tamper;
mod tidy;
