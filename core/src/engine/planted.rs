//! Planted bugs (feature `testing` only): deliberate faults that the model
//! test and the simulation must detect (`tests/tests/engine/planted_bugs.rs`).
//!
//! A harness plants one with [`Engine::plant`]; the engine keeps it in a
//! field that is neither serialized nor restored, and a handful of
//! `#[cfg(feature = "testing")]` lines at the decision points consult it.
//! Without the feature none of this exists, so default builds (and every
//! golden trace) are unaffected.

use crate::engine::Engine;

/// A deliberate fault at one decision point of the engine. Not part of
/// the API: it exists to prove that the checks of the test suite catch
/// real mistakes (a suite that passes with the bug planted is too weak).
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlantedBug {
    /// A paused schedule's boundaries fire instead of being skipped
    /// (`paused`) whenever no catch-up pass is needed (`advance.rs`, the
    /// plain path of `step`).
    PausedKeepFiring,
    /// `allow` and `cancel_previous` behave like `skip`: their fires are
    /// tracked in flight and a boundary offered while one is in flight is
    /// skipped (`overlap`) (`fire.rs`, `offer`).
    OverlapAlwaysSkip,
    /// A grant never runs out: `LeadershipLost` is never reported on
    /// expiry and the engine keeps firing with the old epoch past
    /// `validUntil` (`Engine::is_leader`, `advance_to`).
    LeadershipNeverExpires,
    /// Removing a schedule leaves its entry in the due index
    /// (`Schedules::remove`): when it comes due it steps whatever now
    /// occupies the slab slot (a re-created schedule fires early) or
    /// nothing at all.
    DueIndexMissesRemoval,
}

impl Engine {
    /// Plants `bug` (replacing any planted before). Not persisted: a
    /// harness that restores a snapshot plants again on the new engine.
    #[doc(hidden)]
    pub fn plant(&mut self, bug: PlantedBug) {
        self.planted = Some(bug);
        self.schedules.keep_due_on_remove = bug == PlantedBug::DueIndexMissesRemoval;
    }

    /// Whether `bug` is planted.
    pub(crate) fn planted(&self, bug: PlantedBug) -> bool {
        self.planted == Some(bug)
    }
}
