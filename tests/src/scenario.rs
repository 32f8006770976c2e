//! Helpers shared by the scenario tests (`engine_*`, `queue_*`): a harness
//! that records the journal and every command and checks the engine's
//! invariants after every input, and small builders and filters.

use crate::checker::Checker;
use chime_core::journal;
use chime_core::{
    Claimed, Command, Engine, EngineConfig, EnqueueRequest, Epoch, Error, Event, Fire, Input,
    JobId, JournalEntry, LeadershipGrant, Payload, Reply, ScheduleDef, SkipReason, Snapshot,
    Target, Timestamp,
};

/// Milliseconds to a timestamp.
pub fn t(ms: i64) -> Timestamp {
    Timestamp::from_millis(ms).unwrap()
}

/// A schedule definition with defaults.
pub fn def(name: &str, spec: &str, queue: &str) -> ScheduleDef {
    serde_json::from_value(serde_json::json!({
        "name": name,
        "spec": spec,
        "target": { "queue": queue },
    }))
    .unwrap()
}

/// A leadership grant: term `epoch`, valid until `until` (ms).
pub fn grant(epoch: u64, until: i64) -> Input {
    Input::Leadership(Some(LeadershipGrant {
        epoch: Epoch(epoch),
        valid_until: t(until),
    }))
}

/// A target with a payload.
pub fn target(queue: &str, payload: &str) -> Target {
    Target {
        queue: queue.into(),
        payload: Payload::from_json(payload).unwrap(),
        priority: 0,
        max_attempts: None,
        headers: Default::default(),
    }
}

/// An engine driven through the shared [`Checker`]: every call is
/// recorded (journal and commands) and checked against every invariant the
/// model test and the simulation check, so a scenario test cannot pass on a
/// run that breaks one of them.
pub struct Harness {
    /// The engine under test.
    pub engine: Engine,
    /// Records and checks every call.
    pub checker: Checker,
    /// Every command since the start, typed.
    pub commands: Vec<Command>,
}

impl Harness {
    /// A harness on a new engine with `config`.
    pub fn new(config: EngineConfig) -> Harness {
        let engine = Engine::new(config);
        let checker = Checker::new(&engine);
        Harness {
            engine,
            checker,
            commands: Vec::new(),
        }
    }

    /// Every input since the start.
    pub fn journal(&self) -> &[JournalEntry] {
        &self.checker.journal
    }

    /// Replays the whole journal (through its JSON Lines text) on the
    /// initial snapshot: the same commands, byte for byte, and the same
    /// final state.
    pub fn check_replay(&self) {
        let entries = journal::read(&journal::write(self.journal())).expect("journal reads back");
        assert_eq!(entries, self.journal(), "journal text round-trips");
        self.checker.replay_from_start(&self.engine);
    }

    /// A restart, as a host does it: the engine is replaced by one restored
    /// from its snapshot, which must round-trip byte for byte. The journal
    /// and the checks go on, so `check_replay` still starts from the
    /// beginning.
    pub fn restart(&mut self) {
        let json = self.engine.snapshot().to_json();
        let engine = Engine::restore(Snapshot::from_json(&json).unwrap()).unwrap();
        engine.check_invariants();
        assert_eq!(engine.snapshot().to_json(), json, "restore round-trips");
        self.engine = engine;
    }

    /// A harness on a standalone engine with the default configuration.
    pub fn standalone() -> Harness {
        Harness::new(EngineConfig::default())
    }

    /// Handles, drains (returning the new commands) and checks.
    pub fn run(&mut self, now: i64, input: Input) -> (Result<Reply, Error>, Vec<Command>) {
        let (reply, new) = self.checker.handle(&mut self.engine, now, input);
        self.commands.extend(new.iter().cloned());
        (reply, new)
    }

    /// Like `run` but expects success.
    pub fn ok(&mut self, now: i64, input: Input) -> (Reply, Vec<Command>) {
        let (reply, cmds) = self.run(now, input);
        (reply.unwrap(), cmds)
    }

    /// An `Advance` at `now`; returns the new commands.
    pub fn advance(&mut self, now: i64) -> Vec<Command> {
        self.ok(now, Input::Advance).1
    }

    /// Claims up to `max` jobs of `queue` for worker `w` (queue's lease
    /// unless `lease_ms` is given).
    pub fn claim(
        &mut self,
        now: i64,
        queue: &str,
        max: u32,
        lease_ms: Option<i64>,
    ) -> Vec<Claimed> {
        let input = Input::Claim {
            queue: queue.into(),
            worker: "w".into(),
            max,
            lease_ms,
        };
        match self.ok(now, input).0 {
            Reply::Claimed { jobs } => jobs,
            other => panic!("{other:?}"),
        }
    }

    /// Enqueues a null-payload job into `queue`, claims and completes it;
    /// returns the job.
    pub fn complete_one(&mut self, now: i64, queue: &str) -> JobId {
        let req = EnqueueRequest::new(queue, Payload::null());
        self.ok(now, Input::Enqueue(req));
        let c = self.claim_one(now, queue);
        let done = Input::Complete {
            job: c.job,
            token: c.token,
        };
        self.ok(now, done);
        c.job
    }

    /// Fails claimed job `c` (error `x`, no `retryAt`), which must succeed.
    pub fn fail(&mut self, now: i64, c: &Claimed) -> (Reply, Vec<Command>) {
        let fail = Input::Fail {
            job: c.job,
            token: c.token,
            error: "x".into(),
            retry_at: None,
        };
        self.ok(now, fail)
    }

    /// Claims the next job of `queue`, which must exist.
    pub fn claim_one(&mut self, now: i64, queue: &str) -> Claimed {
        let mut jobs = self.claim(now, queue, 1, None);
        jobs.pop().expect("a job to claim")
    }
}

/// The fires among commands.
pub fn fires(cmds: &[Command]) -> Vec<&Fire> {
    cmds.iter()
        .filter_map(|c| match c {
            Command::Fire(f) => Some(f),
            _ => None,
        })
        .collect()
}

/// `(reason, count, first, last)` of every skip event among commands.
pub fn skips(cmds: &[Command]) -> Vec<(SkipReason, u64, i64, i64)> {
    cmds.iter()
        .filter_map(|c| match c {
            Command::Event(Event::FireSkipped {
                reason,
                count,
                first,
                last,
                ..
            }) => Some((*reason, *count, first.as_millis(), last.as_millis())),
            _ => None,
        })
        .collect()
}

/// Events among commands.
pub fn events(cmds: &[Command]) -> Vec<&Event> {
    cmds.iter()
        .filter_map(|c| match c {
            Command::Event(e) => Some(e),
            _ => None,
        })
        .collect()
}

/// Nominal times (ms) of fires.
pub fn nominals(cmds: &[Command]) -> Vec<i64> {
    fires(cmds)
        .iter()
        .map(|f| f.nominal().as_millis())
        .collect()
}
