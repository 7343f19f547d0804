//! The schedlab store: one SQLite file holding observation windows (processes, syscall
//! counts, CPU bursts, dependency edges), PFS knowledge per program, trained models, and
//! the journal of every change the daemon makes to a process, so that it can be undone.
//!
//! One file, so that a user can copy, inspect (`sqlite3`) or delete everything schedlab
//! knows at once; SQLite, so that the daemon and the CLI can share it safely. The schema
//! is versioned ([`schema`]); a file from an older schedlab is migrated on open, one
//! from a newer one is refused rather than damaged.

#![warn(missing_docs)]

mod confidence;
mod error;
mod habits;
mod journal;
mod path;
mod pfs;
mod private;
mod rows;
pub mod schema;
mod trials;

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::Connection;

pub use confidence::ProgramConfidence;
pub use error::{Error, Result};
pub use journal::{Change, JournalEntry, JournalId, Setting};
pub use private::StoreLock;
pub use rows::{
    Burst, DependencyEdge, DurationStats, Model, Process, ProcessKey, SyscallCount, Window, WindowId,
};
pub use trials::EnforcerTrial;

/// How long an operation waits for a lock held by another connection before it fails
/// with [`Error::Locked`]: long enough for another command's short transaction, short
/// enough that a stuck daemon is reported instead of hanging the CLI.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(2);

/// An open store file.
#[derive(Debug)]
pub struct Store {
    conn: Connection,
    path: PathBuf,
}

impl Store {
    /// The file used when the caller gives no `--store PATH`: `/var/lib/schedlab/schedlab.db`
    /// for root (the daemon's journal must be found by every later root command), else
    /// `$XDG_DATA_HOME/schedlab/schedlab.db`, falling back to `~/.local/share/schedlab/schedlab.db`.
    pub fn default_path() -> PathBuf {
        path::default_path()
    }

    /// Opens the store at `path`, creating the file (mode 0600) and its parent
    /// directories (0700) if they do not exist, and migrates it to the latest schema
    /// version.
    ///
    /// A file another user owns or could replace is refused ([`Error::NotPrivate`]; see
    /// the `private` module); an existing file that is not a store is reported
    /// ([`Error::Corrupt`]) and left untouched; a file from a newer schedlab is refused
    /// ([`Error::TooNew`]).
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref().to_path_buf();
        private::prepare(&path)?;
        let wrap = |e| Error::sqlite(path.clone(), BUSY_TIMEOUT.as_millis() as u64, e);
        let mut conn = Connection::open(&path).map_err(wrap)?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(wrap)?;
        conn.pragma_update(None, "foreign_keys", true).map_err(wrap)?;
        // The journal must survive the daemon's death (kill -9), not the machine's: the
        // settings it records die with the machine. WAL with synchronous=NORMAL keeps
        // every commit through a process crash without an fsync per change, which would
        // otherwise dominate a boost's reaction time.
        conn.pragma_update(None, "journal_mode", "wal").map_err(wrap)?;
        conn.pragma_update(None, "synchronous", "normal").map_err(wrap)?;
        match schema::migrate(&mut conn).map_err(wrap)? {
            schema::Outcome::Current => Ok(Store { conn, path }),
            schema::Outcome::TooNew(found) => {
                Err(Error::TooNew { path, found, supported: schema::LATEST_VERSION })
            }
        }
    }

    /// Takes the store's lock for as long as the returned value lives: a daemon holds it
    /// while it runs, a restore while it works, so that two never act on one journal.
    /// Fails at once ([`Error::InUse`]) if another process holds it.
    pub fn lock(&self) -> Result<StoreLock> {
        StoreLock::take(&self.path)
    }

    /// The file this store was opened from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file's schema version (always [`schema::LATEST_VERSION`] once open).
    pub fn schema_version(&self) -> Result<u32> {
        schema::version(&self.conn).map_err(|e| self.err(e))
    }

    /// Makes this connection's commits never wait for the disk: no checkpoint at a
    /// commit, and no sync (`synchronous=OFF`; WAL mode otherwise syncs the log's
    /// header when a commit starts it anew after a checkpoint). A sync costs
    /// milliseconds, on a VM's disk up to tens of them (measured: a boost's journal
    /// insert held for 4.5 and 64 ms), and the daemon's commits are on its reaction
    /// path. A commit still survives the process's death (the kernel holds the pages),
    /// which is what the journal is for. Another connection must then call
    /// [`Store::checkpoint`] now and then: its checkpoints sync the log before they copy
    /// it, so the database file only ever receives synced pages, and the log stays short.
    pub fn commit_without_syncs(&self) -> Result<()> {
        self.conn.pragma_update(None, "wal_autocheckpoint", 0).map_err(|e| self.err(e))?;
        self.conn.pragma_update(None, "synchronous", "off").map_err(|e| self.err(e))
    }

    /// Copies the write-ahead log into the database file and syncs it, as far as it can
    /// without waiting for other connections (a passive checkpoint).
    pub fn checkpoint(&self) -> Result<()> {
        self.conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(())).map_err(|e| self.err(e))
    }

    /// Wraps a SQLite error on this store with the file's name.
    fn err(&self, e: rusqlite::Error) -> Error {
        Error::sqlite(self.path.clone(), BUSY_TIMEOUT.as_millis() as u64, e)
    }

    /// An error for a stored value this build cannot decode.
    fn bad_value(&self, column: &'static str, value: impl Into<String>) -> Error {
        Error::BadValue { path: self.path.clone(), column, value: value.into() }
    }
}

/// A store in a file of its own for a unit test, deleted with its companions when dropped.
#[cfg(test)]
pub(crate) struct TestStore(Store);

#[cfg(test)]
impl TestStore {
    /// A new, empty store named after `name` and this process.
    pub(crate) fn new(name: &str) -> TestStore {
        let path = std::env::temp_dir().join(format!("schedlab-{name}-{}.db", std::process::id()));
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
        }
        TestStore(Store::open(&path).unwrap())
    }
}

#[cfg(test)]
impl std::ops::Deref for TestStore {
    type Target = Store;
    fn deref(&self) -> &Store {
        &self.0
    }
}

#[cfg(test)]
impl std::ops::DerefMut for TestStore {
    fn deref_mut(&mut self) -> &mut Store {
        &mut self.0
    }
}

#[cfg(test)]
impl Drop for TestStore {
    fn drop(&mut self) {
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", self.0.path.display()));
        }
    }
}
