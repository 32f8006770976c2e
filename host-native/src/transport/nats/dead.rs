//! Dead letters, built by chime: a job out of attempts is copied to the
//! queue's dead-letter stream (its canonical body, the seed's headers
//! `runId`, `scheduleId`, `attempts`, `reason`, plus `Chime-Job` and
//! `Chime-Died-At`) under the message id `~dead:<work stream>:<seq>`, so
//! a dead-lettering interrupted between the copy and the ack and done
//! again on the next delivery adds no second copy. Listing walks the
//! stream by subject (bounded: the stream keeps at most
//! `limits.deadLettersPerQueue`); redrive republishes to the work subject
//! (attempts start again, the job keeps its id) and deletes the letter;
//! purge deletes.

use super::book::Record;
use super::consume::{invalid_state, is_no_message, job_of, key_of};
use super::{H_DIED_AT, H_JOB, NatsQueues, Queue, unavailable};
use crate::backend::{PortError, Redriven};
use crate::transport::{DeadLetter, Message, message};
use async_nats::jetstream::{self, AckKind};
use chime_core::{Error as CoreError, JobId, JobInfo, JobState, Timestamp};
use std::sync::Arc;

/// One letter of the dead-letter stream.
pub(super) struct Letter {
    /// Its sequence there.
    pub seq: u64,
    /// The job.
    pub job: JobId,
    /// When it died (epoch ms), if the header says.
    pub died_at: Option<i64>,
    /// Its message, if it is one in the canonical format.
    pub message: Option<Message>,
    /// Deliveries made (the `attempts` header).
    pub attempts: u32,
    /// The last failure (the `reason` header).
    pub reason: Option<String>,
}

impl Letter {
    /// The letter as the job getter shows a dead job.
    pub(super) fn info(&self, q: &Queue) -> JobInfo {
        let m = self.message.as_ref();
        let died = self.died_at.and_then(|t| Timestamp::from_millis(t).ok());
        JobInfo {
            id: self.job,
            queue: q.config.name.clone(),
            state: JobState::Dead,
            payload: m.map_or_else(chime_core::Payload::null, |m| m.payload.clone()),
            headers: m.map(|m| m.headers.clone()).unwrap_or_default(),
            priority: 0,
            key: m.and_then(key_of),
            fire: m.and_then(|m| m.fire.clone()),
            attempt: self.attempts,
            max_attempts: m
                .and_then(|m| m.max_attempts)
                .unwrap_or(q.config.max_attempts),
            run_at: died.unwrap_or(Timestamp::MIN),
            lease_deadline: None,
            worker: None,
            last_error: self.reason.clone(),
            finished_at: died,
        }
    }
}

impl NatsQueues {
    /// Copies `r`'s message to the dead-letter stream; the letter's
    /// sequence.
    pub(super) async fn dead_letter(
        &self,
        q: &Queue,
        r: &Record,
        reason: &str,
    ) -> Result<u64, PortError> {
        let letter = DeadLetter {
            message: r.message.clone(),
            attempts: r.info.attempt,
            reason: reason.to_owned(),
        };
        let mut headers = letter.headers();
        headers.push((H_JOB, r.info.id.0.to_string()));
        headers.push((H_DIED_AT, self.now().as_millis().to_string()));
        let id = format!("~dead:{}:{}", q.names.stream, r.seq);
        let ack = self
            .publish_raw(&q.names.dead_subject, &id, &headers, r.message.body())
            .await?;
        Ok(ack.sequence)
    }

    /// A delivery that is not a chime message: dead-lettered as it is,
    /// with `attempts` and `reason`, and acknowledged away.
    pub(super) async fn dead_unreadable(
        &self,
        q: &Queue,
        m: &jetstream::Message,
        seq: u64,
        delivered: u32,
        why: &str,
        reply: &str,
    ) -> Result<(), PortError> {
        let headers = vec![
            (message::H_ATTEMPTS, delivered.to_string()),
            (
                message::H_REASON,
                message::one_line(message::cut(
                    &format!("unreadable message: {why}"),
                    message::REASON_BYTES,
                )),
            ),
            (H_JOB, q.job(seq).0.to_string()),
            (H_DIED_AT, self.now().as_millis().to_string()),
        ];
        let id = format!("~dead:{}:{}", q.names.stream, seq);
        let body = String::from_utf8_lossy(&m.payload).into_owned();
        self.publish_raw(&q.names.dead_subject, &id, &headers, body)
            .await?;
        self.ack(reply, AckKind::Ack).await?;
        self.count(crate::driver::TransportEvent::DeadLettered, &q.config.name);
        Ok(())
    }

    /// Every letter of `q`'s dead-letter stream, oldest first.
    pub(super) async fn letters(&self, q: &Queue) -> Result<Vec<Letter>, PortError> {
        let bound = self.engine.limits.dead_letters_per_queue.saturating_add(1);
        let mut out = Vec::new();
        let mut next = 1;
        while out.len() < bound {
            let m = match q
                .dead
                .raw_message_builder()
                .sequence(next)
                .next_by_subject(q.names.dead_subject.clone())
                .send()
                .await
            {
                Ok(m) => m,
                Err(e) if is_no_message(&e) => break,
                Err(e) => return Err(unavailable("get dead letter", e)),
            };
            next = m.sequence + 1;
            let died_at = m
                .headers
                .get(H_DIED_AT)
                .and_then(|v| v.as_str().parse().ok());
            let message = std::str::from_utf8(&m.payload)
                .ok()
                .and_then(|b| Message::parse(b).ok());
            let header = |name: &str| m.headers.get(name).map(|v| v.as_str().to_owned());
            out.push(Letter {
                seq: m.sequence,
                job: job_of(q, Some(&m.headers), m.sequence),
                died_at,
                message,
                attempts: header(message::H_ATTEMPTS)
                    .and_then(|a| a.parse().ok())
                    .unwrap_or(0),
                reason: header(message::H_REASON),
            });
        }
        Ok(out)
    }

    /// A queue `redrive` and `purge_dead` may name: declared here or in
    /// the broker.
    async fn known_queue(&self, queue: &str) -> Result<Arc<Queue>, PortError> {
        self.find(queue)
            .await
            .ok_or_else(|| PortError::Refused(CoreError::UnknownQueue(queue.to_owned())))
    }

    /// The port's `redrive`: each letter (or the one of `job`) back to the
    /// work subject with attempts from 0; a key that another live job
    /// holds now is dropped from the redriven one.
    pub(super) async fn redrive_dead(
        &self,
        queue: &str,
        job: Option<JobId>,
    ) -> Result<Redriven, PortError> {
        let input = chime_core::Input::Redrive {
            queue: queue.to_owned(),
            job,
        };
        chime_core::validate_input(&input, &self.engine, self.now())?;
        let q = self.known_queue(queue).await?;
        let mut letters = self.letters(&q).await?;
        if let Some(job) = job {
            letters.retain(|l| l.job == job);
            if letters.is_empty() {
                return Err(match self.book().get(job) {
                    Some(r) if r.info.queue == queue => invalid_state(
                        job,
                        if r.info.state == JobState::Dead {
                            // Evicted by the bound: the stream dropped it.
                            JobState::Dropped
                        } else {
                            r.info.state
                        },
                        "redrive",
                    ),
                    _ => PortError::Refused(CoreError::UnknownJob(job)),
                });
            }
        }
        let mut count = 0;
        let mut keys_dropped = 0;
        for l in letters {
            let Some(mut message) = l.message else {
                continue;
            };
            let now = self.now();
            if let Some(key) = key_of(&message) {
                let holder = self.book().active_key(queue, &key, now);
                if holder.is_some_and(|h| h != l.job) {
                    // Another live job has the key: this one runs without.
                    message.id = format!("~redrive:{}:{}", l.job.0, l.seq);
                    keys_dropped += 1;
                }
            }
            let mut headers = message.headers();
            headers.push((H_JOB, l.job.0.to_string()));
            // Its own publish id: the key's id may still be in the
            // stream's duplicate window, which would swallow it.
            let id = format!("~redrive:{}:{}", q.names.dead_stream, l.seq);
            let ack = self
                .publish_raw(&q.names.subject, &id, &headers, message.body())
                .await?;
            q.dead
                .delete_message(l.seq)
                .await
                .map_err(|e| unavailable("delete dead letter", e))?;
            let mut book = self.book();
            if let Some(key) = key_of(&message) {
                book.hold_key(queue, &key, l.job);
            }
            if let Some(r) = book.get_mut(l.job) {
                r.seq = ack.sequence;
                r.message = message;
                r.info.state = JobState::Available;
                r.info.attempt = 0;
                r.info.finished_at = None;
                r.info.run_at = now;
                r.info.key = key_of(&r.message);
            }
            count += 1;
        }
        Ok(Redriven {
            count,
            keys_dropped,
        })
    }

    /// The port's `purge_dead`: deletes the letters of `queue` that died
    /// before `before` (or all); how many.
    pub(super) async fn purge_letters(
        &self,
        queue: &str,
        before: Option<Timestamp>,
    ) -> Result<u64, PortError> {
        let input = chime_core::Input::PurgeDead {
            queue: queue.to_owned(),
            before,
        };
        chime_core::validate_input(&input, &self.engine, self.now())?;
        let q = self.known_queue(queue).await?;
        let mut count = 0;
        for l in self.letters(&q).await? {
            if let Some(b) = before
                && l.died_at.is_none_or(|t| t >= b.as_millis())
            {
                continue;
            }
            q.dead
                .delete_message(l.seq)
                .await
                .map_err(|e| unavailable("delete dead letter", e))?;
            self.book().forget(l.job);
            count += 1;
        }
        Ok(count)
    }
}
