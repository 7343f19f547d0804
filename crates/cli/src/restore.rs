//! `schedlab restore`: undo every change a daemon that was killed left behind.

use std::io::{self, Write};
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;
use schedlab_store::Store;

/// Undo every change the journal still lists (cpuset cgroup first, then affinity, nice,
/// policy and slice, newest first), as a stopped daemon would have: what a killed
/// `schedlab run` left behind.
///
/// An old value is written back only to the threads that still have the value
/// schedlab set: one someone changed since keeps its new value. A process that has
/// exited, or whose pid now belongs to another process (told apart by its start time),
/// is left alone and its entries closed; so are the entries of an earlier boot. An entry
/// that can never be undone (a CPU gone offline, a cgroup removed, a value that is not
/// one) is closed with a warning. One that failed for a passing reason stays in the
/// journal for the next try, and the command fails saying which.
#[derive(Debug, Args)]
#[command(after_long_help = "Examples:\n  sudo schedlab restore\n  \
    # close every entry without writing anything back (after checking the processes)\n  \
    sudo schedlab restore --discard")]
pub struct RestoreOpts {
    /// The store holding the journal [default: /var/lib/schedlab/schedlab.db as root,
    /// else the XDG data directory].
    #[arg(long, value_name = "PATH")]
    store: Option<PathBuf>,
    /// Close every pending entry without writing anything back: the processes keep
    /// what they have now.
    #[arg(long)]
    discard: bool,
}

#[cfg(target_os = "linux")]
pub fn run(opts: &RestoreOpts) -> Result<()> {
    let path = opts.store.clone().unwrap_or_else(Store::default_path);
    let store = Store::open(&path)?;
    let mut out = io::stdout().lock();
    if opts.discard {
        let _lock = store.lock()?;
        let n = schedlab_live::actuator::Actuator::new(&store)
            .discard_all()
            .with_context(|| format!("cannot close the journal in {}", path.display()))?;
        writeln!(
            out,
            "closed {n} journal entr{} without writing anything back",
            if n == 1 { "y" } else { "ies" }
        )?;
        return Ok(());
    }
    let (report, groups) = schedlab_live::actuator::restore_left_behind(&store)
        .with_context(|| format!("cannot restore from the journal in {}", path.display()))?;
    writeln!(out, "{}", report.describe())?;
    for (id, e) in &report.abandoned {
        writeln!(out, "  warning: journal entry {} could never be undone, closed: {e}", id.0)?;
    }
    match groups {
        Ok(0) => {}
        Ok(n) => writeln!(out, "removed {n} empty cpuset cgroup(s) a daemon had made")?,
        Err(e) => writeln!(out, "cannot look for leftover cpuset cgroups: {e}")?,
    }
    if !report.failed.is_empty() {
        for (id, e) in &report.failed {
            writeln!(out, "  journal entry {}: {e}", id.0)?;
        }
        anyhow::bail!("{} change(s) could not be undone; they stay in the journal", report.failed.len());
    }
    Ok(())
}

#[cfg(not(target_os = "linux"))]
pub fn run(_opts: &RestoreOpts) -> Result<()> {
    anyhow::bail!("schedlab restore needs Linux")
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use schedlab_live::actuator::Actuator;
    use schedlab_live::process::ProcessHandle;

    fn nice_of(pid: u32) -> i64 {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
        let rest = stat.rsplit_once(')').unwrap().1;
        rest.split_whitespace().nth(16).unwrap().parse().unwrap()
    }

    #[test]
    fn restore_undoes_what_a_killed_daemon_left() {
        let path = std::env::temp_dir().join(format!("schedlab-restore-{}.db", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let mut child = std::process::Command::new("sleep").arg("30").spawn().unwrap();
        let pid = child.id();
        let before = nice_of(pid);
        {
            let store = Store::open(&path).unwrap();
            let mut a = Actuator::new(&store);
            a.set_nice(&ProcessHandle::open(schedlab_model::Pid(pid)).unwrap(), 12).unwrap();
            assert_eq!(nice_of(pid), 12);
            // A daemon killed with SIGKILL restores nothing.
            std::mem::forget(a);
        }
        assert_eq!(nice_of(pid), 12);
        run(&RestoreOpts { store: Some(path.clone()), discard: false }).unwrap();
        assert_eq!(nice_of(pid), before);
        // Nothing is left to undo.
        assert!(Store::open(&path).unwrap().journal_pending().unwrap().is_empty());
        let _ = child.kill();
        let _ = child.wait();
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn discard_closes_the_journal_and_leaves_the_processes() {
        let path = std::env::temp_dir().join(format!("schedlab-discard-{}.db", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let mut child = std::process::Command::new("sleep").arg("30").spawn().unwrap();
        let pid = child.id();
        {
            let store = Store::open(&path).unwrap();
            let mut a = Actuator::new(&store);
            a.set_nice(&ProcessHandle::open(schedlab_model::Pid(pid)).unwrap(), 12).unwrap();
            std::mem::forget(a);
        }
        run(&RestoreOpts { store: Some(path.clone()), discard: true }).unwrap();
        assert_eq!(nice_of(pid), 12, "nothing written back");
        assert!(Store::open(&path).unwrap().journal_pending().unwrap().is_empty());
        let _ = child.kill();
        let _ = child.wait();
        std::fs::remove_file(&path).unwrap();
    }
}
