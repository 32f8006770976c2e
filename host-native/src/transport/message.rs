//! The one canonical serializer of transport messages: bodies and
//! headers, the same bytes for the same message on every broker and in
//! every process, so a consumer written in another language can rely on
//! the format (`docs/transports.md`, "Message format") and a message
//! dequeued and re-serialized is byte for byte what was published.
//!
//! **Body**: one line of compact JSON with the fields in this order, each
//! present only when it says something:
//!
//! ```text
//! {"v":1,"id":"nightly@1700000000000","queue":"planner","fire":"nightly@1700000000000",
//!  "schedule":"nightly","priority":0,"maxAttempts":3,"headers":{"k":"v"},"payload":{...}}
//! ```
//!
//! `v` is the format version (1). `fire`/`schedule` only for a schedule's
//! fire; `priority` only when not 0; `maxAttempts` only when the target
//! overrides the queue's; `headers` only when not empty, keys sorted
//! (core's `Headers` is ordered); `payload` last, the JSON text exactly as
//! the engine holds it (never re-formatted: floats, key order and spacing
//! kept). Strings are escaped by `serde_json` (deterministic).
//!
//! **Message id** ([`Message::id`]): a fire's is its fire id
//! (`<schedule>@<nominal ms>[#m<n>|#b<n>]`, the engine's key for it); a job
//! enqueued through the port with an idempotency key has `~key:<key>`,
//! without one `~job:<n>`. `~` is not allowed in schedule names, so the
//! namespaces never meet (as the engine keeps fire keys and user keys
//! apart).
//!
//! **Headers** ([`Message::headers`], [`DeadLetter::headers`]): ordered
//! `(name, value)` pairs, the broker's headers (NATS) or stream fields
//! (Redis): `Chime-Message-Id`, then for a fire `runId` and `scheduleId`;
//! a dead letter adds `attempts` and `reason` (the seed's names). Values
//! are single-line (control characters become spaces) and a `reason` is
//! cut at [`REASON_BYTES`]. [`encode_headers`] / [`parse_headers`] are the
//! text form (`name: value\n` per pair) the fixtures pin.

use chime_core::{FireId, Headers, Payload};
use serde::Deserialize;
use serde_json::value::RawValue;
use std::fmt::Write as _;

/// The body format's version.
pub const VERSION: u32 = 1;

/// Longest `reason` header, in bytes (cut at a character boundary).
pub const REASON_BYTES: usize = 1024;

/// Header: the message id.
pub const H_MESSAGE_ID: &str = "Chime-Message-Id";
/// Header (seed name): the fire id.
pub const H_RUN_ID: &str = "runId";
/// Header (seed name): the schedule.
pub const H_SCHEDULE_ID: &str = "scheduleId";
/// Header (seed name, dead letters): deliveries made.
pub const H_ATTEMPTS: &str = "attempts";
/// Header (seed name, dead letters): the last failure.
pub const H_REASON: &str = "reason";

/// A message body or header block that is not in the canonical format.
#[derive(Debug, thiserror::Error)]
pub enum MessageError {
    /// Not JSON, or fields missing, unknown or mistyped.
    #[error("message body: {0}")]
    Body(#[from] serde_json::Error),
    /// A format version this chime does not read.
    #[error("message body: version {0} (this chime reads {VERSION})")]
    Version(u32),
    /// A `fire` that is not a fire id.
    #[error("message body: fire {0:?}: {1}")]
    Fire(String, String),
    /// Parsed, but not in canonical form (re-serializing gives other
    /// bytes): a producer that did not use this format.
    #[error("message body is not canonical")]
    NotCanonical,
    /// A header line without `: `.
    #[error("header line {0:?}")]
    Header(String),
}

/// One message of a transport queue.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    /// The idempotency id (see the module docs).
    pub id: String,
    /// The queue.
    pub queue: String,
    /// The fire it carries, if a schedule's.
    pub fire: Option<FireId>,
    /// The target's priority (transports refuse non-zero, see
    /// `transport::unsupported`).
    pub priority: i32,
    /// The target's override of the queue's `maxAttempts`.
    pub max_attempts: Option<u32>,
    /// The job's headers.
    pub headers: Headers,
    /// The payload, verbatim.
    pub payload: Payload,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Wire<'a> {
    v: u32,
    id: String,
    queue: String,
    #[serde(default)]
    fire: Option<String>,
    #[serde(default)]
    schedule: Option<String>,
    #[serde(default)]
    priority: i32,
    #[serde(default)]
    max_attempts: Option<u32>,
    #[serde(default)]
    headers: Headers,
    #[serde(borrow)]
    payload: &'a RawValue,
}

/// A JSON string literal.
fn quoted(out: &mut String, s: &str) {
    out.push_str(&serde_json::to_string(s).expect("a string serializes"));
}

impl Message {
    /// The message of an engine `Enqueue` command (a fire): id = fire id.
    pub fn of_fire(
        fire: &FireId,
        queue: &str,
        payload: &Payload,
        headers: &Headers,
        priority: i32,
        max_attempts: Option<u32>,
    ) -> Message {
        Message {
            id: fire.to_string(),
            queue: queue.to_owned(),
            fire: Some(fire.clone()),
            priority,
            max_attempts,
            headers: headers.clone(),
            payload: payload.clone(),
        }
    }

    /// The message of `chime_core::Command::Enqueue`, if `cmd` is one.
    pub fn of_command(cmd: &chime_core::Command) -> Option<Message> {
        match cmd {
            chime_core::Command::Enqueue {
                fire,
                queue,
                payload,
                headers,
                priority,
                max_attempts,
                ..
            } => Some(Message::of_fire(
                fire,
                queue,
                payload,
                headers,
                *priority,
                *max_attempts,
            )),
            _ => None,
        }
    }

    /// The id of a port enqueue with idempotency key `key`.
    pub fn key_id(key: &str) -> String {
        format!("~key:{key}")
    }

    /// The id of a port enqueue without a key, by the transport's job id.
    pub fn job_id(job: u64) -> String {
        format!("~job:{job}")
    }

    /// The canonical body.
    pub fn body(&self) -> String {
        let mut out = String::with_capacity(64 + self.payload.len_bytes());
        let _ = write!(out, "{{\"v\":{VERSION},\"id\":");
        quoted(&mut out, &self.id);
        out.push_str(",\"queue\":");
        quoted(&mut out, &self.queue);
        if let Some(f) = &self.fire {
            out.push_str(",\"fire\":");
            quoted(&mut out, &f.to_string());
            out.push_str(",\"schedule\":");
            quoted(&mut out, &f.schedule);
        }
        if self.priority != 0 {
            let _ = write!(out, ",\"priority\":{}", self.priority);
        }
        if let Some(m) = self.max_attempts {
            let _ = write!(out, ",\"maxAttempts\":{m}");
        }
        if !self.headers.is_empty() {
            out.push_str(",\"headers\":");
            out.push_str(&serde_json::to_string(&self.headers).expect("headers serialize"));
        }
        out.push_str(",\"payload\":");
        out.push_str(self.payload.as_json());
        out.push('}');
        out
    }

    /// Parses a canonical body (anything [`Message::body`] made); a body
    /// that parses but is not canonical is [`MessageError::NotCanonical`],
    /// so no two byte strings stand for one message.
    pub fn parse(body: &str) -> Result<Message, MessageError> {
        let w: Wire<'_> = serde_json::from_str(body)?;
        if w.v != VERSION {
            return Err(MessageError::Version(w.v));
        }
        let fire = match w.fire {
            None => None,
            Some(f) => Some(
                f.parse::<FireId>()
                    .map_err(|e| MessageError::Fire(f.clone(), e))?,
            ),
        };
        let m = Message {
            id: w.id,
            queue: w.queue,
            fire,
            priority: w.priority,
            max_attempts: w.max_attempts,
            headers: w.headers,
            payload: Payload::from_json(w.payload.get())?,
        };
        let schedule_ok = match &m.fire {
            Some(f) => w.schedule.as_deref() == Some(&*f.schedule),
            None => w.schedule.is_none(),
        };
        if !schedule_ok || m.body() != body {
            return Err(MessageError::NotCanonical);
        }
        Ok(m)
    }

    /// The broker headers of the message (see the module docs).
    pub fn headers(&self) -> Vec<(&'static str, String)> {
        let mut h = vec![(H_MESSAGE_ID, one_line(&self.id))];
        if let Some(f) = &self.fire {
            h.push((H_RUN_ID, one_line(&f.to_string())));
            h.push((H_SCHEDULE_ID, one_line(&f.schedule)));
        }
        h
    }
}

/// A message copied to the dead-letter stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeadLetter {
    /// The message, as published.
    pub message: Message,
    /// Deliveries made.
    pub attempts: u32,
    /// The last failure's text.
    pub reason: String,
}

impl DeadLetter {
    /// The broker headers: the message's, then `attempts` and `reason`.
    pub fn headers(&self) -> Vec<(&'static str, String)> {
        let mut h = self.message.headers();
        h.push((H_ATTEMPTS, self.attempts.to_string()));
        h.push((H_REASON, one_line(cut(&self.reason, REASON_BYTES))));
        h
    }
}

/// `s` with control characters (newlines included) as spaces: a header
/// value is one line on every broker.
pub fn one_line(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// At most `max` bytes of `s`, cut at a character boundary.
pub fn cut(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// The text form of a header block: `name: value\n` per pair, in order.
pub fn encode_headers<N: AsRef<str>>(headers: &[(N, String)]) -> String {
    let mut out = String::new();
    for (n, v) in headers {
        let _ = writeln!(out, "{}: {}", n.as_ref(), v);
    }
    out
}

/// Parses [`encode_headers`]' text.
pub fn parse_headers(text: &str) -> Result<Vec<(String, String)>, MessageError> {
    text.lines()
        .map(|l| {
            l.split_once(": ")
                .map(|(n, v)| (n.to_owned(), v.to_owned()))
                .ok_or_else(|| MessageError::Header(l.to_owned()))
        })
        .collect()
}

#[cfg(test)]
#[path = "message_tests.rs"]
mod tests;
