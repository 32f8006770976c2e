// The dashboard's shell: the token (asked once per tab when the daemon
// checks tokens), the token's grants (GET /v1/whoami), hash routing to
// the views, and the live event stream that refreshes the open view.
import { get, token, Grants, follow, ApiError } from './api.js';
import { h } from './dom.js';
import * as overview from './overview.js';
import * as schedules from './schedules.js';
import * as jobs from './jobs.js';

const view = document.getElementById('view');
const live = document.getElementById('live');
let current = null;
let grants = null;
let stream = null;
let pending = null;

function route() {
  const hash = decodeURIComponent(location.hash.replace(/^#/, '')) || '/';
  const [path, query] = hash.split('?');
  const parts = path.split('/').filter(Boolean);
  const params = Object.fromEntries(new URLSearchParams(query ?? ''));
  if (parts[0] === 'schedules' && parts[1]) return ['schedules', schedules.detail, { name: parts.slice(1).join('/'), ...params }];
  if (parts[0] === 'schedules') return ['schedules', schedules.list, params];
  if (parts[0] === 'queues' && parts[1]) return ['queues', jobs.queue, { name: parts.slice(1).join('/'), ...params }];
  if (parts[0] === 'queues') return ['queues', jobs.queues, params];
  if (parts[0] === 'jobs' && parts[1]) return ['queues', jobs.job, { id: parts[1] }];
  return ['overview', overview.render, params];
}

async function show() {
  const [nav, render, params] = route();
  for (const a of document.querySelectorAll('nav a')) {
    if (a.dataset.nav === nav) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  current = null;
  const ctx = { grants, navigate: (to) => { location.hash = to; } };
  try {
    const v = await render(ctx, params);
    view.replaceChildren(v.el);
    current = v;
    document.body.dataset.view = nav;
    document.body.dataset.state = 'ok';
    // What tests (and scripts) wait for: the route that finished rendering.
    document.body.dataset.route = location.hash || '#/';
  } catch (e) {
    if (e instanceof ApiError && e.status === 401) return login('That token was not accepted.');
    view.replaceChildren(h('h1', {}, 'Error'), h('p', { class: 'error', role: 'alert' }, e.message));
    document.body.dataset.state = 'error';
    document.body.dataset.route = location.hash || '#/';
  }
}

/** An event refreshes the open view, at most once a second. */
function onEvent(kind, data) {
  if (!current?.refresh) return;
  if (current.wants && !current.wants(kind, data)) return;
  if (pending) return;
  pending = setTimeout(async () => {
    pending = null;
    try { await current?.refresh(); } catch { /* shown on the next refresh */ }
  }, 1000);
}

function startStream() {
  stream?.abort();
  stream = new AbortController();
  follow(onEvent, (on) => {
    live.textContent = on ? 'live' : 'reconnecting…';
    live.classList.toggle('on', on);
  }, stream.signal);
}

function login(message) {
  token.clear();
  const dlg = document.getElementById('login');
  document.getElementById('login-error').textContent = message ?? '';
  if (!dlg.open) dlg.showModal();
  document.getElementById('token').focus();
}

async function start() {
  try {
    grants = new Grants(await get('/v1/whoami'));
  } catch (e) {
    if (e instanceof ApiError && e.status === 401) return login(token.get() ? 'That token was not accepted.' : '');
    view.replaceChildren(h('p', { class: 'error', role: 'alert' }, `The daemon did not answer: ${e.message}`));
    return;
  }
  const me = grants.me;
  document.getElementById('who').textContent = me.auth ? `token ${me.name} (${me.scopes.join(', ')})` : 'no authentication (loopback)';
  document.getElementById('signout').hidden = !me.auth;
  document.body.dataset.readonly = String(!grants.maySome('manage'));
  startStream();
  await show();
}

document.getElementById('login-form').addEventListener('submit', () => {
  const t = document.getElementById('token').value.trim();
  document.getElementById('token').value = '';
  if (t) token.set(t);
  start();
});
document.getElementById('signout').addEventListener('click', () => {
  stream?.abort();
  token.clear();
  location.hash = '#/';
  location.reload();
});
window.addEventListener('hashchange', () => { if (grants) show(); });
start();
