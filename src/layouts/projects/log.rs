//! `progress/log.md`, seed 000's append-only audit log: entries rendered in the seed's format
//! and parsed back tolerantly (a log written by hand or by the seed's own skill reads too), and
//! the velocity recomputed from it.
//!
//! An entry is a markdown block:
//!
//! ```text
//! ## 2026-03-01T12:00:00Z — TASK_COMPLETE
//! - Task: T1
//! - Previous status: IN_PROGRESS
//! - New status: COMPLETE
//! - actual_minutes: 42
//! - estimate_minutes: 30
//! ```
//!
//! The task and status lines appear where they apply; detail lines follow (`actual_minutes` for
//! TASK_COMPLETE, `Error` for ERROR, `External ID` for SYNC_TO_{PLATFORM}, `Reason`, …).

use super::model;
use crate::error::one_line;

/// The event types of seed 000 (plus `SYNC_TO_{PLATFORM}`, see [`is_sync`]).
pub const TASK_STARTED: &str = "TASK_STARTED";
pub const TASK_COMPLETE: &str = "TASK_COMPLETE";
pub const TASK_BLOCKED: &str = "TASK_BLOCKED";
pub const TASK_RESEARCHED: &str = "TASK_RESEARCHED";
pub const PHASE_COMPLETE: &str = "PHASE_COMPLETE";
pub const CHECKPOINT_WRITTEN: &str = "CHECKPOINT_WRITTEN";
pub const ERROR: &str = "ERROR";
pub const LOOP_ITERATION: &str = "LOOP_ITERATION";
/// A status change none of the seed's standard events names (a person's `projects set` to
/// PENDING, IN_RESEARCH, VALIDATING or CANCELLED).
pub const STATUS_CHANGED: &str = "STATUS_CHANGED";
/// A task given back by the session that held it (`taskhook release`, a session's end):
/// IN_PROGRESS → PENDING, nothing counted.
pub const TASK_RELEASED: &str = "TASK_RELEASED";
/// A line about a task's claim (a takeover of an expired lease, a person's `--force`).
pub const CLAIM_NOTE: &str = "CLAIM";

/// Whether `event` is `SYNC_TO_{PLATFORM}` (platform: capitals, digits, `_`).
pub fn is_sync(event: &str) -> bool {
    event.strip_prefix("SYNC_TO_").is_some_and(|p| {
        !p.is_empty()
            && p.bytes()
                .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
    })
}

/// The detail labels taskhook writes and reads back (one spelling for both sides).
pub mod label {
    /// A completion's minutes (TASK_COMPLETE).
    pub const ACTUAL: &str = "actual_minutes";
    /// The task's estimate (TASK_COMPLETE).
    pub const ESTIMATE: &str = "estimate_minutes";
    /// Why (TASK_BLOCKED, a status set by hand).
    pub const REASON: &str = "Reason";
    /// Free text; a SYNC entry's external id when it has no `External ID` line.
    pub const DETAIL: &str = "Detail";
    /// The checkpoint written (CHECKPOINT_WRITTEN).
    pub const CHECKPOINT: &str = "Checkpoint";
    /// How often a task was stale.
    pub const STALE_COUNT: &str = "stale_count";
    /// The id a SYNC_TO_{PLATFORM} assigned.
    pub const EXTERNAL_ID: &str = "External ID";
}

/// One log entry.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Entry {
    pub at: String,
    pub event: String,
    pub task: Option<String>,
    pub from: Option<String>,
    pub to: Option<String>,
    /// Further lines, `(label, value)`.
    pub details: Vec<(String, String)>,
}

impl Entry {
    /// An entry without task or statuses.
    pub fn new(at: &str, event: &str) -> Self {
        Entry {
            at: at.to_string(),
            event: event.to_string(),
            ..Default::default()
        }
    }

    /// An entry about a task's move from `from` to `to`.
    pub fn task(at: &str, event: &str, task: &str, from: &str, to: &str) -> Self {
        Entry {
            task: Some(task.to_string()),
            from: Some(from.to_string()),
            to: Some(to.to_string()),
            ..Entry::new(at, event)
        }
    }

    /// An ERROR entry with the full message (and the task, where there is one).
    pub fn error(at: &str, task: Option<(&str, &str, &str)>, message: &str) -> Self {
        let e = match task {
            Some((id, from, to)) => Entry::task(at, ERROR, id, from, to),
            None => Entry::new(at, ERROR),
        };
        e.detail("Error", message)
    }

    /// The ERROR entry of a write its schema refused: the full message, and the change that was
    /// not written (`task`: id, status before, status asked for; a task being added has
    /// `(new)` before). The statuses are the task's as they stay: nothing changed.
    pub fn refused(at: &str, task: Option<(&str, &str, &str)>, message: &str) -> Self {
        let Some((id, from, to)) = task else {
            return Entry::error(at, None, message);
        };
        if model::Status::parse(from).is_none() {
            return Entry::new(at, ERROR)
                .with_task(id)
                .detail("Error", message)
                .detail("Not written", format!("{id} as a new {to} task"));
        }
        Entry::error(at, Some((id, from, from)), message)
            .detail("Not written", format!("{from} → {to}"))
    }

    fn with_task(mut self, id: &str) -> Self {
        self.task = Some(id.to_string());
        self
    }

    /// Adds a detail line.
    pub fn detail(mut self, label: &str, value: impl AsRef<str>) -> Self {
        self.details
            .push((label.to_string(), one_line(value.as_ref())));
        self
    }

    /// The value of a detail line, by label (case, spaces and `_` ignored).
    pub fn get(&self, label: &str) -> Option<&str> {
        self.details
            .iter()
            .find(|(k, _)| norm_chars(k).eq(norm_chars(label)))
            .map(|(_, v)| v.as_str())
    }

    /// `actual_minutes`, as a number.
    pub fn actual_minutes(&self) -> Option<f64> {
        self.get(label::ACTUAL).and_then(number)
    }

    /// `estimate_minutes`, as a number.
    pub fn estimate_minutes(&self) -> Option<f64> {
        self.get(label::ESTIMATE).and_then(number)
    }

    /// The `Reason` line.
    pub fn reason(&self) -> Option<&str> {
        self.get(label::REASON)
    }

    /// The `Checkpoint` line.
    pub fn checkpoint(&self) -> Option<&str> {
        self.get(label::CHECKPOINT)
    }

    /// The `stale_count` line, as a count.
    pub fn stale_count(&self) -> Option<u64> {
        self.get(label::STALE_COUNT)?.parse().ok()
    }

    /// A SYNC entry's external id: its `External ID` line, else its `Detail`.
    pub fn external_id(&self) -> Option<&str> {
        self.get(label::EXTERNAL_ID)
            .or_else(|| self.get(label::DETAIL))
    }

    /// The entry in one line: `2026-03-01T12:00:00Z TASK_COMPLETE IN_PROGRESS → COMPLETE
    /// (actual_minutes: 42)`.
    pub fn summary_line(&self) -> String {
        let mut s = format!("{} {}", self.at, self.event);
        match (&self.from, &self.to) {
            (Some(f), Some(t)) if f != t => s.push_str(&format!(" {f} → {t}")),
            _ => {}
        }
        if !self.details.is_empty() {
            let d: Vec<String> = self
                .details
                .iter()
                .map(|(k, v)| format!("{k}: {v}"))
                .collect();
            s.push_str(&format!(" ({})", d.join("; ")));
        }
        s
    }

    /// The entry as it is appended to the log (ends with a blank line).
    pub fn render(&self) -> String {
        let mut s = format!("## {} — {}\n", self.at, self.event);
        if let Some(t) = &self.task {
            s.push_str(&format!("- Task: {t}\n"));
        }
        if let Some(f) = &self.from {
            s.push_str(&format!("- Previous status: {f}\n"));
        }
        if let Some(t) = &self.to {
            s.push_str(&format!("- New status: {t}\n"));
        }
        for (k, v) in &self.details {
            s.push_str(&format!("- {k}: {v}\n"));
        }
        s.push('\n');
        s
    }
}

/// Renders entries as one appended block.
pub fn render_all(entries: &[Entry]) -> String {
    entries.iter().map(Entry::render).collect()
}

/// A label as written: trimmed of spaces and `*` (`**Key:**`).
fn label_of(k: &str) -> &str {
    k.trim().trim_matches('*').trim()
}

/// A label's characters as compared: [`label_of`], ASCII lowered, spaces and `-` as `_` (one
/// pass, no copy: every completion's details are looked up by label).
fn norm_chars(k: &str) -> impl Iterator<Item = char> + '_ {
    label_of(k).chars().map(|c| match c {
        ' ' | '-' => '_',
        c => c.to_ascii_lowercase(),
    })
}

fn clean_value(v: &str) -> &str {
    let mut v = v.trim();
    while let Some(rest) = v.strip_prefix("**") {
        v = rest;
    }
    let v = v.trim();
    v.strip_prefix('`')
        .and_then(|x| x.strip_suffix('`'))
        .unwrap_or(v)
        .trim()
}

/// Parses a header line `## <time> — <EVENT>` (also `-` or `–` as the dash).
fn parse_header(line: &str) -> Option<(&str, &str)> {
    let rest = line.strip_prefix("## ")?;
    let (at, event) = [" — ", " – ", " - "]
        .iter()
        .find_map(|sep| rest.split_once(sep))?;
    let event = event.trim().trim_matches('`');
    let ok = !event.is_empty()
        && event
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b"_{}".contains(&b));
    ok.then(|| (at.trim(), event))
}

/// One entry as it stands in the log: its header's time and event, and the lines after the
/// header up to the next entry, not yet read ([`Raw::entry`] reads them).
#[derive(Debug, Clone, Copy)]
pub struct Raw<'a> {
    pub at: &'a str,
    pub event: &'a str,
    body: &'a str,
}

/// What a field line of an entry sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slot {
    Task,
    From,
    To,
    Detail,
}

impl<'a> Raw<'a> {
    /// Each field line of the entry, in order (`- Key: value`, `* **Key:** value` or
    /// `Key: value`): what it sets, its label as written, and its value; nothing copied.
    fn fields(&self, mut each: impl FnMut(Slot, &'a str, &'a str)) {
        let mut key = String::new();
        for line in self.body.lines() {
            let body = line.trim();
            let body = body
                .strip_prefix("- ")
                .or_else(|| body.strip_prefix("* "))
                .unwrap_or(body);
            let Some((k, v)) = body.split_once(':') else {
                continue;
            };
            key.clear();
            key.extend(norm_chars(k));
            if key.is_empty() || key.contains(char::is_whitespace) {
                continue;
            }
            let slot = match key.as_str() {
                "task" | "task_id" | "id" => Slot::Task,
                "previous_status" | "previous" | "prev_status" | "from" | "old_status" => {
                    Slot::From
                }
                "new_status" | "new" | "to" | "status" => Slot::To,
                _ => Slot::Detail,
            };
            each(slot, k, clean_value(v));
        }
    }

    /// The entry, its field lines read.
    pub fn entry(&self) -> Entry {
        let mut e = Entry::new(self.at, self.event);
        self.fields(|slot, k, v| match slot {
            Slot::Task => e.task = Some(v.to_string()),
            Slot::From => e.from = Some(v.to_string()),
            Slot::To => e.to = Some(v.to_string()),
            Slot::Detail => e.details.push((label_of(k).to_string(), v.to_string())),
        });
        e
    }

    /// What [`Raw::entry`] gives as its task, previous and new status (a field given twice: the
    /// last), without reading the rest into an entry.
    pub fn transition(&self) -> (Option<&'a str>, Option<&'a str>, Option<&'a str>) {
        let (mut task, mut from, mut to) = (None, None, None);
        self.fields(|slot, _, v| match slot {
            Slot::Task => task = Some(v),
            Slot::From => from = Some(v),
            Slot::To => to = Some(v),
            Slot::Detail => {}
        });
        (task, from, to)
    }

    /// What [`Entry::get`] gives for the entry: the first detail line labelled `label`.
    pub fn get(&self, label: &str) -> Option<&'a str> {
        let mut found = None;
        self.fields(|slot, k, v| {
            if found.is_none() && slot == Slot::Detail && norm_chars(k).eq(norm_chars(label)) {
                found = Some(v);
            }
        });
        found
    }
}

/// Every entry of a log, in order, unread ([`Raw`]). Text outside entries (a title) is skipped.
pub fn scan(text: &str) -> impl Iterator<Item = Raw<'_>> {
    // Only lines that begin `## ` can be headers: found by a substring search, not line by
    // line. A header closes the entry before it.
    let first = text.starts_with("## ").then_some(0);
    let mut starts = first
        .into_iter()
        .chain(text.match_indices("\n## ").map(|(i, _)| i + 1));
    let mut open: Option<(&str, &str, usize)> = None;
    std::iter::from_fn(move || loop {
        let Some(start) = starts.next() else {
            let (at, event, from) = open.take()?;
            return Some(Raw {
                at,
                event,
                body: &text[from..],
            });
        };
        // The line as `str::lines` gives it, and where the next begins.
        let (line, next) = match text[start..].find('\n') {
            Some(n) => {
                let l = &text[start..start + n];
                (l.strip_suffix('\r').unwrap_or(l), start + n + 1)
            }
            None => (&text[start..], text.len()),
        };
        let Some((t, ev)) = parse_header(line) else {
            continue;
        };
        if let Some((at, event, from)) = open.replace((t, ev, next)) {
            return Some(Raw {
                at,
                event,
                body: &text[from..start],
            });
        }
    })
}

/// [`scan`] of a log read as a stream, line by line, never held whole: `each` is handed every
/// entry as `scan` gives it (its header's time and event, and its lines up to the next entry);
/// only the entry being read is held. Invalid UTF-8 is replaced as in the whole text (a
/// newline is never part of a sequence).
pub fn scan_stream(
    r: &mut dyn std::io::BufRead,
    mut each: impl FnMut(Raw<'_>),
) -> std::io::Result<()> {
    let mut line = Vec::new();
    let mut open: Option<(String, String)> = None;
    let mut body = String::new();
    loop {
        line.clear();
        if r.read_until(b'\n', &mut line)? == 0 {
            if let Some((at, event)) = &open {
                each(Raw {
                    at,
                    event,
                    body: &body,
                });
            }
            return Ok(());
        }
        let text = String::from_utf8_lossy(&line);
        let bare = text.strip_suffix('\n').unwrap_or(&text);
        let bare = bare.strip_suffix('\r').unwrap_or(bare);
        if let Some((at, event)) = parse_header(bare) {
            if let Some((at, event)) = &open {
                each(Raw {
                    at,
                    event,
                    body: &body,
                });
            }
            open = Some((at.to_string(), event.to_string()));
            body.clear();
        } else if open.is_some() {
            body.push_str(&text);
        }
    }
}

/// Parses every entry of a log, in order ([`scan`], each entry read).
pub fn parse(text: &str) -> Vec<Entry> {
    scan(text).map(|r| r.entry()).collect()
}

/// A number in a detail value (`42`, `42.5`, `42 min`).
pub fn number(v: &str) -> Option<f64> {
    v.split_whitespace()
        .next()?
        .parse::<f64>()
        .ok()
        .filter(|n| n.is_finite() && *n >= 0.0)
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    #[test]
    fn entries_round_trip() {
        let e = Entry::task(
            "2026-03-01T12:00:00Z",
            TASK_COMPLETE,
            "T1",
            "IN_PROGRESS",
            "COMPLETE",
        )
        .detail("actual_minutes", "42")
        .detail("estimate_minutes", "30");
        let text = format!("# Progress log\n\n{}", e.render());
        assert!(text.contains("## 2026-03-01T12:00:00Z — TASK_COMPLETE\n- Task: T1\n"));
        assert_eq!(parse(&text), vec![e]);
    }

    #[test]
    fn a_refused_write_claims_no_new_status() {
        let at = "2026-03-01T12:00:00Z";
        let e = Entry::refused(at, Some(("T1", "IN_PROGRESS", "COMPLETE")), "no");
        assert_eq!(
            e.render(),
            format!("## {at} — ERROR\n- Task: T1\n- Previous status: IN_PROGRESS\n- New status: IN_PROGRESS\n- Error: no\n- Not written: IN_PROGRESS → COMPLETE\n\n")
        );
        let e = Entry::refused(at, Some(("T2", "(new)", "PENDING")), "no");
        assert_eq!(
            e.render(),
            format!("## {at} — ERROR\n- Task: T2\n- Error: no\n- Not written: T2 as a new PENDING task\n\n")
        );
    }

    #[test]
    fn hand_written_entries_parse() {
        let text = "## 2025-01-11T10:25:00Z - TASK_COMPLETE\n**Task ID:** S1\n* from: IN_PROGRESS\n* to: `COMPLETE`\nactual_minutes: 75 min\n\nnotes\n## 2025-01-11T11:00:00Z — SYNC_TO_JIRA\n- Task: S1\n- External ID: PROJ-9\n";
        let es = parse(text);
        assert_eq!(es.len(), 2);
        assert_eq!(es[0].task.as_deref(), Some("S1"));
        assert_eq!(es[0].to.as_deref(), Some("COMPLETE"));
        assert_eq!(es[0].get("actual_minutes").and_then(number), Some(75.0));
        assert!(is_sync(&es[1].event));
        assert_eq!(es[1].get("external id"), Some("PROJ-9"));
        assert!(!is_sync("SYNC_TO_") && !is_sync("SYNC_TO_jira"));
    }

    proptest::proptest! {
        /// The scan finds the headers `parse_header` takes, in order, and hands every line
        /// after the first of them to the entry it belongs to, as `str::lines` gives it.
        #[test]
        fn the_scan_splits_the_lines(lines in proptest::collection::vec(proptest::prop_oneof![
            proptest::strategy::Just("## 2026-03-01T12:00:00Z — TASK_COMPLETE".to_string()),
            proptest::strategy::Just("## 2026-03-01T12:00:00Z - ERROR".to_string()),
            proptest::strategy::Just("## not a header".to_string()),
            proptest::strategy::Just("- Task: T1".to_string()),
            proptest::strategy::Just("* **actual_minutes:** 5".to_string()),
            "[ -~\\r\\n—]{0,12}",
        ], 0..12), crlf in proptest::bool::ANY) {
            let text = lines.join(if crlf { "\r\n" } else { "\n" });
            let raws: Vec<Raw> = scan(&text).collect();
            let heads: Vec<(&str, &str)> = text.lines().filter_map(parse_header).collect();
            let got: Vec<(&str, &str)> = raws.iter().map(|r| (r.at, r.event)).collect();
            proptest::prop_assert_eq!(got, heads);
            let body: Vec<&str> = text
                .lines()
                .skip_while(|l| parse_header(l).is_none())
                .filter(|l| parse_header(l).is_none())
                .collect();
            let got: Vec<&str> = raws.iter().flat_map(|r| r.body.lines()).collect();
            proptest::prop_assert_eq!(got, body);
            // Read as a stream, the same entries with the same bodies.
            let mut streamed: Vec<(String, String, String)> = Vec::new();
            scan_stream(&mut text.as_bytes(), |r| {
                streamed.push((r.at.to_string(), r.event.to_string(), r.body.to_string()));
            })
            .unwrap();
            let whole: Vec<(String, String, String)> = raws
                .iter()
                .map(|r| (r.at.to_string(), r.event.to_string(), r.body.to_string()))
                .collect();
            proptest::prop_assert_eq!(streamed, whole);
        }
    }

    /// A line of a random log: headers (some not), field lines in the forms the reader takes,
    /// labels given twice, and other text.
    pub(in crate::layouts::projects) fn some_log_line(
    ) -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let event =
            prop::sample::select(vec![TASK_COMPLETE, "TASK_STARTED", ERROR, "PHASE_COMPLETE"]);
        let at = prop::sample::select(vec![
            "2026-03-01T12:00:00Z",
            "2026-03-01T10:00:00Z",
            "yesterday",
        ]);
        let header = (at, event).prop_map(|(at, ev)| format!("## {at} — {ev}"));
        let label = prop::sample::select(vec![
            "Task",
            "Task ID",
            "id",
            "Previous status",
            "from",
            "New status",
            "to",
            "status",
            "actual_minutes",
            "Actual minutes",
            "estimate_minutes",
            "Reason",
            "Detail",
        ]);
        let value = prop::sample::select(vec![
            "T0",
            "T1",
            "T2",
            "PENDING",
            "IN_PROGRESS",
            "COMPLETE",
            "`COMPLETE`",
            "42",
            "7.5 min",
            "",
        ]);
        let form = prop::sample::select(vec![
            "- {k}: {v}",
            "* **{k}:** {v}",
            "{k}: {v}",
            "- {k} {v}",
        ]);
        let field =
            (form, label, value).prop_map(|(f, k, v)| f.replace("{k}", k).replace("{v}", v));
        prop_oneof![
            2 => header,
            6 => field,
            1 => "[ -~]{0,10}",
        ]
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]

        /// The borrowed readings of an entry give what its entry gives (issue 23).
        #[test]
        fn borrowed_readings_match_the_entries(
            lines in proptest::collection::vec(some_log_line(), 0..40),
        ) {
            let text = lines.join("\n");
            for raw in scan(&text) {
                let e = raw.entry();
                proptest::prop_assert_eq!(
                    raw.transition(),
                    (e.task.as_deref(), e.from.as_deref(), e.to.as_deref())
                );
                for l in [label::ESTIMATE, label::ACTUAL, "reason", "actual minutes", "nothing"] {
                    proptest::prop_assert_eq!(raw.get(l), e.get(l));
                }
            }
        }
    }
}
