// `Engine.drain()` builds commands from the packed form (src/packed.rs,
// unpack in js/core.js); it must give exactly the objects JSON.parse of
// the JSON form gives. Two engines run the same inputs: one is drained
// packed, the other as JSON, after every input; every command kind and
// every field shape the packed form special-cases is produced: all fire
// reasons, manual and backfill fire ids, local jobs (`job` set) and
// external fires (`job: null`), payloads null / nested / non-ASCII,
// headers empty / non-empty, several queues interleaved, a new epoch,
// Wake, Cancel and events.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Engine } from '../index.node.js';

const T0 = Date.UTC(2026, 2, 8, 6); // 2026-03-08T06:00Z, New York's spring-forward day
const MIN = 60_000;

function script(step) {
  step(T0, { leadership: { epoch: 3, validUntil: T0 + 1000 * MIN } });
  step(T0, { declareQueue: { name: 'ext', mode: 'external' } });
  step(T0, { declareQueue: { name: 'ext/two', mode: 'external' } });
  step(T0, { declareQueue: { name: 'local', mode: 'local' } });
  step(T0, { upsertSchedule: { name: 'a.plain', spec: '@every 1m', overlap: 'allow', target: { queue: 'ext' } } });
  step(T0, {
    upsertSchedule: {
      name: 'b:payload',
      spec: '*/2 * * * *',
      tz: 'America/New_York',
      overlap: 'allow',
      target: {
        queue: 'ext/two',
        payload: { text: 'café ☕ 𝄞 "quoted" \\ back', n: [1, 2.5, -3e-7], nested: { ok: true, none: null } },
        headers: { 'x-trace': 'é-1', b: '2' },
      },
    },
  });
  // A target with a priority and an attempts override: its Enqueue goes as JSON.
  step(T0, { upsertSchedule: { name: 'f.urgent', spec: '@every 1m', overlap: 'allow', target: { queue: 'ext', priority: 5, maxAttempts: 2 } } });
  step(T0, { upsertSchedule: { name: 'c-local', spec: '@every 1m', overlap: 'buffer_one', target: { queue: 'local', payload: 'just a string' } } });
  step(T0, { upsertSchedule: { name: 'd_cancel', spec: '@every 1m', overlap: 'cancel_previous', target: { queue: 'local' } } });
  step(T0, { upsertSchedule: { name: 'e/skip', spec: '@every 1m', overlap: 'skip', catchup: { max: 1 }, target: { queue: 'local' } } });
  // On time, then a gap (catch-up and skips), then manual and backfill fires.
  step(T0 + MIN, 'advance');
  step(T0 + 2 * MIN, 'advance');
  step(T0 + 9 * MIN + 7, 'advance');
  step(T0 + 9 * MIN + 8, { triggerSchedule: { name: 'a.plain' } });
  step(T0 + 9 * MIN + 9, { backfill: { name: 'b:payload', from: T0 - 10 * MIN, to: T0 } });
  step(T0 + 9 * MIN + 10, { enqueue: { queue: 'local', payload: { direct: 1 } } });
  // A worker finishes c-local's job: its buffered fire is released.
  step(T0 + 9 * MIN + 11, { claim: { queue: 'local', worker: 'w', max: 100 } });
  step(T0 + 10 * MIN, 'advance');
  // A new epoch.
  step(T0 + 11 * MIN, { leadership: { epoch: 4, validUntil: T0 + 1000 * MIN } });
  step(T0 + 12 * MIN, 'advance');
  step(T0 + 12 * MIN, { removeSchedule: { name: 'a.plain' } });
}

test('drain() gives the same objects as JSON.parse(drainJson()) for every command kind', () => {
  const packed = new Engine({ seed: 11, standalone: false });
  const json = new Engine({ seed: 11, standalone: false });
  const kinds = new Set();
  const reasons = new Set();
  const urgent = [];
  let commands = 0;
  script((now, input) => {
    const a = packed.handle(now, input);
    const b = json.handle(now, input);
    assert.deepStrictEqual(a, b);
    // The buffered fire needs the claimed job to complete; d_cancel's
    // stays running, so its next fire cancels it (a Cancel command).
    for (const job of a.claimed?.jobs ?? []) {
      if (job.fire?.startsWith('d_cancel@')) continue;
      const done = { complete: { job: job.job, token: job.token } };
      packed.handle(now, done);
      json.handle(now, done);
    }
    const got = packed.drain();
    const want = JSON.parse(json.drainJson());
    assert.deepStrictEqual(got, want);
    commands += got.length;
    for (const c of got) {
      const kind = Object.keys(c)[0];
      kinds.add(kind === 'event' ? `event:${c.event.kind}` : kind);
      if (c.fire) reasons.add(c.fire.reason);
      if (c.enqueue?.priority !== undefined) urgent.push(c.enqueue);
    }
  });
  assert.ok(urgent.length > 0, 'no Enqueue with a priority');
  for (const e of urgent) assert.deepStrictEqual([e.priority, e.maxAttempts], [5, 2]);
  assert.ok(commands > 30, `${commands} commands`);
  for (const k of ['fire', 'enqueue', 'wake', 'cancel', 'event:fire_skipped']) assert.ok(kinds.has(k), `no ${k} in ${[...kinds]}`);
  assert.deepStrictEqual([...reasons].sort(), ['backfill', 'buffered', 'catchup', 'manual', 'scheduled']);
  packed.free();
  json.free();
});

test('commands from one drain are separate objects', () => {
  const e = new Engine();
  e.handle(T0, { declareQueue: { name: 'ext', mode: 'external' } });
  for (const name of ['x', 'y']) {
    e.handle(T0, { upsertSchedule: { name, spec: '@every 1m', overlap: 'allow', target: { queue: 'ext', payload: { n: 1 } } } });
  }
  e.handle(T0 + MIN, 'advance');
  const enq = e.drain().filter((c) => c.enqueue).map((c) => c.enqueue);
  assert.equal(enq.length, 2);
  enq[0].payload.n = 2;
  enq[0].headers.h = 'x';
  assert.deepStrictEqual(enq[1].payload, { n: 1 });
  assert.deepStrictEqual(enq[1].headers, {});
  e.free();
});
