//! A deployment of real `chime run` processes for the suite: one daemon
//! on a data directory, or two replicas on one Postgres schema, each
//! with its own HTTP port, all with the same config and the suite's
//! tokens. Requests alternate between the nodes.

use serde_json::Value;
use std::path::PathBuf;
use std::process::{Child, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Which mode the nodes run in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Embedded,
    Postgres,
}

/// Where the nodes keep their state.
#[derive(Clone, Debug)]
pub enum Store {
    /// One daemon on a fresh data directory.
    Data,
    /// Two replicas on this database URL and schema.
    Postgres { url: String, schema: String },
}

/// The scopes every deployment's tokens cover: `tok-<scope>` holds the
/// scope for every name, `tok-<scope>-a` only for names matching `a*`.
pub const SCOPES: [&str; 5] = ["read", "enqueue", "work", "manage", "admin"];

/// The admin token.
pub const ADMIN: Option<&str> = Some("tok-admin");

/// The lease TTL of Postgres replicas: short, so takeovers are quick.
const TTL_MS: u64 = 2_000;

fn tokens_toml() -> String {
    let mut t = String::new();
    for s in SCOPES {
        for (suffix, scope) in [
            (String::new(), s.to_owned()),
            ("-a".into(), format!("{s}:a*")),
        ] {
            let name = format!("{s}{suffix}");
            let hash = chime_native::http::hash_hex(&format!("tok-{name}"));
            t.push_str(&format!(
                "\n[[token]]\nname = \"{name}\"\nsha256 = \"{hash}\"\nscopes = [\"{scope}\"]\n"
            ));
        }
    }
    t
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

struct Node {
    child: Option<Child>,
    port: u16,
    log: PathBuf,
}

/// The running nodes and a client for them.
pub struct Deployment {
    pub mode: Mode,
    store: Store,
    nodes: Vec<Node>,
    config: PathBuf,
    data: PathBuf,
    client: reqwest::Client,
    turn: AtomicUsize,
    dir: tempfile::TempDir,
}

impl Drop for Deployment {
    fn drop(&mut self) {
        for n in &mut self.nodes {
            if let Some(mut c) = n.child.take() {
                let _ = c.kill();
                let _ = c.wait();
            }
        }
    }
}

impl Deployment {
    /// Starts the nodes on `config` (TOML; the suite's `[[token]]`s are
    /// added) and waits until every node answers `/healthz` (in Postgres
    /// mode: until one leads and the other follows).
    pub async fn start(store: Store, config: &str) -> Deployment {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("chime.toml");
        std::fs::write(&path, format!("{config}\n{}", tokens_toml())).unwrap();
        let (mode, count) = match store {
            Store::Data => (Mode::Embedded, 1),
            Store::Postgres { .. } => (Mode::Postgres, 2),
        };
        let mut d = Deployment {
            mode,
            store,
            nodes: Vec::new(),
            config: path,
            data: dir.path().join("data"),
            client: chime_native::worker::http::client(Duration::from_secs(30)).unwrap(),
            turn: AtomicUsize::new(0),
            dir,
        };
        for i in 0..count {
            let port = free_port();
            let log = d.dir.path().join(format!("node{i}.log"));
            d.nodes.push(Node {
                child: None,
                port,
                log,
            });
            d.spawn(i);
        }
        d.ready().await;
        d
    }

    fn spawn(&mut self, i: usize) {
        let node = &self.nodes[i];
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_chime"));
        cmd.args(["run", "--config"]).arg(&self.config);
        match &self.store {
            Store::Data => {
                cmd.arg("--data").arg(&self.data);
            }
            Store::Postgres { url, schema } => {
                cmd.args(["--database", url, "--schema", schema])
                    .args(["--lease-ttl-ms", &TTL_MS.to_string()]);
            }
        }
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&node.log)
            .unwrap();
        let child = cmd
            .args(["--http", &format!("127.0.0.1:{}", node.port)])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap();
        self.nodes[i].child = Some(child);
    }

    /// Every node's log, for failure messages.
    pub fn logs(&self) -> String {
        self.nodes
            .iter()
            .map(|n| std::fs::read_to_string(&n.log).unwrap_or_default())
            .collect::<Vec<_>>()
            .join("\n----\n")
    }

    /// Waits until the live nodes answer `/healthz` 200, and in Postgres
    /// mode until one of them leads (and, with two alive, the other
    /// follows).
    pub async fn ready(&self) {
        let t = Instant::now();
        loop {
            let mut roles = Vec::new();
            let mut all = true;
            for (i, n) in self.nodes.iter().enumerate() {
                if n.child.is_none() {
                    continue;
                }
                match self.try_send_at(i, "GET", "/healthz", None, None).await {
                    Some((200, h)) => roles.push(h["role"].as_str().unwrap_or("").to_owned()),
                    _ => all = false,
                }
            }
            let leaders = roles.iter().filter(|r| *r == "leader").count();
            let settled = match self.mode {
                Mode::Embedded => all,
                Mode::Postgres => all && leaders == 1,
            };
            if settled {
                return;
            }
            assert!(
                t.elapsed() < Duration::from_secs(30),
                "the nodes did not get ready: {roles:?}\n{}",
                self.logs()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// How many nodes.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// The node that leads (Postgres) or the only one.
    pub async fn leader(&self) -> usize {
        if self.mode == Mode::Embedded {
            return 0;
        }
        for i in 0..self.nodes.len() {
            if let Some((200, h)) = self.try_send_at(i, "GET", "/healthz", None, None).await
                && h["role"] == "leader"
            {
                return i;
            }
        }
        panic!("no leader\n{}", self.logs());
    }

    /// A node that does not lead (the only one in embedded mode).
    pub async fn follower(&self) -> usize {
        if self.mode == Mode::Embedded {
            return 0;
        }
        let l = self.leader().await;
        (l + 1) % self.nodes.len()
    }

    /// Kills node `i` with SIGKILL: no shutdown of any kind.
    pub fn kill(&mut self, i: usize) {
        if let Some(mut c) = self.nodes[i].child.take() {
            c.kill().unwrap();
            c.wait().unwrap();
        }
    }

    /// Starts node `i` again (same port, same store) and waits until ready.
    pub async fn restart(&mut self, i: usize) {
        self.spawn(i);
        self.ready().await;
    }

    /// A request to the next live node in turn: (status, JSON body; a
    /// non-JSON body as a string).
    pub async fn send(
        &self,
        method: &str,
        path: &str,
        token: Option<&str>,
        body: Option<Value>,
    ) -> (u16, Value) {
        let n = self.nodes.len();
        for _ in 0..n {
            let i = self.turn.fetch_add(1, Ordering::Relaxed) % n;
            if self.nodes[i].child.is_some() {
                return self.send_at(i, method, path, token, body).await;
            }
        }
        panic!("no node is running");
    }

    /// A request to node `i`.
    pub async fn send_at(
        &self,
        i: usize,
        method: &str,
        path: &str,
        token: Option<&str>,
        body: Option<Value>,
    ) -> (u16, Value) {
        self.try_send_at(i, method, path, token, body)
            .await
            .unwrap_or_else(|| panic!("{method} {path} on node {i}: no answer\n{}", self.logs()))
    }

    async fn try_send_at(
        &self,
        i: usize,
        method: &str,
        path: &str,
        token: Option<&str>,
        body: Option<Value>,
    ) -> Option<(u16, Value)> {
        let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
        let url = format!("http://127.0.0.1:{}{path}", self.nodes[i].port);
        let mut req = self.client.request(method, url);
        if let Some(t) = token {
            req = req.header("authorization", format!("Bearer {t}"));
        }
        if let Some(b) = body {
            req = req
                .header("content-type", "application/json")
                .body(b.to_string());
        }
        let resp = req.send().await.ok()?;
        let status = resp.status().as_u16();
        let text = resp.text().await.ok()?;
        let json = serde_json::from_str(&text).unwrap_or(Value::String(text));
        Some((status, json))
    }

    /// A request as the admin, to the next node in turn.
    pub async fn api(&self, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
        self.send(method, path, ADMIN, body).await
    }

    /// `GET path` as the admin, on the next node in turn, until `ok` holds
    /// for its body (at most 5 s: a replica's schedule reads may be up to
    /// a second behind the leader's engine); the last body.
    pub async fn read_until(&self, path: &str, ok: impl Fn(&Value) -> bool) -> Value {
        let t = Instant::now();
        loop {
            let (status, v) = self.api("GET", path, None).await;
            if status == 200 && ok(&v) {
                return v;
            }
            if t.elapsed() > Duration::from_secs(5) {
                return v;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// The base URL of node `i`.
    pub fn base(&self, i: usize) -> String {
        format!("http://127.0.0.1:{}", self.nodes[i].port)
    }

    /// What the API shows of the deployment's state, without what moves
    /// on its own (clocks, ages, next due times): two equal fingerprints
    /// mean nothing a request could change has changed.
    pub async fn fingerprint(&self) -> Value {
        let (status, mut v) = self.send("GET", "/v1/inspect?dead=1000", ADMIN, None).await;
        assert_eq!(status, 200, "{v}");
        strip(&mut v);
        v
    }

    /// Polls `check` every 50 ms until it is true or `limit` passes.
    pub async fn eventually<F, Fut>(&self, limit: Duration, mut check: F) -> bool
    where
        F: FnMut() -> Fut,
        Fut: std::future::Future<Output = bool>,
    {
        let t = Instant::now();
        loop {
            if check().await {
                return true;
            }
            if t.elapsed() > limit {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

fn strip(v: &mut Value) {
    match v {
        Value::Object(m) => {
            for k in [
                "clock",
                "asOf",
                "oldestAvailableAgeMs",
                "nextDueAt",
                "nextNominal",
                "leadership",
            ] {
                m.remove(k);
            }
            m.values_mut().for_each(strip);
        }
        Value::Array(a) => a.iter_mut().for_each(strip),
        _ => {}
    }
}
