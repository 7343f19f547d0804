//! The journal of changes the daemon makes to processes. Every change is written here
//! **before** it is applied, so that `schedlab restore`, or the next start after a crash,
//! can put back the old value of everything not yet undone.

use rusqlite::params;
use schedlab_model::Pid;

use crate::{Error, ProcessKey, Result, Store};

/// The id of a journal entry, in the order the entries were written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct JournalId(pub i64);

/// Which setting of a process a change touches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Setting {
    /// The CPU affinity mask.
    Affinity,
    /// The nice value.
    Nice,
    /// The scheduling policy and its priority.
    Policy,
    /// The EEVDF slice (`sched_attr.sched_runtime`).
    Slice,
    /// The cgroup the process belongs to.
    Cgroup,
    /// `RLIMIT_RTTIME`: the CPU time a real-time thread may run without blocking before
    /// the kernel kills it (the kernel's own bound on a real-time policy schedlab gives).
    RtTime,
}

impl Setting {
    /// Every setting, in the order of the enum.
    pub const ALL: [Setting; 6] =
        [Setting::Affinity, Setting::Nice, Setting::Policy, Setting::Slice, Setting::Cgroup, Setting::RtTime];

    /// The lowercase word stored in the `journal.what` column.
    pub fn as_str(self) -> &'static str {
        match self {
            Setting::Affinity => "affinity",
            Setting::Nice => "nice",
            Setting::Policy => "policy",
            Setting::Slice => "slice",
            Setting::Cgroup => "cgroup",
            Setting::RtTime => "rttime",
        }
    }

    /// The setting named by `word`, as [`Setting::as_str`] writes it.
    pub fn from_word(word: &str) -> Option<Setting> {
        Setting::ALL.into_iter().find(|s| s.as_str() == word)
    }
}

/// A change about to be made to a process.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    /// When it was decided, in nanoseconds since the Unix epoch (wall-clock time, so that
    /// it still means something after a reboot).
    pub time_unix_ns: i64,
    /// The process changed.
    pub target: ProcessKey,
    /// The setting changed.
    pub what: Setting,
    /// The value before the change, in the form the daemon writes back to undo it.
    pub old_value: String,
    /// The value set.
    pub new_value: String,
    /// The boot it was made in (`/proc/sys/kernel/random/boot_id`; empty if unknown):
    /// after a reboot the process it names is gone, whatever its pid now holds.
    pub boot_id: String,
}

/// A change as the journal holds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JournalEntry {
    /// The entry's id.
    pub id: JournalId,
    /// The change.
    pub change: Change,
    /// Whether the change was reported applied (false if the daemon stopped between
    /// writing the entry and applying the change).
    pub applied: bool,
    /// Whether the old value was put back.
    pub undone: bool,
}

/// What marks entry `?1` applied.
const MARK_APPLIED: &str = "UPDATE journal SET applied = 1 WHERE id = ?1";
/// What marks entry `?1` undone.
const MARK_UNDONE: &str = "UPDATE journal SET undone = 1 WHERE id = ?1";

impl Store {
    /// Writes a change to the journal, before it is applied; returns the entry's id.
    pub fn journal_insert(&self, c: &Change) -> Result<JournalId> {
        // Cached statements: a boost journals on the daemon's reaction path, where
        // parsing the SQL each time would be a good part of the cost.
        self.conn
            .prepare_cached(
                "INSERT INTO journal (time_unix_ns, pid, start_time, what, old_value, new_value, boot_id)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            )
            .and_then(|mut insert| {
                insert.execute(params![
                    c.time_unix_ns,
                    c.target.pid.0,
                    c.target.start_time,
                    c.what.as_str(),
                    c.old_value,
                    c.new_value,
                    c.boot_id
                ])
            })
            .map_err(|e| self.err(e))?;
        Ok(JournalId(self.conn.last_insert_rowid()))
    }

    /// Writes changes to the journal in one transaction (the parts of one raise, on the
    /// reaction path: one commit instead of one each); returns their ids, in order.
    pub fn journal_insert_all(&self, changes: &[Change]) -> Result<Vec<JournalId>> {
        let tx = self.conn.unchecked_transaction().map_err(|e| self.err(e))?;
        let ids = changes.iter().map(|c| self.journal_insert(c)).collect::<Result<Vec<_>>>()?;
        tx.commit().map_err(|e| self.err(e))?;
        Ok(ids)
    }

    /// Records that the change of entry `id` was applied.
    pub fn journal_mark_applied(&self, id: JournalId) -> Result<()> {
        self.journal_set(id, MARK_APPLIED)
    }

    /// Records that entries `ids` need no undoing (their process was released, or
    /// exited), in one transaction.
    pub fn journal_mark_undone_all(&self, ids: &[JournalId]) -> Result<()> {
        self.journal_set_all(&[(ids, MARK_UNDONE)])
    }

    /// Records that entries `applied` were applied and entries `undone` need no undoing,
    /// in one transaction: the daemon's one commit after each turn.
    pub fn journal_settle(&self, applied: &[JournalId], undone: &[JournalId]) -> Result<()> {
        self.journal_set_all(&[(applied, MARK_APPLIED), (undone, MARK_UNDONE)])
    }

    /// Runs each `sql` (which sets a flag of entry `?1`) for each of its ids, in one
    /// transaction.
    fn journal_set_all(&self, sets: &[(&[JournalId], &str)]) -> Result<()> {
        if sets.iter().all(|(ids, _)| ids.is_empty()) {
            return Ok(());
        }
        let tx = self.conn.unchecked_transaction().map_err(|e| self.err(e))?;
        for &(ids, sql) in sets {
            for &id in ids {
                self.journal_set(id, sql)?;
            }
        }
        tx.commit().map_err(|e| self.err(e))
    }

    /// Rewrites the values of entry `id`: the old value when the entry below it in a
    /// setting's stack is undone out of order (the entry now writes back what that one
    /// would have), the new value when the kernel keeps a value other than the one asked
    /// for (what a restore compares the current value with).
    pub fn journal_set_values(&self, id: JournalId, old_value: &str, new_value: &str) -> Result<()> {
        let sql = "UPDATE journal SET old_value = ?2, new_value = ?3 WHERE id = ?1";
        match self
            .conn
            .prepare_cached(sql)
            .and_then(|mut st| st.execute(params![id.0, old_value, new_value]))
            .map_err(|e| self.err(e))?
        {
            0 => Err(Error::NoJournalEntry { path: self.path.clone(), id: id.0 }),
            _ => Ok(()),
        }
    }

    /// Records that the old value of entry `id` was put back.
    pub fn journal_mark_undone(&self, id: JournalId) -> Result<()> {
        self.journal_set(id, MARK_UNDONE)
    }

    /// The entries not yet undone, newest first: the order in which to undo them, so
    /// that a setting changed twice ends at its original value. Entries not marked
    /// applied are included, since the daemon may have stopped after applying the change
    /// but before marking it; putting back an old value that was never changed is
    /// harmless.
    pub fn journal_pending(&self) -> Result<Vec<JournalEntry>> {
        let sql =
            "SELECT id, time_unix_ns, pid, start_time, what, old_value, new_value, boot_id, applied, undone
                   FROM journal WHERE undone = 0 ORDER BY id DESC";
        let rows = self.query(sql, [], |r| {
            let key = ProcessKey { pid: Pid(r.get(2)?), start_time: r.get(3)? };
            let change = (r.get(1)?, key, r.get::<_, String>(4)?, r.get(5)?, r.get(6)?, r.get(7)?);
            Ok((JournalId(r.get(0)?), change, r.get(8)?, r.get(9)?))
        })?;
        rows.into_iter()
            .map(|(id, (time_unix_ns, target, what, old_value, new_value, boot_id), applied, undone)| {
                let what = Setting::from_word(&what).ok_or_else(|| self.bad_value("journal.what", what))?;
                Ok(JournalEntry {
                    id,
                    change: Change { time_unix_ns, target, what, old_value, new_value, boot_id },
                    applied,
                    undone,
                })
            })
            .collect()
    }

    /// Deletes the closed (undone) entries but the newest `keep`: the journal of a
    /// daemon that runs for months stays within its pending entries plus `keep`.
    /// Returns how many were deleted.
    pub fn journal_prune(&self, keep: usize) -> Result<usize> {
        let sql = "DELETE FROM journal WHERE undone = 1 AND id <= (
                       SELECT id FROM journal WHERE undone = 1 ORDER BY id DESC LIMIT 1 OFFSET ?1)";
        self.conn.prepare_cached(sql).and_then(|mut st| st.execute([keep as i64])).map_err(|e| self.err(e))
    }

    /// Runs an update of one journal entry; an unknown id is an error.
    fn journal_set(&self, id: JournalId, sql: &str) -> Result<()> {
        match self.conn.prepare_cached(sql).and_then(|mut st| st.execute([id.0])).map_err(|e| self.err(e))? {
            0 => Err(Error::NoJournalEntry { path: self.path.clone(), id: id.0 }),
            _ => Ok(()),
        }
    }
}
