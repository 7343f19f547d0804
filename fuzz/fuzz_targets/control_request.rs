//! The control socket's requests, as the daemon parses a client's line.
#![no_main]
use libfuzzer_sys::fuzz_target;
use schedlab_live::daemon::control::Request;

fuzz_target!(|line: &str| {
    let _ = serde_json::from_str::<Request>(line.trim());
});
