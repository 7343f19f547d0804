//! The expiry clock on the real kernel: a raise whose lease runs out is undone by the
//! clock's own thread, with nothing else turning (no event loop here at all); a renewed
//! lease holds; an ended one is left to its owner. Needs root (raising nice); fails with
//! the reason otherwise.
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

/// Polls `cond` every millisecond for up to `within`; how long it took to hold.
fn holds_within(within: Duration, cond: impl Fn() -> bool) -> Option<Duration> {
    let start = Instant::now();
    while start.elapsed() < within {
        if cond() {
            return Some(start.elapsed());
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    None
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
    let start = monotonic_ns();
    for (i, h) in handles.iter().enumerate() {
        let ids = act.raise_nice(h, -20).unwrap();
        expiry.lease(RaiseId(i as u64), h.key(), act.values(h.key(), &ids), start + 50 * MS);
    }
    assert!(handles.iter().all(|h| nice(h) == -20));
    // The second is renewed, the third ended by its owner (who then owns its undoing).
    expiry.renew(RaiseId(1), start + 300 * MS);
    expiry.end(RaiseId(2));

    let took = holds_within(Duration::from_secs(2), || nice(&handles[0]) == 0)
        .expect("the first raise ended by the clock");
    assert!(took < Duration::from_millis(150), "ended {took:?} after, for a lease of 50 ms");
    assert_eq!(nice(&handles[1]), -20, "renewed: still raised");
    holds_within(Duration::from_secs(2), || nice(&handles[1]) == 0).expect("the renewed raise ended too");
    assert_eq!(nice(&handles[2]), -20, "ended by its owner: the clock leaves it");
    assert_eq!(expiry.expired(), 2);
    act.restore_all().unwrap();
    assert!(handles.iter().all(|h| nice(h) == 0));
    assert!(handles.iter().all(|h| !settings::get_policy(h.pid()).unwrap().reset_on_fork));
    drop(act);
    let _ = std::fs::remove_dir_all(&dir);
}
