//! What an experiment produces: values by key, the paper's values, and figures.

use std::collections::BTreeMap;

use serde::Serialize;

/// A line (or set of bars) of a figure.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

/// A figure of the paper, redrawn from the simulation.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Figure {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    /// Names of the x values 0, 1, …: the figure is then grouped bars, one bar per
    /// series in each group; empty for lines.
    pub categories: Vec<String>,
    pub series: Vec<Series>,
}

/// One experiment's outcome.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Experiment {
    pub name: String,
    /// What was run, in a sentence or two.
    pub setup: String,
    /// Measured values by key (`tss.A_s`, …).
    pub results: BTreeMap<String, f64>,
    /// The paper's values for the same keys, where its text gives them: what the
    /// experiment is judged by.
    pub paper: BTreeMap<String, f64>,
    /// The paper's figures fed into the setup (calibrated inputs, such as a sort's CPU
    /// time taken from the paper's low-load client time): not results, and not
    /// agreements; a result that only restates one is not listed in `paper`.
    pub inputs: BTreeMap<String, f64>,
    /// What the paper says it showed, where its figure's numbers were lost.
    pub paper_says: String,
    pub figures: Vec<Figure>,
}

impl Experiment {
    /// A measured value.
    pub fn get(&self, key: &str) -> Option<f64> {
        self.results.get(key).copied()
    }
}
