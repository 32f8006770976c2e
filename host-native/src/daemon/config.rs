//! The `chime run --config` file: `[[queue]]`, `[[schedule]]` and
//! `[[worker]]` tables. Queues and schedules are the core's own wire types
//! (`QueueConfig`, `ScheduleDef`, camelCase keys), so the file accepts
//! exactly what the engine does and the engine does all the validation.

use crate::worker::PoolConfig;
use chime_core::{QueueConfig, ScheduleDef};
use serde::Deserialize;
use std::path::Path;
use std::time::Duration;

/// A config file that could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// Unreadable file.
    #[error("reading {path}")]
    Read {
        /// The file.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
    /// Not valid TOML, or an unknown/mistyped key.
    #[error(transparent)]
    Toml(#[from] toml::de::Error),
    /// A table the core's types reject.
    #[error("{table} #{index}: {message}")]
    Table {
        /// `queue`, `schedule` or `worker`.
        table: &'static str,
        /// 1-based position among tables of that kind.
        index: usize,
        /// What is wrong.
        message: String,
    },
    /// A worker for a queue that is not declared.
    #[error("worker #{index}: queue {queue:?} has no [[queue]] table")]
    UnknownQueue {
        /// 1-based.
        index: usize,
        /// The queue.
        queue: String,
    },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    #[serde(default)]
    queue: Vec<toml::Value>,
    #[serde(default)]
    schedule: Vec<toml::Value>,
    #[serde(default)]
    worker: Vec<WorkerConfig>,
    #[serde(default)]
    http: Option<HttpSection>,
    #[serde(default)]
    database: Option<DatabaseSection>,
    #[serde(default)]
    token: Vec<TokenConfig>,
    #[serde(default)]
    transport: Option<crate::transport::config::TransportSection>,
}

/// A `[[token]]` table: a bearer token the HTTP API accepts, by the hex
/// SHA-256 of its text (`chime token new` prints both; the config never
/// holds the token itself), with its scopes (`read`, `enqueue`, `work`,
/// `manage`, `admin`, each optionally `:pattern`, see `docs/http.md`).
#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TokenConfig {
    /// Shown in logs and errors in place of the token.
    pub name: String,
    /// 64 hex digits.
    pub sha256: String,
    /// What it may do.
    #[serde(default)]
    pub scopes: Vec<String>,
}

/// The `[http]` table: the listener of `/healthz`, `/metrics` and `/v1`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HttpSection {
    /// `host:port`, or `off`; `chime run --http` overrides it.
    pub address: Option<String>,
    /// A PEM certificate chain (leaf first): serve HTTPS. Relative to the
    /// config file's directory; needs `tls_key`.
    #[serde(rename = "tls_cert", alias = "tlsCert")]
    pub tls_cert: Option<String>,
    /// The PEM private key of `tls_cert`.
    #[serde(rename = "tls_key", alias = "tlsKey")]
    pub tls_key: Option<String>,
}

/// The `[database]` table: run as a replica on PostgreSQL (see
/// `docs/postgres.md`). `chime run --database`, `--schema` and
/// `--lease-ttl-ms` override its keys.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DatabaseSection {
    /// `postgresql://user:password@host/db` (or a libpq key=value string).
    pub url: Option<String>,
    /// The schema of chime's tables (default `chime`).
    pub schema: Option<String>,
    /// Leader lease time-to-live in milliseconds (default 15,000).
    pub lease_ttl_ms: Option<u64>,
}

/// A `[[worker]]` table: a command run, or a URL POSTed to, once per job
/// of `queue` (exactly one of `command` and `url`).
#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WorkerConfig {
    /// Local queue to work.
    pub queue: String,
    /// argv (no shell unless you write `["sh", "-c", "..."]`).
    #[serde(default)]
    pub command: Vec<String>,
    /// `http://` or `https://` endpoint that receives each job as a JSON
    /// POST (see `docs/http.md`).
    #[serde(default)]
    pub url: Option<String>,
    /// Most jobs at once.
    #[serde(default = "one")]
    pub concurrency: usize,
    /// Per-attempt timeout in milliseconds.
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    /// Grace period on stop, in milliseconds (default 10 s).
    #[serde(default)]
    pub grace_ms: Option<u64>,
}

fn one() -> usize {
    1
}

/// A parsed config file.
#[derive(Clone, Debug)]
pub struct FileConfig {
    /// Queues to declare.
    pub queues: Vec<QueueConfig>,
    /// Schedules to upsert (schedules not listed are removed).
    pub schedules: Vec<ScheduleDef>,
    /// Command and HTTP workers.
    pub workers: Vec<WorkerConfig>,
    /// The `[http]` table, if present.
    pub http: HttpSection,
    /// The `[database]` table, if present.
    pub database: Option<DatabaseSection>,
    /// The `[[token]]` tables, checked: the HTTP API's credentials.
    pub tokens: crate::http::Tokens,
    /// The queues carried by a transport (`transport = "redis"` in their
    /// `[[queue]]` table; declared `external` in the engine) and the
    /// `[transport]` table.
    pub transports: Transports,
}

/// The transports of a config file.
#[derive(Clone, Debug, Default)]
pub struct Transports {
    /// Queue → its transport.
    pub queues: std::collections::BTreeMap<String, crate::transport::config::TransportKind>,
    /// The `[transport]` table (defaults when absent).
    pub section: crate::transport::config::TransportSection,
}

impl FileConfig {
    /// Reads and parses `path`.
    pub fn load(path: &Path) -> Result<FileConfig, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.display().to_string(),
            source,
        })?;
        FileConfig::parse(&text)
    }

    /// Parses TOML text.
    pub fn parse(text: &str) -> Result<FileConfig, ConfigError> {
        let mut raw: Raw = toml::from_str(text)?;
        let transports = transports(&mut raw)?;
        let queues: Vec<QueueConfig> = convert("queue", &raw.queue)?;
        let schedules = convert("schedule", &raw.schedule)?;
        for (i, w) in raw.worker.iter().enumerate() {
            if !queues.iter().any(|q| q.name == w.queue) {
                return Err(ConfigError::UnknownQueue {
                    index: i + 1,
                    queue: w.queue.clone(),
                });
            }
            if w.command.is_empty() == w.url.is_none() {
                return Err(ConfigError::Table {
                    table: "worker",
                    index: i + 1,
                    message: "needs exactly one of `command` and `url`".into(),
                });
            }
        }
        let tokens = raw
            .token
            .iter()
            .enumerate()
            .map(|(i, t)| {
                crate::http::TokenDef::new(&t.name, &t.sha256, &t.scopes).map_err(|e| {
                    ConfigError::Table {
                        table: "token",
                        index: i + 1,
                        message: e.to_string(),
                    }
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let tokens = crate::http::Tokens::new(tokens).map_err(|e| ConfigError::Table {
            table: "token",
            index: raw.token.len(),
            message: e.to_string(),
        })?;
        let http = raw.http.unwrap_or_default();
        if http.tls_cert.is_some() != http.tls_key.is_some() {
            return Err(ConfigError::Table {
                table: "http",
                index: 1,
                message: "tls_cert and tls_key go together".into(),
            });
        }
        Ok(FileConfig {
            queues,
            schedules,
            workers: raw.worker,
            http,
            database: raw.database,
            tokens,
            transports,
        })
    }

    /// The pool settings of worker `w` (lease from its queue).
    pub fn pool_config(&self, w: &WorkerConfig) -> PoolConfig {
        let mut p = PoolConfig::new(&w.queue);
        p.concurrency = w.concurrency.max(1);
        p.timeout = w.timeout_ms.map(Duration::from_millis);
        if let Some(g) = w.grace_ms {
            p.grace = Duration::from_millis(g);
        }
        if let Some(q) = self.queues.iter().find(|q| q.name == w.queue) {
            p.lease_ms = q.lease_ms;
        }
        p
    }
}

/// Takes `transport` (and the seed's `deadLetterEnabled`, the queue's
/// `deadLetter`) out of a `[[queue]]` table before core reads it: a queue
/// with a transport is `external` in the engine. The queue's name and
/// transport, if it has one.
pub(crate) fn take_transport_keys(
    q: &mut toml::Value,
) -> Result<Option<(String, crate::transport::config::TransportKind)>, String> {
    use crate::transport::config::TransportKind;
    let Some(t) = q.as_table_mut() else {
        return Ok(None);
    };
    let Some(kind) = t.remove("transport") else {
        return Ok(None);
    };
    let kind: TransportKind = kind
        .try_into()
        .map_err(|e: toml::de::Error| format!("transport: {}", e.message()))?;
    if let Some(d) = t.remove("deadLetterEnabled") {
        if t.contains_key("deadLetter") {
            return Err("deadLetterEnabled and deadLetter are one setting".into());
        }
        t.insert("deadLetter".into(), d);
    }
    match t.get("mode").and_then(|m| m.as_str()) {
        None | Some("external") => {
            t.insert("mode".into(), "external".into());
        }
        Some(other) => {
            return Err(format!(
                "a queue with a transport is external, not {other:?}"
            ));
        }
    }
    let name = t
        .get("name")
        .and_then(|n| n.as_str())
        .ok_or("missing name")?
        .to_owned();
    Ok(Some((name, kind)))
}

/// The transports of the `[[queue]]` tables and the `[transport]` table
/// (those keys taken out of the queue tables).
fn transports(raw: &mut Raw) -> Result<Transports, ConfigError> {
    use crate::transport::config::TransportKind;
    let mut out = Transports {
        section: raw.transport.take().unwrap_or_default(),
        ..Transports::default()
    };
    for (i, q) in raw.queue.iter_mut().enumerate() {
        let err = |message: String| ConfigError::Table {
            table: "queue",
            index: i + 1,
            message,
        };
        let Some((name, kind)) = take_transport_keys(q).map_err(err)? else {
            continue;
        };
        let configured = match kind {
            TransportKind::Redis => out.section.redis.is_some(),
            TransportKind::Nats => out.section.nats.is_some(),
        };
        if !configured {
            return Err(err(format!(
                "transport {:?} needs a [transport.{}] table",
                kind.name(),
                kind.name()
            )));
        }
        out.queues.insert(name, kind);
    }
    if !out.queues.is_empty() && raw.database.is_some() {
        return Err(ConfigError::Table {
            table: "transport",
            index: 1,
            message: "transports run with the embedded engine, not with [database] (yet)".into(),
        });
    }
    Ok(out)
}

/// TOML tables → the core's serde types, through JSON text (payloads are
/// raw JSON, which only `serde_json` can produce).
fn convert<T: serde::de::DeserializeOwned>(
    table: &'static str,
    values: &[toml::Value],
) -> Result<Vec<T>, ConfigError> {
    values
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let err = |message: String| ConfigError::Table {
                table,
                index: i + 1,
                message,
            };
            let json = serde_json::to_string(v).map_err(|e| err(e.to_string()))?;
            serde_json::from_str(&json).map_err(|e| err(e.to_string()))
        })
        .collect()
}

#[cfg(test)]
mod transport_tests {
    use super::*;
    use crate::transport::config::TransportKind;
    use chime_core::QueueMode;

    /// `examples/transports.toml`, the example of `docs/transports.md`.
    #[test]
    fn the_transports_example_parses() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/transports.toml");
        let c = FileConfig::load(Path::new(path)).unwrap();
        assert_eq!(
            c.transports.queues.get("planner"),
            Some(&TransportKind::Redis)
        );
        let q = &c.queues[0];
        assert_eq!(q.mode, QueueMode::External, "a transport queue is external");
        assert!(q.dead_letter);
        let redis = c.transports.section.redis.as_ref().unwrap();
        let names = redis.names("planner");
        assert_eq!(
            names,
            crate::transport::config::RedisOptions::default().names("planner")
        );
        assert_eq!(redis.idempotency_ttl_ms, 86_400_000);
    }

    #[test]
    fn the_nats_example_parses_with_the_seed_names() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../examples/transports-nats.toml"
        );
        let c = FileConfig::load(Path::new(path)).unwrap();
        for q in ["planner", "runner"] {
            assert_eq!(c.transports.queues.get(q), Some(&TransportKind::Nats));
        }
        assert!(c.queues.iter().all(|q| q.mode == QueueMode::External));
        let nats = c.transports.section.nats.as_ref().unwrap();
        let defaults = crate::transport::config::NatsOptions::default();
        for q in ["planner", "runner"] {
            assert_eq!(nats.names(q), defaults.names(q), "spelled out = defaults");
        }
        assert_eq!(nats.names("runner").dead_stream, "SCHEDULER_RUNNER_DEAD");
    }

    #[test]
    fn transport_tables_are_checked() {
        let no_table = "[[queue]]\nname = \"q\"\ntransport = \"redis\"\n";
        let e = FileConfig::parse(no_table).unwrap_err().to_string();
        assert!(e.contains("[transport.redis]"), "{e}");
        let local = "[[queue]]\nname = \"q\"\ntransport = \"redis\"\nmode = \"local\"\n\
                     [transport.redis]\n";
        assert!(FileConfig::parse(local).is_err());
        let unknown = "[[queue]]\nname = \"q\"\ntransport = \"kafka\"\n[transport.redis]\n";
        assert!(FileConfig::parse(unknown).is_err());
        let off = "[[queue]]\nname = \"q\"\ntransport = \"redis\"\ndeadLetterEnabled = false\n\
                   [transport.redis]\n";
        let c = FileConfig::parse(off).unwrap();
        assert!(!c.queues[0].dead_letter);
        let typo = "[transport.redis]\nurll = \"x\"\n";
        assert!(FileConfig::parse(typo).is_err());
    }
}
