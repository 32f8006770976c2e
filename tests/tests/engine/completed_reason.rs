//! Why a schedule completed, as `schedule_completed` reports it: `exhausted`
//! when its spec has no boundary left — also when an `endAt` lies beyond
//! the last one — `end_at` when the next boundary would be at or after
//! `endAt`, `max_fires` when the count is reached.

use chime_core::{Command, Event, Input, QueueConfig, QueueMode, ScheduleDef};
use chime_tests::scenario::*;

const MIN: i64 = 60_000;
const S: i64 = 1_000_000_020_000; // a multiple of a minute

/// The reasons of the `schedule_completed` events while `d` runs from `S`
/// for an hour, one advance per minute.
fn completions(d: ScheduleDef) -> Vec<String> {
    let mut h = Harness::standalone();
    let mut q = QueueConfig::new("out");
    q.mode = QueueMode::External;
    h.ok(S, Input::DeclareQueue(q));
    let mut cmds = h.ok(S, Input::UpsertSchedule(d)).1;
    for k in 1..=60 {
        cmds.extend(h.advance(S + k * MIN));
    }
    cmds.iter()
        .filter_map(|c| match c {
            Command::Event(Event::ScheduleCompleted { reason, .. }) => Some(reason.clone()),
            _ => None,
        })
        .collect()
}

/// `@at` the instant `minutes` after `S`.
fn at(minutes: i64) -> String {
    let ms = S + minutes * MIN;
    format!("@at {}", jiff::Timestamp::from_millisecond(ms).unwrap())
}

#[test]
fn a_one_shot_is_exhausted() {
    assert_eq!(completions(def("s", &at(5), "out")), ["exhausted"]);
}

#[test]
fn a_one_shot_before_its_end_at_is_exhausted_not_ended() {
    let mut d = def("s", &at(5), "out");
    d.end_at = Some(t(S + 30 * MIN));
    assert_eq!(completions(d), ["exhausted"]);
}

#[test]
fn a_grid_cut_by_end_at_is_ended() {
    let mut d = def("s", "@every 1m", "out");
    d.end_at = Some(t(S + 10 * MIN));
    assert_eq!(completions(d), ["end_at"]);
}

#[test]
fn a_grid_cut_by_max_fires_is_max_fires() {
    let mut d = def("s", "@every 1m", "out");
    d.end_at = Some(t(S + 10 * MIN));
    d.max_fires = Some(3);
    assert_eq!(completions(d), ["max_fires"]);
}
