//! The `chime` binary as real processes: its small commands, `validate`,
//! `inspect`, `replay`, the daemon's HTTP side, a crontab daemon's life and
//! the crontab reader on hostile input, and crash recovery (the process
//! killed, restarted). `daemon`: the helpers the daemon scenarios share.
//!
//! One scenario per module; run one with
//! `cargo test -p chime-native --test cli <module>::`.

mod api_daemon;
mod api_schedules_kept;
mod api_tokens;
mod client_commands;
mod client_docs;
mod client_unavailable;
mod client_workers;
mod commands;
mod crash;
mod crontab_lint;
mod crontab_robustness;
mod crontab_run;
mod crontab_secrets;
mod daemon;
mod daemon_http;
mod https_listener;
mod inspect;
mod inspect_read_only;
mod orphans;
mod preview_refusals;
mod replay;
mod replica_auth;
mod signals;
mod token_reload;
mod transport_api;
mod transport_daemon;
mod transport_daemon_kill;
mod transport_database_refused;
mod transport_nats;
mod transport_nats_kill;
mod transport_redis;
mod transport_redis_kill;
mod transport_reload;
mod tzdb_diff;
mod validate;
mod validate_warnings;
