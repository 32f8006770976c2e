// FileStore takes its directory's lock: a second process on the same
// directory gets ChimeError `store_locked` (naming the directory and the
// holder's pid) instead of running the same fires; stop() releases the
// lock, and a holder killed with SIGKILL leaves a stale lock that the next
// start takes over. Real child processes (test/lock/child.mjs).
import { test, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { FileStore, ChimeError } from '../index.node.js';

const CHILD = new URL('./lock/child.mjs', import.meta.url).pathname;

// A failed assertion must not leave a child running (the runner would wait for it).
const children = new Set();
afterEach(() => {
  for (const p of children) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
  children.clear();
});

/** Starts a child on `dir`; resolves with its first output line (parsed) and the handle. */
function child(dir) {
  const p = spawn(process.execPath, [CHILD, dir], { stdio: ['pipe', 'pipe', 'pipe'] });
  children.add(p);
  let out = '';
  let err = '';
  p.stderr.on('data', (d) => (err += d));
  const exited = new Promise((resolve) => p.on('exit', (code, signal) => resolve({ code, signal, err })));
  const first = new Promise((resolve, reject) => {
    p.stdout.on('data', (d) => {
      out += d;
      const nl = out.indexOf('\n');
      if (nl >= 0) resolve(JSON.parse(out.slice(0, nl)));
    });
    exited.then(({ code, signal, err }) => reject(new Error(`child exited (${code ?? signal}) before a line: ${err}`)));
  });
  return { p, first, exited };
}

test('a second process on one FileStore directory gets store_locked; stop() releases the lock', { timeout: 60_000 }, async () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'chime-lock-'));
  const dir = path.join(root, 'store');
  const a = child(dir);
  const { started } = await a.first;
  assert.equal(started, a.p.pid);

  const b = child(dir);
  const refused = await b.first.catch((e) => e);
  assert.equal(refused.code, 'store_locked', JSON.stringify(refused));
  assert.equal(refused.pid, a.p.pid);
  assert.ok(refused.message.includes(dir), refused.message);
  assert.ok(refused.message.includes(String(a.p.pid)), refused.message);
  assert.equal((await b.exited).code, 3);

  // The holder still runs; once it stops, the directory is free again.
  a.p.stdin.write('stop\n');
  assert.equal((await a.exited).code, 0);
  assert.ok(!fs.existsSync(path.join(dir, 'lock')), 'stop() left the lock file');
  const c = child(dir);
  assert.equal((await c.first).started, c.p.pid);
  c.p.stdin.write('stop\n');
  assert.equal((await c.exited).code, 0);
  // Only one process ever ran jobs at a time: no fire ran twice at attempt 1.
  const runs = fs.readdirSync(root).filter((f) => f.startsWith('runs-')).flatMap((f) => fs.readFileSync(path.join(root, f), 'utf8').trim().split('\n').filter(Boolean));
  assert.equal(new Set(runs).size, runs.length, runs.join('\n'));
  fs.rmSync(root, { recursive: true, force: true });
});

test('a holder killed with SIGKILL does not block the next start (stale lock)', { timeout: 60_000 }, async () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'chime-lock-'));
  const dir = path.join(root, 'store');
  const a = child(dir);
  await a.first;
  a.p.kill('SIGKILL');
  assert.equal((await a.exited).signal, 'SIGKILL');
  assert.ok(fs.existsSync(path.join(dir, 'lock')), 'the killed process left its lock');
  const b = child(dir);
  assert.equal((await b.first).started, b.p.pid);
  const held = JSON.parse(fs.readFileSync(path.join(dir, 'lock'), 'utf8'));
  assert.equal(held.pid, b.p.pid);
  b.p.stdin.write('stop\n');
  assert.equal((await b.exited).code, 0);
  fs.rmSync(root, { recursive: true, force: true });
});

test('two FileStores on one directory in one process: the second load() throws store_locked', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'chime-lock-'));
  const a = new FileStore(dir);
  a.load();
  const b = new FileStore(dir);
  assert.throws(() => b.load(), (e) => e instanceof ChimeError && e.code === 'store_locked' && e.pid === process.pid && e.message.includes(dir));
  a.close();
  b.load();
  b.close();
  // A lock file that is not a lock (garbage) holds nothing.
  fs.writeFileSync(path.join(dir, 'lock'), 'garbage');
  a.load();
  a.close();
  assert.ok(!fs.existsSync(path.join(dir, 'lock')));
  fs.rmSync(dir, { recursive: true, force: true });
});
