// Overview: every queue's depth by state, the last hour's throughput,
// job duration and fire lateness (GET /v1/metrics/history), and the
// node's health and, on PostgreSQL, its replica role and the lease.
import { get } from './api.js';
import { h, iso, table } from './dom.js';
import { lineChart } from './charts.js';

const MAX_SERIES = 6;

function sum(sample, f) {
  return sample.queues.reduce((a, q) => a + f(q), 0);
}

function charts(history) {
  const perMin = 60000 / history.intervalMs;
  const xs = history.samples;
  const pts = (f) => xs.map((x) => [x.at, +f(x).toFixed(2)]);
  const depthOf = (q) => q.scheduled + q.available + q.claimed;
  const last = xs.at(-1);
  const top = last ? [...last.queues].sort((a, b) => depthOf(b) - depthOf(a)).slice(0, MAX_SERIES).map((q) => q.queue) : [];
  const depth = top.map((name) => ({ name, points: pts((x) => { const q = x.queues.find((y) => y.queue === name); return q ? depthOf(q) : 0; }) }));
  const avg = (x, s, c) => { const n = sum(x, c); return n ? sum(x, s) / n : 0; };
  return h('div', { class: 'grid' },
    lineChart('Queue depth (scheduled + available + claimed)', depth),
    lineChart('Throughput per minute', [
      { name: 'completed', points: pts((x) => sum(x, (q) => q.completed) * perMin) },
      { name: 'retried', points: pts((x) => sum(x, (q) => q.retried) * perMin) },
      { name: 'dead', points: pts((x) => sum(x, (q) => q.died) * perMin) },
    ]),
    lineChart('Job duration (ms)', [
      { name: 'mean', points: pts((x) => avg(x, (q) => q.durationMsSum, (q) => q.durationCount)) },
      { name: 'max', points: pts((x) => Math.max(0, ...x.queues.map((q) => q.durationMsMax))) },
    ], ' ms'),
    lineChart('Fire lateness (ms)', [
      { name: 'mean', points: pts((x) => avg(x, (q) => q.latenessMsSum, (q) => q.fires)) },
      { name: 'max', points: pts((x) => Math.max(0, ...x.queues.map((q) => q.latenessMsMax))) },
    ], ' ms'));
}

function node(health) {
  const r = health.replica;
  const rows = [
    ['status', health.status], ['driver', health.driver], ['store', health.store],
    ['leader', health.leader === undefined || health.leader === null ? '—' : health.leader ? 'yes' : 'no'],
    ['schedules', health.schedules ?? '—'], ['live jobs', health.liveJobs ?? '—'],
    ['last commit', iso(health.lastCommitAt)],
  ];
  if (r) {
    rows.push(['replica role', r.role], ['holder', r.holder], ['database', r.database.reachable ? 'reachable' : `unreachable: ${r.database.error ?? ''}`]);
    if (r.lease) rows.push(['lease holder', r.lease.holder ?? 'none'], ['lease epoch', r.lease.epoch], ['lease expires', iso(r.lease.leaseExpiresAtMs)]);
  }
  return h('section', { class: 'card', 'aria-labelledby': 'node-h' }, h('h2', { id: 'node-h' }, r ? 'Replica' : 'Node'),
    h('table', {}, h('tbody', {}, rows.map(([k, v]) => h('tr', {}, h('th', { scope: 'row' }, k), h('td', { 'data-field': k }, String(v)))))));
}

export async function render() {
  const el = h('div', {});
  async function refresh() {
    const [queues, history, health] = await Promise.all([
      get('/v1/queues'), get('/v1/metrics/history'),
      fetch('/healthz').then((r) => r.json()).catch(() => ({ status: 'unreachable' })),
    ]);
    const shown = queues.queues.slice(0, 50);
    el.replaceChildren(
      h('h1', {}, 'Overview'),
      h('section', { 'aria-labelledby': 'depth-h' },
        h('h2', { id: 'depth-h' }, 'Queues by state'),
        table('Queue depth by state', ['Queue', 'Scheduled', 'Available', 'Claimed', 'Dead', 'Completed', 'Cancelled', 'Oldest available'],
          shown.map((q) => h('tr', { 'data-queue': q.queue },
            h('td', {}, h('a', { href: `#/queues/${encodeURIComponent(q.queue)}` }, q.queue)),
            ...[q.scheduled, q.available, q.claimed, q.dead, q.completed, q.cancelled].map((n) => h('td', { class: 'num' }, n)),
            h('td', {}, q.oldestAvailableAgeMs === null || q.oldestAvailableAgeMs === undefined ? '—' : `${Math.round(q.oldestAvailableAgeMs / 1000)} s`)))),
        queues.queues.length > shown.length ? h('p', { class: 'muted' }, `${shown.length} of ${queues.queues.length} queues; all are on `, h('a', { href: '#/queues' }, 'Queues'), '.') : null),
      h('section', { 'aria-labelledby': 'hist-h' },
        h('h2', { id: 'hist-h' }, `Last hour (one sample every ${history.intervalMs / 1000} s, ${history.samples.length} so far)`),
        charts(history)),
      node(health));
  }
  await refresh();
  return { el, refresh };
}
