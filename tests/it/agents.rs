//! Subagent bindings and notices (CONTRACT §4) through the binary.

use serde_json::{json, Value};

use crate::common::Project;

fn agents_file(p: &Project) -> Value {
    serde_json::from_slice(&std::fs::read(p.root.join(".claude/taskhook/agents.json")).unwrap())
        .unwrap()
}

#[test]
fn agent_prompt_naming_a_task_is_remembered_by_agent_id() {
    let p = Project::new();
    let mut payload = p.payload("PostToolUse.Agent.background.json");
    payload["tool_input"]["prompt"] =
        json!("Implement <task>T1</task>; end with <signal>web/T2_DONE</signal>");
    let run = p.hook(&payload);
    assert_eq!((run.code, run.stdout.as_str()), (0, ""), "{run:?}");
    let id = payload["tool_response"]["agentId"].as_str().unwrap();
    let doc = agents_file(&p);
    assert_eq!(doc["bindings"][id]["units"], json!(["T1", "web/T2"]));
    assert_eq!(doc["bindings"][id]["at"], crate::common::NOW);
    // The same binding again writes nothing.
    let before = p.snapshot();
    assert_eq!(p.hook(&payload).code, 0);
    assert_eq!(p.snapshot(), before);
    let v = p.run(&["validate", "--json"], "");
    assert_eq!(v.code, 0, "{v:?}");
    assert_eq!(v.json()["files"][0]["schema"], "taskhook-agents");
    p.write(
        ".claude/taskhook/agents.json",
        r#"{"bindings": [], "notices": []}"#,
    );
    let bad = p.run(&["validate"], "");
    assert_eq!(bad.code, 1, "{bad:?}");
    assert!(
        bad.stdout.contains("INVALID") && bad.stdout.contains("/bindings"),
        "{bad:?}"
    );
}

#[test]
fn agent_prompt_without_a_task_records_nothing() {
    let p = Project::new();
    let before = p.snapshot();
    let run = p.hook(&p.payload("PostToolUse.Agent.json"));
    assert_eq!((run.code, run.stdout.as_str()), (0, ""), "{run:?}");
    assert_eq!(p.snapshot(), before);
}

#[test]
fn pending_notices_reach_the_main_agent_once() {
    let p = Project::new();
    p.write(
        ".claude/taskhook/agents.json",
        serde_json::to_vec_pretty(&json!({
            "bindings": {},
            "notices": [{"agent_id": "a1", "text": "T1 is done; ready now: T2.", "at": "2026-03-01T11:00:00Z"}]
        }))
        .unwrap(),
    );
    let run = p.hook(&p.payload("PostToolUse.Read.json"));
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        run.json(),
        json!({"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "T1 is done; ready now: T2."}})
    );
    assert_eq!(agents_file(&p)["notices"], json!([]));
    let again = p.hook(&p.payload("PostToolUse.Read.json"));
    assert_eq!((again.code, again.stdout.as_str()), (0, ""));
    // A subagent's own PostToolUse never takes the main agent's notices.
    p.write(
        ".claude/taskhook/agents.json",
        serde_json::to_vec_pretty(&json!({
            "bindings": {},
            "notices": [{"agent_id": "a1", "text": "x", "at": "2026-03-01T11:00:00Z"}]
        }))
        .unwrap(),
    );
    let sub = p.hook(&p.payload("PostToolUse.Bash.subagent.json"));
    assert_eq!((sub.code, sub.stdout.as_str()), (0, ""), "{sub:?}");
}

#[test]
fn corrupt_agents_file_is_moved_aside_not_lost() {
    let p = Project::new();
    p.write(".claude/taskhook/agents.json", "{ torn");
    let mut payload = p.payload("PostToolUse.Agent.background.json");
    payload["tool_input"]["prompt"] = json!("<task>T1</task>");
    assert_eq!(p.hook(&payload).code, 0);
    let aside: Vec<String> = std::fs::read_dir(p.root.join(".claude/taskhook"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with("agents.json.corrupt-"))
        .collect();
    assert_eq!(aside.len(), 1);
    assert_eq!(
        std::fs::read(p.root.join(".claude/taskhook").join(&aside[0])).unwrap(),
        b"{ torn"
    );
    assert!(agents_file(&p)["bindings"].as_object().unwrap().len() == 1);
}

/// Issue 20 item 19: a bare id two stores share, named by the prompt and signalled in the
/// final message, is reported once (it was said once per mention), and nothing changes.
#[test]
fn an_ambiguous_bare_id_on_subagent_stop_is_reported_once() {
    let p = Project::new();
    for slug in ["alpha", "beta"] {
        let r = p.run(&["iterative", "new", slug, "--task", "T1"], "");
        assert_eq!(r.code, 0, "{r:?}");
    }
    let before = p.snapshot();
    let stop = p.subagent_stop(
        "z",
        "Do <task>T1</task>, end with <signal>T1_DONE</signal>",
        "done\n<signal>T1_DONE</signal>\n<signal>T1_FAILED: or not</signal>",
    );
    let run = p.hook(&stop);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        run.json(),
        json!({"systemMessage": "taskhook: \"T1\" matches several active units: alpha/T1 \
               (iterative), beta/T1 (iterative); nothing changed. Name one as STORE/ID, e.g. \
               alpha/T1."})
    );
    assert_eq!(p.snapshot(), before);
}

#[test]
fn a_notice_whose_task_was_finished_since_is_not_delivered_in_any_layout() {
    // Seed 000 (projects): an unbound FAILED leaves a notice to retry T1; the user then marks
    // T1 COMPLETE by hand. The notice is false by the main agent's next tool call.
    let p = Project::new();
    for args in [
        &["projects", "new", "web"][..],
        &["projects", "add", "web", "T1", "--title", "One"],
        &["projects", "add", "web", "T2", "--title", "Two"],
    ] {
        assert_eq!(p.run(args, "").code, 0, "{args:?}");
    }
    for t in ["T1", "T2"] {
        let stop = p.subagent_stop(
            "other",
            "Something else.",
            &format!("<signal>{t}_FAILED: red</signal>"),
        );
        assert_eq!(p.hook(&stop).code, 0);
    }
    let run = p.run(&["projects", "set", "web", "T1", "COMPLETE"], "");
    assert_eq!(run.code, 0, "{run:?}");
    let ctx = p.hook(&p.payload("PostToolUse.Read.json")).context();
    assert!(!ctx.contains("T1 FAILED"), "{ctx}");
    assert!(
        ctx.starts_with("projects web: T2 FAILED (red); it is PENDING again"),
        "{ctx}"
    );
    assert_eq!(agents_file(&p)["notices"], json!([]));
}
