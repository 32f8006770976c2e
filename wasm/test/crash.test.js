// Crash test with real processes: a child running the Scheduler on a
// FileStore is SIGKILLed at random moments and restarted on the same files.
// Afterwards: no fire was issued twice, every boundary fired or was skipped
// with a reason, every job completed, and a handler saw a job again only
// after a crash interrupted its attempt, under the same attempt number (an
// interruption is not a failure; `job_interrupted` counts it).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const CHILD = new URL('./crash/child.mjs', import.meta.url).pathname;
const KILLS = Number(process.env.CHIME_CRASH_KILLS ?? 12);

function start(dir, run, mode) {
  const child = spawn(process.execPath, [CHILD, dir, String(run), ...(mode ? [mode] : [])], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal, stdout, stderr })));
  return { child, exited };
}

test(`scheduler survives ${KILLS} SIGKILLs without a double or lost fire`, { timeout: 180_000 }, async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'chime-crash-'));
  const t0 = Date.now();
  for (let run = 0; run < KILLS; run++) {
    const { child, exited } = start(dir, run);
    // Random moments: during start-up and replay, mid-handler, mid-commit.
    await new Promise((r) => setTimeout(r, 150 + Math.random() * 1600));
    child.kill('SIGKILL');
    const { signal, code, stderr } = await exited;
    assert.ok(signal === 'SIGKILL', `run ${run} ended by itself (code ${code}): ${stderr}`);
  }
  const final = await start(dir, KILLS, 'final').exited;
  assert.equal(final.code, 0, final.stderr);
  const state = JSON.parse(final.stdout);
  const log = fs.readFileSync(path.join(dir, 'handler.log'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));

  // Handler starts per job, in log order.
  const starts = new Map();
  for (const r of log.filter((r) => r.ev === 'start')) {
    if (!starts.has(r.job)) starts.set(r.job, []);
    starts.get(r.job).push(r);
  }
  // No fire issued twice: one job per fire id.
  const jobOfFire = new Map();
  for (const [job, rs] of starts) {
    for (const r of rs) {
      if (r.fire === null) continue;
      const other = jobOfFire.get(r.fire);
      assert.ok(other === undefined || other === job, `fire ${r.fire} made jobs ${other} and ${job}`);
      jobOfFire.set(r.fire, job);
    }
  }
  // A job seen again only after a crash, under the same attempt number
  // (the handler never fails: every repeat is an interruption).
  let repeats = 0;
  for (const [job, rs] of starts) {
    for (let i = 1; i < rs.length; i++) {
      repeats += 1;
      assert.equal(rs[i].attempt, rs[i - 1].attempt, `job ${job} attempts ${rs.map((r) => r.attempt)}`);
      assert.ok(rs[i].run > rs[i - 1].run, `job ${job} ran twice in run ${rs[i].run} without a crash`);
    }
  }
  // Every boundary of each schedule fired or was skipped with a reason
  // (the engine counts both), and every fire reached a handler.
  for (const name of ['tick', 'gated']) {
    const created = log.find((r) => r.ev === 'created' && r.schedule === name);
    assert.ok(created, `${name} created`);
    const info = state[name];
    const boundaries = (info.nextNominal - created.nextFire) / 1000;
    assert.equal(info.fires + info.skipped, boundaries, `${name}: ${info.fires} fired + ${info.skipped} skipped`);
    const handled = new Set([...jobOfFire.keys()].filter((f) => f.startsWith(`${name}@`)));
    assert.equal(handled.size, info.fires, `${name}: every fire reached a handler`);
  }
  // Every enqueued job (fires and plain) completed.
  const { totals } = state.work;
  assert.equal(totals.completed, totals.enqueued, JSON.stringify(state.work));
  assert.equal(totals.dead, 0);
  for (const r of log.filter((r) => r.ev === 'enqueued')) assert.ok(starts.has(r.job), `job ${r.job} never ran`);
  // Plain jobs de-duplicated by key across restarts.
  const keys = log.filter((r) => r.ev === 'enqueued').map((r) => r.key);
  assert.equal(new Set(keys).size, keys.length);
  console.log(`crash test: ${KILLS} kills in ${((Date.now() - t0) / 1000).toFixed(1)} s, ${starts.size} jobs, ` +
    `${state.tick.fires + state.gated.fires} fires, ${state.tick.skipped + state.gated.skipped} skipped, ${repeats} re-runs after a crash`);
  fs.rmSync(dir, { recursive: true, force: true });
});
