//! The observation rows: windows, the processes seen in them, their syscall counts, CPU
//! bursts and dependency edges, plus trained models. One typed struct per row and one
//! insert and one query function per table, written out in SQL.

use rusqlite::{params, Row};
use schedlab_model::{Ns, Pid, Resource};
use serde_json::Value;

use crate::{Result, Store};

/// The id SQLite gave an observation window.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct WindowId(pub i64);

/// A process as schedlab addresses it: the pid plus the start time (field 22 of
/// `/proc/PID/stat`, clock ticks since boot), which tells apart two processes that had
/// the same pid.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ProcessKey {
    /// The pid.
    pub pid: Pid,
    /// The start time, in clock ticks since boot.
    pub start_time: u64,
}

/// One observation window: a stretch of time during which events were collected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Window {
    /// When the window started (`CLOCK_MONOTONIC`, or the simulated clock).
    pub started_ns: Ns,
    /// How long it lasted.
    pub duration_ns: Ns,
    /// The host name of the machine observed.
    pub host: String,
    /// The kernel release (`uname -r`), since scheduler behavior depends on it.
    pub kernel: String,
    /// How many events were received.
    pub events: u64,
    /// How many events the kernel dropped (ring buffer full): the window is incomplete
    /// when this is not zero.
    pub lost_events: u64,
}

/// A process seen during a window, as `/proc` described it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Process {
    /// The window.
    pub window: WindowId,
    /// The process.
    pub key: ProcessKey,
    /// The command name (`/proc/PID/comm`).
    pub comm: String,
    /// The executable (`/proc/PID/exe`); none for kernel threads or when unreadable.
    pub exe: Option<String>,
    /// The arguments (`/proc/PID/cmdline`), one string each.
    pub cmdline: Vec<String>,
    /// The cgroup v2 path (`/proc/PID/cgroup`).
    pub cgroup: String,
    /// The real user id.
    pub uid: u32,
    /// The parent's pid.
    pub ppid: Pid,
}

/// How many times a process made one system call during a window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SyscallCount {
    /// The window.
    pub window: WindowId,
    /// The process.
    pub key: ProcessKey,
    /// The system call number (x86-64 table, see `schedlab_model::syscall_name`).
    pub nr: u32,
    /// How many calls.
    pub count: u64,
}

/// Count, total, minimum and maximum of a set of durations: enough for the mean and the
/// range, kept instead of every duration so that a long window stays small.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DurationStats {
    /// How many durations.
    pub count: u64,
    /// Their sum.
    pub total_ns: Ns,
    /// The shortest (0 when `count` is 0).
    pub min_ns: Ns,
    /// The longest (0 when `count` is 0).
    pub max_ns: Ns,
}

/// A process's CPU bursts (time run before blocking or being preempted) and waits
/// (time off the CPU) during a window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Burst {
    /// The window.
    pub window: WindowId,
    /// The process.
    pub key: ProcessKey,
    /// The run bursts.
    pub run: DurationStats,
    /// The waits.
    pub wait: DurationStats,
}

/// A dependency SWAP detected: `requester` blocked on `resource`, and `provider` woke it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DependencyEdge {
    /// The window.
    pub window: WindowId,
    /// The task that waits.
    pub requester: ProcessKey,
    /// The task that provides the resource.
    pub provider: ProcessKey,
    /// The resource object.
    pub resource: Resource,
    /// The provider's confidence on the resource at the end of the window (0..2K).
    pub confidence: u32,
    /// How many times the provider woke the requester through the resource.
    pub wakeups: u64,
}

/// A trained model (a classifier, tuned parameters, …), kept as JSON by its trainer.
#[derive(Clone, Debug, PartialEq)]
pub struct Model {
    /// The model's unique name; saving a model with an existing name replaces it.
    pub name: String,
    /// What kind of model it is, so that a loader can check it before decoding the blob.
    pub kind: String,
    /// When it was trained, in nanoseconds since the Unix epoch.
    pub created_unix_ns: i64,
    /// The model itself.
    pub blob: Value,
}

/// Reads a [`ProcessKey`] from the two columns starting at `i`.
fn key_at(row: &Row, i: usize) -> rusqlite::Result<ProcessKey> {
    Ok(ProcessKey { pid: Pid(row.get(i)?), start_time: row.get(i + 1)? })
}

/// Reads a [`DurationStats`] from the four columns starting at `i`.
fn stats_at(row: &Row, i: usize) -> rusqlite::Result<DurationStats> {
    Ok(DurationStats {
        count: row.get(i)?,
        total_ns: row.get(i + 1)?,
        min_ns: row.get(i + 2)?,
        max_ns: row.get(i + 3)?,
    })
}

impl Store {
    /// Records a new observation window and returns its id.
    pub fn insert_window(&self, w: &Window) -> Result<WindowId> {
        self.conn
            .execute(
                "INSERT INTO windows (started_ns, duration_ns, host, kernel, events, lost_events)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![w.started_ns, w.duration_ns, w.host, w.kernel, w.events, w.lost_events],
            )
            .map_err(|e| self.err(e))?;
        Ok(WindowId(self.conn.last_insert_rowid()))
    }

    /// All windows, oldest first.
    pub fn windows(&self) -> Result<Vec<(WindowId, Window)>> {
        let sql = "SELECT id, started_ns, duration_ns, host, kernel, events, lost_events
                   FROM windows ORDER BY id";
        self.query(sql, [], |r| {
            let w = Window {
                started_ns: r.get(1)?,
                duration_ns: r.get(2)?,
                host: r.get(3)?,
                kernel: r.get(4)?,
                events: r.get(5)?,
                lost_events: r.get(6)?,
            };
            Ok((WindowId(r.get(0)?), w))
        })
    }

    /// Records a process seen in a window.
    pub fn insert_process(&self, p: &Process) -> Result<()> {
        let cmdline = serde_json::to_string(&p.cmdline).expect("strings always serialize");
        self.conn
            .execute(
                "INSERT INTO processes (window_id, pid, start_time, comm, exe, cmdline, cgroup, uid, ppid)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                params![
                    p.window.0,
                    p.key.pid.0,
                    p.key.start_time,
                    p.comm,
                    p.exe,
                    cmdline,
                    p.cgroup,
                    p.uid,
                    p.ppid.0
                ],
            )
            .map_err(|e| self.err(e))?;
        Ok(())
    }

    /// The processes seen in a window, by pid and start time.
    pub fn processes(&self, window: WindowId) -> Result<Vec<Process>> {
        let sql = "SELECT pid, start_time, comm, exe, cmdline, cgroup, uid, ppid FROM processes
                   WHERE window_id = ?1 ORDER BY pid, start_time";
        let rows = self.query(sql, [window.0], |r| {
            Ok((key_at(r, 0)?, r.get(2)?, r.get(3)?, r.get::<_, String>(4)?, r.get(5)?, r.get(6)?, r.get(7)?))
        })?;
        rows.into_iter()
            .map(|(key, comm, exe, cmdline, cgroup, uid, ppid)| {
                let cmdline = serde_json::from_str(&cmdline)
                    .map_err(|_| self.bad_value("processes.cmdline", cmdline))?;
                Ok(Process { window, key, comm, exe, cmdline, cgroup, uid, ppid: Pid(ppid) })
            })
            .collect()
    }

    /// Records a process's count of one system call in a window.
    pub fn insert_syscall_count(&self, c: &SyscallCount) -> Result<()> {
        self.conn
            .execute(
                "INSERT INTO syscall_counts (window_id, pid, start_time, nr, count) VALUES (?1, ?2, ?3, ?4, ?5)",
                params![c.window.0, c.key.pid.0, c.key.start_time, c.nr, c.count],
            )
            .map_err(|e| self.err(e))?;
        Ok(())
    }

    /// The syscall counts of a window, by process and syscall number.
    pub fn syscall_counts(&self, window: WindowId) -> Result<Vec<SyscallCount>> {
        let sql = "SELECT pid, start_time, nr, count FROM syscall_counts
                   WHERE window_id = ?1 ORDER BY pid, start_time, nr";
        self.query(sql, [window.0], |r| {
            Ok(SyscallCount { window, key: key_at(r, 0)?, nr: r.get(2)?, count: r.get(3)? })
        })
    }

    /// Records a process's burst statistics for a window.
    pub fn insert_burst(&self, b: &Burst) -> Result<()> {
        self.conn
            .execute(
                "INSERT INTO bursts (window_id, pid, start_time,
                     run_count, run_total_ns, run_min_ns, run_max_ns,
                     wait_count, wait_total_ns, wait_min_ns, wait_max_ns)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
                params![
                    b.window.0,
                    b.key.pid.0,
                    b.key.start_time,
                    b.run.count,
                    b.run.total_ns,
                    b.run.min_ns,
                    b.run.max_ns,
                    b.wait.count,
                    b.wait.total_ns,
                    b.wait.min_ns,
                    b.wait.max_ns
                ],
            )
            .map_err(|e| self.err(e))?;
        Ok(())
    }

    /// The burst statistics of a window, by process.
    pub fn bursts(&self, window: WindowId) -> Result<Vec<Burst>> {
        let sql = "SELECT pid, start_time, run_count, run_total_ns, run_min_ns, run_max_ns,
                          wait_count, wait_total_ns, wait_min_ns, wait_max_ns
                   FROM bursts WHERE window_id = ?1 ORDER BY pid, start_time";
        self.query(sql, [window.0], |r| {
            Ok(Burst { window, key: key_at(r, 0)?, run: stats_at(r, 2)?, wait: stats_at(r, 6)? })
        })
    }

    /// Records a dependency edge detected in a window. The resource is kept as its kind
    /// (for queries) and its JSON form (to read it back exactly).
    pub fn insert_dependency_edge(&self, d: &DependencyEdge) -> Result<()> {
        let resource = serde_json::to_string(&d.resource).expect("a resource always serializes");
        self.conn
            .execute(
                "INSERT INTO dependency_edges (window_id, requester_pid, requester_start,
                     provider_pid, provider_start, resource_kind, resource, confidence, wakeups)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                params![
                    d.window.0,
                    d.requester.pid.0,
                    d.requester.start_time,
                    d.provider.pid.0,
                    d.provider.start_time,
                    d.resource.kind(),
                    resource,
                    d.confidence,
                    d.wakeups
                ],
            )
            .map_err(|e| self.err(e))?;
        Ok(())
    }

    /// The dependency edges of a window, in the order they were recorded.
    pub fn dependency_edges(&self, window: WindowId) -> Result<Vec<DependencyEdge>> {
        let sql = "SELECT requester_pid, requester_start, provider_pid, provider_start,
                          resource, confidence, wakeups
                   FROM dependency_edges WHERE window_id = ?1 ORDER BY rowid";
        let rows = self.query(sql, [window.0], |r| {
            Ok((key_at(r, 0)?, key_at(r, 2)?, r.get::<_, String>(4)?, r.get(5)?, r.get(6)?))
        })?;
        rows.into_iter()
            .map(|(requester, provider, resource, confidence, wakeups)| {
                let resource = serde_json::from_str(&resource)
                    .map_err(|_| self.bad_value("dependency_edges.resource", resource))?;
                Ok(DependencyEdge { window, requester, provider, resource, confidence, wakeups })
            })
            .collect()
    }

    /// Saves a trained model, replacing any model of the same name.
    pub fn save_model(&self, m: &Model) -> Result<()> {
        let blob = serde_json::to_string(&m.blob).expect("a JSON value always serializes");
        self.conn
            .execute(
                "INSERT OR REPLACE INTO models (name, kind, created_unix_ns, blob) VALUES (?1, ?2, ?3, ?4)",
                params![m.name, m.kind, m.created_unix_ns, blob],
            )
            .map_err(|e| self.err(e))?;
        Ok(())
    }

    /// The model named `name`, if any.
    pub fn model(&self, name: &str) -> Result<Option<Model>> {
        let sql = "SELECT name, kind, created_unix_ns, blob FROM models WHERE name = ?1";
        let rows = self.query(sql, [name], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get::<_, i64>(2)?, r.get::<_, String>(3)?))
        })?;
        rows.into_iter()
            .next()
            .map(|(name, kind, created_unix_ns, blob)| {
                let blob = serde_json::from_str(&blob).map_err(|_| self.bad_value("models.blob", blob))?;
                Ok(Model { name, kind, created_unix_ns, blob })
            })
            .transpose()
    }

    /// Runs a query and collects its rows, wrapping errors with the file's name.
    pub(crate) fn query<T, P: rusqlite::Params>(
        &self,
        sql: &str,
        params: P,
        f: impl FnMut(&Row) -> rusqlite::Result<T>,
    ) -> Result<Vec<T>> {
        let run = || -> rusqlite::Result<Vec<T>> {
            let mut stmt = self.conn.prepare_cached(sql)?;
            let rows = stmt.query_map(params, f)?;
            rows.collect()
        };
        run().map_err(|e| self.err(e))
    }
}
