//! The actuator: changes the affinity, nice value and scheduling policy of live processes,
//! every change journaled in the store **before** it is applied and undone by
//! [`Actuator::restore_all`] (also on drop, and at the next start after a crash, since
//! `restore_all` undoes every pending entry of the journal, not only this run's).
//!
//! The rules, each the answer to a way a change could outlive its reason:
//!
//! - **Per thread.** Affinity, nice and policy are per thread on Linux. A change is made
//!   to the main thread and to every thread that has what the main thread has (the old
//!   value the journal records); a thread that carries a value of its own (PipeWire's
//!   or JACK's real-time audio thread, a worker pinned to a CPU) is left alone.
//! - **Compare before restore.** Undoing a change writes the old value back only to the
//!   threads that still have the value schedlab set (read back after setting it); a
//!   thread whose value someone changed since keeps it. After a crash, a restore thus
//!   never overwrites a user's later renice, taskset or chrt.
//! - **Each change is undone by its own id.** Changes of one setting of a process stack
//!   (a class's nice, then a boost's). Undoing the top one writes its old value back;
//!   undoing one below (a boost that ends after a class change made during it) writes
//!   nothing and hands its old value to the change above it, so that undoing that one
//!   later gives the process what it had before both.
//! - **Real time bounded by the kernel.** A real-time policy schedlab gives (a class's,
//!   a boost's) comes with an `RLIMIT_RTTIME` soft limit
//!   ([`crate::settings::RTTIME_BOUND_US`]) unless the process has one as tight: a
//!   thread that runs that long without blocking gets `SIGXCPU` from the kernel even if
//!   the daemon is dead or stalled. Journaled and restored
//!   like any setting.
//! - **Raises are not inherited.** A raise ([`Actuator::raise_nice`],
//!   [`Actuator::raise_policy`]: a boost) carries `SCHED_FLAG_RESET_ON_FORK`: a child
//!   the raised process forks starts at `SCHED_OTHER`, and at nice 0 if the nice is
//!   negative, as the kernel's own priority inheritance never passes to a child.
//! - **One boot.** Every entry records the boot it was made in; an entry of another
//!   boot names processes, threads and CPUs that are no more, and is closed untouched.
//!   An entry that cannot be undone for good (a CPU offline, a cgroup gone, a value the
//!   journal holds that is not one) is closed with a warning ([`RestoreReport::abandoned`]);
//!   only a passing failure (`EAGAIN`, `EBUSY`, `EINTR`, `ENOMEM`) keeps it pending.
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

impl ActuatorError {
    /// Whether trying again later may succeed: only a kernel call that failed for a
    /// passing reason (`EAGAIN`, `EBUSY`, `EINTR`, `ENOMEM`) or the journal itself.
    fn is_passing(&self) -> bool {
        match self {
            ActuatorError::Store(_) => true,
            ActuatorError::NotSame(_) => false,
            ActuatorError::Kernel { source, .. } => {
                matches!(source.raw_os_error(), Some(libc::EAGAIN | libc::EBUSY | libc::EINTR | libc::ENOMEM))
            }
        }
    }
}

/// Shorthand for this module's results.
pub type Result<T, E = ActuatorError> = std::result::Result<T, E>;

/// What [`Actuator::restore_all`] did.
#[derive(Debug, Default)]
pub struct RestoreReport {
    /// Entries whose old value was written back (to at least one thread).
    pub restored: usize,
    /// Entries of which no thread has the value schedlab set any more: someone changed
    /// it since (and keeps it), or it was never applied. Closed, nothing written.
    pub kept: usize,
    /// Entries of processes that are gone or whose pid was reused: closed without
    /// touching anything.
    pub skipped: usize,
    /// Entries of another boot: closed without touching anything.
    pub other_boot: usize,
    /// Entries that can never be undone (a CPU offline, a cgroup gone, a journal value
    /// that is not one): closed, with why, for a warning.
    pub abandoned: Vec<(JournalId, ActuatorError)>,
    /// Entries whose old value could not be written back for a passing reason; they
    /// stay pending, so a later `restore_all` tries again.
    pub failed: Vec<(JournalId, ActuatorError)>,
}

impl RestoreReport {
    /// In words: `restored 3 change(s); 1 kept a value set since; 2 of processes gone`
    /// (the parts that are not zero after the first).
    pub fn describe(&self) -> String {
        let mut text = format!("restored {} change(s)", self.restored);
        for (n, what) in [
            (self.kept, "kept a value set since"),
            (self.skipped, "of processes gone"),
            (self.other_boot, "of an earlier boot"),
            (self.abandoned.len(), "could never be undone (closed)"),
            (self.failed.len(), "failed for now (kept for the next restore)"),
        ] {
            if n > 0 {
                text.push_str(&format!("; {n} {what}"));
            }
        }
        text
    }
}

/// One of this run's pending changes of a (process, setting).
#[derive(Clone, Debug)]
struct Made {
    id: JournalId,
    /// What it writes back.
    old: Value,
    /// What it set, as read back: what a thread must still have to be written back.
    new: Value,
}

/// Changes live processes, journaling every change before applying it.
#[derive(Debug)]
pub struct Actuator<'s> {
    store: &'s Store,
    /// This run's pending changes of each (process, setting), oldest first: what
    /// [`Actuator::revert`] undoes and [`Actuator::changed_externally`] compares.
    stacks: HashMap<(ProcessKey, Setting), Vec<Made>>,
    /// Entries applied but not yet marked so: marked by [`Actuator::settle`], after the
    /// caller's urgent work (a boost is in force once its system call returns; a journal
    /// commit more before the reaction is over would only delay it).
    unmarked: Vec<JournalId>,
    /// Entries of processes that exited, not yet marked undone: marked by
    /// [`Actuator::settle`] in the same transaction. Until then they are pending, and a
    /// restore finds their process gone and closes them the same.
    exited: Vec<JournalId>,
}

impl<'s> Actuator<'s> {
    /// An actuator journaling in `store`.
    pub fn new(store: &'s Store) -> Actuator<'s> {
        Actuator { store, stacks: HashMap::new(), unmarked: Vec::new(), exited: Vec::new() }
    }

    /// The store the journal is kept in.
    pub fn store(&self) -> &'s Store {
        self.store
    }

    /// Sets the CPU affinity of the process's threads.
    pub fn set_affinity(&mut self, process: &ProcessHandle, cpus: &CpuSet) -> Result<JournalId> {
        self.change(process, Value::Affinity(cpus.clone()))
    }

    /// Moves the process into cgroup `path` of the cpuset hierarchy (`/schedlab/batch`;
    /// see [`crate::cgroup`]).
    pub fn set_cgroup(&mut self, process: &ProcessHandle, path: &str) -> Result<JournalId> {
        self.change(process, Value::Cgroup(path.to_string()))
    }

    /// Sets the nice value (-20–19) of the process's threads.
    pub fn set_nice(&mut self, process: &ProcessHandle, nice: i32) -> Result<JournalId> {
        check_nice(process, nice)?;
        self.change(process, Value::Nice(nice))
    }

    /// Sets the scheduling policy of the process's threads with `sched_setattr`:
    /// `rt_priority` 1–99 for FIFO/RR (0 otherwise); for the fair policies
    /// `sched_runtime_ns` is the EEVDF per-task slice, clamped to 100 µs–100 ms, 0 for
    /// the default. The threads' nice values and the main thread's reset-on-fork flag
    /// are kept.
    pub fn set_policy(
        &mut self,
        process: &ProcessHandle,
        policy: Policy,
        rt_priority: u32,
        sched_runtime_ns: u64,
    ) -> Result<JournalId> {
        same(process)?;
        let pairs = self.policy_pairs(process, policy, rt_priority, sched_runtime_ns)?;
        Ok(*self.change_all(process, pairs)?.last().expect("one change at least"))
    }

    /// Sets the nice value and the policy of the process's threads together, as
    /// [`Actuator::set_nice`] and [`Actuator::set_policy`] would one after the other
    /// (a class's settings), in one journal transaction and one pass over the threads:
    /// a build's jobs are classed at their exec by the hundred a second, and each
    /// commit and each read of /proc is time taken from the build. Returns the
    /// entries' ids, the nice value's first.
    pub fn set_nice_and_policy(
        &mut self,
        process: &ProcessHandle,
        nice: i32,
        policy: Policy,
        rt_priority: u32,
        sched_runtime_ns: u64,
    ) -> Result<Vec<JournalId>> {
        check_nice(process, nice)?;
        same(process)?;
        let mut pairs = vec![(self.read(process, Setting::Nice)?, Value::Nice(nice))];
        pairs.extend(self.policy_pairs(process, policy, rt_priority, sched_runtime_ns)?);
        self.change_all(process, pairs)
    }

    /// The (old, new) pairs that give the process `policy`: the `RLIMIT_RTTIME` bound a
    /// real-time policy needs first, then the policy, its reset-on-fork flag kept.
    fn policy_pairs(
        &self,
        process: &ProcessHandle,
        policy: Policy,
        rt_priority: u32,
        sched_runtime_ns: u64,
    ) -> Result<Vec<(Value, Value)>> {
        let value = PolicyValue::new(policy, rt_priority, sched_runtime_ns)
            .map_err(|e| kernel_err("set policy", process.pid(), e))?;
        let old = self.read(process, Setting::Policy)?;
        let new = Value::Policy(value.with_reset_on_fork(old.reset_on_fork()));
        let mut pairs = self.rttime_bound(process, policy)?;
        pairs.push((old, new));
        Ok(pairs)
    }

    /// The `RLIMIT_RTTIME` a real-time `policy` needs first ([`RtTime::bounded`]),
    /// unless the process has one as tight already: the kernel signals a runaway
    /// real-time thread whether the daemon runs or not.
    fn rttime_bound(&self, process: &ProcessHandle, policy: Policy) -> Result<Vec<(Value, Value)>> {
        if !policy.is_rt() {
            return Ok(Vec::new());
        }
        match self.read(process, Setting::RtTime)? {
            Value::RtTime(now) if !now.is_bounded() => {
                Ok(vec![(Value::RtTime(now), Value::RtTime(now.bounded()))])
            }
            _ => Ok(Vec::new()),
        }
    }

    /// Raises the nice value to `nice` (a boost), not to be inherited: the process's
    /// policy takes `SCHED_FLAG_RESET_ON_FORK` first if it has not, so that a child forked
    /// under the raise starts at nice 0. Returns the changes made, in order: undo them
    /// with [`Actuator::revert`], last first.
    pub fn raise_nice(&mut self, process: &ProcessHandle, nice: i32) -> Result<Vec<JournalId>> {
        check_nice(process, nice)?;
        same(process)?;
        let mut pairs = Vec::with_capacity(2);
        if let Value::Policy(p) = self.read(process, Setting::Policy)? {
            if !p.reset_on_fork {
                pairs.push((Value::Policy(p), Value::Policy(p.with_reset_on_fork(true))));
            }
        }
        pairs.push((self.read(process, Setting::Nice)?, Value::Nice(nice)));
        self.change_all(process, pairs)
    }

    /// Raises the process to real-time `policy` at `rt_priority` (a boost), with
    /// `SCHED_FLAG_RESET_ON_FORK`: a child forked under the raise starts at `SCHED_OTHER`.
    /// Returns the change made, to undo with [`Actuator::revert`].
    pub fn raise_policy(
        &mut self,
        process: &ProcessHandle,
        policy: Policy,
        rt_priority: u32,
    ) -> Result<Vec<JournalId>> {
        let value = PolicyValue::new(policy, rt_priority, 0)
            .map_err(|e| kernel_err("set policy", process.pid(), e))?
            .with_reset_on_fork(true);
        same(process)?;
        let mut pairs = self.rttime_bound(process, policy)?;
        pairs.push((self.read(process, Setting::Policy)?, Value::Policy(value)));
        self.change_all(process, pairs)
    }

    /// What this run's changes `ids` of the process set and would write back, as
    /// (new, old) pairs in the order of `ids`: what another thread needs to undo them
    /// with [`write_back`] if it must (a raise past its time).
    pub fn values(&self, key: ProcessKey, ids: &[JournalId]) -> Vec<(Value, Value)> {
        ids.iter()
            .filter_map(|id| {
                let made = Setting::ALL
                    .iter()
                    .find_map(|&what| self.stacks.get(&(key, what))?.iter().find(|m| m.id == *id))?;
                Some((made.new.clone(), made.old.clone()))
            })
            .collect()
    }

    /// Marks the changes made since the last call applied in the journal, and those of
    /// the processes that exited since undone, in one transaction. Until then the first
    /// are pending as changes maybe not applied, which `restore` undoes the same, and
    /// the second as changes of processes a restore finds gone.
    pub fn settle(&mut self) -> Result<()> {
        self.store.journal_settle(&self.unmarked, &self.exited)?;
        self.unmarked.clear();
        self.exited.clear();
        Ok(())
    }

    /// Undoes this run's change `id` of the process (a boost ending). If it is the
    /// latest pending change of its setting, its old value is written back to the
    /// threads that still have what it set; if a later change of the setting is
    /// pending (a class change made during the boost), nothing is written and that
    /// later change takes over its old value. Returns false if no such change is
    /// pending. A process that is gone or not the same is not touched; its entry is
    /// only marked undone.
    pub fn revert(&mut self, process: &ProcessHandle, id: JournalId) -> Result<bool> {
        let key = process.key();
        let found = Setting::ALL.into_iter().find_map(|what| {
            let at = self.stacks.get(&(key, what))?.iter().position(|m| m.id == id)?;
            Some((what, at))
        });
        let Some((what, at)) = found else { return Ok(false) };
        let stack = self.stacks.get_mut(&(key, what)).expect("found above");
        let made = stack.remove(at);
        if let Some(above) = stack.get_mut(at) {
            above.old = made.old.clone();
            self.store.journal_set_values(above.id, &above.old.to_string(), &above.new.to_string())?;
        } else if process.is_same() {
            match write_back(process, &made.new, &made.old) {
                Ok(_) => {}
                Err(_) if !process.is_same() => {}
                Err(e) => {
                    self.stacks.entry((key, what)).or_default().insert(at, made);
                    return Err(kernel_err(&format!("restore {}", what.as_str()), process.pid(), e));
                }
            }
        }
        if self.stacks.get(&(key, what)).is_some_and(Vec::is_empty) {
            self.stacks.remove(&(key, what));
        }
        self.unmarked.retain(|&u| u != id);
        self.store.journal_mark_undone(id)?;
        Ok(true)
    }

    /// Undoes every pending change of `process`, newest first (its cgroup before the
    /// rest, as [`Actuator::restore_all`] does): it gets back what it had before this
    /// run changed it. Returns how many changes were undone.
    pub fn restore(&mut self, process: &ProcessHandle) -> Result<usize> {
        let key = process.key();
        let mut undone = 0;
        let mut order = Setting::ALL;
        order.sort_by_key(|&w| w != Setting::Cgroup);
        for what in order {
            while let Some(id) = self.stacks.get(&(key, what)).and_then(|s| s.last()).map(|m| m.id) {
                self.revert(process, id)?;
                undone += 1;
            }
        }
        Ok(undone)
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
                self.stacks.get(&(parent, what)).and_then(|v| v.first()).map(|m| m.old.clone())
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
                boot_id: crate::process::boot_id().to_string(),
            })?;
            self.unmarked.push(id);
            self.stacks.entry((child.key(), what)).or_default().push(Made { id, old: original, new: now });
            n += 1;
        }
        Ok(n)
    }

    /// Forgets a process that exited: its pending entries are marked undone (there is
    /// nothing left to restore) at the next [`Actuator::settle`]: a build's job exits
    /// by the hundred a second, and its own commit each would be time taken from it.
    pub fn forget(&mut self, key: ProcessKey) {
        let ids = self.take_stacks(key);
        self.exited.extend(ids);
    }

    /// This run's pending entries of process `key`, no longer kept.
    fn take_stacks(&mut self, key: ProcessKey) -> Vec<JournalId> {
        Setting::ALL
            .into_iter()
            .flat_map(|what| self.stacks.remove(&(key, what)).unwrap_or_default())
            .map(|m| m.id)
            .collect()
    }

    /// Whether this run has pending changes of the process.
    pub fn changes(&self, key: ProcessKey) -> bool {
        Setting::ALL.into_iter().any(|what| self.stacks.contains_key(&(key, what)))
    }

    /// Whether a setting schedlab changed on this process now differs, on its main
    /// thread, from what schedlab last set (a user's renice, taskset or chrt: the user
    /// wins, and the caller stops managing the process), or can no longer be read (the
    /// process is gone or not the same: the caller stops managing it too). False for a
    /// process schedlab never changed.
    pub fn changed_externally(&self, process: &ProcessHandle) -> bool {
        if !self.changes(process.key()) {
            return false;
        }
        !process.is_same() || self.differs(process.key())
    }

    /// Whether what pid `key.pid` has now differs from what schedlab last set on process
    /// `key`, read by pid alone: the check of every managed process at every plan,
    /// which needs no handle (a pid taken by another process meanwhile differs too, and
    /// the caller then checks the identity before it concludes anything).
    pub fn differs(&self, key: ProcessKey) -> bool {
        Setting::ALL.into_iter().any(|what| {
            self.stacks
                .get(&(key, what))
                .and_then(|stack| stack.last())
                .is_some_and(|made| Value::read(what, key.pid).ok().as_ref() != Some(&made.new))
        })
    }

    /// Stops managing the process: its pending journal entries (all of this run's: a
    /// previous run's were restored at the start) are marked undone without writing the
    /// old values back, so that a user's own change stays.
    pub fn release(&mut self, process: &ProcessHandle) -> Result<()> {
        let ids = self.take_stacks(process.key());
        Ok(self.store.journal_mark_undone_all(&ids)?)
    }

    /// Undoes every pending entry of the journal, newest first (cgroup moves before
    /// everything else), so that a setting changed twice ends at its original value.
    /// Each entry is closed (marked undone) unless it failed for a passing reason: see
    /// [`RestoreReport`] for what became of each.
    pub fn restore_all(&mut self) -> Result<RestoreReport> {
        let mut report = RestoreReport::default();
        let mut pending = self.store.journal_pending()?;
        // Cgroups first: a process still in a cpuset could not take back an affinity
        // outside it, and moving it out resets its affinity (cgroup v1), which the
        // affinity entries then put right.
        pending.sort_by_key(|e| e.change.what != Setting::Cgroup);
        let boot = crate::process::boot_id();
        for entry in pending {
            let theirs = &entry.change.boot_id;
            if !theirs.is_empty() && !boot.is_empty() && theirs != boot {
                report.other_boot += 1;
            } else {
                match restore_one(&entry) {
                    Ok(Restored::Written) => report.restored += 1,
                    Ok(Restored::Kept) => report.kept += 1,
                    Ok(Restored::Gone) => report.skipped += 1,
                    Err(e) if e.is_passing() => {
                        report.failed.push((entry.id, e));
                        continue;
                    }
                    Err(e) => report.abandoned.push((entry.id, e)),
                }
            }
            self.store.journal_mark_undone(entry.id)?;
            self.stacks.remove(&(entry.change.target, entry.change.what));
        }
        self.unmarked.clear();
        self.exited.clear();
        Ok(report)
    }

    /// Closes every pending entry of the journal without writing anything back
    /// (`schedlab restore --discard`: the user has looked at the processes and wants
    /// them left as they are); returns how many.
    pub fn discard_all(&mut self) -> Result<usize> {
        let pending = self.store.journal_pending()?;
        for entry in &pending {
            self.store.journal_mark_undone(entry.id)?;
        }
        self.stacks.clear();
        self.unmarked.clear();
        self.exited.clear();
        Ok(pending.len())
    }

    /// Setting `what` of the process's main thread.
    fn read(&self, process: &ProcessHandle, what: Setting) -> Result<Value> {
        Value::read(what, process.pid())
            .map_err(|e| kernel_err(&format!("read {}", what.as_str()), process.pid(), e))
    }

    /// Journals, then applies, one change to the main thread and to the threads that
    /// have what it has. Returns the entry's id.
    fn change(&mut self, process: &ProcessHandle, new: Value) -> Result<JournalId> {
        same(process)?;
        let old = self.read(process, new.setting())?;
        Ok(self.change_all(process, vec![(old, new)])?[0])
    }

    /// Journals (in one transaction), then applies, changes of different settings, each
    /// an (old, new) pair whose old value the caller read from the main thread (after
    /// checking the process is the same, [`same`]), to the main thread and to the
    /// threads that have what it has, in one pass over the threads. Returns the
    /// entries' ids, in order.
    ///
    /// If applying fails, the old values are put back where the new ones were written
    /// (best effort) and the entries stay pending and not applied, for `restore_all` to
    /// close.
    fn change_all(&mut self, process: &ProcessHandle, pairs: Vec<(Value, Value)>) -> Result<Vec<JournalId>> {
        let pid = process.pid();
        let changes: Vec<Change> = pairs
            .iter()
            .map(|(old, new)| Change {
                time_unix_ns: now_unix_ns(),
                target: process.key(),
                what: new.setting(),
                old_value: old.to_string(),
                new_value: new.to_string(),
                boot_id: crate::process::boot_id().to_string(),
            })
            .collect();
        let ids = self.store.journal_insert_all(&changes)?;
        if let Err((at, e)) = apply_to_threads(process, &pairs) {
            for (old, new) in pairs[..=at].iter().rev() {
                let _ = write_back(process, new, old);
            }
            return Err(kernel_err(&format!("set {}", pairs[at].1.setting().as_str()), pid, e));
        }
        self.unmarked.extend(&ids);
        for (id, (old, new)) in ids.iter().zip(pairs) {
            let what = new.setting();
            let now = self.read(process, what)?;
            if now != new {
                // The kernel keeps something else (a CPU list cut to the online CPUs): a
                // restore after a crash compares with what it kept.
                self.store.journal_set_values(*id, &old.to_string(), &now.to_string())?;
            }
            self.stacks.entry((process.key(), what)).or_default().push(Made { id: *id, old, new: now });
        }
        Ok(ids)
    }
}

impl Drop for Actuator<'_> {
    /// Restores every pending change; errors cannot be reported here and are left in the
    /// journal for `schedlab restore`.
    fn drop(&mut self) {
        let _ = self.restore_all();
    }
}

/// What became of one journal entry at a restore.
enum Restored {
    /// The old value was written back.
    Written,
    /// No thread has the value schedlab set any more: nothing written.
    Kept,
    /// The process is gone, or its pid is another process's.
    Gone,
}

/// Writes back the old value of one journal entry to the threads that still have its
/// new value.
fn restore_one(entry: &JournalEntry) -> Result<Restored> {
    let c = &entry.change;
    let bad = |e| kernel_err(&format!("restore {}", c.what.as_str()), c.target.pid, e);
    let old = Value::parse(c.what, &c.old_value).map_err(bad)?;
    let new = Value::parse(c.what, &c.new_value).map_err(bad)?;
    let process = match ProcessHandle::for_key(c.target) {
        Ok(p) => p,
        Err(e) if e.raw_os_error() == Some(libc::ESRCH) => return Ok(Restored::Gone),
        Err(e) => return Err(kernel_err("open pidfd", c.target.pid, e)),
    };
    if !process.is_same() {
        return Ok(Restored::Gone);
    }
    match write_back(&process, &new, &old) {
        Ok(0) => Ok(Restored::Kept),
        Ok(_) => Ok(Restored::Written),
        Err(_) if !process.is_same() => Ok(Restored::Gone),
        Err(e) => Err(bad(e)),
    }
}

/// Applies each (old, new) pair's `new` to the main thread and to each thread that has
/// its `old` (what the main thread had); a thread with a value of its own is left
/// alone, one that exited meanwhile (`ESRCH`) skipped. A setting of the process (a
/// cgroup, a limit) is written once. The process is checked to be the same after the threads are listed, so the
/// tids are its own. On failure, which pair failed, and why.
fn apply_to_threads(process: &ProcessHandle, pairs: &[(Value, Value)]) -> Result<(), (usize, io::Error)> {
    let tids = process.threads().map_err(|e| (0, e))?;
    if !process.is_same() {
        return Err((0, io::Error::from_raw_os_error(libc::ESRCH)));
    }
    for (at, (old, new)) in pairs.iter().enumerate() {
        let fail = |e| (at, e);
        if new.per_process() {
            new.apply(process.pid()).map_err(fail)?;
            continue;
        }
        for &tid in &tids {
            if tid != process.pid() {
                match Value::read(new.setting(), tid) {
                    Ok(own) if own != *old => continue,
                    Ok(_) => {}
                    Err(e) if e.raw_os_error() == Some(libc::ESRCH) => continue,
                    Err(e) => return Err(fail(e)),
                }
            }
            match new.apply(tid) {
                Err(e) if e.raw_os_error() == Some(libc::ESRCH) => {}
                other => other.map_err(fail)?,
            }
        }
    }
    Ok(())
}

/// What `schedlab restore` does, and a benchmark after a daemon it had to kill: every
/// change the journal in `store` holds written back, under the store's lock (no daemon
/// may run meanwhile), then the empty cpuset groups daemons made removed: the report,
/// and how many groups went (or why none could be looked for).
pub fn restore_left_behind(store: &Store) -> Result<(RestoreReport, io::Result<usize>), ActuatorError> {
    let _lock = store.lock()?;
    let report = Actuator::new(store).restore_all()?;
    Ok((report, crate::cgroup::remove_empty_groups()))
}

/// Writes `old` to each thread of the process that has `new` (what schedlab set; a
/// setting of the process: the process); returns how many were written. A thread whose value someone
/// changed since keeps it.
pub fn write_back(process: &ProcessHandle, new: &Value, old: &Value) -> io::Result<usize> {
    let tids = if new.per_process() { vec![process.pid()] } else { process.threads()? };
    if !process.is_same() {
        return Err(io::Error::from_raw_os_error(libc::ESRCH));
    }
    let mut written = 0;
    for tid in tids {
        match Value::read(new.setting(), tid) {
            Ok(now) if now == *new => {}
            Ok(_) => continue,
            Err(e) if e.raw_os_error() == Some(libc::ESRCH) => continue,
            Err(e) => return Err(e),
        }
        match old.apply(tid) {
            Ok(()) => written += 1,
            Err(e) if e.raw_os_error() == Some(libc::ESRCH) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(written)
}

/// [`ActuatorError::NotSame`] unless the process is still the one the handle names:
/// checked before its values are read for a change.
fn same(process: &ProcessHandle) -> Result<()> {
    if process.is_same() {
        Ok(())
    } else {
        Err(ActuatorError::NotSame(process.key()))
    }
}

fn check_nice(process: &ProcessHandle, nice: i32) -> Result<()> {
    if (-20..=19).contains(&nice) {
        return Ok(());
    }
    Err(kernel_err(
        "set nice",
        process.pid(),
        io::Error::new(io::ErrorKind::InvalidInput, format!("nice {nice} is outside -20..=19")),
    ))
}

fn kernel_err(what: &str, pid: Pid, source: io::Error) -> ActuatorError {
    ActuatorError::Kernel { what: what.to_owned(), pid: pid.0, source }
}

fn now_unix_ns() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos() as i64).unwrap_or(0)
}
