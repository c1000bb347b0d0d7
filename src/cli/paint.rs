//! Colour for people: ANSI styles on taskhook's own words (status words, doctor's and
//! install's marks, headings), never on text read from a file. On when stdout is a terminal,
//! unless `NO_COLOR` is set (<https://no-color.org>); `--color always|never` decides instead.

use std::sync::OnceLock;

use super::Io;

/// Opens a style mark: taskhook's own styles travel through the text as marks
/// (`MARK token code END`) that [`apply`] turns into ANSI escapes after the text was made safe
/// ([`crate::display::text`] escapes every control character, so an escape sequence a
/// repository planted in a title is shown, never run). The token is random per process: a
/// file cannot forge a mark.
const MARK: char = '\u{E000}';
/// Closes a style mark.
const END: char = '\u{E001}';

fn token() -> &'static str {
    static TOKEN: OnceLock<String> = OnceLock::new();
    TOKEN.get_or_init(|| uuid::Uuid::new_v4().simple().to_string())
}

/// The mark of ANSI style `code` (`31`, `0`).
fn mark(code: &str) -> String {
    format!("{MARK}{}{code}{END}", token())
}

/// Turns taskhook's style marks in `text` into ANSI escapes; anything else that looks like one
/// (no token) stays as it is.
pub(crate) fn apply(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains(MARK) {
        return std::borrow::Cow::Borrowed(text);
    }
    let prefix = format!("{MARK}{}", token());
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find(&prefix) {
        let after = &rest[i + prefix.len()..];
        match after.find(END) {
            Some(j) if after[..j].bytes().all(|b| b.is_ascii_digit()) && j > 0 => {
                out.push_str(&rest[..i]);
                out.push_str(&format!("\x1b[{}m", &after[..j]));
                rest = &after[j + END.len_utf8()..];
            }
            _ => {
                out.push_str(&rest[..i + prefix.len()]);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    std::borrow::Cow::Owned(out)
}

/// ANSI styles, or none.
#[derive(Debug, Clone, Copy)]
pub struct Paint(pub bool);

impl Paint {
    /// The styles the command line chose for this run's stdout.
    pub fn of(io: &Io<'_>) -> Paint {
        Paint(io.color)
    }

    fn wrap(&self, code: &str, s: &str) -> String {
        if self.0 {
            format!("{}{s}{}", mark(code), mark("0"))
        } else {
            s.to_string()
        }
    }

    pub fn bold(&self, s: &str) -> String {
        self.wrap("1", s)
    }

    pub fn dim(&self, s: &str) -> String {
        self.wrap("2", s)
    }

    pub fn green(&self, s: &str) -> String {
        self.wrap("32", s)
    }

    pub fn yellow(&self, s: &str) -> String {
        self.wrap("33", s)
    }

    pub fn red(&self, s: &str) -> String {
        self.wrap("31", s)
    }

    pub fn cyan(&self, s: &str) -> String {
        self.wrap("36", s)
    }

    /// `s` in the colour of a task status (every layout's words): done green, under way
    /// yellow, stuck red, waiting cyan, cancelled dim, anything else as it is.
    pub fn status(&self, status: &str, s: &str) -> String {
        match status {
            "completed" | "done" | "COMPLETE" | "merged" | "verified" | "passed" => self.green(s),
            "in_progress" | "IN_PROGRESS" | "confirming" | "verifying" | "in progress"
            | "VALIDATING" | "IN_RESEARCH" => self.yellow(s),
            "blocked" | "BLOCKED" | "failed" | "abandoned" | "timeout" | "problem"
            | "not_passed" | "stop_reached" => self.red(s),
            "pending" | "PENDING" | "RESEARCHED" | "ready" | "not_reached" => self.cyan(s),
            "CANCELLED" | "cancelled" => self.dim(s),
            _ => s.to_string(),
        }
    }
}
