//! The driver: one tokio task owns the engine. Each loop turn gathers the
//! inputs that are ready (API calls from [`Handle`]s, plus an `Advance` when
//! the engine's timer is due), appends them to the store in one commit,
//! then handles them, executes the commands they produced and replies.
//! Write-ahead: nothing leaves the driver before the commit returns.

mod clock;
mod events;
mod handle;
mod metrics;
mod stream;
mod vitals;

pub use clock::{Clock, SystemClock, TokioClock};
pub use handle::{BatchReply, Handle};
pub use metrics::{CONTENT_TYPE, EngineGauges, Metrics, TransportCounters, TransportEvent};
pub use stream::{EVENT_BUFFER, StreamEvent};
pub use vitals::{VitalSigns, Vitals};

use crate::store::{Store, StoreError, deliverable};
use chime_core::{Command, Engine, EngineConfig, Error, Input, JournalEntry, Timestamp};
use events::{log_error, log_event};
use handle::{Msg, Shared};
use std::collections::HashMap;
use std::sync::Arc;
use tokio::sync::{Notify, mpsc};
use tokio::time::Instant;

/// Longest single sleep of the driver loop (see [`Driver::run`]).
const MAX_SLEEP_MS: i64 = 1_000;

/// Most outputs handed to [`Store::deliver`] at once.
const DELIVERY_CHUNK: usize = 4_096;

/// Why the driver could not run.
#[derive(Debug, thiserror::Error)]
pub enum DriverError {
    /// The store failed (at recovery or on a commit: the driver stops
    /// rather than act on inputs it could not make durable).
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The stored state does not restore.
    #[error("recovery failed: {0}")]
    Recovery(Error),
    /// The driver has stopped.
    #[error("the driver has stopped")]
    Stopped,
}

/// How the driver is set up.
#[derive(Clone, Debug)]
pub struct DriverConfig {
    /// Config of a fresh engine (ignored when the store has a snapshot).
    pub engine: EngineConfig,
    /// Write a snapshot (and truncate the journal) once this many entries
    /// are journaled and nothing is due soon; at 4× this many, at once
    /// ([`chime_core::host::snapshot_due`]).
    pub snapshot_every: u64,
    /// Most inputs grouped into one commit.
    pub max_batch: usize,
}

impl Default for DriverConfig {
    fn default() -> Self {
        DriverConfig {
            engine: EngineConfig::default(),
            snapshot_every: chime_core::host::SNAPSHOT_EVERY,
            max_batch: 1024,
        }
    }
}

/// The driver's side of core's snapshot cadence
/// ([`chime_core::host::snapshot_due`]): what the last snapshot cost and
/// when it ended, measured in real time.
#[derive(Clone, Copy, Debug)]
struct SnapshotCadence {
    cost: std::time::Duration,
    ended: std::time::Instant,
}

impl SnapshotCadence {
    fn new() -> Self {
        SnapshotCadence {
            cost: std::time::Duration::ZERO,
            ended: std::time::Instant::now(),
        }
    }

    /// Core's rule, in whole milliseconds.
    fn due(&self, journal_len: u64, every: u64, slack_ms: Option<i64>) -> bool {
        let ms = |d: std::time::Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
        let since = ms(self.ended.elapsed());
        chime_core::host::snapshot_due(journal_len, every, slack_ms, ms(self.cost), since)
    }
}

/// Queues whose `Wake` commands notify a local worker pool.
pub type Wakers = HashMap<String, Arc<Notify>>;

/// The engine, its store and clock, before the loop starts.
pub struct Driver {
    engine: Engine,
    store: Box<dyn Store>,
    clock: Arc<dyn Clock>,
    config: DriverConfig,
    wakers: Wakers,
    rx: mpsc::UnboundedReceiver<Msg>,
    /// `None` once running, so dropping every user handle ends the loop.
    handle: Option<Handle>,
    shared: Arc<Shared>,
    /// How long the last snapshot took to build and write, and when.
    snapshot: SnapshotCadence,
    /// This turn's outputs for [`Store::deliver`] (only when the store
    /// delivers).
    outbox: Vec<Command>,
    /// When each job this driver handed out was claimed (the event
    /// stream's durations).
    claims: stream::Claims,
}

impl std::fmt::Debug for Driver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Driver")
            .field("config", &self.config)
            .finish()
    }
}

impl Driver {
    /// Recovers the engine from `store`: snapshot plus journal replay (the
    /// replayed commands are not executed again: their effects — jobs,
    /// leases — are in the recovered state, and workers claim afresh).
    ///
    /// On a store with one owner ([`Store::single_owner`]: the data
    /// directory, a memory store) this is a new incarnation, and its first
    /// input, journaled before anything else runs, is `Input::Recover`:
    /// every job the previous process had claimed is released at once as
    /// interrupted (not a failed attempt; bounded by the queue's
    /// `maxInterruptions`), and a stop it began ends, so missed boundaries
    /// go through catch-up. Whatever must happen before those jobs can be
    /// claimed again (killing the previous incarnation's orphaned
    /// children) happens before this call, i.e. before
    /// `runtime::start`.
    pub fn recover(
        mut store: Box<dyn Store>,
        clock: Arc<dyn Clock>,
        config: DriverConfig,
    ) -> Result<Driver, DriverError> {
        let base = match store.load_snapshot()? {
            Some(s) => s,
            None => Engine::new(config.engine.clone()).snapshot(),
        };
        // Replayed as `journal::replay` does (a rejected input is part of
        // the history and does not stop it), but entry by entry as the
        // store reads them, without serializing every command and keeping
        // every reply, which only `chime replay` compares: here the
        // commands' effects are in the state, and they are dropped.
        let mut engine = Engine::restore(base).map_err(DriverError::Recovery)?;
        let mut commands = Vec::new();
        // A snapshot of another tz release: the restore moved zoned
        // cursors and says so (before the replay drops every command).
        engine.drain_commands(&mut commands);
        for c in commands.drain(..) {
            if let Command::Event(e) = &c {
                log_event(e, &engine);
            }
        }
        // Except the outputs a delivering store carries on: the crash may
        // have come between a turn's append and its delivery, so they are
        // delivered again (the store makes that idempotent).
        let delivers = store.delivers();
        let mut outbox = Vec::new();
        let replayed = store.for_each_entry(&mut |e| {
            let _ = engine.handle(e.now, e.input);
            engine.drain_commands(&mut commands);
            if delivers {
                outbox.extend(commands.drain(..).filter(deliverable));
            }
            commands.clear();
        })?;
        deliver_all(store.as_mut(), &outbox)?;
        tracing::info!(
            replayed,
            schedules = engine.schedule_count(),
            live_jobs = engine.live_jobs(),
            "recovered"
        );
        let (tx, rx) = mpsc::unbounded_channel();
        let shared = Arc::new(Shared::default());
        let mut driver = Driver {
            engine,
            store,
            clock,
            config,
            wakers: Wakers::new(),
            rx,
            handle: Some(Handle {
                tx,
                shared: shared.clone(),
            }),
            shared,
            snapshot: SnapshotCadence::new(),
            outbox: Vec::new(),
            claims: stream::Claims::default(),
        };
        if driver.store.single_owner() {
            driver.release_dead_claims()?;
        }
        Ok(driver)
    }

    /// Journals and applies `Input::Recover` (see [`Driver::recover`]).
    fn release_dead_claims(&mut self) -> Result<(), DriverError> {
        let now = self.clock.now();
        let input = Input::Recover;
        self.commit(&[JournalEntry {
            now,
            input: input.clone(),
        }])?;
        let r = self.engine.handle(now, input);
        // Wakes go nowhere yet: pools claim when they start.
        self.execute(now, &mut Vec::new());
        match r {
            Ok(chime_core::Reply::Recovered { interrupted }) if interrupted > 0 => tracing::warn!(
                interrupted,
                "jobs claimed by the previous run were interrupted; released to run again"
            ),
            Ok(_) => {}
            Err(e) => tracing::error!(error = %e, "recover rejected"),
        }
        Ok(())
    }

    /// A handle to send inputs with (usable before [`Driver::run`]).
    pub fn handle(&self) -> Handle {
        self.handle.clone().expect("not running yet")
    }

    /// The engine (read-only), e.g. to list queues before starting workers.
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// Routes `Wake` commands of `queue` to `notify`.
    pub fn add_waker(&mut self, queue: &str, notify: Arc<Notify>) {
        self.wakers.insert(queue.to_owned(), notify);
    }

    /// Runs until [`Handle::stop`] (or every handle is dropped), then
    /// writes a final snapshot. Returns the engine for inspection. How it
    /// ended is left in [`Handle::vitals`] for health probes.
    pub async fn run(mut self) -> Result<Engine, DriverError> {
        let r = self.run_loop().await;
        // Before the inbox closes (when `self` drops): whoever sees the
        // driver gone also sees why.
        self.shared
            .vitals
            .stopped(r.as_ref().err().map(ToString::to_string));
        r.map(|()| self.engine)
    }

    async fn run_loop(&mut self) -> Result<(), DriverError> {
        self.handle = None;
        let mut batch: Vec<Msg> = Vec::new();
        let mut commands = Vec::new();
        let mut armed: Option<Timestamp> = None;
        let sleep = tokio::time::sleep_until(Instant::now());
        tokio::pin!(sleep);
        let mut stopping = false;
        while !stopping {
            let timeout = self.engine.poll_timeout();
            if timeout != armed {
                // Re-arm only when the engine's next deadline changed.
                armed = timeout;
                if let Some(t) = timeout {
                    // Capped, so a wall clock that jumps forward is noticed
                    // within `MAX_SLEEP_MS` rather than after the full wait.
                    let wait = (t.as_millis() - self.clock.now().as_millis()).clamp(0, MAX_SLEEP_MS)
                        as u64;
                    sleep
                        .as_mut()
                        .reset(Instant::now() + std::time::Duration::from_millis(wait));
                }
            }
            let mut woke = false;
            tokio::select! {
                m = self.rx.recv() => match m {
                    Some(m) => batch.push(m),
                    None => stopping = true,
                },
                () = &mut sleep, if armed.is_some() => woke = true,
            }
            while batch.len() < self.config.max_batch {
                match self.rx.try_recv() {
                    Ok(m) => batch.push(m),
                    Err(_) => break,
                }
            }
            let now = self.clock.now();
            let advance = woke && armed.is_some_and(|t| now >= t);
            if woke {
                // Re-arm on the next turn (the sleep may have been capped).
                armed = None;
            }
            let (entries, waiting, stop) = journal_turn(now, advance, &mut batch, &self.engine);
            stopping |= stop;
            self.shared.vitals.turn();
            self.commit(&entries)?;
            self.apply(now, advance, waiting, &mut commands);
            // Before any snapshot: a snapshot ends the journal these
            // outputs would be delivered again from after a crash.
            deliver_all(self.store.as_mut(), &self.outbox)?;
            self.outbox.clear();
            self.snapshot_if_due()?;
        }
        self.store.write_snapshot(&self.engine.snapshot())?;
        tracing::info!("driver stopped");
        Ok(())
    }

    /// Write-ahead: commits the turn's entries before any of it is acted on.
    fn commit(&mut self, entries: &[JournalEntry]) -> Result<(), DriverError> {
        if entries.is_empty() {
            return Ok(());
        }
        let started = std::time::Instant::now();
        self.store.append(entries)?;
        let took = started.elapsed();
        self.shared.metrics.observe_commit(took);
        self.shared.vitals.committed(took.as_micros() as u64);
        Ok(())
    }

    /// Handles a committed turn: the timer's `Advance` first, then the
    /// messages in arrival order (so a read sees every input sent before
    /// it), executing commands and replying as it goes.
    fn apply(
        &mut self,
        now: Timestamp,
        advance: bool,
        waiting: Vec<Msg>,
        commands: &mut Vec<Command>,
    ) {
        if advance {
            log_error(self.engine.handle(now, Input::Advance));
            self.execute(now, commands);
        }
        for m in waiting {
            match m {
                Msg::Input(input, reply) => {
                    let r = self.engine.handle(now, input);
                    self.note_claims(&r, now);
                    self.execute(now, commands);
                    let _ = reply.send(r);
                }
                Msg::Batch(inputs, reply) => {
                    let mut replies = Vec::with_capacity(inputs.len());
                    let mut refused = None;
                    for (i, input) in inputs.into_iter().enumerate() {
                        let r = self.engine.handle(now, input);
                        self.note_claims(&r, now);
                        self.execute(now, commands);
                        match r {
                            Ok(r) => replies.push(r),
                            Err(e) => {
                                // Past the pre-check only a rule that
                                // needs state can refuse; the rest of the
                                // batch still applies (it is journaled).
                                tracing::warn!(index = i, error = %e, "batch item refused after its pre-check");
                                refused.get_or_insert((i, e));
                            }
                        }
                    }
                    let _ = reply.send(match refused {
                        None => Ok(replies),
                        Some(e) => Err(e),
                    });
                }
                Msg::Inspect(f) => {
                    // A read cannot change the engine, so a panicking
                    // one is contained: its caller sees no answer.
                    let engine = &self.engine;
                    let read = std::panic::AssertUnwindSafe(move || f(engine));
                    if std::panic::catch_unwind(read).is_err() {
                        tracing::error!("an inspect closure panicked");
                    }
                }
                Msg::Stop => {}
            }
        }
    }

    /// Writes a snapshot (truncating the journal) when core's cadence says so.
    fn snapshot_if_due(&mut self) -> Result<(), DriverError> {
        let slack_ms = self
            .engine
            .poll_timeout()
            .map(|t| t.as_millis() - self.clock.now().as_millis());
        let every = self.config.snapshot_every;
        if self.snapshot.due(self.store.journal_len(), every, slack_ms) {
            let started = std::time::Instant::now();
            self.store.write_snapshot(&self.engine.snapshot())?;
            self.snapshot = SnapshotCadence {
                cost: started.elapsed(),
                ended: std::time::Instant::now(),
            };
            tracing::debug!(took = ?self.snapshot.cost, "snapshot written, journal truncated");
        }
        Ok(())
    }

    /// Remembers when the jobs of a `Claim` reply were claimed.
    fn note_claims(&mut self, r: &Result<chime_core::Reply, Error>, now: Timestamp) {
        if let Ok(chime_core::Reply::Claimed { jobs }) = r {
            self.claims.claimed(jobs.iter().map(|c| c.job), now);
        }
    }

    /// Drains and executes every pending command.
    fn execute(&mut self, now: Timestamp, commands: &mut Vec<Command>) {
        self.engine.drain_commands(commands);
        let delivers = self.store.delivers();
        for cmd in commands.drain(..) {
            self.shared.metrics.on_command(&cmd);
            stream::publish(
                &self.shared.publisher,
                &mut self.claims,
                &cmd,
                &self.engine,
                now,
            );
            if delivers && deliverable(&cmd) {
                self.outbox.push(cmd.clone());
            }
            match cmd {
                Command::Fire(f) => tracing::info!(
                    fire = %f.fire_id,
                    schedule = %f.schedule(),
                    reason = %events::name(&f.reason),
                    queue = %f.queue,
                    job = f.job.map(|j| j.0),
                    late_ms = f.fired_at.as_millis() - f.due_at.as_millis(),
                    "fire"
                ),
                Command::Wake { queue } => {
                    self.shared.publisher.wake(&queue);
                    match self.wakers.get(&*queue) {
                        Some(n) => n.notify_one(),
                        None => tracing::debug!(%queue, "work available, no local worker"),
                    }
                }
                Command::Enqueue { fire, queue, .. } if !delivers => tracing::warn!(
                    %fire, %queue,
                    "fire for an external queue: no transport configured in this host"
                ),
                Command::Cancel { job, reason } => {
                    tracing::info!(job = job.0, reason = %events::name(&reason), "cancel requested")
                }
                Command::Event(e) => log_event(&e, &self.engine),
                other => tracing::debug!(?other, "command"),
            }
        }
    }
}

/// One turn's journal entries (the timer's `Advance` first, then each
/// input in arrival order) and the messages to act on once they are
/// committed; `true` if a `Stop` came.
///
/// Two kinds of message are settled here, before the commit, and never
/// journaled: a `Claim` whose caller has gone (its reply channel is
/// closed: an HTTP long-poll whose client disconnected), so no job is
/// leased to nobody; and a batch that a pre-check refuses (see
/// [`precheck`]), so a refused batch changes nothing.
fn journal_turn(
    now: Timestamp,
    advance: bool,
    batch: &mut Vec<Msg>,
    engine: &Engine,
) -> (Vec<JournalEntry>, Vec<Msg>, bool) {
    let mut entries = Vec::with_capacity(batch.len() + 1);
    if advance {
        entries.push(JournalEntry {
            now,
            input: Input::Advance,
        });
    }
    let mut waiting = Vec::with_capacity(batch.len());
    let mut stop = false;
    for m in batch.drain(..) {
        match m {
            Msg::Input(Input::Claim { .. }, reply) if reply.is_closed() => {}
            Msg::Batch(inputs, reply) => match precheck(&inputs, engine, now) {
                Err(e) => {
                    let _ = reply.send(Err(e));
                }
                Ok(()) => {
                    entries.extend(inputs.iter().map(|input| JournalEntry {
                        now,
                        input: input.clone(),
                    }));
                    waiting.push(Msg::Batch(inputs, reply));
                }
            },
            Msg::Input(input, reply) => {
                entries.push(JournalEntry {
                    now,
                    input: input.clone(),
                });
                waiting.push(Msg::Input(input, reply));
            }
            Msg::Inspect(f) => waiting.push(Msg::Inspect(f)),
            Msg::Stop => stop = true,
        }
    }
    (entries, waiting, stop)
}

/// The checks a batch passes before any of it is journaled, so that it
/// applies whole or not at all: every input's stateless rules
/// ([`chime_core::validate_input`], at this turn's `now`) and the bound
/// on live jobs for its enqueues (counted as if none deduplicated). The
/// error names the first input refused.
pub(crate) fn precheck(inputs: &[Input], engine: &Engine, now: Timestamp) -> BatchReply {
    let config = engine.config();
    for (i, input) in inputs.iter().enumerate() {
        chime_core::validate_input(input, config, now).map_err(|e| (i, e))?;
    }
    let adds = inputs
        .iter()
        .filter(|i| matches!(i, Input::Enqueue(_)))
        .count();
    let limit = config.limits.live_jobs;
    if adds > 0 && engine.live_jobs() + adds > limit {
        return Err((
            0,
            Error::LimitExceeded {
                what: "live_jobs",
                limit: limit as u64,
            },
        ));
    }
    Ok(())
}

/// Hands `outputs` to the store in chunks of at most [`DELIVERY_CHUNK`]
/// (one more to keep a `Fire` with the `Enqueue` after it).
fn deliver_all(store: &mut dyn Store, outputs: &[Command]) -> Result<(), StoreError> {
    let mut rest = outputs;
    while !rest.is_empty() {
        let mut n = rest.len().min(DELIVERY_CHUNK);
        if n < rest.len() && matches!(rest[n - 1], Command::Fire(_)) {
            n += 1;
        }
        let (chunk, tail) = rest.split_at(n);
        store.deliver(chunk)?;
        rest = tail;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::SnapshotCadence;
    use std::time::{Duration, Instant};

    #[test]
    fn the_cadence_is_cores_in_milliseconds() {
        let long_ago = Instant::now() - Duration::from_secs(60);
        let cheap = SnapshotCadence {
            cost: Duration::ZERO,
            ended: Instant::now(),
        };
        assert!(!cheap.due(9, 10, None));
        assert!(cheap.due(10, 10, None));
        // A 50 ms snapshot ended a minute ago: the slack decides...
        let fifty = SnapshotCadence {
            cost: Duration::from_millis(50),
            ended: long_ago,
        };
        assert!(!fifty.due(10, 10, Some(100)));
        assert!(fifty.due(10, 10, Some(101)));
        assert!(fifty.due(40, 10, Some(-5)));
        // ...and a 10 s one that just ended holds even the bound back.
        let slow = SnapshotCadence {
            cost: Duration::from_secs(10),
            ended: Instant::now(),
        };
        assert!(!slow.due(40, 10, Some(-5)));
        assert!(!slow.due(10, 10, None));
    }
}
