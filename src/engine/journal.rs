//! The journal of decisions: every payload after which taskhook changed a file appends one JSON
//! line to `<project>/.claude/taskhook/journal.jsonl` (time, session, event, tool, the files
//! changed, the reply sent in full, the stderr line, the exit code), for `taskhook log` to show
//! a person. An event that changed nothing writes nothing, not even here: a Read, a SessionStart
//! that only summarizes (`taskhook status` shows the same), a refusal or denial that moved no
//! state (the rule is "every file as it was"), an exit-1 error. So the hot path is untouched. The journal is bounded: past [`MAX_BYTES`] it is
//! rotated to `journal.1.jsonl` (the one before is dropped), under its lock.
//!
//! `TASKHOOK_CAPTURE=FILE` (opt-in) also appends every payload, as received, to FILE as one
//! JSON line: exactly what `taskhook replay FILE` consumes, for a reproducible bug report.

use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use crate::context::Ctx;
use crate::env::TASKHOOK_CAPTURE;
use crate::error::Result;
use crate::hook::input::{Event, Payload};
use crate::hook::Outcome;
use crate::store::{fs, lock_path_for};

/// Size past which the journal is rotated.
pub const MAX_BYTES: u64 = 1024 * 1024;

/// The journal of a project.
pub fn path(project: &Path) -> PathBuf {
    project
        .join(".claude")
        .join("taskhook")
        .join("journal.jsonl")
}

/// The rotated journal before [`path`].
pub fn previous(project: &Path) -> PathBuf {
    project
        .join(".claude")
        .join("taskhook")
        .join("journal.1.jsonl")
}

fn tool_of(p: &Payload) -> Option<&str> {
    match &p.event {
        Event::PreToolUse(t) | Event::PostToolUse(t) => Some(t.tool_name.as_str()),
        _ => None,
    }
}

/// One line of the journal. Read back, a field of the wrong kind (the file is in the project,
/// which a repository may have planted) reads as absent rather than losing the line.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Entry {
    #[serde(deserialize_with = "lenient")]
    pub at: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub session: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub event: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub tool: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub agent_id: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub changed: Option<Vec<String>>,
    /// The reply sent, in full, as Claude Code received it.
    pub reply: Option<Value>,
    #[serde(deserialize_with = "lenient")]
    pub stderr: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub exit: Option<i64>,
}

/// What a reply did, read from its recorded JSON.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Said {
    #[serde(deserialize_with = "lenient")]
    pub decision: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub reason: Option<String>,
    #[serde(rename = "continue", deserialize_with = "lenient")]
    pub go_on: Option<bool>,
    #[serde(rename = "stopReason", deserialize_with = "lenient")]
    pub stop_reason: Option<String>,
    #[serde(rename = "hookSpecificOutput", deserialize_with = "lenient")]
    pub specific: Option<Specific>,
    #[serde(rename = "systemMessage", deserialize_with = "lenient")]
    pub system_message: Option<String>,
}

/// `hookSpecificOutput`'s context.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Specific {
    #[serde(rename = "additionalContext", deserialize_with = "lenient")]
    pub additional_context: Option<String>,
}

impl Entry {
    /// What its reply did (nothing, when it has none or one of another shape).
    pub fn said(&self) -> Said {
        self.reply
            .as_ref()
            .and_then(|r| Said::deserialize(r).ok())
            .unwrap_or_default()
    }
}

/// A field of the kind asked for, else absent.
fn lenient<'de, D: Deserializer<'de>, T: DeserializeOwned>(d: D) -> Result<Option<T>, D::Error> {
    let v = Value::deserialize(d)?;
    Ok(T::deserialize(v).ok())
}

/// The journal line for a handled payload, when there is something to record.
pub fn entry(cx: &Ctx, p: &Payload, result: &Result<Outcome>) -> Option<Entry> {
    let Ok(o) = result else { return None };
    if o.changed.is_empty() {
        return None;
    }
    Some(Entry {
        at: Some(cx.store.clock().stamp()),
        session: p.common.session_id.clone(),
        event: Some(p.name.clone()),
        tool: tool_of(p).map(str::to_string),
        agent_id: p.common.agent_id.clone().filter(|a| !a.is_empty()),
        changed: Some(
            o.changed
                .iter()
                .map(|c| c.to_string_lossy().into_owned())
                .collect(),
        ),
        reply: o.output.as_ref().map(|h| h.to_json()),
        stderr: o.refusal.clone(),
        exit: Some(i64::from(o.exit_code())),
    })
}

/// Appends `line` to the project's journal, rotating it when it grew past [`MAX_BYTES`].
pub fn record(cx: &Ctx, project: &Path, line: &Entry) -> Result<()> {
    let path = path(project);
    let mut bytes = serde_json::to_vec(line).unwrap_or_default();
    bytes.push(b'\n');
    if fs::file_len(&path).is_some_and(|n| n > MAX_BYTES) {
        cx.store.with_lock(&lock_path_for(&path), || {
            if fs::file_len(&path).is_some_and(|n| n > MAX_BYTES) {
                cx.store.rename(&path, &previous(project))?;
            }
            Ok(())
        })?;
    }
    cx.store.append(&path, &bytes)
}

/// Appends the payload to the capture file named by `TASKHOOK_CAPTURE`, when set.
pub fn capture(cx: &Ctx, payload: &Payload) -> Result<()> {
    let Some(file) = cx.env.get_os(TASKHOOK_CAPTURE) else {
        return Ok(());
    };
    let mut bytes = payload.raw_line().into_bytes();
    bytes.push(b'\n');
    cx.store.append(&cx.absolute(Path::new(file)), &bytes)
}
