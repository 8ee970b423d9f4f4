//! Undoing a create: a connector that an apply created is stopped, its offsets are deleted
//! and read back as empty, then the connector is deleted. A failure before the delete puts its
//! prior state back, as every transaction does.

use super::{ApplyOutcome, Step, Tx};

impl Tx<'_> {
    pub(super) fn delete(&mut self) {
        let (prior, stopped) = match self.record_state() {
            Ok(v) => v,
            Err(f) => return self.fail(f),
        };
        if let Err(f) = self.stop_and_alter(Step::Reset, stopped) {
            return self.settle(prior, Err(f));
        }
        match self.step(Step::Delete, |tx| {
            tx.client.delete(tx.name())?;
            Ok(((), "DELETE accepted: the connector is gone".into()))
        }) {
            Ok(()) => {
                self.report.outcome = ApplyOutcome::Applied;
                self.report.state_restored = true;
                self.report.final_state = Some("deleted".into());
            }
            Err(f) => self.settle(prior, Err(f)),
        }
    }
}
