//! The crontab lines that Vixie cron, system crontabs and supercronic read
//! differently, and chime would run other than their author meant:
//!
//! - a **user column** (`/etc/crontab`, `/etc/cron.d/*`: `0 3 * * * root
//!   backup.sh`) would run `root` as a command: an error, unless
//!   `--crontab-user-column` says the file has one;
//! - a **command that starts with a time field** (`*/5 * * * * * * echo
//!   x`, supercronic's 7 fields with a year: chime reads 6 and runs `*
//!   echo x`, which the shell expands to a file name): an error, unless
//!   `--crontab-allow-field-command`;
//! - **6 fields** are seconds first here, minutes and a year in
//!   supercronic: a warning;
//! - an unescaped **`%`** starts the command's stdin (Vixie), where
//!   supercronic passes it to the shell (`date +%T`): a warning.
//!
//! Warnings do not stop `run`; `validate` prints them and still says ok.

use super::crontab::{CrontabError, CrontabOptions, looks_like_field};
use std::collections::BTreeSet;

/// The checks of one crontab, with the machine's user names.
pub(super) struct Lint {
    opts: CrontabOptions,
    users: BTreeSet<String>,
    me: Option<String>,
}

impl Lint {
    pub(super) fn new(opts: CrontabOptions) -> Lint {
        let passwd = std::fs::read_to_string("/etc/passwd").unwrap_or_default();
        let uid = rustix::process::getuid().as_raw().to_string();
        let mut users = BTreeSet::new();
        let mut me = None;
        for l in passwd.lines() {
            let f: Vec<&str> = l.split(':').collect();
            if f.len() > 2 && !f[0].is_empty() {
                users.insert(f[0].to_owned());
                if f[2] == uid {
                    me.get_or_insert_with(|| f[0].to_owned());
                }
            }
        }
        Lint { opts, users, me }
    }

    /// Checks schedule line `line` (`spec`, the command before any `%`,
    /// and whether there was one): the command to run (without its user
    /// column), or why the line is refused. Warnings go to `warnings`.
    pub(super) fn line(
        &self,
        line: usize,
        spec: &str,
        command: &str,
        stdin: bool,
        warnings: &mut Vec<CrontabError>,
    ) -> Result<String, String> {
        let warn = |code: &'static str, field: &str, message: String| CrontabError {
            line,
            code,
            field: field.to_owned(),
            message,
        };
        let (first, rest) = split_first(command);
        let command = if self.opts.user_column {
            if rest.is_empty() {
                return Err(format!(
                    "expected a user and a command (--crontab-user-column), found {first:?}"
                ));
            }
            if !is_user_name(first) {
                return Err(format!(
                    "{first:?} is not a user name (the user column, --crontab-user-column)"
                ));
            }
            if self.me.as_deref() != Some(first) {
                let me = self.me.as_deref().unwrap_or("the daemon's user");
                warnings.push(warn(
                    "user_not_switched",
                    "user",
                    format!(
                        "runs as {me}, not {first}: chime does not switch users (run one \
                         daemon per user)"
                    ),
                ));
            }
            rest
        } else {
            if !rest.is_empty() && self.looks_like_user(first) {
                return Err(format!(
                    "{first:?} reads as the user column of a system crontab (/etc/crontab, \
                     /etc/cron.d) and would run as a command: pass --crontab-user-column to \
                     read the column, or write the program as ./{first} or its full path"
                ));
            }
            command
        };
        let (first, _) = split_first(command);
        if !self.opts.allow_field_command && looks_like_field(first) {
            return Err(format!(
                "the command starts with {first:?}, which reads as a time field: more fields \
                 than chime reads (5, or 6 with seconds first; supercronic's 7 end with a \
                 year, which chime does not support)? Write ./{first} for a program of that \
                 name, or pass --crontab-allow-field-command"
            ));
        }
        if !spec.starts_with('@') && spec.split(' ').count() == 6 {
            warnings.push(warn(
                "six_fields_seconds_first",
                "schedule",
                "6 time fields: chime reads them as s m h dom mon dow (seconds first); \
                 supercronic reads 6 fields as m h dom mon dow year"
                    .into(),
            ));
        }
        if stdin {
            warnings.push(warn(
                "percent_is_stdin",
                "command",
                "an unescaped `%` ends the command and starts its standard input, as in Vixie \
                 cron (`date +%T` runs `date +`); supercronic passes `%` to the shell. Write \
                 `\\%` for a literal percent"
                    .into(),
            ));
        }
        Ok(command.to_owned())
    }

    /// `root`, or a user of this machine that is not also a program on
    /// `PATH`.
    fn looks_like_user(&self, word: &str) -> bool {
        is_user_name(word) && (word == "root" || (self.users.contains(word) && !on_path(word)))
    }
}

fn split_first(command: &str) -> (&str, &str) {
    let command = command.trim_start();
    match command.find(char::is_whitespace) {
        Some(i) => (&command[..i], command[i..].trim_start()),
        None => (command, ""),
    }
}

/// The portable user-name rule (`useradd`): `[a-z_][a-z0-9_-]*$?`.
fn is_user_name(word: &str) -> bool {
    let body = word.strip_suffix('$').unwrap_or(word);
    body.len() <= 32
        && body.starts_with(|c: char| c.is_ascii_lowercase() || c == '_')
        && body
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "_-".contains(c))
}

fn on_path(word: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(word).is_file()))
}

#[cfg(test)]
mod tests {
    use super::super::crontab::{CrontabOptions, parse_with};

    fn codes(text: &str, opts: CrontabOptions) -> (Vec<String>, Vec<&'static str>) {
        let (tab, errors) = parse_with(text, opts);
        (
            errors.iter().map(|e| e.message.clone()).collect(),
            tab.warnings.iter().map(|w| w.code).collect(),
        )
    }

    #[test]
    fn seven_fields_are_refused_not_run_as_a_glob() {
        let (errors, _) = codes("*/5 * * * * * * echo x\n", CrontabOptions::default());
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert!(errors[0].contains("starts with \"*\""), "{errors:?}");
        let allowed = CrontabOptions {
            allow_field_command: true,
            ..Default::default()
        };
        let (errors, _) = codes("*/5 * * * * * * echo x\n", allowed);
        assert!(errors.is_empty(), "{errors:?}");
    }

    #[test]
    fn a_user_column_is_an_error_unless_flagged() {
        let (errors, _) = codes("0 3 * * * root backup.sh\n", CrontabOptions::default());
        assert_eq!(errors.len(), 1);
        assert!(errors[0].contains("--crontab-user-column"), "{errors:?}");
        let opts = CrontabOptions {
            user_column: true,
            ..Default::default()
        };
        let (tab, errors) = parse_with("0 3 * * * root backup.sh --full\n", opts);
        assert!(errors.is_empty(), "{errors:?}");
        let job: super::super::crontab::CronJob =
            serde_json::from_str(tab.schedules[0].1.target.payload.as_json()).unwrap();
        assert_eq!(job.command, "backup.sh --full");
    }

    #[test]
    fn six_fields_and_percent_warn() {
        let (errors, warnings) = codes(
            "0 0 3 * * * backup.sh\n0 3 * * * date +%T\n0 4 * * * date +\\%T\n",
            CrontabOptions::default(),
        );
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(
            warnings,
            vec!["six_fields_seconds_first", "percent_is_stdin"]
        );
    }
}
