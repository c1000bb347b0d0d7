//! Typed hook input. Parsing decodes only the fields a handler reads; everything else stays
//! text in [`Payload::raw`] and is never type-checked, so a field Claude Code adds, drops or retypes
//! (`duration_ms: 43.5`, `permission_mode` as an object) cannot fail a payload. An unknown
//! event decodes nothing beyond its name. Enum-like strings (`source`) stay strings with
//! helpers that map unknown values to their nearest known case. The fields handlers read are
//! not coerced: one of the wrong type is an error. A lone UTF-16 surrogate escape
//! (`"\ud83d"`, an emoji JavaScript cut in half) becomes U+FFFD instead of failing the payload.
//!
//! The hot path parses the top level once into field texts (no JSON tree); `tool_input` and
//! `tool_response` become JSON values only for the tools taskhook acts on, so a Read of a large
//! file (its whole content in `tool_response`) costs a syntax check, never a tree.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::error::{Error, Result};

/// Largest payload taskhook reads from stdin.
pub const MAX_PAYLOAD_BYTES: usize = 64 * 1024 * 1024;

/// Fields of every event that handlers read. All optional.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Common {
    pub session_id: Option<String>,
    pub cwd: Option<String>,
    /// Present when the event fires inside a subagent.
    pub agent_id: Option<String>,
    pub agent_type: Option<String>,
}

/// SessionStart.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct SessionStart {
    pub source: Option<String>,
}

/// How a session started; any value Claude Code adds later counts as [`SessionSource::Startup`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionSource {
    Startup,
    Resume,
    Clear,
    Compact,
    Fork,
}

impl SessionStart {
    /// The source, unknown values mapped to `Startup`.
    pub fn kind(&self) -> SessionSource {
        match self.source.as_deref() {
            Some("resume") => SessionSource::Resume,
            Some("clear") => SessionSource::Clear,
            Some("compact") => SessionSource::Compact,
            Some("fork") => SessionSource::Fork,
            _ => SessionSource::Startup,
        }
    }
}

/// PreToolUse and PostToolUse (PreToolUse has no `tool_response`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ToolUse {
    pub tool_name: String,
    pub tool_input: Value,
    pub tool_response: Value,
    /// The call's id, the same at its PreToolUse and PostToolUse (one event of each per call).
    pub tool_use_id: Option<String>,
}

/// SubagentStop, with seed 002's optional `tasks_completed`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct SubagentStop {
    pub stop_hook_active: Option<bool>,
    pub agent_transcript_path: Option<String>,
    pub last_assistant_message: Option<String>,
    pub tasks_completed: Option<Vec<String>>,
}

/// TaskCreated and TaskCompleted.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct TaskEvent {
    pub task_id: Option<String>,
}

/// Every event taskhook knows, and a catch-all. Events no handler reads fields of carry none.
#[derive(Debug, Clone)]
pub enum Event {
    SessionStart(SessionStart),
    SessionEnd,
    PreToolUse(ToolUse),
    PostToolUse(ToolUse),
    PostToolUseFailure,
    PostToolBatch,
    SubagentStart,
    SubagentStop(SubagentStop),
    Stop,
    PreCompact,
    PostCompact,
    UserPromptSubmit,
    TaskCreated(TaskEvent),
    TaskCompleted(TaskEvent),
    /// An event this version does not know: handled as a no-op.
    Unknown,
}

/// One parsed hook payload.
#[derive(Debug, Clone)]
pub struct Payload {
    /// `hook_event_name` as sent.
    pub name: String,
    pub common: Common,
    pub event: Event,
    /// The whole payload as received, unknown fields included (its JSON text).
    pub raw: String,
}

/// The tools whose `tool_input` / `tool_response` a handler reads; other tools' are never
/// turned into JSON values.
pub const TOOLS_READ: &[&str] = &[
    "Agent",
    "Task",
    "Bash",
    "Write",
    "Edit",
    "MultiEdit",
    "NotebookEdit",
    "TodoWrite",
    "TaskCreate",
    "TaskUpdate",
];

/// The top level of a payload: each field's JSON text.
type Fields = BTreeMap<String, Box<RawValue>>;

impl Payload {
    /// Parses one payload: a JSON object with a string `hook_event_name`.
    pub fn parse(bytes: &[u8]) -> Result<Self> {
        if bytes.len() > MAX_PAYLOAD_BYTES {
            return Err(Error::BadInput(format!(
                "payload is larger than {} MiB",
                MAX_PAYLOAD_BYTES / (1024 * 1024)
            )));
        }
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Err(Error::BadInput(
                "empty input: expected one hook payload (a JSON object) on stdin".into(),
            ));
        }
        let fields: Fields = parse_fields(bytes).map_err(|e| match parse_json(bytes) {
            Ok(v) if !v.is_object() => Error::BadInput(format!(
                "payload is a JSON {}, expected an object",
                json_kind(&v)
            )),
            _ => Error::BadInput(format!("payload is not valid JSON: {e}")),
        })?;
        // Valid JSON is valid UTF-8 (a lone surrogate escape is ASCII).
        let raw = String::from_utf8_lossy(bytes).into_owned();
        Self::from_fields(fields, raw)
    }

    /// Builds a payload from an already parsed JSON value.
    pub fn from_value(value: Value) -> Result<Self> {
        if !value.is_object() {
            return Err(Error::BadInput(format!(
                "payload is a JSON {}, expected an object",
                json_kind(&value)
            )));
        }
        Self::parse(&serde_json::to_vec(&value).unwrap_or_default())
    }

    fn from_fields(fields: Fields, raw: String) -> Result<Self> {
        let name = match fields.get("hook_event_name").map(|r| r.get()) {
            Some(text) => match parse_json(text.as_bytes()) {
                Ok(Value::String(s)) if !s.is_empty() => s,
                Ok(Value::String(_) | Value::Null) => {
                    return Err(Error::BadInput("payload has no hook_event_name".into()))
                }
                Ok(other) => {
                    return Err(Error::BadInput(format!(
                        "hook_event_name is a JSON {}, expected a string",
                        json_kind(&other)
                    )))
                }
                Err(e) => return Err(Error::BadInput(format!("payload is not valid JSON: {e}"))),
            },
            None => return Err(Error::BadInput("payload has no hook_event_name".into())),
        };
        let pick = |keys: &[&str]| -> Result<Value> {
            let mut m = Map::new();
            for k in keys {
                if let Some(r) = fields.get(*k) {
                    let v = parse_json(r.get().as_bytes()).map_err(|e| {
                        Error::BadInput(format!("invalid {name} payload: {k}: {e}"))
                    })?;
                    m.insert((*k).to_string(), v);
                }
            }
            Ok(Value::Object(m))
        };
        let event = match name.as_str() {
            "SessionStart" => Event::SessionStart(decode(&name, &pick(&["source"])?)?),
            "SessionEnd" => Event::SessionEnd,
            "PreToolUse" => Event::PreToolUse(tool_use(&name, &fields)?),
            "PostToolUse" => Event::PostToolUse(tool_use(&name, &fields)?),
            "PostToolUseFailure" => Event::PostToolUseFailure,
            "PostToolBatch" => Event::PostToolBatch,
            "SubagentStart" => Event::SubagentStart,
            "SubagentStop" => Event::SubagentStop(decode(
                &name,
                &pick(&[
                    "stop_hook_active",
                    "agent_transcript_path",
                    "last_assistant_message",
                    "tasks_completed",
                ])?,
            )?),
            "Stop" => Event::Stop,
            "PreCompact" => Event::PreCompact,
            "PostCompact" => Event::PostCompact,
            "UserPromptSubmit" => Event::UserPromptSubmit,
            "TaskCreated" => Event::TaskCreated(decode(&name, &pick(&["task_id"])?)?),
            "TaskCompleted" => Event::TaskCompleted(decode(&name, &pick(&["task_id"])?)?),
            _ => Event::Unknown,
        };
        let common: Common = match event {
            Event::Unknown => Common::default(),
            _ => decode(
                &name,
                &pick(&["session_id", "cwd", "agent_id", "agent_type"])?,
            )?,
        };
        Ok(Payload {
            name,
            common,
            event,
            raw,
        })
    }

    /// The payload as one line of JSON (what `replay` reads back from JSON Lines).
    pub fn raw_line(&self) -> String {
        parse_json(self.raw.as_bytes())
            .map(|v| v.to_string())
            .unwrap_or_else(|_| self.raw.replace('\n', " "))
    }

    /// Whether the event fired inside a subagent.
    pub fn in_subagent(&self) -> bool {
        self.common
            .agent_id
            .as_deref()
            .is_some_and(|s| !s.is_empty())
    }
}

/// `tool_name`, and `tool_input` / `tool_response` as values for the tools in [`TOOLS_READ`].
fn tool_use(event: &str, fields: &Fields) -> Result<ToolUse> {
    let tool_name: String = match fields.get("tool_name") {
        Some(r) => parse_json(r.get().as_bytes())
            .and_then(serde_json::from_value::<Option<String>>)
            .map_err(|e| Error::BadInput(format!("invalid {event} payload: tool_name: {e}")))?
            .unwrap_or_default(),
        None => String::new(),
    };
    let value = |key: &str| -> Result<Value> {
        match fields.get(key) {
            Some(r) if TOOLS_READ.contains(&tool_name.as_str()) => parse_json(r.get().as_bytes())
                .map_err(|e| Error::BadInput(format!("invalid {event} payload: {key}: {e}"))),
            _ => Ok(Value::Null),
        }
    };
    // A non-string id identifies nothing: ignored, never an error.
    let tool_use_id = fields
        .get("tool_use_id")
        .and_then(|r| serde_json::from_str::<String>(r.get()).ok())
        .filter(|id| !id.is_empty());
    Ok(ToolUse {
        tool_input: value("tool_input")?,
        tool_response: value("tool_response")?,
        tool_name,
        tool_use_id,
    })
}

/// The top level of a payload as field texts, lone surrogates fixed as [`parse_json`] does.
fn parse_fields(bytes: &[u8]) -> serde_json::Result<Fields> {
    serde_json::from_slice(bytes).or_else(|e| match replace_lone_surrogates(bytes) {
        Some(fixed) => serde_json::from_slice(&fixed).map_err(|_| e),
        None => Err(e),
    })
}

fn decode<T: for<'de> Deserialize<'de>>(event: &str, raw: &Value) -> Result<T> {
    T::deserialize(raw).map_err(|e| Error::BadInput(format!("invalid {event} payload: {e}")))
}

fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Parses JSON text; when it fails and holds a lone UTF-16 surrogate escape, parses it again
/// with those escapes turned into U+FFFD (only then: the usual payload is parsed once).
pub fn parse_json(bytes: &[u8]) -> serde_json::Result<Value> {
    serde_json::from_slice(bytes).or_else(|e| match replace_lone_surrogates(bytes) {
        Some(fixed) => serde_json::from_slice(&fixed).map_err(|_| e),
        None => Err(e),
    })
}

/// Rewrites every `\uXXXX` escape of a surrogate that is not part of a pair as `\ufffd`;
/// `None` when there is none. Other bytes are copied as they are.
fn replace_lone_surrogates(bytes: &[u8]) -> Option<Vec<u8>> {
    let unit = |i: usize| -> Option<u16> {
        let hex = std::str::from_utf8(bytes.get(i..i + 4)?).ok()?;
        u16::from_str_radix(hex, 16).ok()
    };
    let escape_at = |i: usize| bytes.get(i) == Some(&b'\\') && bytes.get(i + 1) == Some(&b'u');
    let high = |n: u16| (0xD800..=0xDBFF).contains(&n);
    let low = |n: u16| (0xDC00..=0xDFFF).contains(&n);
    let mut out = Vec::with_capacity(bytes.len());
    let mut changed = false;
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'\\' {
            out.push(bytes[i]);
            i += 1;
            continue;
        }
        match (escape_at(i), unit(i + 2)) {
            (true, Some(n)) if high(n) && escape_at(i + 6) && unit(i + 8).is_some_and(low) => {
                out.extend_from_slice(&bytes[i..i + 12]);
                i += 12;
            }
            (true, Some(n)) if high(n) || low(n) => {
                out.extend_from_slice(b"\\ufffd");
                changed = true;
                i += 6;
            }
            // Any other escape (`\\`, `\"`, `\u0041`): copied whole, so an escaped backslash
            // is never mistaken for the start of one.
            _ => {
                let end = (i + 2).min(bytes.len());
                out.extend_from_slice(&bytes[i..end]);
                i = end;
            }
        }
    }
    changed.then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn unknown_event_and_fields_are_tolerated() {
        let p = Payload::from_value(json!({"hook_event_name": "Teleport", "x": 1})).unwrap();
        assert!(matches!(p.event, Event::Unknown));
        assert_eq!(p.name, "Teleport");
        let p = Payload::from_value(json!({
            "hook_event_name": "SessionStart", "source": "warp", "brand_new": {"a": 1}
        }))
        .unwrap();
        match p.event {
            Event::SessionStart(s) => assert_eq!(s.kind(), SessionSource::Startup),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn wrong_types_are_errors_not_coerced() {
        let e = Payload::from_value(json!({"hook_event_name": "SessionStart", "source": 5}));
        assert!(e.is_err());
        let e = Payload::from_value(json!({"hook_event_name": "PostToolUse", "tool_name": ["x"]}));
        assert!(e.is_err());
        let e = Payload::from_value(json!({"hook_event_name": 3}));
        assert!(e.unwrap_err().to_string().contains("expected a string"));
    }

    #[test]
    fn nulls_are_accepted_where_claude_code_sends_them() {
        let p = Payload::from_value(json!({
            "hook_event_name": "PreCompact", "trigger": "auto", "custom_instructions": null
        }))
        .unwrap();
        assert!(matches!(p.event, Event::PreCompact));
        let p =
            Payload::from_value(json!({"hook_event_name": "PostToolBatch", "tool_calls": null}));
        assert!(p.is_ok());
        let p = Payload::from_value(json!({"hook_event_name": "Stop", "agent_id": null}));
        assert!(!p.unwrap().in_subagent());
    }

    #[test]
    fn fields_no_handler_reads_never_fail_a_payload() {
        for v in [
            json!({"hook_event_name": "PostToolUse", "tool_name": "Read", "duration_ms": 43.5,
                   "permission_mode": {"x": 1}, "tool_use_id": 7, "transcript_path": [1],
                   "prompt_id": false}),
            json!({"hook_event_name": "Stop", "stop_hook_active": "yes",
                   "last_assistant_message": {"a": 1}}),
            json!({"hook_event_name": "SessionStart", "model": 3}),
            json!({"hook_event_name": "PreCompact", "trigger": 1, "custom_instructions": []}),
            json!({"hook_event_name": "TaskCompleted", "task_id": "1", "task_subject": 2}),
            // An unknown event decodes nothing, not even the common fields.
            json!({"hook_event_name": "Teleport", "cwd": 5, "session_id": [], "agent_id": {}}),
        ] {
            assert!(Payload::from_value(v.clone()).is_ok(), "{v}");
        }
    }

    #[test]
    fn lone_surrogates_become_replacement_characters() {
        let raw = br#"{"hook_event_name":"SubagentStop","last_assistant_message":"ok \ud83d <signal>T1_DONE</signal> \udc00","cwd":"/p"}"#;
        let p = Payload::parse(raw).unwrap();
        match p.event {
            Event::SubagentStop(s) => assert_eq!(
                s.last_assistant_message.as_deref(),
                Some("ok \u{fffd} <signal>T1_DONE</signal> \u{fffd}")
            ),
            other => panic!("{other:?}"),
        }
        // A pair stays a pair; an escaped backslash before `u` is not an escape.
        let raw = br#"{"hook_event_name":"Stop","x":"\ud83d\ude00 \\ud83d","y":"\ud83d"}"#;
        let p = Payload::parse(raw).unwrap();
        let raw: Value = parse_json(p.raw.as_bytes()).unwrap();
        assert_eq!(raw["x"], "\u{1f600} \\ud83d");
        assert_eq!(raw["y"], "\u{fffd}");
        assert!(replace_lone_surrogates(br#""\ud83d\ude00 \\udc00 \u0041""#).is_none());
        // Still invalid after the fix: the original error is reported.
        let err = Payload::parse(br#"{"a":"\ud83d", "#)
            .unwrap_err()
            .to_string();
        assert!(err.contains("not valid JSON"), "{err}");
    }

    #[test]
    fn malformed_inputs() {
        for (input, want) in [
            (&b""[..], "empty input"),
            (b"  \n", "empty input"),
            (b"not json", "not valid JSON"),
            (b"[1,2]", "expected an object"),
            (b"{}", "no hook_event_name"),
            (b"{\"hook_event_name\": \"\"}", "no hook_event_name"),
            (b"\xff\xfe{}", "not valid JSON"),
        ] {
            let err = Payload::parse(input).unwrap_err().to_string();
            assert!(err.contains(want), "{input:?}: {err}");
        }
    }
}
