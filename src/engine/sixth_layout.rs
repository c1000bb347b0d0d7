//! The test-only sixth layout ([`crate::layouts::tiny`]) driven through the engine end to end:
//! what a new layout touches is its folder and one registry line, and the engine needs nothing
//! else to run it. The test sets up its project with std (the layout writes only through the
//! store).
#![allow(clippy::disallowed_methods)]

use std::path::Path;

use serde_json::json;

use crate::context::Ctx;
use crate::env::Env;

/// A SubagentStop of a subagent whose prompt bound it to `unit`, with its final message.
fn stop(dir: &Path, unit: &str, message: &str) -> Vec<u8> {
    let transcript = dir.join("agent.jsonl");
    let prompt = json!({"type": "user", "message": {"role": "user",
        "content": format!("Do <task>{unit}</task>.")}});
    std::fs::write(&transcript, format!("{prompt}\n")).unwrap();
    serde_json::to_vec(&json!({
        "hook_event_name": "SubagentStop",
        "session_id": "s1",
        "agent_id": "a1",
        "agent_type": "general-purpose",
        "cwd": dir.join("proj"),
        "stop_hook_active": false,
        "agent_transcript_path": transcript,
        "last_assistant_message": message,
    }))
    .unwrap()
}

/// The engine drives the sixth layout end to end: a bound subagent stopping without a
/// signal is blocked for another pass; its DONE completes the unit on disk and the user
/// hears of it.
#[test]
fn the_engine_drives_a_sixth_layout_end_to_end() {
    let tmp = tempfile::tempdir().unwrap();
    let proj = tmp.path().join("proj");
    std::fs::create_dir_all(proj.join(".git")).unwrap();
    std::fs::create_dir_all(proj.join(".claude/tiny/demo")).unwrap();
    let units = proj.join(".claude/tiny/demo/units.json");
    std::fs::write(&units, r#"{"A": "pending", "B": "pending"}"#).unwrap();
    let mut env = Env::default();
    env.set("TASKHOOK_NOW", "2026-03-01T12:00:00Z");
    let cx = Ctx::new(
        env,
        None,
        Some(tmp.path().join("home")),
        proj.clone(),
        false,
    )
    .unwrap();
    let reply = |bytes: Vec<u8>| {
        let (_, out) = crate::engine::run(&cx, &bytes);
        serde_json::to_value(out.unwrap().output).unwrap()
    };

    let again = reply(stop(tmp.path(), "A", "Half of it."));
    assert_eq!(again["decision"], "block", "{again}");
    assert_eq!(
        again["reason"],
        "A is not done: finish it, then end with <signal>A_DONE</signal>."
    );

    let done = reply(stop(tmp.path(), "A", "All of it.\n<signal>A_DONE</signal>"));
    assert_eq!(
        done,
        json!({"systemMessage": "taskhook: tiny demo: A is done (All of it.)."})
    );
    let on_disk: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&units).unwrap()).unwrap();
    assert_eq!(on_disk, json!({"A": "done", "B": "pending"}));
}
