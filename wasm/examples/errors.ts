// Every error the package throws is a ChimeError: branch on `code` (stable),
// show `message`, mark `field` in a form.
import { Engine, ChimeError } from 'chime-scheduler';

const e = new Engine();
try {
  e.handle(Date.UTC(2026, 0, 1), { triggerSchedule: { name: 'ghost' } });
} catch (err) {
  if (err instanceof ChimeError) console.log(err.code, err.field);   // unknown_schedule schedule
}
e.free();
try {
  e.pollTimeout();
} catch (err) {
  if (err instanceof ChimeError) console.log(err.code);              // freed
}
