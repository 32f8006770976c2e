// The example page in a real browser: Debian's chromium (never a downloaded
// one) driven by playwright-core, the package served from a loopback
// server. Types a spec and a zone, checks the rendered fires, and saves a
// screenshot to test-results/timeline.png.
// Skipped when /usr/bin/chromium is absent, unless CHIME_REQUIRE_BROWSER=1
// (scripts/test-all.sh installs chromium and sets it).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { chromium } from 'playwright-core';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ROOT = new URL('..', import.meta.url).pathname;
const RESULTS = path.join(ROOT, 'test-results');
const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.mjs': 'text/javascript', '.wasm': 'application/wasm', '.json': 'application/json' };

function serve() {
  const server = createServer((req, res) => {
    const file = path.normalize(path.join(ROOT, decodeURIComponent(new URL(req.url, 'http://x').pathname)));
    if (!file.startsWith(ROOT) || !fs.existsSync(file) || fs.statSync(file).isDirectory()) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': TYPES[path.extname(file)] ?? 'application/octet-stream' });
    fs.createReadStream(file).pipe(res);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

const present = fs.existsSync(CHROMIUM);
if (!present && process.env.CHIME_REQUIRE_BROWSER === '1') throw new Error(`${CHROMIUM} is missing (apt-get install chromium)`);

test('timeline page: type a spec and a zone, see the next fires with DST marks', { skip: !present && `${CHROMIUM} not installed`, timeout: 60_000 }, async () => {
  const server = await serve();
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'chime-chromium-'));
  const browser = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  try {
    const page = await browser.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(e));
    const { port } = server.address();
    await page.goto(`http://127.0.0.1:${port}/examples/timeline.html`);
    await page.waitForSelector('body[data-state="ok"]');

    // A daily 02:30 in New York across the 2026 spring-forward.
    await page.fill('#tz', '');
    await page.fill('#spec', '30 2 * * *');
    await page.fill('#tz', 'America/New_York');
    await page.fill('#from', '2026-03-06T12:00:00Z');
    await page.fill('#count', '4');
    await page.waitForFunction(() => document.querySelectorAll('tr.fire').length === 4);
    const rows = await page.$$eval('tr.fire', (trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent)));
    assert.deepEqual(rows, [
      ['1', '2026-03-07T07:30:00Z', '2026-03-07T02:30:00', '-05:00', ''],
      ['2', '2026-03-08T07:00:00Z', '2026-03-08T03:00:00', '-04:00', 'shifted out of the spring-forward gap'],
      ['3', '2026-03-09T06:30:00Z', '2026-03-09T02:30:00', '-04:00', ''],
      ['4', '2026-03-10T06:30:00Z', '2026-03-10T02:30:00', '-04:00', ''],
    ]);
    assert.equal(await page.locator('.tick').count(), 4);
    assert.equal(await page.locator('.tick.dst').count(), 1);
    assert.equal(await page.locator('.transition').textContent(), '-05:00 → -04:00');

    // A stepped spec in the fall-back hour fires on both passes.
    await page.fill('#spec', '0,30 1 * * *');
    await page.fill('#from', '2026-11-01T04:00:00Z');
    await page.waitForFunction(() => document.querySelector('tr.fire td:nth-child(5)')?.textContent === 'repeated hour, first pass');
    const notes = await page.$$eval('tr.fire td:nth-child(5)', (tds) => tds.map((td) => td.textContent));
    assert.deepEqual(notes, ['repeated hour, first pass', 'repeated hour, first pass', 'repeated hour, second pass', 'repeated hour, second pass']);

    fs.mkdirSync(RESULTS, { recursive: true });
    await page.fill('#spec', '30 2 * * *');
    await page.fill('#from', '2026-03-06T12:00:00Z');
    await page.fill('#count', '6');
    await page.waitForFunction(() => document.querySelectorAll('tr.fire').length === 6);
    await page.screenshot({ path: path.join(RESULTS, 'timeline.png'), fullPage: true });

    // Errors point at the field.
    await page.fill('#tz', 'Europe/Lndon');
    await page.waitForSelector('body[data-state="error"]');
    assert.match(await page.textContent('#error'), /^invalid_time_zone \(tz\): /);
    await page.fill('#tz', 'Europe/London');
    await page.fill('#spec', '30 2 * * MON-FRU');
    await page.waitForFunction(() => document.querySelector('#error').textContent.startsWith('invalid_spec (spec)'));
    assert.match(await page.textContent('#error'), /field 5/);
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
    server.close();
    fs.rmSync(profile, { recursive: true, force: true });
  }
});

async function withPage(fn) {
  const server = await serve();
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'chime-chromium-'));
  const browser = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1000, height: 800 },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  try {
    const page = await browser.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(e));
    await page.goto(`http://127.0.0.1:${server.address().port}/examples/timeline.html`);
    await page.waitForSelector('body[data-state="ok"]');
    await fn(page);
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
    server.close();
    fs.rmSync(profile, { recursive: true, force: true });
  }
}

test('timeline page: tick labels of a dense fold do not overlap', { skip: !present && `${CHROMIUM} not installed`, timeout: 60_000 }, async () => {
  await withPage(async (page) => {
    // Every half hour from 00:00 to 02:30 in London across the 2026
    // fall-back: six fires within 3 hours each day, 01:00 and 01:30 twice.
    await page.fill('#spec', '*/30 0-2 * * *');
    await page.fill('#tz', 'Europe/London');
    await page.fill('#from', '2026-10-24T12:00:00Z');
    await page.fill('#count', '40');
    await page.waitForFunction(() => document.querySelectorAll('tr.fire').length === 40);
    assert.equal(await page.locator('.tick').count(), 40);
    const boxes = await page.$$eval('#timeline .label', (ls) =>
      ls.filter((l) => l.getClientRects().length > 0).map((l) => {
        const r = l.getBoundingClientRect();
        return { left: r.left, right: r.right, text: l.textContent };
      }),
    );
    assert.ok(boxes.length >= 3, `only ${boxes.length} labels shown`);
    assert.ok(boxes.length < 40, 'no label was thinned out');
    // The first fire's label is kept: 2026-10-25 00:00 BST.
    assert.equal(boxes[0].text, '10-25 00:00');
    boxes.sort((a, b) => a.left - b.left);
    for (let i = 1; i < boxes.length; i++) {
      assert.ok(boxes[i].left >= boxes[i - 1].right, `labels overlap: ${JSON.stringify(boxes[i - 1])} and ${JSON.stringify(boxes[i])}`);
    }
    fs.mkdirSync(RESULTS, { recursive: true });
    await page.screenshot({ path: path.join(RESULTS, 'timeline-fold.png'), fullPage: true });
  });
});

test('timeline page: a spec that never fires says so instead of a blank page', { skip: !present && `${CHROMIUM} not installed`, timeout: 60_000 }, async () => {
  await withPage(async (page) => {
    await page.fill('#spec', '0 0 30 2 *');
    await page.waitForSelector('body[data-state="empty"]');
    assert.match(await page.textContent('#empty'), /^No fires after 2026-03-06T00:00:00Z: this spec never fires in America\/New_York/);
    assert.ok(await page.isVisible('#empty'));
    assert.equal(await page.locator('tr.fire').count(), 0);
    assert.equal(await page.textContent('#error'), '');
    // An @at in the past, likewise; a spec that fires clears the message.
    await page.fill('#spec', '@at 2020-01-01T00:00:00Z');
    await page.waitForFunction(() => document.querySelector('#empty').textContent.includes('never fires'));
    await page.fill('#spec', '30 2 * * *');
    await page.waitForSelector('body[data-state="ok"]');
    assert.equal(await page.textContent('#empty'), '');
    assert.equal(await page.isVisible('#empty'), false);
  });
});
