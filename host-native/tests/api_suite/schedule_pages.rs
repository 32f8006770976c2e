//! `GET /v1/schedules` in pages: without `limit` the whole list (as
//! before pages), a cursor walk over every page returns every schedule
//! exactly once in name order, `q` (name, spec, queue or zone, ignoring
//! case) and `status` filter on the server with `total` counting every
//! match, a token limited to `a*` pages through its own schedules only
//! (full pages, its own `total`), and a malformed query is 400 with the
//! API's error body. In Postgres mode the requests alternate between the
//! replicas, each answering from its copy of the leader's engine.

use super::deploy::{Deployment, Store};
use serde_json::Value;
use std::time::Duration;

/// Schedules `a-00`..`a-11` and `b-00`..`b-10`: the even ones in New
/// York on queue `qa`, the odd ones in UTC on `qb`; every third one
/// `@every 1h`, the others yearly cron (nothing changes state by itself).
fn config() -> String {
    let mut t = String::from("[[queue]]\nname = \"qa\"\n\n[[queue]]\nname = \"qb\"\n");
    for (prefix, n) in [("a", 12), ("b", 11)] {
        for i in 0..n {
            let spec = if i % 3 == 0 { "@every 1h" } else { "0 0 1 1 *" };
            let (tz, queue) = if i % 2 == 0 {
                ("\ntz = \"America/New_York\"", "qa")
            } else {
                ("", "qb")
            };
            t.push_str(&format!(
                "\n[[schedule]]\nname = \"{prefix}-{i:02}\"\nspec = \"{spec}\"{tz}\ntarget = {{ queue = \"{queue}\" }}\n"
            ));
        }
    }
    t
}

fn names(page: &Value) -> Vec<String> {
    page["schedules"]
        .as_array()
        .unwrap_or_else(|| panic!("no schedules in {page}"))
        .iter()
        .map(|s| s["name"].as_str().unwrap().to_owned())
        .collect()
}

/// Every page of `query` with page size `limit`, walked by the cursor as
/// `token`: the names in order, and each page's `total`.
async fn walk(
    d: &Deployment,
    token: Option<&str>,
    query: &str,
    limit: usize,
) -> (Vec<String>, Vec<u64>) {
    let mut all = Vec::new();
    let mut totals = Vec::new();
    let mut after: Option<String> = None;
    for _ in 0..100 {
        let mut path = format!("/v1/schedules?limit={limit}{query}");
        if let Some(a) = &after {
            path.push_str(&format!("&after={a}"));
        }
        let (status, page) = d.send("GET", &path, token, None).await;
        assert_eq!(status, 200, "{path}: {page}");
        let got = names(&page);
        assert!(got.len() <= limit, "{path}: {page}");
        totals.push(page["total"].as_u64().unwrap());
        match page["next"].as_str() {
            Some(n) => {
                assert_eq!(got.len(), limit, "a page before the last is full: {page}");
                assert_eq!(Some(n), got.last().map(String::as_str), "{page}");
                after = Some(n.to_owned());
                all.extend(got);
            }
            None => {
                assert!(page["next"].is_null(), "{page}");
                all.extend(got);
                return (all, totals);
            }
        }
    }
    panic!("the walk did not end");
}

/// Until every node answers `path` (as the admin) with a body `ok` holds
/// for: each replica reads its own copy of the leader's engine.
async fn settled(d: &Deployment, path: &str, ok: impl Fn(&Value) -> bool) {
    for i in 0..d.len() {
        let seen = d
            .eventually(Duration::from_secs(10), || async {
                let (status, v) = d.send_at(i, "GET", path, super::deploy::ADMIN, None).await;
                status == 200 && ok(&v)
            })
            .await;
        assert!(
            seen,
            "node {i} never showed {path} as expected\n{}",
            d.logs()
        );
    }
}

pub async fn run(store: Store) {
    let d = Deployment::start(store, &config()).await;
    let every: Vec<String> = (0..12)
        .map(|i| format!("a-{i:02}"))
        .chain((0..11).map(|i| format!("b-{i:02}")))
        .collect();
    settled(&d, "/v1/schedules", |v| v["total"] == 23).await;

    // Without `limit`: the whole list, as before pages.
    let (status, whole) = d.api("GET", "/v1/schedules", None).await;
    assert_eq!(status, 200, "{whole}");
    assert_eq!(names(&whole), every, "{whole}");
    assert!(whole["next"].is_null(), "{whole}");
    assert_eq!(whole["total"], 23);

    // A cursor walk returns every schedule once, in order, for any size.
    for limit in [1, 5, 23, 1000] {
        let (walked, totals) = walk(&d, Some("tok-read"), "", limit).await;
        assert_eq!(walked, every, "limit {limit}");
        assert!(totals.iter().all(|&t| t == 23), "{totals:?}");
        // `next` is null on the page that ends the list, even a full one.
        assert_eq!(totals.len(), 23usize.div_ceil(limit), "limit {limit}");
    }

    // `q`: name, spec, queue or zone, ignoring case; `total` counts all.
    let new_york: Vec<String> = every
        .iter()
        .filter(|n| n[2..].parse::<u32>().unwrap() % 2 == 0)
        .cloned()
        .collect();
    let (walked, totals) = walk(&d, Some("tok-read"), "&q=new_YORK", 4).await;
    assert_eq!(walked, new_york, "by zone");
    assert!(totals.iter().all(|&t| t == new_york.len() as u64));
    let (walked, _) = walk(&d, Some("tok-read"), "&q=QA", 50).await;
    assert_eq!(walked, new_york, "by queue (the even ones are on qa)");
    let hourly: Vec<String> = every
        .iter()
        .filter(|n| n[2..].parse::<u32>().unwrap() % 3 == 0)
        .cloned()
        .collect();
    let (walked, _) = walk(&d, Some("tok-read"), "&q=%40EVERY", 3).await;
    assert_eq!(walked, hourly, "by spec");
    let (walked, _) = walk(&d, Some("tok-read"), "&q=b-1", 3).await;
    assert_eq!(walked, ["b-10"], "by name");
    let (status, none) = d.api("GET", "/v1/schedules?q=nowhere", None).await;
    assert_eq!((status, none["total"].as_u64()), (200, Some(0)), "{none}");

    // `status`: pause three, then page through the paused ones.
    for n in ["a-03", "b-00", "b-07"] {
        let (status, r) = d
            .api("POST", &format!("/v1/schedules/{n}/pause"), None)
            .await;
        assert_eq!(status, 200, "{r}");
    }
    settled(&d, "/v1/schedules?status=paused", |v| v["total"] == 3).await;
    let (walked, totals) = walk(&d, Some("tok-read"), "&status=paused", 2).await;
    assert_eq!(walked, ["a-03", "b-00", "b-07"]);
    assert_eq!(totals, [3, 3]);
    let (walked, _) = walk(&d, Some("tok-read"), "&status=active&q=a-0", 4).await;
    let active_a0: Vec<String> = (0..10)
        .map(|i| format!("a-{i:02}"))
        .filter(|n| n != "a-03")
        .collect();
    assert_eq!(walked, active_a0, "status and q together");
    let (status, done) = d.api("GET", "/v1/schedules?status=completed", None).await;
    assert_eq!((status, done["total"].as_u64()), (200, Some(0)), "{done}");

    // A token limited to `a*`: full pages of its own schedules only.
    let own: Vec<String> = every
        .iter()
        .filter(|n| n.starts_with('a'))
        .cloned()
        .collect();
    let (walked, totals) = walk(&d, Some("tok-read-a"), "", 5).await;
    assert_eq!(walked, own, "tok-read-a pages through a* only");
    assert_eq!(totals, [12, 12, 12]);
    let (status, list) = d
        .send("GET", "/v1/schedules", Some("tok-read-a"), None)
        .await;
    assert_eq!((status, names(&list)), (200, own.clone()), "{list}");
    assert_eq!(list["total"], 12);
    let (walked, _) = walk(&d, Some("tok-read-a"), "&status=paused", 5).await;
    assert_eq!(walked, ["a-03"], "its own paused ones");
    // Its cursor may point anywhere; it still sees only its own names.
    let (status, after) = d
        .send(
            "GET",
            "/v1/schedules?limit=5&after=a-10",
            Some("tok-read-a"),
            None,
        )
        .await;
    assert_eq!((status, names(&after)), (200, vec!["a-11".to_owned()]));
    assert!(after["next"].is_null(), "{after}");
    // A token without `read` is refused the list, paged or not.
    let (status, _) = d
        .send("GET", "/v1/schedules?limit=5", Some("tok-enqueue"), None)
        .await;
    assert_eq!(status, 403);

    // A malformed query: 400 with the API's error body.
    for (query, field) in [
        ("limit=0", "limit"),
        ("limit=1001", "limit"),
        ("limit=ten", "query"),
        ("status=sleeping", "query"),
        ("page=2", "query"),
        ("limit=5&cursor=a-01", "query"),
    ] {
        let (status, err) = d.api("GET", &format!("/v1/schedules?{query}"), None).await;
        assert_eq!(status, 400, "{query}: {err}");
        assert_eq!(err["error"], "invalid_request", "{query}: {err}");
        assert_eq!(err["field"], field, "{query}: {err}");
        assert!(
            err["message"].as_str().is_some_and(|m| !m.is_empty()),
            "{err}"
        );
    }
    let long = "x".repeat(257);
    let (status, err) = d.api("GET", &format!("/v1/schedules?q={long}"), None).await;
    assert_eq!((status, err["field"].as_str()), (400, Some("q")), "{err}");
}
