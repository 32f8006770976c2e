//! The outbox pattern on a derived local queue.
//!
//! A service that must deliver a message *because* it changed state records
//! the message in the same engine (journaled with the change), then delivers
//! it from the outbox queue with at-least-once semantics: a delivery that
//! fails or whose worker dies is retried with backoff and, when out of
//! attempts, dead-lettered like any job. The queue is named
//! `__chime_outbox:<name>` so it can never collide with a user queue (the
//! `__chime` prefix is reserved) and is declared implicitly with the queue
//! defaults on first enqueue.
//!
//! [`Outbox::run_once`] is the synchronous driver both hosts can share; an
//! async host builds the same two inputs with [`Outbox::claim`] and
//! [`Outbox::settle`] around its own await.

use crate::engine::Engine;
use crate::time::Timestamp;
use crate::wire::error::Error;
use crate::wire::input::{EnqueueRequest, Input};
use crate::wire::job::{Claimed, JobState};
use crate::wire::name;
use crate::wire::name::OUTBOX_PREFIX;
use crate::wire::payload::Payload;
use crate::wire::reply::Reply;

/// A named outbox: a handle that builds inputs for its derived queue.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outbox {
    queue: String,
}

/// What one [`Outbox::run_once`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Delivery {
    /// Nothing was available to deliver.
    Idle,
    /// One message was handed to the delivery function; the job is now in
    /// `state` (`completed`, or `scheduled`/`available` for a retry, or
    /// `dead`/`dropped` when out of attempts).
    Delivered {
        /// The message's job.
        job: crate::wire::ids::JobId,
        /// Its state after the outcome was recorded.
        state: JobState,
    },
}

impl Outbox {
    /// The outbox called `name` (naming rule; its queue is `__chime_outbox:<name>`).
    pub fn new(name: &str) -> Result<Outbox, Error> {
        name::validate("outbox", name, 128 - OUTBOX_PREFIX.len())?;
        Ok(Outbox {
            queue: format!("{OUTBOX_PREFIX}{name}"),
        })
    }

    /// The derived queue's name.
    pub fn queue(&self) -> &str {
        &self.queue
    }

    /// The input that records a message (with an optional idempotency key).
    pub fn enqueue(&self, payload: Payload, key: Option<String>) -> Input {
        let mut req = EnqueueRequest::new(self.queue.clone(), payload);
        req.key = key;
        Input::EnqueueOutbox(req)
    }

    /// The input that leases one message to `worker`.
    pub fn claim(&self, worker: &str) -> Input {
        Input::Claim {
            queue: self.queue.clone(),
            worker: worker.to_owned(),
            max: 1,
            lease_ms: None,
        }
    }

    /// The input that records a delivery's outcome: `Ok` acknowledges,
    /// `Err(text)` fails the attempt (retried with the queue's backoff).
    pub fn settle(&self, claimed: &Claimed, outcome: Result<(), String>) -> Input {
        match outcome {
            Ok(()) => Input::Complete {
                job: claimed.job,
                token: claimed.token,
            },
            Err(error) => Input::Fail {
                job: claimed.job,
                token: claimed.token,
                error,
                retry_at: None,
            },
        }
    }

    /// Claims one message, hands it to `delivery` and records the outcome:
    /// two `handle` calls at `now` (a host that journals inputs journals
    /// both). The caller drains commands afterwards as after any `handle`.
    pub fn run_once<F>(
        &self,
        engine: &mut Engine,
        now: Timestamp,
        worker: &str,
        delivery: F,
    ) -> Result<Delivery, Error>
    where
        F: FnOnce(&Claimed) -> Result<(), String>,
    {
        let Reply::Claimed { jobs } = engine.handle(now, self.claim(worker))? else {
            unreachable!("Claim replies Claimed");
        };
        let Some(claimed) = jobs.into_iter().next() else {
            return Ok(Delivery::Idle);
        };
        let outcome = delivery(&claimed);
        match engine.handle(now, self.settle(&claimed, outcome))? {
            Reply::Job { job, state, .. } => Ok(Delivery::Delivered { job, state }),
            other => unreachable!("Complete/Fail reply Job, got {other:?}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::config::EngineConfig;

    fn t(ms: i64) -> Timestamp {
        Timestamp::from_millis(1_767_225_600_000 + ms).unwrap()
    }

    #[test]
    fn names() {
        assert_eq!(Outbox::new("mail").unwrap().queue(), "__chime_outbox:mail");
        assert_eq!(Outbox::new("").unwrap_err().code(), "invalid_name");
        assert_eq!(Outbox::new("__chime").unwrap_err().code(), "reserved_name");
        assert_eq!(Outbox::new("a b").unwrap_err().code(), "invalid_name");
        assert!(Outbox::new(&"x".repeat(113)).is_ok());
        assert!(Outbox::new(&"x".repeat(114)).is_err());
    }

    #[test]
    fn delivers_acks_and_retries() {
        let mut e = Engine::new(EngineConfig::default());
        let ob = Outbox::new("mail").unwrap();
        let idle = ob.run_once(&mut e, t(0), "w1", |_| panic!("nothing to deliver"));
        assert_eq!(idle.unwrap(), Delivery::Idle);

        let p = Payload::from_json(r#"{"to":"a@example.com"}"#).unwrap();
        e.handle(t(0), ob.enqueue(p.clone(), Some("m1".into())))
            .unwrap();
        // The same key again is de-duplicated: one message.
        let again = e.handle(t(1), ob.enqueue(p, Some("m1".into()))).unwrap();
        assert!(matches!(
            again,
            Reply::Enqueued {
                deduplicated: true,
                ..
            }
        ));

        // A failed delivery is retried later, not lost.
        let mut seen = None;
        let failed = ob
            .run_once(&mut e, t(2), "w1", |c| {
                seen = Some(c.payload.as_json().to_owned());
                Err("smtp 451".into())
            })
            .unwrap();
        assert_eq!(seen.as_deref(), Some(r#"{"to":"a@example.com"}"#));
        let Delivery::Delivered { job, state } = failed else {
            panic!("delivered")
        };
        assert_eq!(state, JobState::Scheduled);
        let info = e.job(job).unwrap();
        assert_eq!(info.last_error.as_deref(), Some("smtp 451"));
        let retry_at = info.run_at;
        assert!(retry_at > t(2));

        // Not yet due: idle. At the retry time it is delivered and acked.
        let early = ob.run_once(&mut e, t(3), "w1", |_| Ok(())).unwrap();
        assert_eq!(early, Delivery::Idle);
        let done = ob.run_once(&mut e, retry_at, "w2", |_| Ok(())).unwrap();
        assert_eq!(
            done,
            Delivery::Delivered {
                job,
                state: JobState::Completed
            }
        );
        assert_eq!(e.queue_stats(ob.queue()).unwrap().totals.completed, 1);
    }

    /// Only the outbox's own input adds to its queue: a plain `Enqueue` by
    /// the derived name is `reserved_name`, an `EnqueueOutbox` to a user
    /// queue is `invalid_input`, and neither changes anything.
    #[test]
    fn only_the_outbox_enqueues_to_its_queue() {
        let mut e = Engine::new(EngineConfig::default());
        let ob = Outbox::new("mail").unwrap();
        let plain = Input::Enqueue(EnqueueRequest::new(ob.queue(), Payload::default()));
        let err = e.handle(t(0), plain).unwrap_err();
        assert_eq!((err.code(), err.field()), ("reserved_name", Some("queue")));
        let stray = Input::EnqueueOutbox(EnqueueRequest::new("emails", Payload::default()));
        let err = e.handle(t(0), stray).unwrap_err();
        assert_eq!((err.code(), err.field()), ("invalid_input", Some("queue")));
        assert_eq!(e.queue_names().count(), 0, "nothing declared");
        e.handle(t(0), ob.enqueue(Payload::default(), None))
            .unwrap();
        assert_eq!(e.queue_stats(ob.queue()).unwrap().available, 1);
    }
}
