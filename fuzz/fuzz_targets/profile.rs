//! Profile TOML loading (from text and from a directory), then registration
//! of the base fixture under any profile that validates.
#![no_main]

use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;

static SCRATCH: LazyLock<std::path::PathBuf> = LazyLock::new(|| {
    // Under the fuzz crate's own (ignored) target directory, one per process.
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target").join(format!("scratch-profile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    dir
});

fuzz_target!(|data: &[u8]| fcd_fuzz::profile(&SCRATCH, data));
