// Queues and jobs: every queue's counts, a queue's jobs by state with
// search (id, key, payload text) over the API's cursor pages, bulk
// cancel / redrive / purge, enqueue; a job's page (payload, headers,
// attempts, last error, the fire that made it) with cancel and retry.
import { get, post, api, enc, ApiError } from './api.js';
import { h, iso, table, confirmAction, flash } from './dom.js';

const STATES = ['', 'scheduled', 'available', 'claimed', 'completed', 'dead', 'dropped', 'cancelled'];
const LIMIT = 50;
// Most pages one payload search or bulk action walks (each ≤ 1,000 jobs).
const MAX_PAGES = 20;

export async function queues(ctx) {
  const el = h('div', {});
  async function refresh() {
    const list = (await get('/v1/queues')).queues;
    el.replaceChildren(h('h1', {}, 'Queues'),
      table('Queues', ['Queue', 'Scheduled', 'Available', 'Claimed', 'Completed', 'Dead', 'Cancelled', 'Enqueued total'],
        list.map((q) => h('tr', { 'data-queue': q.queue },
          h('td', {}, h('a', { href: `#/queues/${enc(q.queue)}` }, q.queue)),
          ...[q.scheduled, q.available, q.claimed, q.completed, q.dead, q.cancelled, q.totals?.enqueued ?? ''].map((n) => h('td', { class: 'num' }, n))))));
  }
  await refresh();
  return { el, refresh, wants: (kind) => kind !== 'fire' };
}

function payloadText(j) {
  return JSON.stringify(j.payload ?? null);
}

export async function queue(ctx, params) {
  const name = params.name;
  const el = h('div', {});
  const status = h('p', { role: 'status' });
  const manage = ctx.grants.may('manage', name);
  const enqueue = ctx.grants.may('enqueue', name);
  const f = { state: params.state ?? '', key: params.key ?? '', text: params.text ?? '', id: params.id ?? '' };
  // Cursor stack: after-ids of the pages before this one.
  let cursors = [];
  let after = null;
  let page = { jobs: [], next: null };
  const draft = { payload: '{"hello": "dashboard"}', key: '', priority: '' };

  function query(a, limit) {
    const q = new URLSearchParams({ limit: String(limit) });
    if (f.state) q.set('state', f.state);
    if (f.key) q.set('key', f.key);
    if (a !== null) q.set('after', String(a));
    return `/v1/queues/${enc(name)}/jobs?${q}`;
  }

  /**
   * One page of the API's search. A queue whose broker cannot list its
   * jobs (NATS JetStream: 501 unsupported) shows its dead letters, the
   * one list it has, and says so; other jobs are found by id.
   */
  async function search(a, limit) {
    try {
      return await get(query(a, limit));
    } catch (e) {
      if (!(e instanceof ApiError) || e.status !== 501) throw e;
      const d = await get(`/v1/queues/${enc(name)}/dead?limit=${Math.min(limit, 1000)}`);
      const jobs = !f.state || f.state === 'dead' ? d.jobs.filter((j) => !f.key || j.key === f.key) : [];
      return { jobs, next: null, unlisted: e.message };
    }
  }

  /** One page of matches: server pages, filtered by payload text when asked. */
  async function load() {
    if (f.id) {
      try {
        const j = await get(`/v1/jobs/${enc(f.id)}`);
        page = { jobs: j.queue === name ? [j] : [], next: null };
      } catch (e) {
        if (e.status !== 404 && e.status !== 400) throw e;
        page = { jobs: [], next: null };
      }
      return;
    }
    if (!f.text) { page = await search(after, LIMIT); return; }
    const jobs = [];
    let a = after;
    let next = null;
    for (let i = 0; i < MAX_PAGES && jobs.length < LIMIT; i += 1) {
      const p = await search(a, 1000);
      for (const j of p.jobs) {
        if (jobs.length < LIMIT && payloadText(j).includes(f.text)) { jobs.push(j); next = j.id; }
      }
      if (!p.next) { next = jobs.length >= LIMIT ? next : null; break; }
      a = p.next;
      if (jobs.length < LIMIT) next = p.next;
    }
    page = { jobs, next };
  }

  /** Every job matching the filter (bounded), for a bulk action. */
  async function matching() {
    if (f.id) return page.jobs;
    const out = [];
    let a = null;
    for (let i = 0; i < MAX_PAGES; i += 1) {
      const p = await search(a, 1000);
      out.push(...p.jobs.filter((j) => !f.text || payloadText(j).includes(f.text)));
      if (!p.next) break;
      a = p.next;
    }
    return out;
  }

  async function bulkCancel() {
    const jobs = (await matching()).filter((j) => !['completed', 'dead', 'dropped', 'cancelled'].includes(j.state));
    if (!(await confirmAction(`Cancel ${jobs.length} job(s) matching this filter?`))) return;
    let ok = 0;
    for (const j of jobs) { try { await post(`/v1/jobs/${j.id}/cancel`); ok += 1; } catch { /* ended meanwhile */ } }
    flash(status, `Cancelled ${ok} of ${jobs.length}.`);
    await refresh();
  }

  async function redriveAll() {
    if (!(await confirmAction(`Redrive every dead letter of ${name}?`))) return;
    try { const r = await post(`/v1/queues/${enc(name)}/dead/redrive`); flash(status, `Redrove ${r.count}.`); } catch (e) { flash(status, e.message, false); }
    await refresh();
  }

  async function purgeAll() {
    if (!(await confirmAction(`Delete every dead letter of ${name}? This cannot be undone.`))) return;
    try { const r = await api('DELETE', `/v1/queues/${enc(name)}/dead`); flash(status, `Purged ${r.count}.`); } catch (e) { flash(status, e.message, false); }
    await refresh();
  }

  async function submitJob(e) {
    e.preventDefault();
    let payload;
    try { payload = JSON.parse(draft.payload || 'null'); } catch { return flash(status, 'The payload is not JSON.', false); }
    const body = { payload };
    if (draft.key) body.key = draft.key;
    if (draft.priority) body.priority = Number(draft.priority);
    try {
      const r = await post(`/v1/queues/${enc(name)}/jobs`, body);
      flash(status, r.deduplicated ? `Job ${r.id} already had that key: nothing added.` : `Enqueued job ${r.id}.`);
    } catch (err) { flash(status, `Refused: ${err.message}`, false); }
    await refresh();
  }

  function draw(stats) {
    const input = (id, key, label, placeholder) => [h('label', { for: id }, label),
      h('input', { id, type: 'search', value: f[key], placeholder, size: 14, onchange: (e) => { f[key] = e.target.value.trim(); after = null; cursors = []; refresh(); } })];
    el.replaceChildren(
      h('p', {}, h('a', { href: '#/queues' }, '← Queues')),
      h('h1', {}, `Queue ${name}`),
      stats ? h('p', { 'data-field': 'counts' }, STATES.slice(1).map((st) => `${st} ${stats[st] ?? 0}`).join(' · ')) : null,
      h('div', { class: 'row' },
        h('label', { for: 'job-state' }, 'State'),
        h('select', { id: 'job-state', onchange: (e) => { f.state = e.target.value; after = null; cursors = []; refresh(); } },
          STATES.map((st) => h('option', { value: st, selected: st === f.state }, st || 'any'))),
        input('job-id', 'id', 'Id', '42'), input('job-key', 'key', 'Key', 'exact key'), input('job-text', 'text', 'Payload contains', 'text')),
      manage ? h('div', { class: 'row' },
        h('button', { type: 'button', 'data-action': 'bulk-cancel', onclick: bulkCancel }, 'Cancel all matching'),
        h('button', { type: 'button', 'data-action': 'redrive-all', onclick: redriveAll }, 'Redrive all dead'),
        h('button', { type: 'button', class: 'danger', 'data-action': 'purge', onclick: purgeAll }, 'Purge dead')) : null,
      status,
      page.unlisted ? h('p', { class: 'muted', 'data-field': 'unlisted' },
        `This queue's broker does not list its jobs (${page.unlisted}): shown are its dead letters; find any other job by its id.`) : null,
      table('Jobs', ['Id', 'State', 'Attempt', 'Key', 'Run at', 'Payload', 'Last error'],
        page.jobs.map((j) => h('tr', { class: 'job', 'data-job': j.id, 'data-state': j.state },
          h('td', {}, h('a', { href: `#/jobs/${j.id}` }, `#${j.id}`)),
          h('td', {}, h('span', { class: `badge ${j.state}` }, j.state)),
          h('td', { class: 'num' }, `${j.attempt}/${j.maxAttempts}`),
          h('td', {}, j.key ?? ''), h('td', {}, iso(j.runAt)),
          h('td', {}, h('code', {}, payloadText(j).slice(0, 80))),
          h('td', {}, j.lastError ?? '')))),
      h('nav', { class: 'pager', 'aria-label': 'Pages of jobs' },
        h('button', { type: 'button', disabled: cursors.length === 0, onclick: () => { after = cursors.pop() ?? null; refresh(); } }, 'Previous'),
        h('span', { 'data-field': 'page' }, `page ${cursors.length + 1}, ${page.jobs.length} jobs`),
        h('button', { type: 'button', 'data-pager': 'next', disabled: !page.next, onclick: () => { cursors.push(after); after = page.next; refresh(); } }, 'Next')),
      enqueue ? h('section', { 'aria-labelledby': 'enq-h' }, h('h2', { id: 'enq-h' }, 'Enqueue a job'),
        h('form', { onsubmit: submitJob },
          h('label', { for: 'enq-payload' }, 'Payload (JSON)'),
          h('textarea', { id: 'enq-payload', value: draft.payload, oninput: (e) => { draft.payload = e.target.value; } }),
          h('div', { class: 'row' },
            h('label', { for: 'enq-key' }, 'Key'), h('input', { id: 'enq-key', value: draft.key, oninput: (e) => { draft.key = e.target.value; } }),
            h('label', { for: 'enq-priority' }, 'Priority'), h('input', { id: 'enq-priority', type: 'number', value: draft.priority, oninput: (e) => { draft.priority = e.target.value; } }),
            h('button', { type: 'submit', 'data-action': 'enqueue' }, 'Enqueue')))) : null);
  }

  async function refresh() {
    const [list] = await Promise.all([get('/v1/queues'), load()]);
    draw(list.queues.find((q) => q.queue === name));
  }
  await refresh();
  return { el, refresh, wants: (kind, e) => e.queue === name && !document.activeElement?.matches('input, textarea, select') };
}

/** A fire id `<schedule>@<nominal ms>[#m<n>|#b<n>]`: its schedule and boundary. */
function fireCell(fire) {
  const at = fire.lastIndexOf('@');
  const schedule = fire.slice(0, at);
  const [nominal, extra] = fire.slice(at + 1).split('#');
  const kind = extra?.startsWith('m') ? ', manual' : extra?.startsWith('b') ? ', backfill' : '';
  return [h('a', { href: `#/schedules/${enc(schedule)}` }, schedule), ` fire ${fire} (nominal ${iso(Number(nominal))}${kind})`];
}

export async function job(ctx, params) {
  const id = params.id;
  const el = h('div', {});
  const status = h('p', { role: 'status' });
  async function refresh() {
    const j = await get(`/v1/jobs/${enc(id)}`);
    const manage = ctx.grants.may('manage', j.queue);
    const live = !['completed', 'dead', 'dropped', 'cancelled'].includes(j.state);
    async function act(what) {
      const text = what === 'cancel' ? `Cancel job ${id}?` : `Retry dead job ${id} (redrive it)?`;
      if (!(await confirmAction(text))) return;
      try {
        const r = what === 'cancel' ? await post(`/v1/jobs/${j.id}/cancel`) : await post(`/v1/queues/${enc(j.queue)}/dead/redrive`, { job: j.id });
        flash(status, JSON.stringify(r));
      } catch (e) { flash(status, e.message, false); }
      await refresh();
    }
    const fire = j.fire;
    el.replaceChildren(
      h('p', {}, h('a', { href: `#/queues/${enc(j.queue)}` }, `← Queue ${j.queue}`)),
      h('h1', {}, `Job #${j.id} `, h('span', { class: `badge ${j.state}`, 'data-field': 'state' }, j.state)),
      h('table', {}, h('tbody', {}, [
        ['queue', j.queue], ['attempt', `${j.attempt} of ${j.maxAttempts}`], ['key', j.key ?? ''], ['priority', j.priority ?? 0],
        ['run at', iso(j.runAt)], ['lease deadline', iso(j.leaseDeadline)], ['worker', j.worker ?? ''],
        ['finished at', iso(j.finishedAt)], ['last error', j.lastError ?? ''],
      ].map(([k, v]) => h('tr', {}, h('th', { scope: 'row' }, k), h('td', { 'data-field': k }, String(v)))),
      h('tr', {}, h('th', { scope: 'row' }, 'fire'), h('td', { 'data-field': 'fire' }, fire
        ? fireCell(fire)
        : 'enqueued directly')))),
      manage ? h('div', { class: 'row' },
        live ? h('button', { type: 'button', class: 'danger', 'data-action': 'cancel', onclick: () => act('cancel') }, 'Cancel') : null,
        j.state === 'dead' ? h('button', { type: 'button', 'data-action': 'retry', onclick: () => act('retry') }, 'Retry (redrive)') : null) : null,
      status,
      h('h2', {}, 'Payload'), h('pre', { 'data-field': 'payload', tabindex: 0 }, JSON.stringify(j.payload, null, 2)),
      h('h2', {}, 'Headers'), h('pre', { 'data-field': 'headers', tabindex: 0 }, JSON.stringify(j.headers ?? {}, null, 2)));
  }
  await refresh();
  return { el, refresh, wants: (kind, e) => String(e.job) === String(id) };
}
