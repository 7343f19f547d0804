//! What can go wrong with the store, each error naming the file and saying what to do.

use std::path::PathBuf;

/// Why a store operation failed.
///
/// SQLite's own errors are sorted here into the cases a user can act on (a file locked
/// by another process, a file that is not a schedlab store, a store written by a newer
/// schedlab); everything else keeps the SQLite error as its source.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Another process or connection held a lock for longer than the busy timeout.
    #[error(
        "store {path} is locked by another process (waited {waited_ms} ms); \
         wait for the other schedlab command or daemon to finish, or pass --store with another file"
    )]
    Locked {
        /// The store file.
        path: PathBuf,
        /// How long we waited for the lock.
        waited_ms: u64,
        /// The SQLite error (`SQLITE_BUSY` or `SQLITE_LOCKED`).
        #[source]
        source: rusqlite::Error,
    },
    /// The file exists but is not an SQLite database, or its pages are damaged.
    #[error(
        "{path} is not a valid schedlab store (not an SQLite database, or corrupt); \
         it was left untouched: move it away or pass --store with another file"
    )]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// The SQLite error (`SQLITE_NOTADB` or `SQLITE_CORRUPT`).
        #[source]
        source: rusqlite::Error,
    },
    /// The file's schema version is newer than this build knows: opening it could lose
    /// data that a newer schedlab wrote.
    #[error(
        "store {path} has schema version {found}, newer than the {supported} this schedlab knows; \
         upgrade schedlab or pass --store with another file"
    )]
    TooNew {
        /// The store file.
        path: PathBuf,
        /// The version found in the file.
        found: u32,
        /// The newest version this build knows.
        supported: u32,
    },
    /// The directory that should hold the store could not be created.
    #[error("cannot create the directory {path} for the store")]
    CreateDir {
        /// The directory.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The store, or the directory it is in, could be written by another user: its
    /// journal names values a restore writes to processes, so such a file would let that
    /// user set any process's priority through the next root command.
    #[error("store {path} is not private: {why}; give it to the user running schedlab (mode 0600, directory not writable by others) or pass --store with another file")]
    NotPrivate {
        /// The file or directory.
        path: PathBuf,
        /// What is wrong.
        why: String,
    },
    /// Another process holds the store's lock: a daemon runs on it, or a restore.
    #[error("store {path} is in use by another schedlab daemon or restore; stop it first, or pass --store with another file")]
    InUse {
        /// The store file.
        path: PathBuf,
    },
    /// The store file could not be created or checked.
    #[error("cannot open the store file {path}")]
    Open {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A value read from the store is not one this build can decode (a file edited by
    /// hand, or written by a newer schedlab at the same schema version).
    #[error("store {path}: column {column} holds {value:?}, which is not valid")]
    BadValue {
        /// The store file.
        path: PathBuf,
        /// The table and column, as `table.column`.
        column: &'static str,
        /// The value found.
        value: String,
    },
    /// A journal entry that does not exist was asked for.
    #[error("store {path}: no journal entry {id}")]
    NoJournalEntry {
        /// The store file.
        path: PathBuf,
        /// The entry asked for.
        id: i64,
    },
    /// Any other SQLite failure.
    #[error("store {path}: {source}")]
    Sqlite {
        /// The store file.
        path: PathBuf,
        /// The SQLite error.
        #[source]
        source: rusqlite::Error,
    },
}

impl Error {
    /// Sorts a SQLite error on the store at `path` into the case a user can act on.
    pub(crate) fn sqlite(path: PathBuf, busy_timeout_ms: u64, source: rusqlite::Error) -> Self {
        use rusqlite::ErrorCode;
        match source.sqlite_error_code() {
            Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => {
                Error::Locked { path, waited_ms: busy_timeout_ms, source }
            }
            Some(ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt) => Error::Corrupt { path, source },
            _ => Error::Sqlite { path, source },
        }
    }
}

/// The result of a store operation.
pub type Result<T> = std::result::Result<T, Error>;
