//! The gateway's client framing: arbitrary lines from a client, and responses it sent.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| fcd_fuzz::gateway_framing(data));
