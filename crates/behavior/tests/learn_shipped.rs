//! The shipped model and data set (data/): the model is what `schedlab learn train`
//! makes of the data, its confidences are spread probabilities, the threshold it
//! carries holds on programs it has not seen, and the Gaussian mixture finds clusters in
//! the data.
//!
//! The leave-one-program-out recomputation trains 525 trees; it runs only in release
//! builds: `cargo test --release -p schedlab-behavior --test learn_shipped`.

use std::collections::BTreeMap;

use schedlab_behavior::learn::classifier::DEFAULT_MODEL_JSON;
use schedlab_behavior::learn::{
    Arff, Classifier, Clusterer, Dataset, GmmParams, LabelRules, TreeParams, DEFAULT_MIN_CONFIDENCE,
    MIN_CONFIDENCE_PRECISION,
};

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/");

/// Leave-one-program-out accuracy of the single tree shipped before the ensemble, on
/// the same data (data/model-eval.json of that model: 466 of 531 rows).
const SINGLE_TREE_LOPO: f64 = 466.0 / 531.0;

fn read(name: &str) -> String {
    std::fs::read_to_string(format!("{DATA}{name}")).unwrap_or_else(|e| panic!("{DATA}{name}: {e}"))
}

/// data/profiles.arff labeled by data/labels.txt, as `schedlab learn train` reads them.
fn shipped_data() -> Dataset {
    let data = Dataset::from_arff(&Arff::parse(&read("profiles.arff")).unwrap()).unwrap();
    LabelRules::parse(&read("labels.txt")).unwrap().label(&data)
}

fn without_threshold(json: &str) -> serde_json::Value {
    let mut v: serde_json::Value = serde_json::from_str(json).unwrap();
    v.as_object_mut().unwrap().remove("min_confidence");
    v
}

#[test]
fn the_shipped_model_is_the_default_ensemble_of_the_shipped_data() {
    let data = shipped_data();
    assert_eq!(data.rows.len(), 531);
    let shipped = Classifier::shipped();
    let retrained = Classifier::train(&data, &TreeParams::default()).unwrap();
    assert_eq!(shipped.trees(), TreeParams::default().trees);
    assert!(
        without_threshold(&retrained.to_json()) == without_threshold(DEFAULT_MODEL_JSON),
        "data/model.json is not what `schedlab learn train data/profiles.arff --labels data/labels.txt` \
         makes: retrain it (see the README's \"Default model\")"
    );
}

#[test]
fn shipped_confidences_are_spread_probabilities() {
    let data = shipped_data();
    let model = Classifier::shipped();
    let mut confidences: Vec<f64> = (0..data.rows.len()).map(|i| model.predict(&data.vector(i)).1).collect();
    assert!(confidences.iter().all(|c| (0.5..=1.0).contains(c)), "two classes: the argmax has at least 0.5");
    assert!(confidences.iter().all(|&c| c < 1.0), "no prediction claims certainty");
    confidences.sort_by(f64::total_cmp);
    confidences.dedup();
    assert!(confidences.len() >= 20, "{} distinct confidences: {confidences:?}", confidences.len());
    assert!(confidences[0] < DEFAULT_MIN_CONFIDENCE, "some training rows are doubtful: {confidences:?}");
    // The model carries the threshold its own evaluation chose; the constant is it,
    // rounded down to two decimals.
    let stored = model.min_confidence();
    assert!((DEFAULT_MIN_CONFIDENCE..DEFAULT_MIN_CONFIDENCE + 0.01).contains(&stored), "{stored}");
}

#[test]
fn the_stored_evaluation_backs_the_threshold() {
    let eval: serde_json::Value = serde_json::from_str(&read("model-eval.json")).unwrap();
    let lopo = &eval["leave_one_program_out"];
    let accuracy = lopo["accuracy"].as_f64().unwrap();
    assert!(
        accuracy >= SINGLE_TREE_LOPO - 0.005,
        "leave-one-program-out {accuracy} (single tree {SINGLE_TREE_LOPO})"
    );
    let t = &eval["min_confidence"];
    let (rows, correct) = (t["rows"].as_u64().unwrap(), t["correct"].as_u64().unwrap());
    assert!(correct as f64 >= MIN_CONFIDENCE_PRECISION * rows as f64, "{t}");
    assert!((t["confidence"].as_f64().unwrap() - Classifier::shipped().min_confidence()).abs() < 1e-9);
    assert!(lopo["reliability"].as_array().unwrap().len() >= 4, "confidences fall in several bins");
    assert_eq!(eval["trees"], TreeParams::default().trees);
}

#[test]
#[cfg_attr(debug_assertions, ignore = "525 trees: run with --release")]
fn leave_one_program_out_keeps_accuracy_and_the_threshold_holds() {
    let data = shipped_data();
    let single = Classifier::leave_one_program_out(&data, &TreeParams::single_tree()).unwrap();
    assert!((single.accuracy - SINGLE_TREE_LOPO).abs() < 1e-9, "{}", single.accuracy);
    let lopo = Classifier::leave_one_program_out(&data, &TreeParams::default()).unwrap();
    assert!(lopo.accuracy >= single.accuracy - 0.005, "{} vs {}", lopo.accuracy, single.accuracy);
    let kept: Vec<_> = lopo.tested.iter().filter(|t| t.confidence >= DEFAULT_MIN_CONFIDENCE).collect();
    let right = kept.iter().filter(|t| t.actual == t.predicted).count();
    assert!(right as f64 >= MIN_CONFIDENCE_PRECISION * kept.len() as f64, "{right} of {}", kept.len());
    assert!(kept.len() * 4 >= lopo.tested.len() * 3, "the threshold keeps most rows: {}", kept.len());
    // Calibrated: the single tree's confidences were all about 1 for 88 % right.
    assert!(lopo.calibration_error() < 0.06, "{}", lopo.calibration_error());
    assert!(single.calibration_error() > 0.1, "{}", single.calibration_error());
    let eval: serde_json::Value = serde_json::from_str(&read("model-eval.json")).unwrap();
    assert_eq!(eval["leave_one_program_out"]["accuracy"].as_f64().unwrap(), lopo.accuracy);
}

#[test]
fn clusters_exist_on_the_shipped_data() {
    let data = shipped_data();
    let model = Clusterer::fit(&data, &GmmParams::default()).unwrap();
    assert!(model.failed().is_empty(), "{:?}", model.failed());
    assert_eq!(model.dropped().len(), 46, "system calls no profiled program made");
    assert!(model.k() >= 3, "{:?}", model.bic());
    // BIC falls from k = 1 to the chosen k.
    assert!(model.bic().windows(2).take(model.k() - 1).any(|w| w[1].1 < w[0].1));
    let mut members: Vec<BTreeMap<&str, usize>> = vec![BTreeMap::new(); model.k()];
    for i in 0..data.rows.len() {
        let (c, p) = model.assign(&data.vector(i));
        assert!((0.0..=1.0).contains(&p));
        *members[c].entry(data.rows[i].process.as_str()).or_default() += 1;
    }
    assert!(members.iter().all(|m| !m.is_empty()), "{members:?}");
    // The REPL-like programs (a shell, bc and python3 at a prompt) behave alike.
    let home = |p: &str| members.iter().position(|m| m.get(p).copied().unwrap_or(0) >= 16).unwrap();
    assert_eq!(home("bc"), home("python3-repl"), "{members:?}");
}
