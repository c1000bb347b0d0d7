//! Completion signals and task tags in agent text (CONTRACT §4), and reading Claude Code's
//! subagent transcripts. Pure parsers over `&str`; the transcript reader takes the text too.
//!
//! - `<signal>{ID}_DONE</signal>`, `<signal>{ID}_FAILED</signal>`, `<signal>{ID}_BLOCKED</signal>`,
//!   each optionally followed inside the tag by `: reason`.
//! - `<task>{ID}</task>` binds a subagent to a unit.
//! - `ID` may be qualified as `STORE/ID` (the project id, slug, list id or cdd task name).
//!
//! A subagent's final message is parsed once, into a [`FinalMessage`] (its signals, its
//! failure report, the `Remaining:` / `Blockers:` lines it wrote, what it did), which every
//! layout's step reads: no layout parses the text again.

use serde_json::Value;

/// What a signal says about its unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum SignalKind {
    Done,
    Failed,
    Blocked,
}

impl SignalKind {
    /// The suffix as written in the signal (`DONE`).
    pub fn word(self) -> &'static str {
        match self {
            SignalKind::Done => "DONE",
            SignalKind::Failed => "FAILED",
            SignalKind::Blocked => "BLOCKED",
        }
    }
}

/// One parsed signal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signal {
    /// The unit name as written (`T3` or `user-auth/T3`).
    pub name: String,
    pub kind: SignalKind,
    pub reason: Option<String>,
}

impl Signal {
    /// The signal as it would be written (`T3_DONE`), without the reason.
    pub fn text(&self) -> String {
        format!("{}_{}", self.name, self.kind.word())
    }
}

/// A unit name split into its optional store qualifier and id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnitName {
    pub store: Option<String>,
    pub id: String,
}

/// Splits `STORE/ID` (at the first `/`) or a bare `ID`.
pub fn split_name(name: &str) -> UnitName {
    match name.split_once('/') {
        Some((s, id)) if !s.is_empty() && !id.is_empty() => UnitName {
            store: Some(s.to_string()),
            id: id.to_string(),
        },
        _ => UnitName {
            store: None,
            id: name.to_string(),
        },
    }
}

/// The inner texts of every `<tag>…</tag>` in `text`, in order.
fn tag_contents<'a>(text: &'a str, tag: &str) -> Vec<&'a str> {
    let open = format!("<{tag}>");
    let close = format!("</{tag}>");
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find(&open) {
        let after = &rest[i + open.len()..];
        let Some(j) = after.find(&close) else { break };
        out.push(&after[..j]);
        rest = &after[j + close.len()..];
    }
    out
}

/// Parses every signal in `text`, in order. Malformed ones are skipped.
pub fn parse_signals(text: &str) -> Vec<Signal> {
    tag_contents(text, "signal")
        .into_iter()
        .filter_map(parse_signal)
        .collect()
}

fn parse_signal(inner: &str) -> Option<Signal> {
    let inner = inner.trim();
    let (head, reason) = match inner.split_once(':') {
        Some((h, r)) => (h.trim(), Some(r.trim()).filter(|r| !r.is_empty())),
        None => (inner, None),
    };
    for kind in [SignalKind::Done, SignalKind::Failed, SignalKind::Blocked] {
        if let Some(name) = head.strip_suffix(&format!("_{}", kind.word())) {
            let name = name.trim();
            if name.is_empty() || name.chars().any(char::is_whitespace) {
                return None;
            }
            return Some(Signal {
                name: name.to_string(),
                kind,
                reason: reason.map(str::to_string),
            });
        }
    }
    None
}

/// A subagent's final message, parsed once (the engine does, at SubagentStop; an agent's verb
/// or a command by hand parses the text it stands in for): what every layout's step reads.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FinalMessage {
    /// Its signals, in order ([`parse_signals`]).
    pub signals: Vec<Signal>,
    /// Its failure report: the first `<details>` and `<feedback>`, trimmed, when not empty.
    pub details: Option<String>,
    pub feedback: Option<String>,
    /// The `Remaining:` and `Blockers:` lines it wrote (the first of each with a value).
    pub remaining: Option<String>,
    pub blockers: Option<String>,
    /// What it did: the text without its signal tags and without its own `Remaining:`,
    /// `Blockers:`, `Signal:` and `Commit:` lines, trimmed (empty when nothing is left).
    pub did: String,
}

impl FinalMessage {
    /// Parses `text` once.
    pub fn parse(text: &str) -> FinalMessage {
        FinalMessage {
            signals: parse_signals(text),
            details: first_tag(text, "details"),
            feedback: first_tag(text, "feedback"),
            remaining: message_field(text, "Remaining"),
            blockers: message_field(text, "Blockers"),
            did: did_text(text),
        }
    }
}

/// The first `<name>…</name>` of `text`, trimmed, when not empty.
fn first_tag(text: &str, name: &str) -> Option<String> {
    tag_contents(text, name)
        .first()
        .map(|s| s.trim())
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

/// The value of a `Name: value` line (also `**Name:** value`, `**Name**: value`; the name in any
/// case), trimmed: the field syntax of progress entries and of the lines a subagent writes.
pub fn line_field<'a>(line: &'a str, name: &str) -> Option<&'a str> {
    // `**` stripped by prefix, not by a string search (which costs a searcher per call: a
    // plan of 10,000 units asks this 80,000 times).
    fn bold(mut s: &str) -> &str {
        while let Some(rest) = s.strip_prefix("**") {
            s = rest;
        }
        s
    }
    let l = bold(line);
    let head = l.get(..name.len())?;
    if !head.eq_ignore_ascii_case(name) {
        return None;
    }
    let rest = bold(&l[name.len()..]);
    Some(bold(rest.strip_prefix(':')?).trim())
}

/// The first line of `message` (a list item or not) that is the field `name` with a value.
fn message_field(message: &str, name: &str) -> Option<String> {
    message
        .lines()
        .map(|l| l.trim().trim_start_matches(['-', '*', ' ']))
        .find_map(|l| line_field(l, name).map(str::to_string))
        .filter(|v| !v.is_empty())
}

/// `message` without its signal tags and its own field lines, trimmed.
fn did_text(message: &str) -> String {
    let mut out = message.to_string();
    while let Some(i) = out.find("<signal>") {
        match out[i..].find("</signal>") {
            Some(j) => out.replace_range(i..i + j + "</signal>".len(), ""),
            None => break,
        }
    }
    let kept: Vec<&str> = out
        .lines()
        .filter(|l| {
            !["Remaining", "Blockers", "Signal", "Commit"]
                .iter()
                .any(|f| message_field(l, f).is_some())
        })
        .collect();
    kept.join("\n").trim().to_string()
}

/// The unit names a prompt binds its subagent to: `<task>ID</task>` tags, and the names of
/// signals the prompt tells the subagent to emit. Deduplicated, in order.
pub fn bound_names(prompt: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let tags = tag_contents(prompt, "task").into_iter().map(str::trim);
    let signals = parse_signals(prompt).into_iter().map(|s| s.name);
    for name in tags.map(str::to_string).chain(signals) {
        if !name.is_empty() && !name.chars().any(char::is_whitespace) && !out.contains(&name) {
            out.push(name);
        }
    }
    out
}

/// Text of a message's `content`: a string, or the `text` blocks of an array, joined.
pub fn content_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// From a subagent transcript (JSONL): the first user message's text (the prompt the main
/// agent gave) and the last assistant text. Lines that are not JSON or not user/assistant
/// messages (attachments, API records) are skipped.
pub fn read_transcript(jsonl: &str) -> (Option<String>, Option<String>) {
    let mut prompt = None;
    let mut last = None;
    for line in jsonl.lines() {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        let kind = v.get("type").and_then(Value::as_str);
        let Some(content) = v.get("message").and_then(|m| m.get("content")) else {
            continue;
        };
        match kind {
            Some("user") if prompt.is_none() => {
                let t = content_text(content);
                if !t.trim().is_empty() {
                    prompt = Some(t);
                }
            }
            Some("assistant") => {
                let t = content_text(content);
                if !t.trim().is_empty() {
                    last = Some(t);
                }
            }
            _ => {}
        }
    }
    (prompt, last)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signals_with_reasons_and_qualifiers() {
        let s = parse_signals(
            "done\n<signal>T1_DONE</signal> and <signal> web/T2_FAILED: tests red </signal>\
             <signal>R3_BLOCKED:</signal><signal>nonsense</signal><signal>_DONE</signal>",
        );
        assert_eq!(s.len(), 3);
        assert_eq!(
            (s[0].name.as_str(), s[0].kind, s[0].reason.as_deref()),
            ("T1", SignalKind::Done, None)
        );
        assert_eq!(s[1].name, "web/T2");
        assert_eq!(s[1].kind, SignalKind::Failed);
        assert_eq!(s[1].reason.as_deref(), Some("tests red"));
        assert_eq!(
            (s[2].kind, s[2].reason.as_deref()),
            (SignalKind::Blocked, None)
        );
        assert_eq!(s[0].text(), "T1_DONE");
    }

    #[test]
    fn a_final_message_is_parsed_once_into_its_parts() {
        let m = FinalMessage::parse(
            "Did the thing.\nRemaining: wire the routes\n- **Blockers:** flaky CI\n\
             <details> tests red \n</details><feedback>retry</feedback><details>2nd</details>\n\
             **Commit:** abc\n<signal>T1_FAILED: red</signal>",
        );
        assert_eq!(m.signals.len(), 1);
        assert_eq!(m.signals[0].reason.as_deref(), Some("red"));
        assert_eq!(m.remaining.as_deref(), Some("wire the routes"));
        assert_eq!(m.blockers.as_deref(), Some("flaky CI"));
        assert_eq!(m.details.as_deref(), Some("tests red"));
        assert_eq!(m.feedback.as_deref(), Some("retry"));
        assert_eq!(
            m.did,
            "Did the thing.\n<details> tests red \n</details><feedback>retry</feedback><details>2nd</details>"
        );
        let empty = FinalMessage::parse("<signal>T1_DONE</signal>\nRemaining:\n");
        assert_eq!((empty.remaining, empty.did.as_str()), (None, "Remaining:"));
        assert_eq!(FinalMessage::parse("<details> </details>").details, None);
    }

    #[test]
    fn names_split_on_first_slash() {
        assert_eq!(
            split_name("T1"),
            UnitName {
                store: None,
                id: "T1".into()
            }
        );
        assert_eq!(
            split_name("user-auth/T3"),
            UnitName {
                store: Some("user-auth".into()),
                id: "T3".into()
            }
        );
        assert_eq!(split_name("/T3").store, None);
    }

    #[test]
    fn prompts_bind_by_tag_or_expected_signal() {
        assert_eq!(
            bound_names("Work on <task>T1</task>. When done emit <signal>T1_DONE</signal>; see <task>x/T2</task>"),
            ["T1", "x/T2"]
        );
        assert!(bound_names("SUBAGENT-T1: run echo and report").is_empty());
    }

    #[test]
    fn transcript_first_prompt_and_last_text() {
        let jsonl = r#"{"type":"user","message":{"role":"user","content":"Do <task>T1</task>"}}
not json
{"type":"attachment"}
{"type":"assistant","message":{"content":[{"type":"tool_use","name":"Bash"}]}}
{"type":"user","message":{"content":[{"type":"tool_result","content":"ok"}]}}
{"type":"assistant","message":{"content":[{"type":"text","text":"All set.\n<signal>T1_DONE</signal>"}]}}"#;
        let (prompt, last) = read_transcript(jsonl);
        assert_eq!(prompt.as_deref(), Some("Do <task>T1</task>"));
        assert_eq!(last.as_deref(), Some("All set.\n<signal>T1_DONE</signal>"));
    }

    #[test]
    fn real_transcript_parses() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/claude-code-2.1.330/transcripts/subagent.agent-af21521741dc9d17f.jsonl"
        );
        #[allow(clippy::disallowed_methods)]
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let (prompt, last) = read_transcript(&text);
        assert_eq!(prompt.as_deref(), Some("SUBAGENT-T1: run echo and report"));
        assert!(last.unwrap().contains("<signal>T1_DONE</signal>"));
    }
}
