//! The API client commands end to end against a real daemon with tokens:
//! `chime enqueue` (every flag), `jobs` (filters, pages), `job`,
//! `cancel`, `queues`, `dead`, `redrive`, `purge` and `schedules` (list,
//! show, pause, resume, trigger), as tables and `--json`; and how they
//! fail: a refusal prints the API's code, message and field and exits 3,
//! an unreachable daemon exits 4, a wrong command line exits 2, and the
//! token is never printed.

use crate::api_daemon::{Api, start, text, token_table};
use serde_json::{Value, json};
use std::process::{Command, Output};

const ADMIN: &str = "chime_admin_secret";
const PRODUCER: &str = "chime_producer_secret";

fn config() -> String {
    format!(
        r#"
[[queue]]
name = "emails"
maxAttempts = 1

[[schedule]]
name = "digest"
spec = "0 8 * * *"
tz = "Europe/Paris"
target = {{ queue = "emails", payload = {{ kind = "digest" }} }}
{}{}"#,
        token_table("admin", ADMIN, &["admin"]),
        token_table("producer", PRODUCER, &["enqueue:emails"]),
    )
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Runs `chime ARGS` as the admin; it must succeed: its stdout.
fn ok(api: &Api, args: &[&str]) -> String {
    let out = api.chime(Some(ADMIN), args);
    assert!(out.status.success(), "chime {args:?}: {}", text(&out));
    stdout(&out)
}

/// Runs `chime ARGS`; it must fail with `code`: its stderr.
fn fails(api: &Api, token: Option<&str>, args: &[&str], code: i32) -> String {
    let out = api.chime(token, args);
    assert_eq!(
        out.status.code(),
        Some(code),
        "chime {args:?}: {}",
        text(&out)
    );
    let err = stderr(&out);
    for secret in [ADMIN, PRODUCER] {
        assert!(
            !err.contains(secret) && !stdout(&out).contains(secret),
            "{err}"
        );
    }
    err
}

/// `curl -fsS` as the admin, for the worker side the CLI does not have.
fn curl(api: &Api, path: &str, body: Value) -> Value {
    let out = Command::new("curl")
        .args(["-fsS", "-H", &format!("Authorization: Bearer {ADMIN}")])
        .args(["-d", &body.to_string()])
        .arg(format!("{}{path}", api.base))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn the_client_commands_call_the_api_and_say_why_they_fail() {
    let dir = tempfile::tempdir().unwrap();
    let api = start(dir.path(), &config());

    // enqueue: every flag becomes a field of the EnqueueRequest.
    let before = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    let out = api.chime(
        Some(PRODUCER),
        &[
            "enqueue",
            "emails",
            "--payload",
            r#"{"to": "a@example.com"}"#,
            "--key",
            "welcome-42",
            "--delay",
            "1h",
            "--priority",
            "-3",
            "--max-attempts",
            "4",
            "--header",
            "x-trace=abc",
            "--header",
            "x-tenant=t=1",
        ],
    );
    assert!(out.status.success(), "{}", text(&out));
    let id: u64 = stdout(&out).trim().parse().expect("the id alone");
    let job = api.json(ADMIN, &["job", &id.to_string()]);
    assert_eq!(job["state"], "scheduled");
    assert_eq!(job["payload"], json!({"to": "a@example.com"}));
    assert_eq!(job["key"], "welcome-42");
    assert_eq!(job["priority"], -3);
    assert_eq!(job["maxAttempts"], 4);
    assert_eq!(job["headers"], json!({"x-trace": "abc", "x-tenant": "t=1"}));
    let run_at = job["runAt"].as_i64().unwrap();
    assert!(
        (before + 3_600_000..before + 3_660_000).contains(&run_at),
        "{run_at}"
    );
    let again = api.chime(
        Some(PRODUCER),
        &["enqueue", "emails", "--key", "welcome-42", "--json"],
    );
    let again: Value = serde_json::from_slice(&again.stdout).unwrap();
    assert_eq!(again, json!({"id": id, "deduplicated": true}));
    let text_job = ok(&api, &["job", &id.to_string()]);
    assert!(
        text_job.contains("state        scheduled") && text_job.contains("x-trace"),
        "{text_job}"
    );

    // --run-at, and the payload from a file and from stdin.
    let file = dir.path().join("payload.json");
    std::fs::write(&file, r#"{"from": "file"}"#).unwrap();
    let at = ok(
        &api,
        &[
            "enqueue",
            "emails",
            "--payload-file",
            file.to_str().unwrap(),
            "--run-at",
            "2030-01-01T00:00:00Z",
        ],
    );
    let at = api.json(ADMIN, &["job", at.trim()]);
    assert_eq!(at["runAt"], 1_893_456_000_000_i64);
    assert_eq!(at["payload"], json!({"from": "file"}));
    let piped = Command::new(crate::api_daemon::chime_bin())
        .args(["enqueue", "emails", "--payload-file", "-", "--json"])
        .env("CHIME_URL", &api.base)
        .env("CHIME_TOKEN", ADMIN)
        .stdin(std::fs::File::open(&file).unwrap())
        .output()
        .unwrap();
    let piped: Value = serde_json::from_slice(&piped.stdout).unwrap();
    let now_id = piped["id"].as_u64().unwrap();
    assert_eq!(
        api.json(ADMIN, &["job", &now_id.to_string()])["state"],
        "available"
    );

    // jobs: a table, filters, and pages that continue with --cursor.
    let table = ok(&api, &["jobs", "emails"]);
    let mut lines = table.lines();
    assert!(lines.next().unwrap().starts_with("ID  STATE"), "{table}");
    assert_eq!(lines.count(), 3, "{table}");
    let page = ok(&api, &["jobs", "emails", "--limit", "1"]);
    assert!(page.contains(&format!("more: --cursor {id}")), "{page}");
    let next = api.json(
        ADMIN,
        &[
            "jobs",
            "emails",
            "--limit",
            "1",
            "--cursor",
            &id.to_string(),
        ],
    );
    assert_eq!(next["jobs"][0]["id"].as_u64(), Some(id + 1), "{next}");
    let avail = api.json(ADMIN, &["jobs", "emails", "--state", "available"]);
    assert_eq!(avail["jobs"].as_array().unwrap().len(), 1, "{avail}");
    let keyed = api.json(ADMIN, &["jobs", "emails", "--key", "welcome-42"]);
    assert_eq!(keyed["jobs"][0]["id"].as_u64(), Some(id), "{keyed}");

    // cancel, then cancelling again is refused with the engine's code.
    assert_eq!(
        ok(&api, &["cancel", &id.to_string()]).trim(),
        format!("cancelled job {id}")
    );
    let err = fails(&api, Some(ADMIN), &["cancel", &id.to_string()], 3);
    assert!(
        err.starts_with("error: HTTP 409 invalid_state: ") && err.contains("(field: job)"),
        "{err}"
    );

    // A refusal by scope: code, message, field; exit 3; stdout empty.
    let err = fails(
        &api,
        Some(PRODUCER),
        &["enqueue", "sms", "--payload", "1"],
        3,
    );
    assert!(
        err.starts_with("error: HTTP 403 forbidden: ")
            && err.contains("\"producer\"")
            && err.trim_end().ends_with("(field: queue)"),
        "{err}"
    );
    let err = fails(&api, Some(PRODUCER), &["jobs", "emails", "--json"], 3);
    assert!(err.contains("HTTP 403 forbidden"), "{err}");
    let err = fails(&api, None, &["queues"], 3);
    assert!(err.contains("HTTP 401 unauthorized"), "{err}");
    let err = fails(&api, Some(ADMIN), &["job", "999"], 3);
    assert!(err.contains("HTTP 404 unknown_job"), "{err}");
    // --url and --token as flags override the variables.
    let out = Command::new(crate::api_daemon::chime_bin())
        .args(["queues", "--url", &api.base, "--token", ADMIN])
        .env("CHIME_URL", "http://127.0.0.1:1")
        .env("CHIME_TOKEN", "chime_wrong")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));

    // queues, dead letters, redrive, purge (the queue allows 1 attempt).
    let queues = ok(&api, &["queues"]);
    assert!(queues.lines().any(|l| l.starts_with("emails ")), "{queues}");
    let claimed = curl(&api, "/v1/queues/emails/claim", json!({"worker": "t"}));
    let (job, token) = (&claimed["jobs"][0]["job"], &claimed["jobs"][0]["token"]);
    assert_eq!(job.as_u64(), Some(now_id), "{claimed}");
    let path = format!("/v1/jobs/{job}/fail");
    curl(&api, &path, json!({"token": token, "error": "smtp 550"}));
    let dead = ok(&api, &["dead", "emails"]);
    assert!(
        dead.starts_with("1 dead in emails") && dead.contains("smtp 550"),
        "{dead}"
    );
    let redriven = ok(&api, &["redrive", "emails", "--job", &now_id.to_string()]);
    assert!(redriven.starts_with("redriven: 1"), "{redriven}");
    let claimed = curl(&api, "/v1/queues/emails/claim", json!({"worker": "t"}));
    let token = &claimed["jobs"][0]["token"];
    curl(&api, &path, json!({"token": token, "error": "smtp 550"}));
    let purged = api.json(
        ADMIN,
        &["purge", "emails", "--before", "2100-01-01T00:00:00Z"],
    );
    assert_eq!(purged["count"], 1, "{purged}");
    assert_eq!(ok(&api, &["purge", "emails"]).trim(), "purged: 0");
    assert_eq!(api.json(ADMIN, &["dead", "emails"])["total"], 0);

    // schedules: list (the default), pause with a note, resume, trigger.
    let list = ok(&api, &["schedules"]);
    assert!(
        list.lines()
            .nth(1)
            .is_some_and(|l| l.starts_with("digest  0 8 * * *  Europe/Paris  emails  active")),
        "{list}"
    );
    assert_eq!(
        ok(
            &api,
            &["schedules", "pause", "digest", "--note", "mail down"]
        )
        .trim(),
        "paused digest"
    );
    let show = ok(&api, &["schedules", "show", "digest"]);
    assert!(show.contains("status     paused (mail down)"), "{show}");
    assert_eq!(
        api.json(ADMIN, &["schedules", "list"])["schedules"][0]["status"],
        "paused"
    );
    ok(&api, &["schedules", "resume", "digest"]);
    let fired = api.json(
        ADMIN,
        &["schedules", "trigger", "digest", "--overlap", "allow"],
    );
    let fire = fired["triggered"]["fire"].as_str().unwrap().to_owned();
    assert!(fire.starts_with("digest@"), "{fired}");
    let fired_jobs = api.json(ADMIN, &["jobs", "emails", "--state", "available"]);
    assert_eq!(fired_jobs["jobs"][0]["payload"], json!({"kind": "digest"}));
    let err = fails(
        &api,
        Some(ADMIN),
        &["schedules", "trigger", "digest", "--overlap", "sometimes"],
        3,
    );
    assert!(err.contains("HTTP 400 invalid_request"), "{err}");
    let err = fails(&api, Some(ADMIN), &["schedules", "pause", "nope"], 3);
    assert!(err.contains("HTTP 404 unknown_schedule"), "{err}");

    // The command line: 2, before any request.
    for args in [
        &["enqueue", "emails", "--header", "no-equals"][..],
        &["enqueue", "emails", "--delay", "1.5h"],
        &["enqueue", "emails", "--payload", "{not json"],
        &["enqueue", "emails", "--run-at", "tomorrow"],
        &["enqueue", "emails", "--payload", "1", "--payload-file", "x"],
        &["jobs"],
        &["queues", "--url", "ftp://example.com"],
    ] {
        fails(&api, Some(ADMIN), args, 2);
    }

    // Unreachable: 4.
    let stopped = tempfile::tempdir().unwrap();
    let gone = start(stopped.path(), "");
    let base = gone.base.clone();
    gone.stop();
    let out = Command::new(crate::api_daemon::chime_bin())
        .args(["queues", "--url", &base])
        .env("CHIME_TOKEN", ADMIN)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(4), "{}", text(&out));
    assert!(
        stderr(&out).contains(&format!("GET {base}/v1/queues")),
        "{}",
        text(&out)
    );
    api.stop();
}
