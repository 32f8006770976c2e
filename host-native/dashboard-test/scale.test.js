// The dashboard at scale: a daemon with 10,000 schedules (declared in its
// config) and 1,000,000 jobs (batch-enqueued, 1,000 a request), then the
// first load of each list page in chromium, measured in the browser from
// navigation start to the rendered view. Each must be ≤ 1 s on loopback,
// and every list is a page (50 rows), not the whole set.
// CHIME_DASHBOARD_JOBS and CHIME_DASHBOARD_SCHEDULES change the sizes
// (scripts/dashboard-test.sh keeps the full sizes; BENCHMARKS.md records
// the numbers it prints).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { present, daemon, withBrowser, open } from './harness.js';

const SCHEDULES = Number(process.env.CHIME_DASHBOARD_SCHEDULES ?? 10_000);
const JOBS = Number(process.env.CHIME_DASHBOARD_JOBS ?? 1_000_000);
const BATCH = 1_000;
const LIMIT_MS = 1_000;

function config() {
  let text = '[[queue]]\nname = "bulk"\n\n[[queue]]\nname = "shell"\n';
  for (let i = 0; i < SCHEDULES; i += 1) {
    // Yearly, so none fires during the test.
    text += `\n[[schedule]]\nname = "s-${String(i).padStart(5, '0')}"\nspec = "0 0 1 1 *"\ntz = "America/New_York"\ntarget = { queue = "shell" }\n`;
  }
  return text;
}

async function seed(d) {
  const t0 = Date.now();
  const inFlight = 4;
  let next = 0;
  async function worker() {
    while (next < JOBS) {
      const from = next;
      next += BATCH;
      const jobs = [];
      for (let i = from; i < Math.min(from + BATCH, JOBS); i += 1) jobs.push({ payload: { n: i, tag: i % 1000 === 0 ? 'needle' : 'hay' } });
      const [st, body] = await d.call('POST', '/v1/queues/bulk/jobs', { jobs });
      assert.equal(st, 200, JSON.stringify(body));
    }
  }
  await Promise.all(Array.from({ length: inFlight }, worker));
  return Date.now() - t0;
}

test(`first load with ${SCHEDULES} schedules and ${JOBS} jobs`, { skip: !present && 'chromium not installed', timeout: 1_200_000 }, async () => {
  // No snapshot during the seeding: a snapshot of a million jobs every
  // 10,000 entries is the seeding's cost, not the page's.
  const d = await daemon(config(), ['--snapshot-every', '100000000']);
  try {
    const seeded = await seed(d);
    const [, q] = await d.call('GET', '/v1/queues');
    assert.equal(q.queues.find((x) => x.queue === 'bulk').available, JOBS);
    console.log(`seeded ${JOBS} jobs in ${seeded} ms (${Math.round(JOBS / (seeded / 1000))} jobs/s)`);
    await withBrowser(async (browser) => {
      const results = {};
      for (const [name, hash, rows] of [
        ['overview', '#/', 'tr[data-queue]'],
        ['schedules', '#/schedules', 'tr[data-schedule]'],
        ['queue', '#/queues/bulk', 'tr.job'],
        ['schedule', '#/schedules/s-00042', 'tr.fire'],
      ]) {
        const errors = [];
        const page = await open(browser, errors);
        await page.goto(`${d.base}/${hash}`);
        await page.waitForSelector(`body[data-route="${hash}"]`, { timeout: 30_000 });
        // From navigation start to the view rendered, in the browser.
        const ms = await page.evaluate(() => performance.now());
        results[name] = Math.round(ms);
        const n = await page.locator(rows).count();
        assert.ok(n > 0 && n <= 50, `${name}: ${n} rows (a page is at most 50)`);
        assert.deepEqual(errors, [], name);
        await page.close();
      }
      console.log(`first load (ms): ${JSON.stringify(results)}`);
      // The schedule list pages and filters on the server: 50 of all of
      // them, Next and Previous by the API's cursor, a filter's matches.
      const errors = [];
      const page = await open(browser, errors);
      await page.goto(`${d.base}/#/schedules`);
      await page.waitForSelector('body[data-route="#/schedules"]', { timeout: 30_000 });
      const name = (i) => `s-${String(i).padStart(5, '0')}`;
      const first = async () => page.getAttribute('tr[data-schedule]:first-child', 'data-schedule');
      assert.equal(await page.textContent('[data-field="page"]'), `page 1 of ${Math.ceil(SCHEDULES / 50)} (${SCHEDULES} schedules)`);
      if (SCHEDULES > 50) {
        await page.click('[data-pager="next"]');
        await page.waitForSelector(`tr[data-schedule="${name(50)}"]:first-child`);
        assert.equal(await page.locator('tr[data-schedule]').count(), Math.min(50, SCHEDULES - 50));
        await page.click('[data-pager="previous"]');
        await page.waitForSelector(`tr[data-schedule="${name(0)}"]:first-child`);
      }
      const last = name(SCHEDULES - 1);
      const prefix = last.slice(0, -1);
      await page.fill('#sched-filter', prefix.toUpperCase());
      await page.waitForFunction((p) => [...document.querySelectorAll('tr[data-schedule]')].every((r) => r.dataset.schedule.startsWith(p)), prefix);
      const want = Array.from({ length: SCHEDULES }, (_, i) => name(i)).filter((n) => n.startsWith(prefix));
      assert.deepEqual(await page.locator('tr[data-schedule]').evaluateAll((rows) => rows.map((r) => r.dataset.schedule)), want);
      assert.equal(await first(), want[0]);
      assert.match(await page.textContent('[data-field="page"]'), new RegExp(`\\(${want.length} schedules\\)`));
      assert.deepEqual(errors, [], 'schedule pages');
      await page.close();
      for (const [name, ms] of Object.entries(results)) assert.ok(ms <= LIMIT_MS, `${name} took ${ms} ms (limit ${LIMIT_MS})`);
    });
  } finally {
    await d.stop();
  }
});
