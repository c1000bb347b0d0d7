//! Colour for people: ANSI styles on taskhook's own words (status words, doctor's and
//! install's marks, headings), never on text read from a file. On when stdout is a terminal,
//! unless `NO_COLOR` is set (<https://no-color.org>); `--color always|never` decides instead.

use super::Io;

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
            format!("\x1b[{code}m{s}\x1b[0m")
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
