//! The runtime's final-hop fence: lease token, artifact, configuration and
//! generation from the input, against an in-memory runtime store.
#![no_main]

use std::sync::{LazyLock, Mutex};

use libfuzzer_sys::fuzz_target;

static FENCE: LazyLock<Mutex<fcd_fuzz::Fence>> = LazyLock::new(|| Mutex::new(fcd_fuzz::Fence::new(std::path::Path::new(":memory:"))));

fuzz_target!(|data: &[u8]| fcd_fuzz::token(&FENCE, data));
