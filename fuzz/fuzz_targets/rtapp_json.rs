//! rt-app JSON workload files, as `schedlab simulate FILE.json` and `validate` read them.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let _ = schedlab_sim::workloads::rtapp::parse(text, "fuzz.json");
});
