//! A queue's JetStream objects, created if missing and checked if
//! present: the work stream (WorkQueue retention: a message leaves it
//! when acknowledged), its durable pull consumer, and the dead-letter
//! stream (limits retention, at most `limits.deadLettersPerQueue`
//! messages, the oldest discarded first as core's `EVICTION_ORDER`).
//!
//! A stream that exists with another retention or without the subject is
//! refused (`invalid_input`, field `transport`): chime does not take over
//! a stream somebody else uses differently. The settings chime derives
//! from the queue's config (the consumer's `ackWait` = `leaseMs`, the
//! duplicate window = `dedupWindowMs`, the dead-letter bound) are updated
//! in place when they differ, as a re-declare changes the queue.

use super::NatsError;
use crate::transport::config::NatsNames;
use async_nats::jetstream::consumer::{AckPolicy, DeliverPolicy, PullConsumer, pull};
use async_nats::jetstream::stream::{self, DiscardPolicy, RetentionPolicy, StorageType};
use async_nats::jetstream::{self as js};
use chime_core::QueueConfig;
use std::time::Duration;

/// The duplicate window of the dead-letter stream: its message ids make
/// a dead-lettering that was interrupted and done again add one copy.
pub(super) const DEAD_DUPLICATE_WINDOW: Duration = Duration::from_secs(120);

/// The shortest duplicate window JetStream is given (it refuses zero as
/// "default" would mean 2 minutes).
const MIN_WINDOW: Duration = Duration::from_millis(1);

/// The objects of one queue.
pub(super) struct Objects {
    pub work: stream::Stream,
    pub dead: stream::Stream,
    pub consumer: PullConsumer,
}

fn ms(ms: i64) -> Duration {
    Duration::from_millis(ms.max(0) as u64).max(MIN_WINDOW)
}

fn work_config(names: &NatsNames, config: &QueueConfig) -> stream::Config {
    stream::Config {
        name: names.stream.clone(),
        subjects: vec![names.subject.clone()],
        retention: RetentionPolicy::WorkQueue,
        storage: StorageType::File,
        duplicate_window: ms(config.dedup_window_ms),
        allow_direct: true,
        description: Some(format!("chime queue {:?}: work", config.name)),
        ..Default::default()
    }
}

fn dead_config(names: &NatsNames, config: &QueueConfig, dead_max: usize) -> stream::Config {
    stream::Config {
        name: names.dead_stream.clone(),
        subjects: vec![names.dead_subject.clone()],
        retention: RetentionPolicy::Limits,
        storage: StorageType::File,
        max_messages: i64::try_from(dead_max.max(1)).unwrap_or(i64::MAX),
        discard: DiscardPolicy::Old,
        duplicate_window: DEAD_DUPLICATE_WINDOW,
        allow_direct: true,
        description: Some(format!("chime queue {:?}: dead letters", config.name)),
        ..Default::default()
    }
}

fn consumer_config(names: &NatsNames, config: &QueueConfig) -> pull::Config {
    pull::Config {
        durable_name: Some(names.durable.clone()),
        description: Some(format!("chime queue {:?}", config.name)),
        deliver_policy: DeliverPolicy::All,
        ack_policy: AckPolicy::Explicit,
        ack_wait: ms(config.lease_ms),
        // Unlimited: chime counts the deliveries and dead-letters the one
        // beyond the job's maxAttempts itself (JetStream's max-deliveries
        // advisory can be lost, and a job's own maxAttempts is per message).
        max_deliver: -1,
        filter_subject: names.subject.clone(),
        max_ack_pending: -1,
        ..Default::default()
    }
}

/// Creates or checks `stream` as `want`: same retention and subject, the
/// tunables updated.
async fn ensure_stream(
    js: &js::Context,
    want: stream::Config,
) -> Result<stream::Stream, NatsError> {
    let name = want.name.clone();
    match js.get_stream(&name).await {
        Ok(mut s) => {
            let have = s
                .info()
                .await
                .map_err(|e| NatsError::broker("stream info", e))?
                .config
                .clone();
            if have.retention != want.retention {
                return Err(NatsError::Mismatch {
                    stream: name,
                    why: format!(
                        "retention {:?}, chime needs {:?}",
                        have.retention, want.retention
                    ),
                });
            }
            if !have.subjects.iter().any(|s| s == &want.subjects[0]) {
                return Err(NatsError::Mismatch {
                    stream: name,
                    why: format!(
                        "subjects {:?}, without {:?}",
                        have.subjects, want.subjects[0]
                    ),
                });
            }
            let tuned = stream::Config {
                duplicate_window: want.duplicate_window,
                max_messages: want.max_messages,
                discard: want.discard,
                ..have.clone()
            };
            if tuned != have {
                js.update_stream(&tuned)
                    .await
                    .map_err(|e| NatsError::broker("update stream", e))?;
            }
            Ok(s)
        }
        Err(e)
            if matches!(e.kind(), js::context::GetStreamErrorKind::JetStream(ref j)
                if j.error_code() == js::ErrorCode::STREAM_NOT_FOUND) =>
        {
            js.create_stream(want)
                .await
                .map_err(|e| NatsError::broker("create stream", e))
        }
        Err(e) => Err(NatsError::broker("get stream", e)),
    }
}

/// Creates or checks the objects of `config`'s queue.
pub(super) async fn ensure(
    js: &js::Context,
    names: &NatsNames,
    config: &QueueConfig,
    dead_max: usize,
) -> Result<Objects, NatsError> {
    let work = ensure_stream(js, work_config(names, config)).await?;
    let dead = ensure_stream(js, dead_config(names, config, dead_max)).await?;
    let want = consumer_config(names, config);
    let consumer = match work.get_consumer::<pull::Config>(&names.durable).await {
        Ok(mut c) => {
            let have = c
                .info()
                .await
                .map_err(|e| NatsError::broker("consumer info", e))?
                .config
                .clone();
            if have.ack_policy != AckPolicy::Explicit || have.filter_subject != want.filter_subject
            {
                return Err(NatsError::Mismatch {
                    stream: names.stream.clone(),
                    why: format!(
                        "consumer {:?} with ack policy {:?} and filter {:?}, chime needs explicit acks of {:?}",
                        names.durable, have.ack_policy, have.filter_subject, want.filter_subject
                    ),
                });
            }
            if have.ack_wait != want.ack_wait || have.max_deliver != want.max_deliver {
                work.update_consumer(want)
                    .await
                    .map_err(|e| NatsError::broker("update consumer", e))?
            } else {
                c
            }
        }
        Err(_) => work
            .create_consumer(want)
            .await
            .map_err(|e| NatsError::broker("create consumer", e))?,
    };
    Ok(Objects {
        work,
        dead,
        consumer,
    })
}

/// The objects of a queue another process declared, if they exist (a
/// claim never creates a queue).
pub(super) async fn existing(js: &js::Context, names: &NatsNames) -> Option<Objects> {
    let work = js.get_stream(&names.stream).await.ok()?;
    let dead = js.get_stream(&names.dead_stream).await.ok()?;
    let consumer = work
        .get_consumer::<pull::Config>(&names.durable)
        .await
        .ok()?;
    Some(Objects {
        work,
        dead,
        consumer,
    })
}
