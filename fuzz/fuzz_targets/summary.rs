//! Summary JSON loading, and decisions on summaries resealed with correct digests.
#![no_main]

use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;

static JUDGED: LazyLock<fcd_fuzz::Judged> = LazyLock::new(fcd_fuzz::Judged::new);

fuzz_target!(|data: &[u8]| fcd_fuzz::summary(&JUDGED, data));
