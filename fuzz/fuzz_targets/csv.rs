//! CSV datasets (`schedlab learn`).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let _ = schedlab_behavior::learn::dataset::Dataset::from_csv("fuzz", text);
});
