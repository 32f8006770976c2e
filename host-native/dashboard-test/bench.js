// Times each list view's first load at scale (scale.js): ROUNDS rounds,
// each in a new chromium with a fresh profile (so nothing is cached, as
// for a user's first visit) against one seeded daemon. Prints the median
// and the worst per view, and the seeding's rate. scripts/bench-dashboard.sh
// runs it on the release binary; BENCHMARKS.md records what it printed.
import { present, withBrowser } from './harness.js';
import { SCHEDULES, JOBS, VIEWS, seeded, firstLoad } from './scale.js';

const ROUNDS = Number(process.env.CHIME_DASHBOARD_ROUNDS ?? 5);
if (!present) throw new Error('chromium is missing (apt-get install chromium)');

const { d, ms: seedMs } = await seeded();
try {
  console.log(`${SCHEDULES} schedules, ${JOBS} jobs seeded in ${seedMs} ms (${Math.round(JOBS / (seedMs / 1000))} jobs/s); ${ROUNDS} rounds`);
  const times = Object.fromEntries(VIEWS.map(([name]) => [name, []]));
  for (let r = 0; r < ROUNDS; r += 1) {
    await withBrowser(async (browser) => {
      for (const view of VIEWS) times[view[0]].push(await firstLoad(browser, d, view));
    });
  }
  for (const [name, xs] of Object.entries(times)) {
    const s = [...xs].sort((a, b) => a - b);
    console.log(`${name.padEnd(10)} median ${s[Math.floor(s.length / 2)]} ms  max ${s.at(-1)} ms  (${xs.join(', ')})`);
  }
} finally {
  await d.stop();
}
