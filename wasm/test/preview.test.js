// preview() and validate(): next fires with civil time, offsets, DST notes;
// errors that name the field and say where in the spec.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { preview, validate, tzdbVersion, ChimeError } from '../index.node.js';

const NY = 'America/New_York';

test('spring forward: a fixed-time spec in the gap shifts to the end of the gap', () => {
  const from = Date.UTC(2026, 2, 7, 12);
  const occ = preview('30 2 * * *', { tz: NY, from, count: 3 });
  assert.deepEqual(occ.map((o) => o.at), [Date.UTC(2026, 2, 8, 7, 0), Date.UTC(2026, 2, 9, 6, 30), Date.UTC(2026, 2, 10, 6, 30)]);
  assert.deepEqual(occ[0], { at: Date.UTC(2026, 2, 8, 7), civil: '2026-03-08T03:00:00', offsetSeconds: -4 * 3600, note: 'shiftedFromGap' });
  assert.equal(occ[1].civil, '2026-03-09T02:30:00');
  assert.equal(occ[1].note, null);
  // With an explicit `gap: skip` the day has no fire.
  const skipped = preview('30 2 * * *', { tz: NY, dst: { gap: 'skip' }, from, count: 1 });
  assert.equal(skipped[0].at, Date.UTC(2026, 2, 9, 6, 30));
});

test('fall back: a fixed-time spec fires once, a stepped one on both passes', () => {
  const from = Date.UTC(2026, 9, 31, 12);
  const once = preview('30 1 * * *', { tz: NY, from, count: 2 });
  assert.equal(once[0].at, Date.UTC(2026, 10, 1, 5, 30));
  assert.equal(once[0].note, 'firstPass');
  assert.equal(once[1].at, Date.UTC(2026, 10, 2, 6, 30));
  const both = preview('0,20,40 1 * * *', { tz: NY, from, count: 6 });
  assert.deepEqual(both.map((o) => o.at - Date.UTC(2026, 10, 1, 5)), [0, 20, 40, 60, 80, 100].map((m) => m * 60_000));
  assert.deepEqual(both.map((o) => o.note), ['firstPass', 'firstPass', 'firstPass', 'secondPass', 'secondPass', 'secondPass']);
  assert.deepEqual(both.map((o) => o.offsetSeconds), [-4, -4, -4, -5, -5, -5].map((h) => h * 3600));
});

test('preview accepts a Date, defaults to now and 10 occurrences', () => {
  const occ = preview('@every 90s', { from: new Date(0) });
  assert.equal(occ.length, 10);
  assert.equal(occ[0].at, 90_000);
  assert.equal(occ[0].civil, '1970-01-01T00:01:30');
  const now = Date.now();
  const next = preview('@every 1h').map((o) => o.at);
  assert.ok(next[0] > now && next[0] <= now + 3_600_000 + 1000);
});

test('validate reports zone, fixed-time and next fire, or the error with its field and column', () => {
  const from = Date.UTC(2026, 0, 1);
  const ok = validate('CRON_TZ=Europe/London 0 9 * * MON-FRI', { from });
  assert.equal(ok.valid, true);
  assert.equal(ok.zone, 'Europe/London');
  assert.equal(ok.fixedTime, true);
  assert.equal(ok.next, Date.UTC(2026, 0, 1, 9));
  assert.equal(validate('@every 1h +15m', { from }).everyMs, 3_600_000);

  const bad = validate('0 9 * * MON-FRU', { from });
  assert.equal(bad.valid, false);
  assert.ok(bad.error instanceof ChimeError);
  assert.equal(bad.error.code, 'invalid_spec');
  assert.equal(bad.error.field, 'spec');
  assert.match(bad.error.message, /field 5/);
  assert.match(bad.error.message, /column/);

  const zone = validate('0 9 * * *', { tz: 'Europe/Lndon', from });
  assert.deepEqual([zone.error.code, zone.error.field], ['invalid_time_zone', 'tz']);
  assert.equal(validate('0 0 31 2 *', { from }).error.code, 'spec_never_fires');
  assert.equal(validate('@at 2020-01-01T00:00:00Z', { from }).error.code, 'spec_never_fires');
  assert.equal(validate('@every 1x', { from }).error.code, 'invalid_duration');
  assert.throws(() => preview('61 * * * *', { from }), (e) => e instanceof ChimeError && e.code === 'invalid_spec');
  assert.throws(() => preview('* * * * *', { from, colour: 1 }), (e) => e.code === 'invalid_input' && e.field === 'options');
});

test('preview refuses what validate refuses: a spec that never fires, an @at in the past, an unknown zone on @every', () => {
  const from = Date.UTC(2026, 0, 1);
  // Before: `[]`, while validate said spec_never_fires.
  assert.throws(() => preview('0 0 31 2 *', { from }), (e) => e instanceof ChimeError && e.code === 'spec_never_fires' && /100 years/.test(e.message));
  assert.throws(() => preview('@at 2020-01-01T00:00:00Z', { from }), (e) => e.code === 'spec_never_fires' && /in the past/.test(e.message));
  assert.match(validate('@at 2020-01-01T00:00:00Z', { from }).error.message, /in the past/);
  // `tz` has no effect on @every, but a zone that does not exist is refused.
  const zone = validate('@every 5s', { tz: 'Nowhere/Atlantis', from });
  assert.deepEqual([zone.error.code, zone.error.field], ['invalid_time_zone', 'tz']);
  assert.equal(validate('@every 5s', { tz: 'Europe/Paris', from }).valid, true);
  // The minimum cadence applies to cron, from its tightest gap.
  assert.equal(validate('* * * * * *', { minIntervalMs: 60_000, from }).error.code, 'interval_too_short');
  assert.equal(validate('* * * * *', { minIntervalMs: 60_000, from }).valid, true);
});

test('the bundled tz database has a version', () => {
  assert.match(tzdbVersion(), /^\d{4}[a-z]$/);
});
