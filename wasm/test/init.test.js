// The `chime-scheduler/init` entry (for esbuild and hosts that bring the
// bytes): nothing is instantiated on import, calls before `init` throw
// `not_initialized`, and `init` takes bytes or a Response. Its own process
// (node --test runs each file in one), so the node entry's initSync has not
// run here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { init, preview, Engine, Spec, ChimeError } from '../index.init.js';

const bytes = readFileSync(new URL('../pkg/chime_wasm_bg.wasm', import.meta.url));
const code = (c, field) => (e) => e instanceof ChimeError && e.code === c && e.field === field;

test('before init: not_initialized; bad sources: invalid_input / init_failed; then bytes or a Response work', async () => {
  assert.throws(() => preview('@every 1h'), code('not_initialized', undefined));
  assert.throws(() => new Engine(), code('not_initialized', undefined));
  assert.throws(() => new Spec('0 9 * * *'), code('not_initialized', undefined));
  await assert.rejects(init({}), code('invalid_input', 'wasm'));
  await assert.rejects(init({ wasm: new Uint8Array([0, 97, 115, 109, 9, 9, 9, 9]) }), code('init_failed', 'wasm'));
  // A Response (as fetch gives), after a failed attempt.
  await init({ wasm: new Response(bytes, { headers: { 'content-type': 'application/wasm' } }) });
  assert.equal(preview('@every 1h', { from: 0, count: 1 })[0].at, 3_600_000);
  // Later calls resolve at once, whatever they are given.
  await init({ wasm: bytes });
  assert.equal(new Spec('0 9 * * *').next(0), 9 * 3_600_000);
});
