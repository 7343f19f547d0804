//! The progress bar of the benchmarks: which step runs ("cell 3/12", "round 2/10
//! bare"), a bar of that step's runs, and what runs now; cleared when done.

use indicatif::{ProgressBar, ProgressStyle};

/// A benchmark's progress on standard error (hidden where that is not a terminal).
pub(crate) struct StepBar(ProgressBar);

impl StepBar {
    /// A bar; `elapsed` adds the time since it started.
    pub(crate) fn new(elapsed: bool) -> StepBar {
        let bar = ProgressBar::new(0);
        let template = if elapsed {
            "{prefix} {bar:30} {pos}/{len} {elapsed_precise} {msg}"
        } else {
            "{prefix} {bar:30} {pos}/{len} {msg}"
        };
        bar.set_style(ProgressStyle::with_template(template).expect("a valid progress template"));
        StepBar(bar)
    }

    /// Step `step` (the prefix) has done `done` of its `len` runs; `what` runs now.
    pub(crate) fn show(&self, step: String, what: String, done: u64, len: u64) {
        self.0.set_prefix(step);
        self.0.set_message(what);
        self.0.set_length(len);
        self.0.set_position(done);
    }
}

impl Drop for StepBar {
    fn drop(&mut self) {
        self.0.finish_and_clear();
    }
}
