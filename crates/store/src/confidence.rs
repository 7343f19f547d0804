//! SWAP's confidence kept across runs (paper 004, live): how much a program is trusted
//! as the provider of a kind of resource, so that the daemon's next run starts a new
//! provider of that program there instead of at the base K.

use crate::{Result, Store};

/// The confidence learned of `program` as a provider of resources of `kind`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProgramConfidence {
    /// The program (its executable path).
    pub program: String,
    /// The resource kind (`pipe`, `socket`, `sysv_msg`, …).
    pub kind: String,
    /// The confidence value.
    pub confidence: u32,
}

impl Store {
    /// Every confidence kept.
    pub fn confidences(&self) -> Result<Vec<ProgramConfidence>> {
        self.query("SELECT program, kind, confidence FROM swap_confidence ORDER BY program, kind", [], |r| {
            Ok(ProgramConfidence { program: r.get(0)?, kind: r.get(1)?, confidence: r.get(2)? })
        })
    }

    /// Keeps these confidences, replacing those of the same (program, kind).
    pub fn save_confidences(&self, rows: &[ProgramConfidence]) -> Result<()> {
        for c in rows {
            self.conn
                .execute(
                    "INSERT INTO swap_confidence (program, kind, confidence) VALUES (?1, ?2, ?3)
                     ON CONFLICT (program, kind) DO UPDATE SET confidence = excluded.confidence",
                    (&c.program, &c.kind, c.confidence),
                )
                .map_err(|e| self.err(e))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn confidences_are_kept_and_replaced() {
        let store = crate::TestStore::new("confidence");
        let c = |program: &str, confidence| ProgramConfidence {
            program: program.into(),
            kind: "pipe".into(),
            confidence,
        };
        store.save_confidences(&[c("/bin/a", 30), c("/bin/b", 5)]).unwrap();
        store.save_confidences(&[c("/bin/a", 35)]).unwrap();
        assert_eq!(store.confidences().unwrap(), vec![c("/bin/a", 35), c("/bin/b", 5)]);
    }
}
