//! `/metrics` on a replica: Prometheus text — queue depth by state
//! (`chime_queue_depth{transport="postgres"}`, the embedded daemon's
//! gauge and states), job rows by state (`chime_jobs`), fires and skips
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
                     SELECT 'queues', name, '', 0 FROM {q}.chime_queues
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
    let mut queues = std::collections::BTreeSet::new();
    for r in read? {
        let (set, a, b, n): (&str, String, String, i64) = (r.get(0), r.get(1), r.get(2), r.get(3));
        match set {
            "jobs" => jobs.push((a, b, n)),
            "fires" => fires.push((a, b, n)),
            "skips" => skips.push((a, b, n)),
            "queues" => {
                queues.insert(a);
            }
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
        "chime_queue_depth",
        "gauge",
        "Jobs per queue, state (scheduled, available, claimed, dead) and where the queue \
         lives (transport: postgres, the job tables), read at scrape time.",
        &depth(&jobs, &queues),
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

/// The depth states, in the embedded gauge's order.
const DEPTH_STATES: [&str; 4] = ["scheduled", "available", "claimed", "dead"];

/// `chime_queue_depth`'s lines from the job rows by (queue, state): the
/// four states of every declared queue (0 when it has no such rows) and
/// of any queue with rows (an implicit one), in the embedded daemon's
/// label order.
fn depth(
    jobs: &[(String, String, i64)],
    declared: &std::collections::BTreeSet<String>,
) -> Vec<(String, String)> {
    let mut queues = declared.clone();
    queues.extend(jobs.iter().map(|(q, _, _)| q.clone()));
    let mut out = Vec::new();
    for q in &queues {
        for state in DEPTH_STATES {
            let n: i64 = jobs
                .iter()
                .filter(|(jq, js, _)| jq == q && js == state)
                .map(|(_, _, n)| n)
                .sum();
            out.push((
                format!(
                    "{{queue=\"{}\",state=\"{state}\",transport=\"postgres\"}}",
                    label(q)
                ),
                n.to_string(),
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depth_has_every_state_of_every_queue() {
        let jobs = vec![
            ("a".to_owned(), "available".to_owned(), 2),
            ("a".to_owned(), "completed".to_owned(), 5),
            ("b".to_owned(), "dead".to_owned(), 1),
        ];
        let declared = ["a".to_owned(), "c".to_owned()].into_iter().collect();
        let lines = depth(&jobs, &declared);
        assert_eq!(
            lines.len(),
            12,
            "a, b (implicit, has rows) and c: four states each"
        );
        let get = |q: &str, s: &str| {
            let want = format!("{{queue=\"{q}\",state=\"{s}\",transport=\"postgres\"}}");
            lines
                .iter()
                .find(|(l, _)| *l == want)
                .map(|(_, v)| v.clone())
        };
        assert_eq!(get("a", "available").as_deref(), Some("2"));
        assert_eq!(get("a", "scheduled").as_deref(), Some("0"));
        assert_eq!(get("b", "dead").as_deref(), Some("1"));
        assert_eq!(get("c", "claimed").as_deref(), Some("0"));
        assert!(
            get("a", "completed").is_none(),
            "retained outcomes are not depth"
        );
    }
}
