//! Which events are applied at most once, and by what key (the store enforces it: see
//! `crate::store::claim`). Claude Code runs every registration of an event, so taskhook
//! registered twice (the plugin and a settings file) is run twice with the same payload, at
//! once; the first run to write claims the event, the other writes and answers nothing.
//!
//! - SubagentStop: the session, the agent, `stop_hook_active`, the length of the agent's
//!   transcript and a hash of its final message. The subagent's next pass (after a `block`)
//!   stops with a longer transcript, so it is a new event even with the same final text. A
//!   stop whose transcript cannot be read (a replayed capture) has no key.
//! - PreToolUse and PostToolUse: the event and the call's `tool_use_id`.
//!
//! Only payloads with a fact that may change state get a key (a subagent's launch or stop, an
//! `Agent` call returning, a fact some layout acts on); the rest (every tool call taskhook does
//! not act on) never come here. Computing a key does no I/O but one `stat` of a stopped
//! subagent's transcript.

use std::path::{Path, PathBuf};

use crate::engine::facts::Fact;
use crate::hook::input::{Event, Payload};
use crate::layouts::registry;
use crate::store::fs;

/// The project's record of applied events.
pub fn record(project: &Path) -> PathBuf {
    project
        .join(".claude")
        .join("taskhook")
        .join("applied.json")
}

/// The key of an event that must change state at most once, when it has one.
pub fn key(p: &Payload, facts: &[Fact<'_>]) -> Option<String> {
    if !facts.iter().any(acts) {
        return None;
    }
    let session = p.common.session_id.as_deref().unwrap_or("");
    match &p.event {
        Event::SubagentStop(s) => {
            let agent = p.common.agent_id.as_deref().filter(|a| !a.is_empty())?;
            // Without its transcript, a subagent's next pass with the same final text cannot be
            // told from a second run of this stop: such a stop is applied as it comes.
            let transcript = s
                .agent_transcript_path
                .as_deref()
                .filter(|t| !t.is_empty())
                .and_then(|t| fs::len(Path::new(t)))?;
            let message = s.last_assistant_message.as_deref().unwrap_or("");
            Some(format!(
                "SubagentStop {session} {agent} {} {transcript} {:016x}",
                s.stop_hook_active.unwrap_or(false),
                crate::fnv::hash(message.as_bytes())
            ))
        }
        Event::PreToolUse(t) | Event::PostToolUse(t) => {
            let id = t.tool_use_id.as_deref()?;
            Some(format!("{} {session} {id}", p.name))
        }
        _ => None,
    }
}

/// Whether a fact may change state.
fn acts(f: &Fact<'_>) -> bool {
    match f {
        Fact::MainToolUse | Fact::SessionStart(_) | Fact::Checkpoint(_) | Fact::SessionEnded => {
            false
        }
        // Before it runs, a Bash call is only ever refused.
        Fact::Bash(b) if b.stdout.is_none() => false,
        Fact::Stopped(s) => !s.fork,
        Fact::Launch(_) | Fact::AgentReturned(_) | Fact::TasksCompleted(_) => true,
        other => registry().iter().any(|l| l.wants(other)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::facts;

    fn payload(v: serde_json::Value) -> Payload {
        Payload::from_value(v).unwrap()
    }

    #[test]
    #[allow(clippy::disallowed_methods)]
    fn keys_name_the_event_and_only_acting_events_have_one() {
        let stop = |transcript: &str| {
            payload(serde_json::json!({
                "hook_event_name": "SubagentStop", "session_id": "s1", "agent_id": "a1",
                "agent_type": "general-purpose", "agent_transcript_path": transcript,
                "last_assistant_message": "<signal>T1_DONE</signal>"
            }))
        };
        let dir = tempfile::tempdir().unwrap();
        let t = dir.path().join("agent-a1.jsonl");
        std::fs::write(&t, "{}\n").unwrap();
        let with = stop(t.to_str().unwrap());
        let k = key(&with, &facts::of(&with)).unwrap();
        assert!(k.starts_with("SubagentStop s1 a1 false 3 "), "{k}");
        let without = stop("/nonexistent/agent-a1.jsonl");
        assert_eq!(key(&without, &facts::of(&without)), None);
        let fork = payload(serde_json::json!({
            "hook_event_name": "SubagentStop", "agent_id": "a1", "agent_type": ""
        }));
        assert_eq!(key(&fork, &facts::of(&fork)), None);
        let read = payload(serde_json::json!({
            "hook_event_name": "PostToolUse", "tool_name": "Read", "tool_use_id": "toolu_1",
            "agent_id": "a1"
        }));
        assert_eq!(key(&read, &facts::of(&read)), None);
        let launch = payload(serde_json::json!({
            "hook_event_name": "PreToolUse", "session_id": "s1", "tool_name": "Agent",
            "tool_use_id": "toolu_2", "tool_input": {"prompt": "<task>T1</task>"}
        }));
        assert_eq!(
            key(&launch, &facts::of(&launch)).as_deref(),
            Some("PreToolUse s1 toolu_2")
        );
        assert_ne!(crate::fnv::hash(b"a"), crate::fnv::hash(b"b"));
    }
}
