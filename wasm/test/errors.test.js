// Every error the package throws is a ChimeError with a stable code (the
// list is in docs/javascript.md, "Errors"): misuse from JS (a missing
// input, a call after free(), a wrong argument type) as well as what the
// engine refuses. Before, these were a TypeError, the glue's
// `Error: null pointer passed to rust`, or an error without a field.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Engine, Spec, ChimeError, preview, validate, encodeInput } from '../index.node.js';

const T0 = Date.UTC(2026, 0, 1);

function throwsChime(fn, code, field) {
  assert.throws(fn, (err) => {
    assert.ok(err instanceof ChimeError, `not a ChimeError: ${err?.name}: ${err?.message}`);
    assert.equal(err.name, 'ChimeError');
    assert.equal(err.code, code, err.message);
    assert.equal(err.field, field, err.message);
    assert.ok(err.message.startsWith(code), err.message);
    return true;
  });
}

test('a missing or unencodable input is invalid_input on input', () => {
  const e = new Engine();
  throwsChime(() => e.handle(0, undefined), 'invalid_input', 'input');
  throwsChime(() => e.handle(0, () => 1), 'invalid_input', 'input');
  throwsChime(() => e.handle(0, { enqueue: { queue: 'q', payload: 1n } }), 'invalid_input', 'input');
  const cyclic = { enqueue: { queue: 'q', payload: {} } };
  cyclic.enqueue.payload.self = cyclic;
  throwsChime(() => e.handle(0, cyclic), 'invalid_input', 'input');
  throwsChime(() => e.handleJson(0, undefined), 'invalid_input', 'input');
  throwsChime(() => encodeInput(undefined), 'invalid_input', 'input');
  // Nothing changed, not even the clock.
  assert.equal(e.clock, 0);
});

test('wrong argument types are invalid_input on the argument', () => {
  throwsChime(() => preview(42), 'invalid_input', 'spec');
  throwsChime(() => preview('@every 1h', 'UTC'), 'invalid_input', 'options');
  throwsChime(() => new Spec(null), 'invalid_input', 'spec');
  throwsChime(() => new Engine('seed'), 'invalid_input', 'config');
  throwsChime(() => Engine.restore(undefined), 'invalid_input', 'snapshot');
  throwsChime(() => Engine.replay(null, 7), 'invalid_input', 'journal');
  const e = new Engine();
  throwsChime(() => e.schedule(1), 'invalid_input', 'name');
  throwsChime(() => e.queueStats(undefined), 'invalid_input', 'queue');
  throwsChime(() => new Spec('@every 1h').next('soon'), 'invalid_input', 'after');
  const v = validate(7);
  assert.equal(v.valid, false);
  assert.ok(v.error instanceof ChimeError);
  assert.equal(v.error.field, 'spec');
});

test('use after free() is `freed`, and free() twice is harmless', () => {
  const e = new Engine();
  e.handle(T0, { upsertSchedule: { name: 'a', spec: '@every 1h', target: { queue: 'q' } } });
  e.free();
  e.free();
  throwsChime(() => e.handle(T0, 'advance'), 'freed', undefined);
  throwsChime(() => e.drain(), 'freed', undefined);
  throwsChime(() => e.pollTimeout(), 'freed', undefined);
  throwsChime(() => e.snapshot(), 'freed', undefined);
  throwsChime(() => e.clock, 'freed', undefined);
  throwsChime(() => e.schedule('a'), 'freed', undefined);
  const s = new Spec('0 9 * * *');
  s.free();
  s.free();
  throwsChime(() => s.next(T0), 'freed', undefined);
  throwsChime(() => s.zone, 'freed', undefined);
});

test('lookup errors name what was not found in `field`', () => {
  const e = new Engine();
  throwsChime(() => e.handle(T0, { triggerSchedule: { name: 'ghost' } }), 'unknown_schedule', 'schedule');
  throwsChime(() => e.handle(T0, { pauseSchedule: { name: 'ghost' } }), 'unknown_schedule', 'schedule');
  throwsChime(() => e.handle(T0, { redrive: { queue: 'nope' } }), 'unknown_queue', 'queue');
  throwsChime(() => e.handle(T0, { complete: { job: 99, token: 1 } }), 'unknown_job', 'job');
  e.handle(T0, { declareQueue: { name: 'q' } });
  const { enqueued } = e.handle(T0, { enqueue: { queue: 'q', payload: 1 } });
  e.handle(T0, { claim: { queue: 'q', worker: 'w', max: 1 } });
  throwsChime(() => e.handle(T0, { complete: { job: enqueued.job, token: 12345 } }), 'lease_lost', 'token');
});

test('an api upsert or removal of a declared schedule is schedule_declared and changes nothing', () => {
  const e = new Engine();
  e.handle(T0, { upsertSchedule: { name: 'nightly', spec: '@every 1h', target: { queue: 'q' } } });
  const api = { name: 'nightly', spec: '@every 1m', target: { queue: 'q' }, origin: 'api' };
  throwsChime(() => e.handle(T0, { upsertSchedule: api }), 'schedule_declared', 'schedule');
  throwsChime(() => e.handle(T0, { removeSchedule: { name: 'nightly', origin: 'api' } }), 'schedule_declared', 'schedule');
  const info = e.schedule('nightly');
  if (info.def.spec !== '@every 1h' || info.def.origin !== undefined) throw new Error(JSON.stringify(info));
  e.handle(T0, { upsertSchedule: { ...api, name: 'adhoc' } });
  if (e.schedule('adhoc').def.origin !== 'api') throw new Error('origin kept');
});
