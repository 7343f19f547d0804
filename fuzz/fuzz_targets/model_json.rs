//! Model files (`--model`): a classifier or a clusterer that loads is one every
//! prediction can use without indexing out of bounds.
#![no_main]
use libfuzzer_sys::fuzz_target;
use schedlab_behavior::learn::{Classifier, Clusterer, FeatureVector};

fuzz_target!(|text: &str| {
    if let Ok(model) = Classifier::from_json(text) {
        let _ = model.predict(&FeatureVector::default());
    }
    if let Ok(model) = Clusterer::from_json(text) {
        let names = model.features().to_vec();
        let values = vec![1.0; names.len()];
        let _ = model.assign(&FeatureVector { names, values });
    }
});
