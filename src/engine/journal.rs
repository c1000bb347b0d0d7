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

use serde_json::{json, Value};

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

/// The journal line for a handled payload, when there is something to record.
pub fn entry(cx: &Ctx, p: &Payload, result: &Result<Outcome>) -> Option<Value> {
    let Ok(o) = result else { return None };
    if o.changed.is_empty() {
        return None;
    }
    let (changed, reply, stderr, exit) = (
        o.changed.clone(),
        o.output.as_ref().map(|h| h.to_json()),
        o.refusal.clone(),
        o.exit_code(),
    );
    Some(json!({
        "at": cx.store.clock().stamp(),
        "session": p.common.session_id,
        "event": p.name,
        "tool": tool_of(p),
        "agent_id": p.common.agent_id.as_deref().filter(|a| !a.is_empty()),
        "changed": changed,
        "reply": reply,
        "stderr": stderr,
        "exit": exit,
    }))
}

/// Appends `line` to the project's journal, rotating it when it grew past [`MAX_BYTES`].
pub fn record(cx: &Ctx, project: &Path, line: &Value) -> Result<()> {
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
