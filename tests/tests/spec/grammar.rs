//! The cron grammar of `docs/spec.md`, as a table: valid expressions with
//! their next civil occurrences, and invalid ones with the error they get.

use chime_core::DstPolicy;
use chime_core::testing::Civil;
use chime_core::testing::CronSpec;

/// Default start: Saturday 2026-03-14T10:30:15 (local seconds).
const START: &str = "2026-03-14T10:30:15";

/// `(expression, start or "" for START, next occurrences)`. An empty list
/// means no occurrence within 100 years.
const VALID: &[(&str, &str, &[&str])] = &[
    // Plain fields, lists, ranges, steps.
    (
        "* * * * *",
        "",
        &[
            "2026-03-14T10:31:00",
            "2026-03-14T10:32:00",
            "2026-03-14T10:33:00",
        ],
    ),
    (
        "*/5 * * * *",
        "",
        &[
            "2026-03-14T10:35:00",
            "2026-03-14T10:40:00",
            "2026-03-14T10:45:00",
        ],
    ),
    (
        "0 9 * * 1-5",
        "",
        &[
            "2026-03-16T09:00:00",
            "2026-03-17T09:00:00",
            "2026-03-18T09:00:00",
        ],
    ),
    (
        "30 10 * * *",
        "",
        &["2026-03-15T10:30:00", "2026-03-16T10:30:00"],
    ),
    (
        "0 * * * *",
        "",
        &[
            "2026-03-14T11:00:00",
            "2026-03-14T12:00:00",
            "2026-03-14T13:00:00",
        ],
    ),
    (
        "15,45 * * * *",
        "",
        &[
            "2026-03-14T10:45:00",
            "2026-03-14T11:15:00",
            "2026-03-14T11:45:00",
        ],
    ),
    (
        "0-10/5 12 * * *",
        "",
        &[
            "2026-03-14T12:00:00",
            "2026-03-14T12:05:00",
            "2026-03-14T12:10:00",
        ],
    ),
    (
        "0 22-23 * * *",
        "",
        &[
            "2026-03-14T22:00:00",
            "2026-03-14T23:00:00",
            "2026-03-15T22:00:00",
        ],
    ),
    (
        "0 0 1,15 * *",
        "",
        &[
            "2026-03-15T00:00:00",
            "2026-04-01T00:00:00",
            "2026-04-15T00:00:00",
        ],
    ),
    (
        "5/15 * * * *",
        "",
        &[
            "2026-03-14T10:35:00",
            "2026-03-14T10:50:00",
            "2026-03-14T11:05:00",
        ],
    ),
    (
        "0 9-17/2 * * MON-FRI",
        "",
        &[
            "2026-03-16T09:00:00",
            "2026-03-16T11:00:00",
            "2026-03-16T13:00:00",
        ],
    ),
    (
        "0 0 29 * *",
        "",
        &[
            "2026-03-29T00:00:00",
            "2026-04-29T00:00:00",
            "2026-05-29T00:00:00",
        ],
    ),
    (
        "0 0 31 * *",
        "",
        &[
            "2026-03-31T00:00:00",
            "2026-05-31T00:00:00",
            "2026-07-31T00:00:00",
        ],
    ),
    (
        "0 0 29 2 *",
        "",
        &[
            "2028-02-29T00:00:00",
            "2032-02-29T00:00:00",
            "2036-02-29T00:00:00",
        ],
    ),
    (
        "  0   12  *  *  *  ",
        "",
        &["2026-03-14T12:00:00", "2026-03-15T12:00:00"],
    ),
    (
        "0\t12\t*\t*\t*",
        "",
        &["2026-03-14T12:00:00", "2026-03-15T12:00:00"],
    ),
    ("007 01 * * *", "", &["2026-03-15T01:07:00"]),
    // Months: numbers, names (any case), ranges and steps.
    (
        "0 0 * JAN,JUL *",
        "",
        &[
            "2026-07-01T00:00:00",
            "2026-07-02T00:00:00",
            "2026-07-03T00:00:00",
        ],
    ),
    (
        "0 0 1 jan-mar/2 *",
        "",
        &[
            "2027-01-01T00:00:00",
            "2027-03-01T00:00:00",
            "2028-01-01T00:00:00",
        ],
    ),
    (
        "0 0 1 */3 *",
        "",
        &[
            "2026-04-01T00:00:00",
            "2026-07-01T00:00:00",
            "2026-10-01T00:00:00",
        ],
    ),
    (
        "0 0 1 feb/4 *",
        "",
        &[
            "2026-06-01T00:00:00",
            "2026-10-01T00:00:00",
            "2027-02-01T00:00:00",
        ],
    ),
    (
        "0 0 15 Oct-Dec *",
        "",
        &[
            "2026-10-15T00:00:00",
            "2026-11-15T00:00:00",
            "2026-12-15T00:00:00",
        ],
    ),
    // Weekdays: numbers 0-7, names, ranges ending on SUN, steps.
    (
        "0 8 * * MON",
        "",
        &[
            "2026-03-16T08:00:00",
            "2026-03-23T08:00:00",
            "2026-03-30T08:00:00",
        ],
    ),
    (
        "0 8 * * sun,sat",
        "",
        &[
            "2026-03-15T08:00:00",
            "2026-03-21T08:00:00",
            "2026-03-22T08:00:00",
        ],
    ),
    (
        "0 8 * * 7",
        "",
        &[
            "2026-03-15T08:00:00",
            "2026-03-22T08:00:00",
            "2026-03-29T08:00:00",
        ],
    ),
    (
        "0 8 * * 0",
        "",
        &[
            "2026-03-15T08:00:00",
            "2026-03-22T08:00:00",
            "2026-03-29T08:00:00",
        ],
    ),
    (
        "0 8 * * FRI-SUN",
        "",
        &[
            "2026-03-15T08:00:00",
            "2026-03-20T08:00:00",
            "2026-03-21T08:00:00",
        ],
    ),
    (
        "0 8 * * 5-7",
        "",
        &[
            "2026-03-15T08:00:00",
            "2026-03-20T08:00:00",
            "2026-03-21T08:00:00",
        ],
    ),
    (
        "0 0 * * */2",
        "",
        &[
            "2026-03-15T00:00:00",
            "2026-03-17T00:00:00",
            "2026-03-19T00:00:00",
        ],
    ),
    (
        "0 0 * * tue-thu",
        "",
        &[
            "2026-03-17T00:00:00",
            "2026-03-18T00:00:00",
            "2026-03-19T00:00:00",
        ],
    ),
    (
        "0 0 * * 0-7",
        "",
        &[
            "2026-03-15T00:00:00",
            "2026-03-16T00:00:00",
            "2026-03-17T00:00:00",
        ],
    ),
    // Day-of-month and day-of-week: OR when both are restricted...
    (
        "0 8 1,15 * MON",
        "",
        &[
            "2026-03-15T08:00:00",
            "2026-03-16T08:00:00",
            "2026-03-23T08:00:00",
        ],
    ),
    (
        "0 0 L * 0",
        "",
        &[
            "2026-03-15T00:00:00",
            "2026-03-22T00:00:00",
            "2026-03-29T00:00:00",
        ],
    ),
    (
        "0 0 1 1 0",
        "",
        &[
            "2027-01-01T00:00:00",
            "2027-01-03T00:00:00",
            "2027-01-10T00:00:00",
        ],
    ),
    // ... `*/2` and `1-31` are restrictions (only `*` and `?` are not) ...
    (
        "0 0 */2 * MON",
        "",
        &[
            "2026-03-15T00:00:00",
            "2026-03-16T00:00:00",
            "2026-03-17T00:00:00",
        ],
    ),
    (
        "0 0 1-31 * MON",
        "",
        &[
            "2026-03-15T00:00:00",
            "2026-03-16T00:00:00",
            "2026-03-17T00:00:00",
        ],
    ),
    // ... `?` is `*` ...
    (
        "0 0 ? * MON",
        "",
        &[
            "2026-03-16T00:00:00",
            "2026-03-23T00:00:00",
            "2026-03-30T00:00:00",
        ],
    ),
    (
        "0 0 15 * ?",
        "",
        &[
            "2026-03-15T00:00:00",
            "2026-04-15T00:00:00",
            "2026-05-15T00:00:00",
        ],
    ),
    // ... and AND with `+` on the day-of-week field.
    (
        "0 8 1-7 * +MON",
        "",
        &[
            "2026-04-06T08:00:00",
            "2026-05-04T08:00:00",
            "2026-06-01T08:00:00",
        ],
    ),
    (
        "0 8 13 * +FRI",
        "",
        &[
            "2026-11-13T08:00:00",
            "2027-08-13T08:00:00",
            "2028-10-13T08:00:00",
        ],
    ),
    (
        "0 0 L * +0",
        "",
        &[
            "2026-05-31T00:00:00",
            "2027-01-31T00:00:00",
            "2027-02-28T00:00:00",
        ],
    ),
    (
        "0 0 1 1 +0",
        "",
        &[
            "2034-01-01T00:00:00",
            "2040-01-01T00:00:00",
            "2045-01-01T00:00:00",
        ],
    ),
    (
        "0 0 29 2 +MON",
        "",
        &["2044-02-29T00:00:00", "2072-02-29T00:00:00"],
    ),
    (
        "0 0 0 1 * +*",
        "",
        &["2026-04-01T00:00:00", "2026-05-01T00:00:00"],
    ),
    (
        "0 0 12 ? * +5#3",
        "",
        &["2026-03-20T12:00:00", "2026-04-17T12:00:00"],
    ),
    // L, L-n, LW, nW in day-of-month.
    (
        "0 0 L * *",
        "",
        &[
            "2026-03-31T00:00:00",
            "2026-04-30T00:00:00",
            "2026-05-31T00:00:00",
        ],
    ),
    (
        "0 0 L-1 * *",
        "",
        &[
            "2026-03-30T00:00:00",
            "2026-04-29T00:00:00",
            "2026-05-30T00:00:00",
        ],
    ),
    (
        "0 0 L-3 2 *",
        "",
        &[
            "2027-02-25T00:00:00",
            "2028-02-26T00:00:00",
            "2029-02-25T00:00:00",
        ],
    ),
    (
        "0 0 L-30 * *",
        "",
        &[
            "2026-05-01T00:00:00",
            "2026-07-01T00:00:00",
            "2026-08-01T00:00:00",
        ],
    ),
    (
        "0 0 1,L * *",
        "",
        &[
            "2026-03-31T00:00:00",
            "2026-04-01T00:00:00",
            "2026-04-30T00:00:00",
        ],
    ),
    (
        "0 0 LW * *",
        "",
        &[
            "2026-03-31T00:00:00",
            "2026-04-30T00:00:00",
            "2026-05-29T00:00:00",
        ],
    ),
    (
        "0 0 15W * *",
        "",
        &[
            "2026-03-16T00:00:00",
            "2026-04-15T00:00:00",
            "2026-05-15T00:00:00",
        ],
    ),
    (
        "0 0 1W 8 *",
        "",
        &[
            "2026-08-03T00:00:00",
            "2027-08-02T00:00:00",
            "2028-08-01T00:00:00",
        ],
    ),
    (
        "0 0 31W * *",
        "",
        &[
            "2026-03-31T00:00:00",
            "2026-05-29T00:00:00",
            "2026-07-31T00:00:00",
        ],
    ),
    (
        "0 0 lw,15w * *",
        "",
        &[
            "2026-03-16T00:00:00",
            "2026-03-31T00:00:00",
            "2026-04-15T00:00:00",
        ],
    ),
    ("0 0 0 L 2 ? 2100", "", &["2100-02-28T00:00:00"]),
    // nL, n#k, n#L in day-of-week.
    (
        "0 12 * * 5#3",
        "",
        &[
            "2026-03-20T12:00:00",
            "2026-04-17T12:00:00",
            "2026-05-15T12:00:00",
        ],
    ),
    (
        "0 0 * * 5L",
        "",
        &[
            "2026-03-27T00:00:00",
            "2026-04-24T00:00:00",
            "2026-05-29T00:00:00",
        ],
    ),
    (
        "0 0 * * FRI#L",
        "",
        &[
            "2026-03-27T00:00:00",
            "2026-04-24T00:00:00",
            "2026-05-29T00:00:00",
        ],
    ),
    (
        "0 0 * * 5#l",
        "",
        &["2026-03-27T00:00:00", "2026-04-24T00:00:00"],
    ),
    (
        "0 0 * * MON#1",
        "",
        &[
            "2026-04-06T00:00:00",
            "2026-05-04T00:00:00",
            "2026-06-01T00:00:00",
        ],
    ),
    (
        "0 0 * * 1#5",
        "",
        &[
            "2026-03-30T00:00:00",
            "2026-06-29T00:00:00",
            "2026-08-31T00:00:00",
        ],
    ),
    (
        "0 0 * * 6#5",
        "",
        &[
            "2026-05-30T00:00:00",
            "2026-08-29T00:00:00",
            "2026-10-31T00:00:00",
        ],
    ),
    (
        "0 0 * * 1-5#2",
        "",
        &[
            "2026-04-08T00:00:00",
            "2026-04-09T00:00:00",
            "2026-04-10T00:00:00",
        ],
    ),
    (
        "0 0 * * 7#1,SAT#L",
        "",
        &[
            "2026-03-28T00:00:00",
            "2026-04-05T00:00:00",
            "2026-04-25T00:00:00",
        ],
    ),
    (
        "0 0 0 ? * 1#1 2026",
        "",
        &[
            "2026-04-06T00:00:00",
            "2026-05-04T00:00:00",
            "2026-06-01T00:00:00",
        ],
    ),
    // Macros, any case.
    (
        "@yearly",
        "",
        &[
            "2027-01-01T00:00:00",
            "2028-01-01T00:00:00",
            "2029-01-01T00:00:00",
        ],
    ),
    (
        "@annually",
        "",
        &["2027-01-01T00:00:00", "2028-01-01T00:00:00"],
    ),
    (
        "@monthly",
        "",
        &[
            "2026-04-01T00:00:00",
            "2026-05-01T00:00:00",
            "2026-06-01T00:00:00",
        ],
    ),
    (
        "@weekly",
        "",
        &[
            "2026-03-15T00:00:00",
            "2026-03-22T00:00:00",
            "2026-03-29T00:00:00",
        ],
    ),
    (
        "@daily",
        "",
        &[
            "2026-03-15T00:00:00",
            "2026-03-16T00:00:00",
            "2026-03-17T00:00:00",
        ],
    ),
    (
        "@midnight",
        "",
        &["2026-03-15T00:00:00", "2026-03-16T00:00:00"],
    ),
    (
        "@hourly",
        "",
        &[
            "2026-03-14T11:00:00",
            "2026-03-14T12:00:00",
            "2026-03-14T13:00:00",
        ],
    ),
    ("@DAILY", "", &["2026-03-15T00:00:00"]),
    // Prefixes (the zone is returned, not applied here).
    (
        "CRON_TZ=Europe/Paris 0 9 * * *",
        "",
        &["2026-03-15T09:00:00", "2026-03-16T09:00:00"],
    ),
    ("TZ=America/New_York @hourly", "", &["2026-03-14T11:00:00"]),
    // Six fields: seconds first.
    (
        "*/20 * * * * *",
        "",
        &[
            "2026-03-14T10:30:20",
            "2026-03-14T10:30:40",
            "2026-03-14T10:31:00",
        ],
    ),
    (
        "15 30 10 * * *",
        "",
        &[
            "2026-03-14T10:30:15",
            "2026-03-15T10:30:15",
            "2026-03-16T10:30:15",
        ],
    ),
    (
        "* * * * * *",
        "",
        &[
            "2026-03-14T10:30:15",
            "2026-03-14T10:30:16",
            "2026-03-14T10:30:17",
        ],
    ),
    (
        "1-3 0 0 1 1 *",
        "",
        &[
            "2027-01-01T00:00:01",
            "2027-01-01T00:00:02",
            "2027-01-01T00:00:03",
        ],
    ),
    (
        "59 59 23 31 12 *",
        "",
        &[
            "2026-12-31T23:59:59",
            "2027-12-31T23:59:59",
            "2028-12-31T23:59:59",
        ],
    ),
    (
        "0,30 * 9 * * MON",
        "",
        &[
            "2026-03-16T09:00:00",
            "2026-03-16T09:00:30",
            "2026-03-16T09:01:00",
        ],
    ),
    // Seven fields: plus year.
    ("0 0 0 1 1 * 2030", "", &["2030-01-01T00:00:00"]),
    (
        "0 0 12 25 12 ? 2026-2030/2",
        "",
        &[
            "2026-12-25T12:00:00",
            "2028-12-25T12:00:00",
            "2030-12-25T12:00:00",
        ],
    ),
    (
        "0 0 0 * * * 2027",
        "",
        &[
            "2027-01-01T00:00:00",
            "2027-01-02T00:00:00",
            "2027-01-03T00:00:00",
        ],
    ),
    (
        "0 0 0 1 1 * *",
        "",
        &["2027-01-01T00:00:00", "2028-01-01T00:00:00"],
    ),
    (
        "0 0 0 1 1 * 2040/20",
        "",
        &[
            "2040-01-01T00:00:00",
            "2060-01-01T00:00:00",
            "2080-01-01T00:00:00",
        ],
    ),
    ("0 0 0 29 2 ? 2100", "", &[]),
    // Valid but impossible dates: never fire.
    ("0 0 30 2 *", "", &[]),
    ("0 0 31 4,6,9,11 *", "", &[]),
    // Starting points at month, year and leap-day edges.
    ("0 0 * * *", "2026-12-31T23:59:59", &["2027-01-01T00:00:00"]),
    (
        "0 0 L * *",
        "2028-02-01T00:00:00",
        &["2028-02-29T00:00:00", "2028-03-31T00:00:00"],
    ),
    (
        "0 0 L 2 *",
        "2100-01-01T00:00:00",
        &["2100-02-28T00:00:00", "2101-02-28T00:00:00"],
    ),
    (
        "0 0 0 * * *",
        "2026-03-15T00:00:00",
        &["2026-03-15T00:00:00", "2026-03-16T00:00:00"],
    ),
];

/// `(expression, message fragment)`; every one is `invalid_spec`.
const INVALID: &[(&str, &str)] = &[
    ("", "empty cron expression"),
    ("   ", "empty cron expression"),
    ("* * * *", "expected 5, 6 or 7 fields"),
    ("* * * * * * * *", "found 8"),
    ("60 * * * *", "minute 60 out of range 0-59 at field 1"),
    ("* 24 * * *", "hour 24 out of range 0-23 at field 2"),
    ("* * 32 * *", "day-of-month 32 out of range 1-31 at field 3"),
    ("* * 0 * *", "day-of-month 0 out of range 1-31 at field 3"),
    ("* * * 13 *", "month 13 out of range 1-12 at field 4"),
    ("* * * 0 *", "month 0 out of range 1-12 at field 4"),
    ("* * * * 8", "day-of-week 8 out of range 0-7 at field 5"),
    ("60 * * * * *", "second 60 out of range 0-59 at field 1"),
    (
        "0 0 0 32 * *",
        "day-of-month 32 out of range 1-31 at field 4",
    ),
    (
        "0 0 0 1 1 * 1969",
        "year 1969 out of range 1970-9999 at field 7",
    ),
    ("0 0 0 1 1 * 10000", "year 10000 out of range 1970-9999"),
    (
        "99999999999999999999 * * * *",
        "out of range 0-59 at field 1",
    ),
    ("*/0 * * * *", "minute step 0 is not allowed at field 1"),
    (
        "*/61 * * * *",
        "minute step 61 is larger than 60 at field 1",
    ),
    ("* */25 * * *", "hour step 25 is larger than 24 at field 2"),
    (
        "* * * * */8",
        "day-of-week step 8 is larger than 7 at field 5",
    ),
    (
        "*/ * * * *",
        "missing step after '/' in minute at field 1, column 3",
    ),
    ("*/5/2 * * * *", "unexpected character '/'"),
    (
        "1,,2 * * * *",
        "empty list item in minute \"1,,2\" at field 1, column 3",
    ),
    ("1, * * * *", "empty list item"),
    (",1 * * * *", "empty list item"),
    ("5-1 * * * *", "minute range 5-1 is reversed"),
    (
        "* 22-2 * * *",
        "hour range 22-2 is reversed (wraparound ranges are not supported; write 22-23,0-2) at field 2",
    ),
    ("* * * * FRI-MON", "day-of-week range FRI-MON is reversed"),
    ("* * * NOV-FEB *", "month range NOV-FEB is reversed"),
    ("0 0 0 1 1 * 2030-2020", "year range 2030-2020 is reversed"),
    ("1-2-3 * * * *", "unexpected character '-'"),
    ("-5 * * * *", "missing value in minute"),
    ("5- * * * *", "missing range end in minute"),
    ("/5 * * * *", "missing value"),
    (
        "? * * * *",
        "'?' is only allowed in day-of-month and day-of-week at field 1, column 1",
    ),
    (
        "* * * ? *",
        "'?' is only allowed in day-of-month and day-of-week at field 4",
    ),
    (
        "0 0 0 1 1 * ?",
        "'?' is only allowed in day-of-month and day-of-week at field 7",
    ),
    ("* * 1,? * *", "'?' must be the whole day-of-month field"),
    (
        "L * * * *",
        "'L' is only allowed in day-of-month and day-of-week at field 1",
    ),
    ("* * 5L * *", "'L' in day-of-month must be L, L-n or LW"),
    (
        "* * L-31 * *",
        "day-of-month L-31 offset must be 1-30 at field 3",
    ),
    ("* * L-0 * *", "offset must be 1-30"),
    ("* * * * L", "'L' alone is not supported in day-of-week"),
    (
        "* * * * 5W",
        "'W' is only allowed in day-of-month at field 5",
    ),
    ("* * 1-5W * *", "'W' must follow a single day of month"),
    (
        "* * 32W * *",
        "day-of-month 32 out of range 1-31 at field 3",
    ),
    (
        "* * 5#2 * *",
        "'#' is only allowed in day-of-week at field 3",
    ),
    (
        "* * * * 5#6",
        "day-of-week occurrence #6 out of range 1-5 at field 5",
    ),
    ("* * * * 5#0", "occurrence #0 out of range 1-5"),
    ("* * * * 5#", "occurrence \"\" must be 1-5 or L"),
    ("* * * * *#1", "'#' and 'L' need a weekday"),
    (
        "* * * * +",
        "'+' must be followed by a day-of-week at field 5",
    ),
    (
        "* * +1 * *",
        "'+' is only allowed at the start of the day-of-week field at field 3",
    ),
    ("* * * * ++MON", "'+' is only allowed at the start"),
    (
        "* * * * MONDAY",
        "unknown day-of-week name \"MONDAY\" at field 5",
    ),
    (
        "* * * JANUARY *",
        "unknown month name \"JANUARY\" at field 4",
    ),
    ("* * * * JAN", "unknown day-of-week name \"JAN\""),
    ("MON * * * *", "unexpected character 'M' in minute"),
    (
        "5x * * * *",
        "unexpected character 'x' in minute \"5x\" at field 1, column 2",
    ),
    ("1.5 * * * *", "unexpected character '.'"),
    ("\u{ff10} * * * *", "unexpected character"),
    ("@reboot", "unknown macro \"@reboot\""),
    ("@every 5m", "macro @every must stand alone"),
    ("@daily 5", "macro @daily must stand alone"),
    ("CRON_TZ= 0 0 * * *", "empty zone name after CRON_TZ="),
    ("TZ=UTC", "TZ=UTC must be followed by a cron expression"),
    ("CRON_TZ=UTC @fortnightly", "unknown macro"),
    (
        "CRON_TZ=UTC 0 0 32 * *",
        "day-of-month 32 out of range 1-31 at field 3",
    ),
];

fn civil(local: i64) -> String {
    Civil::from_local_secs(local).to_string()
}

fn local(text: &str) -> i64 {
    let num = |r: std::ops::Range<usize>| text[r].parse::<u32>().unwrap();
    Civil {
        year: num(0..4) as i32,
        month: num(5..7),
        day: num(8..10),
        hour: num(11..13),
        minute: num(14..16),
        second: num(17..19),
    }
    .to_local_secs()
}

#[test]
fn valid_specs_fire_at_the_expected_civil_times() {
    assert!(VALID.len() >= 70, "{} valid rows", VALID.len());
    let mut failures = Vec::new();
    for &(text, start, expected) in VALID {
        let parsed = CronSpec::parse(text).unwrap_or_else(|e| panic!("{text:?}: {e}"));
        let from = local(if start.is_empty() { START } else { start });
        let limit = from + 100 * 366 * 86_400;
        let mut got = Vec::new();
        let mut t = from;
        while got.len() < expected.len().max(1) {
            let Some(next) = parsed.cron.next_civil(t, limit) else {
                break;
            };
            assert!(parsed.cron.matches_civil(next), "{text}: {}", civil(next));
            got.push(civil(next));
            t = next + 1;
        }
        // An empty expected list means "never": then one found occurrence fails.
        if !expected.is_empty() {
            got.truncate(expected.len());
        }
        if got != expected {
            failures.push(format!("{text:?}: expected {expected:?}, got {got:?}"));
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

/// The same rows through the independent oracle (its own parser and
/// calendar, `tests/src/oracle.rs`), read back as civil times in the
/// spec's zone: the hand-written expectations hold there too, and an empty
/// list means no occurrence at all.
#[test]
fn valid_specs_agree_with_the_independent_oracle() {
    let mut failures = Vec::new();
    for &(text, start, expected) in VALID {
        let oracle = chime_tests::oracle::Oracle::parse(text, None, DstPolicy::default(), 100)
            .unwrap_or_else(|e| panic!("the oracle rejects {text:?}: {e}"));
        let from = local(if start.is_empty() { START } else { start });
        let mut got = Vec::new();
        // From the second before civil `from` (in the spec's zone), as the
        // rows count `from` itself.
        use chime_tests::oracle::Civil;
        let before = match oracle.cron().map(|(_, zone, _)| zone.resolve(from - 1)) {
            None => from - 1,
            Some(Civil::Unique(u) | Civil::Fold(u, _)) => u,
            Some(Civil::Gap { t }) => t - 1,
        };
        let mut t = before * 1000;
        while got.len() < expected.len().max(1) {
            let Some(next) = oracle.next_after(t) else {
                break;
            };
            // Civil time in the spec's zone (UTC unless a `CRON_TZ=` prefix).
            let u = next / 1000;
            let off = oracle.cron().map_or(0, |(_, zone, _)| zone.offset(u));
            got.push(civil(u + off));
            t = next;
        }
        if got != expected {
            failures.push(format!("{text:?}: expected {expected:?}, oracle {got:?}"));
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

#[test]
fn prefixes_return_the_zone_name() {
    let tz = |text: &str| CronSpec::parse(text).unwrap().tz;
    assert_eq!(
        tz("CRON_TZ=Europe/Paris 0 9 * * *").as_deref(),
        Some("Europe/Paris")
    );
    assert_eq!(
        tz("TZ=America/New_York @hourly").as_deref(),
        Some("America/New_York")
    );
    assert_eq!(tz("cron_tz=UTC 0 0 * * *").as_deref(), Some("UTC"));
    assert_eq!(tz("0 9 * * *"), None);
    // The prefix only changes the zone, never the fields.
    assert_eq!(
        CronSpec::parse("TZ=Asia/Tokyo 0 9 * * *").unwrap().cron,
        CronSpec::parse("0 9 * * *").unwrap().cron
    );
}

#[test]
fn equivalent_spellings_parse_to_equal_specs() {
    let same = [
        ("@daily", "0 0 * * *"),
        ("@midnight", "0 0 0 * * *"),
        ("@weekly", "0 0 * * SUN"),
        ("@yearly", "0 0 1 JAN *"),
        ("@hourly", "0 0 * * * ? *"),
        ("0 0 * * 7", "0 0 * * 0"),
        ("0 0 * * MON-FRI", "0 0 * * 1,2,3,4,5"),
        ("0 0 * * 5#L", "0 0 * * 5L"),
        ("*/15 * * * *", "0,15,30,45 * * * *"),
        ("0 0 ? * *", "0 0 * * ?"),
        ("0 0 1 1/3 *", "0 0 1 1-12/3 *"),
    ];
    for (a, b) in same {
        let pa = CronSpec::parse(a).unwrap().cron;
        let pb = CronSpec::parse(b).unwrap().cron;
        assert_eq!(pa, pb, "{a} vs {b}");
        assert_eq!(pa.to_string(), pb.to_string());
    }
}

#[test]
fn fixed_time_classification() {
    let fixed = |t: &str| CronSpec::parse(t).unwrap().cron.is_fixed_time();
    assert!(
        fixed("30 2 * * *") && fixed("0 30 2 * * *") && fixed("@daily") && fixed("0 12 * * 5#3")
    );
    assert!(
        !fixed("0,30 2 * * *")
            && !fixed("30 * * * *")
            && !fixed("* 30 2 * * *")
            && !fixed("@hourly")
    );
}

#[test]
fn invalid_specs_are_rejected_with_a_pointed_message() {
    assert!(INVALID.len() >= 45, "{} invalid rows", INVALID.len());
    let mut failures = Vec::new();
    for &(text, fragment) in INVALID {
        match CronSpec::parse(text) {
            Ok(p) => failures.push(format!("{text:?}: accepted as {}", p.cron)),
            Err(e) => {
                let shown = e.to_string();
                if e.code() != "invalid_spec"
                    || !shown.starts_with("invalid_spec: ")
                    || !shown.contains(fragment)
                {
                    failures.push(format!("{text:?}: {shown:?} lacks {fragment:?}"));
                }
            }
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}
