// Compile-time checks of the Node typings (tsc --strict): each expected-error
// directive below must meet an error, or tsc fails on the unused directive.
import { Engine, Scheduler, FileStore, Spec, ChimeError } from 'chime-scheduler';
import type { Command, EnqueueOptions, ReplyOf, SchedulerEvents, StartResult, FiredEvent } from 'chime-scheduler';

const e = new Engine();
// handle's reply follows the input kind.
const { claimed } = e.handle(0, { claim: { queue: 'q', worker: 'w', max: 1 } });
const first: number | undefined = claimed.jobs[0]?.job;
const upserted: ReplyOf<'upsertSchedule'> = e.handle(0, { upsertSchedule: { name: 's', spec: '@every 1h', target: { queue: 'q' } } });
const advanced: 'advanced' = e.handle(0, 'advance');
// @ts-expect-error a claim does not reply `enqueued`
e.handle(0, { claim: { queue: 'q', worker: 'w', max: 1 } }).enqueued;
// @ts-expect-error a typo in an input is a compile error
e.handle(0, { claim: { queue: 'q', worker: 'w', max: 1, lesaMs: 5 } });

// Commands narrow on a plain property test.
for (const cmd of e.drain() as Command[]) {
  if (cmd.fire) console.log(cmd.fire.fireId);
  // @ts-expect-error without the test, `fire` may be undefined
  console.log(cmd.fire.fireId);
}

const s = new Scheduler({ store: new FileStore('./data') });
const opts: EnqueueOptions = { key: 'k', delayMs: 5, runAt: new Date() };
void s.enqueue('q', {}, opts);
// @ts-expect-error `delay` is not an enqueue option (it is `delayMs`)
void s.enqueue('q', {}, { delay: 5 });

// Events: one payload type per event name.
s.on('fired', (e) => {
  const due: number = e.dueAt;
  const fired: FiredEvent = e;
  console.log(due, fired.fireId, e.reason === 'catchup');
  // @ts-expect-error a fire has no error text
  console.log(e.error);
});
s.on('failed', (e) => {
  const retry: number | null = e.retryAt;
  const text: string = e.error;
  const ms: number | null = e.durationMs;
  // @ts-expect-error retryAt may be null (no retry follows)
  const sure: number = e.retryAt;
  console.log(retry, text, ms, sure, e.queue, e.attempt);
});
s.on('skipped', (e: SchedulerEvents['skipped']) => console.log(e.count, e.first, e.last, e.reason));
s.on('dead', (e) => console.log(e.attempts, e.error));
s.on('error', (e) => console.log(e.source, e.event));
// @ts-expect-error not an event of the Scheduler
s.on('fire', () => {});
// @ts-expect-error the listener's payload is the event's
s.on('skipped', (e: FiredEvent) => console.log(e));
const listener = (e: SchedulerEvents['completed']) => console.log(e.durationMs, e.attempt);
s.on('completed', listener).off('completed', listener);
// The handler's job knows its fire's times (null for enqueued jobs).
void s.every('beat', 1000, { overlap: 'skip' }, async (job) => {
  const nominal: number | null = job.nominal;
  const dueAt: number | null = job.dueAt;
  // @ts-expect-error firedAt is null for a job not made by a fire
  const firedAt: number = job.firedAt;
  console.log(nominal, dueAt, firedAt, job.attempt);
});
const started: Promise<StartResult> = s.start({ prune: true });
void started.then((r) => r.pruned.map((name: string) => name.length));
void new Scheduler({ prune: true });
// @ts-expect-error `prune` is a boolean
void new Scheduler({ prune: 'yes' });
const locked = new ChimeError('store_locked', 'store_locked: x');
const holder: number | undefined = locked.pid;
const dir: string = new FileStore('./data').dir;
console.log(holder, dir);

const spec = new Spec('0 9 * * *', { tz: 'Europe/London' });
const next: number | null = spec.next(Date.now());
const err = new ChimeError('freed', 'freed: x');
const code: string = err.code;
console.log(first, upserted, advanced, next, code);
