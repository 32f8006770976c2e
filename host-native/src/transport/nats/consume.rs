//! The consume side: enqueue through the port, claim, heartbeat,
//! complete, fail, cancel, and the look-ups (see the module docs of
//! [`nats`](super) for the mapping onto JetStream).

use super::book::{Lease, Miss, Record};
use super::{H_JOB, NAME, NatsError, NatsQueues, Queue, SEQ_MASK, unavailable};
use crate::backend::{Enqueued, Failed, PortError};
use crate::transport::{Message, unsupported};
use async_nats::jetstream::{self, AckKind};
use chime_core::{
    AfterFailure, Claimed, EnqueueRequest, Error as CoreError, FireOutcome, Input, JobId, JobInfo,
    JobState, LeaseToken, Timestamp, after_failure, truncate_text, validate_input,
};
use futures_util::StreamExt;
use std::sync::Arc;
use std::time::Duration;

/// How long a claim waits for a message the consumer has not seen yet.
const CATCH_UP: Duration = Duration::from_millis(200);

/// The idempotency key of a message enqueued through the port, from its
/// id ([`Message::key_id`]).
pub(super) fn key_of(message: &Message) -> Option<String> {
    message.id.strip_prefix("~key:").map(str::to_owned)
}

/// A fresh id for a keyless message: 63 random bits (unique enough
/// across processes and restarts; the job id is the broker's sequence).
fn keyless_id() -> Result<String, PortError> {
    let mut b = [0u8; 8];
    getrandom::fill(&mut b).map_err(|e| PortError::Unavailable(e.to_string().into()))?;
    Ok(Message::job_id(u64::from_le_bytes(b) >> 1))
}

/// The job id of a delivered or stored message of `q`: its `Chime-Job`
/// header (a redriven job), else from its sequence.
pub(super) fn job_of(q: &Queue, headers: Option<&async_nats::HeaderMap>, seq: u64) -> JobId {
    headers
        .and_then(|h| h.get(H_JOB))
        .and_then(|v| v.as_str().parse().ok())
        .map_or_else(|| q.job(seq), JobId)
}

/// A job that is not held here as a port error.
fn missed(job: JobId, miss: Miss, in_stream: bool) -> PortError {
    match (miss, in_stream) {
        (Miss::Unknown, false) => PortError::Refused(CoreError::UnknownJob(job)),
        _ => PortError::Refused(CoreError::LeaseLost { job }),
    }
}

impl NatsQueues {
    /// Refuses what the engine refuses, and what JetStream cannot honour
    /// (a priority, a delay).
    pub(super) fn check_enqueue(
        &self,
        req: &EnqueueRequest,
        now: Timestamp,
    ) -> Result<(), PortError> {
        validate_input(&Input::Enqueue(req.clone()), &self.engine, now)?;
        if req.priority != 0 {
            return Err(unsupported(
                NAME,
                "priority",
                "delivers in publish order: a job priority other than 0 cannot be honoured",
            ));
        }
        if req.delay_ms.is_some_and(|d| d > 0) {
            return Err(unsupported(NAME, "delayMs", "delivers at once: no delays"));
        }
        if req.run_at.is_some_and(|t| t > now) {
            return Err(unsupported(NAME, "runAt", "delivers at once: no delays"));
        }
        Ok(())
    }

    /// The port's `enqueue_batch`: every request checked first, so a
    /// refused one adds nothing (JetStream has no multi-message
    /// transaction across a batch's queues: a broker failure midway is
    /// `unavailable`, and the part published stays).
    pub(super) async fn enqueue_jobs(
        &self,
        requests: &[EnqueueRequest],
    ) -> Result<Result<Vec<Enqueued>, (usize, CoreError)>, PortError> {
        let now = self.now();
        for (i, r) in requests.iter().enumerate() {
            match self.check_enqueue(r, now) {
                Ok(()) => {}
                Err(PortError::Refused(e)) => return Ok(Err((i, e))),
                Err(e) => return Err(e),
            }
        }
        let mut out = Vec::with_capacity(requests.len());
        for r in requests {
            out.push(self.enqueue_job(r).await?);
        }
        Ok(Ok(out))
    }

    /// The port's `enqueue` (see the module docs for what is refused).
    pub(super) async fn enqueue_job(&self, req: &EnqueueRequest) -> Result<Enqueued, PortError> {
        let now = self.now();
        self.check_enqueue(req, now)?;
        if let Some(key) = &req.key
            && let Some(job) = self.book().active_key(&req.queue, key, now)
        {
            return Ok(Enqueued {
                job,
                deduplicated: true,
            });
        }
        let id = match &req.key {
            Some(k) => Message::key_id(k),
            None => keyless_id()?,
        };
        let message = Message {
            id,
            queue: req.queue.clone(),
            fire: None,
            priority: req.priority,
            max_attempts: req.max_attempts,
            headers: req.headers.clone(),
            payload: req.payload.clone(),
        };
        let (job, duplicate) = self.publish_message(&message).await?;
        if let Some(k) = &req.key {
            self.book().hold_key(&req.queue, k, job);
        }
        Ok(Enqueued {
            job,
            deduplicated: duplicate,
        })
    }

    /// The port's `claim`: up to `max` messages, no waiting.
    pub(super) async fn claim_jobs(
        &self,
        queue: &str,
        worker: &str,
        max: u32,
        lease_ms: Option<i64>,
    ) -> Result<Vec<Claimed>, PortError> {
        let now = self.now();
        let input = Input::Claim {
            queue: queue.to_owned(),
            worker: worker.to_owned(),
            max,
            lease_ms,
        };
        validate_input(&input, &self.engine, now)?;
        let Some(q) = self.find(queue).await else {
            return Ok(Vec::new());
        };
        check_lease(&q, lease_ms)?;
        let out = self.fetch(&q, max, None, worker, now).await?;
        if !out.is_empty() || !self.undelivered(&q).await? {
            return Ok(out);
        }
        // The consumer learns of a new message a moment after its PubAck,
        // and a no-wait pull in between finds nothing: wait for it, a
        // little (the pull returns as soon as there is one).
        self.fetch(&q, max, Some(CATCH_UP), worker, now).await
    }

    /// One pull of up to `max` messages: no waiting, or up to `expires`
    /// for the first.
    async fn fetch(
        &self,
        q: &Arc<Queue>,
        max: u32,
        expires: Option<Duration>,
        worker: &str,
        now: Timestamp,
    ) -> Result<Vec<Claimed>, PortError> {
        let mut fetch = q.consumer.fetch().max_messages(max as usize);
        if let Some(e) = expires {
            fetch = fetch.expires(e);
        }
        let mut batch = fetch
            .messages()
            .await
            .map_err(|e| unavailable("fetch", e))?;
        let mut out = Vec::new();
        while let Some(m) = batch.next().await {
            let m = m.map_err(|source| {
                PortError::Unavailable(Box::new(NatsError::Broker {
                    what: "fetch",
                    source,
                }))
            })?;
            if let Some(c) = self.take(q, m, worker, now).await? {
                out.push(c);
            }
        }
        Ok(out)
    }

    /// Whether the work stream holds messages the consumer has not
    /// delivered (the stream's count beyond the consumer's unacknowledged
    /// deliveries).
    async fn undelivered(&self, q: &Queue) -> Result<bool, PortError> {
        let mut work = q.work.clone();
        let messages = work
            .info()
            .await
            .map_err(|e| unavailable("stream info", e))?
            .state
            .messages;
        let mut consumer = q.consumer.clone();
        let in_flight = consumer
            .info()
            .await
            .map_err(|e| unavailable("consumer info", e))?
            .num_ack_pending as u64;
        Ok(messages > in_flight)
    }

    /// One delivered message: handed out, or dead-lettered when it is a
    /// delivery beyond the job's attempts (or cannot be read), or
    /// acknowledged away when its job already ended here.
    async fn take(
        &self,
        q: &Arc<Queue>,
        m: jetstream::Message,
        worker: &str,
        now: Timestamp,
    ) -> Result<Option<Claimed>, PortError> {
        let info = m.info().map_err(|e| NatsError::Broker {
            what: "delivery info",
            source: e,
        })?;
        let (seq, cseq) = (info.stream_sequence, info.consumer_sequence);
        let delivered = u32::try_from(info.delivered.max(1)).unwrap_or(u32::MAX);
        let Some(reply) = m.reply.as_ref().map(|s| s.to_string()) else {
            return Ok(None);
        };
        let job = job_of(q, m.headers.as_ref(), seq);
        let parsed = std::str::from_utf8(&m.payload)
            .map_err(|e| e.to_string())
            .and_then(|b| Message::parse(b).map_err(|e| e.to_string()));
        let message = match parsed {
            Ok(message) => message,
            Err(why) => {
                self.dead_unreadable(q, &m, seq, delivered, &why, &reply)
                    .await?;
                return Ok(None);
            }
        };
        let previous = self.book().get(job).cloned();
        if let Some(p) = &previous
            && p.info.state.is_terminal()
            && p.seq == seq
        {
            // It ended here and its ack was lost (the broker restarted):
            // never run it again.
            self.ack(&reply, AckKind::Ack).await?;
            return Ok(None);
        }
        let max_attempts = message.max_attempts.unwrap_or(q.config.max_attempts);
        let mut record = previous.unwrap_or_else(|| Record {
            info: JobInfo {
                id: job,
                queue: q.config.name.clone(),
                state: JobState::Available,
                payload: message.payload.clone(),
                headers: message.headers.clone(),
                priority: 0,
                key: key_of(&message),
                fire: message.fire.clone(),
                attempt: 0,
                max_attempts,
                run_at: now,
                lease_deadline: None,
                worker: None,
                last_error: None,
                finished_at: None,
            },
            seq,
            message: message.clone(),
            lease: None,
            started_at: None,
        });
        record.seq = seq;
        record.info.max_attempts = max_attempts;
        if delivered > max_attempts {
            // The last attempt's lease ran out (its worker died): that is
            // a failed attempt, and the last.
            record.info.attempt = delivered - 1;
            record.info.last_error = Some("lease_expired".into());
            self.exhaust(q, record, &reply, "lease_expired").await?;
            return Ok(None);
        }
        let deadline = now.saturating_add_ms(q.config.lease_ms);
        record.info.state = JobState::Claimed;
        record.info.attempt = delivered;
        record.info.lease_deadline = Some(deadline);
        record.info.worker = Some(worker.to_owned());
        record.info.run_at = record.info.run_at.min(now);
        record.started_at = Some(now);
        record.lease = Some(Lease {
            token: LeaseToken(cseq),
            reply,
        });
        let claimed = Claimed {
            job,
            token: LeaseToken(cseq),
            deadline,
            attempt: delivered,
            payload: message.payload,
            headers: message.headers,
            fire: message.fire,
        };
        self.book().claimed(record);
        Ok(Some(claimed))
    }

    /// Sends `kind` for the delivery of `reply` and waits for the
    /// server's confirmation (a double ack).
    pub(super) async fn ack(&self, reply: &str, kind: AckKind) -> Result<(), PortError> {
        self.client
            .request(reply.to_owned(), kind.into())
            .await
            .map(drop)
            .map_err(|e| unavailable("ack", e))
    }

    /// The record of a lease held with `token`, or why not.
    async fn held(&self, job: JobId, token: LeaseToken) -> Result<Record, PortError> {
        let now = self.now();
        let miss = match self.book().lease(job, token, now) {
            Ok(r) => return Ok(r.clone()),
            Err(m) => m,
        };
        let in_stream = miss == Miss::Unknown && self.stored(job).await?.is_some();
        Err(missed(job, miss, in_stream))
    }

    /// The queue of a record.
    async fn queue_of(&self, r: &Record) -> Result<Arc<Queue>, PortError> {
        self.find_or_create(&r.info.queue).await
    }

    /// The port's `heartbeat`: `+WPI`, the lease runs `ackWait` again.
    pub(super) async fn extend(
        &self,
        job: JobId,
        token: LeaseToken,
        lease_ms: Option<i64>,
    ) -> Result<Timestamp, PortError> {
        let input = Input::Heartbeat {
            job,
            token,
            lease_ms,
        };
        validate_input(&input, &self.engine, self.now())?;
        let r = self.held(job, token).await?;
        let q = self.queue_of(&r).await?;
        check_lease(&q, lease_ms)?;
        let reply = r
            .lease
            .as_ref()
            .map(|l| l.reply.clone())
            .unwrap_or_default();
        self.ack(&reply, AckKind::Progress).await?;
        let deadline = self.now().saturating_add_ms(q.config.lease_ms);
        let mut book = self.book();
        match book.get_mut(job) {
            Some(r) if r.lease.as_ref().is_some_and(|l| l.token == token) => {
                r.info.lease_deadline = Some(deadline);
                Ok(deadline)
            }
            _ => Err(PortError::Refused(CoreError::LeaseLost { job })),
        }
    }

    /// The port's `complete`: `+ACK` (the message leaves the work stream).
    pub(super) async fn complete_job(
        &self,
        job: JobId,
        token: LeaseToken,
    ) -> Result<(), PortError> {
        validate_input(&Input::Complete { job, token }, &self.engine, self.now())?;
        let r = self.held(job, token).await?;
        let q = self.queue_of(&r).await?;
        let reply = r
            .lease
            .as_ref()
            .map(|l| l.reply.clone())
            .unwrap_or_default();
        self.ack(&reply, AckKind::Ack).await?;
        self.ended(&q, job, JobState::Completed, None).await;
        Ok(())
    }

    /// The port's `fail`: core's `after_failure` decides; a retry is a
    /// `-NAK` with its delay, the end a dead letter or a drop.
    pub(super) async fn fail_job(
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
        validate_input(&input, &self.engine, self.now())?;
        let mut r = self.held(job, token).await?;
        let q = self.queue_of(&r).await?;
        let error = truncate_text(error, self.engine.limits.text_bytes).to_owned();
        let reply = r
            .lease
            .as_ref()
            .map(|l| l.reply.clone())
            .unwrap_or_default();
        let attempt = r.info.attempt;
        match after_failure(
            &q.config,
            r.message.max_attempts,
            self.engine.seed,
            job,
            attempt,
        ) {
            AfterFailure::Retry { delay_ms } => {
                let now = self.now();
                let delay_ms =
                    retry_at.map_or(delay_ms, |t| (t.as_millis() - now.as_millis()).max(0));
                let delay = Duration::from_millis(delay_ms as u64);
                self.ack(&reply, AckKind::Nak(Some(delay))).await?;
                self.count(crate::driver::TransportEvent::Retried, &q.config.name);
                let run_at = now.saturating_add_ms(delay_ms);
                if let Some(r) = self.book().get_mut(job) {
                    r.info.state = JobState::Scheduled;
                    r.info.run_at = run_at;
                    r.info.lease_deadline = None;
                    r.info.worker = None;
                    r.info.last_error = Some(error);
                    r.lease = None;
                }
                Ok(Failed::Retry { run_at, delay_ms })
            }
            AfterFailure::Exhausted { .. } => {
                r.info.last_error = Some(error.clone());
                self.exhaust(&q, r, &reply, &error).await
            }
        }
    }

    /// A job out of attempts: copied to the dead-letter stream (or not,
    /// without dead letters), then acknowledged away.
    pub(super) async fn exhaust(
        &self,
        q: &Arc<Queue>,
        mut r: Record,
        reply: &str,
        reason: &str,
    ) -> Result<Failed, PortError> {
        let job = r.info.id;
        let failed = if q.config.dead_letter {
            let seq = self.dead_letter(q, &r, reason).await?;
            self.ack(reply, AckKind::Ack).await?;
            r.seq = seq;
            Failed::Dead
        } else {
            self.ack(reply, AckKind::Ack).await?;
            Failed::Dropped
        };
        r.lease = None;
        let state = if failed == Failed::Dead {
            JobState::Dead
        } else {
            JobState::Dropped
        };
        self.book().claimed(r);
        self.ended(q, job, state, Some(reason)).await;
        Ok(failed)
    }

    /// `job` ended here in `state`: recorded, retention applied, its fire
    /// settled.
    pub(super) async fn ended(&self, q: &Queue, job: JobId, state: JobState, error: Option<&str>) {
        use crate::driver::TransportEvent as E;
        // Counted here, where every end passes once the broker took it.
        match state {
            JobState::Completed => self.count(E::Acked, &q.config.name),
            JobState::Dead => self.count(E::DeadLettered, &q.config.name),
            JobState::Dropped => self.count(E::Dropped, &q.config.name),
            _ => {}
        }
        let now = self.now();
        let settle = {
            let mut book = self.book();
            let Some(r) = book.finish(job, state, now, &q.config) else {
                return;
            };
            let settle = r.info.fire.clone().map(|f| (f, r.end()));
            book.prune(&q.config, self.engine.limits.dead_letters_per_queue, now);
            settle
        };
        if let Some((fire, mut end)) = settle {
            if end.error.is_none() {
                end.error = error.map(str::to_owned);
            }
            let outcome = if state == JobState::Completed {
                FireOutcome::Succeeded
            } else {
                FireOutcome::Failed
            };
            if let Err(e) = self.settlements.settle(fire, outcome, Some(end)).await {
                // The engine's deadline (the external queue's leaseMs)
                // settles it instead.
                tracing::warn!(error = %e, "nats: settling a fire failed");
            }
        }
    }

    /// The port's `cancel`: the message is deleted from the work stream;
    /// a claimed job's token is void.
    pub(super) async fn cancel_job(&self, job: JobId) -> Result<(), PortError> {
        validate_input(&Input::CancelJob { job }, &self.engine, self.now())?;
        let known = self.book().get(job).cloned();
        let (q, record) = match known {
            Some(r) if r.info.state.is_terminal() => {
                return Err(invalid_state(job, r.info.state, "cancel"));
            }
            Some(r) => (self.queue_of(&r).await?, r),
            None => match self.stored(job).await? {
                Some((q, r)) => (q, r),
                None => return Err(PortError::Refused(CoreError::UnknownJob(job))),
            },
        };
        q.work
            .delete_message(record.seq)
            .await
            .map_err(|e| unavailable("delete message", e))?;
        self.book().claimed(record);
        self.ended(&q, job, JobState::Cancelled, None).await;
        Ok(())
    }

    /// The job whose message the work stream of its queue holds (a job
    /// this process did not see, or not since a redrive), as a record.
    async fn stored(&self, job: JobId) -> Result<Option<(Arc<Queue>, Record)>, PortError> {
        let Some(q) = self.by_tag(job) else {
            return Ok(None);
        };
        let m = match q.work.get_raw_message(job.0 & SEQ_MASK).await {
            Ok(m) => m,
            Err(e) if is_no_message(&e) => return Ok(None),
            Err(e) => return Err(unavailable("get message", e)),
        };
        if job_of(&q, Some(&m.headers), m.sequence) != job {
            return Ok(None);
        }
        let Ok(message) = std::str::from_utf8(&m.payload)
            .map_err(drop)
            .and_then(|b| Message::parse(b).map_err(drop))
        else {
            return Ok(None);
        };
        let run_at = Timestamp::from_millis(
            i64::try_from(m.time.unix_timestamp_nanos() / 1_000_000).unwrap_or(0),
        )
        .unwrap_or(Timestamp::MIN);
        let record = Record {
            info: JobInfo {
                id: job,
                queue: q.config.name.clone(),
                state: JobState::Available,
                payload: message.payload.clone(),
                headers: message.headers.clone(),
                priority: 0,
                key: key_of(&message),
                fire: message.fire.clone(),
                attempt: 0,
                max_attempts: message.max_attempts.unwrap_or(q.config.max_attempts),
                run_at,
                lease_deadline: None,
                worker: None,
                last_error: None,
                finished_at: None,
            },
            seq: m.sequence,
            message,
            lease: None,
            started_at: None,
        };
        Ok(Some((q, record)))
    }

    /// The port's `job`: what this process knows, else the work stream's
    /// message (available), else a dead letter.
    pub(super) async fn job_info(&self, job: JobId) -> Result<Option<JobInfo>, PortError> {
        if let Some(r) = self.book().get(job) {
            return Ok(Some(r.info.clone()));
        }
        if let Some((_, r)) = self.stored(job).await? {
            return Ok(Some(r.info));
        }
        Ok(None)
    }

    /// The port's `maintain`: leases past their deadline are void here
    /// (JetStream delivers their messages again), retention applies.
    pub(super) async fn maintain_book(&self) -> Result<(), PortError> {
        let now = self.now();
        let queues: Vec<Arc<Queue>> = self
            .queues
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .cloned()
            .collect();
        let mut book = self.book();
        book.expire_leases(now);
        for q in queues {
            book.prune(&q.config, self.engine.limits.dead_letters_per_queue, now);
        }
        Ok(())
    }
}

/// A lease other than the queue's cannot be honoured: the consumer's
/// `ackWait` is the lease of every delivery.
fn check_lease(q: &Queue, lease_ms: Option<i64>) -> Result<(), PortError> {
    match lease_ms {
        Some(l) if l != q.config.lease_ms => Err(unsupported(
            NAME,
            "leaseMs",
            "leases for the consumer's ackWait only (the queue's leaseMs)",
        )),
        _ => Ok(()),
    }
}

/// Core's `invalid_state` for `op` on a job in `state`.
pub(super) fn invalid_state(job: JobId, state: JobState, op: &'static str) -> PortError {
    PortError::Refused(CoreError::InvalidState {
        job,
        state: state.as_str(),
        op,
    })
}

/// Whether a raw get found no message (deleted, or never there).
pub(super) fn is_no_message(e: &jetstream::stream::RawMessageError) -> bool {
    matches!(
        e.kind(),
        jetstream::stream::RawMessageErrorKind::NoMessageFound
    )
}
