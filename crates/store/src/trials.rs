//! Enforcer trials: what `schedlab bench suite` found of an enforcer on this machine's
//! kernel. `schedlab run --enforcer auto` loads the sched_ext scheduler only where its
//! last trial on the running kernel covered every workload and lost none: do no harm,
//! measured on the machine itself.

use crate::{Result, Store};

/// One suite run of one enforcer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EnforcerTrial {
    /// The kernel release it ran on (`uname -r`).
    pub kernel: String,
    /// The enforcer judged (`sched-ext`, `syscalls`).
    pub enforcer: String,
    /// When it ended, in seconds since the Unix epoch.
    pub at_unix_s: i64,
    /// Whether it ran every workload of the suite (not an `--only` subset).
    pub complete: bool,
    /// How many workload metrics it lost.
    pub losses: u32,
    /// What a reader needs: the configuration, the rounds, and each loss with its ratio.
    pub summary: String,
}

impl Store {
    /// Keeps a trial.
    pub fn record_enforcer_trial(&self, t: &EnforcerTrial) -> Result<()> {
        self.conn
            .execute(
                "INSERT INTO enforcer_trials (kernel, enforcer, at_unix_s, complete, losses, summary)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                (&t.kernel, &t.enforcer, t.at_unix_s, t.complete, t.losses, &t.summary),
            )
            .map_err(|e| self.err(e))?;
        Ok(())
    }

    /// The last trial of `enforcer` on `kernel`, if there was one.
    pub fn last_enforcer_trial(&self, kernel: &str, enforcer: &str) -> Result<Option<EnforcerTrial>> {
        let mut rows = self.query(
            "SELECT kernel, enforcer, at_unix_s, complete, losses, summary FROM enforcer_trials
             WHERE kernel = ?1 AND enforcer = ?2 ORDER BY id DESC LIMIT 1",
            (kernel, enforcer),
            |r| {
                Ok(EnforcerTrial {
                    kernel: r.get(0)?,
                    enforcer: r.get(1)?,
                    at_unix_s: r.get(2)?,
                    complete: r.get(3)?,
                    losses: r.get(4)?,
                    summary: r.get(5)?,
                })
            },
        )?;
        Ok(rows.pop())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_trial_of_a_kernel_and_enforcer_is_found() {
        let store = crate::TestStore::new("trials");
        let trial = |kernel: &str, enforcer: &str, losses| EnforcerTrial {
            kernel: kernel.into(),
            enforcer: enforcer.into(),
            at_unix_s: 1_800_000_000,
            complete: true,
            losses,
            summary: format!("{losses} losses"),
        };
        assert_eq!(store.last_enforcer_trial("7.3.0", "sched-ext").unwrap(), None);
        store.record_enforcer_trial(&trial("7.3.0", "sched-ext", 2)).unwrap();
        store.record_enforcer_trial(&trial("7.3.0", "sched-ext", 0)).unwrap();
        store.record_enforcer_trial(&trial("7.3.0", "syscalls", 1)).unwrap();
        store.record_enforcer_trial(&trial("6.12.0", "sched-ext", 3)).unwrap();
        assert_eq!(
            store.last_enforcer_trial("7.3.0", "sched-ext").unwrap(),
            Some(trial("7.3.0", "sched-ext", 0))
        );
        assert_eq!(
            store.last_enforcer_trial("6.12.0", "sched-ext").unwrap(),
            Some(trial("6.12.0", "sched-ext", 3))
        );
        assert_eq!(store.last_enforcer_trial("6.13.0", "sched-ext").unwrap(), None);
    }
}
