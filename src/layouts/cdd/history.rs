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

use std::collections::{HashMap, HashSet};
use std::io;
use std::rc::Rc;

use chrono::{DateTime, Utc};
use serde_json::{Map, Value};

use super::error::{CResult, Code, Failure};
use super::Folder;
use crate::context::Ctx;
use crate::store::clock::parse_time;
use crate::store::{parsed, schema};

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

/// The log as read.
#[derive(Debug, Clone, Default)]
pub struct History {
    pub events: Vec<Event>,
    /// 1-based numbers of the lines that are not JSON objects.
    pub bad_lines: Vec<usize>,
    /// What the questions below need, gathered in the one pass that parses the log.
    index: Index,
}

/// Per task and per stop, the last event that answers each question about it.
#[derive(Debug, Clone, Default)]
struct Index {
    /// Task → the folder of its last event that names one (`stop_*` events aside).
    folder: HashMap<String, Folder>,
    /// Task → the time of its last `start` (`None` when that event has no time).
    start: HashMap<String, Option<DateTime<Utc>>>,
    /// Tasks with any event.
    known: HashSet<String>,
    /// Stop → whether its last `stop_*` event is `stop_continue`.
    passed: HashMap<String, bool>,
}

impl Index {
    fn add(&mut self, e: &Event) {
        if e.action.starts_with("stop_") {
            if let Some(stop) = e.stop.as_deref().or(e.task.as_deref()) {
                self.passed
                    .insert(stop.to_string(), e.action == "stop_continue");
            }
        }
        let Some(task) = e.task.as_deref() else {
            return;
        };
        if !self.known.contains(task) {
            self.known.insert(task.to_string());
        }
        if let (Some(to), false) = (e.to, e.action.starts_with("stop_")) {
            self.folder.insert(task.to_string(), to);
        }
        if e.action == "start" {
            self.start.insert(task.to_string(), e.at);
        }
    }
}

impl History {
    /// Parses the log's text.
    pub fn parse(text: &str) -> History {
        let mut h = History::default();
        h.extend(text, 0);
        h
    }

    /// Parses more of the log: `text` follows what was parsed so far, which ended a line after
    /// its first `lines_before` lines.
    fn extend(&mut self, text: &str, lines_before: usize) {
        let h = self;
        for (i, line) in text.lines().enumerate() {
            let i = i + lines_before;
            if line.trim().is_empty() {
                continue;
            }
            let Ok(raw) = serde_json::from_str::<Value>(line) else {
                h.bad_lines.push(i + 1);
                continue;
            };
            if !raw.is_object() {
                h.bad_lines.push(i + 1);
                continue;
            }
            let s = |k: &str| raw.get(k).and_then(Value::as_str).map(str::to_string);
            let action = s("action").unwrap_or_default();
            let to = s("to")
                .and_then(|t| Folder::parse(&t))
                .or_else(|| (action == "escalate").then_some(Folder::Pending));
            let e = Event {
                task: s("task"),
                stop: s("stop"),
                to,
                at: s("timestamp").and_then(|t| parse_time(&t)),
                action,
                raw,
            };
            h.index.add(&e);
            h.events.push(e);
        }
    }

    /// The folder the last event of `task` put it in: "the last event of each task decides".
    pub fn folder_of(&self, task: &str) -> Option<Folder> {
        self.index.folder.get(task).copied()
    }

    /// When `task` was last started.
    pub fn last_start(&self, task: &str) -> Option<DateTime<Utc>> {
        self.index.start.get(task).copied().flatten()
    }

    /// Whether `task` has any event at all.
    pub fn knows(&self, task: &str) -> bool {
        self.index.known.contains(task)
    }

    /// A stop's state: its last `stop_*` event (`stop`, else `task`, names it).
    pub fn stop_state(&self, stop: &str) -> StopState {
        match self.index.passed.get(stop) {
            Some(true) => StopState::Passed,
            Some(false) => StopState::Reached,
            None => StopState::NotReached,
        }
    }
}

/// Reads the log (a missing one is empty). The log only grows, so within one invocation a
/// read that finds the bytes parsed last time followed by more parses only what was appended
/// ([`crate::store::parsed`]); other bytes are parsed whole.
pub fn read(cx: &Ctx, path: &std::path::Path) -> CResult<Rc<History>> {
    let bytes = cx.store.read_capped(path, MAX_BYTES)?.unwrap_or_default();
    let known = parsed::last::<History>(KIND);
    let h = match known {
        Some((seen, h)) if seen == bytes => return Ok(h),
        Some((seen, h)) if bytes.starts_with(&seen) && seen.last() == Some(&b'\n') => {
            let mut more = (*h).clone();
            let lines = seen.iter().filter(|&&b| b == b'\n').count();
            more.extend(&String::from_utf8_lossy(&bytes[seen.len()..]), lines);
            more
        }
        _ => History::parse(&String::from_utf8_lossy(&bytes)),
    };
    let h = Rc::new(h);
    parsed::remember(KIND, &bytes, h.clone());
    Ok(h)
}

/// The kind of document [`read`] remembers.
const KIND: &str = "cdd-history.jsonl";

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
pub(super) mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The scans the index replaced (issue 23), kept as the reference it must agree with.
    pub(crate) mod reference {
        use super::super::*;

        pub fn folder_of(h: &History, task: &str) -> Option<Folder> {
            h.events
                .iter()
                .rev()
                .filter(|e| e.task.as_deref() == Some(task) && !e.action.starts_with("stop_"))
                .find_map(|e| e.to)
        }

        pub fn last_start(h: &History, task: &str) -> Option<DateTime<Utc>> {
            h.events
                .iter()
                .rev()
                .find(|e| e.action == "start" && e.task.as_deref() == Some(task))
                .and_then(|e| e.at)
        }

        pub fn knows(h: &History, task: &str) -> bool {
            h.events.iter().any(|e| e.task.as_deref() == Some(task))
        }

        pub fn stop_state(h: &History, stop: &str) -> StopState {
            let last = h.events.iter().rev().find(|e| {
                e.action.starts_with("stop_")
                    && e.stop.as_deref().or(e.task.as_deref()) == Some(stop)
            });
            match last.map(|e| e.action.as_str()) {
                Some("stop_continue") => StopState::Passed,
                Some(_) => StopState::Reached,
                None => StopState::NotReached,
            }
        }
    }

    /// Names used by random histories: tasks and stops, sharing a pool so a stop event may
    /// name a task and the other way round.
    pub(crate) const NAMES: [&str; 5] = ["a.md", "b.md", "c.md", "v", "w"];

    /// A random history line: the seed's actions and others, fields present or not, the
    /// `to` of a folder or not, sometimes a line that is not JSON.
    pub(crate) fn some_line() -> impl Strategy<Value = String> {
        let action = prop::sample::select(vec![
            "import",
            "start",
            "done",
            "fail",
            "escalate",
            "repair",
            "stop_reached",
            "stop_continue",
            "stop_other",
            "error",
        ]);
        let name = prop::option::of(prop::sample::select(NAMES.to_vec()));
        let to = prop::option::of(prop::sample::select(vec![
            "pending",
            "in_progress",
            "completed",
            "failed",
            "elsewhere",
        ]));
        let at = prop::option::of(0..50u32);
        (action, name.clone(), name, to, at, 0..12u8).prop_map(
            |(action, task, stop, to, at, shape)| {
                if shape == 0 {
                    return "{\"torn\": ".to_string();
                }
                let mut m = Map::new();
                if let Some(at) = at {
                    m.insert(
                        "timestamp".into(),
                        format!("2026-01-01T00:{:02}:00Z", at % 60).into(),
                    );
                }
                m.insert("action".into(), action.into());
                if let Some(t) = task {
                    m.insert("task".into(), t.into());
                }
                if let Some(s) = stop.filter(|_| shape % 2 == 0) {
                    m.insert("stop".into(), s.into());
                }
                if let Some(t) = to {
                    m.insert("to".into(), t.into());
                }
                Value::Object(m).to_string()
            },
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// The index answers every question as the scans of the events do, and a log parsed
        /// in two parts (what a read after an append does) is the log parsed whole.
        #[test]
        fn index_matches_the_scans(lines in prop::collection::vec(some_line(), 0..40), cut in 0..40usize) {
            let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
            let h = History::parse(&text);
            for name in NAMES {
                prop_assert_eq!(h.folder_of(name), reference::folder_of(&h, name));
                prop_assert_eq!(h.last_start(name), reference::last_start(&h, name));
                prop_assert_eq!(h.knows(name), reference::knows(&h, name));
                prop_assert_eq!(h.stop_state(name), reference::stop_state(&h, name));
            }
            let cut = cut.min(lines.len());
            let head: String = lines[..cut].iter().map(|l| format!("{l}\n")).collect();
            let mut parts = History::parse(&head);
            parts.extend(&text[head.len()..], cut);
            prop_assert_eq!(&parts.events, &h.events);
            prop_assert_eq!(&parts.bad_lines, &h.bad_lines);
            for name in NAMES {
                prop_assert_eq!(parts.folder_of(name), h.folder_of(name));
                prop_assert_eq!(parts.last_start(name), h.last_start(name));
                prop_assert_eq!(parts.stop_state(name), h.stop_state(name));
            }
        }
    }

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
        ));
        assert_eq!(h.folder_of("foo.md"), Some(Folder::Pending));
        assert_eq!(h.last_start("foo.md"), parse_time("2025-12-24T10:31:00Z"));
        assert_eq!(h.stop_state("v"), StopState::Reached);
        assert_eq!(h.stop_state("w"), StopState::Passed);
        assert_eq!(h.stop_state("x"), StopState::NotReached);
        assert_eq!(h.bad_lines, [3, 7]);
    }
}
