// The Scheduler's events (`scheduler.on('fired', …)`), built from the
// engine's commands: a view for listeners, deciding nothing. Each is built
// when its command is drained (from the state just after the input), and
// emitted once that input is durable.

/** Every event a listener may subscribe to. */
export const EVENT_NAMES = ['fired', 'skipped', 'completed', 'failed', 'dead', 'dropped', 'cancelled', 'interrupted', 'error'];

/** The nominal time of a fire id `<schedule>@<nominal_ms>[#m<n>|#b<n>]`. */
export function fireNominal(fireId) {
  return Number(fireId.slice(fireId.lastIndexOf('@') + 1).split('#')[0]);
}

/**
 * The events of one command, as `[name, payload]` pairs. Keeps `fires`
 * (job id → the fire that made it) for the handler's `job.dueAt`, … and
 * consumes `finishing` (job id → the attempt this scheduler just ended:
 * its number, duration and error).
 */
export function eventsOf(cmd, engine, fires, finishing) {
  if (cmd.fire) {
    const f = cmd.fire;
    if (f.job !== null && f.job !== undefined) fires.set(f.job, { nominal: f.nominal, dueAt: f.dueAt, firedAt: f.firedAt });
    return [['fired', { schedule: f.schedule, nominal: f.nominal, dueAt: f.dueAt, firedAt: f.firedAt, fireId: f.fireId, reason: f.reason, queue: f.queue, job: f.job ?? null }]];
  }
  const ev = cmd.event;
  if (!ev) return [];
  const ended = (job) => {
    const mine = finishing.get(job);
    finishing.delete(job);
    const info = engine.job(job);
    fires.delete(job);
    return { mine, info, fire: info?.fire ?? null };
  };
  switch (ev.kind) {
    case 'fire_skipped':
      return [['skipped', { schedule: ev.schedule, reason: ev.reason, count: ev.count, first: ev.first, last: ev.last }]];
    case 'job_completed': {
      const { mine, info, fire } = ended(ev.job);
      return [['completed', { job: ev.job, queue: ev.queue, attempt: mine?.attempt ?? info?.attempt ?? null, durationMs: mine?.durationMs ?? null, fire }]];
    }
    case 'job_retried': {
      // Not ended: the job runs again.
      const mine = finishing.get(ev.job);
      finishing.delete(ev.job);
      const fire = engine.job(ev.job)?.fire ?? null;
      return [['failed', { job: ev.job, queue: ev.queue, attempt: ev.attempt, durationMs: mine?.durationMs ?? null, error: ev.error, retryAt: ev.runAt, fire }]];
    }
    case 'job_dead':
    case 'job_dropped': {
      const { mine, info, fire } = ended(ev.job);
      const attempt = ev.attempts ?? mine?.attempt ?? info?.attempt ?? null;
      const error = mine?.error ?? info?.lastError ?? null;
      const out = [];
      // The last attempt failed (not an interruption): a `failed` without retry first.
      if (ev.reason === 'exhausted') out.push(['failed', { job: ev.job, queue: ev.queue, attempt, durationMs: mine?.durationMs ?? null, error: error ?? '', retryAt: null, fire }]);
      if (ev.kind === 'job_dead') out.push(['dead', { job: ev.job, queue: ev.queue, attempt, attempts: ev.attempts, durationMs: mine?.durationMs ?? null, reason: ev.reason, error, fire }]);
      else out.push(['dropped', { job: ev.job, queue: ev.queue, reason: ev.reason, error, fire }]);
      return out;
    }
    case 'job_cancelled': {
      const { fire } = ended(ev.job);
      return [['cancelled', { job: ev.job, queue: ev.queue, reason: ev.reason, fire }]];
    }
    case 'job_interrupted':
      return [['interrupted', { job: ev.job, queue: ev.queue, attempt: ev.attempt, interruptions: ev.interruptions, fire: engine.job(ev.job)?.fire ?? null }]];
    default:
      return [];
  }
}
