//! Raises end on a clock of their own. The event loop ends a boost when its requester
//! wakes or `boost_max_ms` passes, but the loop can stall: on the control socket, on
//! SQLite's busy timeout, on a netlink dump, on a `stat()` over NFS. A raise must end
//! whatever the loop is doing, so each one is also a lease held here: a thread of its
//! own (at the reaction thread's priority, [`super::priority`]) sleeps until the
//! earliest lease runs out, and then writes the old values back itself, to the threads
//! that still have what the raise set (as [`crate::actuator::write_back`] does for
//! every restore), without the journal: the loop, when it turns again, ends the raise
//! as usual, finds nothing left to write, and closes its entries.
//!
//! The loop renews a lease each time the requester blocks again
//! ([`super::core::Decision::Renew`]); a lease runs to the block plus `boost_max_ms`
//! plus the linger ([`super::core::BOOST_LINGER_NS`]), the longest the loop itself
//! would keep the raise.

use std::collections::HashMap;
use std::io;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

use schedlab_model::Ns;
use schedlab_store::ProcessKey;

use super::core::RaiseId;
use crate::process::ProcessHandle;
use crate::settings::Value;

/// One raise's lease: what to write back to which process, and by when.
#[derive(Debug)]
struct Lease {
    process: ProcessKey,
    /// (value set, value to write back), in the order they were set: undone last first.
    writes: Vec<(Value, Value)>,
    /// The monotonic clock, ns.
    until: Ns,
}

/// The leases, and the thread's instructions.
#[derive(Debug, Default)]
struct Leases {
    by_id: HashMap<RaiseId, Lease>,
    /// How many raises the clock ended (the loop did not in time).
    expired: u64,
    /// The thread waits with no deadline (there was no lease): a new lease must wake
    /// it. Otherwise it wakes by itself by the time the earliest lease it saw runs out,
    /// which is never later than a new lease's by more than the new one's reaction time
    /// (every lease runs the same `boost_max_ms` from a block), so a boost needs no
    /// wake-up of this thread (a real-time one: it would preempt the workload).
    idle: bool,
    stop: bool,
}

#[derive(Debug, Default)]
struct Shared {
    leases: Mutex<Leases>,
    /// Signalled when a lease is added or moved, or the thread must stop.
    changed: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Leases> {
        // A panic while holding the lock leaves plain data behind: go on with it.
        self.leases.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The expiry clock: a thread that ends raises whose lease ran out. Stopped (and joined)
/// when dropped; the leases left then are the daemon's to restore.
#[derive(Debug)]
pub struct Expiry {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl Expiry {
    /// Starts the clock's thread.
    pub fn start() -> io::Result<Expiry> {
        let shared = Arc::new(Shared::default());
        let theirs = Arc::clone(&shared);
        let thread = std::thread::Builder::new().name("schedlab-expiry".into()).spawn(move || {
            // Its own priority: the machine's load must not delay an end either.
            let _ = super::priority::Elevation::raise();
            run(&theirs);
        })?;
        Ok(Expiry { shared, thread: Some(thread) })
    }

    /// Raise `id` of `process` wrote `writes` ((new, old) pairs, in order) and holds
    /// until `until` (the monotonic clock, ns) at the latest.
    pub fn lease(&self, id: RaiseId, process: ProcessKey, writes: Vec<(Value, Value)>, until: Ns) {
        let mut leases = self.shared.lock();
        leases.by_id.insert(id, Lease { process, writes, until });
        if leases.idle {
            self.shared.changed.notify_one();
        }
    }

    /// Raise `id` holds until `until` now.
    pub fn renew(&self, id: RaiseId, until: Ns) {
        if let Some(lease) = self.shared.lock().by_id.get_mut(&id) {
            lease.until = until;
        }
        // The thread sleeps to the earliest lease; a later one needs no wake-up.
    }

    /// Raise `id` ended (the loop ends it); its lease is dropped.
    pub fn end(&self, id: RaiseId) {
        self.shared.lock().by_id.remove(&id);
    }

    /// How many raises the clock ended because the loop had not in time.
    pub fn expired(&self) -> u64 {
        self.shared.lock().expired
    }
}

impl Drop for Expiry {
    fn drop(&mut self) {
        self.shared.lock().stop = true;
        self.shared.changed.notify_all();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The thread: sleeps to the earliest lease, ends the leases that ran out.
fn run(shared: &Shared) {
    let mut leases = shared.lock();
    while !leases.stop {
        let now = crate::process::monotonic_ns();
        let due: Vec<RaiseId> =
            leases.by_id.iter().filter(|(_, l)| l.until <= now).map(|(&id, _)| id).collect();
        for id in due {
            if let Some(lease) = leases.by_id.remove(&id) {
                end(&lease);
                leases.expired += 1;
            }
        }
        leases = match leases.by_id.values().map(|l| l.until).min() {
            None => {
                leases.idle = true;
                let mut woken = shared.changed.wait(leases).unwrap_or_else(|e| e.into_inner());
                woken.idle = false;
                woken
            }
            Some(next) => {
                let wait = Duration::from_nanos(next.saturating_sub(now));
                shared.changed.wait_timeout(leases, wait).unwrap_or_else(|e| e.into_inner()).0
            }
        };
    }
}

/// Writes a lease's old values back, last set first, where the raise's values still
/// are; a process gone or not the same is left.
fn end(lease: &Lease) {
    let Ok(process) = ProcessHandle::for_key(lease.process) else { return };
    if !process.is_same() {
        return;
    }
    for (new, old) in lease.writes.iter().rev() {
        let _ = crate::actuator::write_back(&process, new, old);
    }
}
