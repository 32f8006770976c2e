//! The daemon's log writer: each formatted line goes through a bounded
//! channel to one thread that writes what has gathered to stderr.
//!
//! Why: the driver logs a line per job outcome, and a `write(2)` per line
//! on the driver's own thread was a tenth of its time at 40,000 jobs a
//! second (perf, HTTP worker pool). The writer thread batches whatever
//! lines are queued into one write. Nothing is dropped: when the channel
//! is full the logging thread waits (the bound is the memory a slow
//! stderr may hold), and [`flush`] waits until every line sent before it
//! is written, which `main` calls before the process exits. A closed pipe
//! ends the output without failing the daemon.

use std::io::Write;
use std::sync::OnceLock;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};

/// Lines queued at most before a logging thread waits.
const QUEUED_LINES: usize = 16_384;

/// Bytes gathered into one write at most.
const WRITE_BYTES: usize = 256 * 1024;

enum Msg {
    Line(Vec<u8>),
    /// Answered once every line before it is written.
    Flush(SyncSender<()>),
}

static TX: OnceLock<SyncSender<Msg>> = OnceLock::new();

fn sender() -> &'static SyncSender<Msg> {
    TX.get_or_init(|| {
        let (tx, rx) = sync_channel(QUEUED_LINES);
        let spawned = std::thread::Builder::new()
            .name("chime-logs".into())
            .spawn(move || write_loop(&rx));
        if let Err(e) = spawned {
            // No thread: the lines wait in the channel until it is full.
            // Say so once, where the operator looks.
            let _ = writeln!(std::io::stderr(), "error: no log writer thread: {e}");
        }
        tx
    })
}

fn write_loop(rx: &Receiver<Msg>) {
    let mut buf = Vec::with_capacity(WRITE_BYTES);
    let mut acks = Vec::new();
    while let Ok(first) = rx.recv() {
        let mut next = Some(first);
        while let Some(msg) = next.take() {
            match msg {
                Msg::Line(line) => buf.extend_from_slice(&line),
                Msg::Flush(ack) => acks.push(ack),
            }
            if buf.len() < WRITE_BYTES {
                next = rx.try_recv().ok();
            }
        }
        let mut err = std::io::stderr().lock();
        // A closed or failing stderr loses the lines, not the daemon.
        let _ = err.write_all(&buf).and_then(|()| err.flush());
        buf.clear();
        for ack in acks.drain(..) {
            let _ = ack.send(());
        }
    }
}

/// A `MakeWriter` for tracing-subscriber: one [`Line`] per event.
pub fn line() -> Line {
    Line(Vec::new())
}

/// One event's formatted text, sent to the writer thread when dropped.
pub struct Line(Vec<u8>);

impl Write for Line {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Drop for Line {
    fn drop(&mut self) {
        if !self.0.is_empty() {
            let _ = sender().send(Msg::Line(std::mem::take(&mut self.0)));
        }
    }
}

/// Waits until every line logged before this call is written.
pub fn flush() {
    let Some(tx) = TX.get() else { return };
    let (ack, done) = sync_channel(1);
    if tx.send(Msg::Flush(ack)).is_ok() {
        let _ = done.recv();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_sent_whole_and_flush_waits_for_them() {
        // The writer goes to the test's stderr; what this pins is that a
        // line is one message and that flush returns once it is written.
        let mut l = line();
        l.write_all(b"chime log writer test: ").unwrap();
        l.write_all(b"one line\n").unwrap();
        assert_eq!(l.0, b"chime log writer test: one line\n");
        drop(l);
        flush();
        // A flush with nothing queued returns too.
        flush();
        // An empty line sends nothing.
        drop(line());
        flush();
    }
}
