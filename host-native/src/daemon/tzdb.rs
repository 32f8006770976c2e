//! `chime tzdb diff`: before upgrading a deployment, which schedules' next
//! fires move under this binary's tz database compared with the release
//! the deployment's snapshot was computed with. The comparison is core's
//! (`chime_core::tzdb_diff`); this module reads the snapshot (a file, or a
//! data directory no daemon holds), reads a zoneinfo directory into a
//! `TzDatabase` when one is given, and prints the result.

use crate::store::datadir;
use anyhow::{Context, bail};
use chime_core::{
    Engine, MAX_TZIF_BYTES, MAX_TZIF_ZONES, Snapshot, TzDatabase, TzdbDiff, tzdb_diff,
};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Where the snapshot comes from.
pub enum Source<'a> {
    /// A data directory (its snapshot, and the journal since it).
    DataDir(&'a Path),
    /// A snapshot file (`Snapshot::to_json`).
    Snapshot(&'a Path),
}

/// The diff's text (or JSON) for `source`, comparing `next` fires per
/// schedule when `zoneinfo` holds the snapshot's release.
pub fn diff(
    source: Source<'_>,
    zoneinfo: Option<&Path>,
    next: usize,
    json: bool,
) -> anyhow::Result<String> {
    let old = zoneinfo.map(read_zoneinfo).transpose()?;
    let (snapshot, unreplayed) = match source {
        Source::Snapshot(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("reading {}", path.display()))?;
            let snap = Snapshot::from_json(&text)
                .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
            (snap, 0)
        }
        Source::DataDir(dir) => {
            let (base, rec) = datadir::read(dir)?;
            match &old {
                // The journal was written under the snapshot's rules: it
                // replays under them, and only them.
                Some(db) => (replay_under(base, &rec.entries, db)?, 0),
                None => (base, rec.entries.len()),
            }
        }
    };
    let diff = tzdb_diff(&snapshot, old.as_ref(), &TzDatabase::bundled(), next)
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    if json {
        return Ok(serde_json::to_string_pretty(&diff)?);
    }
    Ok(render(&diff, &snapshot, zoneinfo, next, unreplayed))
}

/// The engine state after the journal, replayed under `db`, as a snapshot.
fn replay_under(
    base: Snapshot,
    entries: &[chime_core::JournalEntry],
    db: &TzDatabase,
) -> anyhow::Result<Snapshot> {
    let mut engine = Engine::restore_with(base, db.clone())
        .map_err(|e| anyhow::anyhow!("restore: {e}"))?
        .engine;
    let mut sink = Vec::new();
    for e in entries {
        // A rejected input is part of the history (as in recovery).
        let _ = engine.handle(e.now, e.input.clone());
        engine.drain_commands(&mut sink);
        sink.clear();
    }
    Ok(engine.snapshot())
}

/// Every TZif file under `dir` (a zoneinfo tree such as
/// `/usr/share/zoneinfo`, or `Zone/Name` files), named by its path in it;
/// the release from `+VERSION` or `tzdata.zi`'s `# version` line.
pub fn read_zoneinfo(dir: &Path) -> anyhow::Result<TzDatabase> {
    if !dir.is_dir() {
        bail!(
            "{} is not a directory (name a zoneinfo directory)",
            dir.display()
        );
    }
    let mut zones: Vec<(String, Vec<u8>)> = Vec::new();
    let mut todo: Vec<PathBuf> = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        let mut entries: Vec<_> = std::fs::read_dir(&d)
            .with_context(|| format!("reading {}", d.display()))?
            .collect::<Result<_, _>>()?;
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            let path = e.path();
            let name = path
                .strip_prefix(dir)
                .unwrap_or(&path)
                .to_string_lossy()
                .into_owned();
            // `posix/` and `right/` repeat the tree (`right/` with leap seconds).
            if name == "posix" || name == "right" {
                continue;
            }
            let kind = e.file_type()?;
            if kind.is_dir() {
                todo.push(path);
                continue;
            }
            if !kind.is_file() && !kind.is_symlink() {
                continue;
            }
            let len = std::fs::metadata(&path)?.len();
            if len > MAX_TZIF_BYTES as u64 {
                continue;
            }
            let bytes =
                std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?;
            if bytes.starts_with(b"TZif") {
                if zones.len() >= MAX_TZIF_ZONES {
                    bail!("{}: more than {MAX_TZIF_ZONES} zones", dir.display());
                }
                zones.push((name, bytes));
            }
        }
    }
    if zones.is_empty() {
        bail!("{} holds no TZif files", dir.display());
    }
    let version = release_of(dir).unwrap_or_else(|| "unknown".to_string());
    TzDatabase::from_tzif(&version, zones).map_err(|e| anyhow::anyhow!("{}: {e}", dir.display()))
}

/// The release a zoneinfo directory says it holds.
fn release_of(dir: &Path) -> Option<String> {
    if let Ok(v) = std::fs::read_to_string(dir.join("+VERSION")) {
        return v
            .lines()
            .next()
            .map(|l| l.trim().to_string())
            .filter(|l| !l.is_empty());
    }
    let zi = std::fs::read_to_string(dir.join("tzdata.zi")).ok()?;
    zi.lines()
        .next()?
        .strip_prefix("# version ")
        .map(|v| v.trim().to_string())
}

fn render(
    diff: &TzdbDiff,
    snapshot: &Snapshot,
    zoneinfo: Option<&Path>,
    next: usize,
    unreplayed: usize,
) -> String {
    let mut s = String::new();
    let from = diff
        .snapshot_tzdb
        .as_deref()
        .unwrap_or("an unrecorded release");
    let _ = writeln!(
        s,
        "snapshot at {} computed with tzdb {from}; this binary has {}",
        snapshot.clock(),
        diff.tzdb
    );
    if unreplayed > 0 {
        let _ = writeln!(
            s,
            "note: {unreplayed} journal entries after the snapshot are not included \
             (give --zoneinfo to replay them under the snapshot's rules)"
        );
    }
    match (zoneinfo, &diff.compared_tzdb) {
        (Some(dir), Some(v)) => {
            let _ = writeln!(
                s,
                "next {next} fires of {} zoned schedules, {v} rules from {}",
                diff.schedules,
                dir.display()
            );
            if diff.snapshot_tzdb.as_deref().is_some_and(|x| x != v) {
                let _ = writeln!(s, "warning: the snapshot names {from}, the directory {v}");
            }
        }
        _ => {
            let _ = writeln!(
                s,
                "the pending fire of {} zoned schedules (give --zoneinfo with the {from} \
                 rules to compare later fires)",
                diff.schedules
            );
        }
    }
    if diff.moves.is_empty() {
        let _ = writeln!(s, "nothing moves");
        return s;
    }
    let old = diff
        .compared_tzdb
        .as_deref()
        .or(diff.snapshot_tzdb.as_deref())
        .unwrap_or("old");
    let rows: Vec<[String; 6]> = diff
        .moves
        .iter()
        .map(|m| {
            [
                m.schedule.clone(),
                m.zone.clone(),
                m.civil.clone(),
                m.old_at.to_string(),
                m.new_at.to_string(),
                moved(m.moved_ms()),
            ]
        })
        .collect();
    let head = [
        "schedule",
        "zone",
        "civil",
        old,
        diff.tzdb.as_str(),
        "moved",
    ]
    .map(str::to_string);
    let widths: Vec<usize> = (0..6)
        .map(|i| {
            rows.iter()
                .chain([&head])
                .map(|r| r[i].len())
                .max()
                .unwrap_or(0)
        })
        .collect();
    for r in std::iter::once(&head).chain(&rows) {
        let line: Vec<String> = r
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:w$}"))
            .collect();
        let _ = writeln!(s, "{}", line.join("  ").trim_end());
    }
    let mut names: Vec<&str> = diff.moves.iter().map(|m| m.schedule.as_str()).collect();
    names.dedup();
    let (fires, schedules) = (diff.moves.len(), names.len());
    let _ = writeln!(
        s,
        "{fires} {} of {schedules} {} {}",
        if fires == 1 { "fire" } else { "fires" },
        if schedules == 1 {
            "schedule"
        } else {
            "schedules"
        },
        if fires == 1 { "moves" } else { "move" },
    );
    s
}

/// `-1h`, `+30m`, `-1h30m`, `+45s`.
fn moved(ms: i64) -> String {
    let sign = if ms < 0 { '-' } else { '+' };
    let secs = ms.unsigned_abs() / 1000;
    let (h, m, sec) = (secs / 3600, secs / 60 % 60, secs % 60);
    let mut s = sign.to_string();
    if h > 0 {
        let _ = write!(s, "{h}h");
    }
    if m > 0 {
        let _ = write!(s, "{m}m");
    }
    if sec > 0 || secs == 0 {
        let _ = write!(s, "{sec}s");
    }
    s
}
