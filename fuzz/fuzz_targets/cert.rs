//! Certificate verification of arbitrary envelopes and of signed arbitrary statements.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| fcd_fuzz::cert(data));
