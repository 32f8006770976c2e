//! One "handle, drain, check" step shared by the model-based proptest
//! (`engine_model`) and the simulation (`engine_simulation`).
//!
//! [`Checker::handle`] hands one input to the engine, drains every command,
//! records the journal and the serialized command stream from the start,
//! and checks after every step, from the command stream, the replies and
//! the public getters only:
//!
//! - `check_invariants()` and the [`Accounting`] identity (every boundary
//!   before the cursor fired or skipped exactly once, also across a
//!   redefinition: a due or pending boundary of a replaced grid must be
//!   fired or reported skipped);
//! - the schedule counters agree with the commands (`fires`, `skipped`);
//! - no fire id twice for the life of the engine (across remove +
//!   re-create); every `Fire.job` is a job never seen before, and the
//!   queues' `enqueued` totals equal the number of distinct jobs seen;
//! - every fire: `nominal <= dueAt <= nominal + jitterMs` (largest jitter the
//!   schedule ever had) and `dueAt <= firedAt = clock`; `@every` fires on the
//!   grid `(nominal - offset) % step == 0`, computed from the spec text
//!   here; a backfill fire has `nominal < clock`; a manual fire `nominal =
//!   clock`;
//! - leadership: no fire unless standalone or a grant known to the harness
//!   is valid at `firedAt`, and its epoch is that grant's; exactly one
//!   `leadership_lost` (with the grant's epoch) in the call whose clock
//!   reaches the grant's `validUntil` or that revokes it, and none
//!   otherwise;
//! - overlap (`O`): the harness keeps every schedule's fires in flight from
//!   the command stream (made under a policy other than `allow`; ended by a
//!   terminal job event, `FireSettled`, `fire_unsettled`, or a
//!   `cancel_previous` fire). An `overlap` skip or `fire_buffered` needs a
//!   policy that holds back (`skip`, `buffer_one`) and a fire in flight; a
//!   grid, manual or backfill fire under such a policy needs nothing surely
//!   in flight; a `cancel_previous` fire must cancel every previous local
//!   job in the same call; a trigger answering `fire: null` and a backfill
//!   skipping need a policy that holds back. Where an upsert in the same
//!   call changes the policy, both the old and the new one are allowed;
//! - incarnations (`R`): no fire or skip of a schedule that does not exist;
//!   a fire's `version` is one of the current incarnation's;
//! - pause: the harness records every interval during which a schedule was
//!   paused (from the status getter); no grid fire has its nominal time
//!   inside one, and no `paused` skip has a boundary outside all of them;
//! - `too_old`: the boundary that was the cursor before the input, due at
//!   `d`, is not skipped `too_old` when `clock - d <= windowMs` (the window is
//!   measured from the due time);
//! - a refused input whose error needs no state leaves the snapshot
//!   byte-identical (no clock move);
//! - the engine clock is the largest `now` given;
//! - one call emits at most [`Checker::command_bound`] commands (enforced
//!   when the limits are small);
//! - [`Checker::replay_from_start`]: the journal replayed on the initial
//!   snapshot reproduces the command stream and the state byte for byte.
//!
//! Every failure message starts with a tag naming the invariant (asserted
//! by `tests/engine/planted_bugs.rs`; [`Checker::self_check`] turns the engine's
//! own invariant check off there, so the checks from outside must find a
//! planted bug alone).

use crate::accounting::{Accounting, Grid};
use chime_core::FireKind;
use chime_core::journal::{self, Replayed};
use chime_core::testing::PlantedBug;
use chime_core::{
    Command, Engine, EngineConfig, Error, Event, FireReason, Input, JournalEntry, Overlap, Reply,
    ScheduleDef, ScheduleStatus, SkipReason, Snapshot, Timestamp,
};
use std::collections::{BTreeMap, BTreeSet, HashSet};

/// Error codes of checks that need no state: such a refusal changes nothing.
pub const STATELESS_CODES: [&str; 7] = [
    "invalid_name",
    "reserved_name",
    "invalid_spec",
    "invalid_duration",
    "invalid_time_zone",
    "interval_too_short",
    "payload_too_large",
];

fn t(ms: i64) -> Timestamp {
    Timestamp::from_millis(ms).unwrap()
}

/// Parses a duration like `1h30m`, `15m`, `500ms`, `2d` (the `@every`
/// grammar used by the generators), independently of the engine.
pub fn parse_duration(text: &str) -> Option<i64> {
    let (mut total, mut num, mut any) = (0i64, String::new(), false);
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i] as char;
        if c.is_ascii_digit() {
            num.push(c);
            i += 1;
            continue;
        }
        let (unit, len) = if text[i..].starts_with("ms") {
            (1, 2)
        } else {
            match c {
                's' => (1000, 1),
                'm' => (60_000, 1),
                'h' => (3_600_000, 1),
                'd' => (86_400_000, 1),
                _ => return None,
            }
        };
        total += num.parse::<i64>().ok()? * unit;
        num.clear();
        any = true;
        i += len;
    }
    (any && num.is_empty()).then_some(total)
}

/// `(step, offset)` of an `@every <d> [+<d>]` spec, from the text alone.
pub fn every_grid(spec: &str) -> Option<(i64, i64)> {
    let rest = spec.trim().strip_prefix("@every")?.trim();
    let mut parts = rest.split_whitespace();
    let step = parse_duration(parts.next()?)?;
    let offset = match parts.next() {
        Some(o) => parse_duration(o.strip_prefix('+')?)?,
        None => 0,
    };
    Some((step, offset.rem_euclid(step)))
}

#[derive(Debug)]
struct Track {
    def: ScheduleDef,
    status: ScheduleStatus,
    /// `[start, end]` of every pause (`end = i64::MAX` while paused).
    pauses: Vec<(i64, i64)>,
    max_jitter: i64,
    /// `@every` grid of every definition of this incarnation.
    grids: Vec<(i64, i64)>,
    every_only: bool,
    fires: u64,
    skipped: u64,
    /// Fires in flight for the overlap policy, as the commands show them.
    flights: Vec<Flight>,
    /// Definition versions of this incarnation: `(first, current)`.
    versions: (u64, u64),
}

/// A fire the harness believes in flight: made under a policy other than
/// `allow`, and its local job not terminal / its external fire neither
/// settled nor reported `fire_unsettled`.
#[derive(Clone, Debug)]
struct Flight {
    fire: String,
    job: Option<u64>,
    /// `false` when the harness cannot tell whether the engine tracks it
    /// (made in a call whose upsert changed the policy to or from
    /// `allow`, or being settled by this call): it may explain an
    /// `overlap` skip but never demands one.
    sure: bool,
}

/// The overlap policies that may have applied to a schedule's boundaries
/// in one call: before and after the call's upsert (equal otherwise).
#[derive(Clone, Copy, Debug)]
struct Policies(Overlap, Overlap);

impl Policies {
    fn all(self, f: impl Fn(Overlap) -> bool) -> bool {
        f(self.0) && f(self.1)
    }
    fn any(self, f: impl Fn(Overlap) -> bool) -> bool {
        f(self.0) || f(self.1)
    }
}

fn holds_back(o: Overlap) -> bool {
    matches!(o, Overlap::Skip | Overlap::BufferOne)
}

impl Track {
    fn paused_at(&self, b: i64) -> bool {
        self.pauses.iter().any(|&(s, e)| s <= b && b <= e)
    }
    fn fire_inside_pause(&self, b: i64) -> Option<(i64, i64)> {
        self.pauses.iter().copied().find(|&(s, e)| s < b && b <= e)
    }
}

/// Counts of what a run exercised.
#[derive(Debug, Default, Clone)]
pub struct Stats {
    /// Fires by reason: scheduled, catchup, manual, backfill, buffered.
    pub fires: [u64; 5],
    /// Skipped boundaries (any reason).
    pub skipped: u64,
    /// Inputs refused.
    pub refused: u64,
    /// Inputs handled.
    pub inputs: u64,
    /// Clamped clocks.
    pub clamped: u64,
}

/// See the module docs.
pub struct Checker {
    /// The engine's configuration.
    pub config: EngineConfig,
    /// Boundary accounting.
    pub acct: Accounting,
    /// Snapshot JSON the journal starts from.
    pub initial: String,
    /// Every input since `initial`.
    pub journal: Vec<JournalEntry>,
    /// Every command since `initial`, serialized.
    pub commands: Vec<String>,
    /// The engine clock as the harness knows it.
    pub clock: i64,
    grant: Option<(u64, i64)>,
    /// The grant the engine should still hold (not yet reported lost):
    /// `(epoch, validUntil)`.
    held: Option<(u64, i64)>,
    fire_ids: HashSet<String>,
    jobs: HashSet<u64>,
    local_queues: BTreeSet<String>,
    tracks: BTreeMap<String, Track>,
    /// What the run exercised.
    pub stats: Stats,
    /// The bug planted in the engine under test, planted again in every
    /// engine a replay restores.
    pub planted: Option<PlantedBug>,
    /// Whether [`Checker::handle`] also runs the engine's own
    /// `check_invariants` (the planted-bug tests turn it off to show that
    /// the checks from outside find the bug by themselves).
    pub self_check: bool,
    /// With `self_check`: run the engine's own check after every this
    /// many inputs (1, the default, is every input). Its full index
    /// rebuild grows with the job count, so the long simulation runs
    /// thin it out; the outside checks still run after every input, and a
    /// broken index stays broken until the next self-check finds it.
    pub self_check_every: u32,
    /// Whether [`Checker::handle`] checks the boundary accounting. The
    /// accounting enumerates boundaries one by one, so a scenario that
    /// jumps years over a per-second schedule turns it off and counts
    /// with its own arithmetic.
    pub account: bool,
    /// Policy of the schedule upserted by the current call, before it.
    call_old_policy: Option<(String, Overlap)>,
    /// Local jobs that a `cancel_previous` fire of the current call must
    /// cancel: `(job, previous fire, new fire)`.
    must_cancel: Vec<(u64, String, String)>,
}

impl Checker {
    /// A checker for a fresh `engine`.
    pub fn new(engine: &Engine) -> Checker {
        Checker {
            config: engine.config().clone(),
            acct: Accounting::default(),
            initial: engine.snapshot().to_json(),
            journal: Vec::new(),
            commands: Vec::new(),
            clock: engine.clock().as_millis(),
            grant: None,
            held: None,
            fire_ids: HashSet::new(),
            jobs: HashSet::new(),
            local_queues: BTreeSet::new(),
            tracks: BTreeMap::new(),
            stats: Stats::default(),
            planted: None,
            self_check: true,
            self_check_every: 1,
            account: true,
            call_old_policy: None,
            must_cancel: Vec::new(),
        }
    }

    /// Whether the harness considers the engine leader at its clock.
    pub fn leader(&self) -> bool {
        self.config.standalone || self.grant.is_some_and(|(_, u)| self.clock < u)
    }

    /// The highest epoch granted so far (0 if none).
    pub fn grant(&self) -> Option<(u64, i64)> {
        self.grant
    }

    /// Whether `name` exists for the harness.
    pub fn tracks(&self, name: &str) -> bool {
        self.tracks.contains_key(name)
    }

    /// The documented bound on commands per call, when the limits are small
    /// (`firesPerAdvance <= 100`): `4 × firesPerAdvance + 10 × schedules +
    /// 2 × backfillFires + 16`. Each grid fire makes at most four commands
    /// (fire, enqueue or wake, cancel + cancelled for a superseded job);
    /// each schedule at most one skip event per reason plus completion and
    /// buffering events; a backfill two per fire. Lease expiries, retries
    /// and promotions must be budgeted within it (issue 6).
    pub fn command_bound(&self, schedules: usize) -> Option<usize> {
        let l = &self.config.limits;
        (l.fires_per_advance <= 100).then(|| {
            4 * l.fires_per_advance as usize + 10 * schedules + 2 * l.backfill_fires as usize + 16
        })
    }

    /// Handles `input` at `now`, drains, records and checks everything (see
    /// the module docs). `stateless_refusal`: the caller built an input that
    /// a check needing no state must refuse.
    pub fn handle_expect(
        &mut self,
        engine: &mut Engine,
        now: i64,
        input: Input,
        stateless_refusal: bool,
    ) -> (Result<Reply, Error>, Vec<Command>) {
        self.stats.inputs += 1;
        let before = (!matches!(input, Input::Advance)).then(|| engine.snapshot().to_json());
        let schedules_before = engine.schedule_count();
        // The cursor of every active schedule before the input (for `too_old`).
        let cursors: Vec<(String, i64, i64, i64)> = self
            .tracks
            .iter()
            .filter(|(_, tr)| tr.status == ScheduleStatus::Active)
            // An upsert may change the jitter, and so the due time.
            .filter(|(name, _)| !matches!(&input, Input::UpsertSchedule(def) if def.name == **name))
            .filter_map(|(name, tr)| {
                let info = engine.schedule(name)?;
                Some((
                    name.clone(),
                    info.next_nominal?.as_millis(),
                    info.next_due_at?.as_millis(),
                    tr.def.catchup.window_ms,
                ))
            })
            .collect();
        let old_info = match &input {
            Input::UpsertSchedule(d) => engine.schedule(&d.name),
            _ => None,
        };
        let old_grant = self.grant;
        self.call_old_policy = match &input {
            Input::UpsertSchedule(d) => self
                .tracks
                .get(&d.name)
                .map(|tr| (d.name.clone(), tr.def.overlap)),
            _ => None,
        };
        self.journal.push(JournalEntry {
            now: t(now),
            input: input.clone(),
        });
        let reply = engine.handle(t(now), input.clone());
        let cmds: Vec<Command> = std::iter::from_fn(|| engine.poll_command()).collect();
        let trace = std::env::var_os("CHIME_TRACE").is_some();
        if trace {
            eprintln!(
                "@{now} {}\n  -> {reply:?}",
                serde_json::to_string(&input).unwrap()
            );
        }
        for c in &cmds {
            let json = serde_json::to_string(c).unwrap();
            if trace {
                eprintln!("     {json}");
            }
            self.commands.push(json);
        }
        let code = reply.as_ref().err().map(Error::code);
        let stateless = stateless_refusal || code.is_some_and(|c| STATELESS_CODES.contains(&c));
        if stateless_refusal {
            assert!(
                reply.is_err(),
                "E: an input no check may accept was accepted: {input:?} -> {reply:?}"
            );
        }
        if reply.is_err() {
            self.stats.refused += 1;
        }
        if stateless && reply.is_err() {
            let after = engine.snapshot().to_json();
            assert!(
                cmds.is_empty() && Some(&after) == before.as_ref(),
                "E: refused input ({}) at now {now} (clock {}) changed the state or emitted \
                 {} commands: {input:?}",
                code.unwrap_or("?"),
                self.clock,
                cmds.len()
            );
        } else if reply.is_err() && now > self.clock && engine.clock().as_millis() == self.clock {
            // Refused by a check that needs no state but has a code that
            // can also come from a stateful check: then nothing changed.
            let after = engine.snapshot().to_json();
            assert!(
                cmds.is_empty() && Some(&after) == before.as_ref(),
                "E: refused input ({}) at now {now} left the clock but changed the state",
                code.unwrap_or("?"),
            );
        } else {
            self.clock = self.clock.max(now);
        }
        assert_eq!(
            engine.clock().as_millis(),
            self.clock,
            "clock: the engine clock is the largest now given"
        );
        // A grant ends exactly when the clock reaches its validUntil or it
        // is revoked: one `leadership_lost` with its epoch, then, and never
        // otherwise.
        if !self.config.standalone {
            let lost: Vec<u64> = cmds
                .iter()
                .filter_map(|c| match c {
                    Command::Event(Event::LeadershipLost { epoch }) => Some(epoch.0),
                    _ => None,
                })
                .collect();
            let revoked = matches!(input, Input::Leadership(None)) && reply.is_ok();
            let expected: Vec<u64> = self
                .held
                .filter(|&(_, until)| self.clock >= until || revoked)
                .map(|(e, _)| e)
                .into_iter()
                .collect();
            assert!(
                lost == expected,
                "leader: at {} the grant {:?} (epoch, validUntil) called for `leadership_lost` \
                 of {expected:?} (validUntil reached or revoked) but the epochs reported lost \
                 are {lost:?}",
                self.clock,
                self.held
            );
            if !expected.is_empty() {
                self.held = None;
            }
            if let (Input::Leadership(Some(g)), Ok(_)) = (&input, &reply) {
                self.held = Some((g.epoch.0, g.valid_until.as_millis()));
            }
        }
        // Leadership as the harness knows it.
        if reply.is_ok() {
            match &input {
                Input::Leadership(Some(g)) => {
                    self.grant = Some((g.epoch.0, g.valid_until.as_millis()));
                }
                Input::Leadership(None) => self.grant = None,
                _ => {}
            }
        }
        let clock = self.clock;
        let mut epochs = Vec::new();
        if self.config.standalone {
            epochs.push(0);
        } else {
            for (e, until) in [old_grant, self.grant].into_iter().flatten() {
                if clock < until {
                    epochs.push(e);
                }
            }
        }
        let schedules = schedules_before.max(engine.schedule_count()) + 1;
        if let Some(bound) = self.command_bound(schedules) {
            assert!(
                cmds.len() <= bound,
                "bound: one call emitted {} commands (bound {bound}) for {input:?}",
                cmds.len()
            );
        }
        self.before_observe(engine, &input, &reply, old_info.as_ref());
        // A fire settled by this input ends at the input, after the
        // advance's commands: until then it may or may not count.
        if let (Input::FireSettled { fire, .. }, Ok(_)) = (&input, &reply) {
            let id = fire.to_string();
            for tr in self.tracks.values_mut() {
                for f in tr.flights.iter_mut().filter(|f| f.fire == id) {
                    f.sure = false;
                }
            }
        }
        for c in &cmds {
            self.observe(c, clock, &epochs, &cursors, &input);
            if self.account {
                self.acct.observe(c);
            }
        }
        if let (Input::FireSettled { fire, .. }, Ok(_)) = (&input, &reply) {
            let id = fire.to_string();
            for tr in self.tracks.values_mut() {
                tr.flights.retain(|f| f.fire != id);
            }
        }
        if let Some((job, prev, fire)) = self.must_cancel.first() {
            panic!(
                "O: {fire} fired under `cancel_previous` but job {job} of the previous fire \
                 {prev} was not cancelled"
            );
        }
        self.after_observe(engine, &input, &reply, old_info.as_ref());
        self.check(engine);
        (reply, cmds)
    }

    /// [`Checker::handle_expect`] for an ordinary input.
    pub fn handle(
        &mut self,
        engine: &mut Engine,
        now: i64,
        input: Input,
    ) -> (Result<Reply, Error>, Vec<Command>) {
        self.handle_expect(engine, now, input, false)
    }

    /// The policies that may have applied to `name`'s boundaries in this call.
    fn policies(&self, name: &str) -> Policies {
        let now = self
            .tracks
            .get(name)
            .map_or(Overlap::Skip, |tr| tr.def.overlap);
        match &self.call_old_policy {
            Some((n, old)) if n == name => Policies(*old, now),
            _ => Policies(now, now),
        }
    }

    /// Overlap outcome of a fire: whether the policy in force let it fire
    /// with what the harness knows in flight, `cancel_previous`'s
    /// cancellations, and the new fire's own flight.
    fn overlap_fire(&mut self, f: &chime_core::Fire, input: &Input) {
        let id = f.fire_id.to_string();
        let name = f.schedule().to_string();
        let policy = match (f.reason, input) {
            (FireReason::Manual, Input::TriggerSchedule { overlap, .. }) => {
                let p = overlap.unwrap_or(self.tracks[&name].def.overlap);
                Policies(p, p)
            }
            (FireReason::Backfill, Input::Backfill { overlap, .. }) => {
                let p = overlap.unwrap_or(Overlap::Allow);
                Policies(p, p)
            }
            _ => self.policies(&name),
        };
        let tr = self.tracks.get_mut(&name).expect("tracked schedule");
        if let Some(busy) = tr.flights.iter().find(|x| x.sure) {
            assert!(
                !policy.all(holds_back),
                "O: {id} ({:?}) fired under `{:?}` while {} was in flight",
                f.reason,
                policy.1,
                busy.fire
            );
        }
        if policy.all(|p| p == Overlap::CancelPrevious) {
            for prev in tr.flights.drain(..) {
                if let (Some(job), true) = (prev.job, prev.sure) {
                    self.must_cancel.push((job, prev.fire, id.clone()));
                }
            }
        } else if policy.any(|p| p == Overlap::CancelPrevious) {
            for prev in &mut tr.flights {
                prev.sure = false;
            }
        }
        if policy.any(|p| p != Overlap::Allow) {
            tr.flights.push(Flight {
                fire: id,
                job: f.job.map(|j| j.0),
                sure: policy.all(|p| p != Overlap::Allow),
            });
        }
    }

    /// A fire's local job ended (or its external fire stopped counting).
    fn flight_ended(&mut self, job: Option<u64>, fire: Option<&str>) {
        for tr in self.tracks.values_mut() {
            tr.flights
                .retain(|f| !(job.is_some() && f.job == job || fire == Some(f.fire.as_str())));
        }
        if let Some(job) = job {
            self.must_cancel.retain(|c| c.0 != job);
        }
    }

    fn observe(
        &mut self,
        cmd: &Command,
        clock: i64,
        epochs: &[u64],
        cursors: &[(String, i64, i64, i64)],
        input: &Input,
    ) {
        match cmd {
            Command::Fire(f) => {
                let id = f.fire_id.to_string();
                let (nominal, due, fired) = (
                    f.nominal().as_millis(),
                    f.due_at.as_millis(),
                    f.fired_at.as_millis(),
                );
                let kind = match f.reason {
                    FireReason::Scheduled => 0,
                    FireReason::Catchup => 1,
                    FireReason::Manual => 2,
                    FireReason::Backfill => 3,
                    FireReason::Buffered => 4,
                };
                self.stats.fires[kind] += 1;
                assert!(
                    self.fire_ids.insert(id.clone()),
                    "D: fire id {id} emitted twice in the life of the engine"
                );
                assert_eq!(fired, clock, "{id}: firedAt is the engine clock");
                assert!(
                    f.reason != FireReason::Backfill || nominal < clock,
                    "backfill: {id}: nominal {nominal} at or after now {clock} (a backfill is for \
                     the past)"
                );
                assert!(
                    nominal <= due && due <= fired,
                    "H: {id} ({:?}): nominal {nominal} <= dueAt {due} <= firedAt {fired}",
                    f.reason
                );
                assert!(
                    epochs.contains(&f.epoch.0),
                    "leader: {id} fired at {fired} with epoch {} while the valid epochs are \
                     {epochs:?} (grant {:?})",
                    f.epoch.0,
                    self.grant
                );
                if let Some(job) = f.job {
                    assert!(
                        self.jobs.insert(job.0),
                        "D: {id} ({:?}) points at job {} that already existed",
                        f.reason,
                        job.0
                    );
                    self.local_queues.insert(f.queue.to_string());
                }
                let tr = self
                    .tracks
                    .get_mut(f.schedule())
                    .unwrap_or_else(|| panic!("R: {id}: fire of a schedule that does not exist"));
                tr.fires += 1;
                let (v0, v1) = tr.versions;
                assert!(
                    (v0..=v1).contains(&f.version),
                    "R: {id}: version {} is not one of this schedule's ({v0}..={v1})",
                    f.version
                );
                assert!(
                    due <= nominal + tr.max_jitter,
                    "H: {id}: dueAt {due} > nominal {nominal} + jitterMs {}",
                    tr.max_jitter
                );
                let manual = matches!(f.fire_id.extra, Some((FireKind::Manual, _)));
                if tr.every_only && !manual {
                    assert!(
                        tr.grids
                            .iter()
                            .any(|&(step, off)| (nominal - off).rem_euclid(step) == 0),
                        "C: {id} ({:?}): nominal {nominal} is not a boundary of {:?}",
                        f.reason,
                        tr.grids
                    );
                }
                match f.reason {
                    FireReason::Backfill => assert!(
                        nominal < clock,
                        "backfill: {id}: nominal {nominal} at or after now {clock} (a backfill \
                         is for the past)"
                    ),
                    _ if f.fire_id.extra.is_some() => {}
                    _ => {
                        if let Some((s, e)) = tr.fire_inside_pause(nominal) {
                            panic!(
                                "B: {id} ({:?}): boundary {nominal} fell inside the pause \
                                 [{s}, {e}] but fired",
                                f.reason
                            );
                        }
                    }
                }
                self.overlap_fire(f, input);
            }
            Command::Event(Event::FireSkipped {
                schedule,
                reason,
                count,
                first,
                last,
            }) => {
                self.stats.skipped += count;
                let (first, last) = (first.as_millis(), last.as_millis());
                if *reason == SkipReason::Overlap {
                    let policy = self.policies(schedule);
                    let tr = self.tracks.get(schedule.as_str()).unwrap_or_else(|| {
                        panic!("R: {schedule}: skip of a schedule that does not exist")
                    });
                    assert!(
                        policy.any(holds_back),
                        "O: {schedule}: {count} boundaries ({first}..{last}) skipped `overlap` \
                         under `{:?}`, which never skips",
                        policy.1
                    );
                    assert!(
                        !tr.flights.is_empty(),
                        "O: {schedule}: {count} boundaries ({first}..{last}) skipped `overlap` \
                         with nothing in flight"
                    );
                }
                if *reason == SkipReason::Superseded {
                    let policy = self.policies(schedule);
                    assert!(
                        policy.any(|p| p != Overlap::Allow),
                        "O: {schedule}: {count} boundaries ({first}..{last}) skipped \
                         `superseded` under `allow`, which fires every selected boundary"
                    );
                }
                let tr = self.tracks.get_mut(schedule.as_str()).unwrap_or_else(|| {
                    panic!("R: {schedule}: skip of a schedule that does not exist")
                });
                tr.skipped += count;
                assert!(
                    last <= clock,
                    "skip: {schedule}: skipped boundary {last} ({reason:?}) is not in the past \
                     (clock {clock})"
                );
                if *reason == SkipReason::Paused {
                    for b in [first, last] {
                        assert!(
                            tr.paused_at(b),
                            "B: {schedule}: boundary {b} skipped `paused` but the schedule \
                             was not paused then (pauses {:?}, clock {clock})",
                            tr.pauses
                        );
                    }
                }
                if *reason == SkipReason::TooOld {
                    for (name, c, d, window) in cursors {
                        if name == schedule && first <= *c && *c <= last {
                            assert!(
                                clock - d > *window,
                                "F: {schedule}: boundary {c} due at {d} skipped `too_old` at \
                                 {clock}, only {} ms after its due time (windowMs {window})",
                                clock - d
                            );
                        }
                    }
                }
            }
            Command::Event(Event::FireBuffered { schedule, nominal }) => {
                let policy = self.policies(schedule);
                let tr = self.tracks.get(schedule.as_str()).unwrap_or_else(|| {
                    panic!("R: {schedule}: buffered fire of an unknown schedule")
                });
                assert!(
                    policy.any(|p| p == Overlap::BufferOne)
                        || matches!(
                            input,
                            Input::TriggerSchedule {
                                overlap: Some(Overlap::BufferOne),
                                ..
                            } | Input::Backfill {
                                overlap: Some(Overlap::BufferOne),
                                ..
                            }
                        ),
                    "O: {schedule}: boundary {nominal} buffered under `{:?}`",
                    policy.1
                );
                assert!(
                    !tr.flights.is_empty(),
                    "O: {schedule}: boundary {nominal} buffered with nothing in flight"
                );
            }
            Command::Event(
                Event::JobCompleted { job, .. }
                | Event::JobDead { job, .. }
                | Event::JobDropped { job, .. }
                | Event::JobCancelled { job, .. },
            ) => self.flight_ended(Some(job.0), None),
            Command::Event(Event::FireUnsettled { fire }) => {
                self.flight_ended(None, Some(&fire.to_string()));
            }
            _ => {}
        }
    }

    /// Definitions and pause intervals, before the call's commands are read.
    fn before_observe(
        &mut self,
        engine: &Engine,
        input: &Input,
        reply: &Result<Reply, Error>,
        old: Option<&chime_core::ScheduleInfo>,
    ) {
        if let (Input::UpsertSchedule(def), Ok(Reply::ScheduleUpserted { version, .. })) =
            (input, reply)
        {
            let every = every_grid(&def.spec);
            match (old, self.tracks.get_mut(&def.name)) {
                (Some(_), Some(tr)) => {
                    tr.max_jitter = tr.max_jitter.max(def.jitter_ms);
                    if let Some(g) = every {
                        tr.grids.push(g);
                    }
                    tr.every_only &= every.is_some();
                    tr.def = def.clone();
                    tr.versions.1 = *version;
                }
                _ => {
                    self.tracks.insert(
                        def.name.clone(),
                        Track {
                            def: def.clone(),
                            status: ScheduleStatus::Active,
                            pauses: Vec::new(),
                            max_jitter: def.jitter_ms,
                            grids: every.into_iter().collect(),
                            every_only: every.is_some(),
                            fires: 0,
                            skipped: 0,
                            flights: Vec::new(),
                            versions: (*version, *version),
                        },
                    );
                }
            }
        }
        let clock = self.clock;
        for (name, tr) in &mut self.tracks {
            let Some(info) = engine.schedule(name) else {
                continue; // removed by this call
            };
            if info.status != tr.status {
                if info.status == ScheduleStatus::Paused {
                    tr.pauses.push((clock, i64::MAX));
                } else if tr.status == ScheduleStatus::Paused
                    && let Some(p) = tr.pauses.last_mut()
                {
                    p.1 = clock;
                }
                tr.status = info.status;
            }
        }
    }

    /// Grids, removals and jobs, after the call's commands were read.
    fn after_observe(
        &mut self,
        engine: &Engine,
        input: &Input,
        reply: &Result<Reply, Error>,
        old: Option<&chime_core::ScheduleInfo>,
    ) {
        match (input, reply) {
            (Input::Enqueue(req), Ok(Reply::Enqueued { job, deduplicated })) => {
                self.local_queues.insert(req.queue.clone());
                if !deduplicated {
                    assert!(self.jobs.insert(job.0), "job id {} handed out twice", job.0);
                }
            }
            (Input::UpsertSchedule(def), Ok(Reply::ScheduleUpserted { next_fire, .. })) => {
                let name = def.name.clone();
                let every = every_grid(&def.spec);
                let grid = Grid::of(def, &self.config);
                if let (Some((step, off)), Grid::Every { period, offset }) = (every, &grid) {
                    assert_eq!(
                        (step, off),
                        (*period, *offset),
                        "{}: the engine's @every grid differs from the spec text",
                        def.spec
                    );
                }
                let same_grid = old.is_some_and(|o| {
                    o.def.spec == def.spec
                        && o.def.tz == def.tz
                        && o.def.dst == def.dst
                        && o.def.start_at == def.start_at
                        && o.status != ScheduleStatus::Completed
                });
                let changed = old.is_none_or(|o| o.def != *def);
                let start = next_fire.map(|n| n.as_millis());
                match old {
                    None => {
                        if let Some(s) = start {
                            self.acct.start_grid(&name, grid, s, None);
                        }
                    }
                    Some(o) if changed && !same_grid => {
                        let old_cursor = o.next_nominal.map(|c| c.as_millis());
                        let old_end = o.def.end_at.map(|e| e.as_millis());
                        // A completed schedule (no cursor) has nothing pending.
                        let closing = old_cursor.map_or(i64::MIN, |_| self.clock);
                        if self.acct.tracks(&name) {
                            self.acct.regrid(
                                &name,
                                start.map(|s| (grid, s)),
                                old_cursor,
                                closing,
                                old_end,
                            );
                        } else if let Some(s) = start {
                            self.acct.start_grid(&name, grid, s, None);
                        }
                    }
                    _ => {}
                }
                let _ = engine;
            }
            (
                Input::TriggerSchedule { name, overlap },
                Ok(Reply::Triggered {
                    fire: None,
                    buffered,
                }),
            ) => {
                let tr = &self.tracks[name];
                let policy = overlap.unwrap_or(tr.def.overlap);
                assert!(
                    holds_back(policy) && !tr.flights.is_empty(),
                    "O: {name}: a trigger under `{policy:?}` answered fire: null (buffered: \
                     {buffered}) with {} fires in flight",
                    tr.flights.len()
                );
            }
            (Input::Backfill { name, overlap, .. }, Ok(Reply::Backfilled { fires, skipped }))
                if *skipped > 0 =>
            {
                let policy = overlap.unwrap_or(Overlap::Allow);
                let room = engine.live_jobs() + fires.len() + (*skipped as usize)
                    < self.config.limits.live_jobs;
                assert!(
                    holds_back(policy) || !room,
                    "O: {name}: a backfill under `{policy:?}` skipped {skipped} boundaries \
                     (made {}) with room in the queues",
                    fires.len()
                );
            }
            (Input::RemoveSchedule { name, .. }, Ok(Reply::ScheduleRemoved { existed })) => {
                assert_eq!(
                    *existed,
                    self.tracks.contains_key(name),
                    "{name}: remove's `existed`"
                );
                if *existed {
                    self.acct.removed(name);
                    self.tracks.remove(name);
                }
            }
            _ => {}
        }
    }

    fn check(&mut self, engine: &Engine) {
        if self.self_check
            && self
                .stats
                .inputs
                .is_multiple_of(u64::from(self.self_check_every.max(1)))
        {
            engine.check_invariants();
        }
        if self.account {
            self.acct.check(engine);
        }
        for (name, tr) in &self.tracks {
            let info = engine.schedule(name).unwrap();
            assert!(
                info.fires == tr.fires && info.skipped == tr.skipped,
                "counters: {name}: engine says {} fires / {} skipped, commands say {} / {}",
                info.fires,
                info.skipped,
                tr.fires,
                tr.skipped
            );
        }
        let enqueued: u64 = self
            .local_queues
            .iter()
            .filter_map(|q| engine.queue_stats(q))
            .map(|s| s.totals.enqueued)
            .sum();
        assert_eq!(
            enqueued,
            self.jobs.len() as u64,
            "D: the queues' enqueued totals differ from the distinct jobs seen"
        );
    }

    /// Replays the whole journal on the initial snapshot: the command
    /// stream and the final state must be identical byte for byte.
    pub fn replay_from_start(&self, engine: &Engine) {
        let replayed = replay(&self.initial, &self.journal, self.planted);
        assert_eq!(
            replayed.commands.len(),
            self.commands.len(),
            "replay: command count from the start"
        );
        for (i, (a, b)) in replayed.commands.iter().zip(&self.commands).enumerate() {
            assert_eq!(a, b, "replay: command {i} differs");
        }
        assert_eq!(
            replayed.engine.snapshot().to_json(),
            engine.snapshot().to_json(),
            "replay: final state differs"
        );
    }
}

/// Restores the snapshot `json` and handles `entries` on it, as a host
/// does after a crash: [`journal::replay`] itself, or the same loop on an
/// engine with `planted` planted (a planted bug is not persisted).
pub fn replay(json: &str, entries: &[JournalEntry], planted: Option<PlantedBug>) -> Replayed {
    let snap = Snapshot::from_json(json).expect("snapshot parses");
    let Some(bug) = planted else {
        return journal::replay(snap, entries).expect("replay");
    };
    let mut engine = Engine::restore(snap).expect("snapshot restores");
    engine.plant(bug);
    let mut commands = Vec::new();
    let mut replies = Vec::new();
    for e in entries {
        replies.push(engine.handle(e.now, e.input.clone()));
        commands.extend(journal::drain_json(&mut engine));
    }
    Replayed {
        engine,
        commands,
        replies,
    }
}

/// The panic message of a caught panic.
pub fn panic_message(e: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = e.downcast_ref::<String>() {
        s.clone()
    } else if let Some(s) = e.downcast_ref::<&str>() {
        (*s).to_string()
    } else {
        "(non-string panic)".into()
    }
}
