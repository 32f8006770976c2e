//! Zones from the bundled tz database. STUB (helper B).
