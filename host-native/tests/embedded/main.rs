//! The host as a library, in this process: the driver and worker pools under
//! tokio's paused clock (also when the wall clock jumps), the embedding API,
//! reload, the redb store and its storage faults, and the HTTP side (API,
//! `/healthz`, `/metrics`, the HTTP worker) on loopback port 0. No
//! PostgreSQL, no `chime` process.
//!
//! `common`: the HTTP tests' instance on a real redb file and its client.
//! One scenario per module; run one with
//! `cargo test -p chime-native --test embedded <module>::`.

mod common;

mod api_docs;
mod api_events;
mod api_events_lag;
mod api_limits;
mod api_long_poll;
mod api_openapi;
mod api_schedule_runs;
mod api_suite;
mod api_throughput;
mod api_token_buckets;
mod clock_jump;
mod dashboard_routes;
mod driver;
mod healthz;
mod http_api;
mod http_methods;
mod http_worker;
mod library_api;
mod metrics;
mod reload;
mod restart_interrupted;
mod store;
mod store_cut_file;
mod store_write_faults;
