//! The HTTP API answers every request it does not serve with the JSON
//! error its docs promise (field report, issue 21): a known path asked
//! with a method it does not serve is `405` with `{"error":
//! "method_not_allowed", "message"}` and the methods it serves in
//! `Allow` (before: an empty body), and an unknown path is a JSON `404`
//! `not_found`.

use crate::common;

use chime_native::Setup;
use common::start_instance;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn other_methods_and_unknown_routes_get_json_errors() {
    let inst = start_instance(Setup::default()).await;
    let base = format!("http://{}", inst.server.local_addr());
    for (method, path, allow) in [
        (
            reqwest::Method::PATCH,
            "/v1/schedules/nightly",
            "GET,HEAD,PUT,DELETE",
        ),
        (
            reqwest::Method::POST,
            "/v1/schedules/nightly",
            "GET,HEAD,PUT,DELETE",
        ),
        (reqwest::Method::POST, "/v1/queues", "GET,HEAD"),
        (reqwest::Method::GET, "/v1/queues/q/claim", "POST"),
        (reqwest::Method::DELETE, "/healthz", "GET,HEAD"),
    ] {
        let resp = inst
            .client
            .request(method.clone(), format!("{base}{path}"))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status().as_u16(), 405, "{method} {path}");
        assert_eq!(
            resp.headers().get("allow").map(|v| v.to_str().unwrap()),
            Some(allow),
            "{method} {path}"
        );
        let body: serde_json::Value = serde_json::from_str(&resp.text().await.unwrap()).unwrap();
        assert_eq!(body["error"], "method_not_allowed", "{body}");
        let message = body["message"].as_str().unwrap();
        assert!(
            message.contains(method.as_str()) && message.contains(path),
            "{message}"
        );
    }
    let (status, body) = inst.get_json("/v1/nothing/here").await;
    assert_eq!(status, 404);
    assert_eq!(body["error"], "not_found", "{body}");
    let resp = inst
        .client
        .delete(format!("{base}/v1/nothing"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 404);
    let body: serde_json::Value = serde_json::from_str(&resp.text().await.unwrap()).unwrap();
    assert_eq!(body["error"], "not_found", "{body}");
    inst.stop().await;
}
