// FileStore: the Scheduler's persistence on a Node file system.
//
// Two kinds of file in one directory:
//   snapshot.json        {"gen": g, "snapshot": <engine snapshot JSON>}
//   journal-<g>.jsonl    the inputs handled since that snapshot, one per line
// `append` writes and fsyncs before it returns, so the scheduler acts on an
// input only once it is on disk. `compact` writes the next snapshot under a
// temporary name, fsyncs, renames it over the old one (atomic) and only then
// starts journal g+1: a crash at any point leaves either the old snapshot
// with its journal or the new one with an empty journal, never a journal
// replayed on a snapshot that already contains it.
//
// One process at a time: `load` takes the directory's lock (`lock`, see
// DirLock below) and `close` releases it, as the daemon locks its data
// directory. Two schedulers on one journal would both fire every boundary.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ChimeError } from './errors.js';

export class FileStore {
  #dir;
  #gen = 0;
  #fd = null;
  #lock = null;

  constructor(dir) {
    this.#dir = dir;
  }

  /** The directory. */
  get dir() {
    return this.#dir;
  }

  #journalPath(gen) {
    return path.join(this.#dir, `journal-${gen}.jsonl`);
  }

  load() {
    fs.mkdirSync(this.#dir, { recursive: true });
    // Before reading anything: another process may be appending.
    if (!this.#lock) this.#lock = DirLock.acquire(this.#dir);
    let snapshot = null;
    const snapPath = path.join(this.#dir, 'snapshot.json');
    if (fs.existsSync(snapPath)) {
      const saved = JSON.parse(fs.readFileSync(snapPath, 'utf8'));
      this.#gen = saved.gen;
      snapshot = saved.snapshot;
    }
    const jpath = this.#journalPath(this.#gen);
    let journal = fs.existsSync(jpath) ? fs.readFileSync(jpath, 'utf8') : '';
    // A line cut short by a crash was never acknowledged (append returns
    // after fsync of whole lines): drop it, on disk too.
    const end = journal.lastIndexOf('\n') + 1;
    if (end !== journal.length) {
      journal = journal.slice(0, end);
      fs.truncateSync(jpath, Buffer.byteLength(journal));
    }
    // Journals of older generations are covered by the snapshot.
    for (const name of fs.readdirSync(this.#dir)) {
      const m = /^journal-(\d+)\.jsonl$/.exec(name);
      if (m && Number(m[1]) !== this.#gen) fs.rmSync(path.join(this.#dir, name));
    }
    this.#fd = fs.openSync(jpath, 'a');
    return { snapshot, journal };
  }

  append(lines) {
    fs.writeSync(this.#fd, lines.join('\n') + '\n');
    fs.fsyncSync(this.#fd);
  }

  compact(snapshot) {
    const gen = this.#gen + 1;
    const tmp = path.join(this.#dir, 'snapshot.json.tmp');
    const fd = fs.openSync(tmp, 'w');
    fs.writeSync(fd, JSON.stringify({ gen, snapshot }));
    fs.fsyncSync(fd);
    fs.closeSync(fd);
    fs.renameSync(tmp, path.join(this.#dir, 'snapshot.json'));
    syncDir(this.#dir);
    fs.closeSync(this.#fd);
    const old = this.#journalPath(this.#gen);
    this.#gen = gen;
    this.#fd = fs.openSync(this.#journalPath(gen), 'a');
    syncDir(this.#dir);
    fs.rmSync(old, { force: true });
  }

  close() {
    if (this.#fd !== null) fs.closeSync(this.#fd);
    this.#fd = null;
    this.#lock?.release();
    this.#lock = null;
  }
}

/**
 * The directory's lock: a file `lock` holding `{pid, host, start}` of its
 * holder (Node has no flock). Taken by `link(2)` of a complete temporary
 * file, which fails if `lock` exists: a reader never sees a half-written
 * lock. A lock whose holder is gone is stale and taken over: its pid is
 * not running, or (Linux) runs with another start time than the one
 * recorded (the pid was reused after a crash). Taking over is serialized
 * by a second lock (`lock.break`, short-lived), and `lock` is removed only
 * if it still holds the stale content. A lock of another host (a shared
 * file system) cannot be checked and counts as held.
 */
class DirLock {
  #path;
  #text;

  constructor(file, text) {
    this.#path = file;
    this.#text = text;
  }

  static acquire(dir) {
    const file = path.join(dir, 'lock');
    const text = JSON.stringify({ pid: process.pid, host: os.hostname(), start: startTime(process.pid) });
    const tmp = path.join(dir, `lock.${process.pid}.tmp`);
    fs.writeFileSync(tmp, text);
    try {
      for (let tries = 0; tries < 20; tries++) {
        if (tryLink(tmp, file)) {
          syncDir(dir);
          return new DirLock(file, text);
        }
        const held = readLock(file);
        if (held === null) continue; // released meanwhile: try again
        if (alive(held.holder)) throw locked(dir, held.holder);
        // Stale: break it, one breaker at a time.
        const brk = path.join(dir, 'lock.break');
        if (!tryLink(tmp, brk)) {
          const breaker = readLock(brk);
          if (breaker && !alive(breaker.holder)) fs.rmSync(brk, { force: true }); // a breaker that crashed
          continue;
        }
        try {
          if (readLock(file)?.text === held.text) fs.rmSync(file, { force: true });
        } finally {
          fs.rmSync(brk, { force: true });
        }
      }
      throw new ChimeError('store_locked', `store_locked: could not take the lock of ${dir} (contended)`, 'dir');
    } finally {
      fs.rmSync(tmp, { force: true });
    }
  }

  /** Removes the lock file if it is still this one's. */
  release() {
    if (readLock(this.#path)?.text === this.#text) fs.rmSync(this.#path, { force: true });
  }
}

function locked(dir, holder) {
  const where = holder.host === os.hostname() ? '' : ` on host ${holder.host}`;
  const e = new ChimeError(
    'store_locked',
    `store_locked: ${dir} is in use by process ${holder.pid}${where} (its lock file ${path.join(dir, 'lock')}); one process per FileStore directory`,
    'dir',
  );
  e.pid = holder.pid;
  return e;
}

function tryLink(from, to) {
  try {
    fs.linkSync(from, to);
    return true;
  } catch (e) {
    if (e.code === 'EEXIST') return false;
    throw e;
  }
}

/** `{text, holder}` of a lock file, or null if there is none. */
function readLock(file) {
  let text;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    if (e.code === 'ENOENT') return null;
    throw e;
  }
  let holder;
  try {
    holder = JSON.parse(text);
  } catch {
    holder = null;
  }
  // Not ours (an older or foreign file): a holder that cannot be alive.
  if (!holder || !Number.isInteger(holder.pid)) holder = { pid: 0, host: os.hostname(), start: null };
  return { text, holder };
}

/** Whether the holder may still run: the pid lives (with its start time, where known). */
function alive({ pid, host, start }) {
  if (host !== os.hostname()) return true;
  if (!(pid > 0)) return false;
  try {
    process.kill(pid, 0);
  } catch (e) {
    if (e.code === 'ESRCH') return false;
    // EPERM: another user's process.
  }
  const now = startTime(pid);
  return start === null || now === null || now === start;
}

/** A process's start time (clock ticks since boot, /proc/<pid>/stat field 22), or null off Linux. */
function startTime(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

/** Makes a rename or a new file in `dir` durable. */
function syncDir(dir) {
  const fd = fs.openSync(dir, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}
