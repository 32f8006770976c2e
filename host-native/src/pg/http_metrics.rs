//! `/metrics` on a replica: Prometheus text — queue depth by state and
//! jobs by outcome (rows of `chime_jobs`), fires and skips
//! (`chime_fires`, `chime_skips`), the leader's epoch, this replica's
//! terms, lease renewal latency, database errors, the inbox.

use super::http::PgReads;
use std::fmt::Write as _;

/// Prometheus label value escaping.
fn label(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// The Prometheus text of `/metrics` on a replica; `Err` when the
/// database did not answer.
pub(super) async fn render(app: &PgReads) -> Result<String, String> {
    let q = app.q();
    let name = app.name.clone();
    type Counts = Vec<(String, String, i64)>;
    // One statement, so one snapshot: a fire counted here has its job
    // counted too (separate statements could see the fire's commit land
    // between them).
    let read = app
        .with_client(async |c| {
            c.query(
                &format!(
                    "SELECT 'jobs', queue, CASE WHEN state = 'available' AND run_at > now()
                            THEN 'scheduled' ELSE state END, count(*)
                     FROM {q}.chime_jobs GROUP BY 2, 3
                     UNION ALL
                     SELECT 'fires', schedule, kind, count(*) FROM {q}.chime_fires
                     WHERE engine = $1 GROUP BY 2, 3
                     UNION ALL
                     SELECT 'skips', schedule, reason, sum(count)::bigint FROM {q}.chime_skips
                     WHERE engine = $1 GROUP BY 2, 3
                     UNION ALL
                     SELECT 'inbox', '', '', count(*) FROM {q}.chime_inbox
                     WHERE engine = $1 AND applied_at IS NULL
                     ORDER BY 1, 2, 3"
                ),
                &[&name],
            )
            .await
        })
        .await;
    let leader = app.leader_row().await;
    let (mut jobs, mut fires, mut skips, mut inbox) =
        (Counts::new(), Counts::new(), Counts::new(), 0);
    for r in read? {
        let (set, a, b, n): (&str, String, String, i64) = (r.get(0), r.get(1), r.get(2), r.get(3));
        match set {
            "jobs" => jobs.push((a, b, n)),
            "fires" => fires.push((a, b, n)),
            "skips" => skips.push((a, b, n)),
            _ => inbox = n,
        }
    }
    let me = app.status.view();
    let mut t = String::new();
    // Each line is the name, then its suffix (labels, or `_sum`/`_count`).
    let mut metric = |name: &str, kind: &str, help: &str, lines: &[(String, String)]| {
        let _ = writeln!(t, "# HELP {name} {help}\n# TYPE {name} {kind}");
        for (labels, value) in lines {
            let _ = writeln!(t, "{name}{labels} {value}");
        }
    };
    let one = |v: String| vec![(String::new(), v)];
    let by = |rows: &Counts, a: &str, b: &str| -> Vec<(String, String)> {
        rows.iter()
            .map(|(x, y, n)| {
                (
                    format!("{{{a}=\"{}\",{b}=\"{}\"}}", label(x), label(y)),
                    n.to_string(),
                )
            })
            .collect()
    };
    metric(
        "chime_replica_leader",
        "gauge",
        "1 while this replica holds the leader lease and runs the engine.",
        &one(u8::from(me.leading).to_string()),
    );
    metric(
        "chime_database_up",
        "gauge",
        "1 when the database answered this scrape.",
        &one("1".into()),
    );
    if let Ok(Some(row)) = &leader {
        metric(
            "chime_leader_epoch",
            "gauge",
            "The lease's epoch: every takeover adds one (its increase counts leader changes).",
            &one(row.epoch.to_string()),
        );
        metric(
            "chime_leader_lease_expires_at_seconds",
            "gauge",
            "When the leader's lease runs out unless renewed (database clock, Unix seconds).",
            &one(format!("{:.3}", row.lease_expires_at_ms as f64 / 1000.0)),
        );
        metric(
            "chime_leader_live",
            "gauge",
            "1 while some replica holds an unexpired lease.",
            &one(u8::from(row.live).to_string()),
        );
    }
    metric(
        "chime_replica_terms_total",
        "counter",
        "Terms this replica has begun as leader.",
        &one(me.terms.to_string()),
    );
    metric(
        "chime_lease_renew_seconds",
        "summary",
        "Round trips of this replica's successful lease renewals.",
        &[
            (
                "_sum".into(),
                format!("{:.6}", me.renew_micros as f64 / 1e6),
            ),
            ("_count".into(), me.renewals.to_string()),
        ],
    );
    metric(
        "chime_lease_renew_last_seconds",
        "gauge",
        "The last renewal's round trip.",
        &one(format!("{:.6}", me.renew_last_micros as f64 / 1e6)),
    );
    metric(
        "chime_database_errors_total",
        "counter",
        "Failed statements and lost sessions this replica logged.",
        &one(me.db_errors.to_string()),
    );
    metric(
        "chime_inbox_pending",
        "gauge",
        "Schedule and queue inputs waiting for the leader.",
        &one(inbox.to_string()),
    );
    metric(
        "chime_inbox_applied_total",
        "counter",
        "Inbox inputs this replica applied as leader.",
        &one(me.inbox_applied.to_string()),
    );
    metric(
        "chime_jobs",
        "gauge",
        "Job rows by queue and state: depth (available, scheduled, claimed) and outcomes \
         kept by retention (completed, dead, dropped, cancelled).",
        &by(&jobs, "queue", "state"),
    );
    metric(
        "chime_fires_total",
        "counter",
        "Fires delivered by the leaders, by schedule and kind.",
        &by(&fires, "schedule", "kind"),
    );
    metric(
        "chime_skips_total",
        "counter",
        "Boundaries skipped, by schedule and reason.",
        &by(&skips, "schedule", "reason"),
    );
    Ok(t)
}
