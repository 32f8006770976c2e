//! The NATS JetStream transport: a queue's work is a WorkQueue stream
//! (`SCHEDULER_PLANNER`, subject `scheduler.planner`) worked by a durable
//! pull consumer (`scheduler-planners`); its dead letters a stream of
//! their own (`SCHEDULER_PLANNER_DEAD`, `scheduler.planner.dead`). Names
//! are the seed's, from `[transport.nats]` ([`NatsOptions`]); the objects
//! are created if missing and checked if present (`setup`).
//!
//! How the port maps onto JetStream (`docs/transports.md`, "NATS"):
//!
//! - **Publish**: the canonical body ([`Message::body`]) to the queue's
//!   subject with `Nats-Msg-Id` = [`Message::id`] (the fire id for a
//!   fire), awaiting the `PubAck`; a `duplicate` ack is
//!   [`Published::Duplicate`]. The stream's duplicate window is the
//!   queue's `dedupWindowMs`; chime's outbox stays the authority.
//! - **Job ids** are the work stream's sequence of the job's message
//!   (assigned by the broker, so every process agrees); a redriven job
//!   keeps its id in the `Chime-Job` header of the message republished.
//! - **Claim** is a no-wait fetch of up to `max` messages; the lease token
//!   is the delivery's consumer sequence (never handed out twice), the
//!   lease the consumer's `ackWait` (= the queue's `leaseMs`), the attempt
//!   JetStream's delivery count. **Heartbeat** is `+WPI`, **complete**
//!   `+ACK`, a retry `-NAK` with core's `after_failure` delay, all
//!   confirmed by the server (double acks). JetStream does not fence acks
//!   by delivery, so chime checks the token first (`book`).
//! - **Dead letters** are chime's: a failure out of attempts, or a
//!   delivery beyond the job's `maxAttempts` (a lease that expired on the
//!   last attempt: `lease_expired`), is copied to the dead-letter stream
//!   with the seed's headers (`runId`, `scheduleId`, `attempts`, `reason`)
//!   under a message id of its own, then acknowledged (removed from the
//!   work stream). The consumer's `maxDeliver` is unlimited: there is no
//!   max-deliveries advisory to lose; the delivery count is reconciled on
//!   every claim.
//! - **Priorities and delays** JetStream cannot honour (it delivers in
//!   publish order, at once): a non-zero `priority` and a future
//!   `runAt`/`delayMs` are refused ([`unsupported`](crate::transport::unsupported),
//!   `invalid_input` naming the field), as is a lease other than the
//!   queue's (`leaseMs`: the consumer's `ackWait` is one per queue).

mod book;
mod consume;
mod dead;
mod port;
mod setup;

pub(super) use super::ids::SEQ_MASK;
use super::ids::{SEQ_BITS, nats_tag as tag_of};
use crate::backend::{PortError, PortFuture};
use crate::driver::{Clock, SystemClock};
use crate::transport::config::{NatsNames, NatsOptions};
use crate::transport::{Depth, Message, NoSettlements, Published, Settlements, Transport};
use async_nats::jetstream;
use async_nats::jetstream::message::PublishMessage;
use book::Book;
use chime_core::{EngineConfig, Error as CoreError, JobId, QueueConfig, Timestamp};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

/// Header of a message chime republished (a redrive): the job id it
/// keeps.
pub const H_JOB: &str = "Chime-Job";
/// Header of a dead letter: when it died, epoch ms (for `purgeDead`'s
/// `before`).
pub const H_DIED_AT: &str = "Chime-Died-At";
/// The transport's name in metrics and messages.
pub const NAME: &str = "nats";

/// How long a JetStream API call or ack may take before the broker counts
/// as away (`unavailable`).
const REQUEST_TIMEOUT: Duration = Duration::from_secs(5);

/// Why the transport could not do something.
#[derive(Debug, thiserror::Error)]
pub enum NatsError {
    /// The first connection failed (the URL is shown without credentials).
    #[error("nats: cannot connect to {url}: {source}")]
    Connect {
        /// The URL, credentials removed.
        url: String,
        /// Why.
        source: async_nats::ConnectError,
    },
    /// A broker call failed: the broker is away, or refused.
    #[error("nats: {what}: {source}")]
    Broker {
        /// What was asked.
        what: &'static str,
        /// Why it failed.
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A stream or consumer exists in a shape chime cannot use.
    #[error("nats: stream {stream:?} exists with {why}")]
    Mismatch {
        /// The stream.
        stream: String,
        /// What differs.
        why: String,
    },
}

impl NatsError {
    fn broker(what: &'static str, e: impl std::error::Error + Send + Sync + 'static) -> NatsError {
        NatsError::Broker {
            what,
            source: Box::new(e),
        }
    }
}

impl From<NatsError> for PortError {
    fn from(e: NatsError) -> PortError {
        match e {
            NatsError::Mismatch { .. } => PortError::Refused(CoreError::InvalidInput {
                field: "transport",
                message: e.to_string(),
            }),
            other => PortError::Unavailable(Box::new(other)),
        }
    }
}

/// `url` without the user and password of its authority.
pub fn redacted(url: &str) -> String {
    match url.split_once("://") {
        Some((scheme, rest)) => match rest.split_once('@') {
            Some((_, host)) => format!("{scheme}://***@{host}"),
            None => url.to_owned(),
        },
        None => url.to_owned(),
    }
}

/// A declared queue: its config and JetStream objects.
struct Queue {
    /// The tag of its job ids ([`tag_of`] its work stream).
    tag: u64,
    config: QueueConfig,
    names: NatsNames,
    work: jetstream::stream::Stream,
    dead: jetstream::stream::Stream,
    consumer: jetstream::consumer::PullConsumer,
}

/// The NATS JetStream transport (see the module docs). Cheap to share
/// behind an `Arc`; every method is one or a few broker round trips.
pub struct NatsQueues {
    client: async_nats::Client,
    js: jetstream::Context,
    options: NatsOptions,
    engine: EngineConfig,
    clock: Arc<dyn Clock>,
    settlements: Arc<dyn Settlements>,
    /// Where settlements are counted (acked, retried, dead-lettered,
    /// dropped): the daemon's `/metrics`.
    counters: crate::driver::TransportCounters,
    namespace: Option<String>,
    queues: RwLock<HashMap<String, Arc<Queue>>>,
    declaring: tokio::sync::Mutex<()>,
    book: Mutex<Book>,
}

impl Queue {
    /// The id of the job whose message has work stream sequence `seq`.
    fn job(&self, seq: u64) -> JobId {
        JobId(self.tag << SEQ_BITS | (seq & SEQ_MASK))
    }
}

impl std::fmt::Debug for NatsQueues {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NatsQueues")
            .field("url", &redacted(&self.options.url))
            .finish_non_exhaustive()
    }
}

impl NatsQueues {
    /// Connects to `options.url` (the client reconnects on its own when
    /// the server goes away; calls meanwhile are `unavailable`), with
    /// `engine`'s limits and seed for the queue rules.
    pub async fn connect(
        options: NatsOptions,
        engine: EngineConfig,
    ) -> Result<NatsQueues, NatsError> {
        let client = async_nats::ConnectOptions::new()
            .name("chime")
            .connection_timeout(REQUEST_TIMEOUT)
            .request_timeout(Some(REQUEST_TIMEOUT))
            .retry_on_initial_connect()
            .max_reconnects(None)
            .connect(options.url.as_str())
            .await
            .map_err(|source| NatsError::Connect {
                url: redacted(&options.url),
                source,
            })?;
        let js = jetstream::ContextBuilder::new()
            .timeout(REQUEST_TIMEOUT)
            .build(client.clone());
        Ok(NatsQueues {
            client,
            js,
            options,
            engine,
            clock: Arc::new(SystemClock),
            settlements: Arc::new(NoSettlements),
            counters: Default::default(),
            namespace: None,
            queues: RwLock::new(HashMap::new()),
            declaring: tokio::sync::Mutex::new(()),
            book: Mutex::new(Book::default()),
        })
    }

    /// Reports the end of every job that carries a fire to `settlements`
    /// (the daemon: its driver handle).
    pub fn with_settlements(mut self, settlements: Arc<dyn Settlements>) -> NatsQueues {
        self.settlements = settlements;
        self
    }

    /// Counts settlements into `counters`.
    pub fn with_counters(mut self, counters: crate::driver::TransportCounters) -> NatsQueues {
        self.counters = counters;
        self
    }

    /// Counts one settlement of `queue`.
    fn count(&self, event: crate::driver::TransportEvent, queue: &str) {
        self.counters.count(event, NAME, queue);
    }

    /// Puts every stream, subject and consumer name in a namespace of its
    /// own (`<NS>_SCHEDULER_PLANNER`, `<ns>.scheduler.planner`,
    /// `<ns>-scheduler-planners`): several deployments (or tests) on one
    /// NATS account. Characters other than ASCII letters, digits, `_` and
    /// `-` become `_`.
    pub fn with_namespace(mut self, namespace: &str) -> NatsQueues {
        let ns: String = namespace
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        self.namespace = (!ns.is_empty()).then_some(ns);
        self
    }

    /// The names of `queue`'s JetStream objects.
    pub fn names(&self, queue: &str) -> NatsNames {
        let n = self.options.names(queue);
        let Some(ns) = &self.namespace else {
            return n;
        };
        let upper = ns.to_ascii_uppercase();
        NatsNames {
            stream: format!("{upper}_{}", n.stream),
            subject: format!("{ns}.{}", n.subject),
            durable: format!("{ns}-{}", n.durable),
            dead_stream: format!("{upper}_{}", n.dead_stream),
            dead_subject: format!("{ns}.{}", n.dead_subject),
        }
    }

    /// The JetStream context (for operations chime does not wrap, and
    /// for tests that look at the streams).
    pub fn jetstream(&self) -> &jetstream::Context {
        &self.js
    }

    fn now(&self) -> Timestamp {
        self.clock.now()
    }

    fn book(&self) -> std::sync::MutexGuard<'_, Book> {
        self.book.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn declared(&self, queue: &str) -> Option<Arc<Queue>> {
        self.queues
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(queue)
            .cloned()
    }

    /// Creates or checks the objects of `config`'s queue and keeps its
    /// config for the rules.
    async fn ensure(&self, config: &QueueConfig) -> Result<Arc<Queue>, PortError> {
        let _one = self.declaring.lock().await;
        let names = self.names(&config.name);
        let o = setup::ensure(
            &self.js,
            &names,
            config,
            self.engine.limits.dead_letters_per_queue,
        )
        .await?;
        let tag = tag_of(&names.stream);
        self.check_tag(&config.name, tag)?;
        let q = Arc::new(Queue {
            tag,
            config: config.clone(),
            names,
            work: o.work,
            dead: o.dead,
            consumer: o.consumer,
        });
        self.queues
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert(config.name.clone(), q.clone());
        Ok(q)
    }

    /// Refuses a queue whose job ids would collide with another's (their
    /// work streams' names hash to one tag): name one of the streams
    /// differently.
    fn check_tag(&self, queue: &str, tag: u64) -> Result<(), PortError> {
        let queues = self.queues.read().unwrap_or_else(|e| e.into_inner());
        match queues
            .values()
            .find(|q| q.tag == tag && q.config.name != queue)
        {
            Some(other) => Err(PortError::Refused(CoreError::InvalidInput {
                field: "stream",
                message: format!(
                    "the job ids of queues {queue:?} and {:?} would collide (their streams' \
                     names hash alike): name one of the streams differently",
                    other.config.name
                ),
            })),
            None => Ok(()),
        }
    }

    /// The queue whose job ids carry `job`'s tag.
    fn by_tag(&self, job: JobId) -> Option<Arc<Queue>> {
        let tag = job.0 >> SEQ_BITS;
        self.queues
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .find(|q| q.tag == tag)
            .cloned()
    }

    /// `queue` as declared here, or as another process left it in the
    /// broker (with the implicit config); `None` if it does not exist.
    async fn find(&self, queue: &str) -> Option<Arc<Queue>> {
        if let Some(q) = self.declared(queue) {
            return Some(q);
        }
        let names = self.names(queue);
        let o = setup::existing(&self.js, &names).await?;
        let tag = tag_of(&names.stream);
        self.check_tag(queue, tag).ok()?;
        let q = Arc::new(Queue {
            tag,
            config: QueueConfig::implicit(queue, &self.engine.limits),
            names,
            work: o.work,
            dead: o.dead,
            consumer: o.consumer,
        });
        self.queues
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .entry(queue.to_owned())
            .or_insert(q.clone());
        Some(q)
    }

    /// `queue`, created with the implicit config if it does not exist
    /// (an enqueue creates its queue).
    async fn find_or_create(&self, queue: &str) -> Result<Arc<Queue>, PortError> {
        match self.find(queue).await {
            Some(q) => Ok(q),
            None => {
                self.ensure(&QueueConfig::implicit(queue, &self.engine.limits))
                    .await
            }
        }
    }

    /// Publishes `body` with `headers` to `subject`, awaiting the PubAck.
    async fn publish_raw(
        &self,
        subject: &str,
        id: &str,
        headers: &[(&str, String)],
        body: String,
    ) -> Result<jetstream::publish::PublishAck, PortError> {
        let mut p = PublishMessage::build().payload(body.into()).message_id(id);
        for (name, value) in headers {
            p = p.header(*name, value.as_str());
        }
        let ack = self
            .js
            .send_publish(subject.to_owned(), p)
            .await
            .map_err(|e| unavailable("publish", e))?;
        ack.await.map_err(|e| unavailable("publish ack", e))
    }

    /// Publishes a message of a queue that exists (declared or implicit).
    async fn publish_message(&self, message: &Message) -> Result<(JobId, bool), PortError> {
        if message.priority != 0 {
            return Err(crate::transport::unsupported(
                NAME,
                "priority",
                "delivers in publish order: a job priority other than 0 cannot be honoured",
            ));
        }
        let q = self.find_or_create(&message.queue).await?;
        let ack = self
            .publish_raw(
                &q.names.subject,
                &message.id,
                &message.headers(),
                message.body(),
            )
            .await?;
        Ok((q.job(ack.sequence), ack.duplicate))
    }
}

/// Runs the port's `maintain` every `every` (leases past their deadline,
/// retention), until the task is aborted.
pub fn spawn_maintenance(t: Arc<NatsQueues>, every: Duration) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            if let Err(e) = crate::backend::QueueBackend::maintain(t.as_ref()).await {
                tracing::warn!(error = %e, "nats: maintenance failed");
            }
        }
    })
}

/// A broker failure as the port's `unavailable`.
fn unavailable(what: &'static str, e: impl std::error::Error + Send + Sync + 'static) -> PortError {
    PortError::Unavailable(Box::new(NatsError::broker(what, e)))
}

impl Transport for NatsQueues {
    fn publish<'a>(&'a self, message: &'a Message) -> PortFuture<'a, Published> {
        Box::pin(async move {
            let (_, duplicate) = self.publish_message(message).await?;
            Ok(if duplicate {
                Published::Duplicate
            } else {
                Published::New
            })
        })
    }

    /// A JetStream API round trip (account info): the server is up and
    /// JetStream answers.
    fn ping(&self) -> PortFuture<'_, Duration> {
        Box::pin(async move {
            if self.client.connection_state() != async_nats::connection::State::Connected {
                return Err(unavailable(
                    "ping",
                    std::io::Error::other("not connected to the server"),
                ));
            }
            let start = Instant::now();
            self.js
                .query_account()
                .await
                .map_err(|e| unavailable("ping", e))?;
            Ok(start.elapsed())
        })
    }

    /// From the consumer's counts: `available` = not yet delivered,
    /// `claimed` = delivered and not acknowledged (JetStream counts a
    /// message waiting for its retry delay there too, so `scheduled` is
    /// 0), `dead` = the dead-letter stream's messages.
    fn depth<'a>(&'a self, queue: &'a str) -> PortFuture<'a, Depth> {
        Box::pin(async move {
            let Some(q) = self.find(queue).await else {
                return Ok(Depth::default());
            };
            let mut consumer = q.consumer.clone();
            let info = consumer
                .info()
                .await
                .map_err(|e| unavailable("consumer info", e))?;
            let (available, claimed) = (info.num_pending, info.num_ack_pending as u64);
            let mut dead = q.dead.clone();
            let dead = dead
                .info()
                .await
                .map_err(|e| unavailable("stream info", e))?
                .state
                .messages;
            Ok(Depth {
                scheduled: 0,
                available,
                claimed,
                dead,
            })
        })
    }

    fn queues(&self) -> Vec<String> {
        let mut q: Vec<String> = self.options.queues.keys().cloned().collect();
        for name in self.queues.read().unwrap_or_else(|e| e.into_inner()).keys() {
            if !q.contains(name) {
                q.push(name.clone());
            }
        }
        q.sort();
        q
    }

    fn owns(&self, job: JobId) -> bool {
        matches!(super::ids::owner(job), super::ids::Owner::Nats(_))
    }

    /// The dead-letter stream's letters of the queue (bounded by
    /// `limits.deadLettersPerQueue`, as the stream is).
    fn dead_letters<'a>(
        &'a self,
        queue: &'a str,
        limit: usize,
    ) -> PortFuture<'a, Option<crate::backend::views::DeadLetters>> {
        Box::pin(async move {
            let Some(q) = self.find(queue).await else {
                return Ok(None);
            };
            let letters = self.letters(&q).await?;
            Ok(Some(crate::backend::views::DeadLetters {
                queue: queue.to_owned(),
                total: letters.len() as u64,
                jobs: letters.iter().take(limit).map(|l| l.info(&q)).collect(),
            }))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_shown_without_credentials() {
        assert_eq!(
            redacted("nats://user:secret@127.0.0.1:4222"),
            "nats://***@127.0.0.1:4222"
        );
        assert_eq!(redacted("nats://127.0.0.1:4222"), "nats://127.0.0.1:4222");
    }

    #[test]
    fn a_stream_in_another_shape_is_refused_with_a_stable_code() {
        let e: PortError = NatsError::Mismatch {
            stream: "S".into(),
            why: "retention Limits".into(),
        }
        .into();
        assert_eq!(e.code(), "invalid_input");
    }
}
