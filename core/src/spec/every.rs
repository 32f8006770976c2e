//! `@every <duration> [+offset]`: an epoch-aligned grid. STUB (helper B).
use super::SpecError;
use crate::time::Timestamp;

#[derive(Clone, Debug)]
pub(crate) struct Every {}

impl Every {
    pub(crate) fn parse(_rest: &str, _min_interval_ms: i64) -> Result<Every, SpecError> {
        todo!()
    }
    pub(crate) fn next_after(&self, _t: Timestamp) -> Option<Timestamp> {
        todo!()
    }
}
