//! TLS on the daemon's listener: `[http] tls_cert` and `tls_key` (PEM,
//! relative to the config file) make the real `chime run` serve HTTPS —
//! a client trusting the self-signed certificate made here (rcgen) gets
//! its answers, plain HTTP to the same port gets none — and a missing or
//! bad file stops the start with an error naming it. The config is the
//! example of `docs/http.md`.

use crate::daemon::{Daemon, read, wait_for};
use std::path::Path;
use std::process::{Command, Stdio};

fn chime() -> Command {
    Command::new(env!("CARGO_BIN_EXE_chime"))
}

/// A daemon on `config` (with `extra` arguments, else its own data
/// directory); its address once it logs it.
fn start(dir: &Path, config: &Path, extra: &[&str]) -> (Daemon, String) {
    let log = dir.join("daemon.log");
    let mut cmd = chime();
    cmd.args(["--log-format", "json", "run", "--config"])
        .arg(config);
    if extra.is_empty() {
        cmd.arg("--data").arg(dir.join("data"));
    }
    let child = cmd
        .args(extra)
        .env("CHIME_LOG", "info")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let daemon = Daemon(child);
    let mut address = String::new();
    wait_for("the listener", &log, || {
        for line in read(&log).lines() {
            let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
                continue;
            };
            if v["fields"]["message"] == "HTTP listener up (/healthz, /metrics, /v1)" {
                assert_eq!(v["fields"]["tls"], true, "{v}");
                address = v["fields"]["address"].as_str().unwrap().to_owned();
                return true;
            }
        }
        false
    });
    (daemon, address)
}

/// The `[http]` example of `docs/http.md` (the ```toml block naming
/// `tls_cert`), on port 0, with a queue.
fn doc_config() -> String {
    let doc = include_str!("../../../docs/http.md");
    let block = doc
        .split("```toml\n")
        .skip(1)
        .filter_map(|b| b.split_once("```").map(|(b, _)| b))
        .find(|b| b.contains("tls_cert"))
        .expect("docs/http.md has a TLS example");
    assert!(block.contains("address = \"0.0.0.0:9464\""), "{block}");
    let block = block.replace("0.0.0.0:9464", "127.0.0.1:0");
    format!("{block}\n[[queue]]\nname = \"emails\"\n")
}

/// A self-signed certificate for `localhost` and the doc's config in
/// `dir`, with the certificate's PEM.
fn certificate_and_config(dir: &Path) -> (std::path::PathBuf, String) {
    let made = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
    std::fs::create_dir(dir.join("tls")).unwrap();
    std::fs::write(dir.join("tls/cert.pem"), made.cert.pem()).unwrap();
    std::fs::write(dir.join("tls/key.pem"), made.signing_key.serialize_pem()).unwrap();
    let config = dir.join("chime.toml");
    std::fs::write(&config, doc_config()).unwrap();
    (config, made.cert.pem())
}

/// A client that trusts only `pem`, reaching `localhost` at `addr`.
fn trusting(pem: &str, addr: std::net::SocketAddr) -> reqwest::Client {
    let root = reqwest::Certificate::from_pem(pem.as_bytes()).unwrap();
    reqwest::Client::builder()
        .tls_certs_only([root])
        .resolve("localhost", addr)
        .build()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_listener_serves_https_with_the_configured_certificate() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let dir = tempfile::tempdir().unwrap();
    let (config, pem) = certificate_and_config(dir.path());
    let (mut daemon, address) = start(dir.path(), &config, &[]);
    let addr: std::net::SocketAddr = address.parse().unwrap();
    let client = trusting(&pem, addr);
    let url = format!("https://localhost:{}", addr.port());
    let resp = client.get(format!("{url}/v1/queues")).send().await.unwrap();
    assert_eq!(resp.status(), 200);
    let body: serde_json::Value = serde_json::from_str(&resp.text().await.unwrap()).unwrap();
    assert_eq!(body["queues"][0]["queue"], "emails", "{body}");
    let resp = client.get(format!("{url}/healthz")).send().await.unwrap();
    assert_eq!(resp.status(), 200);

    // Plain HTTP to the TLS port: no answer, the handshake fails.
    let plain = reqwest::Client::new()
        .get(format!("http://{addr}/healthz"))
        .send()
        .await;
    assert!(plain.is_err(), "plain HTTP got {plain:?}");
    // A client that does not trust the certificate is refused too.
    let untrusting = reqwest::Client::builder()
        .tls_certs_only([])
        .resolve("localhost", addr)
        .build()
        .unwrap();
    assert!(
        untrusting
            .get(format!("{url}/healthz"))
            .send()
            .await
            .is_err()
    );
    // And the listener still serves after both.
    let resp = client.get(format!("{url}/healthz")).send().await.unwrap();
    assert_eq!(resp.status(), 200);

    crate::daemon::signal(&daemon.0, "-TERM");
    assert!(daemon.0.wait().unwrap().success());
}

/// A replica (`--database`) serves the same TLS listener. Nothing listens
/// at its database URL, so its `/healthz` says 503 — over HTTPS.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_serves_https_too() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let dir = tempfile::tempdir().unwrap();
    let (config, pem) = certificate_and_config(dir.path());
    let nowhere = "postgresql://chime@127.0.0.1:1/chime";
    let (mut replica, address) = start(dir.path(), &config, &["--database", nowhere]);
    let addr: std::net::SocketAddr = address.parse().unwrap();
    let url = format!("https://localhost:{}", addr.port());
    let resp = trusting(&pem, addr)
        .get(format!("{url}/healthz"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 503);
    let body: serde_json::Value = serde_json::from_str(&resp.text().await.unwrap()).unwrap();
    assert_eq!(body["status"], "unavailable", "{body}");
    assert_eq!(body["database"]["reachable"], false, "{body}");
    let plain = reqwest::Client::new()
        .get(format!("http://{addr}/healthz"))
        .send()
        .await;
    assert!(plain.is_err(), "plain HTTP got {plain:?}");
    crate::daemon::signal(&replica.0, "-TERM");
    assert!(replica.0.wait().unwrap().success());
}

#[test]
fn a_missing_or_bad_certificate_stops_the_start_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("chime.toml");
    std::fs::write(&config, doc_config()).unwrap();
    let run = || {
        chime()
            .args(["run", "--config"])
            .arg(&config)
            .arg("--data")
            .arg(dir.path().join("data"))
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    let out = run();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("reading the TLS certificate") && err.contains("tls/cert.pem"),
        "{err}"
    );

    std::fs::create_dir(dir.path().join("tls")).unwrap();
    std::fs::write(dir.path().join("tls/cert.pem"), "not PEM at all").unwrap();
    std::fs::write(dir.path().join("tls/key.pem"), "").unwrap();
    let out = run();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("tls/cert.pem") && err.contains("no CERTIFICATE section"),
        "{err}"
    );

    // A certificate with another certificate's key: rustls refuses the pair.
    let a = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
    let b = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
    std::fs::write(dir.path().join("tls/cert.pem"), a.cert.pem()).unwrap();
    std::fs::write(dir.path().join("tls/key.pem"), "").unwrap();
    let out = run();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("tls/key.pem") && err.contains("no PRIVATE KEY section"),
        "{err}"
    );
    std::fs::write(
        dir.path().join("tls/key.pem"),
        b.signing_key.serialize_pem(),
    )
    .unwrap();
    let out = run();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("cannot be used together"), "{err}");
}
