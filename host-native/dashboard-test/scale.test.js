// The dashboard at scale (scale.js): with 10,000 schedules and 1,000,000
// jobs every list view loads one page of rows with no error, and the
// schedule list pages and filters on the server. How long the loads take
// is printed here and measured by bench.js (scripts/bench-dashboard.sh,
// numbers in BENCHMARKS.md), not asserted: a test's machine is not a
// benchmark's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { present, withBrowser, open } from './harness.js';
import { SCHEDULES, JOBS, VIEWS, scheduleName as name, seeded, firstLoad } from './scale.js';

test(`every list is a page with ${SCHEDULES} schedules and ${JOBS} jobs`, { skip: !present && 'chromium not installed', timeout: 1_200_000 }, async () => {
  const { d, ms: seedMs } = await seeded();
  try {
    console.log(`seeded ${JOBS} jobs in ${seedMs} ms (${Math.round(JOBS / (seedMs / 1000))} jobs/s)`);
    await withBrowser(async (browser) => {
      const results = {};
      for (const view of VIEWS) results[view[0]] = await firstLoad(browser, d, view);
      console.log(`first load (ms, this machine, not asserted): ${JSON.stringify(results)}`);
      // The schedule list pages and filters on the server: 50 of all of
      // them, Next and Previous by the API's cursor, a filter's matches.
      const errors = [];
      const page = await open(browser, errors);
      await page.goto(`${d.base}/#/schedules`);
      await page.waitForSelector('body[data-route="#/schedules"]', { timeout: 30_000 });
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
      assert.equal(await page.getAttribute('tr[data-schedule]:first-child', 'data-schedule'), want[0]);
      assert.match(await page.textContent('[data-field="page"]'), new RegExp(`\\(${want.length} schedules\\)`));
      assert.deepEqual(errors, [], 'schedule pages');
      await page.close();
    });
  } finally {
    await d.stop();
  }
});
