// The package as a user gets it: scripts/npm-consumer-test.sh packs wasm/
// (`npm pack`), copies this folder to a temporary directory, runs `npm ci`
// (the pinned tools of package-lock.json) and `npm install --no-save` of
// the tarball, then runs these tests there. Nothing here reads the
// repository: the examples are the ones the tarball ships.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { createServer } from 'node:http';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const APP = path.dirname(new URL(import.meta.url).pathname);
const PKG = path.join(APP, 'node_modules', 'chime-scheduler');
const BIN = path.join(APP, 'node_modules', '.bin');
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const haveChromium = fs.existsSync(CHROMIUM);
if (!haveChromium && process.env.CHIME_REQUIRE_BROWSER === '1') throw new Error(`${CHROMIUM} is missing (apt-get install chromium)`);

/** The Node examples of the READMEs and docs/javascript.md (all in the tarball). */
const NODE_EXAMPLES = ['preview', 'engine', 'scheduler', 'quickstart', 'errors', 'node-worker', 'events'];

const run = (cmd, args, opts = {}) => execFileSync(cmd, args, { cwd: APP, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 120_000, ...opts });

before(() => {
  // The shipped examples, as a user would copy them into an app.
  fs.rmSync(path.join(APP, 'examples'), { recursive: true, force: true });
  fs.cpSync(path.join(PKG, 'examples'), path.join(APP, 'examples'), { recursive: true });
});

test('npm pack lists the licenses, the typings and every example the README points to', () => {
  const [{ name, files }] = JSON.parse(fs.readFileSync(process.env.CHIME_DRY_RUN, 'utf8'));
  assert.equal(name, 'chime-scheduler');
  const listed = new Set(files.map((f) => f.path));
  for (const f of ['LICENSE-MIT', 'LICENSE-APACHE', 'README.md', 'package.json', 'index.d.ts', 'index.browser.d.ts', 'index.init.d.ts', 'api.d.ts', 'chime-wasm.d.ts', 'types/wire.d.ts', 'index.node.js', 'index.browser.js', 'index.init.js', 'pkg/chime_wasm.js', 'pkg/chime_wasm_bg.wasm']) {
    assert.ok(listed.has(f), `npm pack does not list ${f}`);
  }
  const readme = fs.readFileSync(path.join(PKG, 'README.md'), 'utf8');
  const pointed = [...new Set(readme.match(/examples\/[\w./-]+\.(?:ts|js|mjs|html)/g))];
  assert.ok(pointed.length >= 6, `README points to ${pointed.join(', ')}`);
  for (const f of pointed) assert.ok(listed.has(f), `the README points to ${f}, which npm pack does not list`);
  for (const ex of NODE_EXAMPLES) assert.ok(listed.has(`examples/${ex}.ts`), `examples/${ex}.ts is not packed`);
  // The installed tarball has what the listing says.
  for (const f of listed) assert.ok(fs.existsSync(path.join(PKG, f)), `${f} listed but not installed`);
  assert.match(readme, /npm install chime-scheduler/);
});

test('the examples and type tests pass tsc --strict with the Node typings', () => {
  const r = spawnSync(path.join(BIN, 'tsc'), ['-p', 'tsconfig.node.json'], { cwd: APP, encoding: 'utf8', timeout: 120_000 });
  assert.equal(r.status, 0, r.stdout + r.stderr);
});

test('the browser examples and type tests pass tsc --strict with the browser typings (no FileStore)', () => {
  const r = spawnSync(path.join(BIN, 'tsc'), ['-p', 'tsconfig.web.json'], { cwd: APP, encoding: 'utf8', timeout: 120_000 });
  assert.equal(r.status, 0, r.stdout + r.stderr);
});

for (const ex of NODE_EXAMPLES) {
  test(`examples/${ex}.ts runs in Node (compiled by tsc)`, () => {
    const js = path.join(APP, 'dist', 'examples', `${ex}.js`);
    assert.ok(fs.existsSync(js), `${js}: the tsc test emits it`);
    const cwd = fs.mkdtempSync(path.join(os.tmpdir(), `chime-example-${ex}-`));
    try {
      const r = spawnSync(process.execPath, [js], { cwd, encoding: 'utf8', timeout: 30_000 });
      assert.equal(r.status, 0, `exit ${r.status} ${r.signal ?? ''}\n${r.stdout}\n${r.stderr}`);
      assert.equal(r.stderr, '');
      assert.notEqual(r.stdout, '');
    } finally {
      fs.rmSync(cwd, { recursive: true, force: true });
    }
  });
}

test('the Node examples print what their comments say', () => {
  const out = (ex) => run(process.execPath, [path.join(APP, 'dist', 'examples', `${ex}.js`)], { cwd: fs.mkdtempSync(path.join(os.tmpdir(), 'chime-out-')) });
  assert.match(out('engine'), /^backup@1767229200000\n1767232800000\ntrue\n$/);
  assert.match(out('errors'), /^unknown_schedule schedule\nfreed\n$/);
  const events = out('events');
  assert.match(events, /^removed schedules: \[\]\n/);
  assert.match(events, /\nfired heartbeat@\d+ \(scheduled\), \d+ ms after due\n/);
  assert.match(events, /\nheartbeat heartbeat@\d+, attempt 1, due \d+, fired \d+\n/);
  const preview = out('preview');
  assert.match(preview, /shiftedFromGap/);
  assert.match(preview, /invalid_spec spec invalid_spec: unknown day-of-week name "FRU" at field 5, column 13/);
  assert.match(preview, /\n1767258000000\n/);
});

// ---- bundlers, in Chromium ----

const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.wasm': 'application/wasm', '.css': 'text/css' };
function serve(root) {
  const server = createServer((req, res) => {
    const rel = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    const file = path.normalize(path.join(root, rel.endsWith('/') ? `${rel}index.html` : rel));
    if (!file.startsWith(root) || !fs.existsSync(file) || fs.statSync(file).isDirectory()) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': TYPES[path.extname(file)] ?? 'application/octet-stream' });
    fs.createReadStream(file).pipe(res);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

/** Loads `root`'s index.html from a loopback server in Chromium; returns body[data-next]. */
async function nextFireInChromium(root) {
  const { chromium } = await import('playwright-core');
  const server = await serve(root);
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'chime-chromium-'));
  const browser = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  try {
    const page = await browser.newPage();
    const problems = [];
    page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
    page.on('response', (r) => r.status() >= 400 && problems.push(`${r.status()} ${r.url()}`));
    await page.goto(`http://127.0.0.1:${server.address().port}/`);
    try {
      await page.waitForFunction(() => document.body.dataset.next !== undefined, null, { timeout: 15_000 });
    } catch (e) {
      throw new Error(`no next fire on the page: ${problems.join('; ') || e.message}`);
    }
    assert.deepEqual(problems, []);
    return Number(await page.evaluate(() => document.body.dataset.next));
  } finally {
    await browser.close();
    server.close();
    fs.rmSync(profile, { recursive: true, force: true });
  }
}

async function expectedNext() {
  const { Spec } = await import('chime-scheduler');
  return new Spec('*/30 0-2 * * *', { tz: 'Europe/London' }).next(Date.UTC(2026, 9, 25));
}

test('an esbuild bundle (chime-scheduler/init + --loader:.wasm=file) loads the engine in Chromium', { skip: !haveChromium && `${CHROMIUM} not installed`, timeout: 90_000 }, async () => {
  const out = path.join(APP, 'dist-esbuild');
  fs.rmSync(out, { recursive: true, force: true });
  // The command wasm/README.md gives.
  run(path.join(BIN, 'esbuild'), ['examples/esbuild/main.ts', '--bundle', '--format=esm', '--loader:.wasm=file', `--outdir=${out}`, '--log-level=warning']);
  fs.copyFileSync(path.join(APP, 'examples', 'esbuild', 'index.html'), path.join(out, 'index.html'));
  assert.ok(fs.readdirSync(out).some((f) => f.endsWith('.wasm')), `esbuild emitted no .wasm: ${fs.readdirSync(out)}`);
  assert.equal(await nextFireInChromium(out), await expectedNext());
});

test('a Vite build (plain import, build.target es2022) loads the engine in Chromium', { skip: !haveChromium && `${CHROMIUM} not installed`, timeout: 90_000 }, async () => {
  const out = path.join(APP, 'dist-vite');
  run(path.join(BIN, 'vite'), ['build', 'examples/vite', '--outDir', out, '--emptyOutDir', '--logLevel', 'warn']);
  const assets = fs.readdirSync(path.join(out, 'assets'));
  assert.ok(assets.some((f) => f.endsWith('.wasm')), `vite emitted no .wasm: ${assets}`);
  assert.equal(await nextFireInChromium(out), await expectedNext());
});
