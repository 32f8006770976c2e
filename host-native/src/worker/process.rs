//! The processes of command jobs: each attempt runs in its own process
//! group, which is killed as a whole when the attempt is abandoned
//! (timeout, stop, the future dropped), and which does not outlive the
//! daemon.
//!
//! Why: a job's `sh` that survives a `kill -9` of the daemon (re-parented
//! to PID 1) completes its work while the restarted daemon retries the
//! job: one fire, two complete runs. Two layers prevent it:
//!
//! - **Death signal.** In the `chime` daemon every job is started through
//!   the daemon's own binary ([`EXEC_WRAPPER_ARG`], see [`exec_wrapper`]):
//!   it asks the kernel for `SIGKILL` when its parent dies
//!   (`PR_SET_PDEATHSIG`, through `rustix`: this crate forbids `unsafe`,
//!   so no `pre_exec`) and then `exec`s the command in place, keeping its
//!   pid, its group and that setting. The job's direct child dies with the
//!   daemon.
//! - **The ledger.** Grandchildren (a `sleep` under the `sh`) do not get
//!   that signal. The daemon records every running group (its id, the
//!   leader's start time and the job id) in a small file of the data
//!   directory, [`LEDGER_FILE`]; a restarted daemon, holding the data
//!   directory's lock and before it claims anything, kills every process
//!   still in a recorded group that carries the job's `CHIME_JOB_ID` in
//!   its environment and started after the group's leader ([`reap`]). So
//!   a retried job never runs next to the previous incarnation's attempt.
//!
//! An embedder's command workers (no [`enable`]) still get a process
//! group per attempt, killed as a whole on drop; only the death signal
//! and the ledger need the daemon.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// The hidden first argument that makes the `chime` binary the exec
/// wrapper of a job: `chime __chime-job-exec <daemon pid> PROGRAM ARGS…`.
pub const EXEC_WRAPPER_ARG: &str = "__chime-job-exec";

/// The file of running process groups in the data directory.
pub const LEDGER_FILE: &str = "job-processes";

/// Set once by the daemon: the wrapper binary and the ledger.
static DAEMON: OnceLock<Daemon> = OnceLock::new();

struct Daemon {
    wrapper: PathBuf,
    ledger: Ledger,
}

/// What [`reap`] killed: one process of a previous daemon's job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reaped {
    /// Its pid.
    pub pid: i32,
    /// Its process group (the attempt's).
    pub group: i32,
    /// The job it was running.
    pub job: u64,
    /// Its command line, for the log.
    pub command: String,
}

/// The daemon's start, on the data directory it holds the lock of: kills
/// what a previous incarnation left running ([`reap`], logged), then
/// makes every later command job go through `wrapper` (the daemon's own
/// binary: `/proc/self/exe`) and be recorded in the ledger. Call it before
/// any worker claims. A second call changes nothing.
pub fn enable(data: &Path, wrapper: PathBuf) -> io::Result<Vec<Reaped>> {
    let reaped = reap(data)?;
    let ledger = Ledger::create(data.join(LEDGER_FILE))?;
    let _ = DAEMON.set(Daemon { wrapper, ledger });
    Ok(reaped)
}

/// Kills every process left from the groups recorded in `data`'s ledger
/// (by a daemon that did not stop cleanly) and waits, up to 5 s, until
/// they are gone. A process counts only if it is still in the recorded
/// group, started no earlier than the group's leader, and carries the
/// job's `CHIME_JOB_ID`: a pid or group id reused by an unrelated process
/// is left alone. After a reboot (another boot id) nothing can be left.
pub fn reap(data: &Path) -> io::Result<Vec<Reaped>> {
    let path = data.join(LEDGER_FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut lines = text.lines().filter(|l| !l.starts_with('#'));
    let boot = lines.next().and_then(|l| l.strip_prefix("boot "));
    if boot != Some(boot_id().as_str()) {
        return Ok(Vec::new());
    }
    let groups: Vec<Entry> = lines.filter_map(Entry::parse).collect();
    if groups.is_empty() {
        return Ok(Vec::new());
    }
    let me = std::process::id() as i32;
    let mut reaped = Vec::new();
    for (pid, stat) in processes() {
        if pid == me {
            continue;
        }
        let Some(g) = groups
            .iter()
            .find(|g| g.group == stat.group && stat.start >= g.start)
        else {
            continue;
        };
        let marker = format!("CHIME_JOB_ID={}", g.job);
        let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
        if !environ.split(|b| *b == 0).any(|v| v == marker.as_bytes()) {
            continue;
        }
        let command = std::fs::read(format!("/proc/{pid}/cmdline"))
            .map(|c| {
                String::from_utf8_lossy(&c)
                    .trim_end_matches('\0')
                    .replace('\0', " ")
            })
            .unwrap_or_default();
        if let Some(p) = rustix::process::Pid::from_raw(pid)
            && rustix::process::kill_process(p, rustix::process::Signal::KILL).is_ok()
        {
            tracing::warn!(
                pid,
                group = g.group,
                job = g.job,
                %command,
                "killed a process of a job left running by the previous daemon"
            );
            reaped.push(Reaped {
                pid,
                group: g.group,
                job: g.job,
                command,
            });
        }
    }
    let deadline = Instant::now() + Duration::from_secs(5);
    while reaped.iter().any(|r| alive(r.pid)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    Ok(reaped)
}

/// The `chime __chime-job-exec <parent pid> PROGRAM ARGS…` process: asks
/// for `SIGKILL` when the daemon dies, checks that it has not already
/// died (the signal is only armed from now on), and becomes PROGRAM.
/// Returns only on failure, with the exit status to use (127: PROGRAM
/// could not be run, as a shell does; 125: the daemon was already gone).
pub fn exec_wrapper(args: &[OsString]) -> u8 {
    use std::os::unix::process::CommandExt;
    let [parent, program, rest @ ..] = args else {
        let _ = io::Write::write_all(&mut io::stderr(), b"chime: job wrapper: no command\n");
        return 125;
    };
    let parent: Option<i32> = parent.to_str().and_then(|p| p.parse().ok());
    if let Err(e) =
        rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL))
    {
        let msg = format!("chime: job wrapper: PR_SET_PDEATHSIG: {e}\n");
        let _ = io::Write::write_all(&mut io::stderr(), msg.as_bytes());
        return 125;
    }
    let now = rustix::process::getppid().map(rustix::process::Pid::as_raw_pid);
    if now.is_none() || now != parent {
        return 125;
    }
    let err = std::process::Command::new(program).args(rest).exec();
    let msg = format!("chime: cannot run {}: {err}\n", program.to_string_lossy());
    let _ = io::Write::write_all(&mut io::stderr(), msg.as_bytes());
    127
}

/// A command for `program`, in a new process group and, in the daemon,
/// through the exec wrapper. Add arguments, environment and stdio as to
/// any command, then start it with [`spawn`].
pub(crate) fn command(program: &str) -> tokio::process::Command {
    let mut cmd = match DAEMON.get() {
        Some(d) => {
            let mut c = tokio::process::Command::new(&d.wrapper);
            c.arg(EXEC_WRAPPER_ARG)
                .arg(std::process::id().to_string())
                .arg(program);
            c
        }
        None => tokio::process::Command::new(program),
    };
    cmd.process_group(0).kill_on_drop(true);
    cmd
}

/// Starts `cmd` (made by [`command`]) for job `job`: the child and the
/// guard of its process group (recorded in the ledger until it ends).
pub(crate) fn spawn(
    cmd: &mut tokio::process::Command,
    job: u64,
) -> io::Result<(tokio::process::Child, Group)> {
    let child = cmd.spawn()?;
    let group = child.id().map_or(0, |p| p as i32);
    let start = stat(group).map_or(0, |s| s.start);
    if let Some(d) = DAEMON.get() {
        d.ledger.insert(Entry { group, start, job });
    }
    Ok((
        child,
        Group {
            group,
            exited: false,
        },
    ))
}

/// An attempt's process group. Dropped before [`Group::exited`] (the
/// attempt timed out, was stopped, or its future was dropped), it kills
/// the whole group; after, what the command left in the background is
/// its own business, as under cron.
pub(crate) struct Group {
    group: i32,
    exited: bool,
}

impl Group {
    /// The group leader has been waited for.
    pub(crate) fn exited(&mut self) {
        self.exited = true;
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        if !self.exited
            && let Some(p) = rustix::process::Pid::from_raw(self.group)
        {
            let _ = rustix::process::kill_process_group(p, rustix::process::Signal::KILL);
        }
        if let Some(d) = DAEMON.get() {
            d.ledger.remove(self.group);
        }
    }
}

/// One ledger line: `<group> <leader start ticks> <job id>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Entry {
    group: i32,
    start: u64,
    job: u64,
}

impl Entry {
    fn parse(line: &str) -> Option<Entry> {
        let mut w = line.split_whitespace();
        let e = Entry {
            group: w.next()?.parse().ok()?,
            start: w.next()?.parse().ok()?,
            job: w.next()?.parse().ok()?,
        };
        (e.group > 1).then_some(e)
    }
}

/// The running groups, rewritten (to a temporary file, then renamed) at
/// every change. Not synced: it only has to survive the daemon's death,
/// not the machine's (a reboot leaves no process to kill).
struct Ledger {
    path: PathBuf,
    boot: String,
    groups: Mutex<BTreeMap<i32, Entry>>,
}

impl Ledger {
    fn create(path: PathBuf) -> io::Result<Ledger> {
        let ledger = Ledger {
            path,
            boot: boot_id(),
            groups: Mutex::new(BTreeMap::new()),
        };
        ledger.write(&BTreeMap::new())?;
        Ok(ledger)
    }

    fn insert(&self, e: Entry) {
        let mut g = self.groups.lock().unwrap_or_else(|p| p.into_inner());
        g.insert(e.group, e);
        self.write_logged(&g);
    }

    fn remove(&self, group: i32) {
        let mut g = self.groups.lock().unwrap_or_else(|p| p.into_inner());
        if g.remove(&group).is_some() {
            self.write_logged(&g);
        }
    }

    fn write_logged(&self, groups: &BTreeMap<i32, Entry>) {
        if let Err(e) = self.write(groups) {
            tracing::warn!(file = %self.path.display(), error = %e, "job process ledger not written");
        }
    }

    fn write(&self, groups: &BTreeMap<i32, Entry>) -> io::Result<()> {
        let mut text = String::from(
            "# chime: process groups of running command jobs (group, leader start, job);\n\
             # read at start to kill what a killed daemon left running.\n",
        );
        text.push_str(&format!("boot {}\n", self.boot));
        for e in groups.values() {
            text.push_str(&format!("{} {} {}\n", e.group, e.start, e.job));
        }
        let tmp = self.path.with_extension("tmp");
        std::fs::write(&tmp, text)?;
        std::fs::rename(&tmp, &self.path)
    }
}

/// The kernel's boot id (empty where there is none).
fn boot_id() -> String {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .map(|s| s.trim().to_owned())
        .unwrap_or_default()
}

/// The fields of `/proc/<pid>/stat` that matter here.
#[derive(Clone, Copy, Debug)]
struct Stat {
    state: char,
    group: i32,
    /// Clock ticks since boot.
    start: u64,
}

fn stat(pid: i32) -> Option<Stat> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces and parentheses: the
    // fields after it start after the last `)`.
    let rest = &text[text.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    Some(Stat {
        state: f.first()?.chars().next()?,
        group: f.get(2)?.parse().ok()?,
        start: f.get(19)?.parse().ok()?,
    })
}

/// Every process on the machine with its stat.
fn processes() -> Vec<(i32, Stat)> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| {
        let pid: i32 = e.ok()?.file_name().to_str()?.parse().ok()?;
        Some((pid, stat(pid)?))
    })
    .collect()
}

/// Not gone and not a zombie (a killed orphan waits for init to reap it).
fn alive(pid: i32) -> bool {
    stat(pid).is_some_and(|s| s.state != 'Z' && s.state != 'X')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ledger_lines_parse_and_refuse_garbage() {
        assert_eq!(
            Entry::parse("4242 987654 17"),
            Some(Entry {
                group: 4242,
                start: 987654,
                job: 17
            })
        );
        assert_eq!(Entry::parse("1 5 5"), None, "never init's group");
        assert_eq!(Entry::parse("x 5 5"), None);
        assert_eq!(Entry::parse("42 5"), None);
    }

    #[test]
    fn own_stat_reads() {
        let me = stat(std::process::id() as i32).unwrap();
        assert!(me.start > 0);
        assert!(alive(std::process::id() as i32));
    }

    /// A dropped attempt kills its whole group: the `sleep` under the
    /// `sh` too, not only the direct child.
    #[tokio::test]
    async fn dropping_a_running_attempt_kills_its_grandchildren() {
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("pid");
        let mut cmd = command("sh");
        cmd.arg("-c")
            .arg(format!("sleep 30 & echo $! > {}; wait", pidfile.display()));
        let (child, group) = spawn(&mut cmd, 1).unwrap();
        let t = Instant::now();
        let grandchild: i32 = loop {
            if let Some(p) = std::fs::read_to_string(&pidfile)
                .ok()
                .and_then(|s| s.trim().parse().ok())
            {
                break p;
            }
            assert!(t.elapsed() < Duration::from_secs(10), "sleep never started");
            tokio::time::sleep(Duration::from_millis(10)).await;
        };
        assert!(alive(grandchild));
        drop(group);
        drop(child);
        let t = Instant::now();
        while alive(grandchild) {
            assert!(
                t.elapsed() < Duration::from_secs(10),
                "the grandchild outlived its dropped attempt"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}
