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
import * as fs from 'node:fs';
import * as path from 'node:path';

export class FileStore {
  #dir;
  #gen = 0;
  #fd = null;

  constructor(dir) {
    this.#dir = dir;
  }

  #journalPath(gen) {
    return path.join(this.#dir, `journal-${gen}.jsonl`);
  }

  load() {
    fs.mkdirSync(this.#dir, { recursive: true });
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
