// api.d.ts types `Engine.handle`'s reply per input kind (`ReplyKinds`); the
// type check proves the tags exist on the wire, this proves the pairing:
// one input of every kind, through the real engine, replies with the tag
// that ReplyKinds names for it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Engine } from '../index.node.js';

const T0 = Date.UTC(2026, 0, 1);
const HOUR = 3_600_000;

const api = readFileSync(new URL('../api.d.ts', import.meta.url), 'utf8');
const block = /export interface ReplyKinds \{([^}]*)\}/.exec(api)[1];
const KINDS = Object.fromEntries([...block.matchAll(/(\w+): '(\w+)';/g)].map((m) => [m[1], m[2]]));

const tagOf = (input) => (typeof input === 'string' ? input : Object.keys(input)[0]);
const tagOfReply = (reply) => (typeof reply === 'string' ? reply : Object.keys(reply)[0]);

test('every input kind replies with the tag ReplyKinds gives it', () => {
  const e = new Engine({ seed: 1 });
  const seen = {};
  const h = (now, input) => {
    const reply = e.handle(now, input);
    seen[tagOf(input)] = tagOfReply(reply);
    return reply;
  };
  h(T0, { declareQueue: { name: 'q' } });
  h(T0, { upsertSchedule: { name: 's', spec: '@every 1h', overlap: 'allow', target: { queue: 'q' } } });
  h(T0, { pauseSchedule: { name: 's' } });
  h(T0, { resumeSchedule: { name: 's' } });
  h(T0 + HOUR, 'advance');
  const fire = e.drain().find((c) => c.fire).fire.fireId;
  h(T0 + HOUR, { fireSettled: { fire, outcome: 'succeeded' } });
  h(T0 + HOUR, { triggerSchedule: { name: 's' } });
  h(T0 + HOUR, { backfill: { name: 's', from: T0 - 3 * HOUR, to: T0 } });
  e.drain();
  const a = h(T0 + HOUR, { enqueue: { queue: 'q', payload: 1 } }).enqueued.job;
  const b = h(T0 + HOUR, { enqueue: { queue: 'q', payload: 2, priority: -1 } }).enqueued.job;
  const c = h(T0 + HOUR, { enqueue: { queue: 'q', payload: 3, priority: -2 } }).enqueued.job;
  const claimed = h(T0 + HOUR, { claim: { queue: 'q', worker: 'w', max: 100 } }).claimed.jobs;
  const lease = (id) => claimed.find((j) => j.job === id).token;
  h(T0 + HOUR, { heartbeat: { job: a, token: lease(a) } });
  h(T0 + HOUR, { complete: { job: a, token: lease(a) } });
  h(T0 + HOUR, { fail: { job: b, token: lease(b), error: 'boom' } });
  h(T0 + HOUR, { cancelJob: { job: c } });
  h(T0 + HOUR, { redrive: { queue: 'q' } });
  h(T0 + HOUR, { purgeDead: { queue: 'q' } });
  const { token } = h(T0 + HOUR, { acquireLease: { name: 'l', owner: 'o', ttlMs: 1000 } }).lease;
  const renewed = h(T0 + HOUR, { renewLease: { name: 'l', token, ttlMs: 1000 } }).lease.token;
  h(T0 + HOUR, { releaseLease: { name: 'l', token: renewed } });
  h(T0 + HOUR, { removeSchedule: { name: 's' } });
  h(T0 + HOUR, 'stop');
  h(T0 + HOUR, 'recover');
  h(T0 + HOUR, { enqueueOutbox: { queue: '__chime_outbox:mail', payload: { to: 'a' } } });
  // Leadership: an engine that is not standalone.
  const follower = new Engine({ standalone: false });
  seen.leadership = tagOfReply(follower.handle(T0, { leadership: { epoch: 1, validUntil: T0 + HOUR } }));

  assert.equal(Object.keys(KINDS).length, 24);
  assert.deepEqual(seen, KINDS);
});
