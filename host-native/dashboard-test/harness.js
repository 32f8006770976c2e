// What the dashboard tests share: a real `chime run` daemon (the binary
// named by CHIME_BIN, else target/debug/chime) on a config, its API over
// loopback, and Debian's chromium driven by playwright-core.
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { chromium } from 'playwright-core';

export const ROOT = new URL('../..', import.meta.url).pathname;
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const present = fs.existsSync(CHROMIUM);
if (!present && process.env.CHIME_REQUIRE_BROWSER === '1') throw new Error(`${CHROMIUM} is missing (apt-get install chromium)`);
const target = process.env.CARGO_TARGET_DIR ?? path.join(ROOT, 'target');
export const CHIME = process.env.CHIME_BIN ?? path.join(target, 'debug', 'chime');
if (!fs.existsSync(CHIME)) throw new Error(`${CHIME} is missing: cargo build -p chime-native --bin chime (or set CHIME_BIN)`);

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/** A new token and its `[[token]]` table. */
export function token(name, scopes) {
  const secret = `chime_${randomBytes(32).toString('hex')}`;
  const sha = createHash('sha256').update(secret).digest('hex');
  return { secret, toml: `\n[[token]]\nname = "${name}"\nsha256 = "${sha}"\nscopes = [${scopes.map((s) => `"${s}"`).join(', ')}]\n` };
}

/** Starts `chime run` on `config` text in a fresh directory. */
export async function daemon(config, extraArgs = []) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'chime-dash-'));
  fs.writeFileSync(path.join(dir, 'chime.toml'), config);
  const port = await freePort();
  const log = fs.openSync(path.join(dir, 'log.txt'), 'w');
  const child = spawn(CHIME, ['run', '--config', path.join(dir, 'chime.toml'), '--data', path.join(dir, 'data'), '--http', `127.0.0.1:${port}`, ...extraArgs],
    { cwd: dir, stdio: ['ignore', log, log] });
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + Number(process.env.CHIME_DASHBOARD_START_MS ?? 180_000);
  for (;;) {
    try {
      const r = await fetch(`${base}/healthz`);
      if (r.ok) break;
    } catch { /* not up yet */ }
    if (child.exitCode !== null) throw new Error(`chime exited: ${fs.readFileSync(path.join(dir, 'log.txt'), 'utf8')}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error('chime did not come up in time');
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    base,
    dir,
    /** `method path` on the API: [status, JSON]. */
    async call(method, p, body, secret) {
      const headers = {};
      if (secret) headers.Authorization = `Bearer ${secret}`;
      if (body !== undefined) headers['Content-Type'] = 'application/json';
      const r = await fetch(base + p, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
      const text = await r.text();
      return [r.status, text ? JSON.parse(text) : null];
    },
    async stop() {
      child.kill('SIGTERM');
      await new Promise((r) => (child.exitCode !== null ? r() : child.once('exit', r)));
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A fresh chromium profile; `fn(browser)`; everything closed after. */
export async function withBrowser(fn) {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'chime-chromium-'));
  const browser = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1280, height: 900 },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  try {
    return await fn(browser);
  } finally {
    await browser.close();
    fs.rmSync(profile, { recursive: true, force: true });
  }
}

/** A page that records console errors and page errors into `errors`. */
export async function open(browser, errors) {
  const page = await browser.newPage();
  page.on('console', (m) => { if (m.type() === 'error') errors.push(`console: ${m.text()}`); });
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  page.on('response', (r) => { if (r.status() >= 400) errors.push(`HTTP ${r.status()} ${r.url()}`); });
  return page;
}

/** Waits until `check()` is truthy (polling the API), at most `ms`. */
export async function until(check, ms = 15_000, what = 'condition') {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
