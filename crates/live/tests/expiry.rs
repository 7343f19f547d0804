//! The expiry clock on the real kernel: a raise whose lease runs out is undone by the
//! clock's own thread, with nothing else turning (no event loop here at all), never
//! before its lease ends; a renewed lease holds; an ended one is left to its owner. Needs
//! root (raising nice); fails with the reason otherwise.
//!
//! How soon after its lease a raise ends is the clock thread's wake-up latency, which a
//! loaded machine stretches: it is printed, and bounded only by a hang guard.
#![cfg(target_os = "linux")]

use std::process::{Child, Command};
use std::time::{Duration, Instant};

use schedlab_live::actuator::Actuator;
use schedlab_live::daemon::core::RaiseId;
use schedlab_live::daemon::expiry::Expiry;
use schedlab_live::process::{monotonic_ns, ProcessHandle};
use schedlab_live::settings;
use schedlab_model::Pid;
use schedlab_store::Store;

struct Sleeper(Child);

impl Drop for Sleeper {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

const MS: u64 = 1_000_000;

/// How long a lease's end may take before the test calls the clock hung.
const HANG: Duration = Duration::from_secs(30);

/// Polls `raised` every millisecond until it turns false; asserts that it never does
/// before `lease_end` (the monotonic clock, ns): a read that shows the raise gone and
/// finished before the lease ended is an early end. Returns how long after the lease
/// end it was seen gone.
fn ends_after(lease_end: u64, what: &str, raised: impl Fn() -> bool) -> Duration {
    let start = Instant::now();
    loop {
        let still = raised();
        let read_by = monotonic_ns();
        if !still {
            assert!(
                read_by >= lease_end,
                "{what} ended {} µs before its lease",
                (lease_end - read_by) / 1_000
            );
            return Duration::from_nanos(read_by - lease_end);
        }
        assert!(start.elapsed() < HANG, "{what} still raised {HANG:?} after the test began waiting");
        std::thread::sleep(Duration::from_millis(1));
    }
}

#[test]
fn a_raise_ends_when_its_lease_runs_out_whatever_the_loop_does() {
    // SAFETY: no arguments.
    assert_eq!(unsafe { libc::geteuid() }, 0, "the expiry test needs root (raising another process's nice)");
    let dir = std::env::temp_dir().join(format!("schedlab-expiry-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let store = Store::open(dir.join("s.db")).unwrap();
    let mut act = Actuator::new(&store);
    let expiry = Expiry::start().unwrap();
    let children: Vec<Sleeper> =
        (0..3).map(|_| Sleeper(Command::new("sleep").arg("30").spawn().unwrap())).collect();
    let handles: Vec<ProcessHandle> =
        children.iter().map(|c| ProcessHandle::open(Pid(c.0.id())).unwrap()).collect();
    let nice = |h: &ProcessHandle| settings::get_nice(h.pid()).unwrap();
    // What the children run with before the raise: this test's own nice.
    let nice0 = settings::get_nice(Pid(0)).unwrap();
    let start = monotonic_ns();
    for (i, h) in handles.iter().enumerate() {
        let ids = act.raise_nice(h, -20).unwrap();
        expiry.lease(RaiseId(i as u64), h.key(), act.values(h.key(), &ids), start + 50 * MS);
    }
    assert!(handles.iter().all(|h| nice(h) == -20));
    // The second is renewed, the third ended by its owner (who then owns its undoing).
    let renewed = start + 300 * MS;
    expiry.renew(RaiseId(1), renewed);
    expiry.end(RaiseId(2));

    let late = ends_after(start + 50 * MS, "the first raise", || nice(&handles[0]) != nice0);
    eprintln!("the first raise ended {late:?} after its lease of 50 ms");
    let late = ends_after(renewed, "the renewed raise", || nice(&handles[1]) != nice0);
    eprintln!("the renewed raise ended {late:?} after its lease of 300 ms");
    assert_eq!(nice(&handles[2]), -20, "ended by its owner: the clock leaves it");
    assert_eq!(expiry.expired(), 2);
    act.restore_all().unwrap();
    assert!(handles.iter().all(|h| nice(h) == nice0));
    assert!(handles.iter().all(|h| !settings::get_policy(h.pid()).unwrap().reset_on_fork));
    drop(act);
    let _ = std::fs::remove_dir_all(&dir);
}
