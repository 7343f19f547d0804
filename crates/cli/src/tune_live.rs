//! `schedlab tune --live`: tuning on this machine what it lets schedlab change.
//!
//! The kernel's global fair-class knobs (debugfs) are locked on machines with lockdown
//! (this project's VMs), so the live objective tunes the daemon's own `boost_max_ms`
//! (`schedlab_lab::bench::boost_tuning`); this module runs the search and prints it.

use std::io::{self, Write};
use std::time::Instant;

use anyhow::{anyhow, bail, Context, Result};
use schedlab_lab::bench::boost_tuning::{BoostObjective, DEFAULT_MS, RANGE_MS};
use schedlab_tune::{debugfs_knobs_writable, golden_section, particle_swarm};
use serde::Serialize;

use crate::provenance::{write_json, Provenance};
use crate::tune::{Method, TuneOpts};

/// What `--live` found.
#[derive(Debug, Serialize)]
struct LiveOutcome {
    knob: &'static str,
    debugfs: String,
    method: &'static str,
    default_ms: u64,
    default_median_ms: f64,
    best_ms: u64,
    best_median_ms: f64,
    evaluations: usize,
    evaluations_to_best: usize,
    /// (boost_max_ms, median ms) of every evaluation, in order.
    trace: Vec<(u64, f64)>,
    wall_s: f64,
}

/// Runs `schedlab tune --live`.
pub fn run(opts: &TuneOpts) -> Result<()> {
    if opts.method == Method::Rsm {
        bail!(
            "--live supports --method golden or pso: the meta-optimization runs 14 whole swarms, \
             hours of live benchmarks"
        );
    }
    // SAFETY: no arguments.
    if unsafe { libc::geteuid() } != 0 {
        bail!("--live runs the daemon and a benchmark on this machine: run it as root");
    }
    let debugfs = match debugfs_knobs_writable() {
        Ok(()) => "writable (not tuned here: the live objective tunes the daemon)".to_string(),
        Err(e) => format!("not writable: {e}"),
    };
    eprintln!("kernel knobs: {debugfs}; tuning the daemon's boost_max_ms on bench deps (pipe)");
    let objective = BoostObjective::new(
        4,
        15,
        Box::new(|ms, median| eprintln!("boost_max_ms {ms:>3}: median {median:.3} ms")),
    );
    let start = Instant::now();
    let default_median = objective.evaluate(DEFAULT_MS as f64)?;
    objective.forget_evaluations();
    let method = match opts.method {
        Method::Golden => {
            let tol = opts.tolerance.map_or(2.0, |ns| (ns as f64 / 1e6).max(1.0));
            golden_section(|x| objective.evaluate(x), RANGE_MS.0, RANGE_MS.1, tol)
                .context("golden section on the live objective")?;
            "golden"
        }
        Method::Pso => {
            particle_swarm(&objective, &[RANGE_MS.0], &[RANGE_MS.1], &opts.pso_params())
                .context("particle swarm on the live objective")?;
            "pso"
        }
        Method::Rsm => unreachable!("refused above"),
    };
    let trace = objective.into_evaluations();
    let (best_i, &(best_ms, best_median)) = trace
        .iter()
        .enumerate()
        .min_by(|a, b| a.1 .1.total_cmp(&b.1 .1))
        .ok_or_else(|| anyhow!("no evaluation was made"))?;
    let outcome = LiveOutcome {
        knob: "boost_max_ms",
        debugfs,
        method,
        default_ms: DEFAULT_MS,
        default_median_ms: default_median,
        best_ms,
        best_median_ms: best_median,
        evaluations: trace.len(),
        evaluations_to_best: best_i + 1,
        trace,
        wall_s: start.elapsed().as_secs_f64(),
    };
    let mut out = io::stdout().lock();
    if opts.json {
        write_json(&mut out, &Provenance::of_this_run(), &outcome)?;
        return Ok(());
    }
    writeln!(out, "live objective    bench deps over a pipe, 4 hogs per CPU, client's median completion")?;
    writeln!(out, "kernel knobs      {}", outcome.debugfs)?;
    writeln!(out, "method            {}", outcome.method)?;
    writeln!(
        out,
        "default           boost_max_ms {:>3}: {:.3} ms",
        outcome.default_ms, outcome.default_median_ms
    )?;
    writeln!(out, "best              boost_max_ms {:>3}: {:.3} ms", outcome.best_ms, outcome.best_median_ms)?;
    writeln!(
        out,
        "evaluations       {} (evaluations_to_best {}); wall time {:.1} s",
        outcome.evaluations, outcome.evaluations_to_best, outcome.wall_s
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::tests::parse;
    use crate::Command;

    #[test]
    fn live_tuning_refuses_the_meta_optimization_before_running_anything() {
        let Command::Tune(o) = parse(&["tune", "--live", "--method", "rsm"]).unwrap().command else {
            panic!("not tune")
        };
        let e = super::run(&o).unwrap_err().to_string();
        assert!(e.contains("golden or pso"), "{e}");
    }
}
