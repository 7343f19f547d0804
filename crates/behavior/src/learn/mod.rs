//! Learning from per-process behavior, as the thesis (seed 000) did with Weka: datasets
//! in ARFF and CSV, features computed from per-process profiles, a decision tree
//! classifier (J48's role) and a Gaussian mixture clusterer fitted by EM.
//!
//! The models are trained with linfa but stored in this module's own serializable
//! forms, so a saved model loads without retraining and predicts the same way.

pub mod arff;
pub mod classifier;
pub mod clusterer;
pub mod csv;
pub mod dataset;
pub mod error;
pub mod features;
mod rng;

pub use arff::{Arff, ArffError, ArffProblem, Attribute, AttributeKind, Value};
pub use classifier::{
    Classifier, ConfusionMatrix, Evaluation, LabelRules, LabelRulesError, ReliabilityBin, Tested, Threshold,
    TreeParams, DEFAULT_MIN_CONFIDENCE, DEFAULT_TREES, MIN_CONFIDENCE_PRECISION,
};
pub use clusterer::{Clusterer, Component, GmmParams, KFailure};
pub use csv::CsvError;
pub use dataset::{long_from_arff, long_to_arff, Dataset, LongRecord, Row};
pub use error::{LearnError, ModelFileError};
pub use features::{FeatureVector, ProcessProfile, SyscallKind};
