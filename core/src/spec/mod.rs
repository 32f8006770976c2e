//! Schedule specs: `@every`, cron and `@at`, evaluated in a time zone under a
//! DST policy.
//!
//! A [`Spec`] is parsed once and then answers [`Spec::next_after`] without
//! allocating. Cron fields are bitsets and the search jumps from field to
//! field, never scanning minute by minute; zones come from the tz database
//! bundled into the binary so every machine computes the same instants.

mod at;
mod count;
#[cfg_attr(not(feature = "testing"), allow(unreachable_pub))] // re-exported by `testing`
pub(crate) mod cron;
mod dst;
#[cfg_attr(not(feature = "testing"), allow(unreachable_pub))] // re-exported by `testing`
pub(crate) mod duration;
mod error;
mod every;
pub(crate) mod meaning;
mod posix;
pub(crate) mod preview;
mod tzdata;
mod tzdb;
mod tzif;
pub(crate) mod zone;

pub use dst::{DstPolicy, FoldPolicy, GapPolicy};
pub use error::SpecError;
pub use preview::{DstNote, Occurrence};
pub use tzdb::{MAX_TZIF_BYTES, MAX_TZIF_ZONES, TzDatabase};

use crate::time::Timestamp;

/// How a spec is interpreted: zone, DST policy and limits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpecOptions {
    /// IANA zone for cron and civil `@at` specs; `None` means UTC. A
    /// `CRON_TZ=`/`TZ=` prefix in the spec supplies it when this is `None`.
    pub tz: Option<String>,
    /// DST handling for cron specs.
    pub dst: DstPolicy,
    /// Smallest accepted cadence (`EngineConfig::min_interval_ms`): of an
    /// `@every` spec, and the tightest gap of a cron spec.
    pub min_interval_ms: i64,
    /// How far ahead [`Spec::next_after`] searches before giving up.
    pub horizon_years: u32,
}

impl Default for SpecOptions {
    fn default() -> Self {
        SpecOptions {
            tz: None,
            dst: DstPolicy::default(),
            min_interval_ms: 1000,
            horizon_years: 100,
        }
    }
}

/// A parsed, validated schedule spec.
#[derive(Clone, Debug)]
pub struct Spec {
    kind: SpecKind,
    horizon_years: u32,
}

#[derive(Clone, Debug)]
enum SpecKind {
    Every(every::Every),
    At(at::At),
    Cron(Box<dst::ZonedCron>),
}

/// The version of the IANA tz database bundled into this build, e.g. `2025b`.
pub fn tzdb_version() -> &'static str {
    tzdata::VERSION
}

impl Spec {
    /// Parses `text` under `opts`. Never consults a clock; use
    /// [`Spec::next_after`] with the current time to check that it fires.
    pub fn parse(text: &str, opts: &SpecOptions) -> Result<Spec, SpecError> {
        Spec::parse_with(text, opts, &TzDatabase::bundled())
    }

    /// [`Spec::parse`] with zones from `db` rather than the bundled
    /// database (an engine made with [`crate::Engine::with_tzdb`]).
    pub fn parse_with(text: &str, opts: &SpecOptions, db: &TzDatabase) -> Result<Spec, SpecError> {
        let text = text.trim();
        // Both keywords start with '@'; cron text rarely does.
        let keyword = text.starts_with('@');
        let kind = if keyword && let Some(rest) = strip_keyword(text, "@every") {
            // `@every` is zone-independent, but a zone that does not exist
            // is still a mistake to refuse (`chime validate` warns that a
            // valid one has no effect).
            if let Some(name) = &opts.tz {
                db.zone(name)?;
            }
            SpecKind::Every(every::Every::parse(rest, opts.min_interval_ms)?)
        } else if keyword && let Some(rest) = strip_keyword(text, "@at") {
            SpecKind::At(at::parse(rest, opts, db)?)
        } else {
            SpecKind::Cron(Box::new(dst::ZonedCron::parse(text, opts, db)?))
        };
        Ok(Spec {
            kind,
            horizon_years: opts.horizon_years,
        })
    }

    /// The first occurrence strictly after `t`, or `None` if there is none
    /// within the horizon (or before year 9999 ends).
    pub fn next_after(&self, t: Timestamp) -> Option<Timestamp> {
        match &self.kind {
            SpecKind::Every(e) => e.next_after(t),
            SpecKind::At(a) => (a.at > t).then_some(a.at),
            SpecKind::Cron(c) => c.next_after(t, self.horizon_years).map(|(at, _)| at),
        }
    }

    /// The first occurrence strictly after `t`, or why there is none: an
    /// `@at` in the past ([`SpecError::AtInPast`]) or nothing within the
    /// horizon ([`SpecError::SpecNeverFires`]). What an upsert, `validate`
    /// and `preview` refuse a spec with.
    pub fn first_after(&self, t: Timestamp) -> Result<Timestamp, SpecError> {
        self.next_after(t)
            .ok_or_else(|| self.no_occurrence_after(t))
    }

    /// The error for a spec with no occurrence after `t` (see
    /// [`Spec::first_after`]).
    pub fn no_occurrence_after(&self, t: Timestamp) -> SpecError {
        match &self.kind {
            SpecKind::At(a) if a.at <= t => SpecError::AtInPast { at: a.at, after: t },
            _ => SpecError::SpecNeverFires {
                horizon_years: self.horizon_years,
            },
        }
    }

    /// Whether the schedule's `tz` changes when this spec fires: `false`
    /// for `@every`, whose grid is absolute time (a host may warn that a
    /// `tz` given with it has no effect).
    pub fn uses_zone(&self) -> bool {
        !matches!(self.kind, SpecKind::Every(_))
    }

    /// Number of boundaries `b` with `from <= b <= until` (`from` need not
    /// be a boundary); 0 if `until < from`.
    ///
    /// Exactly the length of the `next_after` iteration from
    /// [`Spec::first_at_or_after`]`(from)` up to `until`, under the same
    /// zone, DST policy and horizon, but computed without visiting the
    /// boundaries (catch-up reports skips after any clock jump): O(1) for
    /// `@every` and `@at`, per month and per zone transition for cron
    /// (about a microsecond per year of range).
    pub fn count_between(&self, from: Timestamp, until: Timestamp) -> u64 {
        count::count_between(self, from, until)
    }

    /// The boundary preceded by exactly `n` boundaries at or after `from`
    /// (`n = 0`: the first boundary `>= from`), or `None` if the
    /// `next_after` iteration ends first. Same cost as a count over the
    /// range it spans, times a small factor for the search.
    pub fn nth_from(&self, from: Timestamp, n: u64) -> Option<Timestamp> {
        count::nth_from(self, from, n)
    }

    /// The first boundary at or after `t`: `next_after(t - 1 ms)`, also for
    /// `t` = [`Timestamp::MIN`] (the epoch), where `t - 1 ms` does not
    /// exist and the epoch itself may be a boundary.
    pub fn first_at_or_after(&self, t: Timestamp) -> Option<Timestamp> {
        count::first_at_or_after(self, t)
    }

    /// The next `n` occurrences strictly after `from`, with civil time, UTC
    /// offset and a DST note where one applies.
    pub fn preview(&self, from: Timestamp, n: usize) -> Vec<Occurrence> {
        preview::preview(self, from, n)
    }

    /// The cadence of an `@every` spec, whose boundaries form an arithmetic
    /// grid (catch-up counts missed boundaries without walking them).
    pub fn every_ms(&self) -> Option<i64> {
        match &self.kind {
            SpecKind::Every(e) => Some(e.interval_ms()),
            _ => None,
        }
    }

    /// Whether the spec is a *fixed-time* cron spec: its second, minute and
    /// hour fields each select exactly one value. Under `dst: auto` such a spec
    /// shifts out of a spring-forward gap and fires once in a repeated hour.
    pub fn is_fixed_time(&self) -> bool {
        matches!(&self.kind, SpecKind::Cron(c) if c.is_fixed_time())
    }

    /// The zone the spec is evaluated in (`UTC` for `@every`; for `@at`, the
    /// zone a civil time was read in, which previews display).
    pub fn zone_name(&self) -> &str {
        match &self.kind {
            SpecKind::Cron(c) => c.zone_name(),
            SpecKind::At(a) => a.zone.name(),
            SpecKind::Every(_) => "UTC",
        }
    }
}

/// `@every 5s` → `Some("5s")`; requires whitespace after the keyword.
fn strip_keyword<'a>(text: &'a str, kw: &str) -> Option<&'a str> {
    let head = text.get(..kw.len())?;
    if !head.eq_ignore_ascii_case(kw) {
        return None;
    }
    let rest = &text[kw.len()..];
    rest.starts_with(char::is_whitespace)
        .then(|| rest.trim_start())
}
