//! The Redis Streams transport: one stream per queue with a consumer
//! group, idempotent publishing (`SET NX` of `idempotencyKeyPrefix` +
//! message id, then `XADD`, in one script), claims by `XREADGROUP`,
//! settlement by `XACK` + `XDEL`, a dead-letter stream, depth from `XLEN`
//! / `XPENDING`. Streams and groups are created if missing.
//!
//! Every verb is one Lua script (`scripts.rs`), so it is atomic and reads
//! the server's clock; what a failed attempt leads to is decided here with
//! core's [`after_failure`] and the queue's config, and the script only
//! stores it (fenced by the lease token). Queue configs live in Redis
//! (`<stream>:config`), so every chime process on this Redis works a
//! queue with the same rules. Expired leases are failed attempts
//! (`lease_expired`) at [`maintain`](RedisTransport::maintain_now), which
//! [`RedisTransport::spawn_maintenance`] runs periodically; the same pass
//! completes the waiting jobs whose entry another consumer of the group
//! deleted (`XACK` + `XDEL`, its complete verb), so their records end and
//! their fires settle instead of staying `available` for ever.
//!
//! Differences from the engine, refused rather than silent
//! (`docs/transports.md`): a non-zero `priority` is `invalid_input`
//! (streams deliver in publish order). Job ids and tokens are the
//! transport's own (`<keyPrefix>seq:job`, `seq:token`).
//!
//! A single Redis server (or a primary with replicas): the scripts touch
//! keys they compute (job hashes), which Redis Cluster does not allow.

mod port;
pub mod scripts;

use super::config::{RedisNames, RedisOptions};
use super::ids::redis_job;
use super::message::{DeadLetter, Message, encode_headers};
use super::{Settlements, unsupported};
use crate::backend::PortError;
use chime_core::{
    AfterFailure, EngineConfig, EnqueueRequest, FireId, FireOutcome, Input, JobId, QueueConfig,
    Timestamp, after_failure, validate_input,
};
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The transport's label (`chime_queue_depth{transport="redis"}`).
pub const NAME: &str = "redis";

/// The consumer name chime's claims use in every group.
pub const CONSUMER: &str = "chime";

/// How many pending entries of other consumers one maintenance pass
/// looks at per queue (`XAUTOCLAIM … COUNT`): the pass stays short; the
/// scan's cursor carries on at the next pass (every second).
pub const AUTOCLAIM_COUNT: u32 = 100;

/// How many waiting jobs one maintenance pass checks per queue for an
/// entry another consumer deleted (`XACK` + `XDEL`: its complete): the
/// pass stays short; the scan's cursor (`<stream>:availscan`) carries on
/// at the next pass, so every waiting job is looked at within
/// `ceil(waiting / VANISHED_COUNT)` passes.
pub const VANISHED_COUNT: u32 = 100;

/// The scripts, loaded once per process (redis-rs re-loads them after a
/// server restart: `NOSCRIPT`).
struct Scripts {
    enqueue: redis::Script,
    claim: redis::Script,
    heartbeat: redis::Script,
    settle: redis::Script,
    cancel: redis::Script,
    redrive: redis::Script,
    purge: redis::Script,
    expired: redis::Script,
    vanished: redis::Script,
}

impl Scripts {
    fn new() -> Scripts {
        let s = |body| redis::Script::new(&scripts::source(body));
        Scripts {
            enqueue: s(scripts::ENQUEUE),
            claim: s(scripts::CLAIM),
            heartbeat: s(scripts::HEARTBEAT),
            settle: s(scripts::SETTLE),
            cancel: s(scripts::CANCEL),
            redrive: s(scripts::REDRIVE),
            purge: s(scripts::PURGE),
            expired: s(scripts::EXPIRED),
            vanished: s(scripts::VANISHED),
        }
    }
}

/// A queue this process knows: its config (from Redis) and names.
#[derive(Clone, Debug)]
struct Known {
    config: QueueConfig,
    names: RedisNames,
}

/// The Redis Streams transport (see the module docs).
pub struct RedisTransport {
    client: redis::Client,
    conn: tokio::sync::Mutex<Option<ConnectionManager>>,
    options: RedisOptions,
    engine: EngineConfig,
    queues: Mutex<HashMap<String, Known>>,
    scripts: Scripts,
    settlements: Arc<dyn Settlements>,
    /// Where settlements are counted (acked, retried, dead-lettered,
    /// dropped): the daemon's `/metrics`.
    counters: crate::driver::TransportCounters,
    /// The queues of the config (for [`Transport::queues`](super::Transport::queues)).
    configured: Vec<String>,
}

impl std::fmt::Debug for RedisTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the URL: it may hold a password.
        f.debug_struct("RedisTransport")
            .field("queues", &self.configured)
            .finish_non_exhaustive()
    }
}

/// Why a reply could not be read.
#[derive(Debug, thiserror::Error)]
#[error("redis transport: unexpected reply: {0}")]
struct BadReply(String);

fn unavailable(e: redis::RedisError) -> PortError {
    PortError::Unavailable(Box::new(e))
}

fn bad(what: impl Into<String>) -> PortError {
    PortError::Unavailable(Box::new(BadReply(what.into())))
}

/// A state name as core spells it (a script's `invalid_state` reply).
fn state_name(s: &str) -> &'static str {
    match s {
        "scheduled" => "scheduled",
        "available" => "available",
        "claimed" => "claimed",
        "completed" => "completed",
        "dead" => "dead",
        "dropped" => "dropped",
        _ => "cancelled",
    }
}

/// A refusal a script returned (`[code, state?]`), as core's error.
fn refused(reply: &[String], job: JobId, op: &'static str) -> PortError {
    use chime_core::Error;
    PortError::Refused(match reply.first().map(String::as_str) {
        Some("unknown_job") => Error::UnknownJob(job),
        Some("lease_lost") => Error::LeaseLost { job },
        Some("invalid_state") => Error::InvalidState {
            job,
            state: state_name(reply.get(1).map_or("", String::as_str)),
            op,
        },
        other => return bad(format!("script said {other:?}")),
    })
}

fn num<T: std::str::FromStr>(s: &str) -> Result<T, PortError> {
    s.parse().map_err(|_| bad(format!("not a number: {s:?}")))
}

fn ts(ms: i64) -> Result<Timestamp, PortError> {
    Timestamp::from_millis(ms).map_err(|_| bad(format!("not a time: {ms}")))
}

impl RedisTransport {
    /// A transport for `options` (nothing is connected until the first
    /// call, so the daemon starts while Redis is away), with `engine`'s
    /// seed and limits, reporting fire settlements to `settlements`.
    /// `queues`: the queues of the config.
    pub fn new(
        options: RedisOptions,
        engine: EngineConfig,
        queues: Vec<String>,
        settlements: Arc<dyn Settlements>,
    ) -> Result<RedisTransport, PortError> {
        let client = redis::Client::open(options.url.as_str()).map_err(|e| {
            // The URL itself is never in the message (it may hold a password).
            PortError::Unavailable(format!("redis url: {:?}", e.kind()).into())
        })?;
        Ok(RedisTransport {
            client,
            conn: tokio::sync::Mutex::new(None),
            options,
            engine,
            queues: Mutex::new(HashMap::new()),
            scripts: Scripts::new(),
            settlements,
            counters: Default::default(),
            configured: queues,
        })
    }

    /// The transport, counting its settlements into `counters`.
    pub fn with_counters(mut self, counters: crate::driver::TransportCounters) -> RedisTransport {
        self.counters = counters;
        self
    }

    /// Counts one settlement of `queue`.
    fn count(&self, event: crate::driver::TransportEvent, queue: &str) {
        self.counters.count(event, NAME, queue);
    }

    /// The connection (made on first use; it reconnects by itself after).
    async fn conn(&self) -> Result<ConnectionManager, PortError> {
        let mut guard = self.conn.lock().await;
        if let Some(c) = &*guard {
            return Ok(c.clone());
        }
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Duration::from_secs(1))
            .set_response_timeout(Duration::from_secs(3))
            .set_number_of_retries(2)
            .set_max_delay(500);
        let c = ConnectionManager::new_with_config(self.client.clone(), config)
            .await
            .map_err(unavailable)?;
        *guard = Some(c.clone());
        Ok(c)
    }

    fn job_key(&self, job: u64) -> String {
        format!("{}job:{job}", self.options.key_prefix)
    }

    fn job_prefix(&self) -> String {
        format!("{}job:", self.options.key_prefix)
    }

    fn seq(&self, what: &str) -> String {
        format!("{}seq:{what}", self.options.key_prefix)
    }

    /// The names of `queue` under these options.
    pub fn names(&self, queue: &str) -> RedisNames {
        self.options.names(queue)
    }

    /// The queue's config: this process's copy, else Redis's; `None` if
    /// the queue was never declared.
    async fn known(&self, queue: &str) -> Result<Option<Known>, PortError> {
        if let Some(k) = self.queues.lock().expect("queues lock").get(queue) {
            return Ok(Some(k.clone()));
        }
        let names = self.names(queue);
        let mut c = self.conn().await?;
        let json: Option<String> = redis::cmd("GET")
            .arg(format!("{}:config", names.stream))
            .query_async(&mut c)
            .await
            .map_err(unavailable)?;
        let Some(json) = json else { return Ok(None) };
        let config: QueueConfig = serde_json::from_str(&json)
            .map_err(|e| bad(format!("queue config of {queue:?}: {e}")))?;
        let k = Known { config, names };
        self.queues
            .lock()
            .expect("queues lock")
            .insert(queue.to_owned(), k.clone());
        Ok(Some(k))
    }

    /// The queue's config, declaring it with core's implicit config if it
    /// does not exist (as an enqueue does in the engine).
    async fn known_or_implicit(&self, queue: &str) -> Result<Known, PortError> {
        if let Some(k) = self.known(queue).await? {
            return Ok(k);
        }
        let config = QueueConfig::implicit(queue, &self.engine.limits);
        self.declare_queue(&config, false).await?;
        Ok(Known {
            config,
            names: self.names(queue),
        })
    }

    /// Stores `config` (if `replace`, else only when absent) and creates
    /// the stream and group if missing.
    async fn declare_queue(&self, config: &QueueConfig, replace: bool) -> Result<(), PortError> {
        validate_input(
            &Input::DeclareQueue(config.clone()),
            &self.engine,
            Timestamp::MIN,
        )?;
        let names = self.names(&config.name);
        let mut c = self.conn().await?;
        let json = serde_json::to_string(config).expect("a queue config serializes");
        let mut set = redis::cmd("SET");
        set.arg(format!("{}:config", names.stream)).arg(&json);
        if !replace {
            set.arg("NX");
        }
        let _: Option<String> = set.query_async(&mut c).await.map_err(unavailable)?;
        self.ensure_group(&names).await?;
        let stored = if replace {
            config.clone()
        } else {
            let json: String = redis::cmd("GET")
                .arg(format!("{}:config", names.stream))
                .query_async(&mut c)
                .await
                .map_err(unavailable)?;
            serde_json::from_str(&json).map_err(|e| bad(e.to_string()))?
        };
        self.queues.lock().expect("queues lock").insert(
            config.name.clone(),
            Known {
                config: stored,
                names,
            },
        );
        Ok(())
    }

    /// `XGROUP CREATE … MKSTREAM` unless the group exists. From id 0:
    /// entries another program added before the group existed are
    /// delivered too.
    async fn ensure_group(&self, names: &RedisNames) -> Result<(), PortError> {
        let mut c = self.conn().await?;
        let r: redis::RedisResult<String> = redis::cmd("XGROUP")
            .arg("CREATE")
            .arg(&names.stream)
            .arg(&names.group)
            .arg("0")
            .arg("MKSTREAM")
            .query_async(&mut c)
            .await;
        match r {
            Ok(_) => Ok(()),
            Err(e) if e.code() == Some("BUSYGROUP") => Ok(()),
            Err(e) => Err(unavailable(e)),
        }
    }

    /// Adds `message` (job id `job`: 0 = the script takes one) under the
    /// idempotency key `idk` (with `ttl_ms`, 0 = none); `(job, dedup)`.
    #[allow(clippy::too_many_arguments)]
    async fn add(
        &self,
        k: &Known,
        message: &Message,
        key: Option<&str>,
        idk: Option<(String, u64)>,
        job: u64,
        run_at: Option<Timestamp>,
        delay_ms: Option<i64>,
    ) -> Result<(u64, bool), PortError> {
        let mut c = self.conn().await?;
        let headers = encode_headers(&message.headers());
        let (idk_key, ttl, has) = match idk {
            Some((k, ttl)) => (k, ttl, "1"),
            None => (format!("{}:none", k.names.stream), 0, "0"),
        };
        let r: Vec<String> = self
            .scripts
            .enqueue
            .key(&k.names.stream)
            .key(format!("{}:delayed", k.names.stream))
            .key(idk_key)
            .arg(self.job_prefix())
            .arg(self.seq("job"))
            .arg(&message.queue)
            .arg(message.body())
            .arg(headers)
            .arg(key.unwrap_or(""))
            .arg(run_at.map_or(0, |t| t.as_millis()))
            .arg(ttl)
            .arg(
                message
                    .max_attempts
                    .map(|m| m.to_string())
                    .unwrap_or_default(),
            )
            .arg(has)
            .arg(job)
            .arg(
                message
                    .fire
                    .as_ref()
                    .map(|f| f.to_string())
                    .unwrap_or_default(),
            )
            .arg(delay_ms.unwrap_or(0).max(0))
            .invoke_async(&mut c)
            .await
            .map_err(unavailable)?;
        match r.as_slice() {
            [id, dedup, _now] => Ok((num(id)?, dedup == "1")),
            other => Err(bad(format!("enqueue replied {other:?}"))),
        }
    }

    /// Checks an enqueue as the engine would, then refuses what streams
    /// cannot do (a priority).
    fn check_enqueue(&self, request: &EnqueueRequest) -> Result<(), PortError> {
        validate_input(
            &Input::Enqueue(request.clone()),
            &self.engine,
            Timestamp::MIN,
        )?;
        if request.priority != 0 {
            return Err(unsupported(
                NAME,
                "priority",
                "delivers in publish order: priority must be 0",
            ));
        }
        Ok(())
    }

    /// Tells the engine a fire's job ended (logged if it cannot hear it:
    /// the engine's own deadline for the fire settles it then).
    async fn settle_fire(&self, fire: &str, outcome: FireOutcome) {
        if fire.is_empty() {
            return;
        }
        let Ok(fire) = fire.parse::<FireId>() else {
            tracing::warn!(fire, "redis transport: a job's fire is not a fire id");
            return;
        };
        if let Err(e) = self.settlements.settle(fire.clone(), outcome, None).await {
            tracing::warn!(%fire, error = %e, "fire settlement not delivered to the engine");
        }
    }

    /// What a failed attempt `attempt` of `job` leads to: core's rule.
    fn decide(&self, k: &Known, max: &str, job: u64, attempt: u32) -> AfterFailure {
        let max = max.parse::<u32>().ok();
        after_failure(&k.config, max, self.engine.seed, redis_job(job), attempt)
    }

    /// Ends the claim `token` of `job` (`mode`: `live` or `expired`) with
    /// `error`, as core's rule says; the outcome and the fire settled.
    #[allow(clippy::too_many_arguments)]
    async fn fail_attempt(
        &self,
        k: &Known,
        job: u64,
        token: u64,
        attempt: u32,
        max: &str,
        body: Option<&str>,
        error: &str,
        retry_at: Option<Timestamp>,
        mode: &str,
    ) -> Result<super::super::backend::Failed, PortError> {
        use super::super::backend::Failed;
        let (action, delay) = match self.decide(k, max, job, attempt) {
            AfterFailure::Retry { delay_ms } => ("retry", delay_ms),
            AfterFailure::Exhausted { dead_letter: true } => ("dead", 0),
            AfterFailure::Exhausted { dead_letter: false } => ("drop", 0),
        };
        let mut headers = Vec::new();
        if action == "dead" {
            let message = body
                .and_then(|b| Message::parse(b).ok())
                .unwrap_or_else(|| Message {
                    id: Message::job_id(job),
                    queue: k.config.name.clone(),
                    fire: None,
                    priority: 0,
                    max_attempts: None,
                    headers: Default::default(),
                    payload: chime_core::Payload::null(),
                });
            let dead = DeadLetter {
                message,
                attempts: attempt,
                reason: error.to_owned(),
            };
            headers = dead.headers();
        }
        let r = self
            .settle(
                k, job, token, mode, action, delay, retry_at, error, &headers,
            )
            .await?;
        let [status, now, run, fire] = r.as_slice() else {
            return Err(refused(&r, redis_job(job), "fail"));
        };
        if status != "ok" {
            return Err(refused(&r, redis_job(job), "fail"));
        }
        let now: i64 = num(now)?;
        use crate::driver::TransportEvent as E;
        let queue = &k.config.name;
        Ok(match action {
            "retry" => {
                self.count(E::Retried, queue);
                let run: i64 = num(run)?;
                Failed::Retry {
                    run_at: ts(run)?,
                    delay_ms: run - now,
                }
            }
            "dead" => {
                self.count(E::DeadLettered, queue);
                self.settle_fire(fire, FireOutcome::Failed).await;
                Failed::Dead
            }
            _ => {
                self.count(E::Dropped, queue);
                self.settle_fire(fire, FireOutcome::Failed).await;
                Failed::Dropped
            }
        })
    }

    /// Runs the settle script.
    #[allow(clippy::too_many_arguments)]
    async fn settle(
        &self,
        k: &Known,
        job: u64,
        token: u64,
        mode: &str,
        action: &str,
        delay_ms: i64,
        retry_at: Option<Timestamp>,
        error: &str,
        dead_headers: &[(&'static str, String)],
    ) -> Result<Vec<String>, PortError> {
        let mut c = self.conn().await?;
        let s = &k.names.stream;
        let mut inv = self.scripts.settle.key(s);
        inv.key(format!("{s}:claimed"))
            .key(format!("{s}:done"))
            .key(format!("{s}:deadset"))
            .key(format!("{s}:delayed"))
            .key(&k.names.dead)
            .arg(self.job_key(job))
            .arg(job)
            .arg(token)
            .arg(mode)
            .arg(action)
            .arg(delay_ms)
            .arg(retry_at.map_or(0, |t| t.as_millis().max(1)))
            .arg(chime_core::truncate_text(
                error,
                self.engine.limits.text_bytes,
            ))
            .arg(&k.names.group)
            .arg(k.config.dedup_window_ms)
            .arg(self.engine.limits.dead_letters_per_queue)
            .arg(k.config.retention.completed_max)
            .arg(k.config.retention.completed_ms)
            .arg(self.job_prefix());
        for (n, v) in dead_headers {
            inv.arg(*n).arg(v);
        }
        inv.invoke_async(&mut c).await.map_err(unavailable)
    }

    /// The queue of `job` and its attempt fields, `None` if Redis does not
    /// hold the job.
    async fn job_fields(
        &self,
        job: u64,
    ) -> Result<Option<(Known, Vec<Option<String>>)>, PortError> {
        let mut c = self.conn().await?;
        let h: Vec<Option<String>> = redis::cmd("HMGET")
            .arg(self.job_key(job))
            .arg(&["q", "att", "max", "body"])
            .query_async(&mut c)
            .await
            .map_err(unavailable)?;
        let Some(Some(queue)) = h.first() else {
            return Ok(None);
        };
        let Some(k) = self.known(queue).await? else {
            return Ok(None);
        };
        Ok(Some((k, h)))
    }

    /// Fails the claims of `k` whose lease ended (`lease_expired`), with
    /// core's rule; promotes due retries, applies retention.
    async fn expire(&self, k: &Known) -> Result<(), PortError> {
        let mut c = self.conn().await?;
        let r = match self.expired_script(k, &mut c).await {
            // The stream or group went missing (a Redis without its data):
            // made again, once (XAUTOCLAIM needs the group).
            Err(e) if e.code() == Some("NOGROUP") || e.to_string().contains("NOGROUP") => {
                self.ensure_group(&k.names).await?;
                self.expired_script(k, &mut c).await.map_err(unavailable)?
            }
            other => other.map_err(unavailable)?,
        };
        self.fail_expired(k, &mut c, r).await?;
        self.complete_vanished(k, &mut c).await
    }

    /// Completes the waiting jobs of `k` whose entry another consumer
    /// deleted (see [`scripts::VANISHED`]): counted as acked, each fire
    /// settled `Succeeded` (the script ends each job once, so each fire is
    /// reported once).
    async fn complete_vanished(
        &self,
        k: &Known,
        c: &mut ConnectionManager,
    ) -> Result<(), PortError> {
        let s = &k.names.stream;
        let r: Vec<String> = self
            .scripts
            .vanished
            .key(s)
            .key(format!("{s}:available"))
            .key(format!("{s}:availscan"))
            .key(format!("{s}:done"))
            .arg(self.job_prefix())
            .arg(VANISHED_COUNT)
            .arg(k.config.dedup_window_ms)
            .arg(k.config.retention.completed_max)
            .arg(k.config.retention.completed_ms)
            .invoke_async(c)
            .await
            .map_err(unavailable)?;
        for e in r.chunks(2) {
            let [_, fire] = e else {
                return Err(bad("vanished reply"));
            };
            self.count(crate::driver::TransportEvent::Acked, &k.config.name);
            self.settle_fire(fire, FireOutcome::Succeeded).await;
        }
        Ok(())
    }

    /// Runs the `expired` script for `k` (see [`scripts::EXPIRED`]).
    async fn expired_script(
        &self,
        k: &Known,
        c: &mut ConnectionManager,
    ) -> redis::RedisResult<Vec<String>> {
        let s = &k.names.stream;
        self.scripts
            .expired
            .key(s)
            .key(format!("{s}:delayed"))
            .key(format!("{s}:claimed"))
            .key(format!("{s}:done"))
            .key(format!("{s}:autoclaim"))
            .arg(self.job_prefix())
            .arg(k.config.retention.completed_max)
            .arg(k.config.retention.completed_ms)
            .arg(&k.names.group)
            .arg(CONSUMER)
            .arg(k.config.lease_ms)
            .arg(AUTOCLAIM_COUNT)
            .arg(self.seq("token"))
            .arg(self.seq("job"))
            .arg(&k.config.name)
            .invoke_async(c)
            .await
    }

    /// Fails each expired claim the `expired` script listed (`r`).
    async fn fail_expired(
        &self,
        k: &Known,
        c: &mut ConnectionManager,
        r: Vec<String>,
    ) -> Result<(), PortError> {
        for e in r.chunks(4) {
            let [id, tok, att, max] = e else { continue };
            let (id, tok, att): (u64, u64, u32) = (num(id)?, num(tok)?, num(att)?);
            let body: Option<String> = redis::cmd("HGET")
                .arg(self.job_key(id))
                .arg("body")
                .query_async(c)
                .await
                .map_err(unavailable)?;
            match self
                .fail_attempt(
                    k,
                    id,
                    tok,
                    att,
                    max,
                    body.as_deref(),
                    "lease_expired",
                    None,
                    "expired",
                )
                .await
            {
                Ok(_) | Err(PortError::Refused(_)) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Housekeeping of every queue this process knows now.
    pub async fn maintain_now(&self) -> Result<(), PortError> {
        let known: Vec<Known> = self
            .queues
            .lock()
            .expect("queues lock")
            .values()
            .cloned()
            .collect();
        for k in known {
            self.expire(&k).await?;
        }
        Ok(())
    }

    /// Runs [`maintain_now`](Self::maintain_now) every `every` until the
    /// transport is dropped elsewhere (the task holds a weak reference).
    pub fn spawn_maintenance(self: &Arc<Self>, every: Duration) -> tokio::task::JoinHandle<()> {
        let weak = Arc::downgrade(self);
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(every);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                let Some(t) = weak.upgrade() else { return };
                if let Err(e) = t.maintain_now().await {
                    tracing::debug!(error = %e, "redis transport maintenance");
                }
            }
        })
    }
}
