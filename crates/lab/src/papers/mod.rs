//! The papers' experiments, run in the simulator: each returns its measured values (as
//! named keys), the paper's values where the text gives them, and the data of its
//! figures. `schedlab reproduce` runs them and writes the report.

mod experiment;
pub mod pfs;
pub mod swap;
pub mod tuning;

pub use experiment::{Experiment, Figure, Series};

/// An experiment `schedlab reproduce` can run: its name, what it reproduces, and how.
pub struct Entry {
    pub name: &'static str,
    pub about: &'static str,
    pub run: fn() -> Experiment,
}

/// Every experiment, in report order.
pub const EXPERIMENTS: &[Entry] = &[
    Entry {
        name: "pfs_fig1",
        about: "paper 001 Figure 1: two processes, 1 s slices, TSS vs PFS",
        run: pfs::fig1,
    },
    Entry {
        name: "pfs_fig6",
        about: "paper 001 Figure 6: processing time vs maximum dispatch delay T_m",
        run: pfs::fig6,
    },
    Entry {
        name: "pfs_fig7",
        about: "paper 001 Figure 7: a PFS adapting to a changed program over 20 executions",
        run: pfs::fig7,
    },
    Entry {
        name: "swap_fig2",
        about: "paper 004 Figure 2: the order providers run and their confidences",
        run: swap::fig2,
    },
    Entry {
        name: "swap_client_server",
        about: "paper 004 Figure 3: client-server microbenchmark over six mechanisms",
        run: swap::client_server,
    },
    Entry {
        name: "swap_multiserver",
        about: "paper 004 Figures 4 and 5: multi-server microbenchmark, T = 20 ms and 200 ms",
        run: swap::multiserver,
    },
    Entry {
        name: "tune_paper003",
        about: "paper 003 Figures 4 and 5: default vs PSO vs golden section, turnaround and evaluations",
        run: tuning::paper003,
    },
];
