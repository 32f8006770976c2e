// The scale scenario that scale.test.js checks and bench.js times: a
// daemon with SCHEDULES schedules (declared in its config) and JOBS jobs
// (batch-enqueued, 1,000 a request), and each list view's first load in
// chromium. CHIME_DASHBOARD_SCHEDULES and CHIME_DASHBOARD_JOBS change the
// sizes (10,000 and 1,000,000 unless told).
import assert from 'node:assert/strict';
import { daemon, open } from './harness.js';

export const SCHEDULES = Number(process.env.CHIME_DASHBOARD_SCHEDULES ?? 10_000);
export const JOBS = Number(process.env.CHIME_DASHBOARD_JOBS ?? 1_000_000);
const BATCH = 1_000;

/** The list views: name, route, and the selector of one row. */
export const VIEWS = [
  ['overview', '#/', 'tr[data-queue]'],
  ['schedules', '#/schedules', 'tr[data-schedule]'],
  ['queue', '#/queues/bulk', 'tr.job'],
  ['schedule', '#/schedules/s-00042', 'tr.fire'],
];

/** A schedule's name by its index, as the config declares it. */
export const scheduleName = (i) => `s-${String(i).padStart(5, '0')}`;

function config() {
  let text = '[[queue]]\nname = "bulk"\n\n[[queue]]\nname = "shell"\n';
  for (let i = 0; i < SCHEDULES; i += 1) {
    // Yearly, so none fires while the scenario runs.
    text += `\n[[schedule]]\nname = "${scheduleName(i)}"\nspec = "0 0 1 1 *"\ntz = "America/New_York"\ntarget = { queue = "shell" }\n`;
  }
  return text;
}

/**
 * The daemon with every schedule and job in place, and how long the
 * jobs took to enqueue (ms). No snapshot runs during the seeding: a
 * snapshot of a million jobs every 10,000 entries is the seeding's cost,
 * not the page's.
 */
export async function seeded() {
  const d = await daemon(config(), ['--snapshot-every', '100000000']);
  try {
    const t0 = Date.now();
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
    await Promise.all(Array.from({ length: 4 }, worker));
    const ms = Date.now() - t0;
    const [, q] = await d.call('GET', '/v1/queues');
    assert.equal(q.queues.find((x) => x.queue === 'bulk').available, JOBS);
    return { d, ms };
  } catch (e) {
    await d.stop();
    throw e;
  }
}

/**
 * One view's first load in `browser`: ms from navigation start to the
 * view rendered (`body[data-route]` is set once its API calls answered
 * and its DOM is built), measured in the page. Checks the view shows
 * one page of rows (1..=50) and no error.
 */
export async function firstLoad(browser, d, [name, hash, rows]) {
  const errors = [];
  const page = await open(browser, errors);
  try {
    await page.goto(`${d.base}/${hash}`);
    await page.waitForSelector(`body[data-route="${hash}"]`, { timeout: 30_000 });
    const ms = Math.round(await page.evaluate(() => performance.now()));
    const n = await page.locator(rows).count();
    assert.ok(n > 0 && n <= 50, `${name}: ${n} rows (a page is at most 50)`);
    assert.deepEqual(errors, [], name);
    return ms;
  } finally {
    await page.close();
  }
}
