//! Leadership: fire only under a valid grant, stamp its epoch, report the
//! loss once, keep cursors put while not leading, then catch up.

use chime_core::{
    Command, EngineConfig, Epoch, Event, Input, Overlap, QueueConfig, QueueMode, Reply,
};
use chime_tests::scenario::*;

const S: i64 = 1_000_000_000_000;

fn replica() -> Harness {
    let mut h = Harness::new(EngineConfig {
        standalone: false,
        ..EngineConfig::default()
    });
    let mut q = QueueConfig::new("out");
    q.mode = QueueMode::External;
    h.ok(S, Input::DeclareQueue(q));
    let mut d = def("tick", "@every 1s", "out");
    d.overlap = Overlap::Allow;
    h.ok(S, Input::UpsertSchedule(d));
    h
}

#[test]
fn fires_only_while_leading_and_stamps_the_epoch() {
    let mut h = replica();
    // Not leader: nothing fires, nothing is skipped, the cursor stays.
    let cmds = h.advance(S + 5000);
    assert!(cmds.is_empty());
    assert_eq!(
        h.engine.schedule("tick").unwrap().next_nominal,
        Some(t(S + 1000))
    );
    assert_eq!(
        h.engine.poll_timeout(),
        None,
        "no busy loop while not leading"
    );

    // The grant catches up at once.
    let (r, cmds) = h.ok(S + 5000, grant(7, S + 8500));
    assert_eq!(r, Reply::Leadership { leader: true });
    assert_eq!(
        nominals(&cmds),
        (1..=5).map(|k| S + k * 1000).collect::<Vec<_>>()
    );
    assert!(fires(&cmds).iter().all(|f| f.epoch == Epoch(7)));
    assert!(
        cmds.iter()
            .all(|c| !matches!(c, Command::Enqueue { epoch, .. } if *epoch != Epoch(7)))
    );

    // The grant runs out at 8.5 s; a host that wakes late at 9 s fires
    // nothing (6..=8 wait for the next leader) and sees the loss, once.
    let cmds = h.advance(S + 9000);
    assert_eq!(nominals(&cmds), Vec::<i64>::new());
    let lost: Vec<_> = events(&cmds)
        .into_iter()
        .filter(|e| matches!(e, Event::LeadershipLost { epoch } if *epoch == Epoch(7)))
        .collect();
    assert_eq!(lost.len(), 1);
    assert!(events(&h.advance(S + 12_000)).is_empty(), "reported once");
    assert_eq!(
        h.engine.schedule("tick").unwrap().next_nominal,
        Some(t(S + 6000))
    );

    // A stale epoch is refused; a newer one catches up.
    let (r, _) = h.run(S + 12_000, grant(6, S + 20_000));
    assert_eq!(r.unwrap_err().code(), "invalid_input");
    let (_, cmds) = h.ok(S + 12_000, grant(8, S + 20_000));
    assert_eq!(
        nominals(&cmds),
        (6..=12).map(|k| S + k * 1000).collect::<Vec<_>>()
    );
    assert!(fires(&cmds).iter().all(|f| f.epoch == Epoch(8)));
    let info = h.engine.schedule("tick").unwrap();
    assert_eq!(
        (info.fires, info.skipped),
        (12, 0),
        "nothing lost in the gap"
    );
}

#[test]
fn poll_timeout_wakes_at_expiry_and_revocation_reports_loss() {
    let mut h = replica();
    h.ok(S, grant(1, S + 2500));
    assert_eq!(h.engine.poll_timeout(), Some(t(S + 1000)));
    h.advance(S + 2000);
    assert_eq!(h.engine.poll_timeout(), Some(t(S + 2500)));
    let cmds = h.advance(S + 2500);
    assert!(matches!(events(&cmds)[..], [Event::LeadershipLost { .. }]));
    h.ok(S + 3000, grant(1, S + 10_000));
    let (r, cmds) = h.ok(S + 3000, Input::Leadership(None));
    assert_eq!(r, Reply::Leadership { leader: false });
    assert!(matches!(
        events(&cmds)[..],
        [Event::LeadershipLost { epoch: Epoch(1) }]
    ));
    let (r, _) = h.run(
        S + 3000,
        Input::TriggerSchedule {
            name: "tick".into(),
            overlap: None,
        },
    );
    assert_eq!(r.unwrap_err().code(), "not_leader");
}

#[test]
fn standalone_always_leads_with_epoch_zero() {
    let mut h = Harness::standalone();
    h.ok(S, Input::UpsertSchedule(def("tick", "@every 1s", "q")));
    let cmds = h.advance(S + 1000);
    assert_eq!(fires(&cmds)[0].epoch, Epoch(0));
}
