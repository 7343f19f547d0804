//! The actuator: changes the affinity, nice value and scheduling policy of live processes,
//! every change journaled in the store **before** it is applied and undone by
//! [`Actuator::restore_all`] (also on drop, and at the next start after a crash, since
//! `restore_all` undoes every pending entry of the journal, not only this run's).
//!
//! A change is made to every thread of the process (`/proc/PID/task/*`): affinity, nice
//! and policy are all per thread on Linux. The journal keeps one old value per process,
//! read from its main thread, and restore writes it to every thread.
//!
//! Processes are addressed by [`ProcessHandle`] (pidfd plus start time): a process that
//! is no longer the one named (exited, pid reused) is never touched; its entries are only
//! marked undone. A user's own change (renice, taskset, chrt) wins:
//! [`Actuator::changed_externally`] tells the caller, who stops managing the process and
//! calls [`Actuator::release`] so the user's value is not overwritten by a restore.

use std::collections::HashMap;
use std::io;
use std::time::{SystemTime, UNIX_EPOCH};

use schedlab_model::Pid;
use schedlab_store::{Change, JournalEntry, JournalId, ProcessKey, Setting, Store};

use crate::process::ProcessHandle;
use crate::settings::{CpuSet, Policy, PolicyValue, Value};

/// What can go wrong while changing or restoring a process.
#[derive(Debug, thiserror::Error)]
pub enum ActuatorError {
    /// The journal could not be written or read.
    #[error("journal: {0}")]
    Store(#[from] schedlab_store::Error),
    /// The pid no longer belongs to the process the handle was opened for (it exited,
    /// or the pid was reused): nothing was changed.
    #[error("process {} (start time {}) is gone or its pid was reused; not touched", .0.pid.0, .0.start_time)]
    NotSame(ProcessKey),
    /// A kernel call failed.
    #[error("{what} of process {pid}: {source}")]
    Kernel {
        /// What was being done ("set affinity", "read nice", …).
        what: String,
        /// The process.
        pid: u32,
        /// The kernel's error.
        source: io::Error,
    },
}

/// Shorthand for this module's results.
pub type Result<T, E = ActuatorError> = std::result::Result<T, E>;

/// What [`Actuator::restore_all`] did.
#[derive(Debug, Default)]
pub struct RestoreReport {
    /// Entries whose old value was written back.
    pub restored: usize,
    /// Entries of processes that are gone or whose pid was reused: marked undone without
    /// touching anything.
    pub skipped: usize,
    /// Entries whose old value could not be written back; they stay pending, so a later
    /// `restore_all` tries again.
    pub failed: Vec<(JournalId, ActuatorError)>,
}

/// Changes live processes, journaling every change before applying it.
#[derive(Debug)]
pub struct Actuator<'s> {
    store: &'s Store,
    /// The value read back after schedlab's last change of each (process, setting):
    /// what [`Actuator::changed_externally`] compares against.
    last_set: HashMap<(ProcessKey, Setting), Value>,
    /// This run's pending entries of each (process, setting), oldest first, with the
    /// old value each would write back: what [`Actuator::revert`] undoes.
    stacks: HashMap<(ProcessKey, Setting), Vec<(JournalId, Value)>>,
    /// Entries applied but not yet marked so: marked by [`Actuator::settle`], after the
    /// caller's urgent work (a boost is in force once its system call returns; a journal
    /// commit more before the reaction is over would only delay it).
    unmarked: Vec<JournalId>,
}

impl<'s> Actuator<'s> {
    /// An actuator journaling in `store`.
    pub fn new(store: &'s Store) -> Actuator<'s> {
        Actuator { store, last_set: HashMap::new(), stacks: HashMap::new(), unmarked: Vec::new() }
    }

    /// The store the journal is kept in.
    pub fn store(&self) -> &'s Store {
        self.store
    }

    /// Sets the CPU affinity of every thread of the process.
    pub fn set_affinity(&mut self, process: &ProcessHandle, cpus: &CpuSet) -> Result<()> {
        self.change(process, Value::Affinity(cpus.clone()))
    }

    /// Moves the process into cgroup `path` of the cpuset hierarchy (`/schedlab/batch`;
    /// see [`crate::cgroup`]).
    pub fn set_cgroup(&mut self, process: &ProcessHandle, path: &str) -> Result<()> {
        self.change(process, Value::Cgroup(path.to_string()))
    }

    /// Sets the nice value (-20–19) of every thread of the process.
    pub fn set_nice(&mut self, process: &ProcessHandle, nice: i32) -> Result<()> {
        if !(-20..=19).contains(&nice) {
            return Err(kernel_err(
                "set nice",
                process.pid(),
                io::Error::new(io::ErrorKind::InvalidInput, format!("nice {nice} is outside -20..=19")),
            ));
        }
        self.change(process, Value::Nice(nice))
    }

    /// Sets the scheduling policy of every thread of the process with `sched_setattr`:
    /// `rt_priority` 1–99 for FIFO/RR (0 otherwise); for the fair policies
    /// `sched_runtime_ns` is the EEVDF per-task slice, clamped to 100 µs–100 ms, 0 for
    /// the default. The threads' nice values are kept.
    pub fn set_policy(
        &mut self,
        process: &ProcessHandle,
        policy: Policy,
        rt_priority: u32,
        sched_runtime_ns: u64,
    ) -> Result<()> {
        let value = PolicyValue::new(policy, rt_priority, sched_runtime_ns)
            .map_err(|e| kernel_err("set policy", process.pid(), e))?;
        self.change(process, Value::Policy(value))
    }

    /// Marks the changes made since the last call applied in the journal. Until then
    /// they are pending as changes maybe not applied, which `restore` undoes the same.
    pub fn settle(&mut self) -> Result<()> {
        self.store.journal_mark_applied_all(&self.unmarked)?;
        self.unmarked.clear();
        Ok(())
    }

    /// Undoes this run's latest change of `what` on the process (a boost ending): the
    /// old value is written back and the entry marked undone, so an earlier change of
    /// the same setting (the class's nice under a boost) is what the process has again.
    /// Returns false if there was no such change. A process that is gone or not the same
    /// is not touched; its entry is only marked undone.
    pub fn revert(&mut self, process: &ProcessHandle, what: Setting) -> Result<bool> {
        let key = (process.key(), what);
        let Some((id, old)) = self.stacks.get_mut(&key).and_then(Vec::pop) else { return Ok(false) };
        if process.is_same() {
            match apply_to_threads(process, &old) {
                Ok(()) => {}
                Err(_) if !process.is_same() => {}
                Err(e) => return Err(kernel_err(&format!("restore {}", what.as_str()), process.pid(), e)),
            }
        }
        self.store.journal_mark_undone(id)?;
        match self.stacks.get(&key).is_some_and(|v| !v.is_empty()) {
            true => {
                if let Ok(now) = Value::read(what, process.pid()) {
                    self.last_set.insert(key, now);
                }
            }
            false => {
                self.stacks.remove(&key);
                self.last_set.remove(&key);
            }
        }
        Ok(true)
    }

    /// Takes over a child that inherited settings schedlab changed on its parent (the
    /// kernel copies affinity, nice and policy at fork): for each setting with a pending
    /// change on `parent`, the child gets a journal entry whose old value is the
    /// parent's original one, so a restore returns the child to what it would have had
    /// without schedlab. Returns how many settings were taken over.
    pub fn adopt(&mut self, child: &ProcessHandle, parent: ProcessKey) -> Result<usize> {
        let mut n = 0;
        for what in Setting::ALL {
            let Some(original) =
                self.stacks.get(&(parent, what)).and_then(|v| v.first()).map(|(_, v)| v.clone())
            else {
                continue;
            };
            let Ok(now) = Value::read(what, child.pid()) else { continue };
            if !child.is_same() {
                return Err(ActuatorError::NotSame(child.key()));
            }
            let id = self.store.journal_insert(&Change {
                time_unix_ns: now_unix_ns(),
                target: child.key(),
                what,
                old_value: original.to_string(),
                new_value: now.to_string(),
            })?;
            self.unmarked.push(id);
            self.stacks.entry((child.key(), what)).or_default().push((id, original));
            self.last_set.insert((child.key(), what), now);
            n += 1;
        }
        Ok(n)
    }

    /// Forgets a process that exited: its pending entries are marked undone (there is
    /// nothing left to restore).
    pub fn forget(&mut self, key: ProcessKey) -> Result<()> {
        for what in Setting::ALL {
            for (id, _) in self.stacks.remove(&(key, what)).unwrap_or_default() {
                self.store.journal_mark_undone(id)?;
            }
            self.last_set.remove(&(key, what));
        }
        Ok(())
    }

    /// Whether a setting schedlab changed on this process now differs from what
    /// schedlab last set (a user's renice, taskset or chrt: the user wins, and the caller
    /// stops managing the process), or can no longer be read (the process is gone or not
    /// the same: the caller stops managing it too). False for a process schedlab never
    /// changed.
    pub fn changed_externally(&self, process: &ProcessHandle) -> bool {
        let key = process.key();
        let mut ours = self.last_set.iter().filter(|((k, _), _)| *k == key).peekable();
        if ours.peek().is_none() {
            return false;
        }
        if !process.is_same() {
            return true;
        }
        ours.any(|((_, what), set)| Value::read(*what, process.pid()).ok().as_ref() != Some(set))
    }

    /// Stops managing the process: its pending journal entries are marked undone without
    /// writing the old values back, so that a user's own change stays.
    pub fn release(&mut self, process: &ProcessHandle) -> Result<()> {
        let key = process.key();
        for entry in self.store.journal_pending()? {
            if entry.change.target == key {
                self.store.journal_mark_undone(entry.id)?;
            }
        }
        self.last_set.retain(|(k, _), _| *k != key);
        self.stacks.retain(|(k, _), _| *k != key);
        Ok(())
    }

    /// Undoes every pending entry of the journal, newest first (cgroup moves before
    /// everything else), so that a setting changed twice ends at its original value: the old value is written to every
    /// thread of the process if it is still the same process (pidfd and start time);
    /// an entry of a process that is gone or whose pid was reused is only marked undone.
    /// Each entry restored or skipped is marked undone; one that fails stays pending.
    pub fn restore_all(&mut self) -> Result<RestoreReport> {
        let mut report = RestoreReport::default();
        let mut pending = self.store.journal_pending()?;
        // Cgroups first: a process still in a cpuset could not take back an affinity
        // outside it, and moving it out resets its affinity (cgroup v1), which the
        // affinity entries then put right.
        pending.sort_by_key(|e| e.change.what != Setting::Cgroup);
        for entry in pending {
            match restore_one(&entry) {
                Ok(true) => report.restored += 1,
                Ok(false) => report.skipped += 1,
                Err(e) => {
                    report.failed.push((entry.id, e));
                    continue;
                }
            }
            self.store.journal_mark_undone(entry.id)?;
            self.last_set.remove(&(entry.change.target, entry.change.what));
            self.stacks.remove(&(entry.change.target, entry.change.what));
        }
        Ok(report)
    }

    /// Journals, then applies, one change to every thread of the process.
    ///
    /// If applying fails, the old value is put back on every thread (best effort) and the
    /// entry stays pending and not applied, for `restore_all` to close.
    fn change(&mut self, process: &ProcessHandle, new: Value) -> Result<()> {
        let what = new.setting();
        let verb = format!("set {}", what.as_str());
        if !process.is_same() {
            return Err(ActuatorError::NotSame(process.key()));
        }
        let pid = process.pid();
        let old =
            Value::read(what, pid).map_err(|e| kernel_err(&format!("read {}", what.as_str()), pid, e))?;
        let id = self.store.journal_insert(&Change {
            time_unix_ns: now_unix_ns(),
            target: process.key(),
            what,
            old_value: old.to_string(),
            new_value: new.to_string(),
        })?;
        let applied = apply_to_threads(process, &new);
        if let Err(e) = applied {
            let _ = apply_to_threads(process, &old);
            return Err(kernel_err(&verb, pid, e));
        }
        self.unmarked.push(id);
        self.stacks.entry((process.key(), what)).or_default().push((id, old));
        let now =
            Value::read(what, pid).map_err(|e| kernel_err(&format!("read {}", what.as_str()), pid, e))?;
        self.last_set.insert((process.key(), what), now);
        Ok(())
    }
}

impl Drop for Actuator<'_> {
    /// Restores every pending change; errors cannot be reported here and are left in the
    /// journal for `schedlab restore`.
    fn drop(&mut self) {
        let _ = self.restore_all();
    }
}

/// Writes back the old value of one journal entry: `Ok(true)` if written, `Ok(false)` if
/// the process is gone or not the same one.
fn restore_one(entry: &JournalEntry) -> Result<bool> {
    let c = &entry.change;
    let process = match ProcessHandle::for_key(c.target) {
        Ok(p) => p,
        Err(e) if e.raw_os_error() == Some(libc::ESRCH) => return Ok(false),
        Err(e) => return Err(kernel_err("open pidfd", c.target.pid, e)),
    };
    if !process.is_same() {
        return Ok(false);
    }
    let old = Value::parse(c.what, &c.old_value)
        .map_err(|e| kernel_err(&format!("restore {}", c.what.as_str()), c.target.pid, e))?;
    match apply_to_threads(&process, &old) {
        Ok(()) => Ok(true),
        Err(_) if !process.is_same() => Ok(false),
        Err(e) => Err(kernel_err(&format!("restore {}", c.what.as_str()), c.target.pid, e)),
    }
}

/// Applies `value` to every thread of the process; a thread that exited meanwhile
/// (`ESRCH`) is skipped. The process is checked to be the same after the threads are
/// listed, so the tids listed are its own.
fn apply_to_threads(process: &ProcessHandle, value: &Value) -> io::Result<()> {
    let tids = process.threads()?;
    if !process.is_same() {
        return Err(io::Error::from_raw_os_error(libc::ESRCH));
    }
    for tid in tids {
        match value.apply(tid) {
            Err(e) if e.raw_os_error() == Some(libc::ESRCH) => {}
            other => other?,
        }
    }
    Ok(())
}

fn kernel_err(what: &str, pid: Pid, source: io::Error) -> ActuatorError {
    ActuatorError::Kernel { what: what.to_owned(), pid: pid.0, source }
}

fn now_unix_ns() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos() as i64).unwrap_or(0)
}
