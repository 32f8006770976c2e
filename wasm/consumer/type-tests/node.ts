// Compile-time checks of the Node typings (tsc --strict): each expected-error
// directive below must meet an error, or tsc fails on the unused directive.
import { Engine, Scheduler, FileStore, Spec, ChimeError } from 'chime-scheduler';
import type { Command, EnqueueOptions, ReplyOf } from 'chime-scheduler';

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

const spec = new Spec('0 9 * * *', { tz: 'Europe/London' });
const next: number | null = spec.next(Date.now());
const err = new ChimeError('freed', 'freed: x');
const code: string = err.code;
console.log(first, upserted, advanced, next, code);
