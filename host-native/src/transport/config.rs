//! The options of each transport: the `[transport.redis]` and
//! `[transport.nats]` tables of the daemon's config (`docs/transports.md`),
//! with the seed's option names (camelCase) and defaults. A queue's
//! names default from the queue's name so that a queue called `planner`
//! gets exactly the seed's defaults (`SCHEDULER_PLANNER`,
//! `scheduler.planner`, `scheduler-planners`, `SCHEDULER_PLANNER_DEAD`,
//! `scheduler.planner.dead`; Redis `scheduler:planner`,
//! `scheduler:planner:dead`, `scheduler:planner:idemp:`), and `runner`
//! likewise.

use serde::Deserialize;
use std::collections::BTreeMap;

/// Which broker carries a queue (`transport = "redis"` in its `[[queue]]`
/// table).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TransportKind {
    /// Redis Streams.
    Redis,
    /// NATS JetStream.
    Nats,
}

impl TransportKind {
    /// The config and label name.
    pub fn name(self) -> &'static str {
        match self {
            TransportKind::Redis => "redis",
            TransportKind::Nats => "nats",
        }
    }
}

/// The `[transport]` table.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TransportSection {
    /// `[transport.redis]`.
    pub redis: Option<RedisOptions>,
    /// `[transport.nats]`.
    pub nats: Option<NatsOptions>,
    /// How long the outbox remembers a published message id, in ms
    /// (default 7 days).
    pub remember_ms: Option<i64>,
}

/// `[transport.redis]`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RedisOptions {
    /// `redis://[user:password@]host:port[/db]` (default
    /// `redis://127.0.0.1:6379`). Never logged with its password.
    #[serde(default = "redis_url")]
    pub url: String,
    /// How long a `SET NX` idempotency key lives, in ms (default 24 h).
    #[serde(default = "day_ms")]
    pub idempotency_ttl_ms: u64,
    /// The prefix of chime's own keys: job hashes, counters (default
    /// `chime:`).
    #[serde(default = "key_prefix")]
    pub key_prefix: String,
    /// Per queue names, `[transport.redis.queues.<queue>]`.
    #[serde(default)]
    pub queues: BTreeMap<String, RedisQueueOptions>,
}

fn redis_url() -> String {
    "redis://127.0.0.1:6379".into()
}

fn key_prefix() -> String {
    "chime:".into()
}

fn day_ms() -> u64 {
    86_400_000
}

/// One queue's Redis names (each defaults from the queue's name `q`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RedisQueueOptions {
    /// The work stream (`scheduler:<q>`).
    pub stream: Option<String>,
    /// The consumer group (`scheduler-<q>s`).
    pub consumer_group: Option<String>,
    /// The dead-letter stream (`scheduler:<q>:dead`).
    pub dead_letter_stream: Option<String>,
    /// The prefix of `SET NX` idempotency keys (`scheduler:<q>:idemp:`).
    pub idempotency_key_prefix: Option<String>,
}

/// One queue's Redis names, defaults applied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RedisNames {
    /// Work stream.
    pub stream: String,
    /// Consumer group.
    pub group: String,
    /// Dead-letter stream.
    pub dead: String,
    /// Idempotency key prefix.
    pub idemp: String,
}

impl RedisOptions {
    /// The names of `queue`.
    pub fn names(&self, queue: &str) -> RedisNames {
        let o = self.queues.get(queue).cloned().unwrap_or_default();
        RedisNames {
            stream: o.stream.unwrap_or_else(|| format!("scheduler:{queue}")),
            group: o
                .consumer_group
                .unwrap_or_else(|| format!("scheduler-{queue}s")),
            dead: o
                .dead_letter_stream
                .unwrap_or_else(|| format!("scheduler:{queue}:dead")),
            idemp: o
                .idempotency_key_prefix
                .unwrap_or_else(|| format!("scheduler:{queue}:idemp:")),
        }
    }
}

impl Default for RedisOptions {
    fn default() -> Self {
        RedisOptions {
            url: redis_url(),
            idempotency_ttl_ms: day_ms(),
            key_prefix: key_prefix(),
            queues: BTreeMap::new(),
        }
    }
}

/// `[transport.nats]`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NatsOptions {
    /// `nats://host:port` (default `nats://127.0.0.1:4222`).
    #[serde(default = "nats_url")]
    pub url: String,
    /// Per queue names, `[transport.nats.queues.<queue>]`.
    #[serde(default)]
    pub queues: BTreeMap<String, NatsQueueOptions>,
}

fn nats_url() -> String {
    "nats://127.0.0.1:4222".into()
}

impl Default for NatsOptions {
    fn default() -> Self {
        NatsOptions {
            url: nats_url(),
            queues: BTreeMap::new(),
        }
    }
}

/// One queue's JetStream names (each defaults from the queue's name).
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NatsQueueOptions {
    /// `SCHEDULER_<Q>` (upper case, `.`/`:`/`/`/`-` as `_`).
    pub stream: Option<String>,
    /// `scheduler.<q>`.
    pub subject: Option<String>,
    /// `scheduler-<q>s`.
    pub durable_consumer: Option<String>,
    /// `SCHEDULER_<Q>_DEAD`.
    pub dead_letter_stream: Option<String>,
    /// `scheduler.<q>.dead`.
    pub dead_letter_subject: Option<String>,
}

/// One queue's JetStream names, defaults applied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NatsNames {
    /// Work stream.
    pub stream: String,
    /// Work subject.
    pub subject: String,
    /// Durable pull consumer.
    pub durable: String,
    /// Dead-letter stream.
    pub dead_stream: String,
    /// Dead-letter subject.
    pub dead_subject: String,
}

impl NatsOptions {
    /// The names of `queue`.
    pub fn names(&self, queue: &str) -> NatsNames {
        let o = self.queues.get(queue).cloned().unwrap_or_default();
        let upper: String = queue
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() {
                    c.to_ascii_uppercase()
                } else {
                    '_'
                }
            })
            .collect();
        // Subjects: `.` separates tokens, so other separators become `_`.
        let token: String = queue
            .chars()
            .map(|c| if matches!(c, ':' | '/') { '_' } else { c })
            .collect();
        let stream = o.stream.unwrap_or_else(|| format!("SCHEDULER_{upper}"));
        let subject = o.subject.unwrap_or_else(|| format!("scheduler.{token}"));
        NatsNames {
            dead_stream: o
                .dead_letter_stream
                .unwrap_or_else(|| format!("{stream}_DEAD")),
            dead_subject: o
                .dead_letter_subject
                .unwrap_or_else(|| format!("{subject}.dead")),
            durable: o
                .durable_consumer
                .unwrap_or_else(|| format!("scheduler-{token}s")),
            stream,
            subject,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_defaults_for_planner_and_runner() {
        let n = NatsOptions::default().names("planner");
        assert_eq!(n.stream, "SCHEDULER_PLANNER");
        assert_eq!(n.subject, "scheduler.planner");
        assert_eq!(n.durable, "scheduler-planners");
        assert_eq!(n.dead_stream, "SCHEDULER_PLANNER_DEAD");
        assert_eq!(n.dead_subject, "scheduler.planner.dead");
        let r = NatsOptions::default().names("runner");
        assert_eq!(r.stream, "SCHEDULER_RUNNER");
        assert_eq!(r.durable, "scheduler-runners");
        let r = RedisOptions::default().names("planner");
        assert_eq!(r.dead, "scheduler:planner:dead");
        assert_eq!(r.idemp, "scheduler:planner:idemp:");
        assert_eq!(r.stream, "scheduler:planner");
        assert_eq!(r.group, "scheduler-planners");
    }
}
