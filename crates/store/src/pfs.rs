//! PFS knowledge (paper 001) in the store: one row per program, its entries as JSON, so
//! that the daemon keeps learning across runs. Loads into and saves from the same
//! [`PfsStore`] the simulator uses with its JSON file.

use schedlab_behavior::pfs::{Pfs, PfsEntry, PfsStore};

use crate::{Result, Store};

impl Store {
    /// Reads the PFS of every program; an empty table is an empty store.
    pub fn load_pfs(&self) -> Result<PfsStore> {
        let rows = self.query("SELECT program, entries FROM pfs ORDER BY program", [], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
        })?;
        let mut store = PfsStore::default();
        for (program, entries) in rows {
            let entries: Vec<PfsEntry> =
                serde_json::from_str(&entries).map_err(|_| self.bad_value("pfs.entries", entries))?;
            store.programs.insert(program.clone(), Pfs { program, entries });
        }
        Ok(store)
    }

    /// Replaces the stored PFS knowledge with `store`, in one transaction: like saving the
    /// JSON file, programs not in `store` are forgotten, and a failure leaves the old
    /// knowledge whole.
    pub fn save_pfs(&mut self, store: &PfsStore) -> Result<()> {
        let write = |conn: &mut rusqlite::Connection| -> rusqlite::Result<()> {
            let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
            tx.execute("DELETE FROM pfs", [])?;
            {
                let mut insert = tx.prepare("INSERT INTO pfs (program, entries) VALUES (?1, ?2)")?;
                for (program, pfs) in &store.programs {
                    let entries = serde_json::to_string(&pfs.entries).expect("PFS entries always serialize");
                    insert.execute((program, entries))?;
                }
            }
            tx.commit()
        };
        write(&mut self.conn).map_err(|e| self.err(e))
    }
}
