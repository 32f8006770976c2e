// The API client: every call goes to this origin's public /v1 API with
// the session's bearer token in the Authorization header (never in a
// URL). The token lives in sessionStorage: entered once per tab.
const KEY = 'chime.token';

export class ApiError extends Error {
  constructor(status, body) {
    super(body?.message ?? `HTTP ${status}`);
    this.status = status;
    this.code = body?.error ?? 'http';
    this.field = body?.field;
  }
}

export const token = {
  get: () => sessionStorage.getItem(KEY),
  set: (t) => sessionStorage.setItem(KEY, t),
  clear: () => sessionStorage.removeItem(KEY),
};

function headers(extra) {
  const h = { ...extra };
  const t = token.get();
  if (t) h.Authorization = `Bearer ${t}`;
  return h;
}

/** `method path` with an optional JSON body; the parsed JSON answer. */
export async function api(method, path, body) {
  const init = { method, headers: headers(body === undefined ? {} : { 'Content-Type': 'application/json' }) };
  if (body !== undefined) init.body = JSON.stringify(body);
  const res = await fetch(path, init);
  const text = await res.text();
  let json = null;
  try { json = text ? JSON.parse(text) : null; } catch { json = null; }
  if (!res.ok) throw new ApiError(res.status, json);
  return json;
}

export const get = (p) => api('GET', p);
export const post = (p, b) => api('POST', p, b ?? {});
export const enc = encodeURIComponent;

/** `*` matches any run of characters, like the daemon's scope patterns. */
function glob(pattern, name) {
  const re = new RegExp('^' + pattern.split('*').map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('.*') + '$');
  return re.test(name);
}

/** What the token may do, from GET /v1/whoami. */
export class Grants {
  constructor(me) {
    this.me = me;
    this.grants = me.scopes.map((s) => {
      const i = s.indexOf(':');
      return i < 0 ? { scope: s, pattern: null } : { scope: s.slice(0, i), pattern: s.slice(i + 1) };
    });
  }
  may(scope, name) {
    return this.grants.some((g) => (g.scope === scope || g.scope === 'admin') && (g.pattern === null || (name !== undefined && glob(g.pattern, name))));
  }
  maySome(scope) {
    return this.grants.some((g) => g.scope === scope || g.scope === 'admin');
  }
}

/**
 * Follows GET /v1/events with fetch streaming (EventSource cannot send an
 * Authorization header). Calls onEvent(kind, data) per event and
 * onState(connected) on changes; reconnects with a capped backoff until
 * signal aborts.
 */
export async function follow(onEvent, onState, signal) {
  let delay = 1000;
  while (!signal.aborted) {
    try {
      const res = await fetch('/v1/events', { headers: headers({ Accept: 'text/event-stream' }), signal });
      if (!res.ok || !res.body) throw new ApiError(res.status, null);
      onState(true);
      delay = 1000;
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      let buf = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += value;
        // Bound the buffer: an event is far smaller than this.
        if (buf.length > 1 << 20) buf = '';
        let end;
        while ((end = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, end);
          buf = buf.slice(end + 2);
          let kind = 'message';
          let data = '';
          for (const line of block.split('\n')) {
            if (line.startsWith('event:')) kind = line.slice(6).trim();
            else if (line.startsWith('data:')) data += line.slice(5).trim();
          }
          if (data) {
            try { onEvent(kind, JSON.parse(data)); } catch { /* not JSON: ignore */ }
          }
        }
      }
    } catch (e) {
      if (signal.aborted) return;
      if (e instanceof ApiError && (e.status === 401 || e.status === 403)) { onState(false); return; }
    }
    onState(false);
    await new Promise((r) => setTimeout(r, delay));
    delay = Math.min(delay * 2, 30000);
  }
}
