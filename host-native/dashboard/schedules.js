// Schedules: the list (pages of 50 from the server, filtered there by
// text and status, bulk pause and resume) and a
// schedule's page (its next fires on a timeline with DST marks, its last
// runs when the daemon keeps them, pause, resume, trigger, backfill).
import { get, post, enc } from './api.js';
import { h, iso, ago, table, confirmAction, flash } from './dom.js';
import { timeline, noteText, offset } from './charts.js';

const PAGE = 50;
// How long typing in the filter rests before the server is asked.
const TYPE_MS = 200;

/** The last run's outcome (`lastRun` of the list), with a skip's reason. */
function lastOutcome(s) {
  const r = s.lastRun;
  if (!r) return '—';
  return h('span', { class: `badge ${r.outcome}`, title: r.error ?? r.skipReason ?? '' },
    r.skipReason ? `${r.outcome} (${r.skipReason})` : r.outcome);
}

export async function list(ctx, params) {
  const el = h('div', {});
  const state = { q: params.q ?? '', status: params.status ?? '', selected: new Set() };
  // Cursor stack: the `after` of each page before this one, as jobs.js.
  let cursors = [];
  let after = null;
  let page = { schedules: [], next: null, total: 0 };
  let asked = 0;
  let typing = null;
  const status = h('p', { role: 'status' });
  const manage = ctx.grants.maySome('manage');
  const body = h('div', {});

  function query() {
    const q = new URLSearchParams({ limit: String(PAGE) });
    if (state.q) q.set('q', state.q);
    if (state.status) q.set('status', state.status);
    if (after !== null) q.set('after', after);
    return `/v1/schedules?${q}`;
  }

  async function bulk(verb) {
    const names = [...state.selected];
    if (!names.length) return flash(status, 'Select schedules first.', false);
    if (!(await confirmAction(`${verb === 'pause' ? 'Pause' : 'Resume'} ${names.length} schedule(s)?`))) return;
    let ok = 0;
    const failed = [];
    for (const n of names) {
      try { await post(`/v1/schedules/${enc(n)}/${verb}`); ok += 1; } catch (e) { failed.push(`${n}: ${e.message}`); }
    }
    state.selected.clear();
    flash(status, `${verb === 'pause' ? 'Paused' : 'Resumed'} ${ok}${failed.length ? `; failed: ${failed.join('; ')}` : ''}.`, failed.length === 0);
    await refresh();
  }

  /** A new filter: back to the first page. */
  function refilter() {
    cursors = [];
    after = null;
    refresh().catch((e) => flash(status, e.message, false));
  }

  const filter = h('input', { id: 'sched-filter', type: 'search', value: state.q, placeholder: 'name, spec, queue, zone',
    oninput: (e) => { state.q = e.target.value.trim(); clearTimeout(typing); typing = setTimeout(refilter, TYPE_MS); } });
  const statusSel = h('select', { id: 'sched-status', onchange: (e) => { state.status = e.target.value; refilter(); } },
    ['', 'active', 'paused', 'completed'].map((v) => h('option', { value: v, selected: v === state.status }, v || 'any')));
  el.append(
    h('h1', {}, 'Schedules'),
    h('div', { class: 'row' },
      h('label', { for: 'sched-filter' }, 'Filter'), filter,
      h('label', { for: 'sched-status' }, 'Status'), statusSel,
      manage ? [h('button', { type: 'button', 'data-action': 'bulk-pause', onclick: () => bulk('pause') }, 'Pause selected'),
        h('button', { type: 'button', 'data-action': 'bulk-resume', onclick: () => bulk('resume') }, 'Resume selected')] : null),
    status, body);

  function draw() {
    const shown = page.schedules;
    const pages = Math.max(1, Math.ceil(page.total / PAGE));
    body.replaceChildren(
      table('Schedules', [manage ? 'Select' : '', 'Name', 'Status', 'Spec', 'Zone', 'Queue', 'Next fire', 'Last outcome', 'Fires', 'Skips'].filter((x, i) => i || manage),
        shown.map((s) => h('tr', { 'data-schedule': s.name },
          manage ? h('td', {}, ctx.grants.may('manage', s.name) ? h('input', { type: 'checkbox', 'aria-label': `Select ${s.name}`, checked: state.selected.has(s.name),
            onchange: (e) => { if (e.target.checked) state.selected.add(s.name); else state.selected.delete(s.name); } }) : null) : null,
          h('td', {}, h('a', { href: `#/schedules/${enc(s.name)}` }, s.name)),
          h('td', {}, h('span', { class: `badge ${s.status}` }, s.status)),
          h('td', {}, h('code', {}, s.spec)), h('td', {}, s.tz ?? 'UTC'), h('td', {}, s.queue),
          h('td', { title: iso(s.nextNominal) }, s.nextNominal ? `${iso(s.nextNominal)} (${ago(s.nextNominal)})` : '—'),
          h('td', { 'data-field': 'last-outcome' }, lastOutcome(s)),
          h('td', { class: 'num' }, s.fires), h('td', { class: 'num' }, s.skipped)))),
      h('nav', { class: 'pager', 'aria-label': 'Pages of schedules' },
        h('button', { type: 'button', 'data-pager': 'previous', disabled: cursors.length === 0, onclick: () => { after = cursors.pop() ?? null; refresh(); } }, 'Previous'),
        h('span', { 'data-field': 'page' }, `page ${cursors.length + 1} of ${pages} (${page.total} schedules)`),
        h('button', { type: 'button', 'data-pager': 'next', disabled: !page.next, onclick: () => { cursors.push(after); after = page.next; refresh(); } }, 'Next')));
  }

  /** This page again from the server; an answer overtaken by a newer question is dropped. */
  async function refresh() {
    const mine = ++asked;
    const p = await get(query());
    if (mine !== asked) return;
    page = p;
    draw();
  }
  await refresh();
  // Every event about a schedule (fires, skips, its jobs' outcomes), but
  // not while the filter is being typed in.
  return { el, refresh, wants: (kind, e) => Boolean(e.schedule) && !document.activeElement?.matches('input[type=search], select') };
}

function runsTable(runs) {
  return table('Last runs', ['Nominal', 'Reason', 'Outcome', 'Attempts', 'Duration', 'Error', 'Count', 'Job'],
    runs.map((r) => h('tr', { class: 'run', 'data-outcome': r.outcome },
      h('td', {}, iso(r.nominal), r.lastNominal ? ` … ${iso(r.lastNominal)}` : ''),
      h('td', {}, r.reason ?? r.skipReason ?? ''),
      h('td', {}, h('span', { class: `badge ${r.outcome}` }, r.outcome)),
      h('td', { class: 'num' }, r.attempts ?? ''),
      h('td', {}, r.durationMs === undefined ? '' : `${r.durationMs} ms`),
      h('td', {}, r.error ?? ''),
      h('td', { class: 'num' }, r.count ?? 1),
      h('td', {}, r.job === undefined ? '' : h('a', { href: `#/jobs/${r.job}` }, `#${r.job}`)))));
}

export async function detail(ctx, params) {
  const name = params.name;
  const el = h('div', {});
  const status = h('p', { role: 'status' });
  const manage = ctx.grants.may('manage', name);
  let from = params.from ?? '';
  let count = Number(params.count ?? 12);
  const bf = { from: '', to: '' };
  async function act(verb, body, text) {
    if (!(await confirmAction(text))) return;
    try {
      const r = await post(`/v1/schedules/${enc(name)}/${verb}`, body);
      flash(status, `${verb}: ${JSON.stringify(r)}`);
    } catch (e) {
      flash(status, `${verb} refused: ${e.message}`, false);
    }
    await refresh();
  }
  async function refresh() {
    const q = new URLSearchParams({ count: String(count) });
    if (from) q.set('from', String(Date.parse(from)));
    const [d, w] = await Promise.all([get(`/v1/schedules/${enc(name)}`), get(`/v1/schedules/${enc(name)}/fires?${q}`)]);
    const s = d.schedule;
    const def = s.def;
    const fromInput = h('input', { id: 'fires-from', type: 'text', value: from, placeholder: 'e.g. 2026-03-07T00:00:00Z', size: 24 });
    const countInput = h('input', { id: 'fires-count', type: 'number', min: 1, max: 500, value: count });
    // Kept across live refreshes, so typing is never lost.
    const bfFrom = h('input', { id: 'bf-from', type: 'text', value: bf.from, placeholder: '2026-01-01T00:00:00Z', size: 22, oninput: (e) => { bf.from = e.target.value; } });
    const bfTo = h('input', { id: 'bf-to', type: 'text', value: bf.to, placeholder: '2026-01-02T00:00:00Z', size: 22, oninput: (e) => { bf.to = e.target.value; } });
    el.replaceChildren(
      h('p', {}, h('a', { href: '#/schedules' }, '← Schedules')),
      h('h1', {}, `Schedule ${name} `, h('span', { class: `badge ${s.status}`, 'data-field': 'status' }, s.status)),
      h('table', {}, h('tbody', {}, [
        ['spec', def.spec], ['zone', def.tz ?? 'UTC'], ['queue', def.target.queue], ['origin', def.origin ?? ''],
        ['next fire', s.nextNominal ? `${iso(s.nextNominal)} (${ago(s.nextNominal)})` : '—'],
        ['fires', s.fires], ['skips', s.skipped], ['in flight', (s.inFlight ?? []).length],
        ['paused note', s.pauseNote ?? s.note ?? ''],
      ].map(([k, v]) => h('tr', {}, h('th', { scope: 'row' }, k), h('td', { 'data-field': k }, String(v)))))),
      manage ? h('section', { 'aria-labelledby': 'act-h' }, h('h2', { id: 'act-h' }, 'Actions'),
        h('div', { class: 'row' },
          s.status === 'paused'
            ? h('button', { type: 'button', 'data-action': 'resume', onclick: () => act('resume', {}, `Resume ${name}?`) }, 'Resume')
            : h('button', { type: 'button', 'data-action': 'pause', onclick: () => act('pause', { note: 'paused from the dashboard' }, `Pause ${name}? Its boundaries are skipped until it resumes.`) }, 'Pause'),
          h('button', { type: 'button', 'data-action': 'trigger', onclick: () => act('trigger', {}, `Fire ${name} now (a manual fire)?`) }, 'Trigger now')),
        h('div', { class: 'row' },
          h('label', { for: 'bf-from' }, 'Backfill from'), bfFrom, h('label', { for: 'bf-to' }, 'to'), bfTo,
          h('button', { type: 'button', 'data-action': 'backfill', onclick: () => {
            const f = Date.parse(bfFrom.value); const t = Date.parse(bfTo.value);
            if (!Number.isFinite(f) || !Number.isFinite(t)) return flash(status, 'Backfill needs two instants, e.g. 2026-01-01T00:00:00Z.', false);
            return act('backfill', { from: f, to: t }, `Fire every boundary of ${name} in [${iso(f)}, ${iso(t)})?`);
          } }, 'Backfill')), status) : null,
      h('section', { 'aria-labelledby': 'fires-h' }, h('h2', { id: 'fires-h' }, 'Next fires'),
        h('form', { class: 'row', onsubmit: (e) => { e.preventDefault(); from = fromInput.value.trim(); count = Number(countInput.value) || 12; refresh(); } },
          h('label', { for: 'fires-from' }, 'From'), fromInput, h('label', { for: 'fires-count' }, 'Count'), countInput,
          h('button', { type: 'submit' }, 'Show')),
        timeline(w.fires),
        table('Next fires', ['#', 'Instant (UTC)', 'Civil time', 'Offset', 'DST'],
          w.fires.map((f, i) => h('tr', { class: 'fire', 'data-note': f.note ?? '' },
            h('td', { class: 'num' }, i + 1), h('td', {}, iso(f.at)), h('td', {}, f.civil), h('td', {}, offset(f.offsetSeconds)), h('td', {}, noteText(f.note)))))),
      h('section', { 'aria-labelledby': 'runs-h' }, h('h2', { id: 'runs-h' }, 'Last runs'),
        Array.isArray(s.runs) ? (s.runs.length ? runsTable(s.runs) : h('p', { class: 'muted' }, 'No runs yet.'))
          : h('p', { class: 'muted' }, 'This daemon keeps no run history.')));
  }
  await refresh();
  return { el, refresh, wants: (kind, e) => e.schedule === name };
}
