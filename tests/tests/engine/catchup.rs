//! Catch-up after downtime: the cap, the single aggregated skip event, the
//! cursor back on the grid, and the default `skip` overlap collapsing a
//! backlog into its most recent boundary while its job runs.

use chime_core::{FireReason, Input, Overlap, QueueConfig, QueueMode, SkipReason};
use chime_tests::scenario::*;

const START: i64 = 1_000_000_000_000; // 2001-09-09, on a 2 s grid

fn external_queue(h: &mut Harness) {
    let mut q = QueueConfig::new("out");
    q.mode = QueueMode::External;
    h.ok(START, Input::DeclareQueue(q));
}

#[test]
fn six_hundred_seconds_behind_allow_fires_the_last_64() {
    let mut h = Harness::standalone();
    external_queue(&mut h);
    let mut d = def("tick", "@every 2s", "out");
    d.overlap = Overlap::Allow;
    h.ok(START, Input::UpsertSchedule(d));
    let now = START + 600_000 + 500;
    let cmds = h.advance(now);

    let fired = fires(&cmds);
    assert_eq!(fired.len(), 64, "exactly catchup.max fires");
    // Boundaries START+2s ..= START+600s: 300 due; the 64 most recent fire, in order.
    let expect: Vec<i64> = (237..=300).map(|k| START + k * 2000).collect();
    assert_eq!(nominals(&cmds), expect);
    assert!(fired[..63].iter().all(|f| f.reason == FireReason::Catchup));
    assert_eq!(
        fired[63].reason,
        FireReason::Scheduled,
        "the latest boundary is on time"
    );

    let sk = skips(&cmds);
    assert_eq!(
        sk,
        vec![(
            SkipReason::CatchupCap,
            236,
            START + 2000,
            START + 236 * 2000
        )],
        "one aggregated event"
    );

    let info = h.engine.schedule("tick").unwrap();
    let next = info.next_nominal.unwrap().as_millis();
    assert!(
        next > now && next % 2000 == 0,
        "strictly in the future, on the grid"
    );
    assert_eq!(next, START + 301 * 2000);
    assert_eq!((info.fires, info.skipped), (64, 236));
    assert_eq!(h.engine.poll_timeout(), Some(t(next)));

    // Nothing more until the next boundary.
    assert!(h.advance(now + 1).is_empty());
}

#[test]
fn default_skip_collapses_a_backlog_into_its_most_recent_boundary() {
    let mut h = Harness::standalone();
    h.ok(
        START,
        Input::UpsertSchedule(def("tick", "@every 2s", "jobs")),
    );
    let cmds = h.advance(START + 600_000);
    let fired = fires(&cmds);
    assert_eq!(fired.len(), 1, "one boundary of the backlog fires");
    assert_eq!(
        fired[0].nominal().as_millis(),
        START + 600_000,
        "the most recent one, as Kubernetes CronJob and anacron do"
    );
    assert!(fired[0].job.is_some());
    let mut sk = skips(&cmds);
    sk.sort();
    assert_eq!(
        sk,
        vec![
            (
                SkipReason::CatchupCap,
                236,
                START + 2000,
                START + 236 * 2000
            ),
            (
                SkipReason::Superseded,
                63,
                START + 237 * 2000,
                START + 299 * 2000
            ),
        ]
    );
    // While the job waits, on-time boundaries are skipped too.
    let cmds = h.advance(START + 602_000);
    assert!(fires(&cmds).is_empty());
    assert_eq!(
        skips(&cmds),
        vec![(SkipReason::Overlap, 1, START + 602_000, START + 602_000)]
    );
    // Once the job completes, the next boundary fires again.
    let (reply, _) = h.ok(
        START + 602_500,
        Input::Claim {
            queue: "jobs".into(),
            worker: "w".into(),
            max: 10,
            lease_ms: None,
        },
    );
    let chime_core::Reply::Claimed { jobs } = reply else {
        panic!()
    };
    assert_eq!(jobs.len(), 1);
    h.ok(
        START + 602_600,
        Input::Complete {
            job: jobs[0].job,
            token: jobs[0].token,
        },
    );
    assert_eq!(nominals(&h.advance(START + 604_000)), vec![START + 604_000]);
    let info = h.engine.schedule("tick").unwrap();
    assert_eq!((info.fires, info.skipped), (2, 236 + 63 + 1));
}

#[test]
fn too_old_boundaries_are_skipped_first() {
    let mut h = Harness::standalone();
    external_queue(&mut h);
    let mut d = def("tick", "@every 1s", "out");
    d.overlap = Overlap::Allow;
    d.catchup.window_ms = 10_000;
    d.catchup.max = 3;
    h.ok(START, Input::UpsertSchedule(d));
    let now = START + 100_000;
    let cmds = h.advance(now);
    assert_eq!(nominals(&cmds), vec![now - 2000, now - 1000, now]);
    assert_eq!(
        skips(&cmds),
        vec![
            (SkipReason::TooOld, 89, START + 1000, START + 89_000),
            (SkipReason::CatchupCap, 8, START + 90_000, START + 97_000),
        ]
    );
}

#[test]
fn a_huge_backlog_is_counted_not_walked() {
    let mut h = Harness::standalone();
    external_queue(&mut h);
    let mut d = def("tick", "@every 1s", "out");
    d.overlap = Overlap::Allow;
    h.ok(START, Input::UpsertSchedule(d));
    // Ten years later: ~3e8 boundaries, most of them older than the window.
    let now = START + 10 * 365 * 86_400_000;
    let cmds = h.advance(now);
    assert_eq!(fires(&cmds).len(), 64);
    let sk = skips(&cmds);
    assert_eq!(sk.len(), 2);
    let total: u64 = sk.iter().map(|s| s.1).sum();
    assert_eq!(total + 64, ((now - START) / 1000) as u64);
}

/// `buffer_one` with its previous job still waiting: after downtime the
/// backlog's most recent boundary is the one buffered (it runs once the job
/// ends), the older ones are `superseded`.
#[test]
fn buffer_one_buffers_the_most_recent_boundary_of_a_backlog() {
    let mut h = Harness::standalone();
    let mut d = def("tick", "@every 2s", "jobs");
    d.overlap = Overlap::BufferOne;
    h.ok(START, Input::UpsertSchedule(d));
    assert_eq!(nominals(&h.advance(START + 2000)), vec![START + 2000]);
    let cmds = h.advance(START + 20_000);
    assert!(fires(&cmds).is_empty(), "the first job is still waiting");
    assert_eq!(
        skips(&cmds),
        vec![(SkipReason::Superseded, 8, START + 4000, START + 18_000)]
    );
    assert!(events(&cmds).contains(&&chime_core::Event::FireBuffered {
        schedule: "tick".into(),
        nominal: t(START + 20_000),
    }));
    let c = h.claim_one(START + 20_500, "jobs");
    let (_, cmds) = h.ok(
        START + 20_600,
        Input::Complete {
            job: c.job,
            token: c.token,
        },
    );
    assert_eq!(
        nominals(&cmds),
        vec![START + 20_000],
        "the buffered boundary runs"
    );
    h.check_replay();
}
