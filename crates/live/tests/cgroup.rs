//! cpuset cgroups on the real kernel: a group with CPU 1 takes a `sleep` child (whose
//! affinity becomes CPU 1 and cannot leave it), gives it back to the cgroup it came from,
//! and is removed; `Value::Cgroup` reads, parses and applies, once per process. Every
//! cpuset hierarchy found is tested (v1 and v2 when both have cpuset). Groups are removed
//! even when a test fails. Needs root and a cpuset hierarchy; fails with the reason
//! otherwise.
#![cfg(target_os = "linux")]

use std::io;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use schedlab_live::cgroup::{self, CpusetGroup, Hierarchy, Version};
use schedlab_live::settings::{self, CpuSet, Value};
use schedlab_model::Pid;
use schedlab_store::Setting;

/// A child process, killed and reaped when dropped.
struct Sleeper(Child);

impl Sleeper {
    fn spawn() -> Sleeper {
        Sleeper(Command::new("sleep").arg("30").spawn().expect("spawn sleep 30"))
    }

    /// This test binary running [`threaded_helper`]: a process with two threads or more.
    fn spawn_threaded() -> Sleeper {
        let exe = std::env::current_exe().expect("the test binary");
        let child = Command::new(exe)
            .args(["threaded_helper", "--exact", "--ignored", "--nocapture", "--quiet"])
            .stdout(std::process::Stdio::null())
            .spawn()
            .expect("spawn the threaded helper");
        let s = Sleeper(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        while threads(s.pid()).len() < 2 {
            assert!(Instant::now() < deadline, "the helper never started its second thread");
            std::thread::sleep(Duration::from_millis(10));
        }
        s
    }

    fn pid(&self) -> Pid {
        Pid(self.0.id())
    }
}

impl Drop for Sleeper {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A group made for a test, removed when dropped (after moving whatever is left in it to
/// the hierarchy's root), so that a failing test leaves nothing behind.
struct Guard(CpusetGroup);

impl Guard {
    fn create(h: &Hierarchy, tag: &str, cpus: &CpuSet) -> Guard {
        let name = format!("test-{}-{tag}", std::process::id());
        let group = CpusetGroup::create_in(h, &name, cpus)
            .unwrap_or_else(|e| panic!("making cpuset group {name} in {h:?}: {e}"));
        Guard(group)
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        for pid in self.0.procs().unwrap_or_default() {
            let _ = self.0.hierarchy().move_to(pid, "/");
        }
        if let Err(e) = self.0.remove() {
            eprintln!("could not remove {}: {e}", self.0.dir().display());
        }
    }
}

fn require_root() {
    // SAFETY: no arguments.
    assert_eq!(
        unsafe { libc::geteuid() },
        0,
        "the cgroup tests need root (to make cgroups and move processes)"
    );
}

/// The cpuset tests put a process on CPU 1 alone: the machine must have it online (this
/// test's own affinity may be one CPU).
fn require_two_cpus() {
    let online = schedlab_live::host::online_cpus().expect("the online CPUs");
    assert!(
        online.cpus().contains(&1),
        "the cpuset tests put a process on CPU 1 alone; this machine has {online} online"
    );
}

/// Every cpuset hierarchy here; fails, saying why, when there is none.
fn hierarchies() -> Vec<Hierarchy> {
    let all = Hierarchy::detect_all().expect("read /proc/self/mountinfo");
    if all.is_empty() {
        panic!("{}", Hierarchy::detect().unwrap_err());
    }
    all
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

/// The threads of process `pid`.
fn threads(pid: Pid) -> Vec<Pid> {
    std::fs::read_dir(format!("/proc/{}/task", pid.0))
        .map(|d| d.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok()).map(Pid).collect())
        .unwrap_or_default()
}

#[test]
fn a_cpuset_hierarchy_is_found() {
    let all = hierarchies();
    let default = Hierarchy::detect().unwrap();
    assert_eq!(default, all[0]);
    for h in &all {
        eprintln!("cpuset hierarchy: {:?} at {}", h.version(), h.mount_point().display());
        let controllers = match h.version() {
            Version::V1 => "cpuset.cpus",
            Version::V2 => "cgroup.controllers",
        };
        assert!(h.mount_point().join(controllers).is_file(), "{h:?}");
    }
}

#[test]
fn group_takes_a_process_on_its_cpus_and_gives_it_back() {
    require_root();
    require_two_cpus();
    for h in hierarchies() {
        let tag = format!("{:?}", h.version()).to_lowercase();
        let guard = Guard::create(&h, &tag, &CpuSet::new([1]));
        let group = &guard.0;
        let dir = group.dir();
        assert!(dir.is_dir(), "{}", dir.display());
        let parent = match h.version() {
            Version::V1 => "schedlab",
            Version::V2 => "schedlab.slice",
        };
        assert_eq!(group.path(), format!("/{parent}/{}", group.name()));
        assert_eq!(dir, h.mount_point().join(parent).join(group.name()));
        assert_eq!(group.cpus().unwrap(), CpuSet::new([1]));
        assert_eq!(group.effective_cpus().unwrap(), CpuSet::new([1]));

        let child = Sleeper::spawn();
        let pid = child.pid();
        let original = h.current_cgroup(pid).unwrap();
        let affinity0 = proc_affinity(pid);
        assert_ne!(original, group.path());

        group.move_process(pid).unwrap();
        assert_eq!(h.current_cgroup(pid).unwrap(), group.path(), "{h:?}");
        assert_eq!(group.procs().unwrap(), vec![pid]);
        assert_eq!(proc_affinity(pid), "1", "{h:?}");
        // Affinity outside the cpuset is refused.
        let err = settings::set_affinity(pid, &CpuSet::new([0])).unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::EINVAL), "{err}");

        // A populated group is not removed.
        let err = group.remove().unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::ResourceBusy, "{err}");
        assert!(dir.is_dir());

        h.move_to(pid, &original).unwrap();
        assert_eq!(h.current_cgroup(pid).unwrap(), original);
        assert_eq!(proc_affinity(pid), affinity0);
        assert!(group.procs().unwrap().is_empty());

        group.remove().unwrap();
        assert!(!dir.exists(), "{}", dir.display());
        // Removing it again is not an error.
        group.remove().unwrap();
    }
}

#[test]
fn cgroup_value_reads_parses_and_applies_once_per_process() {
    require_root();
    require_two_cpus();
    let h = hierarchies().remove(0);
    let guard = Guard::create(&h, "value", &CpuSet::new([1]));
    let group = &guard.0;
    let child = Sleeper::spawn();
    let pid = child.pid();

    let original = Value::read(Setting::Cgroup, pid).unwrap();
    assert_eq!(original, Value::Cgroup(cgroup::current_cpuset_cgroup(pid).unwrap()));
    assert_eq!(Value::parse(Setting::Cgroup, &original.to_string()).unwrap(), original);
    assert_eq!(original.setting(), Setting::Cgroup);

    let inside = Value::parse(Setting::Cgroup, &group.path()).unwrap();
    assert_eq!(inside, Value::Cgroup(group.path()));
    inside.apply(pid).unwrap();
    assert_eq!(Value::read(Setting::Cgroup, pid).unwrap(), inside);
    assert_eq!(proc_affinity(pid), "1");
    // Again: nothing to do, no error.
    inside.apply(pid).unwrap();
    assert_eq!(group.procs().unwrap(), vec![pid]);

    original.apply(pid).unwrap();
    assert_eq!(Value::read(Setting::Cgroup, pid).unwrap(), original);
    assert!(group.procs().unwrap().is_empty());

    // Through the module's functions, with the detected hierarchy.
    cgroup::move_to(pid, &group.path()).unwrap();
    assert_eq!(cgroup::current_cpuset_cgroup(pid).unwrap(), group.path());
    let Value::Cgroup(back) = &original else { unreachable!() };
    cgroup::move_to(pid, back).unwrap();
    assert_eq!(cgroup::current_cpuset_cgroup(pid).unwrap(), *back);
    drop(child);
    group.remove().unwrap();
    assert!(!group.dir().exists());
}

#[test]
fn cgroup_value_applied_to_a_thread_moves_its_whole_process() {
    require_root();
    require_two_cpus();
    let h = hierarchies().remove(0);
    let guard = Guard::create(&h, "threads", &CpuSet::new([1]));
    let group = &guard.0;
    let child = Sleeper::spawn_threaded();
    let pid = child.pid();
    let original = Value::read(Setting::Cgroup, pid).unwrap();
    let tids = threads(pid);
    let other = *tids.iter().find(|&&t| t != pid).expect("a thread besides the leader");

    let inside = Value::Cgroup(group.path());
    // Applied to every thread, as the actuator does: the first moves the process, the
    // others find their thread there already.
    for &tid in &tids {
        inside.apply(tid).unwrap();
    }
    assert_eq!(group.procs().unwrap(), vec![pid]);
    for &tid in &threads(pid) {
        assert_eq!(Value::read(Setting::Cgroup, tid).unwrap(), inside, "thread {}", tid.0);
        assert_eq!(proc_affinity(tid), "1", "thread {}", tid.0);
    }

    // Applied to a thread that is not the leader: the whole process moves back.
    original.apply(other).unwrap();
    for &tid in &threads(pid) {
        assert_eq!(Value::read(Setting::Cgroup, tid).unwrap(), original, "thread {}", tid.0);
    }
    assert!(group.procs().unwrap().is_empty());
}

#[test]
fn bad_groups_and_paths_are_refused() {
    require_root();
    let h = hierarchies().remove(0);
    let name = format!("test-{}-bad", std::process::id());
    // A CPU the root does not have.
    let err = CpusetGroup::create_in(&h, &name, &CpuSet::new([1000])).unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::InvalidInput, "{err}");
    assert!(err.to_string().contains("its parent may use"), "{err}");
    // ... leaves no group behind.
    assert!(CpusetGroup::open_in(&h, &name).is_err());
    assert!(CpusetGroup::create_in(&h, &name, &CpuSet::default()).is_err());
    assert!(CpusetGroup::create_in(&h, "a/b", &CpuSet::new([0])).is_err());

    let child = Sleeper::spawn();
    let err = h.move_to(child.pid(), "/schedlab-no-such-group").unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::NotFound, "{err}");
    let err = Value::Cgroup("/schedlab-no-such-group".into()).apply(child.pid()).unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::NotFound, "{err}");
    assert!(Value::parse(Setting::Cgroup, "schedlab/x").is_err());
    assert!(Value::parse(Setting::Cgroup, "/a/../b").is_err());
}

/// Not a test: the process [`Sleeper::spawn_threaded`] runs, a second thread and a
/// sleep.
#[test]
#[ignore = "helper process of cgroup_value_applied_to_a_thread_moves_its_whole_process"]
fn threaded_helper() {
    let t = std::thread::spawn(|| std::thread::sleep(Duration::from_secs(30)));
    std::thread::sleep(Duration::from_secs(30));
    let _ = t.join();
}
