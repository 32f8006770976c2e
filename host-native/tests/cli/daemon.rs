//! What the daemon scenarios share: reading a file that may not exist yet,
//! polling with a bound, a daemon process killed if its test fails, and
//! sending it a signal.

use std::path::Path;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

/// A file's text, empty while it does not exist.
pub fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_default()
}

/// Polls `cond` every 50 ms for up to 30 s (the machine may be busy);
/// panics with the daemon's log when it never holds.
pub fn wait_for(what: &str, log: &Path, mut cond: impl FnMut() -> bool) {
    let start = Instant::now();
    while !cond() {
        if start.elapsed() > Duration::from_secs(30) {
            panic!("timed out waiting for {what}; daemon log:\n{}", read(log));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Kills the daemon if the test fails before stopping it.
pub struct Daemon(pub Child);

impl Drop for Daemon {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

/// `kill SIG PID`.
pub fn signal(child: &Child, sig: &str) {
    let ok = Command::new("kill")
        .args([sig, &child.id().to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok, "kill {sig}");
}
