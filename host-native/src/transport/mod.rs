//! The transport port: queues that live in a message broker (Redis
//! Streams, NATS JetStream) instead of chime's own store. It names no
//! adapter; each broker's adapter is a module of its own behind the cargo
//! feature `transports` (`redis.rs`, `nats.rs`).
//!
//! # Design note (for every adapter)
//!
//! - **What a transport is.** A queue declared `external` in the engine
//!   (`QueueConfig::mode`) whose work lives in a broker. The engine never
//!   holds its jobs: a fire of a schedule targeting it is the command
//!   `Command::Enqueue { fire, queue, payload, headers, priority,
//!   max_attempts, .. }`, which the host publishes. A [`Transport`] is
//!   both sides of that broker:
//!   - the **publish side** ([`Transport::publish`]): one [`Message`] in
//!     the canonical format of [`message`], **idempotent by its id**
//!     ([`Message::id`]: the fire id for a fire, see [`message`]). A second
//!     publish of the same id is [`Published::Duplicate`] and adds nothing
//!     (Redis: `SET NX` under `idempotencyKeyPrefix`; NATS: `Nats-Msg-Id`
//!     plus a check). The broker's own window is the second line: chime's
//!     store is the authority (the [`outbox`] remembers what it published).
//!   - the **consume side**: the existing queue port
//!     [`QueueBackend`], so chime's worker
//!     pools, the HTTP API and the conformance suite work a transport queue
//!     as any other (claim / heartbeat / complete / fail / cancel / redrive
//!     / purge_dead / job / maintain). Job ids and lease tokens are the
//!     adapter's own counters, kept in the broker (so several chime
//!     processes can work one queue).
//!   - [`Transport::ping`] (the health check's round trip) and
//!     [`Transport::depth`] (`chime_queue_depth{transport,queue,state}`).
//!   - **Counting** (`crate::driver::TransportCounters`): the outbox
//!     publisher counts publishes, duplicates, refusals and failed tries;
//!     each adapter counts at the one place an attempt settles in its
//!     broker (acked, retried, dead-lettered, dropped), after the broker
//!     took it, so a count is something the broker did.
//! - **Rules are core's, not the adapter's.** `fail` applies
//!   [`chime_core::after_failure`] with the queue's [`QueueConfig`](chime_core::QueueConfig) (so the
//!   retry delays are the engine's, to the millisecond) and the job's
//!   attempt number as the broker counts deliveries. Exhausted: with
//!   `deadLetter` (the seed's `deadLetterEnabled`, default true) the message
//!   is copied to the dead-letter stream with the headers of
//!   [`message::DeadLetter`] (`runId` = fire id, `scheduleId`, `attempts`,
//!   `reason`) and removed from the work stream; without it, dropped.
//!   An expired lease counts as a failed attempt with error
//!   `lease_expired`, as in the engine.
//! - **Settlement reaches the engine.** When a job that carries a fire
//!   ends (completed, dead-lettered, dropped, cancelled) the adapter calls
//!   its [`Settlements`] with `Input::FireSettled`'s fields, so overlap
//!   policies and the stale-fire reconciliation (`lease_ms` deadline of
//!   the external queue) work as for local queues. A consumer that is not
//!   chime settles nothing: the engine's deadline then settles the fire.
//! - **Never silently differ.** Where a broker cannot honour a rule of the
//!   port, the input is refused with a typed error with a stable code
//!   ([`unsupported`]: `invalid_input` naming the field), documented in
//!   `docs/transports.md`. Example: Redis Streams and JetStream deliver in
//!   publish order, so a non-zero `priority` is refused.
//! - **Publishing from the daemon** ([`outbox`]): the driver hands the
//!   turn's `Enqueue` commands to the store's `deliver` after the turn is
//!   committed; [`outbox::Outboxed`] writes them to a durable outbox (a
//!   redb file beside the data) in that call, and a publisher task
//!   publishes them in order, retrying with capped backoff while the broker
//!   is away; a message leaves the outbox's pending set only once the
//!   broker acknowledged it. After a crash the outbox (and the journal's
//!   re-delivery, which the outbox de-duplicates by id) publishes again;
//!   the message id makes that idempotent.
//! - **Bounded.** Claims are bounded by `max`, the outbox publishes in
//!   chunks, listings take a limit, every retry loop has a capped backoff.
//! - **Errors**: the broker away is [`PortError::Unavailable`] (the call may
//!   or may not have taken effect); a refusal changes nothing.

pub mod config;
pub mod ids;
pub mod message;
pub mod nats;
pub mod outbox;
pub mod reads;
pub mod redis;
pub mod routed;
pub mod source;

pub use message::{DeadLetter, Message, MessageError};

use crate::backend::{PortError, PortFuture, QueueBackend};
use chime_core::{Error, FireId, FireOutcome, Input, JobEnd};
use std::time::Duration;

/// What a publish did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Published {
    /// The message is in the work stream now.
    New,
    /// A message with this id was published before; nothing was added.
    Duplicate,
}

/// The messages of one queue by state (the `state` label of
/// `chime_queue_depth`, named as for local queues).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Depth {
    /// Waiting for a retry time.
    pub scheduled: u64,
    /// Claimable now.
    pub available: u64,
    /// Delivered to a consumer and not yet settled.
    pub claimed: u64,
    /// In the dead-letter stream.
    pub dead: u64,
}

impl Depth {
    /// `(state, count)` in the label order of the metric.
    pub fn states(&self) -> [(&'static str, u64); 4] {
        [
            ("scheduled", self.scheduled),
            ("available", self.available),
            ("claimed", self.claimed),
            ("dead", self.dead),
        ]
    }
}

/// A queue in a message broker: the consume side is the queue port, plus
/// publishing, a health ping and depth (see the module docs).
pub trait Transport: QueueBackend {
    /// Publishes `message` to its queue's work stream, idempotently by
    /// [`Message::id`].
    fn publish<'a>(&'a self, message: &'a Message) -> PortFuture<'a, Published>;

    /// One round trip to the broker.
    fn ping(&self) -> PortFuture<'_, Duration>;

    /// The queue's messages by state.
    fn depth<'a>(&'a self, queue: &'a str) -> PortFuture<'a, Depth>;

    /// The queues this transport carries (from the config).
    fn queues(&self) -> Vec<String>;

    /// Whether `job` is in this transport's ids ([`ids`]): the one
    /// backend a job-id verb goes to.
    fn owns(&self, job: chime_core::JobId) -> bool;

    /// Up to `limit` of `queue`'s dead letters, the oldest deaths first,
    /// and how many it keeps (`GET /v1/queues/{name}/dead`); `None` if
    /// the broker has no such queue.
    fn dead_letters<'a>(
        &'a self,
        queue: &'a str,
        limit: usize,
    ) -> PortFuture<'a, Option<crate::backend::views::DeadLetters>>;
}

/// Where a transport reports that a fire's job ended: the engine's
/// `Input::FireSettled`. The daemon passes its driver handle; a test, a
/// recorder.
pub trait Settlements: Send + Sync {
    /// `fire` ended with `outcome` (and `job`, the run history's record).
    fn settle(&self, fire: FireId, outcome: FireOutcome, job: Option<JobEnd>)
    -> PortFuture<'_, ()>;
}

/// The input a settlement is.
pub fn settled_input(fire: FireId, outcome: FireOutcome, job: Option<JobEnd>) -> Input {
    Input::FireSettled { fire, outcome, job }
}

/// Settlements into the engine through the driver.
impl Settlements for crate::driver::Handle {
    fn settle(
        &self,
        fire: FireId,
        outcome: FireOutcome,
        job: Option<JobEnd>,
    ) -> PortFuture<'_, ()> {
        Box::pin(async move {
            match self.call(settled_input(fire, outcome, job)).await {
                Ok(Ok(_)) => Ok(()),
                Ok(Err(e)) => Err(PortError::Refused(e)),
                Err(_) => Err(PortError::Stopped),
            }
        })
    }
}

/// Settlements nobody hears (a transport used without an engine: the
/// conformance suite, a plain producer/consumer).
#[derive(Clone, Copy, Debug, Default)]
pub struct NoSettlements;

impl Settlements for NoSettlements {
    fn settle(&self, _: FireId, _: FireOutcome, _: Option<JobEnd>) -> PortFuture<'_, ()> {
        Box::pin(async { Ok(()) })
    }
}

/// The refusal of an input a broker cannot honour: core's
/// `invalid_input` naming `field`, with the transport in the message.
/// Stable: the code is `invalid_input`, the field the wire name.
pub fn unsupported(transport: &str, field: &'static str, what: &str) -> PortError {
    PortError::Refused(Error::InvalidInput {
        field,
        message: format!("the {transport} transport {what}"),
    })
}

/// Capped exponential backoff for the loops that wait for a broker: the
/// `n`-th consecutive failure (from 0) waits `base · 2^n`, at most `cap`.
pub fn backoff(n: u32, base: Duration, cap: Duration) -> Duration {
    base.saturating_mul(1u32 << n.min(16)).min(cap)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_is_capped() {
        let (b, c) = (Duration::from_millis(50), Duration::from_secs(5));
        assert_eq!(backoff(0, b, c), b);
        assert_eq!(backoff(3, b, c), Duration::from_millis(400));
        assert_eq!(backoff(40, b, c), c);
    }

    #[test]
    fn refusals_have_a_stable_code() {
        let e = unsupported("redis", "priority", "delivers in publish order");
        assert_eq!(e.code(), "invalid_input");
        assert!(e.to_string().contains("redis transport"));
    }
}
