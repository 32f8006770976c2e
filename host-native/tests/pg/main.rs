//! The PostgreSQL backend on a real server: migrations, the leader lease,
//! the store, queues, transactional enqueue, fire delivery, the driver on it,
//! failover and lost connections of real `chime run --database` processes,
//! and the conformance suites that run each queue and schedule scenario on
//! both backends.
//!
//! `pg_support`: the server's URL and a schema per test. Without
//! `CHIME_TEST_DATABASE_URL` the tests skip (or fail under
//! `CHIME_REQUIRE_POSTGRES=1`): run them with
//! `scripts/pg-test-server.sh cargo test -p chime-native --test pg [<module>::]`.

mod api_schedule_kept;
mod backends;
mod nats_support;
mod pg_support;
mod redis_support;

mod api_complete_batch;
mod api_enqueue_batch;
mod api_suite;
mod connection_lost;
mod db_restart;
mod driver;
mod failover;
mod fire_delivery;
mod inbox_declare;
mod inbox_follower;
mod inbox_no_leader;
mod inbox_order;
mod inbox_refused;
mod inbox_reply_lost;
mod lease;
mod migrate;
mod nats_always_fails;
mod nats_broker_restart;
mod nats_never_acks;
mod notify_events;
mod notify_wake;
mod paused_leader_lock;
mod pool_cycle;
mod queue;
mod queue_batch;
mod queue_conformance;
mod queue_search;
mod redis_broker_restart;
mod redis_foreign_complete;
mod redis_foreign_consumer;
mod redis_never_acks;
mod replica_http;
mod replica_reload;
mod run_history;
mod schedule_conformance;
mod store;
mod txn_enqueue;
mod tzdb_recorded;
mod wrong_password;
