//! The schema and its migrations: the file's version is SQLite's `PRAGMA user_version`,
//! and migration `i` (counting from 1) takes a file from version `i - 1` to `i`.
//!
//! A migration is never edited once released; a change to the schema is a new migration
//! appended to [`MIGRATIONS`].

use rusqlite::{Connection, TransactionBehavior};

/// The migrations, oldest first; the schema version of a file is how many were applied.
pub const MIGRATIONS: &[&str] = &[
    // 1: observations. Processes are addressed by pid plus start time (field 22 of
    // /proc/PID/stat, clock ticks since boot) because pids are reused; every row of a
    // window is deleted with the window.
    "
    CREATE TABLE windows (
        id          INTEGER PRIMARY KEY,
        started_ns  INTEGER NOT NULL,
        duration_ns INTEGER NOT NULL,
        host        TEXT    NOT NULL,
        kernel      TEXT    NOT NULL,
        events      INTEGER NOT NULL,
        lost_events INTEGER NOT NULL
    );
    CREATE TABLE processes (
        window_id  INTEGER NOT NULL REFERENCES windows(id) ON DELETE CASCADE,
        pid        INTEGER NOT NULL,
        start_time INTEGER NOT NULL,
        comm       TEXT    NOT NULL,
        exe        TEXT,
        cmdline    TEXT    NOT NULL,
        cgroup     TEXT    NOT NULL,
        uid        INTEGER NOT NULL,
        ppid       INTEGER NOT NULL,
        PRIMARY KEY (window_id, pid, start_time)
    );
    CREATE TABLE syscall_counts (
        window_id  INTEGER NOT NULL REFERENCES windows(id) ON DELETE CASCADE,
        pid        INTEGER NOT NULL,
        start_time INTEGER NOT NULL,
        nr         INTEGER NOT NULL,
        count      INTEGER NOT NULL,
        PRIMARY KEY (window_id, pid, start_time, nr)
    );
    CREATE TABLE bursts (
        window_id     INTEGER NOT NULL REFERENCES windows(id) ON DELETE CASCADE,
        pid           INTEGER NOT NULL,
        start_time    INTEGER NOT NULL,
        run_count     INTEGER NOT NULL,
        run_total_ns  INTEGER NOT NULL,
        run_min_ns    INTEGER NOT NULL,
        run_max_ns    INTEGER NOT NULL,
        wait_count    INTEGER NOT NULL,
        wait_total_ns INTEGER NOT NULL,
        wait_min_ns   INTEGER NOT NULL,
        wait_max_ns   INTEGER NOT NULL,
        PRIMARY KEY (window_id, pid, start_time)
    );
    CREATE TABLE dependency_edges (
        window_id           INTEGER NOT NULL REFERENCES windows(id) ON DELETE CASCADE,
        requester_pid       INTEGER NOT NULL,
        requester_start     INTEGER NOT NULL,
        provider_pid        INTEGER NOT NULL,
        provider_start      INTEGER NOT NULL,
        resource_kind       TEXT    NOT NULL,
        resource            TEXT    NOT NULL,
        confidence          INTEGER NOT NULL,
        wakeups             INTEGER NOT NULL
    );
    CREATE INDEX dependency_edges_window ON dependency_edges (window_id);
    ",
    // 2: knowledge kept across windows, and the journal of changes made to processes.
    "
    CREATE TABLE pfs (
        program TEXT PRIMARY KEY,
        entries TEXT NOT NULL
    );
    CREATE TABLE models (
        name            TEXT PRIMARY KEY,
        kind            TEXT    NOT NULL,
        created_unix_ns INTEGER NOT NULL,
        blob            TEXT    NOT NULL
    );
    CREATE TABLE journal (
        id           INTEGER PRIMARY KEY,
        time_unix_ns INTEGER NOT NULL,
        pid          INTEGER NOT NULL,
        start_time   INTEGER NOT NULL,
        what         TEXT    NOT NULL
            CHECK (what IN ('affinity', 'nice', 'policy', 'slice', 'cgroup')),
        old_value    TEXT    NOT NULL,
        new_value    TEXT    NOT NULL,
        applied      INTEGER NOT NULL DEFAULT 0,
        undone       INTEGER NOT NULL DEFAULT 0
    );
    CREATE INDEX journal_pending ON journal (undone, id);
    ",
    // 3: SWAP's confidence kept across runs, per provider program and resource kind.
    "
    CREATE TABLE swap_confidence (
        program    TEXT    NOT NULL,
        kind       TEXT    NOT NULL,
        confidence INTEGER NOT NULL,
        PRIMARY KEY (program, kind)
    );
    ",
    // 4: the boot each journal entry was made in (`/proc/sys/kernel/random/boot_id`): an
    // entry of another boot names processes, threads and CPUs of a machine that is no
    // more, and is closed, not restored. Entries from before have '' (unknown).
    "
    ALTER TABLE journal ADD COLUMN boot_id TEXT NOT NULL DEFAULT '';
    ",
    // 5: the journal takes `rttime` (RLIMIT_RTTIME, the kernel's bound on a real-time
    // policy schedlab gives). SQLite cannot change a CHECK: the table is made anew.
    "
    CREATE TABLE journal_5 (
        id           INTEGER PRIMARY KEY,
        time_unix_ns INTEGER NOT NULL,
        pid          INTEGER NOT NULL,
        start_time   INTEGER NOT NULL,
        what         TEXT    NOT NULL
            CHECK (what IN ('affinity', 'nice', 'policy', 'slice', 'cgroup', 'rttime')),
        old_value    TEXT    NOT NULL,
        new_value    TEXT    NOT NULL,
        applied      INTEGER NOT NULL DEFAULT 0,
        undone       INTEGER NOT NULL DEFAULT 0,
        boot_id      TEXT    NOT NULL DEFAULT ''
    );
    INSERT INTO journal_5 (id, time_unix_ns, pid, start_time, what, old_value, new_value, applied, undone, boot_id)
        SELECT id, time_unix_ns, pid, start_time, what, old_value, new_value, applied, undone, boot_id FROM journal;
    DROP TABLE journal;
    ALTER TABLE journal_5 RENAME TO journal;
    CREATE INDEX journal_pending ON journal (undone, id);
    ",
    // 6: what `schedlab bench suite` found of an enforcer on a kernel, which
    // `schedlab run --enforcer auto` heeds.
    "
    CREATE TABLE enforcer_trials (
        id        INTEGER PRIMARY KEY,
        kernel    TEXT    NOT NULL,
        enforcer  TEXT    NOT NULL,
        at_unix_s INTEGER NOT NULL,
        complete  INTEGER NOT NULL,
        losses    INTEGER NOT NULL,
        summary   TEXT    NOT NULL
    );
    CREATE INDEX enforcer_trials_kernel ON enforcer_trials (kernel, enforcer, id);
    ",
    // 7: each program's habits (behavior::habits), learned from its processes' lives:
    // its lives of evidence and the CPU-bound ones among them (decayed), and when it was
    // last seen (the daemon's count of lives, for pruning).
    "
    CREATE TABLE program_habits (
        program   TEXT    PRIMARY KEY,
        lives     REAL    NOT NULL,
        cpu_bound REAL    NOT NULL,
        seen      INTEGER NOT NULL
    );
    ",
    // 8: whether a program was seen drawing for a person (a display library mapped):
    // never lowered on its habits.
    "
    ALTER TABLE program_habits ADD COLUMN draws INTEGER NOT NULL DEFAULT 0;
    ",
];

/// The schema version this build writes and reads: the number of migrations.
pub const LATEST_VERSION: u32 = MIGRATIONS.len() as u32;

/// What [`migrate`] found.
pub(crate) enum Outcome {
    /// The file is at [`LATEST_VERSION`] (possibly after migrations).
    Current,
    /// The file's version is newer than [`LATEST_VERSION`]; nothing was changed.
    TooNew(u32),
}

/// The file's schema version.
pub(crate) fn version(conn: &Connection) -> rusqlite::Result<u32> {
    conn.pragma_query_value(None, "user_version", |row| row.get(0))
}

/// Brings the file up to [`LATEST_VERSION`], one migration per transaction, so that a
/// crash or a failed migration leaves the file at the previous version. Each transaction
/// takes the write lock first and reads the version again, so two processes opening an
/// old file at once apply each migration only once.
pub(crate) fn migrate(conn: &mut Connection) -> rusqlite::Result<Outcome> {
    loop {
        let found = version(conn)?;
        if found > LATEST_VERSION {
            return Ok(Outcome::TooNew(found));
        }
        if found == LATEST_VERSION {
            return Ok(Outcome::Current);
        }
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let v = version(&tx)?;
        if v < LATEST_VERSION {
            tx.execute_batch(MIGRATIONS[v as usize])?;
            tx.pragma_update(None, "user_version", v + 1)?;
        }
        tx.commit()?;
    }
}
