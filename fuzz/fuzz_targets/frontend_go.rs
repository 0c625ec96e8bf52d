//! The Go frontend on arbitrary bytes and mutated fixture sources: parse,
//! region finding, call listing, fact extraction, inventory check, summary.
#![no_main]

use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;

static SETUP: LazyLock<fcd_fuzz::Setup> = LazyLock::new(|| fcd_fuzz::Setup::new(fcd_frontends::Lang::Go));

fuzz_target!(|data: &[u8]| fcd_fuzz::frontend(&SETUP, data));
