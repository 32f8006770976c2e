//! Checking queues and schedules before anything is applied: each one is
//! handed to a scratch engine with the real engine's config, so the rules
//! are the core's own (names, specs, zones, ranges, limits) and nothing in
//! the host re-derives them. `chime validate`, `chime run` and reload all
//! use it, so a bad file is refused as a whole and changes nothing.

use chime_core::{Engine, EngineConfig, Error, Input, QueueConfig, ScheduleDef, Timestamp};

/// Which item of a setup an error is about (index into its list).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Subject {
    /// `queues[i]`.
    Queue(usize),
    /// `schedules[i]`.
    Schedule(usize),
}

/// An item the core refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rejection {
    /// The item.
    pub subject: Subject,
    /// Its name.
    pub name: String,
    /// The core's error (`code()` and `field()` are stable).
    pub error: Error,
}

impl std::fmt::Display for Rejection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = match self.subject {
            Subject::Queue(_) => "queue",
            Subject::Schedule(_) => "schedule",
        };
        write!(f, "{kind} {:?}: {}", self.name, self.error)
    }
}

/// Every rejection of `queues` then `schedules`, as of `now` (a spec that
/// never fires after `now` is refused). Duplicate schedule names are
/// refused too: the second would silently replace the first.
pub fn check(
    queues: &[QueueConfig],
    schedules: &[ScheduleDef],
    config: &EngineConfig,
    now: Timestamp,
) -> Vec<Rejection> {
    let mut engine = Engine::new(config.clone());
    let mut out = Vec::new();
    let mut sink = Vec::new();
    for (i, q) in queues.iter().enumerate() {
        if let Err(error) = engine.handle(now, Input::DeclareQueue(q.clone())) {
            out.push(Rejection {
                subject: Subject::Queue(i),
                name: q.name.clone(),
                error,
            });
        }
        engine.drain_commands(&mut sink);
        sink.clear();
    }
    for (i, s) in schedules.iter().enumerate() {
        let first = schedules[..i].iter().position(|o| o.name == s.name);
        let result = match first {
            Some(j) => Err(Error::InvalidInput {
                field: "name",
                message: format!("duplicate schedule name {:?} (also #{})", s.name, j + 1),
            }),
            None => engine
                .handle(now, Input::UpsertSchedule(s.clone()))
                .map(|_| ()),
        };
        if let Err(error) = result {
            out.push(Rejection {
                subject: Subject::Schedule(i),
                name: s.name.clone(),
                error,
            });
        }
        engine.drain_commands(&mut sink);
        sink.clear();
    }
    out
}
