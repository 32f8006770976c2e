//! Leadership: the gate for firing in a replicated deployment.
//!
//! A standalone engine always leads with epoch 0. Otherwise the engine
//! fires only while it holds a grant (`now < valid_until`); the grant's
//! epoch is stamped on every fire so stores can reject a stale leader.

use crate::time::Timestamp;
use crate::wire::command::{Event, Output};
use crate::wire::error::Error;
use crate::wire::ids::Epoch;
use crate::wire::input::LeadershipGrant;
use serde::{Deserialize, Serialize};

/// Leadership state (part of the snapshot).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct Leadership {
    /// The current grant; `None` when not leading (or standalone).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grant: Option<LeadershipGrant>,
    /// The highest epoch ever granted: a lower one is refused.
    pub highest: Epoch,
}

impl Leadership {
    /// Whether the engine may fire at `now`.
    pub(crate) fn is_leader(&self, standalone: bool, now: Timestamp) -> bool {
        standalone || self.grant.is_some_and(|g| now < g.valid_until)
    }

    /// The epoch stamped on fires.
    pub(crate) fn epoch(&self, standalone: bool) -> Epoch {
        match (standalone, self.grant) {
            (false, Some(g)) => g.epoch,
            _ => Epoch(0),
        }
    }

    /// Ends a grant that ran out at or before `now` (`LeadershipLost`).
    pub(crate) fn expire(&mut self, now: Timestamp, out: &mut Output) {
        if let Some(g) = self.grant.filter(|g| now >= g.valid_until) {
            self.grant = None;
            out.event(Event::LeadershipLost { epoch: g.epoch });
        }
    }

    /// When [`Leadership::expire`] next has work.
    pub(crate) fn next_deadline(&self) -> Option<Timestamp> {
        self.grant.map(|g| g.valid_until)
    }

    /// Checks a grant without applying it.
    pub(crate) fn check(
        &self,
        now: Timestamp,
        grant: Option<LeadershipGrant>,
    ) -> Result<(), Error> {
        let Some(g) = grant else { return Ok(()) };
        if g.epoch < self.highest {
            return Err(Error::InvalidInput {
                field: "epoch",
                message: format!(
                    "epoch {} is older than epoch {} already granted",
                    g.epoch.0, self.highest.0
                ),
            });
        }
        if g.valid_until <= now {
            return Err(Error::InvalidInput {
                field: "validUntil",
                message: format!("{} is not after the engine clock {now}", g.valid_until),
            });
        }
        Ok(())
    }

    /// Applies a checked grant (or a revocation). Returns whether the engine leads.
    pub(crate) fn apply(
        &mut self,
        standalone: bool,
        now: Timestamp,
        grant: Option<LeadershipGrant>,
        out: &mut Output,
    ) -> bool {
        match grant {
            Some(g) => {
                self.highest = self.highest.max(g.epoch);
                if !standalone {
                    self.grant = Some(g);
                }
            }
            None => {
                if let Some(g) = self.grant.take() {
                    out.event(Event::LeadershipLost { epoch: g.epoch });
                }
            }
        }
        self.is_leader(standalone, now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(ms: i64) -> Timestamp {
        Timestamp::from_millis(ms).unwrap()
    }

    #[test]
    fn grant_expire_and_stale_epoch() {
        let mut l = Leadership::default();
        let mut out = Output::default();
        assert!(!l.is_leader(false, t(0)));
        let g = LeadershipGrant {
            epoch: Epoch(3),
            valid_until: t(100),
        };
        l.check(t(0), Some(g)).unwrap();
        assert!(l.apply(false, t(0), Some(g), &mut out));
        assert_eq!(l.epoch(false), Epoch(3));
        assert!(l.is_leader(false, t(99)) && !l.is_leader(false, t(100)));
        l.expire(t(99), &mut out);
        assert_eq!(out.len(), 0);
        l.expire(t(100), &mut out);
        l.expire(t(101), &mut out);
        assert_eq!(out.len(), 1, "lost once");
        let stale = LeadershipGrant {
            epoch: Epoch(2),
            valid_until: t(500),
        };
        assert_eq!(
            l.check(t(200), Some(stale)).unwrap_err().code(),
            "invalid_input"
        );
        assert!(
            l.apply(true, t(0), None, &mut out),
            "standalone always leads"
        );
    }
}
