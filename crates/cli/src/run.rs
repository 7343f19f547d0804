//! `schedlab run`: the daemon in the foreground, with a live table.

use std::io::{self, IsTerminal, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Args;
use schedlab_live::config::Config;
use schedlab_live::daemon::control::ControlSocket;
use schedlab_live::daemon::metrics::MetricsServer;
use schedlab_model::Ns;

use crate::bench::EnforcerName;
use crate::monitor::write_stats;

const EXAMPLES: &str = "\
Examples:
  # the built-in configuration, in the foreground; Ctrl-C restores everything
  sudo schedlab run

  # your rules; first see what it would do
  schedlab config --default > schedlab.toml   # then edit
  sudo schedlab run --config schedlab.toml --dry-run
  sudo schedlab run --config schedlab.toml

  # from another terminal
  sudo schedlab monitor
  sudo schedlab explain 1234";

/// Run the daemon: classify processes and act on what they do.
///
/// Each process gets a class: from the first configuration rule that matches it (comm,
/// exe, cmdline, cgroup, uid, parent) at its exec, else from the learned model once it
/// has been watched for a while. Per class, a CPU plan (fair share, weighted, isolate;
/// paper 000), a nice value and a policy are applied; processes joined by strong
/// dependencies share a CPU. A process blocked on a pipe, socket, SysV queue or
/// semaphore, lock or signal whose provider it outranks lends that provider its
/// priority until it wakes (provider boosting, paper 004). A program whose next CPU
/// burst is predicted to end just past the default slice gets a slice that long (PFS,
/// paper 001).
///
/// Every change is journaled in the store before it is applied and undone on Ctrl-C or
/// SIGTERM; `schedlab restore` undoes what a killed daemon left, and the next `run`
/// does that first. SIGHUP reloads the configuration file: a file that does not check
/// leaves the one in force running (the error is printed); one that does replaces it,
/// everything undone and decided anew under it. A process someone else renices, re-pins or re-policies is left to
/// them from then on. Kernel threads are never touched unless a rule names them.
///
/// In a terminal the foreground shows a live table and the latest decisions; otherwise
/// (and with --dry-run) each decision is printed as a line. `schedlab monitor` and
/// `schedlab explain` ask the running daemon through its control socket.
#[derive(Debug, Args)]
#[command(after_long_help = EXAMPLES)]
pub struct RunOpts {
    /// The configuration (TOML; `schedlab config --default` prints the built-in one,
    /// which is used without this option).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Print every decision without applying it.
    #[arg(long)]
    pub dry_run: bool,
    /// The store holding the journal and what was learned [default:
    /// /var/lib/schedlab/schedlab.db as root, else the XDG data directory].
    #[arg(long, value_name = "PATH")]
    pub store: Option<PathBuf>,
    /// The control socket [default: /run/schedlab.sock as root].
    #[arg(long, value_name = "PATH")]
    pub socket: Option<PathBuf>,
    /// Stop (and restore) after this long, e.g. 30s; runs until Ctrl-C without it.
    #[arg(long, value_name = "DURATION", value_parser = crate::args::duration)]
    pub duration: Option<Ns>,
    /// Print nothing but errors and the final summary.
    #[arg(long, short)]
    pub quiet: bool,
    /// Serve the counters `monitor` shows (managed processes, changes, boosts, the
    /// boost reaction-time histogram, lost events, the daemon's CPU) in the OpenMetrics
    /// text format at http://ADDR:PORT/metrics, for Prometheus and its kin. Off unless
    /// given; give a loopback address (127.0.0.1:9617) unless a management network
    /// should reach it.
    #[arg(long, value_name = "ADDR:PORT")]
    pub metrics: Option<std::net::SocketAddr>,
    /// What carries the decisions out. auto: schedlab's sched_ext scheduler where the
    /// kernel has sched_ext (6.12 on, CONFIG_SCHED_CLASS_EXT), no other scheduler is
    /// loaded, and the scheduler's last trial on this kernel (`schedlab bench suite
    /// --enforcer sched-ext`, kept in the store) ran every workload and lost none; else
    /// the system calls; it says which and why. sched-ext: the scheduler or nothing. syscalls: the scheduling system calls, journaled and undone at the end.
    /// If the kernel ends the scheduler while the daemon runs (a stall, an error), every
    /// task is back in the fair class and the daemon goes on with the system calls.
    #[arg(long, value_enum, default_value_t = EnforcerName::Auto)]
    pub enforcer: EnforcerName,
}

impl RunOpts {
    /// The options of a quiet daemon running `launch` (a benchmark's).
    pub fn quiet(launch: schedlab_live::daemon::launch::Launch) -> RunOpts {
        RunOpts {
            config: launch.config,
            dry_run: false,
            store: Some(launch.store),
            socket: Some(launch.socket),
            duration: None,
            quiet: true,
            metrics: None,
            enforcer: launch.enforcer.into(),
        }
    }
}

impl From<schedlab_live::daemon::Enforcer> for EnforcerName {
    fn from(e: schedlab_live::daemon::Enforcer) -> Self {
        match e {
            schedlab_live::daemon::Enforcer::Auto => Self::Auto,
            schedlab_live::daemon::Enforcer::SchedExt => Self::SchedExt,
            schedlab_live::daemon::Enforcer::Syscalls => Self::Syscalls,
        }
    }
}

impl From<EnforcerName> for schedlab_live::daemon::Enforcer {
    fn from(e: EnforcerName) -> Self {
        match e {
            EnforcerName::Auto => Self::Auto,
            EnforcerName::SchedExt => Self::SchedExt,
            EnforcerName::Syscalls => Self::Syscalls,
        }
    }
}

/// Set by SIGINT and SIGTERM, and by SIGHUP for the commands that do not reload.
pub(crate) static STOP: AtomicBool = AtomicBool::new(false);
/// Set by SIGHUP where it reloads (`run`).
static RELOAD: AtomicBool = AtomicBool::new(false);
/// Whether SIGHUP reloads (else it stops, as a terminal that closed should).
static HANGUP_RELOADS: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(sig: libc::c_int) {
    if sig == libc::SIGHUP && HANGUP_RELOADS.load(Ordering::Relaxed) {
        RELOAD.store(true, Ordering::Relaxed);
    } else {
        STOP.store(true, Ordering::Relaxed);
    }
}

/// SIGINT, SIGTERM and SIGHUP set [`STOP`]; blocking calls return with `EINTR` (no
/// `SA_RESTART`), so the command notices at once. No signal ends a command without its
/// restore.
pub(crate) fn install_signal_handlers() -> io::Result<()> {
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: a zeroed sigaction with a handler that only stores to atomics.
        let rc = unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as usize;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(sig, &sa, std::ptr::null_mut())
        };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

pub fn run(opts: &RunOpts) -> Result<()> {
    // A bad configuration is refused before anything is touched.
    let config = match &opts.config {
        Some(path) => Config::load(path)?,
        None => Config::builtin(),
    };
    let store_path = opts.store.clone().unwrap_or_else(schedlab_store::Store::default_path);
    let store = schedlab_store::Store::open(&store_path)?;
    let socket_path = opts.socket.clone().unwrap_or_else(schedlab_live::daemon::control::default_socket);
    let open_socket_error = || format!("cannot open the control socket {}", socket_path.display());
    ControlSocket::check_free(&socket_path).with_context(open_socket_error)?;
    install_signal_handlers().context("cannot install the signal handlers")?;
    HANGUP_RELOADS.store(true, Ordering::Relaxed);
    let mut enforcer = schedlab_live::daemon::Enforcer::from(opts.enforcer);
    let mut daemon = schedlab_live::daemon::Daemon::start(&store, config.clone(), opts.dry_run, enforcer)
        .context("cannot start the daemon")?;
    let mut config = config;
    let socket = match ControlSocket::bind(&socket_path) {
        Ok(s) => s,
        Err(e) => {
            daemon.shutdown()?;
            return Err(anyhow::Error::new(e).context(open_socket_error()));
        }
    };
    let table = !opts.quiet && !opts.dry_run && io::stdout().is_terminal();
    if !opts.quiet {
        eprintln!(
            "schedlab: running{}; decisions carried out by {}; control socket {}; Ctrl-C stops and restores",
            if opts.dry_run { " (dry run: nothing is changed)" } else { "" },
            daemon.stats().enforcer,
            socket_path.display()
        );
    }
    let mut recent: Vec<String> = Vec::new();
    let metrics = match opts.metrics {
        Some(address) => Some(
            MetricsServer::start(address)
                .with_context(|| format!("cannot serve metrics on {address} (--metrics)"))?,
        ),
        None => None,
    };
    if let (Some(m), false) = (&metrics, opts.quiet) {
        eprintln!("schedlab: metrics at http://{}/metrics", m.address());
    }
    let mut tick = |stats: &mut dyn FnMut() -> schedlab_live::daemon::stats::Stats,
                    decisions: Vec<String>| {
        // The statistics are taken once a second only when something shows them.
        let snapshot = (metrics.is_some() || table).then(&mut *stats);
        if let (Some(m), Some(s)) = (&metrics, &snapshot) {
            m.publish(schedlab_live::daemon::metrics::render(s));
        }
        if opts.quiet {
            return;
        }
        let mut out = io::stdout().lock();
        if let (true, Some(s)) = (table, &snapshot) {
            recent.extend(decisions);
            let keep = recent.len().saturating_sub(8);
            recent.drain(..keep);
            let _ = write!(out, "\x1b[H\x1b[2J");
            let _ = write_stats(&mut out, s, 20);
            let _ = writeln!(out, "\nlatest decisions:");
            for d in &recent {
                let _ = writeln!(out, "  {d}");
            }
        } else {
            for d in decisions {
                let _ = writeln!(out, "{d}");
            }
        }
        let _ = out.flush();
    };
    let deadline = opts.duration.map(|d| std::time::Instant::now() + Duration::from_nanos(d));
    let result = loop {
        let left = deadline.map(|d| d.saturating_duration_since(std::time::Instant::now()));
        let stop = || STOP.load(Ordering::Relaxed) || RELOAD.load(Ordering::Relaxed);
        let ran = daemon.run(&socket, &stop, left, &mut tick);
        if let Err(schedlab_live::daemon::DaemonError::SchedExtExited(exit)) = &ran {
            // Every task is back in the fair class; the system calls take over.
            eprintln!(
                "schedlab: the kernel ended the sched_ext scheduler: {exit}; going on with the system calls"
            );
            let restore =
                daemon.shutdown().context("restoring the machine failed; run `schedlab restore`")?;
            drop(daemon);
            enforcer = schedlab_live::daemon::Enforcer::Syscalls;
            daemon = schedlab_live::daemon::Daemon::start(&store, config.clone(), opts.dry_run, enforcer)
                .with_context(|| {
                    format!(
                        "cannot start the daemon again after the scheduler's end ({})",
                        restore.describe()
                    )
                })?;
            continue;
        }
        if ran.is_err() || !RELOAD.swap(false, Ordering::Relaxed) || STOP.load(Ordering::Relaxed) {
            break ran;
        }
        let Some(path) = &opts.config else {
            eprintln!("schedlab: SIGHUP: no configuration file to reload (the built-in one is in force)");
            continue;
        };
        match Config::load(path) {
            Err(e) => eprintln!("schedlab: SIGHUP: {e:#}; the configuration in force stays"),
            Ok(loaded) => {
                let restore =
                    daemon.shutdown().context("restoring the machine failed; run `schedlab restore`")?;
                eprintln!("schedlab: SIGHUP: reloaded {}; {}", path.display(), restore.describe());
                drop(daemon);
                config = loaded;
                daemon = schedlab_live::daemon::Daemon::start(&store, config.clone(), opts.dry_run, enforcer)
                    .context("cannot start the daemon again after a reload")?;
            }
        }
    };
    let summary = daemon.stats();
    let restore = daemon.shutdown().context("restoring the machine failed; run `schedlab restore`")?;
    drop(socket);
    eprintln!(
        "schedlab: stopped after {:.1} s: {} change(s), {} boost(s) (reaction p50 {:.0} µs, p99 {:.0} µs); \
         {}",
        summary.uptime_s,
        summary.changes,
        summary.boosts_total,
        summary.boost_reaction_us.p50,
        summary.boost_reaction_us.p99,
        restore.describe()
    );
    for (id, e) in &restore.abandoned {
        eprintln!("schedlab: journal entry {} could never be undone, closed: {e}", id.0);
    }
    if !restore.failed.is_empty() {
        anyhow::bail!(
            "{} change(s) could not be undone; they stay in the journal for `schedlab restore`",
            restore.failed.len()
        );
    }
    result.context("the daemon stopped on an error (everything it changed was restored)")
}
