//! Whose job an id is. The HTTP API, the CLI and the dashboard take a job
//! id alone (`/v1/jobs/{id}/complete`, `cancel`, `get`), so in a daemon
//! with transports every backend's ids must be disjoint, and the id must
//! say which backend holds the job without asking each one (a job id of
//! one backend must never complete another's job with a matching
//! token).
//!
//! The split, 53 bits in all (every id is exact as a JSON number):
//!
//! | ids | backend |
//! |---|---|
//! | `1 ..< 2^40` (tag 0) | the engine (its ids count from 1) |
//! | tag `1..=8190` | a NATS JetStream queue: the tag is FNV-1a of its work stream's name, the low 40 bits its stream sequence |
//! | tag `8191` | Redis Streams: the low 40 bits are the transport's own counter (`chime:seq:job`), the number in its keys and message ids |

use chime_core::JobId;

/// Bits below the tag.
pub const SEQ_BITS: u32 = 40;
/// The low part of an id.
pub const SEQ_MASK: u64 = (1 << SEQ_BITS) - 1;
/// The highest NATS tag; tags are `1..=NATS_TAGS`.
pub const NATS_TAGS: u64 = 8190;
/// Redis's tag.
pub const REDIS_TAG: u64 = 8191;

/// Who holds a job, by its id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Owner {
    /// The engine.
    Engine,
    /// A NATS queue, by its tag.
    Nats(u64),
    /// The Redis transport.
    Redis,
}

/// The owner of `job`.
pub fn owner(job: JobId) -> Owner {
    match job.0 >> SEQ_BITS {
        0 => Owner::Engine,
        REDIS_TAG => Owner::Redis,
        tag => Owner::Nats(tag),
    }
}

/// A Redis job's id from the transport's own number.
pub fn redis_job(n: u64) -> JobId {
    JobId(REDIS_TAG << SEQ_BITS | (n & SEQ_MASK))
}

/// The transport's own number of a Redis job id; `None` if the id is not
/// Redis's.
pub fn redis_local(job: JobId) -> Option<u64> {
    (owner(job) == Owner::Redis).then_some(job.0 & SEQ_MASK)
}

/// The tag of a NATS work stream's job ids: FNV-1a of its name, so every
/// process gives a queue's jobs the same ids.
pub fn nats_tag(stream: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in stream.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h % NATS_TAGS + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_backend_has_its_own_ids_and_each_fits_a_json_number() {
        assert_eq!(owner(JobId(1)), Owner::Engine);
        assert_eq!(owner(JobId(SEQ_MASK)), Owner::Engine);
        let r = redis_job(1);
        assert_eq!(owner(r), Owner::Redis);
        assert_eq!(redis_local(r), Some(1));
        assert_eq!(redis_local(JobId(1)), None, "an engine id is not Redis's");
        assert!(redis_job(SEQ_MASK).0 < 1 << 53);
        for stream in ["SCHEDULER_PLANNER", "SCHEDULER_RUNNER", "", "x"] {
            let t = nats_tag(stream);
            assert!((1..=NATS_TAGS).contains(&t), "{stream}: {t}");
            let id = JobId(t << SEQ_BITS | SEQ_MASK);
            assert_eq!(owner(id), Owner::Nats(t));
            assert!(id.0 < 1 << 53);
        }
        assert_ne!(nats_tag("SCHEDULER_PLANNER"), nats_tag("SCHEDULER_RUNNER"));
    }
}
