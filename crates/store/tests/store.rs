//! The store end to end on real files: creation, migration, refusal of files it must not
//! touch, locking, and a round trip through every table.

use std::path::{Path, PathBuf};

use schedlab_behavior::pfs::{Pfs, PfsEntry, PfsState, PfsStore};
use schedlab_model::{FlockKind, Pid, Resource};
use schedlab_store::schema::{LATEST_VERSION, MIGRATIONS};
use schedlab_store::{
    Burst, Change, DependencyEdge, DurationStats, Error, Model, Process, ProcessKey, Setting, Store,
    SyscallCount, Window, WindowId,
};

/// A fresh directory for one test, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("schedlab-store-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    fn file(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn window() -> Window {
    Window {
        started_ns: 1_000,
        duration_ns: 5_000_000_000,
        host: "box".into(),
        kernel: "6.12.0".into(),
        events: 123_456,
        lost_events: 7,
    }
}

fn key(pid: u32, start_time: u64) -> ProcessKey {
    ProcessKey { pid: Pid(pid), start_time }
}

fn raw(path: &Path) -> rusqlite::Connection {
    rusqlite::Connection::open(path).unwrap()
}

#[test]
fn fresh_open_creates_directories_and_the_latest_schema() {
    let dir = TempDir::new("fresh");
    let path = dir.file("a/b/schedlab.db");
    let store = Store::open(&path).unwrap();
    assert_eq!(store.path(), path);
    assert_eq!(store.schema_version().unwrap(), LATEST_VERSION);
    assert_eq!(LATEST_VERSION as usize, MIGRATIONS.len());
    assert!(store.windows().unwrap().is_empty());
    assert!(store.journal_pending().unwrap().is_empty());
    drop(store);
    // Opening again changes nothing.
    assert_eq!(Store::open(&path).unwrap().schema_version().unwrap(), LATEST_VERSION);
}

#[test]
fn migrates_a_version_1_file_and_keeps_its_data() {
    let dir = TempDir::new("migrate");
    let path = dir.file("old.db");
    {
        let conn = raw(&path);
        conn.execute_batch(MIGRATIONS[0]).unwrap();
        conn.pragma_update(None, "user_version", 1).unwrap();
        conn.execute(
            "INSERT INTO windows (started_ns, duration_ns, host, kernel, events, lost_events)
             VALUES (1000, 5000000000, 'box', '6.12.0', 123456, 7)",
            [],
        )
        .unwrap();
    }
    let store = Store::open(&path).unwrap();
    assert_eq!(store.schema_version().unwrap(), LATEST_VERSION);
    assert_eq!(store.windows().unwrap(), vec![(WindowId(1), window())]);
    let change = Change {
        time_unix_ns: 1,
        target: key(1, 2),
        what: Setting::Nice,
        old_value: "0".into(),
        new_value: "-5".into(),
        boot_id: "b".into(),
    };
    store.journal_insert(&change).unwrap();
    assert_eq!(store.journal_pending().unwrap().len(), 1, "tables of later migrations exist");
}

#[test]
fn refuses_a_file_from_a_newer_schedlab() {
    let dir = TempDir::new("newer");
    let path = dir.file("new.db");
    drop(Store::open(&path).unwrap());
    raw(&path).pragma_update(None, "user_version", LATEST_VERSION + 1).unwrap();
    let e = Store::open(&path).unwrap_err();
    assert!(
        matches!(e, Error::TooNew { found, supported, .. } if found == LATEST_VERSION + 1 && supported == LATEST_VERSION),
        "{e:?}"
    );
    let msg = e.to_string();
    assert!(msg.contains(&path.display().to_string()) && msg.contains("upgrade schedlab"), "{msg}");
    let version: u32 = raw(&path).pragma_query_value(None, "user_version", |r| r.get(0)).unwrap();
    assert_eq!(version, LATEST_VERSION + 1, "the file is left as it was");
}

#[test]
fn reports_a_locked_file() {
    let dir = TempDir::new("locked");
    let path = dir.file("locked.db");
    let store = Store::open(&path).unwrap();
    let holder = raw(&path);
    holder.execute_batch("BEGIN EXCLUSIVE").unwrap();

    // In WAL mode readers do not wait for a writer: a current file opens; writing is
    // what the lock refuses, with the file named.
    let second = Store::open(&path).expect("a current store opens while another process writes");
    let e = second.insert_window(&window()).unwrap_err();
    assert!(matches!(e, Error::Locked { .. }), "{e:?}");
    let msg = e.to_string();
    assert!(msg.contains(&path.display().to_string()) && msg.contains("locked by another process"), "{msg}");

    let e = store.insert_window(&window()).unwrap_err();
    assert!(matches!(e, Error::Locked { .. }), "an open store reports the lock too: {e:?}");

    holder.execute_batch("COMMIT").unwrap();
    store.insert_window(&window()).unwrap();
}

#[test]
fn reports_a_file_that_is_not_a_store_and_leaves_it_alone() {
    let dir = TempDir::new("corrupt");
    let path = dir.file("garbage.db");
    let garbage: Vec<u8> = b"this is not an SQLite database\n".iter().copied().cycle().take(8192).collect();
    std::fs::write(&path, &garbage).unwrap();
    let e = Store::open(&path).unwrap_err();
    assert!(matches!(e, Error::Corrupt { .. }), "{e:?}");
    let msg = e.to_string();
    assert!(msg.contains(&path.display().to_string()) && msg.contains("not a valid schedlab store"), "{msg}");
    assert_eq!(std::fs::read(&path).unwrap(), garbage, "never overwritten");
}

#[test]
fn observation_rows_round_trip() {
    let dir = TempDir::new("rows");
    let store = Store::open(dir.file("rows.db")).unwrap();
    let w1 = store.insert_window(&window()).unwrap();
    let w2 = store.insert_window(&Window { host: "other".into(), lost_events: 0, ..window() }).unwrap();
    assert_eq!(store.windows().unwrap().iter().map(|(id, _)| *id).collect::<Vec<_>>(), vec![w1, w2]);

    let shell = Process {
        window: w1,
        key: key(42, 1000),
        comm: "bash".into(),
        exe: Some("/usr/bin/bash".into()),
        cmdline: vec!["bash".into(), "-c".into(), "echo 'a b'".into()],
        cgroup: "/user.slice/user-1000.slice".into(),
        uid: 1000,
        ppid: Pid(1),
    };
    // The same pid reused by a later process, and a kernel thread without an exe.
    let reused = Process { key: key(42, 2000), comm: "make".into(), cmdline: vec![], ..shell.clone() };
    let kthread =
        Process { key: key(2, 0), comm: "kthreadd".into(), exe: None, uid: 0, ppid: Pid(0), ..shell.clone() };
    for p in [&reused, &shell, &kthread] {
        store.insert_process(p).unwrap();
    }
    assert_eq!(store.processes(w1).unwrap(), vec![kthread, shell.clone(), reused]);
    assert!(store.processes(w2).unwrap().is_empty());
    assert!(matches!(store.insert_process(&shell).unwrap_err(), Error::Sqlite { .. }), "one row per process");

    let counts = vec![
        SyscallCount { window: w1, key: key(42, 1000), nr: 0, count: 10 },
        SyscallCount { window: w1, key: key(42, 1000), nr: 1, count: u64::from(u32::MAX) + 1 },
        SyscallCount { window: w1, key: key(42, 2000), nr: 0, count: 3 },
    ];
    for c in &counts {
        store.insert_syscall_count(c).unwrap();
    }
    assert_eq!(store.syscall_counts(w1).unwrap(), counts);

    let burst = Burst {
        window: w1,
        key: key(42, 1000),
        run: DurationStats { count: 3, total_ns: 9_000, min_ns: 1_000, max_ns: 5_000 },
        wait: DurationStats::default(),
    };
    store.insert_burst(&burst).unwrap();
    assert_eq!(store.bursts(w1).unwrap(), vec![burst]);
    assert!(store.bursts(w2).unwrap().is_empty());

    let edges = vec![
        DependencyEdge {
            window: w2,
            requester: key(42, 1000),
            provider: key(43, 1001),
            resource: Resource::Pipe { inode: 99, write: false },
            confidence: 12,
            wakeups: 40,
        },
        DependencyEdge {
            window: w2,
            requester: key(43, 1001),
            provider: key(44, 1002),
            resource: Resource::Flock { inode: 7, lock: FlockKind::Exclusive },
            confidence: 0,
            wakeups: 1,
        },
    ];
    for d in &edges {
        store.insert_dependency_edge(d).unwrap();
    }
    assert_eq!(store.dependency_edges(w2).unwrap(), edges);
    assert!(store.dependency_edges(w1).unwrap().is_empty());

    let e = store.insert_window(&Window { events: u64::MAX, ..window() }).unwrap_err();
    assert!(matches!(e, Error::Sqlite { .. }), "values past i64 are refused, not wrapped: {e:?}");
}

#[test]
fn models_round_trip_and_replace_by_name() {
    let dir = TempDir::new("models");
    let store = Store::open(dir.file("models.db")).unwrap();
    assert_eq!(store.model("tree").unwrap(), None);
    let mut m = Model {
        name: "tree".into(),
        kind: "decision_tree".into(),
        created_unix_ns: 1_700_000_000_000_000_000,
        blob: serde_json::json!({"depth": 3, "nodes": [1, 2.5, "x"]}),
    };
    store.save_model(&m).unwrap();
    assert_eq!(store.model("tree").unwrap(), Some(m.clone()));
    m.blob = serde_json::json!({"depth": 4});
    store.save_model(&m).unwrap();
    assert_eq!(store.model("tree").unwrap(), Some(m));
}

#[test]
fn journal_lists_pending_changes_newest_first_until_undone() {
    let dir = TempDir::new("journal");
    let store = Store::open(dir.file("journal.db")).unwrap();
    let change = |what, old: &str, new: &str| Change {
        time_unix_ns: 1_700_000_000_000_000_000,
        target: key(42, 1000),
        what,
        old_value: old.into(),
        new_value: new.into(),
        boot_id: "6f1c0d5e-3b2a-4c8e-9a7d-0e1f2a3b4c5d".into(),
    };
    let changes: Vec<Change> = vec![
        change(Setting::Affinity, "0-3", "2"),
        change(Setting::Nice, "0", "-5"),
        change(Setting::Policy, "SCHED_OTHER 0", "SCHED_FIFO 10"),
        change(Setting::Slice, "3000000", "1500000"),
        change(Setting::Cgroup, "/user.slice", "/schedlab.slice/boost"),
    ];
    let ids: Vec<_> = changes.iter().map(|c| store.journal_insert(c).unwrap()).collect();
    store.journal_mark_applied(ids[1]).unwrap();

    let pending = store.journal_pending().unwrap();
    assert_eq!(
        pending.iter().map(|e| e.id).collect::<Vec<_>>(),
        ids.iter().rev().copied().collect::<Vec<_>>()
    );
    for entry in &pending {
        let i = ids.iter().position(|&id| id == entry.id).unwrap();
        assert_eq!(entry.change, changes[i]);
        assert_eq!(entry.applied, i == 1);
        assert!(!entry.undone);
    }

    // Two at once (a process's entries at its release), in one transaction: all or none.
    let unknown = schedlab_store::JournalId(ids[4].0 + 100);
    assert!(store.journal_mark_undone_all(&[ids[4], unknown]).is_err());
    assert_eq!(store.journal_pending().unwrap().len(), 5, "none marked when one is not there");
    // A turn settled: one applied, two of an exited process undone, in one transaction.
    assert!(store.journal_settle(&[ids[3]], &[ids[4], unknown]).is_err());
    let pending = store.journal_pending().unwrap();
    assert_eq!(pending.len(), 5, "none marked when one is not there");
    assert!(!pending.iter().find(|e| e.id == ids[3]).unwrap().applied, "not even the applied one");
    store.journal_settle(&[ids[3]], &[ids[4], ids[0]]).unwrap();
    let pending = store.journal_pending().unwrap();
    assert_eq!(pending.iter().map(|e| e.id).collect::<Vec<_>>(), vec![ids[3], ids[2], ids[1]]);
    assert!(pending[0].applied);

    // An entry's values are rewritten (an entry below it undone out of order, a value
    // the kernel kept other than the one asked for).
    store.journal_set_values(ids[2], "SCHED_OTHER 0", "SCHED_FIFO 9").unwrap();
    let policy = store.journal_pending().unwrap().into_iter().find(|e| e.id == ids[2]).unwrap();
    assert_eq!(
        (policy.change.old_value.as_str(), policy.change.new_value.as_str()),
        ("SCHED_OTHER 0", "SCHED_FIFO 9")
    );

    assert!(matches!(store.journal_set_values(unknown, "", "").unwrap_err(), Error::NoJournalEntry { .. }));

    // Pruning deletes closed entries only, the newest `keep` of them kept.
    assert_eq!(store.journal_prune(1).unwrap(), 1, "of the two closed, the older goes");
    assert_eq!(store.journal_prune(1).unwrap(), 0);
    assert_eq!(store.journal_pending().unwrap().len(), 3, "pending entries are never pruned");
    assert!(store.journal_mark_undone(ids[0]).is_err(), "the older closed entry is gone");
    store.journal_mark_undone(ids[4]).unwrap();
    assert!(matches!(store.journal_mark_undone(unknown).unwrap_err(), Error::NoJournalEntry { .. }));
    assert!(matches!(store.journal_mark_applied(unknown).unwrap_err(), Error::NoJournalEntry { .. }));
    assert_eq!(Setting::ALL.map(|s| Setting::from_word(s.as_str())), Setting::ALL.map(Some));
}

#[test]
fn a_connection_that_commits_without_syncs_is_checkpointed_by_another() {
    let dir = TempDir::new("nosync");
    let path = dir.file("s.db");
    let writer = Store::open(&path).unwrap();
    writer.commit_without_syncs().unwrap();
    let wal = dir.file("s.db-wal");
    let change = Change {
        time_unix_ns: 1,
        target: key(42, 1000),
        what: Setting::Nice,
        old_value: "0".into(),
        new_value: "-20".into(),
        boot_id: String::new(),
    };
    for _ in 0..200 {
        writer.journal_insert(&change).unwrap();
    }
    let logged = std::fs::metadata(&wal).unwrap().len();
    assert!(logged > 0, "the commits are in the log");
    // Without its own checkpoints the writer leaves them there; another connection's
    // checkpoint copies them into the file, where a fresh reader finds them.
    let other = Store::open(&path).unwrap();
    other.checkpoint().unwrap();
    drop(other);
    let rows: i64 = raw(&path).query_row("SELECT count(*) FROM journal", [], |r| r.get(0)).unwrap();
    assert_eq!(rows, 200);
    assert_eq!(writer.journal_pending().unwrap().len(), 200, "and the writer still reads them");
}

#[test]
fn pfs_store_round_trips_through_the_table() {
    let dir = TempDir::new("pfs");
    let mut store = Store::open(dir.file("pfs.db")).unwrap();
    assert_eq!(store.load_pfs().unwrap(), PfsStore::default());

    let run = |t| PfsEntry { state: PfsState::Run, time_ns: t };
    let wait = |t| PfsEntry { state: PfsState::Wait, time_ns: t };
    let mut pfs = PfsStore::default();
    pfs.insert_new(Pfs { program: "/usr/bin/make".into(), entries: vec![run(5), wait(100), run(7)] });
    pfs.insert_new(Pfs { program: "cc1".into(), entries: vec![] });
    store.save_pfs(&pfs).unwrap();
    assert_eq!(store.load_pfs().unwrap(), pfs);

    // Saving replaces: an adapted PFS is kept, a forgotten program goes.
    pfs.programs.remove("cc1");
    pfs.get_mut("/usr/bin/make").unwrap().entries[0].time_ns = 6;
    store.save_pfs(&pfs).unwrap();
    drop(store);
    assert_eq!(Store::open(dir.file("pfs.db")).unwrap().load_pfs().unwrap(), pfs);
}

fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o7777
}

#[test]
fn a_store_is_private_to_its_user() {
    use std::os::unix::fs::PermissionsExt;
    let dir = TempDir::new("private");
    let path = dir.file("new/deeper/s.db");
    let store = Store::open(&path).unwrap();
    let change = Change {
        time_unix_ns: 1,
        target: key(1, 2),
        what: Setting::Nice,
        old_value: "0".into(),
        new_value: "-5".into(),
        boot_id: String::new(),
    };
    store.journal_insert(&change).unwrap();
    assert_eq!(mode(&path), 0o600);
    assert_eq!(mode(&dir.file("new/deeper/s.db-wal")), 0o600, "SQLite gives its companions the file's mode");
    assert_eq!((mode(&dir.file("new")), mode(&dir.file("new/deeper"))), (0o700, 0o700));
    drop(store);

    // A file others may read is made private when opened.
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    drop(Store::open(&path).unwrap());
    assert_eq!(mode(&path), 0o600);

    // A directory anyone may write in, without the sticky bit: anyone could replace it.
    let open = dir.file("open");
    std::fs::create_dir(&open).unwrap();
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
    let e = Store::open(open.join("s.db")).unwrap_err();
    assert!(matches!(&e, Error::NotPrivate { why, .. } if why.contains("not sticky")), "{e}");
    // A symlink in place of the file is not followed.
    std::os::unix::fs::symlink(&path, dir.file("link.db")).unwrap();
    assert!(Store::open(dir.file("link.db")).is_err());
}

/// Root must not act on a journal another user could have written.
#[test]
fn a_store_another_user_owns_is_refused() {
    // SAFETY: no arguments.
    assert_eq!(unsafe { libc::geteuid() }, 0, "this test needs root (to give a file to another user)");
    let dir = TempDir::new("owner");
    let path = dir.file("s.db");
    drop(Store::open(&path).unwrap());
    std::os::unix::fs::chown(&path, Some(65534), Some(65534)).unwrap();
    let e = Store::open(&path).unwrap_err();
    assert!(matches!(&e, Error::NotPrivate { why, .. } if why.contains("uid 65534")), "{e}");
    std::os::unix::fs::chown(&path, Some(0), Some(0)).unwrap();
    // The log exists while a connection is open.
    let open = Store::open(&path).unwrap();
    open.commit_without_syncs().unwrap();
    std::os::unix::fs::chown(dir.file("s.db-wal"), Some(65534), None).unwrap();
    assert!(matches!(Store::open(&path).unwrap_err(), Error::NotPrivate { .. }), "nor a companion of theirs");
    std::os::unix::fs::chown(dir.file("s.db-wal"), Some(0), None).unwrap();
}

#[test]
fn one_daemon_or_restore_at_a_time_holds_the_lock() {
    let dir = TempDir::new("lock");
    let path = dir.file("s.db");
    let first = Store::open(&path).unwrap();
    let held = first.lock().unwrap();
    let second = Store::open(&path).unwrap();
    assert!(matches!(second.lock().unwrap_err(), Error::InUse { .. }));
    drop(held);
    let _now = second.lock().unwrap();
}
