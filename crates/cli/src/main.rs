//! The `schedlab` command: one subcommand per job, over the simulator and the live
//! machine. This file holds the top-level options and the dispatch; each
//! subcommand lives in the module named after it.

mod args;
mod bench;
mod bench_overhead;
mod bench_suite;
mod classify;
mod config;
mod csv;
#[cfg(target_os = "linux")]
mod ext;
mod human;
mod learn;
#[cfg(target_os = "linux")]
mod monitor;
mod observe;
#[cfg(target_os = "linux")]
mod progress;
mod provenance;
mod report;
mod reproduce;
mod restore;
#[cfg(target_os = "linux")]
mod run;
mod simulate;
mod table;
mod tunables;
mod tune;
#[cfg(target_os = "linux")]
mod tune_live;
mod validate;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// schedlab: behavior-aware CPU scheduling for Linux, and a simulator of the kernel's
/// scheduling classes.
///
/// schedlab watches how processes behave (system calls, run bursts, whom they wait
/// for), learns from it, and uses it to schedule them better. The simulator is a
/// deterministic discrete-event model of a multi-CPU Linux scheduler (stop, real-time,
/// fair and idle classes; CFS, EEVDF or classic time sharing) with the kernel's own
/// weights and tunables, that emits the same events as the live observer.
#[derive(Debug, Parser)]
#[command(name = "schedlab", version, propagate_version = true)]
#[command(after_long_help = "Run 'schedlab <COMMAND> --help' for a command's manual and examples.")]
struct Opts {
    #[command(subcommand)]
    command: Command,
}

/// The jobs schedlab does.
#[derive(Debug, Subcommand)]
enum Command {
    Simulate(simulate::SimulateOpts),
    Reproduce(reproduce::ReproduceOpts),
    Observe(observe::ObserveOpts),
    Learn(learn::LearnOpts),
    Classify(classify::ClassifyOpts),
    Config(config::ConfigOpts),
    #[cfg(target_os = "linux")]
    Run(run::RunOpts),
    #[cfg(target_os = "linux")]
    Monitor(monitor::MonitorOpts),
    #[cfg(target_os = "linux")]
    Explain(monitor::ExplainOpts),
    #[cfg(target_os = "linux")]
    Ext(ext::ExtOpts),
    Restore(restore::RestoreOpts),
    Bench(bench::BenchOpts),
    Tune(tune::TuneOpts),
    Validate(validate::ValidateOpts),
}

fn main() -> ExitCode {
    let opts = Opts::parse();
    let result = match opts.command {
        Command::Simulate(o) => simulate::run(&o),
        Command::Reproduce(o) => reproduce::run(&o),
        Command::Observe(o) => observe::run(&o),
        Command::Learn(o) => learn::run(&o),
        Command::Classify(o) => classify::run(&o),
        Command::Config(o) => config::run(&o),
        #[cfg(target_os = "linux")]
        Command::Run(o) => run::run(&o),
        #[cfg(target_os = "linux")]
        Command::Monitor(o) => monitor::run(&o),
        #[cfg(target_os = "linux")]
        Command::Explain(o) => monitor::explain(&o),
        #[cfg(target_os = "linux")]
        Command::Ext(o) => ext::run(&o),
        Command::Restore(o) => restore::run(&o),
        Command::Bench(o) => bench::run(&o),
        Command::Tune(o) => tune::run(&o),
        Command::Validate(o) => validate::run(&o),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // The reader of our output went away (`schedlab ... | head`): nothing to say.
        Err(err) if is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            eprint!("{}", error_report(&err));
            ExitCode::FAILURE
        }
    }
}

/// Whether writing our output failed because its reader closed the pipe.
fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|c| {
        c.downcast_ref::<std::io::Error>().is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// The error and its causes, one per line; a cause that the message before it already
/// quotes is left out.
fn error_report(err: &anyhow::Error) -> String {
    let mut text = format!("schedlab: error: {err}\n");
    let mut previous = err.to_string();
    for cause in err.chain().skip(1) {
        let cause = cause.to_string();
        if !previous.contains(&cause) {
            text.push_str(&format!("  caused by: {cause}\n"));
        }
        previous = cause;
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_definition_is_consistent() {
        Opts::command().debug_assert();
    }

    /// Parses a command line (without the program name) as `schedlab` would.
    pub(crate) fn parse(args: &[&str]) -> Result<Opts, clap::Error> {
        Opts::try_parse_from(std::iter::once("schedlab").chain(args.iter().copied()))
    }

    /// Parses a `schedlab simulate` command line (the arguments after `simulate`).
    pub(crate) fn parse_simulate(args: &[&str]) -> Result<simulate::SimulateOpts, clap::Error> {
        let mut all = vec!["simulate"];
        all.extend_from_slice(args);
        parse(&all).map(|o| match o.command {
            Command::Simulate(s) => s,
            other => panic!("parsed as {other:?}"),
        })
    }

    #[test]
    fn cpus_have_no_limit_but_zero_is_refused() {
        assert_eq!(parse_simulate(&["--cpus", "1024"]).unwrap().cpus, Some(1024));
        for args in [&["simulate", "--cpus", "0"][..], &["tune", "--cpus", "0"], &["validate", "--cpus", "0"]]
        {
            let e = parse(args).unwrap_err().to_string();
            assert!(e.contains("--cpus"), "{args:?}: {e}");
        }
    }

    #[test]
    fn a_topology_replaces_cpus() {
        let o = parse_simulate(&["--topology", "2x16x2"]).unwrap();
        assert_eq!(o.topology.map(|t| t.cpus()), Some(64));
        for args in [
            &["simulate", "--cpus", "4", "--topology", "1x2x2"][..],
            &["tune", "--cpus", "4", "--topology", "1x2x2"],
        ] {
            let e = parse(args).unwrap_err().to_string();
            assert!(e.contains("cannot be used with"), "{args:?}: {e}");
        }
        let e = parse(&["simulate", "--topology", "2x0x2"]).unwrap_err().to_string();
        assert!(e.contains("NODESxCORESxTHREADS"), "{e}");
    }

    #[test]
    fn reproduce_rejects_unknown_experiments_before_running() {
        let Command::Reproduce(o) = parse(&["reproduce", "--only", "nope"]).unwrap().command else {
            panic!("not reproduce")
        };
        let e = reproduce::run(&o).unwrap_err().to_string();
        assert!(e.contains("unknown experiment 'nope'") && e.contains("pfs_fig1"), "{e}");
    }

    #[test]
    fn simulate_with_pfs_learns_into_its_store_and_reuses_it() {
        let path = std::env::temp_dir().join(format!("schedlab-cli-pfs-{}.json", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let p = path.to_str().unwrap();
        let opts = parse_simulate(&["mixed:procs=2", "--fair", "timeshare", "--pfs", p, "--json"]).unwrap();
        simulate::run(&opts).unwrap();
        let store = schedlab_behavior::pfs::PfsStore::load(&path).unwrap();
        let pfs = store.get("/sim/bin/mixed").expect("learned at exit");
        assert!(pfs.bursts().count() > 100, "one burst per block of the copy");
        simulate::run(&opts).unwrap();
        assert_eq!(schedlab_behavior::pfs::PfsStore::load(&path).unwrap().programs.len(), 1);
        std::fs::remove_file(&path).unwrap();
        let bad = parse_simulate(&["mixed", "--pfs", p, "--pfs-tm", "1500us"]).unwrap();
        assert!(simulate::run(&bad).unwrap_err().to_string().contains("multiple of the timeslot"));
    }

    #[test]
    fn errors_list_their_causes_once() {
        let io = std::io::Error::other("disk full");
        let err = anyhow::Error::new(io).context("cannot write x: disk full").context("saving failed");
        assert_eq!(
            error_report(&err),
            "schedlab: error: saving failed\n  caused by: cannot write x: disk full\n"
        );
    }

    #[test]
    fn a_subcommand_is_required() {
        let err = parse(&[]).unwrap_err();
        assert!(err.to_string().contains("simulate"), "{err}");
        assert!(parse(&["frobnicate"]).is_err());
    }
}
