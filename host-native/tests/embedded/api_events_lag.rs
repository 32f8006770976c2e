//! The event broadcast never stalls the driver: a subscriber that reads
//! nothing while thousands of jobs complete does not slow or block a
//! single call, and when it reads it is told it lagged (what
//! `/v1/events` turns into a final `lagged` event before it ends the
//! stream).

use crate::common;

use chime_core::{EnqueueRequest, Input, Payload, QueueConfig, Reply};
use chime_native::Setup;
use chime_native::driver::EVENT_BUFFER;
use common::start_instance;
use tokio::sync::broadcast::error::RecvError;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscriber_that_never_reads_lags_and_the_driver_goes_on() {
    let inst = start_instance(Setup {
        queues: vec![QueueConfig::new("q")],
        ..Setup::default()
    })
    .await;
    let handle = inst.running.handle().clone();
    let mut slow = handle.events();
    let n = EVENT_BUFFER * 2;
    let inputs = (0..n)
        .map(|_| Input::Enqueue(EnqueueRequest::new("q", Payload::null())))
        .collect();
    handle.call_batch(inputs).await.unwrap().unwrap();
    let mut done = 0;
    while done < n {
        let claimed = match inst
            .call(Input::Claim {
                queue: "q".into(),
                worker: "w".into(),
                max: 100,
                lease_ms: None,
            })
            .await
        {
            Reply::Claimed { jobs } => jobs,
            other => panic!("{other:?}"),
        };
        let inputs = claimed
            .iter()
            .map(|c| Input::Complete {
                job: c.job,
                token: c.token,
            })
            .collect();
        handle.call_batch(inputs).await.unwrap().unwrap();
        done += claimed.len();
    }
    match slow.recv().await {
        Err(RecvError::Lagged(missed)) => assert!(missed as usize >= n - EVENT_BUFFER, "{missed}"),
        other => panic!("expected a lag, got {other:?}"),
    }
    // After the lag it reads what is left: the last completions.
    let e = slow.recv().await.unwrap();
    assert_eq!(e.kind, "completed");
    inst.stop().await;
}
