//! `progress.md`, the append-only iteration log and the authority on recovery: the seed's
//! iteration entries, and taskhook's own notes.
//!
//! An entry is exactly the seed's format:
//!
//! ```text
//! ## T1 - Iteration 2 - 2026-01-14T11:00:00Z
//! **Did:** …
//! **Remaining:** None
//! **Signal:** T1_DONE
//! **Commit:** def5678
//! ```
//!
//! (`**Blockers:**` on entries without a signal, `**Signal:**` on entries with one.)
//!
//! taskhook's notes are one HTML comment line each, so every reader of the seed's format skips
//! them (they are no `## ` heading and no field; rendered markdown hides them), while they stay
//! in the raw file for people, the model and taskhook:
//!
//! ```text
//! <!-- taskhook 2026-03-01T12:00:00Z reconciled: state.json had T1 pending … -->
//! <!-- taskhook 2026-03-01T12:00:00Z set T1 {"status":"pending",…}: reset by a person … -->
//! ```
//!
//! A `set` note records a unit's counters after a person's command (add, reset, unblock,
//! set-max) or a reconciliation that kept state.json's version, so replaying the log gives the
//! same state as the live path. Other kinds (`reconciled`, `invalid`, `ignored`) are read
//! only by people.

use serde_json::Value;

use super::markdown::{field, one_paragraph};

/// One iteration entry.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Entry {
    pub unit: String,
    pub iteration: u64,
    pub timestamp: String,
    pub did: Option<String>,
    pub remaining: Option<String>,
    pub blockers: Option<String>,
    /// The signal text as logged (`T1_DONE`, `T1_FAILED: reason`).
    pub signal: Option<String>,
    pub commit: Option<String>,
}

impl Entry {
    /// The commit hashes the entry names (`**Commit:** abc1234, def5678`; `none` names none).
    pub fn commits(&self) -> Vec<&str> {
        self.commit
            .as_deref()
            .unwrap_or("")
            .split([',', ' '])
            .map(|h| h.trim().trim_matches('`'))
            .filter(|h| is_hash(h))
            .collect()
    }
}

/// Whether `s` looks like an abbreviated or full git commit hash.
pub fn is_hash(s: &str) -> bool {
    (4..=64).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// One of taskhook's notes.
#[derive(Debug, Clone, PartialEq)]
pub struct Note {
    pub timestamp: String,
    /// `set`, `reconciled`, `invalid`, `ignored`, or a kind a later taskhook writes.
    pub kind: String,
    pub unit: Option<String>,
    /// A `set` note's counters, as state.json holds them for a unit.
    pub counters: Option<Value>,
    pub text: String,
}

/// What progress.md holds, in file order.
#[derive(Debug, Clone, PartialEq)]
pub enum Record {
    Entry(Entry),
    Note(Note),
}

impl Record {
    /// The unit the record is about, if any.
    pub fn unit(&self) -> Option<&str> {
        match self {
            Record::Entry(e) => Some(&e.unit),
            Record::Note(n) => n.unit.as_deref(),
        }
    }
}

const NOTE_START: &str = "<!-- taskhook ";
const NOTE_END: &str = " -->";

/// Parses every `## {ID} - Iteration {N} - {timestamp}` entry and every taskhook note, in file
/// order. Other headings (free text, older taskhook's `## Reconciled` blocks) are skipped.
pub fn parse_records(text: &str) -> Vec<Record> {
    let mut out: Vec<Record> = Vec::new();
    let mut current: Option<Entry> = None;
    for line in text.lines() {
        if let Some(h) = line.strip_prefix("## ") {
            out.extend(current.take().map(Record::Entry));
            current = entry_heading(h);
            continue;
        }
        if line.starts_with(NOTE_START) {
            out.extend(current.take().map(Record::Entry));
            out.extend(parse_note(line).map(Record::Note));
            continue;
        }
        let Some(e) = current.as_mut() else { continue };
        let l = line.trim();
        if let Some(v) = field(l, "Did") {
            e.did = Some(v.to_string());
        } else if let Some(v) = field(l, "Remaining") {
            e.remaining = Some(v.to_string());
        } else if let Some(v) = field(l, "Blockers") {
            e.blockers = Some(v.to_string());
        } else if let Some(v) = field(l, "Signal") {
            e.signal = Some(v.to_string());
        } else if let Some(v) = field(l, "Commit") {
            e.commit = Some(v.to_string());
        }
    }
    out.extend(current.map(Record::Entry));
    out
}

/// The iteration entries only.
pub fn parse_progress(text: &str) -> Vec<Entry> {
    parse_records(text)
        .into_iter()
        .filter_map(|r| match r {
            Record::Entry(e) => Some(e),
            Record::Note(_) => None,
        })
        .collect()
}

fn entry_heading(h: &str) -> Option<Entry> {
    let mut parts = h.splitn(3, " - ");
    let unit = parts.next()?.trim();
    let iter = parts
        .next()?
        .trim()
        .strip_prefix("Iteration ")?
        .trim()
        .parse()
        .ok()?;
    let ts = parts.next().unwrap_or("").trim();
    (!unit.is_empty() && !unit.contains(' ')).then(|| Entry {
        unit: unit.to_string(),
        iteration: iter,
        timestamp: ts.to_string(),
        ..Default::default()
    })
}

fn parse_note(line: &str) -> Option<Note> {
    let body = line
        .trim_end()
        .strip_prefix(NOTE_START)?
        .strip_suffix(NOTE_END)?;
    let (timestamp, rest) = body.split_once(' ')?;
    if let Some(after) = rest.strip_prefix("set ") {
        // `set UNIT {json}: text`: the JSON may hold ": " itself.
        let (unit, json) = after.split_once(' ')?;
        let mut de = serde_json::Deserializer::from_str(json).into_iter::<Value>();
        let counters = de.next()?.ok()?;
        let text = json[de.byte_offset()..].strip_prefix(": ").unwrap_or("");
        return Some(Note {
            timestamp: timestamp.to_string(),
            kind: "set".into(),
            unit: Some(unit.to_string()),
            counters: counters.is_object().then_some(counters),
            text: text.to_string(),
        });
    }
    let (head, text) = rest
        .split_once(": ")
        .unwrap_or((rest.trim_end_matches(':'), ""));
    let mut words = head.split(' ');
    Some(Note {
        timestamp: timestamp.to_string(),
        kind: words.next()?.to_string(),
        unit: words.next().map(str::to_string),
        counters: None,
        text: text.to_string(),
    })
}

/// Renders one entry in the seed's format (ending with a blank line).
pub fn render_entry(e: &Entry) -> String {
    let mut s = format!(
        "## {} - Iteration {} - {}\n",
        e.unit, e.iteration, e.timestamp
    );
    let line = |name: &str, v: &Option<String>, s: &mut String| {
        if let Some(v) = v {
            s.push_str(&format!("**{name}:** {}\n", one_paragraph(v)));
        }
    };
    line("Did", &e.did, &mut s);
    line("Remaining", &e.remaining, &mut s);
    line("Blockers", &e.blockers, &mut s);
    line("Signal", &e.signal, &mut s);
    line("Commit", &e.commit, &mut s);
    s.push('\n');
    s
}

/// Text made safe inside a note: one line, no comment terminator.
fn note_text(text: &str) -> String {
    one_paragraph(text)
        .replace("-->", "->")
        .replace("<!--", "<!-")
}

/// Renders a note (`kind` with an optional unit) followed by a blank line.
pub fn render_note(timestamp: &str, kind: &str, unit: Option<&str>, text: &str) -> String {
    let unit = unit.map(|u| format!(" {u}")).unwrap_or_default();
    format!(
        "{NOTE_START}{timestamp} {kind}{unit}: {}{NOTE_END}\n\n",
        note_text(text)
    )
}

/// Renders a `set` note: the unit's counters after a person's command or a reconciliation.
pub fn render_set(timestamp: &str, unit: &str, counters: &Value, why: &str) -> String {
    // `>` only occurs inside JSON strings, where `\u003e` means the same.
    let json = serde_json::to_string(counters)
        .unwrap_or_else(|_| "{}".into())
        .replace('>', "\\u003e");
    format!(
        "{NOTE_START}{timestamp} set {unit} {json}: {}{NOTE_END}\n\n",
        note_text(why)
    )
}

/// The last entry of `unit` in `text`, if any.
pub fn last_entry_of(text: &str, unit: &str) -> Option<Entry> {
    // Entries start at a line `## `: search backwards for the unit's heading.
    let needle = format!("## {unit} - Iteration ");
    let mut end = text.len();
    while let Some(i) = text[..end].rfind(&needle) {
        if i == 0 || text.as_bytes()[i - 1] == b'\n' {
            let rest = &text[i..];
            let end = rest[3..].find("\n## ").map_or(rest.len(), |j| j + 4);
            return parse_progress(&rest[..end]).into_iter().next();
        }
        end = i;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn progress_round_trip() {
        let e = Entry {
            unit: "T1".into(),
            iteration: 2,
            timestamp: "2026-01-14T10:30:00Z".into(),
            did: Some("Added model\nand tests".into()),
            remaining: Some("None".into()),
            blockers: None,
            signal: Some("T1_DONE".into()),
            commit: Some("abc1234".into()),
        };
        let text = format!(
            "# Progress Log\n\n{}## Reconciled - x\nnote\n\n{}",
            render_entry(&e),
            render_note("2026-01-14T10:31:00Z", "reconciled", None, "a --> b")
        );
        let parsed = parse_progress(&text);
        assert_eq!(parsed.len(), 1);
        assert_eq!(parsed[0].did.as_deref(), Some("Added model and tests"));
        assert_eq!(parsed[0].signal.as_deref(), Some("T1_DONE"));
        assert_eq!(parsed[0].iteration, 2);
        assert_eq!(parsed[0].commits(), ["abc1234"]);
        let records = parse_records(&text);
        assert_eq!(records.len(), 2);
        match &records[1] {
            Record::Note(n) => {
                assert_eq!((n.kind.as_str(), n.text.as_str()), ("reconciled", "a -> b"));
                assert_eq!(n.unit, None);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn set_notes_carry_counters() {
        let c = json!({"status": "pending", "iterations_used": 0, "reason": "a: b --> c"});
        let text = render_set("2026-01-14T10:31:00Z", "T1", &c, "reset: by a person");
        assert!(
            !text.contains("-->\n") || text.ends_with(" -->\n\n"),
            "{text}"
        );
        let records = parse_records(&text);
        match &records[..] {
            [Record::Note(n)] => {
                assert_eq!(n.kind, "set");
                assert_eq!(n.unit.as_deref(), Some("T1"));
                assert_eq!(n.counters.as_ref(), Some(&c));
                assert_eq!(n.text, "reset: by a person");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn seed_progress_example_parses() {
        let text = "# Progress Log\n\n## T1 - Iteration 1 - 2026-01-14T10:00:00Z\n**Did:** a\n**Remaining:** b\n**Blockers:** None\n**Commit:** abc\n\n## T1 - Iteration 2 - 2026-01-14T11:00:00Z\n**Did:** c\n**Remaining:** None\n**Signal:** T1_DONE\n**Commit:** def\n";
        let p = parse_progress(text);
        assert_eq!(p.len(), 2);
        assert_eq!(p[0].remaining.as_deref(), Some("b"));
        assert_eq!(p[1].signal.as_deref(), Some("T1_DONE"));
        assert_eq!(
            last_entry_of(text, "T1").and_then(|e| e.did),
            Some("c".into())
        );
        assert_eq!(last_entry_of(text, "T2"), None);
    }
}
