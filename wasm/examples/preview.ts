// What a spec does: the next fires with civil time, UTC offset and DST
// notes; a validation error that points at the field.
import { preview, validate, Spec } from 'chime-scheduler';

console.log(preview('30 2 * * *', { tz: 'America/New_York', from: Date.UTC(2026, 2, 7), count: 2 }));
// [ { at: 1772868600000, civil: '2026-03-07T02:30:00', offsetSeconds: -18000, note: null },
//   { at: 1772953200000, civil: '2026-03-08T03:00:00', offsetSeconds: -14400, note: 'shiftedFromGap' } ]

const v = validate('0 9 * * MON-FRU');
if (!v.valid) console.log(v.error.code, v.error.field, v.error.message);
// invalid_spec spec invalid_spec: unknown day-of-week name "FRU" at field 5, column 13

// Parsed once, for many occurrences:
const weekdays = new Spec('0 9 * * MON-FRI', { tz: 'Europe/London' });
console.log(weekdays.next(Date.UTC(2026, 0, 1)));        // 1767258000000 (Thu 1 Jan, 09:00 GMT)
console.log(weekdays.nextTimes(Date.UTC(2026, 0, 1), 3)); // Float64Array(3) [ 1767258000000, … ]
weekdays.free();
