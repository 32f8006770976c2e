//! The packed form of a drain: the two commands every fire produces
//! (`Fire`, and `Enqueue` for an external queue) as numbers in one
//! `Float64Array` and their strings in one text, instead of JSON.
//!
//! Why: a drain of 100k fires as JSON is ~36 MB that wasm serializes and
//! `JSON.parse` then reads back into ~500k objects; at 100k fires per drain
//! that costs ~4 µs per fire, five times the engine's own work. Packed,
//! the text holds each fire id once (an `Enqueue` reuses its `Fire`'s) and
//! a queue name once per run of commands on the same queue, and the JS
//! side (`unpack` in `js/core.js`) builds the same plain objects the JSON
//! would give, slicing the text instead of parsing it. Every other command
//! (`Wake`, `Cancel`, events) is rare and travels as its JSON inside the
//! text. `tests/packed.test.mjs` checks that both forms give deep-equal
//! objects for every command kind.
//!
//! Layout: records of numbers, each starting with its tag; strings are
//! `(start, length)` in UTF-16 code units of the text (what JS `slice`
//! takes). All integers are below 2^53 (timestamps, ids, counters), so
//! every `f64` is exact, as in JSON.
//!
//! | tag | record |
//! |---|---|
//! | `FIRE` | id start, id length, schedule length (a prefix of the id), version, nominal, dueAt, firedAt, reason (index into [`fire_reasons`]), epoch, queue start, queue length, job (−1: none) |
//! | `ENQUEUE` | fire-id start, fire-id length, queue start, queue length, payload start, payload length (−1: `null`), headers start, headers length (−1: none), epoch |
//! | `JSON` | start, length of the command's JSON (every other command, and an `Enqueue` whose target has a priority or a `maxAttempts`) |

use crate::convert::{ms, to_json};
use chime_core::{Command, FireId, FireReason};
use std::sync::Arc;

const FIRE: f64 = 0.0;
const ENQUEUE: f64 = 1.0;
const JSON: f64 = 2.0;

/// Every [`FireReason`] in the order of its index in a `FIRE` record.
const REASONS: [FireReason; 5] = [
    FireReason::Scheduled,
    FireReason::Catchup,
    FireReason::Manual,
    FireReason::Backfill,
    FireReason::Buffered,
];

fn reason_index(r: FireReason) -> f64 {
    // A match, not a search of REASONS: a new variant fails to compile here.
    match r {
        FireReason::Scheduled => 0.0,
        FireReason::Catchup => 1.0,
        FireReason::Manual => 2.0,
        FireReason::Backfill => 3.0,
        FireReason::Buffered => 4.0,
    }
}

/// The wire names of [`REASONS`] as a JSON array, read once by the JS side
/// so the names cannot drift from serde's.
pub(crate) fn fire_reasons() -> String {
    to_json(&REASONS)
}

/// A text range: start and length in UTF-16 code units.
type Range = (f64, f64);

/// A drain being packed; reused between drains (it keeps its capacity).
#[derive(Default)]
pub(crate) struct Packed {
    text: String,
    nums: Vec<f64>,
    /// Length of `text` in UTF-16 code units.
    utf16: usize,
    /// The last fire id written, so the `Enqueue` after a `Fire` reuses it.
    last_id: Option<(FireId, Range)>,
    /// The last queue name written, so a run of commands on one queue
    /// writes it once (compared by pointer first: the engine shares one
    /// `Arc<str>` per queue; then by content).
    last_queue: Option<(Arc<str>, Range)>,
}

impl Packed {
    pub(crate) fn clear(&mut self) {
        self.text.clear();
        self.nums.clear();
        self.utf16 = 0;
        self.last_id = None;
        self.last_queue = None;
    }

    /// Text address and byte length, numbers address and count (wasm32
    /// addresses fit in `u32`).
    pub(crate) fn layout(&self) -> Vec<u32> {
        let addr = |p: *const u8| u32::try_from(p as usize).expect("wasm32 address");
        let len = |n: usize| u32::try_from(n).expect("wasm32 length");
        vec![
            addr(self.text.as_ptr()),
            len(self.text.len()),
            addr(self.nums.as_ptr().cast()),
            len(self.nums.len()),
        ]
    }

    pub(crate) fn push(&mut self, cmd: &Command) {
        match cmd {
            Command::Fire(f) => {
                let (start, len) = self.fire_id(&f.fire_id);
                let (q_start, q_len) = self.queue(&f.queue);
                self.nums.extend_from_slice(&[
                    FIRE,
                    start,
                    len,
                    utf16_len(f.schedule()) as f64,
                    f.version as f64,
                    ms(f.nominal()),
                    ms(f.due_at),
                    ms(f.fired_at),
                    reason_index(f.reason),
                    f.epoch.0 as f64,
                    q_start,
                    q_len,
                    f.job.map_or(-1.0, |j| j.0 as f64),
                ]);
            }
            // A target with a priority or an attempts override is rare:
            // such an `Enqueue` travels as JSON.
            Command::Enqueue {
                fire,
                queue,
                payload,
                headers,
                epoch,
                priority: 0,
                max_attempts: None,
            } => {
                let (start, len) = self.fire_id(fire);
                let (q_start, q_len) = self.queue(queue);
                let (p_start, p_len) = match payload.as_json() {
                    "null" => (0.0, -1.0),
                    json => self.str(json),
                };
                let (h_start, h_len) = if headers.is_empty() {
                    (0.0, -1.0)
                } else {
                    self.str(&to_json(headers))
                };
                self.nums.extend_from_slice(&[
                    ENQUEUE,
                    start,
                    len,
                    q_start,
                    q_len,
                    p_start,
                    p_len,
                    h_start,
                    h_len,
                    epoch.0 as f64,
                ]);
            }
            other => {
                let (start, len) = self.str(&to_json(other));
                self.nums.extend_from_slice(&[JSON, start, len]);
            }
        }
    }

    fn fire_id(&mut self, id: &FireId) -> Range {
        if let Some((last, range)) = &self.last_id
            && last == id
        {
            return *range;
        }
        let before = self.text.len();
        if id.extra.is_none() {
            self.text.push_str(&id.schedule);
            self.text.push('@');
            self.text
                .push_str(itoa::Buffer::new().format(id.nominal.as_millis()));
        } else {
            use std::fmt::Write;
            write!(self.text, "{id}").expect("writing to a String cannot fail");
        }
        let range = self.advance(before);
        self.last_id = Some((id.clone(), range));
        range
    }

    fn queue(&mut self, queue: &Arc<str>) -> Range {
        if let Some((last, range)) = &self.last_queue
            && (Arc::ptr_eq(last, queue) || **last == **queue)
        {
            return *range;
        }
        let range = self.str(queue);
        self.last_queue = Some((queue.clone(), range));
        range
    }

    fn str(&mut self, s: &str) -> Range {
        let before = self.text.len();
        self.text.push_str(s);
        self.advance(before)
    }

    /// The range of what was written since `before` (a byte offset).
    fn advance(&mut self, before: usize) -> Range {
        let start = self.utf16;
        let len = utf16_len(&self.text[before..]);
        self.utf16 += len;
        (start as f64, len as f64)
    }
}

fn utf16_len(s: &str) -> usize {
    if s.is_ascii() {
        s.len()
    } else {
        s.encode_utf16().count()
    }
}
