//! Named leases: mutual exclusion with fencing tokens for runners that share
//! one engine (`AcquireLease` / `RenewLease` / `ReleaseLease`).
//!
//! Semantics:
//! - A lease is held from `acquire` until `expires_at` (exclusive: at
//!   `now >= expires_at` it has expired), unless renewed or released. An
//!   expiry past the end of time is cut at `Timestamp::MAX`, and such a
//!   lease never expires (the clock cannot pass `MAX`).
//! - Fencing tokens come from one engine-wide counter, so each acquisition
//!   gets a token greater than every token handed out before, for any name:
//!   tokens of one name strictly increase across acquisitions, even after
//!   release or expiry, and released names need not be remembered (memory is
//!   bounded by the leases currently held).
//! - `acquire` by the current holder (same owner) while held is an
//!   idempotent re-acquire: it extends the lease and returns the *same*
//!   token (a runner retrying after a lost reply must not fence itself off).
//!   By anyone else while held: `LeaseHeld`.
//! - `renew` needs the current token (`LeaseHeld` otherwise, including after
//!   expiry: a runner whose lease lapsed must re-acquire and get a new token).
//! - `release` with the current token frees the lease; releasing a lease
//!   that is not held is a no-op (idempotent); with a stale token while
//!   someone holds it: `LeaseHeld`.
//! - Expiry is reported by `advance` as `Event::NamedLeaseExpired`. The
//!   engine advances before every input, so `acquire` never meets an expired
//!   lease that was not reported; if it did, it would simply take it over.

use crate::time::Timestamp;
use crate::wire::command::{Event, Output};
use crate::wire::error::Error;
use crate::wire::ids::LeaseToken;
use serde::{Deserialize, Deserializer, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// Most named leases held at once (`LimitExceeded{what: "named_leases"}`
/// beyond). A constant rather than a `Limits` field to keep the wire types
/// stable; leases are few by nature.
pub(crate) const MAX_HELD_LEASES: usize = 100_000;

/// Every named lease currently held. Part of the engine snapshot; the expiry
/// index is derived and rebuilt on restore.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Leases {
    /// Last fencing token handed out (tokens start at 1).
    last_token: u64,
    /// Held leases by name.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    held: BTreeMap<String, Held>,
    /// Derived: `(expires_at, name)` of every held lease.
    #[serde(skip)]
    expiry: BTreeSet<(Timestamp, String)>,
}

/// One held lease.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct Held {
    /// Who holds it.
    pub owner: String,
    /// Its fencing token.
    pub token: LeaseToken,
    /// It expires at this instant.
    pub expires_at: Timestamp,
}

fn held_err(name: &str, why: &'static str) -> Error {
    Error::LeaseHeld {
        name: name.to_owned(),
        why,
    }
}

impl Leases {
    /// Takes lease `name` for `owner` until `now + ttl_ms`; see the module
    /// docs for re-acquire by the holder. Returns the token and expiry.
    /// The arguments were checked by [`check`] before the engine advanced.
    pub(crate) fn acquire(
        &mut self,
        now: Timestamp,
        name: &str,
        owner: &str,
        ttl_ms: i64,
    ) -> Result<(LeaseToken, Timestamp), Error> {
        assert!(ttl_ms > 0, "ttl checked before the advance");
        let expires_at = now.saturating_add_ms(ttl_ms);
        let token = match self.held.get(name) {
            Some(h) if !h.expires_at.lease_ended(now) && h.owner != owner => {
                return Err(held_err(name, "is held by another owner"));
            }
            Some(h) if !h.expires_at.lease_ended(now) => h.token,
            current => {
                if current.is_none() && self.held.len() >= MAX_HELD_LEASES {
                    return Err(Error::LimitExceeded {
                        what: "named_leases",
                        limit: MAX_HELD_LEASES as u64,
                    });
                }
                self.last_token = self
                    .last_token
                    .checked_add(1)
                    .expect("lease tokens exhausted");
                LeaseToken(self.last_token)
            }
        };
        let owner = owner.to_owned();
        self.set(
            name,
            Held {
                owner,
                token,
                expires_at,
            },
        );
        Ok((token, expires_at))
    }

    /// Extends the lease held with `token` to `now + ttl_ms` (the token
    /// stays). Not held, or held with another token: `LeaseHeld`. The
    /// arguments were checked by [`check`] before the engine advanced.
    pub(crate) fn renew(
        &mut self,
        now: Timestamp,
        name: &str,
        token: LeaseToken,
        ttl_ms: i64,
    ) -> Result<(LeaseToken, Timestamp), Error> {
        assert!(ttl_ms > 0, "ttl checked before the advance");
        let h = self
            .holder(now, name)
            .ok_or_else(|| held_err(name, "is not held (expired or released)"))?;
        if h.token != token {
            return Err(held_err(name, "is held with another token"));
        }
        let held = Held {
            expires_at: now.saturating_add_ms(ttl_ms),
            ..h.clone()
        };
        let expires_at = held.expires_at;
        self.set(name, held);
        Ok((token, expires_at))
    }

    /// Frees the lease held with `token`. Not held: no-op. Held with another
    /// token: `LeaseHeld`.
    pub(crate) fn release(
        &mut self,
        now: Timestamp,
        name: &str,
        token: LeaseToken,
    ) -> Result<(), Error> {
        match self.holder(now, name) {
            Some(h) if h.token != token => Err(held_err(name, "is held with another token")),
            Some(_) => {
                self.remove(name);
                Ok(())
            }
            None => Ok(()),
        }
    }

    /// Reports and forgets every lease that expired at or before `now`.
    pub(crate) fn advance(&mut self, now: Timestamp, out: &mut Output) {
        while self.expiry.first().is_some_and(|e| e.0.lease_ended(now)) {
            let (_, name) = self.expiry.first().cloned().expect("non-empty");
            let held = self.remove(&name);
            out.event(Event::NamedLeaseExpired {
                name,
                token: held.token,
            });
        }
    }

    /// When [`Leases::advance`] next has work: the earliest expiry.
    /// A lease ending at `Timestamp::MAX` never ends, so it is no deadline.
    pub(crate) fn next_deadline(&self) -> Option<Timestamp> {
        self.expiry
            .first()
            .map(|e| e.0)
            .filter(|&t| t < Timestamp::MAX)
    }

    /// The lease `name` if held at `now`.
    pub(crate) fn holder(&self, now: Timestamp, name: &str) -> Option<&Held> {
        self.held
            .get(name)
            .filter(|h| !h.expires_at.lease_ended(now))
    }

    /// Leases held (some may have expired if `advance` has not run yet).
    #[allow(dead_code)] // engine getter, not wired yet (tests use it)
    pub(crate) fn len(&self) -> usize {
        self.held.len()
    }

    fn set(&mut self, name: &str, held: Held) {
        assert!(
            held.token.0 >= 1 && held.token.0 <= self.last_token,
            "token not issued"
        );
        if let Some(old) = self.held.get(name) {
            assert!(
                self.expiry.remove(&(old.expires_at, name.to_owned())),
                "expiry index out of step"
            );
        }
        assert!(
            self.expiry.insert((held.expires_at, name.to_owned())),
            "expiry index out of step"
        );
        self.held.insert(name.to_owned(), held);
    }

    fn remove(&mut self, name: &str) -> Held {
        let held = self.held.remove(name).expect("held lease");
        assert!(
            self.expiry.remove(&(held.expires_at, name.to_owned())),
            "expiry index out of step"
        );
        held
    }

    /// Rebuilds the expiry index, checking tokens (used on restore).
    pub(crate) fn rebuild_indexes(&mut self) -> Result<(), String> {
        self.expiry.clear();
        let mut tokens = BTreeSet::new();
        for (name, h) in &self.held {
            if h.token.0 == 0 || h.token.0 > self.last_token || !tokens.insert(h.token) {
                return Err(format!("lease {name:?}: token not issued or not unique"));
            }
            self.expiry.insert((h.expires_at, name.clone()));
        }
        Ok(())
    }

    /// Asserts the expiry index matches the held leases (tests, simulation).
    pub(crate) fn check_invariants(&self) {
        let mut fresh = self.clone();
        if let Err(why) = fresh.rebuild_indexes() {
            panic!("lease state incoherent: {why}");
        }
        assert_eq!(fresh.expiry, self.expiry, "lease expiry index out of step");
    }
}

/// The serialized fields of [`Leases`] (read by `Deserialize` and by the
/// compact decoder, below).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct LeasesData {
    last_token: u64,
    #[serde(default)]
    held: BTreeMap<String, Held>,
}

// The compact decoder's records of the snapshot's leases (see
// `wire::decode`): fields in declaration order, as the derive reads them.
#[cfg(any(feature = "compact-decode", test))]
mod decode {
    use super::{Held, Leases, LeasesData};
    use crate::time::Timestamp;
    use crate::wire::decode::{Field, Restore, Restoring, Slot, record_decoder};
    use crate::wire::ids::LeaseToken;
    use std::collections::BTreeMap;

    record_decoder! {
        HeldB => Held, "Held", "3 elements", deny_unknown: true;
        owner: String, "owner", req;
        token: LeaseToken, "token", req;
        expires_at: Timestamp, "expiresAt", req;
    }

    record_decoder! {
        LeasesDataB => LeasesData, "LeasesData", "2 elements", deny_unknown: true;
        last_token: u64, "lastToken", req;
        held: BTreeMap<String, Held>, "held", def;
    }

    /// `Leases` reads its fields, then rebuilds and checks its expiry
    /// index, as its `Deserialize` impl does.
    impl Restore for Leases {
        type Parts = LeasesData;

        fn restore(p: LeasesData) -> Result<Leases, String> {
            Leases::restored(p.last_token, p.held)
        }
    }

    impl Field for Leases {
        type Store = Restoring<Leases>;

        fn slot(store: &mut Restoring<Leases>) -> Slot<'_> {
            Slot::Checked(store)
        }

        fn take(store: &mut Restoring<Leases>) -> Option<Leases> {
            store.take()
        }
    }
}

impl<'de> Deserialize<'de> for Leases {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let data = LeasesData::deserialize(d)?;
        Leases::restored(data.last_token, data.held).map_err(serde::de::Error::custom)
    }
}

impl Leases {
    /// Leases from their serialized fields, with the expiry index rebuilt
    /// and checked (shared by `Deserialize` and the compact decoder).
    pub(crate) fn restored(
        last_token: u64,
        held: BTreeMap<String, Held>,
    ) -> Result<Leases, String> {
        let mut leases = Leases {
            last_token,
            held,
            expiry: BTreeSet::new(),
        };
        leases.rebuild_indexes()?;
        Ok(leases)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::command::Command;

    fn t(ms: i64) -> Timestamp {
        Timestamp::from_millis(ms).unwrap()
    }

    fn events(out: &mut Output) -> Vec<Event> {
        let mut v = Vec::new();
        while let Some(c) = out.pop() {
            match c {
                Command::Event(e) => v.push(e),
                other => panic!("unexpected {other:?}"),
            }
        }
        v
    }

    #[test]
    fn acquire_contend_release() {
        let mut ls = Leases::default();
        let (tok, exp) = ls.acquire(t(0), "cron-runner", "host-a", 1_000).unwrap();
        assert_eq!((tok, exp), (LeaseToken(1), t(1_000)));
        let err = ls
            .acquire(t(10), "cron-runner", "host-b", 1_000)
            .unwrap_err();
        assert_eq!(err.code(), "lease_held");
        // Another name is independent.
        assert_eq!(
            ls.acquire(t(10), "other", "host-b", 1_000).unwrap().0,
            LeaseToken(2)
        );
        // Same owner re-acquiring: same token, extended.
        assert_eq!(
            ls.acquire(t(20), "cron-runner", "host-a", 500),
            Ok((tok, t(520)))
        );
        ls.check_invariants();
        // Release with a stale token is refused; with the right one frees it.
        assert_eq!(
            ls.release(t(30), "cron-runner", LeaseToken(9))
                .unwrap_err()
                .code(),
            "lease_held"
        );
        ls.release(t(30), "cron-runner", tok).unwrap();
        // Releasing again is a no-op.
        ls.release(t(31), "cron-runner", tok).unwrap();
        let (tok2, _) = ls.acquire(t(40), "cron-runner", "host-b", 1_000).unwrap();
        assert!(tok2 > tok);
        assert_eq!(ls.holder(t(40), "cron-runner").unwrap().owner, "host-b");
        ls.check_invariants();
    }

    #[test]
    fn renew_needs_the_current_token() {
        let mut ls = Leases::default();
        let (tok, _) = ls.acquire(t(0), "x", "a", 100).unwrap();
        assert_eq!(ls.renew(t(50), "x", tok, 100), Ok((tok, t(150))));
        assert_eq!(ls.next_deadline(), Some(t(150)));
        assert_eq!(
            ls.renew(t(60), "x", LeaseToken(tok.0 + 1), 100)
                .unwrap_err()
                .code(),
            "lease_held"
        );
        assert_eq!(
            ls.renew(t(60), "nope", tok, 10).unwrap_err().code(),
            "lease_held"
        );
        // After expiry, renew fails even with the old token.
        assert_eq!(
            ls.renew(t(150), "x", tok, 100).unwrap_err().code(),
            "lease_held"
        );
        ls.check_invariants();
    }

    #[test]
    fn expiry_is_reported_and_tokens_keep_increasing() {
        let mut ls = Leases::default();
        let mut out = Output::default();
        let mut last = LeaseToken(0);
        for round in 0..5 {
            let now = round * 1_000;
            ls.advance(t(now), &mut out);
            let (tok, _) = ls
                .acquire(t(now), "leader", &format!("owner-{round}"), 1_000)
                .unwrap();
            assert!(tok > last, "fencing tokens strictly increase");
            last = tok;
            let ev = events(&mut out);
            if round > 0 {
                let expired = Event::NamedLeaseExpired {
                    name: "leader".into(),
                    token: LeaseToken(tok.0 - 1),
                };
                assert_eq!(ev, vec![expired]);
            }
            ls.check_invariants();
        }
        ls.advance(t(4_999), &mut out);
        assert!(events(&mut out).is_empty());
        ls.advance(t(5_000), &mut out);
        assert_eq!(events(&mut out).len(), 1);
        assert_eq!(ls.len(), 0);
        assert_eq!(ls.next_deadline(), None);
    }

    #[test]
    fn expiry_saturates() {
        let mut ls = Leases::default();
        let (_, exp) = ls.acquire(t(0), "a", "o", i64::MAX).unwrap();
        assert_eq!(exp, Timestamp::MAX);
    }

    #[test]
    fn serde_round_trip() {
        let mut ls = Leases::default();
        ls.acquire(t(0), "b", "o1", 100).unwrap();
        ls.acquire(t(0), "a", "o2", 50).unwrap();
        let json = serde_json::to_string(&ls).unwrap();
        assert_eq!(
            json,
            r#"{"lastToken":2,"held":{"a":{"owner":"o2","token":2,"expiresAt":50},"b":{"owner":"o1","token":1,"expiresAt":100}}}"#
        );
        let back: Leases = serde_json::from_str(&json).unwrap();
        assert_eq!(back, ls);
        assert_eq!(serde_json::to_string(&back).unwrap(), json);
        assert!(
            serde_json::from_str::<Leases>(&json.replace(r#""lastToken":2"#, r#""lastToken":1"#))
                .is_err()
        );
        let empty: Leases = serde_json::from_str(r#"{"lastToken":0}"#).unwrap();
        assert_eq!(empty, Leases::default());
    }
}
