//! Fires of the leader's engine in Postgres: `chime_fires` (one row per
//! fire, with the job it created in `chime_jobs`) and `chime_skips` (one row
//! per run of skipped boundaries), written by `PgStore::deliver` ([`crate::store::Store::deliver`])
//! in the leader's fenced transaction; and the way back, [`ended`] and
//! [`mark_settled`], with which the leader learns that a fire's job has
//! ended (`FireSettled`), so overlap policies see it finish.
//!
//! A fire's primary key is its id, so delivering it again is a no-op:
//! after a crash between a turn's append and its delivery the next leader
//! replays the journal and delivers every replayed fire once more, and
//! only the ones that never arrived get a job.

use super::connection::PgError;
use super::queue::{JobRows, QueueRows, sql};
use chime_core::{
    Command, EngineConfig, Event, FireId, FireKind, FireOutcome, JobEnd, JobId, JobState, Timestamp,
};
use std::collections::{BTreeMap, BTreeSet};
use tokio_postgres::{GenericClient, Transaction};

/// The deliverable outputs of some turns, as the columns of the
/// statements that insert them.
#[derive(Debug, Default)]
pub(crate) struct Deliveries {
    fire_id: Vec<String>,
    schedule: Vec<String>,
    nominal_ms: Vec<i64>,
    kind: Vec<&'static str>,
    reason: Vec<String>,
    due_ms: Vec<i64>,
    fired_ms: Vec<i64>,
    queue: Vec<String>,
    payload: Vec<String>,
    headers: Vec<String>,
    priority: Vec<i32>,
    max_attempts: Vec<Option<i32>>,
    skip_schedule: Vec<String>,
    skip_first_ms: Vec<i64>,
    skip_last_ms: Vec<i64>,
    skip_count: Vec<i64>,
    skip_reason: Vec<String>,
}

/// A serde unit variant's name (`"catchup"`).
fn variant_name<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_value(v)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

impl Deliveries {
    /// Gathers the fires (each `Fire` of an external queue with the
    /// `Enqueue` that follows it) and skipped runs among `outputs`.
    pub(crate) fn of(outputs: &[Command]) -> Deliveries {
        let mut d = Deliveries::default();
        let mut last_fire = None;
        for cmd in outputs {
            match cmd {
                Command::Fire(f) if f.job.is_none() => last_fire = Some(f),
                Command::Enqueue {
                    fire,
                    queue,
                    payload,
                    headers,
                    priority,
                    max_attempts,
                    ..
                } => {
                    // The engine emits a fire's `Fire` right before its
                    // `Enqueue`, and deliveries never split the two.
                    let f = last_fire.filter(|f| f.fire_id == *fire);
                    d.fire_id.push(fire.to_string());
                    d.schedule.push(fire.schedule.to_string());
                    d.nominal_ms.push(fire.nominal.as_millis());
                    d.kind.push(match fire.extra {
                        None => "scheduled",
                        Some((FireKind::Manual, _)) => "manual",
                        Some((FireKind::Backfill, _)) => "backfill",
                    });
                    d.reason
                        .push(f.map_or_else(String::new, |f| variant_name(&f.reason)));
                    d.due_ms
                        .push(f.map_or(fire.nominal.as_millis(), |f| f.due_at.as_millis()));
                    d.fired_ms
                        .push(f.map_or(fire.nominal.as_millis(), |f| f.fired_at.as_millis()));
                    d.queue.push(queue.to_string());
                    d.payload.push(payload.as_json().to_owned());
                    d.headers
                        .push(serde_json::to_string(headers).expect("headers serialize"));
                    d.priority.push(*priority);
                    d.max_attempts.push(max_attempts.map(|n| n as i32));
                }
                Command::Event(Event::FireSkipped {
                    schedule,
                    reason,
                    count,
                    first,
                    last,
                }) => {
                    d.skip_schedule.push(schedule.clone());
                    d.skip_first_ms.push(first.as_millis());
                    d.skip_last_ms.push(last.as_millis());
                    d.skip_count.push(i64::try_from(*count).unwrap_or(i64::MAX));
                    d.skip_reason.push(variant_name(reason));
                }
                _ => {}
            }
        }
        d
    }

    /// Nothing to write.
    pub(crate) fn is_empty(&self) -> bool {
        self.fire_id.is_empty() && self.skip_schedule.is_empty()
    }

    /// Writes everything inside the caller's fenced transaction: missing
    /// queues (as an enqueue would create them: core's implicit config,
    /// `engine_config`'s seed), the fires not yet known with one job each,
    /// the skipped runs not yet known, and a wake-up per queue that got a
    /// job (sent at commit).
    pub(crate) async fn write(
        &self,
        tx: &Transaction<'_>,
        to: &Destination<'_>,
        epoch: u64,
    ) -> Result<(), PgError> {
        let epoch = epoch as i64;
        if !self.fire_id.is_empty() {
            let names: BTreeSet<&str> = self.queue.iter().map(String::as_str).collect();
            let rows = QueueRows::implicit(names, to.engine_config);
            tx.query_typed(&sql::upsert_queues(to.schema), &rows.typed())
                .await
                .map_err(PgError::db("creating the queues of fires"))?;
            let woken = self.write_fires(tx, to, epoch).await?;
            tx.execute(
                "SELECT pg_notify($1, q) FROM unnest($2::text[]) AS q",
                &[&to.channel, &woken],
            )
            .await
            .map_err(PgError::db("announcing the jobs of fires"))?;
        }
        if !self.skip_schedule.is_empty() {
            self.write_skips(tx, to, epoch).await?;
        }
        Ok(())
    }

    /// Inserts the fires not yet known, each with a job id reserved, then
    /// their jobs through the one job insert ([`sql::insert_jobs`]).
    /// Returns the queues that got a job.
    async fn write_fires(
        &self,
        tx: &Transaction<'_>,
        to: &Destination<'_>,
        epoch: i64,
    ) -> Result<Vec<String>, PgError> {
        let sql = insert_fires_sql(to.schema);
        let new = tx
            .query(
                &sql,
                &[
                    &to.engine,
                    &self.fire_id,
                    &self.schedule,
                    &self.nominal_ms,
                    &self.kind,
                    &self.reason,
                    &self.due_ms,
                    &self.fired_ms,
                    &self.queue,
                    &epoch,
                ],
            )
            .await
            .map_err(PgError::db("inserting fires"))?;
        // By reserved id: the delivery's order.
        let mut new: Vec<(String, i64)> = new.iter().map(|r| (r.get(0), r.get(1))).collect();
        new.sort_by_key(|&(_, job)| job);
        let index: BTreeMap<&str, usize> = self
            .fire_id
            .iter()
            .enumerate()
            .map(|(i, f)| (f.as_str(), i))
            .collect();
        let mut jobs = JobRows::default();
        let mut woken = BTreeSet::new();
        for (fire, job) in &new {
            let i = index[fire.as_str()];
            woken.insert(self.queue[i].clone());
            jobs.fire(
                *job,
                fire.clone(),
                &self.queue[i],
                self.priority[i],
                self.max_attempts[i],
                &self.payload[i],
                self.headers[i].clone(),
            );
        }
        if !jobs.is_empty() {
            tx.query_typed(&sql::insert_jobs(to.schema), &jobs.typed())
                .await
                .map_err(PgError::db("inserting the jobs of fires"))?;
        }
        Ok(woken.into_iter().collect())
    }

    /// Inserts the skipped runs not yet known.
    async fn write_skips(
        &self,
        tx: &Transaction<'_>,
        to: &Destination<'_>,
        epoch: i64,
    ) -> Result<(), PgError> {
        tx.execute(
            &format!(
                "INSERT INTO {}.chime_skips
                     (engine, schedule, first_ms, last_ms, count, reason, epoch)
                 SELECT $1, s, f, l, c, r, $7
                 FROM unnest($2::text[], $3::bigint[], $4::bigint[], $5::bigint[], $6::text[])
                      AS t(s, f, l, c, r)
                 ON CONFLICT DO NOTHING",
                to.schema
            ),
            &[
                &to.engine,
                &self.skip_schedule,
                &self.skip_first_ms,
                &self.skip_last_ms,
                &self.skip_count,
                &self.skip_reason,
                &epoch,
            ],
        )
        .await
        .map_err(PgError::db("recording skipped boundaries"))?;
        Ok(())
    }
}

/// Inserts the fires of `$2`… not yet known for engine `$1` (epoch
/// `$10`), each with a job id reserved for its job; returns the new ones'
/// ids and job ids. The ids are reserved in delivery order (one `nextval`
/// per fire, in a materialized scan of the arrays), so the jobs of one
/// delivery are claimed in fire order.
fn insert_fires_sql(schema: &str) -> String {
    format!(
        "WITH t AS MATERIALIZED (
             SELECT u.*, nextval(pg_get_serial_sequence('{schema}.chime_jobs', 'id')) AS job
             FROM unnest($2::text[], $3::text[], $4::bigint[], $5::text[], $6::text[],
                         $7::bigint[], $8::bigint[], $9::text[])
                  WITH ORDINALITY
                  AS u(fire_id, schedule, nominal_ms, kind, reason, due_ms, fired_ms, queue,
                       ord))
         INSERT INTO {schema}.chime_fires
             (engine, fire_id, schedule, nominal_ms, kind, reason, due_ms, fired_ms, epoch,
              queue, job)
         SELECT $1, fire_id, schedule, nominal_ms, kind, reason, due_ms, fired_ms, $10,
                queue, job
         FROM t ORDER BY ord
         ON CONFLICT DO NOTHING
         RETURNING fire_id, job"
    )
}

/// Where [`Deliveries::write`] writes: the quoted schema, its wake-up
/// channel, the engine (its lease name) and the engine's config (the seed
/// and limits of queues its fires create).
pub(crate) struct Destination<'a> {
    /// The quoted schema.
    pub(crate) schema: &'a str,
    /// The queues' wake-up channel.
    pub(crate) channel: &'a str,
    /// The engine's lease name.
    pub(crate) engine: &'a str,
    /// Its config.
    pub(crate) engine_config: &'a EngineConfig,
}

/// A fire whose job ended: how (the outcome `FireSettled` carries) and,
/// while the job row is still there, its detail for the run history.
pub type Ended = (FireId, FireOutcome, Option<JobEnd>);

/// Up to `max` fires of `engine` whose job has ended (or is gone: finished
/// jobs are deleted after their queue's retention) and that the leader has
/// not yet been told about, with how the job ended: its state, attempts,
/// last claim and end (database clock) and last error.
pub async fn ended(
    client: &impl GenericClient,
    schema: &str,
    engine: &str,
    max: i64,
) -> Result<Vec<Ended>, PgError> {
    let rows = client
        .query(
            &format!(
                "SELECT f.fire_id, j.state, j.id, j.attempt, {claimed}, {finished}, j.last_error
                 FROM \"{schema}\".chime_fires f
                 LEFT JOIN \"{schema}\".chime_jobs j ON j.id = f.job
                 WHERE f.engine = $1 AND NOT f.settled
                   AND (j.id IS NULL OR j.state IN {ended})
                 LIMIT $2",
                ended = sql::states(JobState::is_terminal),
                claimed = sql::ms("j.claimed_at"),
                finished = sql::ms("j.finished_at"),
            ),
            &[&engine, &max],
        )
        .await
        .map_err(PgError::db("reading ended fires"))?;
    let mut out = Vec::with_capacity(rows.len());
    for r in rows {
        let id: &str = r.get(0);
        let state: Option<&str> = r.get(1);
        let fire = id
            .parse::<FireId>()
            .map_err(|e| PgError::Stored(format!("fire id {id:?}: {e}")))?;
        // A job that is gone (pruned by retention) counts as succeeded, an
        // ended one by its state.
        let state = state.map(JobState::from_name);
        let outcome = match state {
            None | Some(Some(JobState::Completed)) => FireOutcome::Succeeded,
            Some(_) => FireOutcome::Failed,
        };
        let job = state.flatten().map(|state| JobEnd {
            id: JobId(r.get::<_, i64>(2) as u64),
            state,
            attempts: r.get::<_, i32>(3).max(0) as u32,
            started_at: r.get::<_, Option<i64>>(4).and_then(ms),
            finished_at: r.get::<_, Option<i64>>(5).and_then(ms),
            error: r.get(6),
        });
        out.push((fire, outcome, job));
    }
    Ok(out)
}

fn ms(v: i64) -> Option<Timestamp> {
    Timestamp::from_millis(v).ok()
}

/// Records that the leader's engine was told these fires ended (after the
/// `FireSettled` inputs were committed to its journal).
pub async fn mark_settled(
    client: &impl GenericClient,
    schema: &str,
    engine: &str,
    fires: &[FireId],
) -> Result<(), PgError> {
    let ids: Vec<String> = fires.iter().map(ToString::to_string).collect();
    client
        .execute(
            &format!(
                "UPDATE \"{schema}\".chime_fires SET settled = true
                 WHERE engine = $1 AND fire_id = ANY($2)"
            ),
            &[&engine, &ids],
        )
        .await
        .map_err(PgError::db("marking fires settled"))?;
    Ok(())
}
