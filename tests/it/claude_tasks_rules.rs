//! claude-tasks against seed 002's rules (issue 14, items 1–6 and 17), through the real binary:
//! re-blocking on a reopened dependency, completions that skip dependencies, what the main
//! agent hears after `tasks_completed`, `blocked` with nothing to wait for, lists written by
//! other tools, the seed's two switches, and recovery that keeps what it can.

use serde_json::{json, Value};

use crate::claude_tasks::{
    create, doc, hook_ok, ids, list_a_then_b, ok, put, task, tasks_json, tool, update, write,
    write_at, LATER,
};
use crate::common::{Project, NOW};

/// What the main agent is told at its next tool call (empty when nothing).
fn main_context(p: &Project) -> String {
    let r = hook_ok(p, &p.payload("PostToolUse.Read.json"));
    if r.stdout.is_empty() {
        return String::new();
    }
    r.json()["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn a_reopened_dependency_blocks_its_started_dependants_again_and_says_so() {
    // tasks write
    let p = list_a_then_b();
    ok(&write(&p, &["--id", "a", "--status", "completed"]));
    ok(&write(&p, &["--id", "b", "--status", "in_progress"]));
    let r = write_at(&p, LATER, &["--id", "a", "--status", "pending"]);
    ok(&r);
    assert!(
        r.stderr.contains("blocked again") && r.stderr.contains("b (B)"),
        "{r:?}"
    );
    let d = doc(&p);
    assert_eq!(task(&d, "b")["status"], "blocked");
    assert_eq!(task(&d, "b")["updated_at"], LATER);
    // Completing it again makes b ready again (pending: its work is to be resumed).
    let r = write(&p, &["--id", "a", "--status", "completed"]);
    assert!(r.stderr.contains("now ready"), "{r:?}");
    assert_eq!(task(&doc(&p), "b")["status"], "pending");

    // the mirror
    let p = Project::new();
    hook_ok(&p, &create(&p, "1", "Write parser"));
    hook_ok(&p, &create(&p, "2", "Test parser"));
    hook_ok(
        &p,
        &update(&p, json!({"taskId": "2", "addBlockedBy": ["1"]})),
    );
    hook_ok(
        &p,
        &update(&p, json!({"taskId": "1", "status": "completed"})),
    );
    hook_ok(
        &p,
        &update(&p, json!({"taskId": "2", "status": "in_progress"})),
    );
    let r = hook_ok(&p, &update(&p, json!({"taskId": "1", "status": "pending"})));
    let ctx = r.context();
    assert!(
        ctx.contains("blocked again") && ctx.contains("2@s-1 (Test parser"),
        "{ctx}"
    );
    assert_eq!(task(&doc(&p), "2@s-1")["status"], "blocked");
}

#[test]
fn completions_with_unmet_dependencies_are_refused_on_every_path() {
    let p = list_a_then_b();
    let before = p.snapshot();
    let mut stop = p.payload("SubagentStop.json");
    stop["tasks_completed"] = json!(["b"]);
    let out = hook_ok(&p, &stop).json();
    assert!(
        out["hookSpecificOutput"].get("tasks_to_update").is_none(),
        "{out}"
    );
    let msg = out["systemMessage"].as_str().unwrap();
    assert!(
        msg.contains("b (B)") && msg.contains("a (A) [pending]") && msg.contains("not completed"),
        "{msg}"
    );
    // A _DONE signal is refused the same way.
    let mut stop = p.payload("SubagentStop.json");
    stop["last_assistant_message"] = json!("done\n<signal>b_DONE</signal>");
    let out = hook_ok(&p, &stop).json();
    assert!(
        out["hookSpecificOutput"].get("tasks_to_update").is_none(),
        "{out}"
    );
    assert!(
        out["systemMessage"].as_str().unwrap().contains("b (B)"),
        "{out}"
    );
    // Nothing changed in the list (agents.json holds the notices).
    let list = |s: std::collections::BTreeMap<std::path::PathBuf, String>| {
        s.into_iter()
            .filter(|(k, _)| k.starts_with("~"))
            .collect::<Vec<_>>()
    };
    assert_eq!(list(p.snapshot()), list(before));
    assert_eq!(task(&doc(&p), "b")["status"], "blocked");
    // The main agent hears it too.
    let ctx = main_context(&p);
    assert!(
        ctx.contains("b (B)") && ctx.contains("not completed"),
        "{ctx}"
    );
    // A dependency named in the same call counts, in any order.
    let mut stop = p.payload("SubagentStop.json");
    stop["tasks_completed"] = json!(["b", "a"]);
    let out = hook_ok(&p, &stop).json();
    assert_eq!(
        out["hookSpecificOutput"]["tasks_to_update"],
        json!([{"task_id": "b", "status": "completed"}, {"task_id": "a", "status": "completed"}])
    );
    let d = doc(&p);
    assert_eq!(task(&d, "a")["status"], "completed");
    assert_eq!(task(&d, "b")["status"], "completed");
}

#[test]
fn after_tasks_completed_the_main_agent_hears_what_became_ready_and_unknown_ids() {
    let p = list_a_then_b();
    let mut stop = p.payload("SubagentStop.json");
    stop["tasks_completed"] = json!(["a", "ghost"]);
    let out = hook_ok(&p, &stop).json();
    assert!(
        out["hookSpecificOutput"].get("additionalContext").is_none(),
        "{out}"
    );
    // The PostToolUse of the main agent's Agent call carries it.
    let mut agent = p.payload("PostToolUse.Agent.json");
    agent["cwd"] = json!(p.root.display().to_string());
    let ctx = hook_ok(&p, &agent).context();
    assert!(
        ctx.contains("completed task a of list proj") && ctx.contains("now ready: b (B)"),
        "{ctx}"
    );
    assert!(ctx.contains("ghost"), "{ctx}");
    // Once.
    assert!(!main_context(&p).contains("now ready"));
}

#[test]
fn blocked_with_nothing_to_wait_for_is_refused() {
    let p = list_a_then_b();
    let before = p.snapshot();
    for args in [
        vec!["--id", "a", "--status", "blocked"],
        vec!["--id", "c", "--description", "C", "--status", "blocked"],
    ] {
        let r = write(&p, &args);
        r.assert_one_line_error();
        assert!(r.stderr.contains("cannot be blocked"), "{r:?}");
    }
    assert_eq!(p.snapshot(), before);
    ok(&write(&p, &["--id", "a", "--status", "completed"]));
    let before = p.snapshot();
    let r = write(&p, &["--id", "b", "--status", "blocked"]);
    r.assert_one_line_error();
    assert!(
        r.stderr.contains("all of its dependencies are completed"),
        "{r:?}"
    );
    assert_eq!(p.snapshot(), before);
    // With a dependency not completed, `blocked` is what it is.
    let p = list_a_then_b();
    let b = ok(&write(&p, &["--id", "b", "--status", "blocked"]));
    assert_eq!(b["status"], "blocked");
}

const FOREIGN: &str = r#"{"tasks":[{"id":"a","description":"A","status":"completed","created_at":"2025-02-06T11:00:00+01:00","updated_at":"2025-02-06T11:30:00+01:00"},{"id":"b","description":"B","status":"pending","created_at":"2025-02-06T06:00:00-05:00","updated_at":"2025-02-06T06:00:00-05:00","dependencies":["a"]}],"last_updated":"2025-02-06T12:00:00+01:00"}"#;

#[test]
fn lists_with_offsets_and_no_version_are_read_and_normalised_at_the_next_write() {
    let p = Project::new();
    put(&tasks_json(&p), FOREIGN.as_bytes());
    let v = p.run(&["validate"], "");
    assert_eq!(v.code, 0, "{v:?}");
    let read = ok(&p.run(&["tasks", "read", "--include-completed"], ""));
    assert_eq!(read["count"], 2);
    let ctx = hook_ok(&p, &p.payload("SessionStart.startup.json")).context();
    assert!(ctx.contains("Ready: b (B)"), "{ctx}");
    // A write that changes nothing leaves the file as it is.
    ok(&write(&p, &["--id", "a", "--description", "A"]));
    assert_eq!(std::fs::read(tasks_json(&p)).unwrap(), FOREIGN.as_bytes());
    // The next real write normalises it: UTC with Z, version 2; only b is stamped.
    ok(&write(&p, &["--id", "b", "--status", "in_progress"]));
    let d = doc(&p);
    assert_eq!(d["version"], 2);
    assert_eq!(task(&d, "a")["created_at"], "2025-02-06T10:00:00Z");
    assert_eq!(task(&d, "a")["updated_at"], "2025-02-06T10:30:00Z");
    assert_eq!(task(&d, "b")["created_at"], "2025-02-06T11:00:00Z");
    assert_eq!(task(&d, "b")["updated_at"], NOW);
    assert_eq!(p.run(&["validate"], "").code, 0);
}

#[test]
fn enable_tasks_false_turns_the_task_tools_off_but_keeps_todowrite() {
    let p = Project::new();
    let off = |payload: &Value| {
        let mut c = p.cmd();
        c.env("CLAUDE_CODE_ENABLE_TASKS", "false");
        let r = p.run_with(c, &["hook"], serde_json::to_vec(payload).unwrap());
        assert_eq!(r.code, 0, "{r:?}");
        r
    };
    let before = p.snapshot();
    off(&create(&p, "1", "Write parser"));
    assert_eq!(p.snapshot(), before, "TaskCreate is not mirrored");
    let todos = tool(
        &p,
        "TodoWrite",
        json!({"todos": [{"content": "Write parser", "status": "pending", "activeForm": "x"}]}),
        json!({}),
    );
    off(&todos);
    assert_eq!(ids(&doc(&p)), ["todo-091774a950e1e8b3"]);
    // TaskCompleted is not refused while the task system is off.
    hook_ok(&p, &create(&p, "1", "Write parser"));
    hook_ok(&p, &create(&p, "2", "Test parser"));
    hook_ok(
        &p,
        &update(&p, json!({"taskId": "2", "addBlockedBy": ["1"]})),
    );
    let done = crate::claude_tasks::completed_event(&p, "2");
    assert_eq!(p.hook(&done).code, 2);
    let r = off(&done);
    assert!(r.stderr.is_empty(), "{r:?}");
}

#[test]
fn agent_teams_share_one_numbering() {
    let p = Project::new();
    // By default Claude Code's numbers are per session …
    hook_ok(&p, &create(&p, "1", "Write parser"));
    assert_eq!(ids(&doc(&p)), ["1@s-1"]);
    // … with agent teams, teammates number in one sequence: the bare number is the id.
    let mut c = p.cmd();
    c.env("CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS", "1");
    let payload = create(&p, "2", "Test parser");
    let r = p.run_with(c, &["hook"], serde_json::to_vec(&payload).unwrap());
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(ids(&doc(&p)), ["1@s-1", "2"]);
}

fn three_tasks_one_bad() -> Vec<u8> {
    let t = |id: &str, status: &str| {
        json!({"id": id, "description": id.to_uppercase(), "status": status,
               "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z"})
    };
    let d = json!({"tasks": [t("a", "completed"), t("b", "done"), t("c", "pending"),
                             t("a", "pending"), {"id": 7}],
                   "version": 2, "last_updated": "2026-01-01T00:00:00Z", "x_root": 1});
    serde_json::to_vec_pretty(&d).unwrap()
}

#[test]
fn recover_keeps_every_task_that_validates_and_dry_run_shows_it() {
    let p = Project::new();
    let bad = three_tasks_one_bad();
    put(&tasks_json(&p), &bad);
    let root = tasks_json(&p).parent().unwrap().to_path_buf();
    // Every message points at recovery that keeps what it can.
    let s = p.run(&["status"], "");
    assert!(
        s.stdout.contains("taskhook recover") && s.stdout.contains("--dry-run"),
        "{s:?}"
    );
    let before = p.snapshot();
    let dry = p.run(&["recover", "--dry-run", root.to_str().unwrap()], "");
    assert_eq!(dry.code, 0, "{dry:?}");
    assert_eq!(p.snapshot(), before, "a dry run writes nothing");
    let lines: Vec<&str> = dry.stdout.lines().collect();
    assert!(lines[0].contains("would keep 2 of 5 tasks"), "{dry:?}");
    assert!(lines.contains(&"  keep  a (A)"), "{dry:?}");
    assert!(lines.contains(&"  keep  c (C)"), "{dry:?}");
    assert!(
        lines.iter().any(|l| l.starts_with("  drop  b: /status")),
        "{dry:?}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("  drop  a: an earlier task has the same id")),
        "{dry:?}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("  drop  the task at position 5")),
        "{dry:?}"
    );
    let r = p.run(&["recover", root.to_str().unwrap()], "");
    assert_eq!(r.code, 0, "{r:?}");
    // The same lines, done.
    assert_eq!(
        r.stdout.lines().count(),
        dry.stdout.lines().count(),
        "{r:?}"
    );
    let d = doc(&p);
    assert_eq!(ids(&d), ["a", "c"]);
    assert_eq!(d["x_root"], 1);
    let aside: Vec<_> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with("tasks.json.corrupt-"))
        .collect();
    assert_eq!(aside.len(), 1);
    assert_eq!(std::fs::read(root.join(&aside[0])).unwrap(), bad);
    assert_eq!(p.run(&["validate"], "").code, 0);
    ok(&write(&p, &["--id", "b", "--description", "B again"]));
}

#[test]
fn recover_reads_a_cut_file_task_by_task() {
    let p = Project::new();
    ok(&write(&p, &["--id", "a", "--description", "A"]));
    ok(&write(
        &p,
        &["--id", "b", "--description", "B", "--dependency", "a"],
    ));
    ok(&write(&p, &["--id", "c", "--description", "C"]));
    let full = std::fs::read(tasks_json(&p)).unwrap();
    let text = String::from_utf8(full.clone()).unwrap();
    let cut = text.find("\"id\": \"c\"").unwrap();
    put(&tasks_json(&p), &full[..cut]);
    let root = tasks_json(&p).parent().unwrap().to_path_buf();
    let r = p.run(&["recover", root.to_str().unwrap()], "");
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stdout.contains("kept 2 of 2 tasks"), "{r:?}");
    assert!(r.stdout.contains("does not parse"), "{r:?}");
    assert_eq!(ids(&doc(&p)), ["a", "b"]);
}

/// Issue 20 item 19: the unknown-ids and refused-dependencies lines each read as one sentence
/// (a run of 14 spaces sat inside both), exactly as pinned here.
#[test]
fn unknown_and_refused_completions_are_told_in_one_sentence_each() {
    let p = list_a_then_b();
    let mut stop = p.payload("SubagentStop.json");
    stop["tasks_completed"] = json!(["b", "ghost"]);
    let out = hook_ok(&p, &stop).json();
    assert_eq!(
        out["systemMessage"],
        "taskhook: a subagent reported a task as completed that is not in task list proj: \
         ghost; nothing was changed for it.\n\
         taskhook: a subagent reported task b (B) as completed, but its dependencies are not \
         completed: a (A) [pending]; task list proj keeps it as it was (complete them first)."
    );
    stop["tasks_completed"] = json!(["ghost", "phantom"]);
    let out = hook_ok(&p, &stop).json();
    assert_eq!(
        out["systemMessage"],
        "taskhook: a subagent reported tasks as completed that are not in task list proj: \
         ghost, phantom; nothing was changed for them."
    );
    // The main agent hears the same lines.
    let ctx = main_context(&p);
    assert!(
        ctx.contains("but its dependencies are not completed: a (A) [pending]; task list")
            && ctx.contains("proj: ghost, phantom; nothing was changed for them."),
        "{ctx}"
    );
    assert!(!ctx.contains("  "), "{ctx}");
}

/// Issue 20 item 20: with no task list yet, an id in `tasks_completed` is unknown and said so
/// (it was dropped without a word); no list, lock or folder is created for it.
#[test]
fn an_unknown_completed_id_is_reported_when_no_list_exists_yet() {
    let p = Project::new();
    let mut stop = p.payload("SubagentStop.json");
    stop["tasks_completed"] = json!(["ghost"]);
    let out = hook_ok(&p, &stop).json();
    assert_eq!(
        out,
        json!({"systemMessage": "taskhook: a subagent reported a task as completed that is not \
               in task list proj: ghost; nothing was changed for it."})
    );
    assert!(!p.home.join(".claude/tasks").exists());
    assert!(main_context(&p).contains("not in task list proj: ghost"));
}
