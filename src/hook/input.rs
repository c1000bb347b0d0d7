//! Typed hook input. Parsing is tolerant: unknown fields are ignored (the raw payload is kept in
//! [`Payload::raw`]), unknown events become [`Event::Unknown`], and enum-like strings (`source`,
//! `reason`, `trigger`) stay strings with helpers that map unknown values to their nearest known
//! case. It is not lenient about types: a field of the wrong type is an error, never coerced.

use serde::{Deserialize, Deserializer};
use serde_json::Value;

use crate::error::{Error, Result};

/// Largest payload taskhook reads from stdin.
pub const MAX_PAYLOAD_BYTES: usize = 64 * 1024 * 1024;

/// Fields every event may carry. All optional: Claude Code adds and drops fields over releases.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Common {
    pub session_id: Option<String>,
    pub transcript_path: Option<String>,
    pub cwd: Option<String>,
    pub permission_mode: Option<String>,
    pub prompt_id: Option<String>,
    /// Present when the event fires inside a subagent.
    pub agent_id: Option<String>,
    pub agent_type: Option<String>,
}

/// SessionStart.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct SessionStart {
    pub source: Option<String>,
    pub model: Option<String>,
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

/// SessionEnd.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct SessionEnd {
    pub reason: Option<String>,
}

/// PreToolUse and PostToolUse (PreToolUse has no `tool_response`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ToolUse {
    pub tool_name: String,
    pub tool_input: Value,
    pub tool_response: Value,
    pub tool_use_id: Option<String>,
    pub duration_ms: Option<u64>,
}

/// PostToolUseFailure.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ToolFailure {
    pub tool_name: String,
    pub tool_input: Value,
    pub tool_use_id: Option<String>,
    pub error: Option<String>,
    pub is_interrupt: Option<bool>,
}

/// PostToolBatch.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ToolBatch {
    #[serde(deserialize_with = "null_default")]
    pub tool_calls: Vec<Value>,
}

/// SubagentStart (its ids are in [`Common`]).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct SubagentStart {}

/// SubagentStop, with seed 002's optional `tasks_completed` and `result`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct SubagentStop {
    pub stop_hook_active: Option<bool>,
    pub agent_transcript_path: Option<String>,
    pub last_assistant_message: Option<String>,
    pub tasks_completed: Option<Vec<String>>,
    pub result: Option<Value>,
}

/// Stop.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Stop {
    pub stop_hook_active: Option<bool>,
    pub last_assistant_message: Option<String>,
}

/// PreCompact and PostCompact.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Compact {
    pub trigger: Option<String>,
    pub custom_instructions: Option<String>,
    pub compact_summary: Option<String>,
}

/// UserPromptSubmit.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct UserPromptSubmit {
    pub prompt: Option<String>,
}

/// TaskCreated and TaskCompleted.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct TaskEvent {
    pub task_id: Option<String>,
    pub task_subject: Option<String>,
    pub task_description: Option<String>,
    pub teammate_name: Option<String>,
}

/// Every event taskhook knows, and a catch-all.
#[derive(Debug, Clone)]
pub enum Event {
    SessionStart(SessionStart),
    SessionEnd(SessionEnd),
    PreToolUse(ToolUse),
    PostToolUse(ToolUse),
    PostToolUseFailure(ToolFailure),
    PostToolBatch(ToolBatch),
    SubagentStart(SubagentStart),
    SubagentStop(SubagentStop),
    Stop(Stop),
    PreCompact(Compact),
    PostCompact(Compact),
    UserPromptSubmit(UserPromptSubmit),
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
    /// The whole payload as received, unknown fields included.
    pub raw: Value,
}

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
        let raw: Value = serde_json::from_slice(bytes)
            .map_err(|e| Error::BadInput(format!("payload is not valid JSON: {e}")))?;
        Self::from_value(raw)
    }

    /// Builds a payload from an already parsed JSON value.
    pub fn from_value(raw: Value) -> Result<Self> {
        let Value::Object(map) = &raw else {
            return Err(Error::BadInput(format!(
                "payload is a JSON {}, expected an object",
                json_kind(&raw)
            )));
        };
        let name = match map.get("hook_event_name") {
            Some(Value::String(s)) if !s.is_empty() => s.clone(),
            Some(Value::String(_)) | None | Some(Value::Null) => {
                return Err(Error::BadInput(
                    "payload has no hook_event_name".to_string(),
                ))
            }
            Some(other) => {
                return Err(Error::BadInput(format!(
                    "hook_event_name is a JSON {}, expected a string",
                    json_kind(other)
                )))
            }
        };
        let common: Common = decode(&name, &raw)?;
        let event = match name.as_str() {
            "SessionStart" => Event::SessionStart(decode(&name, &raw)?),
            "SessionEnd" => Event::SessionEnd(decode(&name, &raw)?),
            "PreToolUse" => Event::PreToolUse(decode(&name, &raw)?),
            "PostToolUse" => Event::PostToolUse(decode(&name, &raw)?),
            "PostToolUseFailure" => Event::PostToolUseFailure(decode(&name, &raw)?),
            "PostToolBatch" => Event::PostToolBatch(decode(&name, &raw)?),
            "SubagentStart" => Event::SubagentStart(decode(&name, &raw)?),
            "SubagentStop" => Event::SubagentStop(decode(&name, &raw)?),
            "Stop" => Event::Stop(decode(&name, &raw)?),
            "PreCompact" => Event::PreCompact(decode(&name, &raw)?),
            "PostCompact" => Event::PostCompact(decode(&name, &raw)?),
            "UserPromptSubmit" => Event::UserPromptSubmit(decode(&name, &raw)?),
            "TaskCreated" => Event::TaskCreated(decode(&name, &raw)?),
            "TaskCompleted" => Event::TaskCompleted(decode(&name, &raw)?),
            _ => Event::Unknown,
        };
        Ok(Payload {
            name,
            common,
            event,
            raw,
        })
    }

    /// Whether the event fired inside a subagent.
    pub fn in_subagent(&self) -> bool {
        self.common
            .agent_id
            .as_deref()
            .is_some_and(|s| !s.is_empty())
    }
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

/// Deserializes `null` as the type's default (serde's `default` covers only a missing field).
fn null_default<'de, D, T>(d: D) -> std::result::Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
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
        assert!(matches!(
            p.event,
            Event::PreCompact(Compact {
                custom_instructions: None,
                ..
            })
        ));
        let p =
            Payload::from_value(json!({"hook_event_name": "PostToolBatch", "tool_calls": null}));
        assert!(p.is_ok());
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
