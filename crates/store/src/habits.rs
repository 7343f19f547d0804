//! Each program's habits (behavior::habits) in the store, so that a program the daemon
//! learned runs CPU-bound is known at its first exec after a restart.

use schedlab_behavior::habits::{Habit, Habits};

use crate::{Result, Store};

impl Store {
    /// Every program's habits kept.
    pub fn load_habits(&self) -> Result<Habits> {
        let rows =
            self.query("SELECT program, lives, cpu_bound, seen, draws FROM program_habits", [], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    Habit {
                        lives: r.get(1)?,
                        cpu_bound: r.get(2)?,
                        seen: r.get::<_, i64>(3)? as u64,
                        draws: r.get(4)?,
                    },
                ))
            })?;
        Ok(Habits::from_kept(rows))
    }

    /// Replaces the kept habits with `habits`, in one transaction: programs not in it
    /// (pruned) are forgotten, and a failure leaves the old ones whole.
    pub fn save_habits(&mut self, habits: &Habits) -> Result<()> {
        let write = |conn: &mut rusqlite::Connection| -> rusqlite::Result<()> {
            let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
            tx.execute("DELETE FROM program_habits", [])?;
            {
                let mut insert = tx.prepare(
                    "INSERT INTO program_habits (program, lives, cpu_bound, seen, draws) VALUES (?1, ?2, ?3, ?4, ?5)",
                )?;
                for (program, h) in habits.iter() {
                    insert.execute((program, h.lives, h.cpu_bound, h.seen as i64, h.draws))?;
                }
            }
            tx.commit()
        };
        write(&mut self.conn).map_err(|e| self.err(e))
    }
}

#[cfg(test)]
mod tests {
    use schedlab_model::Life;

    #[test]
    fn habits_are_kept_and_replaced() {
        let mut store = crate::TestStore::new("habits");
        let mut habits = schedlab_behavior::habits::Habits::default();
        let hog = Life { runtime_ns: 50_000_000, lived_ns: 50_000_000, ..Life::default() };
        for _ in 0..5 {
            habits.record("/usr/bin/xz", &hog);
        }
        habits.mark_draws("/usr/games/uncapped");
        habits.record(
            "/usr/bin/vim",
            &Life { runtime_ns: 30_000_000, lived_ns: 9_000_000_000, ..Life::default() },
        );
        store.save_habits(&habits).unwrap();
        let kept = store.load_habits().unwrap();
        assert_eq!(kept.len(), 3);
        for program in ["/usr/bin/xz", "/usr/bin/vim", "/usr/games/uncapped"] {
            assert_eq!(kept.get(program), habits.get(program), "{program}");
        }
        assert!(
            kept.cpu_bound("/usr/bin/xz", 0.8).is_some() && kept.cpu_bound("/usr/bin/vim", 0.8).is_none()
        );
        store.save_habits(&schedlab_behavior::habits::Habits::default()).unwrap();
        assert!(store.load_habits().unwrap().is_empty(), "replaced, not added to");
    }
}
