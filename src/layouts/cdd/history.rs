//! `tasks/history.jsonl` (seed 004), the append-only audit log: reading what it says about each
//! task (the folder its last event put it in, when it was last started) and each stop (reached,
//! passed), and writing one line per event in the seed's own shape, fields in the seed's order:
//!
//! ```text
//! {"timestamp": "2025-12-24T10:31:00Z", "action": "start", "task": "foo.md", "from": "pending", "to": "in_progress"}
//! ```
//!
//! Lines written by others (the seed's scripts write compact JSON, timestamps with
//! milliseconds) are read the same way; a line that is not JSON (a torn last line after a crash)
//! is skipped and counted.

use std::io;

use chrono::{DateTime, Utc};
use serde_json::{Map, Value};

use super::error::{CResult, Code, Failure};
use super::Folder;
use crate::context::Ctx;
use crate::shell::quote;
use crate::store::clock::parse_time;
use crate::store::schema;

/// The schema of one history line.
pub const SCHEMA: &str = "cdd-history";
/// Largest history.jsonl read.
pub const MAX_BYTES: usize = 64 * 1024 * 1024;

/// One event of the log.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    pub action: String,
    pub task: Option<String>,
    pub stop: Option<String>,
    /// The status folder the event put its task in, when it says one.
    pub to: Option<Folder>,
    pub at: Option<DateTime<Utc>>,
    pub raw: Value,
}

/// Where a stop stands, by its last `stop_*` event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopState {
    NotReached,
    Reached,
    Passed,
}

impl StopState {
    pub fn as_str(self) -> &'static str {
        match self {
            StopState::NotReached => "not_reached",
            StopState::Reached => "reached",
            StopState::Passed => "passed",
        }
    }
}

/// Why a line of the log cannot be read as an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bad {
    /// It holds a NUL byte.
    Nul,
    /// It is not UTF-8.
    NotUtf8,
    /// It is not a JSON object (a line torn by a crash, text written by hand).
    NotJson,
}

impl Bad {
    pub fn as_str(self) -> &'static str {
        match self {
            Bad::Nul => "a NUL byte",
            Bad::NotUtf8 => "not UTF-8",
            Bad::NotJson => "not JSON",
        }
    }
}

/// One line of the log (without its newline): its JSON object, `None` when it is blank, or why
/// it is no event.
pub fn read_line(line: &[u8]) -> std::result::Result<Option<Value>, Bad> {
    if line.contains(&0) {
        return Err(Bad::Nul);
    }
    let text = std::str::from_utf8(line).map_err(|_| Bad::NotUtf8)?;
    if text.trim().is_empty() {
        return Ok(None);
    }
    match serde_json::from_str::<Value>(text) {
        Ok(v) if v.is_object() => Ok(Some(v)),
        _ => Err(Bad::NotJson),
    }
}

/// The log as read.
#[derive(Debug, Clone, Default)]
pub struct History {
    pub events: Vec<Event>,
    /// The lines that are no event (1-based numbers): skipped.
    pub bad_lines: Vec<(usize, Bad)>,
}

/// The lines of a log, without their newlines (a last line without one included).
pub fn lines(bytes: &[u8]) -> impl Iterator<Item = &[u8]> {
    let body = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    body.split(|b| *b == b'\n')
        .filter(move |_| !bytes.is_empty())
}

impl History {
    /// Parses the log's bytes.
    pub fn parse(bytes: &[u8]) -> History {
        let mut h = History::default();
        for (i, line) in lines(bytes).enumerate() {
            let raw = match read_line(line) {
                Ok(Some(raw)) => raw,
                Ok(None) => continue,
                Err(bad) => {
                    h.bad_lines.push((i + 1, bad));
                    continue;
                }
            };
            let s = |k: &str| raw.get(k).and_then(Value::as_str).map(str::to_string);
            let action = s("action").unwrap_or_default();
            let to = s("to")
                .and_then(|t| Folder::parse(&t))
                .or_else(|| (action == "escalate").then_some(Folder::Pending));
            h.events.push(Event {
                task: s("task"),
                stop: s("stop"),
                to,
                at: s("timestamp").and_then(|t| parse_time(&t)),
                action,
                raw,
            });
        }
        h
    }

    /// The folder the last event of `task` put it in: "the last event of each task decides".
    pub fn folder_of(&self, task: &str) -> Option<Folder> {
        self.events
            .iter()
            .rev()
            .filter(|e| e.task.as_deref() == Some(task) && !e.action.starts_with("stop_"))
            .find_map(|e| e.to)
    }

    /// When `task` was last started.
    pub fn last_start(&self, task: &str) -> Option<DateTime<Utc>> {
        self.events
            .iter()
            .rev()
            .find(|e| e.action == "start" && e.task.as_deref() == Some(task))
            .and_then(|e| e.at)
    }

    /// Whether `task` has any event at all.
    pub fn knows(&self, task: &str) -> bool {
        self.events.iter().any(|e| e.task.as_deref() == Some(task))
    }

    /// A stop's state: its last `stop_*` event (`stop`, else `task`, names it).
    pub fn stop_state(&self, stop: &str) -> StopState {
        let last = self.events.iter().rev().find(|e| {
            e.action.starts_with("stop_") && e.stop.as_deref().or(e.task.as_deref()) == Some(stop)
        });
        match last.map(|e| e.action.as_str()) {
            Some("stop_continue") => StopState::Passed,
            Some(_) => StopState::Reached,
            None => StopState::NotReached,
        }
    }
}

/// Reads the log (a missing one is empty).
pub fn read(cx: &Ctx, path: &std::path::Path) -> CResult<History> {
    let bytes = cx.store.read_capped(path, MAX_BYTES)?.unwrap_or_default();
    Ok(History::parse(&bytes))
}

/// What is said of the lines no event can be read from (skipped, and new lines appended after
/// them), with the command that sets them aside; `None` when there are none.
pub fn bad_lines_warning(h: &History, tasks: &std::path::Path) -> Option<String> {
    if h.bad_lines.is_empty() {
        return None;
    }
    let mut which: Vec<String> = h
        .bad_lines
        .iter()
        .take(10)
        .map(|(n, bad)| format!("{n} ({})", bad.as_str()))
        .collect();
    if h.bad_lines.len() > 10 {
        which.push(format!("and {} more", h.bad_lines.len() - 10));
    }
    Some(format!(
        "history.jsonl has {} line(s) taskhook cannot read, which it skips (new lines go after them): {}; `taskhook recover {}` sets them aside",
        h.bad_lines.len(),
        which.join(", "),
        quote(&tasks.to_string_lossy())
    ))
}

/// One line to append, its fields in the order they are added.
#[derive(Debug, Clone)]
pub struct Line(Map<String, Value>);

impl Line {
    /// A line for `action` on `task`, stamped now.
    pub fn new(cx: &Ctx, action: &str, task: &str) -> Line {
        Line::event(cx, action).with("task", task)
    }

    /// A line for `action` about no task (an `error`), stamped now.
    pub fn event(cx: &Ctx, action: &str) -> Line {
        let mut m = Map::new();
        m.insert("timestamp".into(), Value::String(cx.store.clock().stamp()));
        m.insert("action".into(), Value::String(action.into()));
        Line(m)
    }

    /// Adds a field.
    pub fn with(mut self, key: &str, value: impl Into<Value>) -> Line {
        self.0.insert(key.into(), value.into());
        self
    }

    /// Adds a field when there is a value.
    pub fn with_opt(self, key: &str, value: Option<impl Into<Value>>) -> Line {
        match value {
            Some(v) => self.with(key, v),
            None => self,
        }
    }

    /// The line as the seed writes it (`": "` after keys, `", "` between fields), no newline.
    pub fn render(&self) -> String {
        let mut out = Vec::new();
        let mut ser = serde_json::Serializer::with_formatter(&mut out, SeedFormatter);
        let _ = serde::Serialize::serialize(&self.0, &mut ser);
        String::from_utf8_lossy(&out).into_owned()
    }

    /// Checks the line against its schema and appends it.
    pub fn append(self, cx: &Ctx, path: &std::path::Path) -> CResult<()> {
        let value = Value::Object(self.0.clone());
        if let Err(issues) = schema::check(SCHEMA, &value)? {
            return Err(Failure::new(
                Code::IoError,
                format!(
                    "refusing to append to `{}`: the line would not match schema {SCHEMA}: {}",
                    path.display(),
                    schema::summarize(&issues)
                ),
            ));
        }
        let mut bytes = self.render().into_bytes();
        bytes.push(b'\n');
        cx.store.append(path, &bytes)?;
        Ok(())
    }
}

/// serde_json's compact output with a space after `:` and `,`, as in the seed's examples.
struct SeedFormatter;

/// `", "` before every member but the first.
fn separate<W: ?Sized + io::Write>(w: &mut W, first: bool) -> io::Result<()> {
    if first {
        Ok(())
    } else {
        w.write_all(b", ")
    }
}

impl serde_json::ser::Formatter for SeedFormatter {
    fn begin_array_value<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        separate(w, first)
    }

    fn begin_object_key<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        separate(w, first)
    }

    fn begin_object_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        w.write_all(b": ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_event_decides_and_stops_have_their_own() {
        let h = History::parse(concat!(
            "{\"timestamp\":\"2025-12-24T10:30:00.123Z\",\"action\":\"import\",\"task\":\"foo.md\",\"to\":\"pending\"}\n",
            "{\"timestamp\": \"2025-12-24T10:31:00Z\", \"action\": \"start\", \"task\": \"foo.md\", \"from\": \"pending\", \"to\": \"in_progress\"}\n",
            "not json\n",
            "{\"timestamp\": \"2025-12-24T11:00:00Z\", \"action\": \"escalate\", \"task\": \"foo.md\", \"from_model\": \"sonnet\"}\n",
            "{\"timestamp\": \"2025-12-24T11:30:00Z\", \"action\": \"stop_reached\", \"task\": \"v\", \"stop\": \"v\"}\n",
            "{\"action\": \"stop_continue\", \"task\": \"w\"}\n",
            "{\"timestamp\": \"2025-12-24T11:3"
        ).as_bytes());
        assert_eq!(h.folder_of("foo.md"), Some(Folder::Pending));
        assert_eq!(h.last_start("foo.md"), parse_time("2025-12-24T10:31:00Z"));
        assert_eq!(h.stop_state("v"), StopState::Reached);
        assert_eq!(h.stop_state("w"), StopState::Passed);
        assert_eq!(h.stop_state("x"), StopState::NotReached);
        assert_eq!(h.bad_lines, [(3, Bad::NotJson), (7, Bad::NotJson)]);
        let h = History::parse(b"{\"a\": \"\xff\"}\n\n{\"b\": \"\0\"}\n[1]\n{}");
        assert_eq!(
            h.bad_lines,
            [(1, Bad::NotUtf8), (3, Bad::Nul), (4, Bad::NotJson)]
        );
        assert_eq!(h.events.len(), 1);
        assert_eq!(lines(b"").count(), 0);
        assert_eq!(lines(b"a\n").collect::<Vec<_>>(), [b"a"]);
        assert_eq!(lines(b"a\nb").count(), 2);
    }
}
