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

use std::borrow::Cow;
use std::collections::HashMap;
use std::io::{self, BufRead};
use std::rc::Rc;

use chrono::{DateTime, Utc};
use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::{Map, Value};

use super::error::{CResult, Code, Failure};
use super::Folder;
use crate::context::Ctx;
use crate::layouts::json::Lenient;
use crate::layouts::summary::first_few;
use crate::shell::quote;
use crate::store::clock::parse_time;
use crate::store::{parsed, schema, Bytes};

/// The schema of one history line.
pub const SCHEMA: &str = "cdd-history";
/// Largest history.jsonl read.
pub const MAX_BYTES: usize = 64 * 1024 * 1024;

/// One event of the log.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// The action; the seed's own actions without a copy of their own.
    pub action: Cow<'static, str>,
    /// The task, one copy of each name shared by all of its events.
    pub task: Option<Rc<str>>,
    pub stop: Option<String>,
    /// The status folder the event put its task in, when it says one.
    pub to: Option<Folder>,
    pub at: Option<DateTime<Utc>>,
}

/// The actions the seed and taskhook write, kept without a copy per line.
const ACTIONS: [&str; 11] = [
    "import",
    "start",
    "done",
    "fail",
    "escalate",
    "stop_reached",
    "stop_continue",
    "repair",
    "claim",
    "release",
    "error",
];

fn action_of(a: Cow<'_, str>) -> Cow<'static, str> {
    match ACTIONS.iter().find(|k| **k == a) {
        Some(k) => Cow::Borrowed(k),
        None => Cow::Owned(a.into_owned()),
    }
}

/// The fields of a line the log's questions read, when the line is a JSON object; every other
/// field is skipped unbuilt (its syntax still checked). A key given twice counts as its last
/// value, as in a parsed object.
#[derive(Default)]
struct Head<'a> {
    action: Option<Cow<'a, str>>,
    task: Option<Cow<'a, str>>,
    stop: Option<Cow<'a, str>>,
    to: Option<Cow<'a, str>>,
    timestamp: Option<Cow<'a, str>>,
}

impl<'de> Deserialize<'de> for Head<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Head<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(
                self,
                mut m: A,
            ) -> std::result::Result<Head<'de>, A::Error> {
                let mut h = Head::default();
                while let Some(Lenient(key)) = m.next_key::<Lenient<'de>>()? {
                    let slot = match key.as_deref() {
                        Some("action") => &mut h.action,
                        Some("task") => &mut h.task,
                        Some("stop") => &mut h.stop,
                        Some("to") => &mut h.to,
                        Some("timestamp") => &mut h.timestamp,
                        _ => {
                            m.next_value::<IgnoredAny>()?;
                            continue;
                        }
                    };
                    *slot = m.next_value::<Lenient<'de>>()?.0;
                }
                Ok(h)
            }
        }
        d.deserialize_map(V)
    }
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

/// One line of the log (without its newline) as text, `None` when it is blank, or why it
/// cannot be an event (a NUL byte, not UTF-8).
fn line_text(line: &[u8]) -> std::result::Result<Option<&str>, Bad> {
    if line.contains(&0) {
        return Err(Bad::Nul);
    }
    let text = std::str::from_utf8(line).map_err(|_| Bad::NotUtf8)?;
    Ok((!text.trim().is_empty()).then_some(text))
}

/// One line of the log: the line and its event's fields, `None` when it is blank, or why it is
/// no event.
fn read_head(line: &[u8]) -> std::result::Result<Option<(&str, Head<'_>)>, Bad> {
    let Some(text) = line_text(line)? else {
        return Ok(None);
    };
    match serde_json::from_str::<Head<'_>>(text) {
        Ok(head) => Ok(Some((text, head))),
        Err(_) => Err(Bad::NotJson),
    }
}

/// One line of the log: its JSON object, `None` when it is blank, or why it is no event.
pub fn read_line(line: &[u8]) -> std::result::Result<Option<Value>, Bad> {
    let Some(text) = line_text(line)? else {
        return Ok(None);
    };
    match serde_json::from_str::<Value>(text) {
        Ok(v) if v.is_object() => Ok(Some(v)),
        _ => Err(Bad::NotJson),
    }
}

/// What the log says, gathered in one pass over its lines: the questions below are answered
/// from it. The lines themselves are not kept (a log of 10,000 tasks is megabytes): what reads
/// them one by one ([`each`]: `stats`, `show`, the board) reads the file again.
#[derive(Debug, Clone, Default)]
pub struct History {
    /// The lines that are no event (1-based numbers): skipped.
    pub bad_lines: Vec<(usize, Bad)>,
    /// What the questions below need.
    index: Index,
    /// How many lines were parsed (a last line without its newline counted).
    lines: usize,
    /// The bytes parsed so far, for a later read of the same log to continue from.
    seen: Seen,
}

/// The bytes of the log parsed so far: their digest with how many (keyed per process, so a
/// file made to collide with it cannot be written in advance), and whether they end a line: a
/// read whose file begins with the same bytes parses only what follows them.
#[derive(Debug, Clone)]
struct Seen {
    digest: parsed::Digester,
    whole_lines: bool,
}

impl Default for Seen {
    fn default() -> Seen {
        Seen {
            digest: parsed::Digester::default(),
            whole_lines: true,
        }
    }
}

/// Per task and per stop, the last event that answers each question about it.
#[derive(Debug, Clone, Default)]
struct Index {
    /// Every task with any event (each name kept once, shared with its events).
    tasks: HashMap<Rc<str>, Known>,
    /// Stop → whether its last `stop_*` event is `stop_continue`.
    passed: HashMap<String, bool>,
}

/// What the log says of one task.
#[derive(Debug, Clone, Copy, Default)]
struct Known {
    /// The folder of its last event that names one (`stop_*` events aside).
    folder: Option<Folder>,
    /// The time of its last `start` (`Some(None)` when that event has no time).
    start: Option<Option<DateTime<Utc>>>,
}

impl Index {
    fn add(&mut self, e: &Event) {
        if e.action.starts_with("stop_") {
            if let Some(stop) = e.stop.as_deref().or(e.task.as_deref()) {
                self.passed
                    .insert(stop.to_string(), e.action == "stop_continue");
            }
        }
        let Some(task) = &e.task else {
            return;
        };
        let known = self.tasks.entry(task.clone()).or_default();
        if let (Some(to), false) = (e.to, e.action.starts_with("stop_")) {
            known.folder = Some(to);
        }
        if e.action == "start" {
            known.start = Some(e.at);
        }
    }
}

/// The lines of a log, without their newlines (a last line without one included).
pub fn lines(bytes: &[u8]) -> impl Iterator<Item = &[u8]> {
    let body = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    body.split(|b| *b == b'\n')
        .filter(move |_| !bytes.is_empty())
}

/// The event of one line of the log (without its newline): `None` when it is blank, or why it
/// is no event. A task's name is `known`'s copy when it has one.
fn event_of(
    line: &[u8],
    known: impl FnOnce(&str) -> Option<Rc<str>>,
) -> std::result::Result<Option<(&str, Event)>, Bad> {
    let Some((line, head)) = read_head(line)? else {
        return Ok(None);
    };
    let action = head.action.map(action_of).unwrap_or_default();
    let to = head
        .to
        .and_then(|t| Folder::parse(&t))
        .or_else(|| (action == "escalate").then_some(Folder::Pending));
    let task = head
        .task
        .map(|t| known(&t).unwrap_or_else(|| Rc::from(&*t)));
    let e = Event {
        task,
        stop: head.stop.map(Cow::into_owned),
        to,
        at: head.timestamp.and_then(|t| parse_time(&t)),
        action,
    };
    Ok(Some((line, e)))
}

impl History {
    /// Parses a whole log.
    pub fn parse(bytes: &[u8]) -> History {
        let mut h = History::default();
        // A slice cannot fail to read.
        let _ = h.extend_from(&mut &*bytes);
        h
    }

    /// Parses the log `r` reads, which begins with the bytes parsed so far: `false` (nothing
    /// parsed, the history as it was) when it does not begin with them.
    fn extend_from(&mut self, r: &mut dyn BufRead) -> io::Result<bool> {
        if !self.seen.digest.is_empty() {
            if !self.seen.whole_lines {
                return Ok(false);
            }
            // The first bytes are hashed as they are read, never held (a file cut short gives
            // a digest of fewer bytes, which differs).
            let mut again = parsed::Digester::default();
            again.read(r, self.seen.digest.len())?;
            if again.finish() != self.seen.digest.finish() {
                return Ok(false);
            }
        }
        let mut line = Vec::new();
        loop {
            line.clear();
            let n = r.read_until(b'\n', &mut line)?;
            if n == 0 {
                return Ok(true);
            }
            self.seen.digest.add(&line);
            self.seen.whole_lines = line.ends_with(b"\n");
            let body = line.strip_suffix(b"\n").unwrap_or(&line);
            self.add_line(body);
        }
    }

    /// Parses one more line (without its newline).
    fn add_line(&mut self, line: &[u8]) {
        self.lines += 1;
        let index = &self.index;
        // A task's name is kept once: its later events share the index's copy.
        match event_of(line, |t| {
            index.tasks.get_key_value(t).map(|(k, _)| k.clone())
        }) {
            Ok(Some((_, e))) => self.index.add(&e),
            Ok(None) => {}
            Err(bad) => self.bad_lines.push((self.lines, bad)),
        }
    }

    /// The folder the last event of `task` put it in: "the last event of each task decides".
    pub fn folder_of(&self, task: &str) -> Option<Folder> {
        self.index.tasks.get(task).and_then(|k| k.folder)
    }

    /// When `task` was last started.
    pub fn last_start(&self, task: &str) -> Option<DateTime<Utc>> {
        self.index.tasks.get(task).and_then(|k| k.start).flatten()
    }

    /// Whether `task` has any event at all.
    pub fn knows(&self, task: &str) -> bool {
        self.index.tasks.contains_key(task)
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

/// Reads the log (a missing one is empty), line by line, never holding it whole. The log only
/// grows, so within one invocation a read that finds the bytes parsed last time followed by
/// more parses only what was appended ([`crate::store::parsed`]); other bytes are parsed whole.
pub fn read(cx: &Ctx, path: &std::path::Path) -> CResult<Rc<History>> {
    if let Some((_, h)) = parsed::latest::<History>(KIND) {
        // Extended in place when nothing else holds it (the cache lets go of it first).
        parsed::forget(KIND);
        let mut more = Rc::try_unwrap(h).unwrap_or_else(|h| (*h).clone());
        match cx
            .store
            .read_with(path, MAX_BYTES, |r| more.extend_from(r))?
        {
            Some(true) => return Ok(remember(more)),
            Some(false) => {}
            None => return Ok(remember(History::default())),
        }
    }
    let mut h = History::default();
    cx.store.read_with(path, MAX_BYTES, |r| h.extend_from(r))?;
    Ok(remember(h))
}

/// `h`, remembered as the log last read: the next read compares against what it parsed.
fn remember(h: History) -> Rc<History> {
    let h = Rc::new(h);
    parsed::remember_shared(KIND, Bytes::default(), h.clone());
    h
}

/// Reads the log again, line by line, handing `each` every event with its line as written, in
/// order (lines that are no event skipped): what reads more of an event than [`History`]
/// keeps (`stats`, `show`, when each unit last moved). A missing log has none.
pub fn each(cx: &Ctx, path: &std::path::Path, mut each: impl FnMut(Event, &str)) -> CResult<()> {
    cx.store.read_with(path, MAX_BYTES, |r| {
        let mut line = Vec::new();
        loop {
            line.clear();
            if r.read_until(b'\n', &mut line)? == 0 {
                return Ok(());
            }
            let body = line.strip_suffix(b"\n").unwrap_or(&line);
            if let Ok(Some((text, e))) = event_of(body, |_| None) {
                each(e, text);
            }
        }
    })?;
    Ok(())
}

/// All of a line's fields (parsed when asked: only `stats` and `show` read more than the
/// fields of [`Event`]).
pub fn raw(line: &str) -> Value {
    serde_json::from_str(line).unwrap_or(Value::Null)
}

/// The kind of document [`read`] remembers.
const KIND: &str = "cdd-history.jsonl";

/// What is said of the lines no event can be read from (skipped, and new lines appended after
/// them), with the command that sets them aside; `None` when there are none.
pub fn bad_lines_warning(h: &History, tasks: &std::path::Path) -> Option<String> {
    if h.bad_lines.is_empty() {
        return None;
    }
    let each = h
        .bad_lines
        .iter()
        .map(|(n, bad)| format!("{n} ({})", bad.as_str()));
    let which = first_few(each, h.bad_lines.len(), 10);
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
pub(super) mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The scans the index replaced (issue 23), kept as the reference it must agree with.
    pub(crate) mod reference {
        use super::super::*;

        /// Every event of a log, in order, as [`each`] hands them out.
        pub fn events(bytes: &[u8]) -> Vec<Event> {
            lines(bytes)
                .filter_map(|l| event_of(l, |_| None).ok().flatten())
                .map(|(_, e)| e)
                .collect()
        }

        pub fn folder_of(events: &[Event], task: &str) -> Option<Folder> {
            events
                .iter()
                .rev()
                .filter(|e| e.task.as_deref() == Some(task) && !e.action.starts_with("stop_"))
                .find_map(|e| e.to)
        }

        pub fn last_start(events: &[Event], task: &str) -> Option<DateTime<Utc>> {
            events
                .iter()
                .rev()
                .find(|e| e.action == "start" && e.task.as_deref() == Some(task))
                .and_then(|e| e.at)
        }

        pub fn knows(events: &[Event], task: &str) -> bool {
            events.iter().any(|e| e.task.as_deref() == Some(task))
        }

        /// An event's action, task, stop, folder and time.
        pub type Fields = (
            String,
            Option<String>,
            Option<String>,
            Option<Folder>,
            Option<DateTime<Utc>>,
        );

        /// A line's event as a parse into a JSON tree read it.
        pub fn event(line: &str) -> Option<Fields> {
            let raw = serde_json::from_str::<Value>(line)
                .ok()
                .filter(Value::is_object)?;
            let s = |k: &str| raw.get(k).and_then(Value::as_str).map(str::to_string);
            let action = s("action").unwrap_or_default();
            let to = s("to")
                .and_then(|t| Folder::parse(&t))
                .or_else(|| (action == "escalate").then_some(Folder::Pending));
            Some((
                action,
                s("task"),
                s("stop"),
                to,
                s("timestamp").and_then(|t| parse_time(&t)),
            ))
        }

        pub fn stop_state(events: &[Event], stop: &str) -> StopState {
            let last = events.iter().rev().find(|e| {
                e.action.starts_with("stop_")
                    && e.stop.as_deref().or(e.task.as_deref()) == Some(stop)
            });
            match last.map(|e| &*e.action) {
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
        (action, name.clone(), name, to, at, 0..20u8).prop_map(
            |(action, task, stop, to, at, shape)| {
                // Lines that are not one plain object of strings.
                match shape {
                    0 => return "{\"torn\": ".to_string(),
                    12 => return format!("[\"{action}\", \"a.md\"]"),
                    13 => return "42".to_string(),
                    14 => return format!("\"{action}\""),
                    15 => return format!("{{\"action\": \"{action}\", \"task\": 7, \"to\": {{\"x\": [1, {{}}]}}}}"),
                    16 => return format!("{{\"action\": \"{action}\", \"task\": \"a.md\", \"task\": \"b.md\", \"to\": null}}"),
                    17 => return format!("{{\"action\": \"{action}\", \"task\": \"a\\u002emd\", \"st\\u006fp\": \"v\", \"to\": \"pending\"}}"),
                    18 => return format!("{{\"action\": \"{action}\", \"task\": \"b.md\"}} trailing"),
                    _ => {}
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
            let h = History::parse(text.as_bytes());
            let events = reference::events(text.as_bytes());
            let want: Vec<_> = lines.iter().filter_map(|l| reference::event(l)).collect();
            let got: Vec<_> = events
                .iter()
                .map(|e| (e.action.to_string(), e.task.as_deref().map(str::to_string), e.stop.clone(), e.to, e.at))
                .collect();
            prop_assert_eq!(got, want);
            let bad: Vec<(usize, Bad)> = lines
                .iter()
                .enumerate()
                .filter(|(_, l)| reference::event(l).is_none())
                .map(|(i, _)| (i + 1, Bad::NotJson))
                .collect();
            prop_assert_eq!(&h.bad_lines, &bad);
            for name in NAMES {
                prop_assert_eq!(h.folder_of(name), reference::folder_of(&events, name));
                prop_assert_eq!(h.last_start(name), reference::last_start(&events, name));
                prop_assert_eq!(h.knows(name), reference::knows(&events, name));
                prop_assert_eq!(h.stop_state(name), reference::stop_state(&events, name));
            }
            let cut = cut.min(lines.len());
            let head: String = lines[..cut].iter().map(|l| format!("{l}\n")).collect();
            let mut parts = History::parse(head.as_bytes());
            prop_assert_eq!(parts.lines, cut);
            prop_assert!(parts.extend_from(&mut text.as_bytes()).unwrap());
            prop_assert_eq!(parts.lines, lines.len());
            prop_assert_eq!(&parts.bad_lines, &h.bad_lines);
            for name in NAMES {
                prop_assert_eq!(parts.folder_of(name), h.folder_of(name));
                prop_assert_eq!(parts.last_start(name), h.last_start(name));
                prop_assert_eq!(parts.knows(name), h.knows(name));
                prop_assert_eq!(parts.stop_state(name), h.stop_state(name));
            }
            // A log that no longer begins with what was parsed is not continued: one changed
            // byte anywhere in the part parsed, or a part cut short.
            if cut > 0 {
                let mut changed = text.clone().into_bytes();
                let at = (cut * 7) % head.len();
                changed[at] ^= 1;
                let mut again = History::parse(head.as_bytes());
                prop_assert!(!again.extend_from(&mut changed.as_slice()).unwrap());
                prop_assert_eq!(again.lines, cut);
                prop_assert!(!again.extend_from(&mut &head.as_bytes()[..head.len() - 1]).unwrap());
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
        assert_eq!(
            reference::events(b"{\"a\": \"\xff\"}\n\n{\"b\": \"\0\"}\n[1]\n{}").len(),
            1
        );
        assert_eq!(lines(b"").count(), 0);
        assert_eq!(lines(b"a\n").collect::<Vec<_>>(), [b"a"]);
        assert_eq!(lines(b"a\nb").count(), 2);
    }
}
