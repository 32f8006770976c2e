// A snapshot computed with another tz database release, restored by the
// npm package: the zoned cursor moves to its civil time's instant under the
// bundled release, `restoredTzChanges()` lists it and a `tz_rules_changed`
// event comes first; under the same release nothing moves.
//
// The old snapshot is the one a 2024b engine writes for a 09:00 schedule in
// Asuncion on 2025-03-30T14:00Z (core's engine/tzdb_tests.rs writes it with
// real 2024b TZif files): cursor 2025-03-31T13:00Z at -04, the boundary
// before it 2025-03-30T13:00Z. The wasm build has only the bundled
// release, so the test takes the bundled snapshot and writes those 2024b
// values into it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Engine } from '../index.node.js';

const START = Date.UTC(2025, 2, 29); // 2025-03-29T00:00Z
const SNAP_AT = Date.UTC(2025, 2, 30, 14); // 2025-03-30T14:00Z
const OLD_9AM = Date.UTC(2025, 2, 31, 13);
const NEW_9AM = Date.UTC(2025, 2, 31, 12);
const HOUR = 3_600_000;

function bundledSnapshot() {
  const e = new Engine();
  e.handle(START, { upsertSchedule: { name: 'report', spec: '0 9 * * *', tz: 'America/Asuncion', overlap: 'allow', target: { queue: 'q' } } });
  e.handle(SNAP_AT, 'advance');
  e.drain();
  return e.snapshot();
}

test('a snapshot of another tz release moves the cursor and says so', () => {
  const snap = JSON.parse(bundledSnapshot());
  const [s] = snap.schedules;
  assert.equal(s.cursor, NEW_9AM);
  assert.deepEqual(s.civil, { time: '2025-03-31T09:00:00', zone: 'America/Asuncion', offsetSeconds: -10800, after: NEW_9AM - 24 * HOUR });
  // As 2024b wrote it.
  snap.tzdb = '2024b';
  s.cursor = OLD_9AM;
  s.civil = { time: '2025-03-31T09:00:00', zone: 'America/Asuncion', offsetSeconds: -14400, after: OLD_9AM - 24 * HOUR };
  const e = Engine.restore(JSON.stringify(snap));
  const [change, ...rest] = e.restoredTzChanges();
  assert.equal(rest.length, 0);
  assert.deepEqual(change, {
    schedule: 'report', zone: 'America/Asuncion', civil: '2025-03-31T09:00:00',
    oldAt: OLD_9AM, newAt: NEW_9AM, oldTzdb: '2024b', newTzdb: JSON.parse(bundledSnapshot()).tzdb,
  });
  const cmds = e.drain();
  assert.deepEqual(cmds[0], { event: { kind: 'tz_rules_changed', ...change } });
  assert.equal(e.schedule('report').nextNominal, NEW_9AM);
  // It fires at the new instant, once.
  e.handle(NEW_9AM, 'advance');
  e.handle(OLD_9AM, 'advance');
  const fired = e.drain().filter((c) => c.fire).map((c) => c.fire.nominal);
  assert.deepEqual(fired, [NEW_9AM]);
});

test('the same release moves nothing and round-trips', () => {
  const json = bundledSnapshot();
  const e = Engine.restore(json);
  assert.deepEqual(e.restoredTzChanges(), []);
  assert.equal(e.drain().length, 0);
  assert.equal(e.snapshot(), json);
  assert.deepEqual(new Engine().restoredTzChanges(), []);
});
