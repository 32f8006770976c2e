//! `chime enqueue`, `jobs`, `job`, `cancel`, `queues`, `dead`, `redrive`,
//! `purge` and `schedules`: a command-line client of a running daemon's
//! HTTP API (`docs/http.md`, `docs/clients.md`).
//!
//! A thin translator, like the routes it calls: flags become the JSON
//! body the API takes, and the reply is printed as the API gave it
//! (`--json`) or as a table. Every rule stays the engine's: the client
//! checks only what it must to build a request (a `K=V` header, a
//! duration, a file), and a refusal is the server's error, printed with
//! its code, message and field.
//!
//! Exit codes tell a script what happened: 0 done, 2 the command line
//! was wrong (clap's own code, and ours for what clap cannot check), 3 the
//! daemon refused the request (a 4xx: nothing changed), 4 the daemon could
//! not be reached or could not answer (a 5xx, a connection error or a
//! timeout: the request may be retried).

mod render;

use chime_core::{Spec, SpecOptions, Timestamp};
use clap::{Args, Subcommand};
use render::{job_text, jobs_table, queues_table, schedule_text, schedules_table, summary};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

/// The daemon's default listener (`http::DEFAULT_ADDRESS`) as a URL.
pub const DEFAULT_URL: &str = "http://127.0.0.1:9464";

/// How long one request may take: longer than the server's own 10 s
/// bound on a backend call, so its 503 arrives before our timeout.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// Where and as whom to call, and how to print (every API command).
#[derive(Args, Clone, Debug)]
pub struct Api {
    /// The daemon's HTTP address.
    #[arg(long, env = "CHIME_URL", default_value = DEFAULT_URL, global = true)]
    pub url: String,
    /// Bearer token. Prefer the CHIME_TOKEN variable: a flag is visible
    /// to other users in the process list.
    #[arg(long, env = "CHIME_TOKEN", hide_env_values = true, global = true)]
    pub token: Option<String>,
    /// Print the API's JSON reply instead of a table.
    #[arg(long, global = true)]
    pub json: bool,
}

/// The API commands (flattened into `chime`'s own).
#[derive(Subcommand, Debug)]
pub enum ApiCmd {
    /// Enqueue one job on a queue of a running daemon.
    Enqueue(EnqueueArgs),
    /// List a queue's jobs, one page in id order.
    Jobs {
        /// The queue.
        queue: String,
        /// Only jobs in this state: scheduled, available, claimed,
        /// completed, dead, dropped or cancelled.
        #[arg(long)]
        state: Option<String>,
        /// Only the job with this idempotency key.
        #[arg(long)]
        key: Option<String>,
        /// Jobs per page (the server's default is 100, at most 1,000).
        #[arg(long)]
        limit: Option<u32>,
        /// Start after this job id (the `next` a previous page printed).
        #[arg(long)]
        cursor: Option<u64>,
        /// Where, as whom, how to print.
        #[command(flatten)]
        api: Api,
    },
    /// Show one job: state, attempts, payload, last error.
    Job {
        /// Job id.
        id: u64,
        /// Where, as whom, how to print.
        #[command(flatten)]
        api: Api,
    },
    /// Cancel a job that has not ended (a claimed job's worker is told).
    Cancel {
        /// Job id.
        id: u64,
        /// Where, as whom, how to print.
        #[command(flatten)]
        api: Api,
    },
    /// Queue depths by state.
    Queues {
        /// Where, as whom, how to print.
        #[command(flatten)]
        api: Api,
    },
    /// A queue's dead letters, oldest death first.
    Dead {
        /// The queue.
        queue: String,
        /// How many (the server's default is 100, at most 1,000).
        #[arg(long)]
        limit: Option<u32>,
        /// Where, as whom, how to print.
        #[command(flatten)]
        api: Api,
    },
    /// Make a queue's dead letters (or one) available again.
    Redrive {
        /// The queue.
        queue: String,
        /// Only this dead job.
        #[arg(long)]
        job: Option<u64>,
        /// Where, as whom, how to print.
        #[command(flatten)]
        api: Api,
    },
    /// Delete a queue's dead letters.
    Purge {
        /// The queue.
        queue: String,
        /// Only those that died before this instant (RFC 3339).
        #[arg(long)]
        before: Option<String>,
        /// Where, as whom, how to print.
        #[command(flatten)]
        api: Api,
    },
    /// List schedules (the default), or pause, resume or trigger one.
    Schedules {
        /// What to do (`list` without one).
        #[command(subcommand)]
        cmd: Option<SchedulesCmd>,
        /// Where, as whom, how to print.
        #[command(flatten)]
        api: Api,
    },
}

/// `chime enqueue`'s arguments.
#[derive(Args, Debug)]
pub struct EnqueueArgs {
    /// The queue (created with the defaults if unknown).
    pub queue: String,
    /// The payload, any JSON (`'{"to": "a@example.com"}'`, `42`).
    #[arg(long, conflicts_with = "payload_file")]
    pub payload: Option<String>,
    /// Read the JSON payload from a file (`-`: standard input).
    #[arg(long)]
    pub payload_file: Option<PathBuf>,
    /// Idempotency key: a second enqueue with it adds nothing.
    #[arg(long)]
    pub key: Option<String>,
    /// Run after this long (`90s`, `1h30m`).
    #[arg(long, conflicts_with = "run_at")]
    pub delay: Option<String>,
    /// Run at this instant (RFC 3339, `2027-01-01T08:00:00Z`).
    #[arg(long)]
    pub run_at: Option<String>,
    /// Higher runs first.
    #[arg(long, allow_negative_numbers = true)]
    pub priority: Option<i32>,
    /// Attempts before it is dead (default: the queue's).
    #[arg(long)]
    pub max_attempts: Option<u32>,
    /// A job header `K=V`; repeat for several.
    #[arg(long = "header", value_name = "K=V")]
    pub headers: Vec<String>,
    /// Where, as whom, how to print.
    #[command(flatten)]
    pub api: Api,
}

/// `chime schedules …`.
#[derive(Subcommand, Debug)]
pub enum SchedulesCmd {
    /// Every schedule, its status and next fire.
    List,
    /// One schedule and its next fires.
    Show {
        /// Schedule name.
        name: String,
    },
    /// Stop a schedule firing until it is resumed.
    Pause {
        /// Schedule name.
        name: String,
        /// Why (kept with the schedule, shown by `schedules show`).
        #[arg(long)]
        note: Option<String>,
    },
    /// Let a paused schedule fire again.
    Resume {
        /// Schedule name.
        name: String,
    },
    /// Fire a schedule now.
    Trigger {
        /// Schedule name.
        name: String,
        /// This fire's overlap policy: skip, allow, cancel_previous or
        /// buffer_one (default: the schedule's).
        #[arg(long)]
        overlap: Option<String>,
    },
}

/// Why an API command failed; [`ClientError::exit_code`] tells them apart.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The command line is wrong in a way clap cannot see.
    #[error("{0}")]
    Usage(String),
    /// The daemon answered 4xx: the request was refused, nothing changed.
    #[error("{}", describe(*.status, .body))]
    Refused {
        /// HTTP status.
        status: u16,
        /// The API's error.
        body: ApiErrorBody,
    },
    /// A 5xx answer, or no answer at all: the daemon is down, stopping,
    /// busy or has no leader; the same request may succeed later.
    #[error("{0}")]
    Unavailable(String),
}

impl ClientError {
    /// The process exit code: 2 usage, 3 refused, 4 unavailable.
    pub fn exit_code(&self) -> u8 {
        match self {
            ClientError::Usage(_) => 2,
            ClientError::Refused { .. } => 3,
            ClientError::Unavailable(_) => 4,
        }
    }
}

/// The API's error answer, `{"error", "message", "field"}`.
#[derive(Clone, Debug, Deserialize)]
pub struct ApiErrorBody {
    /// Stable code (`forbidden`, `unknown_job`, `invalid_input`, …).
    pub error: String,
    /// For people.
    #[serde(default)]
    pub message: String,
    /// The request field it is about.
    #[serde(default)]
    pub field: Option<String>,
}

/// `HTTP 403 forbidden: message (field: queue)`.
fn describe(status: u16, body: &ApiErrorBody) -> String {
    let field = body
        .field
        .as_deref()
        .map(|f| format!(" (field: {f})"))
        .unwrap_or_default();
    format!("HTTP {status} {}: {}{field}", body.error, body.message)
}

/// Runs one API command.
pub fn run(cmd: ApiCmd) -> Result<(), ClientError> {
    match cmd {
        ApiCmd::Enqueue(args) => enqueue(args),
        ApiCmd::Jobs {
            queue,
            state,
            key,
            limit,
            cursor,
            api,
        } => {
            let mut query = Vec::new();
            let mut add = |k: &str, v: Option<String>| {
                if let Some(v) = v {
                    query.push(format!("{k}={}", encode(&v)));
                }
            };
            add("state", state);
            add("key", key);
            add("limit", limit.map(|n| n.to_string()));
            add("after", cursor.map(|n| n.to_string()));
            let mut path = format!("/v1/queues/{}/jobs", encode(&queue));
            if !query.is_empty() {
                path = format!("{path}?{}", query.join("&"));
            }
            let reply = Client::new(&api)?.call("GET", &path, None)?;
            show(&api, &reply, |r| {
                let mut text = jobs_table(&r["jobs"]);
                if let Some(next) = r["next"].as_u64() {
                    text.push_str(&format!("more: --cursor {next}"));
                }
                text
            })
        }
        ApiCmd::Job { id, api } => {
            let reply = Client::new(&api)?.call("GET", &format!("/v1/jobs/{id}"), None)?;
            show(&api, &reply, job_text)
        }
        ApiCmd::Cancel { id, api } => {
            let reply = Client::new(&api)?.call("POST", &format!("/v1/jobs/{id}/cancel"), None)?;
            show(&api, &reply, |_| format!("cancelled job {id}"))
        }
        ApiCmd::Queues { api } => {
            let reply = Client::new(&api)?.call("GET", "/v1/queues", None)?;
            show(&api, &reply, |r| queues_table(&r["queues"]))
        }
        ApiCmd::Dead { queue, limit, api } => {
            let path = match limit {
                Some(n) => format!("/v1/queues/{}/dead?limit={n}", encode(&queue)),
                None => format!("/v1/queues/{}/dead", encode(&queue)),
            };
            let reply = Client::new(&api)?.call("GET", &path, None)?;
            show(&api, &reply, |r| match r["jobs"].as_array() {
                Some(jobs) if !jobs.is_empty() => {
                    format!("{} dead in {queue}\n{}", r["total"], jobs_table(&r["jobs"]))
                }
                _ => format!("{} dead in {queue}", r["total"]),
            })
        }
        ApiCmd::Redrive { queue, job, api } => {
            let body = match job {
                Some(id) => json!({ "job": id }),
                None => json!({}),
            };
            let path = format!("/v1/queues/{}/dead/redrive", encode(&queue));
            let reply = Client::new(&api)?.call("POST", &path, Some(body))?;
            show(&api, &reply, |r| {
                format!(
                    "redriven: {} (idempotency keys dropped: {})",
                    r["count"], r["keysDropped"]
                )
            })
        }
        ApiCmd::Purge { queue, before, api } => {
            let body = match before {
                Some(t) => json!({ "before": instant("--before", &t)?.as_millis() }),
                None => json!({}),
            };
            let path = format!("/v1/queues/{}/dead/purge", encode(&queue));
            let reply = Client::new(&api)?.call("POST", &path, Some(body))?;
            show(&api, &reply, |r| format!("purged: {}", r["count"]))
        }
        ApiCmd::Schedules { cmd, api } => schedules(cmd.unwrap_or(SchedulesCmd::List), &api),
    }
}

/// `chime enqueue`: the flags as an `EnqueueRequest` body.
fn enqueue(a: EnqueueArgs) -> Result<(), ClientError> {
    let mut body = Map::new();
    let payload = match (&a.payload, &a.payload_file) {
        (Some(text), _) => Some(parse_json("--payload", text)?),
        (None, Some(path)) => {
            let text = if path.as_os_str() == "-" {
                std::io::read_to_string(std::io::stdin())
            } else {
                std::fs::read_to_string(path)
            }
            .map_err(|e| ClientError::Usage(format!("--payload-file {}: {e}", path.display())))?;
            Some(parse_json("--payload-file", &text)?)
        }
        (None, None) => None,
    };
    if let Some(p) = payload {
        body.insert("payload".into(), p);
    }
    if let Some(k) = a.key {
        body.insert("key".into(), k.into());
    }
    if let Some(d) = &a.delay {
        body.insert("delayMs".into(), duration_ms(d)?.into());
    }
    if let Some(t) = &a.run_at {
        body.insert("runAt".into(), instant("--run-at", t)?.as_millis().into());
    }
    if let Some(p) = a.priority {
        body.insert("priority".into(), p.into());
    }
    if let Some(n) = a.max_attempts {
        body.insert("maxAttempts".into(), n.into());
    }
    if !a.headers.is_empty() {
        let mut headers = Map::new();
        for h in &a.headers {
            let (k, v) = h
                .split_once('=')
                .ok_or_else(|| ClientError::Usage(format!("--header {h:?}: expected K=V")))?;
            headers.insert(k.to_owned(), v.into());
        }
        body.insert("headers".into(), Value::Object(headers));
    }
    let path = format!("/v1/queues/{}/jobs", encode(&a.queue));
    let reply = Client::new(&a.api)?.call("POST", &path, Some(Value::Object(body)))?;
    show(&a.api, &reply, |r| {
        if r["deduplicated"] == true {
            format!("{} (deduplicated: the key matched this job)", r["id"])
        } else {
            r["id"].to_string()
        }
    })
}

/// `chime schedules …`.
fn schedules(cmd: SchedulesCmd, api: &Api) -> Result<(), ClientError> {
    let client = Client::new(api)?;
    let at = |name: &str, verb: &str| format!("/v1/schedules/{}/{verb}", encode(name));
    match cmd {
        SchedulesCmd::List => {
            let reply = client.call("GET", "/v1/schedules", None)?;
            show(api, &reply, |r| schedules_table(&r["schedules"]))
        }
        SchedulesCmd::Show { name } => {
            let path = format!("/v1/schedules/{}", encode(&name));
            let reply = client.call("GET", &path, None)?;
            show(api, &reply, schedule_text)
        }
        SchedulesCmd::Pause { name, note } => {
            let body = note.map_or_else(|| json!({}), |n| json!({ "note": n }));
            let reply = client.call("POST", &at(&name, "pause"), Some(body))?;
            show(api, &reply, |_| format!("paused {name}"))
        }
        SchedulesCmd::Resume { name } => {
            let reply = client.call("POST", &at(&name, "resume"), Some(json!({})))?;
            show(api, &reply, |_| format!("resumed {name}"))
        }
        SchedulesCmd::Trigger { name, overlap } => {
            let body = overlap.map_or_else(|| json!({}), |o| json!({ "overlap": o }));
            let reply = client.call("POST", &at(&name, "trigger"), Some(body))?;
            show(api, &reply, |r| format!("triggered {name}: {}", summary(r)))
        }
    }
}

/// One blocking caller of the API (a current-thread runtime under a
/// reqwest client).
struct Client {
    http: reqwest::Client,
    base: String,
    token: Option<String>,
    rt: tokio::runtime::Runtime,
}

impl Client {
    fn new(api: &Api) -> Result<Client, ClientError> {
        let base = api.url.trim_end_matches('/').to_owned();
        if !(base.starts_with("http://") || base.starts_with("https://")) {
            return Err(ClientError::Usage(format!(
                "--url {base:?}: expected http://host:port or https://host:port"
            )));
        }
        let http = crate::worker::http::client(REQUEST_TIMEOUT)
            .map_err(|e| ClientError::Unavailable(format!("HTTP client: {e}")))?;
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| ClientError::Unavailable(format!("runtime: {e}")))?;
        let token = api.token.clone().filter(|t| !t.is_empty());
        Ok(Client {
            http,
            base,
            token,
            rt,
        })
    }

    /// `METHOD base+path` with an optional JSON body: the reply's JSON,
    /// or the API's error sorted into refused (4xx) and unavailable.
    fn call(&self, method: &str, path: &str, body: Option<Value>) -> Result<Value, ClientError> {
        let url = format!("{}{path}", self.base);
        let method = reqwest::Method::from_bytes(method.as_bytes())
            .map_err(|e| ClientError::Usage(e.to_string()))?;
        let mut req = self.http.request(method.clone(), &url);
        if let Some(t) = &self.token {
            req = req.bearer_auth(t);
        }
        if let Some(b) = body {
            req = req
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(b.to_string());
        }
        // The URL never holds a secret (the token travels in a header),
        // so it may be named in errors.
        let what = format!("{method} {url}");
        self.rt.block_on(async {
            let reply = req
                .send()
                .await
                .map_err(|e| ClientError::Unavailable(format!("{what}: {}", cause(&e))))?;
            let status = reply.status().as_u16();
            let text = reply
                .text()
                .await
                .map_err(|e| ClientError::Unavailable(format!("{what}: {}", cause(&e))))?;
            if (200..300).contains(&status) {
                return serde_json::from_str(&text).map_err(|e| {
                    ClientError::Unavailable(format!("{what}: HTTP {status}: not JSON: {e}"))
                });
            }
            let body =
                serde_json::from_str::<ApiErrorBody>(&text).unwrap_or_else(|_| ApiErrorBody {
                    error: "http_error".into(),
                    message: text.chars().take(512).collect(),
                    field: None,
                });
            if (400..500).contains(&status) {
                Err(ClientError::Refused { status, body })
            } else {
                Err(ClientError::Unavailable(format!(
                    "{what}: {}",
                    describe(status, &body)
                )))
            }
        })
    }
}

/// A reqwest error with its causes (`error sending request: … Connection
/// refused`), which its own `Display` leaves out.
fn cause(e: &reqwest::Error) -> String {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        text.push_str(&format!(": {s}"));
        source = s.source();
    }
    text
}

/// The reply as JSON (`--json`) or as `text` renders it.
fn show(api: &Api, reply: &Value, text: impl FnOnce(&Value) -> String) -> Result<(), ClientError> {
    let out = if api.json {
        serde_json::to_string_pretty(reply).unwrap_or_default()
    } else {
        text(reply)
    };
    // A closed stdout (`chime jobs q | head`) just ends the output.
    let _ = writeln!(std::io::stdout(), "{}", out.trim_end());
    Ok(())
}

fn parse_json(flag: &str, text: &str) -> Result<Value, ClientError> {
    serde_json::from_str(text).map_err(|e| ClientError::Usage(format!("{flag}: not JSON: {e}")))
}

/// `90s`, `1h30m`: the core's duration grammar, as `@every` reads it.
fn duration_ms(text: &str) -> Result<i64, ClientError> {
    Spec::parse(&format!("@every {text}"), &SpecOptions::default())
        .ok()
        .and_then(|s| s.every_ms())
        .ok_or_else(|| {
            ClientError::Usage(format!(
                "--delay {text:?}: expected a duration such as 90s, 15m or 1h30m"
            ))
        })
}

/// An RFC 3339 instant, read by the core's `@at` grammar (as `chime
/// preview --from` does).
fn instant(flag: &str, text: &str) -> Result<Timestamp, ClientError> {
    Spec::parse(&format!("@at {text}"), &SpecOptions::default())
        .ok()
        .and_then(|s| s.first_at_or_after(Timestamp::MIN))
        .ok_or_else(|| {
            ClientError::Usage(format!(
                "{flag} {text:?}: expected an RFC 3339 instant such as 2027-01-01T08:00:00Z"
            ))
        })
}

/// Percent-encodes a path segment or query value (names may hold any
/// character the engine allows).
fn encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_url_is_the_listeners_default_address() {
        assert_eq!(
            DEFAULT_URL,
            format!("http://{}", crate::http::DEFAULT_ADDRESS)
        );
    }

    #[test]
    fn names_are_percent_encoded_in_paths() {
        assert_eq!(encode("emails"), "emails");
        assert_eq!(encode("a b/c?d"), "a%20b%2Fc%3Fd");
        assert_eq!(encode("é"), "%C3%A9");
    }

    #[test]
    fn durations_and_instants_use_the_core_grammar() {
        assert_eq!(duration_ms("1h30m").unwrap(), 5_400_000);
        assert!(matches!(duration_ms("1.5h"), Err(ClientError::Usage(_))));
        assert_eq!(
            instant("--run-at", "2027-01-01T00:00:00Z")
                .unwrap()
                .as_millis(),
            1_798_761_600_000
        );
        assert!(instant("--run-at", "tomorrow").is_err());
    }

    #[test]
    fn a_refusal_names_status_code_message_and_field() {
        let e = ClientError::Refused {
            status: 403,
            body: ApiErrorBody {
                error: "forbidden".into(),
                message: "no".into(),
                field: Some("queue".into()),
            },
        };
        assert_eq!(e.to_string(), "HTTP 403 forbidden: no (field: queue)");
        assert_eq!(e.exit_code(), 3);
        assert_eq!(ClientError::Unavailable(String::new()).exit_code(), 4);
        assert_eq!(ClientError::Usage(String::new()).exit_code(), 2);
    }
}
