//! The queue port and the transport port for [`RedisTransport`].

use super::{CONSUMER, NAME, RedisTransport, bad, num, refused, state_name, ts, unavailable};
use crate::backend::views::DeadLetters;
use crate::backend::{Enqueued, Failed, PortError, PortFuture, QueueBackend, Redriven};
use crate::transport::ids::{redis_job, redis_local};
use crate::transport::message::Message;
use crate::transport::{Depth, Published, Transport, unsupported};
use chime_core::{
    Claimed, EnqueueRequest, Error as CoreError, FireOutcome, Headers, Input, JobId, JobInfo,
    JobPage, JobQuery, JobState, LeaseToken, Payload, QueueConfig, SEARCH_LIMIT, SEARCH_SCAN,
    Timestamp, validate_input,
};
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// The transport's own number of `job` (`crate::transport::ids`); an id
/// that is not Redis's is a job this transport does not hold.
fn local(job: JobId) -> Result<u64, PortError> {
    redis_local(job).ok_or(PortError::Refused(CoreError::UnknownJob(job)))
}

fn job_state(s: &str) -> JobState {
    match state_name(s) {
        "scheduled" => JobState::Scheduled,
        "available" => JobState::Available,
        "claimed" => JobState::Claimed,
        "completed" => JobState::Completed,
        "dead" => JobState::Dead,
        "dropped" => JobState::Dropped,
        _ => JobState::Cancelled,
    }
}

/// A stored body's message; a body another program published that is not
/// canonical is its payload (JSON as given, else a JSON string).
fn message_of(body: &str, queue: &str, job: u64) -> Message {
    if let Ok(m) = Message::parse(body) {
        return m;
    }
    let payload = Payload::from_json(body).unwrap_or_else(|_| {
        Payload::from_json(&serde_json::to_string(body).expect("a string serializes"))
            .expect("a JSON string")
    });
    Message {
        id: Message::job_id(job),
        queue: queue.to_owned(),
        fire: None,
        priority: 0,
        max_attempts: None,
        headers: Headers::new(),
        payload,
    }
}

impl RedisTransport {
    async fn enqueue_one(&self, request: &EnqueueRequest) -> Result<Enqueued, PortError> {
        self.check_enqueue(request)?;
        let k = self.known_or_implicit(&request.queue).await?;
        let (job, id, idk) = match &request.key {
            Some(key) => {
                let id = Message::key_id(key);
                let idk = format!("{}{id}", k.names.idemp);
                (0, id, Some((idk, 0)))
            }
            None => {
                let mut c = self.conn().await?;
                let n: u64 = redis::cmd("INCR")
                    .arg(self.seq("job"))
                    .query_async(&mut c)
                    .await
                    .map_err(unavailable)?;
                (n, Message::job_id(n), None)
            }
        };
        let message = Message {
            id,
            queue: request.queue.clone(),
            fire: None,
            priority: 0,
            max_attempts: request.max_attempts,
            headers: request.headers.clone(),
            payload: request.payload.clone(),
        };
        let (job, deduplicated) = self
            .add(
                &k,
                &message,
                request.key.as_deref(),
                idk,
                job,
                request.run_at,
                request.delay_ms,
            )
            .await?;
        Ok(Enqueued {
            job: redis_job(job),
            deduplicated,
        })
    }

    async fn claim_some(
        &self,
        queue: &str,
        worker: &str,
        max: u32,
        lease_ms: Option<i64>,
    ) -> Result<Vec<Claimed>, PortError> {
        let input = Input::Claim {
            queue: queue.to_owned(),
            worker: worker.to_owned(),
            max,
            lease_ms,
        };
        validate_input(&input, &self.engine, Timestamp::MIN)?;
        let Some(k) = self.known(queue).await? else {
            return Ok(Vec::new());
        };
        let lease = lease_ms.unwrap_or(k.config.lease_ms);
        let mut c = self.conn().await?;
        let s = &k.names.stream;
        let call = |c: &mut redis::aio::ConnectionManager| {
            let mut inv = self.scripts.claim.key(s);
            inv.key(format!("{s}:delayed"))
                .key(format!("{s}:claimed"))
                .arg(self.job_prefix())
                .arg(self.seq("token"))
                .arg(&k.names.group)
                .arg(CONSUMER)
                .arg(max)
                .arg(lease)
                .arg(worker)
                .arg(self.seq("job"))
                .arg(queue);
            let mut c = c.clone();
            async move { inv.invoke_async::<Vec<String>>(&mut c).await }
        };
        let r = match call(&mut c).await {
            // The stream or group went missing (a Redis without its data):
            // made again, once.
            Err(e) if e.code() == Some("NOGROUP") || e.to_string().contains("NOGROUP") => {
                self.ensure_group(&k.names).await?;
                call(&mut c).await.map_err(unavailable)?
            }
            other => other.map_err(unavailable)?,
        };
        let mut out = Vec::with_capacity(r.len() / 6);
        for e in r.chunks(6) {
            let [id, tok, dl, att, body, fire] = e else {
                return Err(bad("claim reply"));
            };
            let id: u64 = num(id)?;
            let m = message_of(body, queue, id);
            out.push(Claimed {
                job: redis_job(id),
                token: LeaseToken(num(tok)?),
                deadline: ts(num(dl)?)?,
                attempt: num(att)?,
                payload: m.payload,
                headers: m.headers,
                fire: m.fire.or_else(|| fire.parse().ok()),
            });
        }
        Ok(out)
    }

    async fn complete_one(&self, job: JobId, token: LeaseToken) -> Result<(), PortError> {
        let n = local(job)?;
        let Some((k, _)) = self.job_fields(n).await? else {
            return Err(PortError::Refused(CoreError::UnknownJob(job)));
        };
        let r = self
            .settle(&k, n, token.0, "live", "complete", 0, None, "", &[])
            .await?;
        match r.as_slice() {
            [ok, _, _, fire] if ok == "ok" => {
                self.count(crate::driver::TransportEvent::Acked, &k.config.name);
                self.settle_fire(fire, FireOutcome::Succeeded).await;
                Ok(())
            }
            _ => Err(refused(&r, job, "complete")),
        }
    }

    async fn fail_one(
        &self,
        job: JobId,
        token: LeaseToken,
        error: &str,
        retry_at: Option<Timestamp>,
    ) -> Result<Failed, PortError> {
        let input = Input::Fail {
            job,
            token,
            error: error.to_owned(),
            retry_at,
        };
        validate_input(&input, &self.engine, Timestamp::MIN)?;
        let n = local(job)?;
        let Some((k, h)) = self.job_fields(n).await? else {
            return Err(PortError::Refused(CoreError::UnknownJob(job)));
        };
        let field = |i: usize| h.get(i).cloned().flatten().unwrap_or_default();
        let attempt: u32 = field(1).parse().unwrap_or(0);
        let body = field(3);
        self.fail_attempt(
            &k,
            n,
            token.0,
            attempt,
            &field(2),
            Some(&body),
            error,
            retry_at,
            "live",
        )
        .await
    }

    async fn cancel_one(&self, job: JobId) -> Result<(), PortError> {
        let n = local(job)?;
        let Some((k, _)) = self.job_fields(n).await? else {
            return Err(PortError::Refused(CoreError::UnknownJob(job)));
        };
        let mut c = self.conn().await?;
        let s = &k.names.stream;
        let r: Vec<String> = self
            .scripts
            .cancel
            .key(s)
            .key(format!("{s}:claimed"))
            .key(format!("{s}:done"))
            .key(format!("{s}:delayed"))
            .arg(self.job_key(n))
            .arg(n)
            .arg(&k.names.group)
            .arg(k.config.dedup_window_ms)
            .arg(k.config.retention.completed_max)
            .arg(k.config.retention.completed_ms)
            .arg(self.job_prefix())
            .invoke_async(&mut c)
            .await
            .map_err(unavailable)?;
        match r.as_slice() {
            [ok, fire] if ok == "ok" => {
                self.settle_fire(fire, FireOutcome::Failed).await;
                Ok(())
            }
            _ => Err(refused(&r, job, "cancel")),
        }
    }

    async fn redrive_some(&self, queue: &str, job: Option<JobId>) -> Result<Redriven, PortError> {
        let Some(k) = self.known(queue).await? else {
            return Err(PortError::Refused(CoreError::UnknownQueue(
                queue.to_owned(),
            )));
        };
        let n = job.map(local).transpose()?;
        let mut c = self.conn().await?;
        let s = &k.names.stream;
        let r: Vec<String> = self
            .scripts
            .redrive
            .key(s)
            .key(format!("{s}:deadset"))
            .key(&k.names.dead)
            .key(format!("{s}:delayed"))
            .arg(self.job_prefix())
            .arg(n.map(|n| n.to_string()).unwrap_or_default())
            .arg(queue)
            .invoke_async(&mut c)
            .await
            .map_err(unavailable)?;
        match r.as_slice() {
            [ok, count, dropped] if ok == "ok" => Ok(Redriven {
                count: num(count)?,
                keys_dropped: num(dropped)?,
            }),
            _ => Err(refused(&r, job.unwrap_or(JobId(0)), "redrive")),
        }
    }

    async fn purge_some(&self, queue: &str, before: Option<Timestamp>) -> Result<u64, PortError> {
        let Some(k) = self.known(queue).await? else {
            return Err(PortError::Refused(CoreError::UnknownQueue(
                queue.to_owned(),
            )));
        };
        let mut c = self.conn().await?;
        let bound = before.map_or("+inf".to_owned(), |t| format!("({}", t.as_millis()));
        let r: Vec<String> = self
            .scripts
            .purge
            .key(format!("{}:deadset", k.names.stream))
            .key(&k.names.dead)
            .arg(self.job_prefix())
            .arg(bound)
            .invoke_async(&mut c)
            .await
            .map_err(unavailable)?;
        num(r.first().map_or("", String::as_str))
    }

    /// The port's `search`, as the engine's (`chime_core::JobQuery`): the
    /// ids in order from `after`, at most `limit` found and
    /// [`SEARCH_SCAN`] looked at. Redis's job numbers are one counter
    /// (`chime:seq:job`), so the range is walked number by number up to
    /// the counter, a pipelined `HMGET` of queue, state and key per chunk;
    /// a number retention removed is skipped.
    async fn search_some(&self, query: &JobQuery) -> Result<JobPage, PortError> {
        let limit = match query.limit {
            0 => 100,
            n => n.min(SEARCH_LIMIT),
        };
        let mut c = self.conn().await?;
        let top: Option<u64> = redis::cmd("GET")
            .arg(self.seq("job"))
            .query_async(&mut c)
            .await
            .map_err(unavailable)?;
        // The query's ids are the port's: Redis's tag above the number.
        let start = query
            .after
            .map_or(redis_job(1).0, |a| a.0.saturating_add(1));
        let start = start.max(redis_job(1).0);
        let end = query
            .before
            .map_or(u64::MAX, |b| b.0)
            .min(redis_job(top.unwrap_or(0)).0 + 1);
        let (mut jobs, mut next) = (Vec::new(), None);
        let (mut id, mut scanned) = (start, 0usize);
        const CHUNK: u64 = 256;
        'scan: while id < end {
            let upto = end.min(id + CHUNK);
            let mut pipe = redis::pipe();
            for j in id..upto {
                pipe.cmd("HMGET")
                    .arg(self.job_key(j & crate::transport::ids::SEQ_MASK))
                    .arg(&["q", "st", "key"]);
            }
            let rows: Vec<Vec<Option<String>>> =
                pipe.query_async(&mut c).await.map_err(unavailable)?;
            for (j, row) in (id..upto).zip(rows) {
                if jobs.len() == limit || scanned == SEARCH_SCAN {
                    // More may follow: the next page starts here.
                    next = Some(JobId(j - 1));
                    break 'scan;
                }
                scanned += 1;
                let [q, st, key] = row.as_slice() else {
                    return Err(bad("HMGET reply"));
                };
                let wanted = q.as_deref() == Some(query.queue.as_str())
                    && query
                        .state
                        .is_none_or(|s| Some(s) == st.as_deref().map(job_state))
                    && query
                        .key
                        .as_ref()
                        .is_none_or(|k| key.as_deref() == Some(k.as_str()));
                if wanted && let Some(info) = self.job_info(JobId(j)).await? {
                    jobs.push(info);
                }
            }
            id = upto;
        }
        Ok(JobPage { jobs, next })
    }

    async fn job_info(&self, job: JobId) -> Result<Option<JobInfo>, PortError> {
        let Some(n) = redis_local(job) else {
            return Ok(None);
        };
        let mut c = self.conn().await?;
        let h: HashMap<String, String> = redis::cmd("HGETALL")
            .arg(self.job_key(n))
            .query_async(&mut c)
            .await
            .map_err(unavailable)?;
        let Some(queue) = h.get("q") else {
            return Ok(None);
        };
        let k = self.known(queue).await?;
        let get = |f: &str| h.get(f).filter(|v| !v.is_empty());
        let int = |f: &str| get(f).and_then(|v| v.parse::<i64>().ok());
        let m = message_of(get("body").map_or("null", String::as_str), queue, n);
        let state = job_state(get("st").map_or("", String::as_str));
        Ok(Some(JobInfo {
            id: job,
            queue: queue.clone(),
            state,
            payload: m.payload,
            headers: m.headers,
            priority: 0,
            key: get("key").cloned(),
            fire: m.fire,
            attempt: int("att").unwrap_or(0) as u32,
            max_attempts: int("max")
                .map(|m| m as u32)
                .or(k.map(|k| k.config.max_attempts))
                .unwrap_or(0),
            run_at: int("run")
                .and_then(|t| Timestamp::from_millis(t).ok())
                .unwrap_or(Timestamp::MIN),
            lease_deadline: int("dl").and_then(|t| Timestamp::from_millis(t).ok()),
            worker: get("wk").cloned(),
            last_error: get("err").cloned(),
            finished_at: int("fin").and_then(|t| Timestamp::from_millis(t).ok()),
        }))
    }

    async fn publish_one(&self, message: &Message) -> Result<Published, PortError> {
        if message.priority != 0 {
            return Err(unsupported(
                NAME,
                "priority",
                "delivers in publish order: priority must be 0",
            ));
        }
        let k = self.known_or_implicit(&message.queue).await?;
        let idk = format!("{}{}", k.names.idemp, message.id);
        let (_, dup) = self
            .add(
                &k,
                message,
                None,
                Some((idk, self.options.idempotency_ttl_ms)),
                0,
                None,
                None,
            )
            .await?;
        Ok(if dup {
            Published::Duplicate
        } else {
            Published::New
        })
    }

    async fn depth_of(&self, queue: &str) -> Result<Depth, PortError> {
        let names = self.names(queue);
        let mut c = self.conn().await?;
        let s = &names.stream;
        let (len, delayed, dead): (u64, u64, u64) = redis::pipe()
            .cmd("XLEN")
            .arg(s)
            .cmd("ZCARD")
            .arg(format!("{s}:delayed"))
            .cmd("XLEN")
            .arg(&names.dead)
            .query_async(&mut c)
            .await
            .map_err(unavailable)?;
        let pending: redis::RedisResult<redis::Value> = redis::cmd("XPENDING")
            .arg(s)
            .arg(&names.group)
            .query_async(&mut c)
            .await;
        let claimed = match pending {
            Ok(redis::Value::Array(v)) => match v.first() {
                Some(redis::Value::Int(n)) => *n as u64,
                _ => 0,
            },
            Ok(_) => 0,
            Err(e) if e.code() == Some("NOGROUP") => 0,
            Err(e) => return Err(unavailable(e)),
        };
        Ok(Depth {
            scheduled: delayed,
            available: len.saturating_sub(claimed),
            claimed,
            dead,
        })
    }
}

impl QueueBackend for RedisTransport {
    fn backend(&self) -> &'static str {
        NAME
    }

    fn declare<'a>(&'a self, config: &'a QueueConfig) -> PortFuture<'a, ()> {
        Box::pin(self.declare_queue(config, true))
    }

    fn enqueue<'a>(&'a self, request: &'a EnqueueRequest) -> PortFuture<'a, Enqueued> {
        Box::pin(self.enqueue_one(request))
    }

    fn claim<'a>(
        &'a self,
        queue: &'a str,
        worker: &'a str,
        max: u32,
        lease_ms: Option<i64>,
    ) -> PortFuture<'a, Vec<Claimed>> {
        Box::pin(self.claim_some(queue, worker, max, lease_ms))
    }

    fn heartbeat(
        &self,
        job: JobId,
        token: LeaseToken,
        lease_ms: Option<i64>,
    ) -> PortFuture<'_, Timestamp> {
        Box::pin(async move {
            let input = Input::Heartbeat {
                job,
                token,
                lease_ms,
            };
            validate_input(&input, &self.engine, Timestamp::MIN)?;
            let n = local(job)?;
            let Some((k, _)) = self.job_fields(n).await? else {
                return Err(PortError::Refused(CoreError::UnknownJob(job)));
            };
            let mut c = self.conn().await?;
            let r: Vec<String> = self
                .scripts
                .heartbeat
                .key(format!("{}:claimed", k.names.stream))
                .arg(self.job_key(n))
                .arg(n)
                .arg(token.0)
                .arg(lease_ms.unwrap_or(k.config.lease_ms))
                .invoke_async(&mut c)
                .await
                .map_err(unavailable)?;
            match r.as_slice() {
                [ok, dl] if ok == "ok" => ts(num(dl)?),
                _ => Err(refused(&r, job, "heartbeat")),
            }
        })
    }

    fn complete(&self, job: JobId, token: LeaseToken) -> PortFuture<'_, ()> {
        Box::pin(self.complete_one(job, token))
    }

    fn fail<'a>(
        &'a self,
        job: JobId,
        token: LeaseToken,
        error: &'a str,
        retry_at: Option<Timestamp>,
    ) -> PortFuture<'a, Failed> {
        Box::pin(self.fail_one(job, token, error, retry_at))
    }

    fn cancel(&self, job: JobId) -> PortFuture<'_, ()> {
        Box::pin(self.cancel_one(job))
    }

    fn redrive<'a>(&'a self, queue: &'a str, job: Option<JobId>) -> PortFuture<'a, Redriven> {
        Box::pin(self.redrive_some(queue, job))
    }

    fn purge_dead<'a>(&'a self, queue: &'a str, before: Option<Timestamp>) -> PortFuture<'a, u64> {
        Box::pin(self.purge_some(queue, before))
    }

    fn search<'a>(&'a self, query: &'a JobQuery) -> PortFuture<'a, JobPage> {
        Box::pin(self.search_some(query))
    }

    fn job(&self, job: JobId) -> PortFuture<'_, Option<JobInfo>> {
        Box::pin(self.job_info(job))
    }

    fn maintain(&self) -> PortFuture<'_, ()> {
        Box::pin(self.maintain_now())
    }
}

impl Transport for RedisTransport {
    fn publish<'a>(&'a self, message: &'a Message) -> PortFuture<'a, Published> {
        Box::pin(self.publish_one(message))
    }

    fn ping(&self) -> PortFuture<'_, Duration> {
        Box::pin(async move {
            let mut c = self.conn().await?;
            let start = Instant::now();
            let _: String = redis::cmd("PING")
                .query_async(&mut c)
                .await
                .map_err(unavailable)?;
            Ok(start.elapsed())
        })
    }

    fn depth<'a>(&'a self, queue: &'a str) -> PortFuture<'a, Depth> {
        Box::pin(self.depth_of(queue))
    }

    fn queues(&self) -> Vec<String> {
        self.configured.clone()
    }

    fn owns(&self, job: JobId) -> bool {
        redis_local(job).is_some()
    }

    /// The queue's dead set (`<stream>:deadset`, by death time), each
    /// letter's job record.
    fn dead_letters<'a>(
        &'a self,
        queue: &'a str,
        limit: usize,
    ) -> PortFuture<'a, Option<DeadLetters>> {
        Box::pin(async move {
            let Some(k) = self.known(queue).await? else {
                return Ok(None);
            };
            let set = format!("{}:deadset", k.names.stream);
            let mut c = self.conn().await?;
            let (total, members): (u64, Vec<String>) = redis::pipe()
                .cmd("ZCARD")
                .arg(&set)
                .cmd("ZRANGE")
                .arg(&set)
                .arg(0)
                .arg(limit.saturating_sub(1))
                .query_async(&mut c)
                .await
                .map_err(unavailable)?;
            let mut jobs = Vec::with_capacity(members.len());
            if limit > 0 {
                for m in members {
                    // A record retention removed meanwhile is left out.
                    if let Some(info) = self.job_info(redis_job(num(&m)?)).await? {
                        jobs.push(info);
                    }
                }
            }
            Ok(Some(DeadLetters {
                queue: queue.to_owned(),
                total,
                jobs,
            }))
        })
    }
}
