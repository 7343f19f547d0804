//! The observer on the real kernel (root, BTF and tracepoints are needed: without them
//! these tests fail with the reason, they do not pass silently).
#![cfg(target_os = "linux")]

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use schedlab_live::dependencies::DependencyRecorder;
use schedlab_live::observer::{Observer, ObserverOptions};
use schedlab_model::{Event, EventKind, EventSink, Pid, Resource};

/// A child killed and reaped however the test ends.
struct Reaped(Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn python(script: &str) -> Reaped {
    let child = Command::new("python3")
        .args(["-c", script])
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3 runs (it is on these machines)");
    Reaped(child)
}

fn start() -> Observer {
    Observer::start(ObserverOptions::default())
        .unwrap_or_else(|e| panic!("the observer cannot run here: {e}"))
}

#[derive(Default)]
struct Collect(Vec<Event>);

impl EventSink for Collect {
    fn event(&mut self, e: &Event) {
        self.0.push(e.clone());
    }
}

struct Both<'a>(&'a mut Collect, &'a mut DependencyRecorder);

impl EventSink for Both<'_> {
    fn event(&mut self, e: &Event) {
        self.0.event(e);
        self.1.event(e);
    }
}

/// Run as a child (`SCHEDLAB_TEST_HELPER=getppid`): makes exactly 5000 getppid calls.
#[test]
fn helper_getppid() {
    if std::env::var_os("SCHEDLAB_TEST_HELPER").is_some_and(|v| v == "getppid") {
        for _ in 0..5000 {
            std::hint::black_box(std::os::unix::process::parent_id());
        }
    }
}

#[test]
fn getppid_calls_of_a_child_are_counted_exactly() {
    let obs = start();
    let mut child = Reaped(
        Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "helper_getppid", "--test-threads=1", "--quiet"])
            .env("SCHEDLAB_TEST_HELPER", "getppid")
            .stdout(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let status = child.0.wait().unwrap();
    assert!(status.success());
    let pid = child.0.id();
    let counts = obs.syscall_counts().unwrap();
    let getppid = schedlab_model::syscall_nr("getppid").unwrap();
    assert_eq!(counts.get(&(pid, getppid)), Some(&5000), "getppid count of pid {pid}");
    assert!(counts.keys().all(|&(tgid, _)| tgid != std::process::id()), "the observer does not count itself");
    assert_eq!(obs.lost_events().unwrap(), 0);
}

#[test]
fn a_pipe_reader_blocks_on_the_pipe_and_its_writer_is_found_as_provider() {
    let mut obs = start();
    // The parent writes one byte every 10 ms; the forked child reads them, blocking
    // on the empty pipe each time.
    let mut child = python(
        "import os, sys, time\n\
         r, w = os.pipe()\n\
         pid = os.fork()\n\
         if pid == 0:\n\
         \x20   os.close(w)\n\
         \x20   for _ in range(30): os.read(r, 1)\n\
         \x20   os._exit(0)\n\
         os.close(r)\n\
         print(pid, os.getpid(), flush=True)\n\
         for _ in range(30):\n\
         \x20   time.sleep(0.01)\n\
         \x20   os.write(w, b'x')\n\
         os.waitpid(pid, 0)\n",
    );
    let mut line = String::new();
    BufReader::new(child.0.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let pids: Vec<u32> = line.split_whitespace().map(|s| s.parse().unwrap()).collect();
    let (reader, writer) = (Pid(pids[0]), Pid(pids[1]));

    let mut events = Collect::default();
    let mut deps = DependencyRecorder::new();
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        obs.poll(&mut Both(&mut events, &mut deps), Duration::from_millis(100)).unwrap();
        if child.0.try_wait().unwrap().is_some() {
            obs.poll(&mut Both(&mut events, &mut deps), Duration::from_millis(50)).unwrap();
            break;
        }
    }
    assert!(child.0.try_wait().unwrap().is_some_and(|s| s.success()), "the pipe pair finished in time");

    let blocks: Vec<Resource> = events
        .0
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::Block { pid, resource: Some(r) } if pid == reader => Some(r),
            _ => None,
        })
        .collect();
    assert!(
        blocks.iter().filter(|r| matches!(r, Resource::Pipe { write: false, .. })).count() >= 20,
        "the reader blocked on the read side of a pipe: {blocks:?}"
    );
    let woken_by_writer = events
        .0
        .iter()
        .filter(|e| matches!(e.kind, EventKind::Wakeup { waker, wakee, .. } if waker == writer && wakee == reader))
        .count();
    assert!(woken_by_writer >= 20, "the writer woke the reader {woken_by_writer} times");

    let found = deps.dependencies();
    let edge = found
        .iter()
        .find(|d| d.requester == reader && d.provider == writer)
        .unwrap_or_else(|| panic!("no reader → writer dependency in {found:?}"));
    assert!(matches!(edge.resource, Resource::Pipe { write: true, .. }), "{edge:?}");
    assert!(edge.wakeups >= 20 && edge.confidence > 0, "{edge:?}");
    assert_eq!(obs.lost_events().unwrap(), 0);
}

#[test]
fn a_process_waiting_for_a_signal_depends_on_its_sender() {
    let mut obs = start();
    let mut child = python(
        "import os, signal, time\n\
         signal.signal(signal.SIGUSR1, lambda *a: None)\n\
         pid = os.fork()\n\
         if pid == 0:\n\
         \x20   for _ in range(20): signal.pause()\n\
         \x20   os._exit(0)\n\
         print(pid, os.getpid(), flush=True)\n\
         time.sleep(0.05)\n\
         for _ in range(20):\n\
         \x20   os.kill(pid, signal.SIGUSR1)\n\
         \x20   time.sleep(0.01)\n\
         os.waitpid(pid, 0)\n",
    );
    let mut line = String::new();
    BufReader::new(child.0.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let pids: Vec<u32> = line.split_whitespace().map(|s| s.parse().unwrap()).collect();
    let (waiter, sender) = (Pid(pids[0]), Pid(pids[1]));
    let mut events = Collect::default();
    let mut deps = DependencyRecorder::new();
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        obs.poll(&mut Both(&mut events, &mut deps), Duration::from_millis(100)).unwrap();
        if child.0.try_wait().unwrap().is_some() {
            obs.poll(&mut Both(&mut events, &mut deps), Duration::from_millis(50)).unwrap();
            break;
        }
    }
    assert!(child.0.try_wait().unwrap().is_some_and(|s| s.success()), "the signal pair finished in time");
    let found = deps.dependencies();
    let edge = found
        .iter()
        .find(|d| d.requester == waiter && d.provider == sender)
        .unwrap_or_else(|| panic!("no waiter → sender dependency in {found:?}"));
    assert_eq!(edge.resource, Resource::Signal { pid: waiter.0 });
    assert!(edge.wakeups >= 10, "{edge:?}");
}
