//! Call, environment, contract and canonical-calls JSON, decided on every
//! profile's summary; a safe decision's certificate must verify.
#![no_main]

use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;

static JUDGED: LazyLock<fcd_fuzz::Judged> = LazyLock::new(fcd_fuzz::Judged::new);

fuzz_target!(|data: &[u8]| fcd_fuzz::certify(&JUDGED, data));
