//! ARFF datasets (`schedlab learn`), and the dataset made of one.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    if let Ok(arff) = schedlab_behavior::learn::Arff::parse(text) {
        let _ = schedlab_behavior::learn::dataset::Dataset::from_arff(&arff);
    }
});
