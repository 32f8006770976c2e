// The dashboard in Debian's chromium (never a downloaded browser) against
// real `chime run` daemons on examples/quickstart.toml: every page loads
// with no console error and no serious or critical axe-core violation;
// pausing, triggering, redriving and enqueuing from the page change the
// daemon's state as its API reports it; the timeline shows the 2026 New
// York gap shift and both fold passes; a `read` token sees no action
// control and a forged action call gets 403. Screenshots go to
// test-results/ (CHIME_DASHBOARD_SHOTS=1: to docs/dashboard/, committed).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ROOT, present, daemon, token, withBrowser, open, until } from './harness.js';

const QUICKSTART = fs.readFileSync(path.join(ROOT, 'examples/quickstart.toml'), 'utf8');
const AXE = fs.readFileSync(new URL('./node_modules/axe-core/axe.min.js', import.meta.url), 'utf8');
const SHOTS = process.env.CHIME_DASHBOARD_SHOTS === '1' ? path.join(ROOT, 'docs/dashboard') : new URL('./test-results', import.meta.url).pathname;
const skip = !present && 'chromium not installed';

/** Goes to `hash` and waits for the view to finish rendering. */
async function visit(page, base, hash) {
  if (page.url().startsWith(base)) await page.evaluate((h) => { location.hash = h; }, hash);
  else await page.goto(`${base}/${hash}`);
  await page.waitForSelector(`body[data-route="${hash}"]`, { timeout: 15_000 });
  assert.equal(await page.getAttribute('body', 'data-state'), 'ok', `${hash} rendered an error: ${await page.textContent('main')}`);
}

/** axe-core on the page: no violation of serious or critical impact. */
async function accessible(page, what) {
  // Evaluated through the DevTools protocol, which the page's CSP does not govern.
  if (!(await page.evaluate(() => typeof window.axe === 'object'))) await page.evaluate(`${AXE}\n;0`);
  const res = await page.evaluate(() => window.axe.run(document, { resultTypes: ['violations'] }));
  const bad = res.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  assert.deepEqual(bad.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`), [], `axe on ${what}`);
}

async function shot(page, name) {
  fs.mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
}

/** Clicks `selector`, then Confirm in the page's dialog. */
async function confirmClick(page, selector) {
  await page.click(selector);
  await page.waitForSelector('#confirm[open]');
  await page.click('#confirm-ok');
  await page.waitForSelector('#confirm[open]', { state: 'detached' });
}

test('every page, its actions and the DST timeline on the quickstart daemon (no tokens)', { skip, timeout: 180_000 }, async () => {
  const d = await daemon(QUICKSTART);
  try {
    // The seeded workload: jobs in both queues, two New York schedules.
    for (let i = 0; i < 30; i += 1) await d.call('POST', '/v1/queues/shell/jobs', { payload: { n: i, note: i === 7 ? 'needle-seven' : 'hay' }, key: `seed-${i}` });
    for (const [name, spec] of [['ny-gap', '30 2 * * *'], ['ny-fold', '0,30 1 * * *']]) {
      const [st] = await d.call('PUT', `/v1/schedules/${name}`, { spec, tz: 'America/New_York', target: { queue: 'shell' } });
      assert.equal(st, 200);
    }
    // A dead letter: the `doomed` schedule's job fails 3 times (1 s, 2 s backoff).
    const dead = await until(async () => (await d.call('GET', '/v1/queues/flaky/dead'))[1].jobs[0], 30_000, 'a dead letter');

    await withBrowser(async (browser) => {
      const errors = [];
      const page = await open(browser, errors);
      await visit(page, d.base, '#/');
      // No token asked: the daemon has none configured.
      assert.equal(await page.locator('#login[open]').count(), 0);
      assert.match(await page.textContent('#who'), /no authentication/);
      await page.waitForSelector('tr[data-queue="shell"]');
      assert.equal(await page.locator('figure.chart').count(), 4);
      await page.waitForSelector('#live.on');
      await accessible(page, 'overview');
      await shot(page, 'overview');

      await visit(page, d.base, '#/schedules');
      for (const n of ['tick', 'minutely-report', 'doomed', 'ny-gap', 'ny-fold']) await page.waitForSelector(`tr[data-schedule="${n}"]`);
      // tick's last outcome (`lastRun`) shows once it has fired.
      await page.waitForSelector('tr[data-schedule="tick"] [data-field="last-outcome"] .badge', { timeout: 15_000 });
      assert.match(await page.textContent('[data-field="page"]'), /^page 1 of 1 \(5 schedules\)$/);
      await accessible(page, 'schedules');
      await shot(page, 'schedules');
      // The filter is the server's (`q`): only the New York pair comes back.
      await page.fill('#sched-filter', 'NY-');
      await page.waitForFunction(() => document.querySelectorAll('tr[data-schedule]').length === 2);
      assert.match(await page.textContent('[data-field="page"]'), /\(2 schedules\)/);
      // Bulk pause of the filtered two, then resume them.
      for (const n of ['ny-gap', 'ny-fold']) await page.check(`tr[data-schedule="${n}"] input[type=checkbox]`);
      await confirmClick(page, '[data-action="bulk-pause"]');
      await until(async () => (await d.call('GET', '/v1/schedules'))[1].schedules.filter((s) => s.name.startsWith('ny-') && s.status === 'paused').length === 2, 10_000, 'bulk pause');
      for (const n of ['ny-gap', 'ny-fold']) await page.check(`tr[data-schedule="${n}"] input[type=checkbox]`);
      await confirmClick(page, '[data-action="bulk-resume"]');
      await until(async () => (await d.call('GET', '/v1/schedules'))[1].schedules.filter((s) => s.name.startsWith('ny-') && s.status === 'active').length === 2, 10_000, 'bulk resume');

      // The spring-forward gap of 2026-03-08 in New York: 02:30 does not exist.
      await visit(page, d.base, '#/schedules/ny-gap?from=2026-03-06T12:00:00Z&count=4');
      const rows = await page.$$eval('tr.fire', (trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent)));
      assert.deepEqual(rows, [
        ['1', '2026-03-07T07:30:00Z', '2026-03-07T02:30:00', '-05:00', ''],
        ['2', '2026-03-08T07:00:00Z', '2026-03-08T03:00:00', '-04:00', 'shifted out of the spring-forward gap'],
        ['3', '2026-03-09T06:30:00Z', '2026-03-09T02:30:00', '-04:00', ''],
        ['4', '2026-03-10T06:30:00Z', '2026-03-10T02:30:00', '-04:00', ''],
      ]);
      assert.equal(await page.locator('svg.timeline .tick').count(), 4);
      assert.equal(await page.locator('svg.timeline .tick.dst').count(), 1);
      assert.equal(await page.textContent('svg.timeline .transition'), '-05:00 → -04:00');
      await accessible(page, 'schedule detail');
      await shot(page, 'schedule-gap');
      // The fall-back of 2026-11-01: 01:00 and 01:30 happen twice, both fire.
      await visit(page, d.base, '#/schedules/ny-fold?from=2026-11-01T04:00:00Z&count=4');
      const notes = await page.$$eval('tr.fire', (trs) => trs.map((tr) => [tr.children[2].textContent, tr.children[4].textContent]));
      assert.deepEqual(notes, [
        ['2026-11-01T01:00:00', 'repeated hour, first pass'], ['2026-11-01T01:30:00', 'repeated hour, first pass'],
        ['2026-11-01T01:00:00', 'repeated hour, second pass'], ['2026-11-01T01:30:00', 'repeated hour, second pass'],
      ]);
      assert.equal(await page.textContent('svg.timeline .transition'), '-04:00 → -05:00');
      await shot(page, 'schedule-fold');

      // Pause and resume `tick`, trigger `minutely-report`, from their pages.
      await visit(page, d.base, '#/schedules/tick');
      await confirmClick(page, '[data-action="pause"]');
      await until(async () => (await d.call('GET', '/v1/schedules/tick'))[1].schedule.status === 'paused', 10_000, 'tick paused');
      await page.waitForSelector('[data-field="status"]:text("paused")');
      await confirmClick(page, '[data-action="resume"]');
      await until(async () => (await d.call('GET', '/v1/schedules/tick'))[1].schedule.status === 'active', 10_000, 'tick resumed');
      const before = (await d.call('GET', '/v1/schedules/minutely-report'))[1].schedule.fires;
      await visit(page, d.base, '#/schedules/minutely-report');
      await confirmClick(page, '[data-action="trigger"]');
      await until(async () => (await d.call('GET', '/v1/schedules/minutely-report'))[1].schedule.fires > before, 10_000, 'a manual fire');
      await page.waitForSelector('#runs-h');

      await visit(page, d.base, '#/queues');
      await page.waitForSelector('tr[data-queue="flaky"]');
      await accessible(page, 'queues');
      await shot(page, 'queues');

      // Jobs: search by payload text, by key, by id; enqueue from the page.
      await visit(page, d.base, '#/queues/shell');
      await page.waitForSelector('tr.job');
      await page.fill('#job-text', 'needle-seven');
      await page.press('#job-text', 'Enter');
      await page.waitForFunction(() => document.querySelectorAll('tr.job').length === 1);
      await page.fill('#job-text', '');
      await page.press('#job-text', 'Enter');
      await page.fill('#job-key', 'seed-3');
      await page.press('#job-key', 'Enter');
      await page.waitForFunction(() => document.querySelectorAll('tr.job').length === 1 && document.querySelector('tr.job td:nth-child(4)').textContent === 'seed-3');
      await page.fill('#job-key', '');
      await page.press('#job-key', 'Enter');
      await page.fill('#enq-payload', '{"from": "the browser test"}');
      await page.fill('#enq-key', 'from-the-page');
      await page.click('[data-action="enqueue"]');
      await page.waitForSelector('p[role=status]:text("Enqueued job")');
      const [, found] = await d.call('GET', '/v1/queues/shell/jobs?key=from-the-page');
      assert.equal(found.jobs.length, 1);
      assert.deepEqual(found.jobs[0].payload, { from: 'the browser test' });
      await accessible(page, 'queue');
      await shot(page, 'queue');

      // A dead job's page, and its retry (redrive) from there.
      await visit(page, d.base, `#/jobs/${dead.id}`);
      assert.equal(await page.textContent('[data-field="state"]'), 'dead');
      assert.match(await page.textContent('[data-field="fire"]'), /doomed/);
      assert.match(await page.textContent('[data-field="last error"]'), /.+/);
      await accessible(page, 'job');
      await shot(page, 'job');
      await confirmClick(page, '[data-action="retry"]');
      await until(async () => (await d.call('GET', `/v1/jobs/${dead.id}`))[1].state !== 'dead', 10_000, 'the redriven job out of the dead letters');

      // Redrive all from the queue page: the dead letters are made available.
      await until(async () => (await d.call('GET', '/v1/queues/flaky/dead'))[1].total > 0, 30_000, 'another dead letter');
      await visit(page, d.base, '#/queues/flaky?state=dead');
      await confirmClick(page, '[data-action="redrive-all"]');
      await page.waitForSelector('p[role=status]:text("Redrove")');
      assert.deepEqual(errors, []);
    });
  } finally {
    await d.stop();
  }
});

test('a read token sees no action control and a forged action gets 403', { skip, timeout: 120_000 }, async () => {
  const admin = token('ops', ['admin']);
  const reader = token('viewer', ['read']);
  const d = await daemon(QUICKSTART + admin.toml + reader.toml);
  try {
    const [st, job] = await d.call('POST', '/v1/queues/shell/jobs', { payload: 1, delayMs: 3_600_000 }, admin.secret);
    assert.equal(st, 200);
    await withBrowser(async (browser) => {
      const errors = [];
      const page = await open(browser, errors);
      await page.goto(`${d.base}/`);
      // Asked once: the token goes into sessionStorage, never the URL.
      await page.waitForSelector('#login[open]');
      // The one failed request is the page's probe that found tokens required.
      assert.deepEqual(errors.filter((e) => !e.includes('401')), []);
      errors.length = 0;
      await page.fill('#token', reader.secret);
      await page.click('#login button[type=submit]');
      await page.waitForSelector('body[data-route="#/"]');
      assert.match(await page.textContent('#who'), /viewer \(read\)/);
      assert.ok(!page.url().includes(reader.secret));
      for (const hash of ['#/', '#/schedules', '#/schedules/tick', '#/queues', '#/queues/shell', `#/jobs/${job.id}`]) {
        await visit(page, d.base, hash);
        assert.equal(await page.locator('[data-action]').count(), 0, `${hash} shows an action control to a read token`);
        assert.equal(await page.locator('main button:has-text("Pause"), main button:has-text("Cancel"), main button:has-text("Enqueue"), main input[type=checkbox]').count(), 0, hash);
      }
      // The token is kept for the tab: a reload does not ask again.
      await page.reload();
      await page.waitForSelector(`body[data-route="#/jobs/${job.id}"]`);
      assert.equal(await page.locator('#login[open]').count(), 0);
      assert.deepEqual(errors, []);
      // A call the page would never make, forged with the same token.
      const forged = await page.evaluate(async (id) => {
        const t = sessionStorage.getItem('chime.token');
        const r = await fetch(`/v1/jobs/${id}/cancel`, { method: 'POST', headers: { Authorization: `Bearer ${t}` } });
        const p = await fetch('/v1/schedules/tick/pause', { method: 'POST', headers: { Authorization: `Bearer ${t}` }, body: '{}' });
        return [r.status, (await r.json()).error, p.status];
      }, job.id);
      assert.deepEqual(forged, [403, 'forbidden', 403]);
      const [, after] = await d.call('GET', `/v1/jobs/${job.id}`, undefined, admin.secret);
      assert.equal(after.state, 'scheduled');
      assert.equal((await d.call('GET', '/v1/schedules/tick', undefined, admin.secret))[1].schedule.status, 'active');

      // An admin token in a new tab sees the controls.
      const page2 = await open(browser, []);
      await page2.goto(`${d.base}/#/schedules/tick`);
      await page2.waitForSelector('#login[open]');
      await page2.fill('#token', admin.secret);
      await page2.click('#login button[type=submit]');
      await page2.waitForSelector('body[data-route="#/schedules/tick"]');
      assert.ok(await page2.locator('[data-action="pause"]').count() === 1);
    });
  } finally {
    await d.stop();
  }
});

test('the page\'s own assets are at most 150 KB gzipped, each with its type and the CSP', { timeout: 60_000 }, async () => {
  const { gzipSync } = await import('node:zlib');
  const d = await daemon(QUICKSTART);
  try {
    const index = await (await fetch(`${d.base}/`)).text();
    // Every file the page loads: the index's, then the modules' imports.
    const files = new Set(['/']);
    const queue = [...index.matchAll(/(?:src|href)="(\/ui\/[^"]+)"/g)].map((m) => m[1]);
    let total = gzipSync(index).length;
    while (queue.length) {
      const f = queue.shift();
      if (files.has(f)) continue;
      files.add(f);
      const r = await fetch(d.base + f);
      assert.equal(r.status, 200, f);
      assert.match(r.headers.get('content-type'), f.endsWith('.css') ? /^text\/css/ : /^text\/javascript/, f);
      assert.match(r.headers.get('content-security-policy'), /default-src 'none'/, f);
      const body = await r.text();
      total += gzipSync(body).length;
      for (const m of body.matchAll(/from '\.\/([^']+)'/g)) queue.push(`/ui/${m[1]}`);
    }
    console.log(`dashboard: ${files.size} files, ${total} bytes gzipped`);
    assert.ok(files.size >= 9, [...files].join(' '));
    assert.ok(total <= 150 * 1024, `${total} bytes gzipped`);
  } finally {
    await d.stop();
  }
});

// The schedule page's "Last runs" table, from `schedule.runs` of
// GET /v1/schedules/{name} (the run history of branch `history`). Skips
// itself on a daemon that reports no `runs`, and runs once it does.
test('a schedule\'s last runs: completed ones, and a dead one with its attempts and error', { skip, timeout: 120_000 }, async (t) => {
  const d = await daemon(QUICKSTART);
  try {
    const [, first] = await d.call('GET', '/v1/schedules/tick');
    if (!Array.isArray(first.schedule.runs)) {
      t.skip('this daemon keeps no run history (schedule.runs absent)');
      return;
    }
    await until(async () => (await d.call('GET', '/v1/schedules/tick'))[1].schedule.runs.some((r) => r.outcome === 'completed'), 20_000, 'a completed run of tick');
    const dead = await until(async () => (await d.call('GET', '/v1/schedules/doomed'))[1].schedule.runs.find((r) => r.outcome === 'dead'), 30_000, 'a dead run of doomed');
    await withBrowser(async (browser) => {
      const errors = [];
      const page = await open(browser, errors);
      await visit(page, d.base, '#/schedules/tick');
      await page.waitForSelector('tr.run[data-outcome="completed"]');
      await visit(page, d.base, '#/schedules/doomed');
      const row = page.locator('tr.run[data-outcome="dead"]').first();
      await row.waitFor();
      const cells = await row.locator('td').allTextContents();
      assert.equal(cells[2], 'dead');
      assert.equal(cells[3], String(dead.attempts));
      assert.equal(cells[5], dead.error);
      assert.equal(cells[7], `#${dead.job}`);
      await accessible(page, 'last runs');
      // The list's "Last outcome" is `lastRun`, kept current by the
      // event stream: doomed's newest run ends dead within its 10 s.
      await visit(page, d.base, '#/schedules');
      await page.waitForFunction(() => document.querySelector('tr[data-schedule="doomed"] [data-field="last-outcome"]')?.textContent === 'dead', null, { timeout: 25_000 });
      const tick = await page.textContent('tr[data-schedule="tick"] [data-field="last-outcome"]');
      assert.ok(['completed', 'pending'].includes(tick), tick);
      assert.deepEqual(errors, []);
    });
  } finally {
    await d.stop();
  }
});

// A queue in NATS JetStream (scripts/nats-test-server.sh gives the
// server): the broker has no list of a queue's jobs (the API's search is
// 501 there), so the queue page shows its dead letters, the one list it
// has, says why, and a job is still found by id.
const NATS = process.env.CHIME_NATS_URL;
if (!NATS && process.env.CHIME_REQUIRE_NATS === '1') throw new Error('CHIME_REQUIRE_NATS=1 but CHIME_NATS_URL is not set (scripts/nats-test-server.sh)');

test('a queue in NATS: its page lists its dead letters and says it lists no other jobs', { skip: skip || (!NATS && 'CHIME_NATS_URL is not set'), timeout: 120_000 }, async () => {
  // Streams of this run's own on the shared server.
  const tag = `DASH${process.pid}${Date.now()}`;
  const d = await daemon(`[[queue]]\nname = "remote"\ntransport = "nats"\nmaxAttempts = 1\n\n[transport.nats]\nurl = "${NATS}"\n[transport.nats.queues.remote]\nstream = "${tag}"\nsubject = "${tag.toLowerCase()}.work"\ndurableConsumer = "${tag.toLowerCase()}-workers"\ndeadLetterStream = "${tag}_DEAD"\ndeadLetterSubject = "${tag.toLowerCase()}.dead"\n`);
  try {
    // Declared in the broker first (503 until then).
    await until(async () => (await d.call('POST', '/v1/queues/remote/claim', { worker: 'w' }))[0] === 200, 20_000, 'the queue declared in NATS');
    const ids = [];
    for (const n of [1, 2]) {
      const [st, body] = await d.call('POST', '/v1/queues/remote/jobs', { payload: { n } });
      assert.equal(st, 200, JSON.stringify(body));
      ids.push(body.id);
    }
    const [, claimed] = await d.call('POST', '/v1/queues/remote/claim', { worker: 'w', max: 1 });
    const doomed = claimed.jobs[0];
    assert.equal(doomed.job, ids[0]);
    const [fst] = await d.call('POST', `/v1/jobs/${doomed.job}/fail`, { token: doomed.token, error: 'no such host' });
    assert.equal(fst, 200);
    await withBrowser(async (browser) => {
      const errors = [];
      const page = await open(browser, errors);
      await visit(page, d.base, '#/queues/remote');
      await page.waitForSelector('[data-field="unlisted"]');
      assert.match(await page.textContent('[data-field="unlisted"]'), /does not list its jobs/);
      assert.deepEqual(await page.locator('tr.job').evaluateAll((rows) => rows.map((r) => [Number(r.dataset.job), r.dataset.state])), [[ids[0], 'dead']]);
      assert.match(await page.textContent(`tr.job[data-job="${ids[0]}"]`), /no such host/);
      // The other job, not a dead letter, by its id.
      await page.fill('#job-id', String(ids[1]));
      await page.dispatchEvent('#job-id', 'change');
      await page.waitForSelector(`tr.job[data-job="${ids[1]}"][data-state="available"]`);
      await accessible(page, 'a NATS queue');
      // The search's 501 is the expected answer that the page turns into
      // the note; nothing else may fail.
      const expected = (e) => /^HTTP 501 .*\/v1\/queues\/remote\/jobs/.test(e) || /^console: Failed to load resource: .* 501/.test(e);
      assert.deepEqual(errors.filter((e) => !expected(e)), []);
    });
  } finally {
    await d.stop();
  }
});
