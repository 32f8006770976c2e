//! How the client commands print a reply for people: tables padded to
//! their widest cell, timestamps as RFC 3339, `-` for what is absent.
//! `--json` bypasses all of it (the API's reply as it came).

use chime_core::Timestamp;
use serde_json::Value;

/// A millisecond timestamp as RFC 3339, `-` when absent.
pub(super) fn time(v: &Value) -> String {
    v.as_i64()
        .and_then(|ms| Timestamp::from_millis(ms).ok())
        .map_or_else(|| "-".to_owned(), |t| t.to_string())
}

/// A value for a table cell: strings bare, null as `-`.
pub(super) fn cell(v: &Value) -> String {
    match v {
        Value::Null => "-".into(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// `k=v, k=v` of an object (one level deep: `{"variant": {…}}` shows
/// the variant's fields).
pub(super) fn summary(v: &Value) -> String {
    let obj = match v.as_object() {
        Some(o) if o.len() == 1 => o.values().next().and_then(Value::as_object).unwrap_or(o),
        Some(o) => o,
        None => return cell(v),
    };
    obj.iter()
        .map(|(k, v)| format!("{k}={}", cell(v)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Columns padded to their widest cell.
pub(super) fn table(headers: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (w, c) in widths.iter_mut().zip(row) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |cells: Vec<String>| {
        let padded: Vec<String> = cells
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        padded.join("  ").trim_end().to_owned()
    };
    let mut out = vec![line(headers.iter().map(|h| (*h).to_owned()).collect())];
    out.extend(rows.iter().map(|r| line(r.clone())));
    out.join("\n") + "\n"
}

pub(super) fn jobs_table(jobs: &Value) -> String {
    let rows: Vec<Vec<String>> = jobs
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .map(|j| {
            vec![
                cell(&j["id"]),
                cell(&j["state"]),
                format!("{}/{}", cell(&j["attempt"]), cell(&j["maxAttempts"])),
                cell(&j["priority"]),
                time(&j["runAt"]),
                cell(&j["key"]),
                cell(&j["lastError"]),
            ]
        })
        .collect();
    table(
        &[
            "ID",
            "STATE",
            "ATTEMPT",
            "PRIORITY",
            "RUN AT",
            "KEY",
            "LAST ERROR",
        ],
        &rows,
    )
}

pub(super) fn job_text(j: &Value) -> String {
    let fields = [
        ("id", cell(&j["id"])),
        ("queue", cell(&j["queue"])),
        ("state", cell(&j["state"])),
        (
            "attempt",
            format!("{} of {}", cell(&j["attempt"]), cell(&j["maxAttempts"])),
        ),
        ("priority", cell(&j["priority"])),
        ("key", cell(&j["key"])),
        ("run at", time(&j["runAt"])),
        ("lease until", time(&j["leaseDeadline"])),
        ("worker", cell(&j["worker"])),
        ("finished at", time(&j["finishedAt"])),
        ("last error", cell(&j["lastError"])),
        ("fire", summary(&j["fire"])),
        ("headers", cell(&j["headers"])),
        ("payload", cell(&j["payload"])),
    ];
    fields
        .iter()
        .map(|(k, v)| format!("{k:<12} {v}"))
        .collect::<Vec<_>>()
        .join("\n")
}

pub(super) fn queues_table(queues: &Value) -> String {
    let keys = [
        "scheduled",
        "available",
        "claimed",
        "completed",
        "dead",
        "cancelled",
    ];
    let rows: Vec<Vec<String>> = queues
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .map(|q| {
            let mut row = vec![cell(&q["queue"])];
            row.extend(keys.iter().map(|k| cell(&q[*k])));
            row
        })
        .collect();
    table(
        &[
            "QUEUE",
            "SCHEDULED",
            "AVAILABLE",
            "CLAIMED",
            "COMPLETED",
            "DEAD",
            "CANCELLED",
        ],
        &rows,
    )
}

pub(super) fn schedules_table(schedules: &Value) -> String {
    let rows: Vec<Vec<String>> = schedules
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .map(|s| {
            vec![
                cell(&s["name"]),
                cell(&s["spec"]),
                cell(&s["tz"]),
                cell(&s["queue"]),
                cell(&s["status"]),
                time(&s["nextDueAt"]),
                cell(&s["fires"]),
                cell(&s["skipped"]),
            ]
        })
        .collect();
    table(
        &[
            "NAME", "SPEC", "TZ", "QUEUE", "STATUS", "NEXT", "FIRES", "SKIPPED",
        ],
        &rows,
    )
}

pub(super) fn schedule_text(r: &Value) -> String {
    let s = &r["schedule"];
    let def = &s["def"];
    let status = match s["pauseNote"].as_str() {
        Some(note) => format!("{} ({note})", cell(&s["status"])),
        None => cell(&s["status"]),
    };
    let in_flight = s["inFlight"].as_array().map_or(0, Vec::len);
    let fields = [
        ("name", cell(&def["name"])),
        ("spec", cell(&def["spec"])),
        ("tz", cell(&def["tz"])),
        ("queue", cell(&def["target"]["queue"])),
        ("overlap", cell(&def["overlap"])),
        ("status", status),
        ("version", cell(&s["version"])),
        ("fires", cell(&s["fires"])),
        ("skipped", cell(&s["skipped"])),
        ("in flight", in_flight.to_string()),
        ("next due", time(&s["nextDueAt"])),
    ];
    let mut out: Vec<String> = fields.iter().map(|(k, v)| format!("{k:<10} {v}")).collect();
    out.push("next fires:".to_owned());
    for o in r["nextFires"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
    {
        out.push(format!("  {}  {}", time(&o["at"]), cell(&o["civil"])));
    }
    out.join("\n")
}
