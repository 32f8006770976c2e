// Errors for malformed inputs, configs, snapshots, journals and spec
// options: code, field and message (with serde_json's line and column)
// exactly as the package gave them before the compact decoder
// (chime_core::decode, used by src/lib.rs). The expectations were recorded
// from the package built from main at 5513bee, whose decoder was serde's
// derive, and the same test passes against that build, so a decoder
// change cannot drift unnoticed. Updated for snapshot format 3 (issue 21:
// the `recover` and `stop` inputs, a snapshot's `stopping`, and the columns
// that `maxInterruptions` and `interrupted` move), with the derive-vs-decoder
// differential tests of chime-core as the check that the two still agree.
// Lookup errors name their field (`unknown_job` has `job`). Updated for the
// snapshot's `tzdb` field (issue 26): the columns it moves, and `tzdb` in the
// list of known fields.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Engine, ChimeError, preview } from '../index.node.js';

const T0 = Date.UTC(2026, 0, 1);

const outcome = (fn) => {
  try {
    const v = fn();
    return { ok: typeof v === 'string' ? v : JSON.stringify(v) };
  } catch (e) {
    if (!(e instanceof ChimeError)) return { thrown: String(e) };
    return { code: e.code, field: e.field ?? null, message: e.message };
  }
};

const rich = () => {
  const e = new Engine({ standalone: false });
  e.handle(T0, { leadership: { epoch: 3, validUntil: T0 + 3_600_000 } });
  e.handle(T0, { declareQueue: { name: 'q', leaseMs: 10_000 } });
  e.handle(T0, { upsertSchedule: { name: 's', spec: '@every 1m', overlap: 'buffer_one', target: { queue: 'q', payload: { n: 1 } } } });
  e.handle(T0, { enqueue: { queue: 'q', key: 'k1', payload: { a: [1, 2.5] }, headers: { h: 'v' } } });
  e.handle(T0, { enqueue: { queue: 'q', payload: null, priority: 3 } });
  e.handle(T0 + 60_000, 'advance');
  e.handle(T0 + 60_000, { claim: { queue: 'q', worker: 'w', max: 1 } });
  e.handle(T0 + 60_000, { acquireLease: { name: 'l', owner: 'o', ttlMs: 5_000 } });
  e.drain();
  return e.snapshot();
};
const snap = rich();

const inputs = {
  unknownVariant: '"advanc"',
  floatForU32: '{"claim":{"queue":"q","worker":"w","max":1.5}}',
  negativeForU32: '{"claim":{"queue":"q","worker":"w","max":-1}}',
  overflowU32: '{"claim":{"queue":"q","worker":"w","max":4294967296}}',
  missingField: '{"claim":{"queue":"q","worker":"w"}}',
  duplicateField: '{"claim":{"queue":"q","worker":"w","max":1,"max":2}}',
  shortSequence: '{"claim":["q","w"]}',
  sequenceForm: '{"claim":["q","w",1]}',
  wrongType: '{"claim":{"queue":5,"worker":"w","max":1}}',
  unknownFieldDenied: '{"enqueue":{"queue":"q","colour":"red"}}',
  unknownFieldIgnored: '{"complete":{"job":1,"token":2,"colour":"red"}}',
  exponentForI32: '{"enqueue":{"queue":"q","priority":1e3}}',
  nestedUnknownVariant: '{"upsertSchedule":{"name":"x","spec":"@every 1h","target":{"queue":"q"},"dst":{"gap":"later"}}}',
  nestedMissing: '{"upsertSchedule":{"name":"x","spec":"@every 1h"}}',
  nestedWrongType: '{"upsertSchedule":{"name":"x","spec":"@every 1h","target":{"queue":"q"},"jitterMs":"5"}}',
  nestedUnknownField: '{"upsertSchedule":{"name":"x","spec":"@every 1h","target":{"queue":"q","x":1}}}',
  floatJobId: '{"heartbeat":{"job":1.0,"token":2}}',
  badFireId: '{"fireSettled":{"fire":"nope","outcome":"succeeded"}}',
  badOutcome: '{"fireSettled":{"fire":"s@1000","outcome":"maybe"}}',
  grantMissing: '{"leadership":{"epoch":1}}',
  grantNull: '{"leadership":null}',
  timestampOutOfRange: '{"backfill":{"name":"s","from":-5,"to":1}}',
  unitWithValue: '{"advance":1}',
  newtypeAsString: '"enqueue"',
  truncated: '{"claim":{"queue":"q","worker":"w","max":1}',
  trailing: '{"claim":{"queue":"q","worker":"w","max":1}} x',
  queueConfigWrongType: '{"declareQueue":{"name":"q","leaseMs":"1s"}}',
  retentionUnknown: '{"declareQueue":{"name":"q","retention":{"completedMax":1,"x":1}}}',
  multiLine: '{\n"claim": {\n  "queue": "q",\n  "worker": "w",\n  "max": true\n}\n}',
  notAnObject: '[]',
};

const out = {};
for (const [name, text] of Object.entries(inputs)) {
  out[`handle.${name}`] = outcome(() => new Engine().handleJson(T0, text));
}
const configs = {
  floatSeed: { seed: 1.5 },
  negativeLimit: { limits: { queues: -1 } },
  unknownLimit: { limits: { nope: 1 } },
  wrongType: { standalone: 'yes' },
  unknownField: { seed: 1, colour: 'red' },
};
for (const [name, c] of Object.entries(configs)) {
  out[`config.${name}`] = outcome(() => new Engine(c).config);
}
const snapshots = {
  valid: snap,
  floatFormat: snap.replace('"format":3', '"format":2.5'),
  unknownJobState: snap.replace('"state":"claimed"', '"state":"zzz"'),
  unknownTopField: snap.replace('{"format":3', '{"colour":1,"format":3'),
  truncated: snap.slice(0, snap.length - 20),
  incoherentQueues: snap.replace('"queue":"q","state":"available"', '"queue":"other","state":"available"'),
  incoherentLeases: snap.replace('"owner":"o","token":1', '"owner":"o","token":2'),
  missingLeases: snap.replace(/,"leases":\{.*\}(,"tzdb":"[^"]*")\}$/, '$1}'),
};
for (const [name, s] of Object.entries(snapshots)) {
  if (name !== 'valid' && s === snap) throw new Error(`snapshot case ${name} changed nothing`);
  out[`restore.${name}`] = outcome(() => Engine.restore(s).snapshot());
}
const journals = {
  badSecondLine: '{"now":1,"input":"advance"}\n{"now":2,"input":{"claim":{"max":1}}}\n',
  floatNow: '{"now":1.5,"input":"advance"}\n',
  unknownField: '{"now":1,"input":"advance","x":1}\n',
};
for (const [name, j] of Object.entries(journals)) {
  out[`replay.${name}`] = outcome(() => JSON.stringify(Engine.replay(null, j).replies));
}
const specOptions = {
  valid: { dst: { gap: 'shift', fold: 'last' }, tz: 'America/New_York', count: 2 },
  unknownGap: { dst: { gap: 'later' } },
  dstWrongType: { dst: 5 },
  dstUnknownField: { dst: { gap: 'skip', x: 1 } },
  dstSequence: { dst: ['skip', 'both'], tz: 'America/New_York', count: 1 },
  dstNull: { dst: null },
  floatCount: { count: 1.5 },
  unknownOption: { colour: 1 },
};
for (const [name, o] of Object.entries(specOptions)) {
  out[`preview.${name}`] = outcome(() => preview('30 2 * * *', { from: T0, ...o }));
}

const expected = {
  "handle.unknownVariant": {
    "code": "invalid_input",
    "field": "input",
    "message": "invalid_input: input: unknown variant `advanc`, expected one of `advance`, `declareQueue`, `upsertSchedule`, `removeSchedule`, `pauseSchedule`, `resumeSchedule`, `triggerSchedule`, `backfill`, `enqueue`, `claim`, `heartbeat`, `complete`, `fail`, `cancelJob`, `redrive`, `purgeDead`, `fireSettled`, `leadership`, `acquireLease`, `renewLease`, `releaseLease`, `recover`, `stop`, `enqueueOutbox` at line 1 column 8"
  },
  "handle.floatForU32": {
    "code": "invalid_input",
    "field": "input",
    "message": "invalid_input: input: invalid type: floating point `1.5`, expected u32 at line 1 column 44"
  },
  "handle.negativeForU32": {
    "code": "invalid_input",
    "field": "input",
    "message": "invalid_input: input: invalid value: integer `-1`, expected u32 at line 1 column 43"
  },
  "handle.overflowU32": {
    "code": "invalid_input",
    "field": "input",
    "message": "invalid_input: input: invalid value: integer `4294967296`, expected u32 at line 1 column 51"
  },
  "handle.missingField": {
    "code": "invalid_input",
    "field": "input",
    "message": "invalid_input: input: missing field `max` at line 1 column 35"
  },
  "handle.duplicateField": {
    "code": "invalid_input",
    "field": "input",
    "message": "invalid_input: input: duplicate field `max` at line 1 column 48"
  },
  "handle.shortSequence": {
    "code": "invalid_input",
    "field": "input",
    "message": "invalid_input: input: invalid length 2, expected struct variant Input::Claim with 4 elements at line 1 column 18"
  },
  "handle.sequenceForm": {
    "ok": "{\"claimed\":{\"jobs\":[]}}"
  },
  "handle.wrongType": {
    "code": "invalid_input",
    "field": "input",
    "message": "invalid_input: input: invalid type: integer `5`, expected a string at line 1 column 19"
  },
  "handle.unknownFieldDenied": {
    "code": "invalid_input",
    "field": "input",
    "message": "invalid_input: input: unknown field `colour`, expected one of `queue`, `payload`, `key`, `runAt`, `delayMs`, `priority`, `maxAttempts`, `headers` at line 1 column 32"
  },
  "handle.unknownFieldIgnored": {
    "code": "unknown_job",
    "field": "job",
    "message": "unknown_job: no job 1"
  },
  "handle.exponentForI32": {
    "code": "invalid_input",
    "field": "input",
    "message": "invalid_input: input: invalid type: floating point `1000.0`, expected i32 at line 1 column 38"
  },
  "handle.nestedUnknownVariant": {
    "code": "invalid_input",
    "field": "input",
    "message": "invalid_input: input: unknown variant `later`, expected `shift` or `skip` at line 1 column 92"
  },
  "handle.nestedMissing": {
    "code": "invalid_input",
    "field": "input",
    "message": "invalid_input: input: missing field `target` at line 1 column 49"
  },
  "handle.nestedWrongType": {
    "code": "invalid_input",
    "field": "input",
    "message": "invalid_input: input: invalid type: string \"5\", expected i64 at line 1 column 86"
  },
  "handle.nestedUnknownField": {
    "code": "invalid_input",
    "field": "input",
    "message": "invalid_input: input: unknown field `x`, expected one of `queue`, `payload`, `priority`, `maxAttempts`, `headers` at line 1 column 74"
  },
  "handle.floatJobId": {
    "code": "invalid_input",
    "field": "input",
    "message": "invalid_input: input: invalid type: floating point `1.0`, expected u64 at line 1 column 23"
  },
  "handle.badFireId": {
    "code": "invalid_input",
    "field": "input",
    "message": "invalid_input: input: invalid fire id \"nope\" at line 1 column 29"
  },
  "handle.badOutcome": {
    "code": "invalid_input",
    "field": "input",
    "message": "invalid_input: input: unknown variant `maybe`, expected `succeeded` or `failed` at line 1 column 49"
  },
  "handle.grantMissing": {
    "code": "invalid_input",
    "field": "input",
    "message": "invalid_input: input: missing field `validUntil` at line 1 column 25"
  },
  "handle.grantNull": {
    "ok": "{\"leadership\":{\"leader\":true}}"
  },
  "handle.timestampOutOfRange": {
    "code": "invalid_input",
    "field": "input",
    "message": "invalid_input: input: invalid_timestamp: -5 ms is outside years 1970..=9999 at line 1 column 33"
  },
  "handle.unitWithValue": {
    "code": "invalid_input",
    "field": "input",
    "message": "invalid_input: input: invalid type: integer `1`, expected unit at line 1 column 12"
  },
  "handle.newtypeAsString": {
    "code": "invalid_input",
    "field": "input",
    "message": "invalid_input: input: invalid type: unit variant, expected newtype variant"
  },
  "handle.truncated": {
    "code": "invalid_input",
    "field": "input",
    "message": "invalid_input: input: EOF while parsing an object at line 1 column 43"
  },
  "handle.trailing": {
    "code": "invalid_input",
    "field": "input",
    "message": "invalid_input: input: trailing characters at line 1 column 46"
  },
  "handle.queueConfigWrongType": {
    "code": "invalid_input",
    "field": "input",
    "message": "invalid_input: input: invalid type: string \"1s\", expected i64 at line 1 column 42"
  },
  "handle.retentionUnknown": {
    "code": "invalid_input",
    "field": "input",
    "message": "invalid_input: input: unknown field `x`, expected `completedMax` or `completedMs` at line 1 column 61"
  },
  "handle.multiLine": {
    "code": "invalid_input",
    "field": "input",
    "message": "invalid_input: input: invalid type: boolean `true`, expected u32 at line 5 column 13"
  },
  "handle.notAnObject": {
    "code": "invalid_input",
    "field": "input",
    "message": "invalid_input: input: expected value at line 1 column 1"
  },
  "config.floatSeed": {
    "code": "invalid_input",
    "field": "config",
    "message": "invalid_input: config: invalid type: floating point `1.5`, expected u64 at line 1 column 11"
  },
  "config.negativeLimit": {
    "code": "invalid_input",
    "field": "config",
    "message": "invalid_input: config: invalid value: integer `-1`, expected usize at line 1 column 22"
  },
  "config.unknownLimit": {
    "code": "invalid_input",
    "field": "config",
    "message": "invalid_input: config: unknown field `nope`, expected one of `payloadBytes`, `nameChars`, `schedules`, `queues`, `claimBatch`, `catchupFires`, `backfillFires`, `firesPerAdvance`, `liveJobs`, `dedupKeys`, `deadLettersPerQueue`, `completedPerQueue`, `pendingCommands`, `textBytes`, `headers`, `pauseChanges`, `runsPerSchedule` at line 1 column 17"
  },
  "config.wrongType": {
    "code": "invalid_input",
    "field": "config",
    "message": "invalid_input: config: invalid type: string \"yes\", expected a boolean at line 1 column 19"
  },
  "config.unknownField": {
    "code": "invalid_input",
    "field": "config",
    "message": "invalid_input: config: unknown field `colour`, expected one of `seed`, `standalone`, `minIntervalMs`, `horizonYears`, `limits` at line 1 column 18"
  },
  "restore.floatFormat": {
    "code": "invalid_input",
    "field": "snapshot",
    "message": "invalid_input: snapshot: invalid type: floating point `2.5`, expected u32 at line 1 column 13"
  },
  "restore.unknownJobState": {
    "code": "invalid_input",
    "field": "snapshot",
    "message": "invalid_input: snapshot: unknown variant `zzz`, expected one of `scheduled`, `available`, `claimed`, `completed`, `dead`, `dropped`, `cancelled` at line 1 column 1678"
  },
  "restore.unknownTopField": {
    "code": "invalid_input",
    "field": "snapshot",
    "message": "invalid_input: snapshot: unknown field `colour`, expected one of `format`, `config`, `clock`, `leadership`, `schedules`, `versionFloor`, `seqFloor`, `queues`, `leases`, `stopping`, `tzdb` at line 1 column 9"
  },
  "restore.truncated": {
    "code": "invalid_input",
    "field": "snapshot",
    "message": "invalid_input: snapshot: EOF while parsing an object at line 1 column 2016"
  },
  "restore.incoherentQueues": {
    "code": "invalid_input",
    "field": "snapshot",
    "message": "invalid_input: snapshot: job 1: unknown queue at line 1 column 1936"
  },
  "restore.incoherentLeases": {
    "code": "invalid_input",
    "field": "snapshot",
    "message": "invalid_input: snapshot: lease \"l\": token not issued or not unique at line 1 column 2020"
  },
  "restore.missingLeases": {
    "code": "invalid_input",
    "field": "snapshot",
    "message": "invalid_input: snapshot: missing field `leases` at line 1 column 1948"
  },
  "replay.badSecondLine": {
    "code": "invalid_journal",
    "field": "journal",
    "message": "invalid_journal: line 2: missing field `queue` at line 1 column 35"
  },
  "replay.floatNow": {
    "code": "invalid_journal",
    "field": "journal",
    "message": "invalid_journal: line 1: invalid type: floating point `1.5`, expected i64 at line 1 column 10"
  },
  "replay.unknownField": {
    "code": "invalid_journal",
    "field": "journal",
    "message": "invalid_journal: line 1: unknown field `x`, expected `now` or `input` at line 1 column 30"
  },
  "preview.valid": {
    "ok": "[{\"at\":1767252600000,\"civil\":\"2026-01-01T02:30:00\",\"offsetSeconds\":-18000,\"note\":null},{\"at\":1767339000000,\"civil\":\"2026-01-02T02:30:00\",\"offsetSeconds\":-18000,\"note\":null}]"
  },
  "preview.unknownGap": {
    "code": "invalid_input",
    "field": "options",
    "message": "invalid_input: options: unknown variant `later`, expected `shift` or `skip` at line 1 column 21"
  },
  "preview.dstWrongType": {
    "code": "invalid_input",
    "field": "options",
    "message": "invalid_input: options: invalid type: integer `5`, expected struct DstPolicy at line 1 column 8"
  },
  "preview.dstUnknownField": {
    "code": "invalid_input",
    "field": "options",
    "message": "invalid_input: options: unknown field `x`, expected `gap` or `fold` at line 1 column 24"
  },
  "preview.dstSequence": {
    "ok": "[{\"at\":1767252600000,\"civil\":\"2026-01-01T02:30:00\",\"offsetSeconds\":-18000,\"note\":null}]"
  },
  "preview.dstNull": {
    "code": "invalid_input",
    "field": "options",
    "message": "invalid_input: options: invalid type: null, expected struct DstPolicy at line 1 column 11"
  },
  "preview.floatCount": {
    "code": "invalid_input",
    "field": "options",
    "message": "invalid_input: options: invalid type: floating point `1.5`, expected usize at line 1 column 12"
  },
  "preview.unknownOption": {
    "code": "invalid_input",
    "field": "options",
    "message": "invalid_input: options: unknown field `colour`, expected one of `tz`, `dst`, `from`, `count`, `minIntervalMs`, `horizonYears` at line 1 column 9"
  }
};

test('malformed inputs, configs, snapshots, journals and options give the pinned errors', () => {
  assert.equal(out['restore.valid'].ok, snap, 'a valid snapshot round-trips');
  delete out['restore.valid'];
  assert.deepEqual(Object.keys(out), Object.keys(expected));
  for (const [name, want] of Object.entries(expected)) {
    assert.deepEqual(out[name], want, name);
  }
});
