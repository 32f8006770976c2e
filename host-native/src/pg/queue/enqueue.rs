//! Enqueues: one job, a batch, or one inside the caller's transaction —
//! all through [`sql::insert_jobs`], the one statement that writes job
//! rows (the delivery of fires uses it too), so every job is stored alike.

use super::{On, Params, PgQueues, QueueError, sql};
use crate::backend::Enqueued;
use crate::pg::PgError;
use chime_core::{EnqueueRequest, Error as CoreError, Input, JobId, Timestamp, validate_input};
use std::collections::{BTreeMap, BTreeSet};
use tokio_postgres::types::{ToSql, Type};
use tokio_postgres::{GenericClient, Row};

/// The parameters of [`sql::insert_jobs`]: one element per job, in order.
#[derive(Debug, Default)]
pub(crate) struct JobRows<'a> {
    id: Vec<Option<i64>>,
    queue: Vec<&'a str>,
    priority: Vec<i32>,
    run_at: Vec<Option<i64>>,
    delay: Vec<i64>,
    max_attempts: Vec<Option<i32>>,
    payload: Vec<&'a str>,
    headers: Vec<String>,
    key: Vec<Option<&'a str>>,
    fire: Vec<Option<String>>,
}

impl<'a> JobRows<'a> {
    /// The job of a (checked) enqueue request, with a new id.
    pub(crate) fn request(&mut self, req: &'a EnqueueRequest) {
        self.id.push(None);
        self.queue.push(&req.queue);
        self.priority.push(req.priority);
        self.run_at.push(req.run_at.map(Timestamp::as_millis));
        self.delay.push(req.delay_ms.unwrap_or(0));
        self.max_attempts.push(req.max_attempts.map(|n| n as i32));
        self.payload.push(req.payload.as_json());
        self.headers
            .push(serde_json::to_string(&req.headers).expect("headers serialize"));
        self.key.push(req.key.as_deref());
        self.fire.push(None);
    }

    /// The job of fire `fire` with id `id` (reserved with the fire's row),
    /// runnable now.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn fire(
        &mut self,
        id: i64,
        fire: String,
        queue: &'a str,
        priority: i32,
        max_attempts: Option<i32>,
        payload: &'a str,
        headers: String,
    ) {
        self.id.push(Some(id));
        self.queue.push(queue);
        self.priority.push(priority);
        self.run_at.push(None);
        self.delay.push(0);
        self.max_attempts.push(max_attempts);
        self.payload.push(payload);
        self.headers.push(headers);
        self.key.push(None);
        self.fire.push(Some(fire));
    }

    /// No job at all.
    pub(crate) fn is_empty(&self) -> bool {
        self.id.is_empty()
    }

    /// `$1` to `$10` with their types.
    pub(crate) fn typed(&self) -> [(&(dyn ToSql + Sync), Type); 10] {
        [
            (&self.id, Type::INT8_ARRAY),
            (&self.queue, Type::TEXT_ARRAY),
            (&self.priority, Type::INT4_ARRAY),
            (&self.run_at, Type::INT8_ARRAY),
            (&self.delay, Type::INT8_ARRAY),
            (&self.max_attempts, Type::INT4_ARRAY),
            (&self.payload, Type::TEXT_ARRAY),
            (&self.headers, Type::TEXT_ARRAY),
            (&self.key, Type::TEXT_ARRAY),
            (&self.fire, Type::TEXT_ARRAY),
        ]
    }
}

/// The rows of [`sql::insert_jobs`]: per job in order, its id if it was
/// inserted, and the job its key named before (keyed jobs only).
fn inserted(rows: &[Row]) -> Vec<(Option<i64>, Option<i64>)> {
    rows.iter().map(|r| (r.get(0), r.get(1))).collect()
}

impl PgQueues {
    /// Adds a job (or finds the one its key names), creating the queue
    /// with every default if it does not exist. `runAt` and `delayMs`
    /// count on the database clock; one in the past means now.
    pub async fn enqueue(&self, req: &EnqueueRequest) -> Result<Enqueued, QueueError> {
        self.validate(&Input::Enqueue(req.clone()))?;
        self.ensure_queue(&req.queue).await?;
        let delayed = req.run_at.is_some() || req.delay_ms.is_some_and(|d| d > 0);
        let carry = self.wake_carry(&req.queue, delayed);
        let done = self.insert_job(On::Own, req, carry).await;
        let added = matches!(&done, Ok(e) if !e.deduplicated);
        self.wake_done(&req.queue, carry, added);
        done
    }

    /// Enqueues inside the caller's transaction `tx` (the outbox pattern):
    /// the job exists if and only if `tx` commits, together with whatever
    /// else it wrote. Same checks, errors, idempotency keys and stored job
    /// as [`enqueue`](Self::enqueue); `tx` must be a connection to this
    /// handle's database (the schema is migrated by
    /// [`connect`](Self::connect)).
    ///
    /// - **Rollback leaves nothing**: not the job, not its key (free for
    ///   the next enqueue), not the queue when this call created it — an
    ///   undeclared queue is created inside `tx` too, and the handle
    ///   remembers a queue only once it sees it committed.
    /// - **Wake-up at commit**: a `NOTIFY` on [`channel`](Self::channel)
    ///   is sent inside `tx`, so PostgreSQL delivers it when `tx` commits
    ///   and drops it when it rolls back; many jobs of one queue in one
    ///   transaction make one notification. It costs what notifying
    ///   transactions cost: PostgreSQL serializes their commits (see
    ///   `docs/postgres.md`).
    /// - **Time**: `now()` in a transaction is its start, so `runAt`,
    ///   `delayMs` and the claim order count from `tx`'s start; a job due
    ///   at once is claimable as soon as `tx` commits.
    /// - **Waits**: a key (or a new queue) taken in `tx` is held until
    ///   `tx` ends; another enqueue of that key waits, then finds the job
    ///   (commit) or takes the key (rollback). Keep such transactions
    ///   short, and do not call [`enqueue`](Self::enqueue) for that key
    ///   from inside `tx`: it would wait for `tx`, which waits for it.
    /// - **Errors**: a refusal ([`QueueError::Refused`], bad input) comes
    ///   before any statement and leaves `tx` usable; a database error
    ///   aborts `tx` (roll it back), as any failed statement does.
    ///
    /// The statements are this handle's own, sent unprepared with typed
    /// parameters (one round trip each: a statement prepared on the
    /// handle's connection does not exist on `tx`'s). Pass a
    /// `tokio_postgres::Transaction` (a savepoint works too); a plain
    /// `Client` commits at once, like [`enqueue`](Self::enqueue).
    ///
    /// A producer writing an order and the job that mails its receipt,
    /// both or neither:
    ///
    /// ```no_run
    /// # async fn demo(
    /// #     queues: &chime_native::pg::PgQueues,
    /// # ) -> Result<(), Box<dyn std::error::Error>> {
    /// use chime_core::{EnqueueRequest, Payload};
    ///
    /// let mut db = chime_native::pg::connect("postgresql://app@127.0.0.1/app").await?;
    /// let tx = db.transaction().await?;
    /// let order: i64 = tx
    ///     .query_one(
    ///         "INSERT INTO orders (customer, total_cents) VALUES ($1, $2) RETURNING id",
    ///         &[&"ada", &4_200_i64],
    ///     )
    ///     .await?
    ///     .get(0);
    /// let mut job = EnqueueRequest::new(
    ///     "receipts",
    ///     Payload::from_json(&format!(r#"{{"order":{order}}}"#))?,
    /// );
    /// job.key = Some(format!("receipt-{order}"));
    /// let enqueued = queues.enqueue_in(&tx, &job).await?;
    /// tx.commit().await?; // the order and its job, or neither
    /// println!("order {order}: job {}", enqueued.job.0);
    /// # Ok(())
    /// # }
    /// ```
    pub async fn enqueue_in(
        &self,
        tx: &impl GenericClient,
        req: &EnqueueRequest,
    ) -> Result<Enqueued, QueueError> {
        self.validate(&Input::Enqueue(req.clone()))?;
        let on = On::Caller(tx.client());
        if !self.queue_committed(&req.queue).await? {
            // In `tx`: a rollback takes the queue away with the job. Not
            // remembered; a later call finds it committed (or creates it
            // again).
            self.create_queue(on, &req.queue).await?;
        }
        let done = self.insert_job(on, req, false).await?;
        if !done.deduplicated {
            // Says when the job is due, if later (a timer on every
            // listener), as the handle's own enqueues do.
            let id = done.job.0 as i64;
            let params: &Params<'_> = &[(&self.channel, Type::TEXT), (&id, Type::INT8)];
            let s = &self.schema;
            let notify = || {
                format!(
                    "SELECT {} FROM {s}.chime_jobs j WHERE j.id = $2",
                    sql::wake("$1", "j.queue", "j.run_at")
                )
            };
            self.rows(
                on,
                "notify_job",
                notify,
                params,
                "notifying in a transaction",
            )
            .await?;
        }
        Ok(done)
    }

    /// Runs [`sql::insert_jobs`] for `jobs` on `on` (with `waking`,
    /// [`sql::insert_jobs_waking`]: the queues' wake-ups in its
    /// transaction).
    async fn insert_jobs(
        &self,
        on: On<'_>,
        jobs: &JobRows<'_>,
        context: &'static str,
        waking: bool,
    ) -> Result<Vec<(Option<i64>, Option<i64>)>, QueueError> {
        let s = &self.schema;
        let typed = jobs.typed();
        let rows = if waking {
            let mut params = typed.to_vec();
            params.push((&self.channel, Type::TEXT));
            let sql = || sql::insert_jobs_waking(s);
            self.rows(on, "insert_jobs_waking", sql, &params, context)
                .await?
        } else {
            let sql = || sql::insert_jobs(s);
            self.rows(on, "insert_jobs", sql, &typed, context).await?
        };
        Ok(inserted(&rows))
    }

    /// Inserts the job of `req` (checked; its queue exists on `on`), or
    /// finds the one its key names; with `waking`, wakes its queue in the
    /// same transaction.
    async fn insert_job(
        &self,
        on: On<'_>,
        req: &EnqueueRequest,
        waking: bool,
    ) -> Result<Enqueued, QueueError> {
        let mut jobs = JobRows::default();
        jobs.request(req);
        // The key row decides: inserted (or taken over from an expired
        // key) means a new job with the id it names; a conflict with a live
        // key leaves both untouched and the existing job is returned. A
        // concurrent enqueue of the same key that committed after this
        // statement's snapshot shows as neither: ask again.
        for _ in 0..3 {
            let rows = self.insert_jobs(on, &jobs, "enqueueing", waking).await?;
            let enqueued = |id: i64, deduplicated| Enqueued {
                job: JobId(id as u64),
                deduplicated,
            };
            match rows.first().copied() {
                Some((Some(id), _)) => return Ok(enqueued(id, false)),
                Some((None, Some(id))) => return Ok(enqueued(id, true)),
                _ => continue,
            }
        }
        let key = req.key.as_deref().unwrap_or_default();
        Err(PgError::Contended(format!("enqueue with key {key:?}")).into())
    }

    /// Adds many jobs in one statement (one transaction, one commit) — a
    /// bulk producer's path — all or none, as the engine's batch: every
    /// request is checked first, and the first bad one refuses the batch
    /// with its index, adding nothing. Each key is decided as by
    /// [`enqueue`](Self::enqueue) (a request whose key an earlier one of
    /// the batch holds gets that job, `deduplicated`). Results are in
    /// request order. The wake-ups of the batch's queues are in its
    /// transaction.
    ///
    /// One case is not in that transaction: a key enqueued concurrently
    /// by another transaction that commits while the batch's statement
    /// runs shows as neither taken nor free to the statement's snapshot;
    /// that request alone is asked again (and finds the other job).
    pub async fn enqueue_batch(
        &self,
        reqs: &[EnqueueRequest],
    ) -> Result<Result<Vec<Enqueued>, (usize, CoreError)>, QueueError> {
        for (i, req) in reqs.iter().enumerate() {
            let input = Input::Enqueue(req.clone());
            if let Err(e) = validate_input(&input, &self.engine, Timestamp::MIN) {
                return Ok(Err((i, e)));
            }
        }
        if reqs.is_empty() {
            return Ok(Ok(Vec::new()));
        }
        let queues: BTreeSet<&str> = reqs.iter().map(|r| r.queue.as_str()).collect();
        for q in &queues {
            self.ensure_queue(q).await?;
        }
        // The first request of each key goes to the statement; a later
        // one with the same key names it.
        let mut first: BTreeMap<(&str, &str), usize> = BTreeMap::new();
        let mut earlier = vec![None; reqs.len()];
        let mut jobs = JobRows::default();
        let mut sent = Vec::with_capacity(reqs.len());
        for (i, req) in reqs.iter().enumerate() {
            if let Some(key) = req.key.as_deref() {
                if let Some(&j) = first.get(&(req.queue.as_str(), key)) {
                    earlier[i] = Some(j);
                    continue;
                }
                first.insert((req.queue.as_str(), key), i);
            }
            jobs.request(req);
            sent.push(i);
        }
        for q in &queues {
            self.wake_carry(q, true);
        }
        let rows = self
            .insert_jobs(On::Own, &jobs, "enqueueing a batch", true)
            .await;
        for q in &queues {
            self.wake_done(q, true, false);
        }
        let mut out: Vec<Option<Enqueued>> = vec![None; reqs.len()];
        for (&i, row) in sent.iter().zip(rows?) {
            let enqueued = |id: i64, deduplicated| Enqueued {
                job: JobId(id as u64),
                deduplicated,
            };
            out[i] = Some(match row {
                (Some(id), _) => enqueued(id, false),
                (None, Some(id)) => enqueued(id, true),
                (None, None) => self.enqueue(&reqs[i]).await?,
            });
        }
        for (i, j) in earlier.iter().enumerate() {
            if let Some(j) = *j {
                let job = out[j].expect("an earlier request has its result").job;
                out[i] = Some(Enqueued {
                    job,
                    deduplicated: true,
                });
            }
        }
        Ok(Ok(out
            .into_iter()
            .map(|e| e.expect("a result per request"))
            .collect()))
    }

    /// [`enqueue_batch`](Self::enqueue_batch) with a refusal as an error
    /// (without the index).
    pub async fn enqueue_many(&self, reqs: &[EnqueueRequest]) -> Result<Vec<Enqueued>, QueueError> {
        match self.enqueue_batch(reqs).await? {
            Ok(done) => Ok(done),
            Err((_, e)) => Err(e.into()),
        }
    }
}
