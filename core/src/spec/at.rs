//! `@at` one-shots. STUB (helper B).
use super::{SpecError, SpecOptions};
use crate::time::Timestamp;

pub(crate) fn parse(_rest: &str, _opts: &SpecOptions) -> Result<Timestamp, SpecError> {
    todo!()
}
