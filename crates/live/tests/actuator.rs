//! The actuator on the real kernel: changes to `sleep` children, read back from /proc,
//! journaled before they are applied, and restored by `restore_all` and on drop; a
//! process that is not the one named is never touched; a user's own change is noticed.
//! Needs root (lowering nice back, setting other processes' policies); fails with the
//! reason otherwise. The children start at nice 0 whatever this test's own nice (`nice
//! make test`), so the values the tests set are changes.
#![cfg(target_os = "linux")]

use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

use schedlab_live::actuator::{Actuator, ActuatorError};
use schedlab_live::process::ProcessHandle;
use schedlab_live::settings::{self, CpuSet, Policy};
use schedlab_model::Pid;
use schedlab_store::{Change, ProcessKey, Setting, Store};

/// `cmd`, made to start at nice 0, whatever this test's own nice.
fn at_nice_0(cmd: &mut Command) -> &mut Command {
    // SAFETY: setpriority is async-signal-safe and touches only the child.
    unsafe {
        cmd.pre_exec(|| match libc::setpriority(libc::PRIO_PROCESS, 0, 0) {
            0 => Ok(()),
            _ => Err(std::io::Error::last_os_error()),
        })
    }
}

/// A `sleep 30` child at nice 0, killed and reaped when dropped.
struct Sleeper(Child);

impl Sleeper {
    fn spawn() -> Sleeper {
        Sleeper(at_nice_0(Command::new("sleep").arg("30")).spawn().expect("spawn sleep 30"))
    }

    fn pid(&self) -> Pid {
        Pid(self.0.id())
    }

    fn handle(&self) -> ProcessHandle {
        ProcessHandle::open(self.pid()).expect("pidfd_open of the child")
    }
}

impl Drop for Sleeper {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A fresh store file for one test, its directory removed when dropped.
struct TempStore(PathBuf);

impl TempStore {
    fn new(name: &str) -> (TempStore, Store) {
        let dir = std::env::temp_dir().join(format!("schedlab-actuator-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let store = Store::open(dir.join("schedlab.db")).expect("open store");
        (TempStore(dir), store)
    }
}

impl Drop for TempStore {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn require_root() {
    // SAFETY: no arguments.
    assert_eq!(
        unsafe { libc::geteuid() },
        0,
        "the actuator tests need root (CAP_SYS_NICE to change other processes)"
    );
}

/// The affinity tests move a child to CPU 1: the machine must have it online (this
/// test's own affinity may be one CPU).
fn require_two_cpus() {
    let online = schedlab_live::host::online_cpus().expect("the online CPUs");
    assert!(
        online.cpus().contains(&1),
        "the affinity tests move a child to CPU 1; this machine has {online} online"
    );
}

/// `Cpus_allowed_list` of /proc/PID/status.
fn proc_affinity(pid: Pid) -> String {
    let status = std::fs::read_to_string(format!("/proc/{}/status", pid.0)).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .expect("Cpus_allowed_list in /proc/PID/status")
        .trim()
        .to_owned()
}

/// Field 19 (nice) of /proc/PID/stat.
fn proc_nice(pid: Pid) -> i32 {
    schedlab_live::process::stat_field(pid, 19).unwrap().parse().unwrap()
}

/// `se.slice` of /proc/PID/sched, in ns.
fn proc_slice(pid: Pid) -> u64 {
    let sched = std::fs::read_to_string(format!("/proc/{}/sched", pid.0)).unwrap();
    sched
        .lines()
        .find_map(|l| l.strip_prefix("se.slice"))
        .and_then(|rest| rest.trim_start_matches([' ', ':']).trim().parse().ok())
        .expect("se.slice in /proc/PID/sched")
}

/// Field 41 (policy) of /proc/PID/stat.
fn proc_policy(pid: Pid) -> u32 {
    schedlab_live::process::stat_field(pid, 41).unwrap().parse().unwrap()
}

#[test]
fn affinity_and_nice_are_set_and_restored() {
    require_root();
    require_two_cpus();
    let (_dir, store) = TempStore::new("set-restore");
    let child = Sleeper::spawn();
    let pid = child.pid();
    let (affinity0, nice0) = (proc_affinity(pid), proc_nice(pid));
    assert_eq!(nice0, 0);

    let mut act = Actuator::new(&store);
    let h = child.handle();
    act.set_affinity(&h, &CpuSet::new([1])).unwrap();
    act.set_nice(&h, 10).unwrap();
    assert_eq!(proc_affinity(pid), "1");
    assert_eq!(proc_nice(pid), 10);

    let report = act.restore_all().unwrap();
    assert_eq!((report.restored, report.skipped, report.failed.len()), (2, 0, 0));
    assert_eq!(proc_affinity(pid), affinity0);
    assert_eq!(proc_nice(pid), nice0);
    assert!(store.journal_pending().unwrap().is_empty());
}

#[test]
fn journal_entry_is_written_before_apply_then_applied_then_undone() {
    require_root();
    let (_dir, store) = TempStore::new("journal");
    let child = Sleeper::spawn();
    let pid = child.pid();
    let affinity0 = proc_affinity(pid);
    let mut act = Actuator::new(&store);
    let h = child.handle();

    // An affinity the kernel refuses (no such CPU): the entry is in the journal, not
    // applied, and the process is unchanged — it was written before the attempt.
    let err = act.set_affinity(&h, &CpuSet::new([1000])).unwrap_err();
    assert!(matches!(err, ActuatorError::Kernel { .. }), "{err}");
    let pending = store.journal_pending().unwrap();
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].change.what, Setting::Affinity);
    assert_eq!(pending[0].change.target, h.key());
    assert_eq!(pending[0].change.old_value, affinity0);
    assert_eq!(pending[0].change.new_value, "1000");
    assert!(!pending[0].applied && !pending[0].undone);
    assert_eq!(proc_affinity(pid), affinity0);

    act.set_nice(&h, 7).unwrap();
    let pending = store.journal_pending().unwrap();
    assert_eq!(pending.len(), 2);
    let nice = &pending[0];
    assert_eq!(nice.change.what, Setting::Nice);
    assert_eq!((nice.change.old_value.as_str(), nice.change.new_value.as_str()), ("0", "7"));
    // Made, but marked applied only when the actuator settles (off the reaction path).
    assert!(!nice.applied && !nice.undone);
    assert_eq!(proc_nice(pid), 7);
    act.settle().unwrap();
    let nice = &store.journal_pending().unwrap()[0];
    assert!(nice.applied && !nice.undone);

    let report = act.restore_all().unwrap();
    // The affinity was never applied: no thread has it, nothing is written back.
    assert_eq!((report.restored, report.kept, report.failed.len()), (1, 1, 0));
    assert!(store.journal_pending().unwrap().is_empty(), "every entry marked undone");
    assert_eq!(proc_nice(pid), 0);
    assert_eq!(proc_affinity(pid), affinity0);
}

#[test]
fn dropping_the_actuator_restores() {
    require_root();
    require_two_cpus();
    let (_dir, store) = TempStore::new("drop");
    let child = Sleeper::spawn();
    let pid = child.pid();
    let (affinity0, nice0) = (proc_affinity(pid), proc_nice(pid));
    {
        let mut act = Actuator::new(&store);
        let h = child.handle();
        act.set_affinity(&h, &CpuSet::new([1])).unwrap();
        act.set_nice(&h, 12).unwrap();
        assert_eq!((proc_affinity(pid).as_str(), proc_nice(pid)), ("1", 12));
    }
    assert_eq!(proc_affinity(pid), affinity0);
    assert_eq!(proc_nice(pid), nice0);
    assert!(store.journal_pending().unwrap().is_empty());
}

#[test]
fn a_process_that_is_not_the_one_named_is_never_touched() {
    require_root();
    let (_dir, store) = TempStore::new("not-same");
    let child = Sleeper::spawn();
    let pid = child.pid();
    let real = child.handle();
    assert!(real.is_same());

    // The pid now "belongs to another process": a handle expecting another start time.
    let wrong = ProcessHandle::for_key(ProcessKey { pid, start_time: real.start_time() + 12_345 }).unwrap();
    assert!(!wrong.is_same());
    let mut act = Actuator::new(&store);
    assert!(matches!(act.set_nice(&wrong, 10), Err(ActuatorError::NotSame(_))));
    assert_eq!(proc_nice(pid), 0);
    assert!(store.journal_pending().unwrap().is_empty(), "nothing journaled for a process not touched");

    // A journal entry (say from before a crash) naming that pid with another start time:
    // restore marks it undone without writing its old value.
    store
        .journal_insert(&Change {
            time_unix_ns: 1,
            target: wrong.key(),
            what: Setting::Nice,
            old_value: "5".into(),
            new_value: "10".into(),
            boot_id: String::new(),
        })
        .unwrap();
    let report = act.restore_all().unwrap();
    assert_eq!((report.restored, report.skipped, report.failed.len()), (0, 1, 0));
    assert_eq!(proc_nice(pid), 0);
    assert!(store.journal_pending().unwrap().is_empty());

    // A process that exited: its handle is no longer the same, nothing is set.
    let mut gone = Sleeper::spawn();
    let h = gone.handle();
    gone.0.kill().unwrap();
    gone.0.wait().unwrap();
    assert!(!h.is_same());
    assert!(matches!(act.set_nice(&h, 10), Err(ActuatorError::NotSame(_))));
}

#[test]
fn an_external_renice_is_noticed() {
    require_root();
    let (_dir, store) = TempStore::new("external");
    let child = Sleeper::spawn();
    let pid = child.pid();
    let mut act = Actuator::new(&store);
    let h = child.handle();
    assert!(!act.changed_externally(&h), "never changed by schedlab");
    act.set_nice(&h, 10).unwrap();
    assert!(!act.changed_externally(&h));

    // The user renices it.
    // SAFETY: no memory arguments.
    assert_eq!(unsafe { libc::setpriority(libc::PRIO_PROCESS, pid.0, 15) }, 0);
    assert!(act.changed_externally(&h));

    // The user wins: release leaves their value in place, even through restore.
    act.release(&h).unwrap();
    assert!(!act.changed_externally(&h));
    act.restore_all().unwrap();
    assert_eq!(proc_nice(pid), 15);
}

#[test]
fn sched_other_slice_is_set_and_restored_to_the_default() {
    require_root();
    let (_dir, store) = TempStore::new("slice");
    let child = Sleeper::spawn();
    let pid = child.pid();
    let slice0 = proc_slice(pid);
    let mut act = Actuator::new(&store);
    let h = child.handle();

    act.set_policy(&h, Policy::Other, 0, 3_000_000).unwrap();
    let attr = schedlab_live::settings::sched_getattr(pid).unwrap();
    assert_eq!((attr.sched_policy, attr.sched_runtime), (libc::SCHED_OTHER as u32, 3_000_000));
    assert_eq!(proc_slice(pid), 3_000_000);
    let entry = &store.journal_pending().unwrap()[0];
    assert_eq!(entry.change.what, Setting::Policy);
    assert_eq!(entry.change.old_value, "SCHED_OTHER/0/0", "the default slice is journaled as 0");
    assert_eq!(entry.change.new_value, "SCHED_OTHER/0/3000000");

    act.restore_all().unwrap();
    assert_eq!(proc_slice(pid), slice0);
    let attr = schedlab_live::settings::sched_getattr(pid).unwrap();
    assert_eq!((attr.sched_policy, attr.sched_runtime), (libc::SCHED_OTHER as u32, slice0));
}

#[test]
fn a_class_is_set_at_once_and_an_exited_processs_entries_close_at_the_settle() {
    require_root();
    let (_dir, store) = TempStore::new("class");
    let child = Sleeper::spawn();
    let pid = child.pid();
    let mut act = Actuator::new(&store);
    let h = child.handle();
    let ids = act.set_nice_and_policy(&h, 19, Policy::Batch, 0, 0).unwrap();
    assert_eq!((proc_policy(pid), proc_nice(pid)), (libc::SCHED_BATCH as u32, 19));
    let pending = store.journal_pending().unwrap();
    let whats: Vec<Setting> = pending.iter().rev().map(|e| e.change.what).collect();
    assert_eq!((ids.len(), whats), (2, vec![Setting::Nice, Setting::Policy]), "nice first, then policy");
    act.settle().unwrap();
    assert!(store.journal_pending().unwrap().iter().all(|e| e.applied));

    // It exits: its entries stay pending until the settle, which closes them.
    let key = h.key();
    drop(child);
    act.forget(key);
    assert_eq!(store.journal_pending().unwrap().len(), 2, "not before the settle");
    act.settle().unwrap();
    assert!(store.journal_pending().unwrap().is_empty());
    assert!(!act.changes(key));
}

#[test]
fn policy_change_keeps_nice_and_restores_from_realtime() {
    require_root();
    let (_dir, store) = TempStore::new("fifo");
    let child = Sleeper::spawn();
    let pid = child.pid();
    let mut act = Actuator::new(&store);
    let h = child.handle();
    act.set_nice(&h, 5).unwrap();
    act.set_policy(&h, Policy::Batch, 0, 0).unwrap();
    assert_eq!((proc_policy(pid), proc_nice(pid)), (libc::SCHED_BATCH as u32, 5));
    let unlimited = settings::get_rttime(pid).unwrap();
    assert_eq!(unlimited.hard_us, None, "a sleep has no RLIMIT_RTTIME of its own");
    act.set_policy(&h, Policy::Fifo, 1, 0).unwrap();
    assert_eq!(proc_policy(pid), libc::SCHED_FIFO as u32);
    assert_eq!(
        settings::get_rttime(pid).unwrap(),
        unlimited.bounded(),
        "real time comes with the kernel's bound"
    );
    let report = act.restore_all().unwrap();
    assert_eq!((report.restored, report.failed.len()), (4, 0), "{:?}", report.failed);
    assert_eq!((proc_policy(pid), proc_nice(pid)), (libc::SCHED_OTHER as u32, 0));
    assert_eq!(settings::get_rttime(pid).unwrap(), unlimited, "and the limit goes with it");
}

/// A python3 child at nice 0 running `script`, killed and reaped when dropped; `numbers`
/// reads the numbers of the first line it prints.
struct Python(Child);

impl Python {
    fn spawn(script: &str) -> Python {
        let child = at_nice_0(&mut Command::new("python3"))
            .args(["-c", script])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("python3 runs (it is on these machines)");
        Python(child)
    }

    fn line(&mut self) -> Vec<u32> {
        let mut line = String::new();
        BufReader::new(self.0.stdout.as_mut().unwrap()).read_line(&mut line).unwrap();
        line.split_whitespace().map(|w| w.parse().unwrap()).collect()
    }

    fn say(&mut self, what: &str) {
        use std::io::Write;
        let stdin = self.0.stdin.as_mut().unwrap();
        writeln!(stdin, "{what}").unwrap();
        stdin.flush().unwrap();
    }
}

impl Drop for Python {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn nice_of(tid: u32) -> i32 {
    settings::get_nice(Pid(tid)).unwrap()
}

fn policy_of(tid: u32) -> (Policy, u32) {
    let p = settings::get_policy(Pid(tid)).unwrap();
    (p.policy, p.rt_priority)
}

/// A process whose second thread has a nice value of its own (5) and whose third runs
/// `SCHED_FIFO` 10 (an audio thread): a change of the process leaves them alone, and a
/// restore gives each thread its own value back.
#[test]
fn threads_with_values_of_their_own_are_left_alone() {
    require_root();
    let (_dir, store) = TempStore::new("threads");
    let mut child = Python::spawn(
        "import os, sys, threading\n\
         tids = []\n\
         def own_nice():\n\
         \x20   os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 5); tids.append(threading.get_native_id()); sys.stdin.readline()\n\
         def audio():\n\
         \x20   os.sched_setscheduler(threading.get_native_id(), os.SCHED_FIFO, os.sched_param(10)); tids.append(threading.get_native_id()); sys.stdin.readline()\n\
         for f in (own_nice, audio):\n\
         \x20   t = threading.Thread(target=f, daemon=True); t.start()\n\
         \x20   while len(tids) < (1 if f is own_nice else 2): pass\n\
         print(os.getpid(), *tids, flush=True)\n\
         sys.stdin.readline()\n",
    );
    let tids = child.line();
    let (main, own, audio) = (tids[0], tids[1], tids[2]);
    assert_eq!((nice_of(main), nice_of(own), policy_of(audio)), (0, 5, (Policy::Fifo, 10)));

    let mut act = Actuator::new(&store);
    let h = ProcessHandle::open(Pid(main)).unwrap();
    act.set_nice(&h, 10).unwrap();
    act.set_policy(&h, Policy::Batch, 0, 0).unwrap();
    assert_eq!((nice_of(main), policy_of(main)), (10, (Policy::Batch, 0)));
    assert_eq!((nice_of(own), policy_of(own)), (5, (Policy::Batch, 0)), "its own nice is left");
    assert_eq!(policy_of(audio), (Policy::Fifo, 10), "the audio thread is left");

    let report = act.restore_all().unwrap();
    assert_eq!((report.restored, report.failed.len()), (2, 0), "{:?}", report.failed);
    assert_eq!((nice_of(main), policy_of(main)), (0, (Policy::Other, 0)));
    assert_eq!((nice_of(own), policy_of(own)), (5, (Policy::Other, 0)));
    assert_eq!(policy_of(audio), (Policy::Fifo, 10), "still real time");
}

/// A restore writes back only where schedlab's value still is: a user's renice made
/// after it (say, while the daemon was dead) stays.
#[test]
fn a_restore_keeps_a_users_later_change() {
    require_root();
    let (_dir, store) = TempStore::new("compare");
    let child = Sleeper::spawn();
    let pid = child.pid();
    let mut act = Actuator::new(&store);
    act.set_nice(&child.handle(), 10).unwrap();
    // SAFETY: no memory arguments.
    assert_eq!(unsafe { libc::setpriority(libc::PRIO_PROCESS, pid.0, 15) }, 0);
    let report = act.restore_all().unwrap();
    assert_eq!((report.restored, report.kept), (0, 1));
    assert_eq!(proc_nice(pid), 15);
    assert!(store.journal_pending().unwrap().is_empty());
}

/// A raise undone from under a later change of the same setting writes nothing, and the
/// later change then undoes to what the process had before both.
#[test]
fn a_raise_ended_under_a_later_change_leaves_that_change_and_restores_past_both() {
    require_root();
    let (_dir, store) = TempStore::new("stack");
    let child = Sleeper::spawn();
    let pid = child.pid();
    let mut act = Actuator::new(&store);
    let h = child.handle();
    act.set_nice(&h, 5).unwrap();
    let raise = act.raise_nice(&h, -20).unwrap();
    assert_eq!(proc_nice(pid), -20);
    act.set_nice(&h, 10).unwrap();
    for &id in raise.iter().rev() {
        assert!(act.revert(&h, id).unwrap());
    }
    assert_eq!(proc_nice(pid), 10, "the later change stays");
    assert!(!act.revert(&h, raise[0]).unwrap(), "undone once");
    act.restore_all().unwrap();
    assert_eq!(proc_nice(pid), 0);
    assert!(!settings::get_policy(pid).unwrap().reset_on_fork);
}

/// A raised process's children are born with none of the raise
/// (`SCHED_FLAG_RESET_ON_FORK`), and the flag goes with the raise.
#[test]
fn a_raise_is_not_inherited_by_a_child() {
    require_root();
    let (_dir, store) = TempStore::new("fork");
    let mut parent = Python::spawn(
        "import os, sys\n\
         print(os.getpid(), flush=True)\n\
         sys.stdin.readline()\n\
         pid = os.fork()\n\
         if pid == 0:\n\
         \x20   sys.stdin.readline(); os._exit(0)\n\
         print(pid, flush=True)\n\
         sys.stdin.readline()\n",
    );
    let pid = Pid(parent.line()[0]);
    let mut act = Actuator::new(&store);
    let h = ProcessHandle::open(pid).unwrap();
    let nice = act.raise_nice(&h, -20).unwrap();
    let fifo = act.raise_policy(&h, Policy::Fifo, 5).unwrap();
    assert_eq!((nice_of(pid.0), policy_of(pid.0)), (-20, (Policy::Fifo, 5)));
    assert!(settings::get_policy(pid).unwrap().reset_on_fork);
    parent.say("fork");
    let child = parent.line()[0];
    assert_eq!((nice_of(child), policy_of(child)), (0, (Policy::Other, 0)), "the child inherits nothing");
    assert!(!settings::get_policy(Pid(child)).unwrap().reset_on_fork);
    for id in fifo.into_iter().chain(nice).rev() {
        act.revert(&h, id).unwrap();
    }
    let p = settings::get_policy(pid).unwrap();
    assert_eq!((nice_of(pid.0), p.policy, p.reset_on_fork), (0, Policy::Other, false));
    parent.say("done");
    parent.say("done");
}

/// Entries a restore can never carry out are closed, not kept forever: one of another
/// boot (its pid is someone else's now) untouched, one whose value the kernel refuses
/// (a CPU that does not exist) with a warning; neither stops the others.
#[test]
fn entries_of_another_boot_or_that_cannot_be_undone_are_closed() {
    require_root();
    let (_dir, store) = TempStore::new("closed");
    let child = Sleeper::spawn();
    let pid = child.pid();
    let h = child.handle();
    let affinity = proc_affinity(pid);
    let entry = |what, old: &str, new: &str, boot: &str| Change {
        time_unix_ns: 1,
        target: h.key(),
        what,
        old_value: old.into(),
        new_value: new.into(),
        boot_id: boot.into(),
    };
    let boot = schedlab_live::process::boot_id();
    store.journal_insert(&entry(Setting::Nice, "0", "0", "an-earlier-boot")).unwrap();
    store.journal_insert(&entry(Setting::Affinity, "1000", &affinity, boot)).unwrap();
    store.journal_insert(&entry(Setting::Nice, "not a nice value", "0", boot)).unwrap();
    let mut act = Actuator::new(&store);
    act.set_nice(&h, 3).unwrap();
    let report = act.restore_all().unwrap();
    assert_eq!(
        (report.restored, report.other_boot, report.abandoned.len(), report.failed.len()),
        (1, 1, 2, 0)
    );
    assert!(store.journal_pending().unwrap().is_empty());
    assert_eq!((proc_nice(pid), proc_affinity(pid)), (0, affinity));
}
