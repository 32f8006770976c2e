//! Fuzz-style robustness of `Engine::handle`: random sequences of inputs
//! whose numbers are drawn from the edges (0, negative, `i64::MAX`, the
//! last instant of year 9999 …) never panic. Every input either succeeds or
//! is refused with a typed error whose message starts with its stable code;
//! an input refused by a check that needs no state leaves the snapshot
//! byte-identical (not even the clock moves), any other refused input
//! leaves it exactly as the advance to `now` left it; every check of the
//! shared [`Checker`](chime_tests::checker::Checker) holds after every
//! step; and at the end the journal replays from the start to the same
//! commands and the snapshot round-trips byte for byte.

use chime_core::{Engine, EngineConfig, Error, Input, JournalEntry, Snapshot, Timestamp};
use chime_tests::checker::Checker;
use proptest::prelude::*;
use serde_json::{Value, json};

const T0: i64 = 1_767_225_600_000; // 2026-01-01T00:00Z

/// Whether `err` comes from a check that needs no engine state (names,
/// ranges, sizes, exclusive fields, times relative to `now`): such a
/// refusal must change nothing at all. The others (unknown names and jobs,
/// stale tokens and epochs, limits on what is held, a queue's mode, a spec
/// with no boundary left after `now`) are judged after the advance.
fn stateless(err: &Error) -> bool {
    match err {
        Error::InvalidName { .. } | Error::ReservedName { .. } | Error::PayloadTooLarge { .. } => {
            true
        }
        Error::Spec(e) => e.code() != "spec_never_fires",
        Error::InvalidInput { field, .. } => !matches!(*field, "mode" | "queue" | "epoch"),
        Error::LimitExceeded { what, .. } => matches!(
            *what,
            "claim_batch" | "headers" | "catchup_fires" | "completed_per_queue"
        ),
        _ => false,
    }
}

/// Numbers where arithmetic goes wrong if anything does.
fn edge_i64() -> impl Strategy<Value = i64> {
    prop::sample::select(vec![
        0,
        1,
        -1,
        999,
        1_000,
        60_000,
        86_400_000,
        i64::MAX,
        i64::MIN,
        i64::MAX / 2,
        253_402_300_799_999,
        253_402_300_800_000,
        T0,
        T0 + 1,
        u32::MAX as i64,
        1 << 53,
    ])
}

/// Mostly names that exist or will, sometimes ones the rule rejects.
fn name() -> impl Strategy<Value = String> {
    prop_oneof![
        8 => prop::sample::select(vec!["a", "b", "q"]),
        1 => prop::sample::select(vec!["__chime_x", "bad name", ""]),
    ]
    .prop_map(str::to_owned)
}

fn spec() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "@every 1s",
        "@every 1s +999ms",
        "@every 1d",
        "*/5 * * * * *",
        "0 0 29 2 *",
        "30 2 * * *",
        "@at 2026-01-01T00:00:05Z",
        "@at 9999-12-31T23:59:59Z",
        "0 0 1 1 * 9999",
        "nonsense",
    ])
    .prop_map(str::to_owned)
}

/// One input as JSON, built from edge values; some fail to deserialize,
/// which is fine (the host would reject them before the engine).
fn input() -> impl Strategy<Value = Value> {
    let n = edge_i64;
    prop_oneof![
        Just(json!("advance")),
        (
            name(),
            spec(),
            n(),
            prop::option::of(n()),
            prop::option::of(n()),
            any::<bool>(),
            prop::sample::select(vec!["skip", "allow", "buffer_one", "cancel_previous"])
        )
            .prop_map(
                |(nm, sp, jitter, start, end, paused, overlap)| json!({"upsertSchedule": {
                "name": nm, "spec": sp, "tz": "America/New_York", "jitterMs": jitter,
                "startAt": start, "endAt": end, "paused": paused, "overlap": overlap,
                "maxFires": 3, "catchup": {"windowMs": jitter, "max": 64},
                "target": {"queue": "q", "payload": {"x": 1}}}})
            ),
        (name(), n(), n(), n(), n()).prop_map(
            |(nm, lease, base, cap, window)| json!({"declareQueue": {
                "name": nm, "leaseMs": lease, "maxAttempts": 2,
                "backoff": {"baseMs": base, "capMs": cap},
                "retention": {"completedMax": 2, "completedMs": window},
                "dedupWindowMs": window}})
        ),
        (
            name(),
            prop::option::of(n()),
            prop::option::of(n()),
            any::<i32>(),
            prop::option::of("[a-c]")
        )
            .prop_map(|(q, run_at, delay, prio, key)| json!({"enqueue": {
                "queue": q, "payload": [1], "runAt": run_at, "delayMs": delay,
                "priority": prio, "key": key}})),
        (name(), 0u32..3, prop::option::of(n())).prop_map(|(q, max, lease)| json!({"claim": {
                "queue": q, "worker": "w", "max": max, "leaseMs": lease}})),
        (1u64..6, 0u64..12, prop::option::of(n()))
            .prop_map(|(job, token, lease)| json!({"heartbeat": {
                "job": job, "token": token, "leaseMs": lease}})),
        (1u64..6, 0u64..12)
            .prop_map(|(job, token)| json!({"complete": {"job": job, "token": token}})),
        (1u64..6, 0u64..12, prop::option::of(n())).prop_map(|(job, token, at)| json!({"fail": {
                "job": job, "token": token, "error": "e", "retryAt": at}})),
        (1u64..6).prop_map(|job| json!({"cancelJob": {"job": job}})),
        name().prop_map(|q| json!({"redrive": {"queue": q}})),
        (name(), prop::option::of(n()))
            .prop_map(|(q, b)| json!({"purgeDead": {"queue": q, "before": b}})),
        name().prop_map(|nm| json!({"triggerSchedule": {"name": nm}})),
        (name(), n(), n())
            .prop_map(|(nm, from, to)| json!({"backfill": {"name": nm, "from": from, "to": to}})),
        name().prop_map(|nm| json!({"pauseSchedule": {"name": nm, "note": "x"}})),
        name().prop_map(|nm| json!({"resumeSchedule": {"name": nm}})),
        name().prop_map(|nm| json!({"removeSchedule": {"name": nm}})),
        (0u64..4, n()).prop_map(
            |(epoch, until)| json!({"leadership": {"epoch": epoch, "validUntil": until}})
        ),
        Just(json!({"leadership": null})),
        (name(), n()).prop_map(
            |(nm, ttl)| json!({"acquireLease": {"name": nm, "owner": "o", "ttlMs": ttl}})
        ),
        (name(), 0u64..12, n()).prop_map(
            |(nm, token, ttl)| json!({"renewLease": {"name": nm, "token": token, "ttlMs": ttl}})
        ),
        (name(), 0u64..12)
            .prop_map(|(nm, token)| json!({"releaseLease": {"name": nm, "token": token}})),
    ]
}

/// A clock step: mostly small, sometimes huge (clamped to year 9999), sometimes back.
fn step() -> impl Strategy<Value = i64> {
    prop_oneof![
        4 => 0i64..5_000,
        1 => Just(86_400_000i64 * 400),
        1 => Just(i64::MAX),
        1 => Just(-10_000i64),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn handle_never_panics(standalone in any::<bool>(), ops in prop::collection::vec((step(), input()), 1..40)) {
        let config = EngineConfig { standalone, ..EngineConfig::default() };
        let mut e = Engine::new(config);
        // The shared checker (records, replays, checks every invariant it
        // can); its boundary accounting enumerates boundaries one by one,
        // which inputs at the edges of time (year 9999) make unbounded.
        let mut chk = Checker::new(&e);
        chk.account = false;
        let mut now = T0;
        for (dt, json) in ops {
            now = now.saturating_add(dt).clamp(0, Timestamp::MAX.as_millis());
            let at = Timestamp::from_millis(now).unwrap();
            let Ok(input) = serde_json::from_value::<Input>(json) else { continue };
            // The journal form round-trips too.
            let line = serde_json::to_string(&JournalEntry { now: at, input: input.clone() }).unwrap();
            prop_assert_eq!(serde_json::from_str::<JournalEntry>(&line).unwrap().input, input.clone());
            // A refused input leaves the state as it was before the call
            // (stateless checks run first, so for those it must) or as the
            // advance to `now` left it.
            let before = e.snapshot().to_json();
            let mut probe = Engine::restore(Snapshot::from_json(&e.snapshot().to_json()).unwrap()).unwrap();
            let _ = probe.handle(at, Input::Advance);
            while probe.poll_command().is_some() {}
            let advanced = probe.snapshot().to_json();
            let (reply, emitted) = chk.handle(&mut e, now, input);
            if let Err(err) = reply {
                prop_assert!(err.to_string().starts_with(err.code()), "{}", err);
                let refused = e.snapshot().to_json();
                if stateless(&err) {
                    prop_assert_eq!(&refused, &before, "a stateless refusal changed state: {}", err);
                    prop_assert!(emitted.is_empty(), "a stateless refusal emitted commands: {}", err);
                } else {
                    prop_assert!(refused == advanced || refused == before, "a refused input changed state: {}", err);
                }
            }
            if let Some(wake) = e.poll_timeout() {
                prop_assert!(wake >= e.clock());
            }
        }
        chk.replay_from_start(&e);
        let json = e.snapshot().to_json();
        let back = Engine::restore(Snapshot::from_json(&json).unwrap()).unwrap();
        prop_assert_eq!(back.snapshot().to_json(), json);
    }
}
