//! The crontab reader on hostile input: 3,000 pseudo-random crontabs built
//! from the pieces of real ones (fields, macros, `%`, quotes, variables,
//! zones) and from junk (control characters, huge numbers, multi-byte
//! text, lone quotes). It never panics; every error names a line that
//! exists; each line is either a schedule, an `@reboot` job, or an error
//! (never silently dropped unless blank, a comment or a variable); and
//! schedule names are unique and stable when unrelated lines change.

use chime_native::daemon::crontab::parse_lenient;
use std::collections::BTreeSet;

/// SplitMix64.
fn mix(k: u64) -> u64 {
    let mut z = k.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

const PIECES: &[&str] = &[
    "*",
    "*/5",
    "0",
    "59",
    "60",
    "1-5",
    "5/2",
    "MON-FRI",
    "L",
    "15W",
    "2#3",
    "?",
    "-1",
    "99999999999999999999",
    "@daily",
    "@hourly",
    "@reboot",
    "@yearly",
    "@every",
    "@every 90s",
    "@weekly",
    "echo",
    "hi",
    "%",
    "\\%",
    "a%b%c",
    "\"",
    "'",
    "=",
    "FOO=bar",
    "FOO = \"x y\"",
    "CRON_TZ=Europe/Paris",
    "CRON_TZ=Mars/Base",
    "CRON_TZ=",
    "SHELL=/bin/bash",
    "#",
    "# comment",
    "\t",
    "  ",
    "é",
    "日本",
    "\u{0}",
    "\u{7f}",
    "\r",
    "/usr/bin/backup.sh",
    "--to",
    "$HOME",
    ">",
    "/dev/null",
    "2>&1",
    ";",
    "&&",
    "sun",
    "jan",
    "*/0",
    "0-59/61",
    ",",
    ",,",
];

fn line(rng: &mut u64) -> String {
    *rng = mix(*rng);
    let words = 1 + (*rng % 9) as usize;
    let mut out = Vec::with_capacity(words);
    for _ in 0..words {
        *rng = mix(*rng);
        out.push(PIECES[(*rng % PIECES.len() as u64) as usize]);
    }
    let sep = if rng.is_multiple_of(7) { "\t" } else { " " };
    out.join(sep)
}

fn quiet(line: &str) -> bool {
    let t = line.trim();
    t.is_empty() || t.starts_with('#')
}

#[test]
fn random_crontabs_never_panic_and_account_for_every_line() {
    let mut rng = 20261130u64;
    let (mut schedules, mut errors) = (0usize, 0usize);
    for _ in 0..3_000 {
        rng = mix(rng);
        let n = 1 + (rng % 12) as usize;
        let lines: Vec<String> = (0..n).map(|_| line(&mut rng)).collect();
        let text = lines.join("\n");
        let (tab, errs) = std::panic::catch_unwind(|| parse_lenient(&text))
            .unwrap_or_else(|_| panic!("the crontab reader panicked on {text:?}"));
        let mut used = BTreeSet::new();
        for e in &errs {
            assert!(
                (1..=n).contains(&e.line),
                "error at line {} of {n}: {e}",
                e.line
            );
            assert!(!e.message.is_empty() && !e.field.is_empty(), "{e:?}");
            used.insert(e.line);
        }
        let mut names = BTreeSet::new();
        for (l, def) in &tab.schedules {
            assert!((1..=n).contains(l));
            assert!(names.insert(def.name.clone()), "name {} twice", def.name);
            used.insert(*l);
        }
        for (l, _) in &tab.reboot {
            used.insert(*l);
        }
        for (i, text_line) in lines.iter().enumerate() {
            let l = i + 1;
            // Lines that produce nothing must be blank, comments or
            // variable assignments; anything else is a schedule, a reboot
            // job or an error.
            if !used.contains(&l) {
                assert!(
                    quiet(text_line) || text_line.contains('='),
                    "line {l} {text_line:?} vanished without an error"
                );
            }
        }
        schedules += tab.schedules.len();
        errors += errs.len();
    }
    // The generator reaches both outcomes often.
    assert!(
        schedules > 500 && errors > 500,
        "{schedules} schedules, {errors} errors"
    );
}

#[test]
fn names_do_not_move_when_other_lines_change() {
    let base = "*/5 * * * * /usr/bin/a.sh\n0 3 * * * /usr/bin/b.sh --x\n@hourly /usr/bin/c.sh\n";
    let edited = "# new header\nFOO=1\n0 4 * * * /usr/bin/b.sh --x\n*/5 * * * * /usr/bin/a.sh\n";
    let names = |text: &str| -> Vec<(String, String)> {
        let (tab, errs) = parse_lenient(text);
        assert!(errs.is_empty(), "{errs:?}");
        tab.schedules
            .into_iter()
            .map(|(_, d)| (d.name, d.spec))
            .collect()
    };
    let before = names(base);
    let after = names(edited);
    let find = |v: &[(String, String)], prefix: &str| {
        v.iter()
            .find(|(n, _)| n.starts_with(prefix))
            .cloned()
            .unwrap()
    };
    // a.sh kept its name although it moved; b.sh kept its name although
    // its time changed (an update of the same schedule).
    assert_eq!(find(&before, "a.sh").0, find(&after, "a.sh").0);
    assert_eq!(find(&before, "b.sh").0, find(&after, "b.sh").0);
    assert_ne!(find(&before, "b.sh").1, find(&after, "b.sh").1);
}
