//! The leader lease on a real PostgreSQL: replicas contend and exactly one
//! holds it; expiry on the database clock lets another take over with
//! epoch + 1; the deposed holder's renew fails and its store writes are
//! fenced (they fail and write nothing); grants end before the database's
//! expiry.

use crate::pg_support;

use chime_core::{Engine, EngineConfig, Epoch, Input, JournalEntry, Timestamp};
use chime_native::driver::Clock;
use chime_native::pg::{PgError, PgStore};
use chime_native::store::{Store, StoreError};
use std::time::Duration;

fn advance_at(ms: i64) -> JournalEntry {
    JournalEntry {
        now: Timestamp::from_millis(ms).unwrap(),
        input: Input::Advance,
    }
}

#[tokio::test]
async fn concurrent_acquires_elect_exactly_one() {
    let Some(cfg) = pg_support::config("lease_one") else {
        return;
    };
    // Create the schema once so the contenders race on the row, not on
    // the migration (that has its own test).
    drop(pg_support::lease(&cfg, "setup", 30_000, 1_000).await);
    let mut tasks = Vec::new();
    for i in 0..8 {
        let cfg = cfg.clone();
        tasks.push(tokio::spawn(async move {
            let mut lease = pg_support::lease(&cfg, &format!("r{i}"), 30_000, 1_000).await;
            let got = lease.acquire().await.unwrap();
            (lease, got)
        }));
    }
    let mut winners = Vec::new();
    let mut leases = Vec::new();
    for t in tasks {
        let (lease, got) = t.await.unwrap();
        if let Some(g) = got {
            winners.push((lease.holder().to_owned(), g.epoch));
        }
        leases.push(lease);
    }
    assert_eq!(winners.len(), 1, "{winners:?}");
    assert_eq!(winners[0].1, Epoch(1));
    let row = leases[0].current().await.unwrap().unwrap();
    assert_eq!(row.holder.as_deref(), Some(winners[0].0.as_str()));
    assert!(!row.expired);
    // The losers still cannot take it, and cannot renew what they never held.
    for l in leases.iter_mut().filter(|l| l.holder() != winners[0].0) {
        assert!(l.acquire().await.unwrap().is_none());
        assert!(matches!(l.renew().await, Err(PgError::LeaseLost { .. })));
    }
    pg_support::drop_schema(&cfg).await;
}

#[tokio::test]
async fn expiry_hands_over_and_fences_the_deposed_leader() {
    let Some(cfg) = pg_support::config("lease_expiry") else {
        return;
    };
    let mut a = pg_support::lease(&cfg, "a", 1_000, 200).await;
    let mut b = pg_support::lease(&cfg, "b", 1_000, 200).await;
    let ga = a.acquire().await.unwrap().expect("free");
    assert!(b.acquire().await.unwrap().is_none(), "a holds it");
    let mut store_a = PgStore::open(&cfg, "engine", ga.epoch, &EngineConfig::default()).unwrap();
    store_a.append(&[advance_at(1_000)]).unwrap();
    let renewed = a.renew().await.unwrap();
    assert_eq!(renewed.epoch, ga.epoch);

    // `a` stalls past its TTL (database clock); `b` takes over.
    tokio::time::sleep(Duration::from_millis(1_300)).await;
    assert!(a.current().await.unwrap().unwrap().expired);
    let gb = b.acquire().await.unwrap().expect("expired lease is free");
    assert_eq!(gb.epoch, Epoch(ga.epoch.0 + 1));

    // The deposed leader learns it on renew...
    match a.renew().await {
        Err(PgError::LeaseLost {
            epoch,
            current_epoch,
            holder,
            ..
        }) => {
            assert_eq!(epoch, ga.epoch.0);
            assert_eq!(current_epoch, Some(gb.epoch.0));
            assert_eq!(holder.as_deref(), Some("b"));
        }
        other => panic!("{other:?}"),
    }
    // ...and its writes, whenever they come, fail and leave nothing.
    let err = store_a.append(&[advance_at(2_000)]).unwrap_err();
    match &err {
        StoreError::Fenced {
            epoch,
            current_epoch,
            ..
        } => {
            assert_eq!(*epoch, ga.epoch.0);
            assert_eq!(*current_epoch, Some(gb.epoch.0));
        }
        other => panic!("{other:?}"),
    }
    assert!(err.to_string().contains("deposed"), "{err}");
    let snap = Engine::new(EngineConfig::default()).snapshot();
    assert!(matches!(
        store_a.write_snapshot(&snap),
        Err(StoreError::Fenced { .. })
    ));
    assert_eq!(
        pg_support::rows(&cfg).await,
        (1, 0),
        "only a's fenced-in write"
    );

    // The new leader sees a's committed turn and writes under its epoch.
    let mut store_b = PgStore::open(&cfg, "engine", gb.epoch, &EngineConfig::default()).unwrap();
    assert_eq!(store_b.load().unwrap().entries, vec![advance_at(1_000)]);
    store_b.append(&[advance_at(3_000)]).unwrap();
    store_b.write_snapshot(&snap).unwrap();
    assert_eq!(pg_support::rows(&cfg).await, (0, 1));
    // Re-acquiring is a new term for a too: b's store is fenced in turn
    // once a takes the (released) lease.
    assert!(b.release().await.unwrap());
    let ga2 = a.acquire().await.unwrap().expect("released lease is free");
    assert_eq!(ga2.epoch, Epoch(gb.epoch.0 + 1));
    assert!(matches!(
        store_b.append(&[advance_at(4_000)]),
        Err(StoreError::Fenced { .. })
    ));
    pg_support::drop_schema(&cfg).await;
}

#[tokio::test]
async fn grants_end_before_the_database_expiry() {
    let Some(cfg) = pg_support::config("lease_valid") else {
        return;
    };
    let (ttl, skew) = (2_000, 300);
    let mut a = pg_support::lease(&cfg, "a", ttl, skew).await;
    assert_eq!(a.options().renew_every(), Duration::from_millis(ttl) / 3);
    let before = pg_support::Wall.now().as_millis();
    let g = a.acquire().await.unwrap().unwrap();
    let after = pg_support::Wall.now().as_millis();
    let until = g.valid_until.as_millis();
    // Counted from before the request: never later than send + ttl - skew.
    assert!(until <= after + ttl as i64 - skew as i64, "{g:?}");
    assert!(until >= before + ttl as i64 - skew as i64, "{g:?}");
    // The database (same machine, same clock here) expires it later.
    assert!(until < g.db_expires_at_ms, "{g:?}");
    assert!(g.db_expires_at_ms - until >= skew as i64, "{g:?}");
    assert!(g.round_trip < Duration::from_millis(ttl), "{g:?}");
    let r = a.renew().await.unwrap();
    assert!(r.valid_until >= g.valid_until);
    assert!(r.valid_until.as_millis() < r.db_expires_at_ms, "{r:?}");

    // The engine takes the grant and leads until valid_until, not after.
    let mut engine = Engine::new(EngineConfig {
        standalone: false,
        ..EngineConfig::default()
    });
    let now = pg_support::Wall.now();
    engine
        .handle(now, Input::Leadership(Some(r.leadership())))
        .unwrap();
    assert!(engine.is_leader());
    engine.handle(r.valid_until, Input::Advance).unwrap();
    assert!(!engine.is_leader(), "no firing from valid_until on");
    pg_support::drop_schema(&cfg).await;
}

#[tokio::test]
async fn release_hands_over_at_once() {
    let Some(cfg) = pg_support::config("lease_release") else {
        return;
    };
    let mut a = pg_support::lease(&cfg, "a", 60_000, 1_000).await;
    let mut b = pg_support::lease(&cfg, "b", 60_000, 1_000).await;
    let ga = a.acquire().await.unwrap().unwrap();
    assert!(b.acquire().await.unwrap().is_none());
    assert!(a.release().await.unwrap());
    assert!(!a.release().await.unwrap(), "released once");
    let row = b.current().await.unwrap().unwrap();
    assert_eq!(row.holder, None);
    // A released lease fences its old term's writes too.
    let mut store_a = PgStore::open(&cfg, "engine", ga.epoch, &EngineConfig::default()).unwrap();
    assert!(matches!(
        store_a.append(&[advance_at(1_000)]),
        Err(StoreError::Fenced { holder: None, .. })
    ));
    let gb = b
        .acquire()
        .await
        .unwrap()
        .expect("no TTL wait after a release");
    assert_eq!(gb.epoch, Epoch(ga.epoch.0 + 1));
    pg_support::drop_schema(&cfg).await;
}
