//! Hooks drive the tasks: launches, signals, stops without a signal, research files,
//! checkpoints at PreCompact / SessionEnd, the edit rule, and what the main agent learns.

use serde_json::json;

use super::{assert_seed_log_format, silent, Proj};
use crate::common::NOW;

/// Seed 000's own format, written by hand: a hierarchy, unknown fields, a log entry.
const HAND_TASKS: &str = r#"{
  "tasks": [
    {"id": "T1", "title": "Parser", "status": "PENDING", "priority": "high",
     "estimate_minutes": 30, "created_at": "2026-03-01T09:00:00Z", "owner": "skill",
     "subtasks": [], "dependencies": []},
    {"id": "T2", "title": "Tests", "status": "PENDING", "estimate_minutes": 20,
     "created_at": "2026-03-01T09:01:00Z", "dependencies": ["T1"]}
  ],
  "generator": "task-state-skill"
}"#;

const HAND_LOG: &str = "# Progress\n\n## 2026-02-28T10:00:00Z — TASK_COMPLETE\n- Task: T0\n- Previous status: IN_PROGRESS\n- New status: COMPLETE\n- actual_minutes: 50\n- estimate_minutes: 40\n";

#[test]
fn a_store_written_by_hand_is_advanced_by_a_bound_subagent() {
    let pr = Proj::by_hand(
        "web",
        &[("tasks.json", HAND_TASKS), ("progress/log.md", HAND_LOG)],
    );
    let prompt = "Implement <task>T1</task> from .claude/projects/web/tasks.json.";
    // The launch starts T1.
    silent(&pr.launch("2026-03-01T11:00:00Z", prompt));
    let t1 = pr.task("T1");
    assert_eq!(t1["status"], "IN_PROGRESS");
    assert_eq!(t1["started_at"], "2026-03-01T11:00:00Z");
    assert_eq!(t1["owner"], "skill", "unknown fields kept");
    // The subagent signals done: COMPLETE, actual minutes, velocity from the whole log.
    let stop = pr.stop(
        "2026-03-01T11:42:00Z",
        "a1",
        prompt,
        "Parser written.\n<signal>T1_DONE</signal>",
    );
    silent(&stop);
    let t1 = pr.task("T1");
    assert_eq!(t1["status"], "COMPLETE");
    assert_eq!(t1["completed_at"], "2026-03-01T11:42:00Z");
    assert_eq!(t1["actual_minutes"], 42);
    assert_eq!(pr.tasks()["generator"], "task-state-skill");
    let v = pr.json("progress/velocity.json");
    assert_eq!(v["tasks_completed"], 2, "{v:#}");
    assert_eq!(v["total_estimate_minutes"], 70, "{v:#}");
    assert_eq!(v["total_actual_minutes"], 92, "{v:#}");
    // The log kept the hand-written entry and gained two in the seed's format.
    let log = pr.log();
    assert!(log.starts_with(HAND_LOG), "{log}");
    assert!(log.contains("## 2026-03-01T11:00:00Z — TASK_STARTED\n- Task: T1\n- Previous status: PENDING\n- New status: IN_PROGRESS\n"), "{log}");
    assert!(log.contains("## 2026-03-01T11:42:00Z — TASK_COMPLETE\n- Task: T1\n- Previous status: IN_PROGRESS\n- New status: COMPLETE\n- actual_minutes: 42\n- estimate_minutes: 30\n"), "{log}");
    assert_seed_log_format(&log);
    // The main agent learns it on the Agent call's PostToolUse.
    let back = pr.returned("2026-03-01T11:42:00Z", "a1", prompt);
    let ctx = back.context();
    assert!(
        ctx.contains(
            "projects web: T1 is COMPLETE (actual 42 min, estimate 30 min). Ready now: T2."
        ),
        "{ctx}"
    );
    pr.ok(&["validate"]);
}

#[test]
fn a_parent_task_is_never_launched() {
    let pr = Proj::new("web");
    pr.add("E1", &["--level", "epic"]);
    pr.add("S1", &["--parent", "E1"]);
    pr.add("S2", &["--parent", "E1", "--depends", "S1"]);
    assert_eq!(
        pr.status("E1"),
        "IN_PROGRESS",
        "decomposition starts the parent"
    );
    assert_eq!(pr.task("E1")["subtasks"], json!(["S1", "S2"]));
    assert_eq!(pr.task("S1")["level"], "story");
    let before = pr.read("tasks.json");
    let run = pr.launch(NOW, "Do <task>E1</task>");
    assert_eq!(run.code, 0, "{run:?}");
    let v = run.json();
    assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "deny");
    let why = v["hookSpecificOutput"]["permissionDecisionReason"]
        .as_str()
        .unwrap();
    assert!(
        why.contains("E1 is a parent task with subtasks S1 (PENDING), S2 (PENDING)")
            && why.contains("launch a subagent for a ready subtask instead: S1"),
        "{why}"
    );
    assert_eq!(
        pr.read("tasks.json"),
        before,
        "a refused launch changes nothing"
    );
    // A task whose dependencies are not COMPLETE is refused too, naming them.
    let run = pr.launch(NOW, "Do <task>web/S2</task>");
    let why = run.json()["hookSpecificOutput"]["permissionDecisionReason"].clone();
    assert!(
        why.as_str().unwrap().contains("S2 waits for S1 (PENDING)"),
        "{why}"
    );
    // The same through the command.
    let run = pr.p.run(&["projects", "start", "web", "E1"], "");
    run.assert_one_line_error();
    assert!(run.stderr.contains("parent task"), "{run:?}");
}

#[test]
fn a_parent_completes_when_its_last_subtask_does() {
    let pr = Proj::new("web");
    pr.add("E1", &["--phase", "build"]);
    pr.add("S1", &["--parent", "E1", "--estimate", "10"]);
    pr.add("S2", &["--parent", "E1", "--estimate", "10"]);
    pr.add("N1", &["--phase", "ship", "--depends", "E1"]);
    pr.subagent("2026-03-01T12:00:00Z", "S1", "<signal>S1_DONE</signal>");
    assert_eq!(pr.status("E1"), "IN_PROGRESS");
    pr.launch("2026-03-01T12:10:00Z", "<task>S2</task>");
    let [_, stop, back] = pr.subagent(
        "2026-03-01T12:30:00Z",
        "S2",
        "All done. <signal>S2_DONE</signal>",
    );
    silent(&stop);
    assert_eq!(pr.status("S2"), "COMPLETE");
    let e1 = pr.task("E1");
    assert_eq!(e1["status"], "COMPLETE");
    assert_eq!(e1["actual_minutes"], 20, "the sum of its subtasks");
    let ctx = back.context();
    assert!(
        ctx.contains("S2 is COMPLETE (actual 20 min, estimate 10 min). E1 is COMPLETE (all its subtasks are). Phase build is complete. Ready now: N1."),
        "{ctx}"
    );
    let events = pr.events();
    let tail: Vec<&str> = events
        .iter()
        .rev()
        .take(5)
        .rev()
        .map(String::as_str)
        .collect();
    assert_eq!(
        tail,
        [
            "TASK_STARTED",
            "TASK_COMPLETE",
            "TASK_COMPLETE",
            "PHASE_COMPLETE",
            "CHECKPOINT_WRITTEN"
        ],
        "{}",
        pr.log()
    );
    assert!(
        pr.log().contains("- Phase: build\n- Tasks: 3\n"),
        "{}",
        pr.log()
    );
    assert!(pr.log().contains(
        "- Checkpoint: checkpoints/checkpoint-001.json\n- Reason: phase build complete\n"
    ));
    assert_eq!(
        pr.read("checkpoints/checkpoint-001.json"),
        pr.read("tasks.json")
    );
    assert_eq!(pr.json("project.json")["phase"], "ship");
    // Velocity counts leaf tasks only.
    assert_eq!(pr.json("progress/velocity.json")["tasks_completed"], 2);
}

#[test]
fn blocked_and_failed_signals() {
    let pr = Proj::new("web");
    pr.add("T1", &[]);
    pr.add("T2", &[]);
    let [_, stop, back] = pr.subagent(NOW, "T1", "<signal>T1_BLOCKED: needs an API key</signal>");
    let v = stop.json();
    assert!(v["systemMessage"]
        .as_str()
        .unwrap()
        .contains("T1 is BLOCKED: needs an API key"));
    assert!(v.get("decision").is_none() && v.get("hookSpecificOutput").is_none());
    let t1 = pr.task("T1");
    assert_eq!(
        (t1["status"].as_str(), t1["blocked_reason"].as_str()),
        (Some("BLOCKED"), Some("needs an API key"))
    );
    assert!(back.context().contains(
        "A person must act, then run `taskhook projects set web T1 PENDING`. Ready: T2."
    ));
    assert!(pr.log().contains("TASK_BLOCKED\n- Task: T1\n- Previous status: IN_PROGRESS\n- New status: BLOCKED\n- Reason: needs an API key\n"));
    // A BLOCKED task is skipped by next, and not launched.
    let next = pr.ok(&["projects", "next", "web", "--json"]).json();
    assert_eq!(next["task"]["id"], "T2");
    assert_eq!(next["ready"], json!(["T2"]));
    assert!(pr.launch(NOW, "<task>T1</task>").stdout.contains("deny"));
    // FAILED: back to PENDING with an ERROR entry.
    let [_, _, back] = pr.subagent(NOW, "T2", "<signal>T2_FAILED: tests red</signal>");
    assert_eq!(pr.status("T2"), "PENDING");
    assert!(pr.log().contains("— ERROR\n- Task: T2\n- Previous status: IN_PROGRESS\n- New status: PENDING\n- Error: tests red\n"), "{}", pr.log());
    assert!(back
        .context()
        .contains("T2 FAILED (tests red); it is PENDING again"));
}

#[test]
fn a_bound_stop_without_a_signal_is_a_loop_iteration() {
    let pr = Proj::new("web");
    pr.add("T1", &[]);
    let [launch, stop, back] = pr.subagent(NOW, "T1", "I looked around.");
    silent(&launch);
    silent(&stop);
    assert_eq!(pr.status("T1"), "IN_PROGRESS");
    assert!(pr.log().contains(
        "— LOOP_ITERATION\n- Task: T1\n- Previous status: IN_PROGRESS\n- New status: IN_PROGRESS\n"
    ));
    assert!(back
        .context()
        .contains("stopped without a signal; T1 is still IN_PROGRESS"));
    // An unbound subagent without a signal changes nothing.
    let before = pr.log();
    silent(&pr.stop(NOW, "x", "look at the repo", "nothing"));
    assert_eq!(pr.log(), before);
}

#[test]
fn writing_a_research_file_makes_a_task_researched() {
    let pr = Proj::new("web");
    pr.add("T1", &[]);
    pr.add("T2", &[]);
    pr.ok(&["projects", "set", "web", "T2", "IN_RESEARCH"]);
    for (task, want) in [("T1", "RESEARCHED"), ("T2", "RESEARCHED")] {
        let file = pr.path(&format!("research/{task}.md"));
        std::fs::write(&file, "# Findings\n").unwrap();
        let mut v = pr.p.payload("PostToolUse.Write.json");
        v["tool_input"]["file_path"] = json!(file);
        silent(&pr.hook_at(NOW, &v));
        assert_eq!(pr.status(task), want);
    }
    assert!(pr.log().contains("— TASK_RESEARCHED\n- Task: T1\n- Previous status: PENDING\n- New status: RESEARCHED\n- Research: research/T1.md\n"));
    // Research of a task that is already further along changes nothing.
    pr.ok(&["projects", "start", "web", "T1"]);
    let before = pr.read("tasks.json");
    let mut v = pr.p.payload("PostToolUse.Write.json");
    v["tool_input"]["file_path"] = json!(pr.path("research/T1.md"));
    silent(&pr.hook_at(NOW, &v));
    assert_eq!(pr.read("tasks.json"), before);
}

#[test]
fn tenth_completion_writes_checkpoint_001_and_the_eleventh_checkpoint_rolls_the_oldest_out() {
    let pr = Proj::new("web");
    for i in 1..=12 {
        pr.add(&format!("T{i}"), &["--estimate", "5"]);
    }
    for i in 1..=9 {
        pr.ok(&["projects", "set", "web", &format!("T{i}"), "COMPLETE"]);
    }
    assert!(!pr.path("checkpoints/checkpoint-001.json").exists());
    // The 10th completion, by a subagent's signal.
    pr.subagent(NOW, "T10", "<signal>T10_DONE</signal>");
    assert_eq!(
        pr.read("checkpoints/checkpoint-001.json"),
        pr.read("tasks.json")
    );
    assert!(pr.log().contains("- Checkpoint: checkpoints/checkpoint-001.json\n- Reason: 10 task completions since the last checkpoint\n"));
    // Ten more checkpoints at PreCompact / SessionEnd, each after a change.
    for n in 2..=11 {
        pr.add(&format!("X{n}"), &[]);
        let event = if n % 2 == 0 {
            "PreCompact.manual.json"
        } else {
            "SessionEnd.other.json"
        };
        silent(&pr.hook_at(NOW, &pr.p.payload(event)));
    }
    let mut names: Vec<String> = std::fs::read_dir(pr.path("checkpoints"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    let want: Vec<String> = (2..=11)
        .map(|n| format!("checkpoint-{n:03}.json"))
        .collect();
    assert_eq!(names, want);
    assert_eq!(
        pr.read("checkpoints/checkpoint-011.json"),
        pr.read("tasks.json")
    );
    assert_eq!(
        pr.events()
            .iter()
            .filter(|e| *e == "CHECKPOINT_WRITTEN")
            .count(),
        11
    );
    // Nothing changed since: no new checkpoint.
    silent(&pr.hook_at(NOW, &pr.p.payload("SessionEnd.other.json")));
    assert!(!pr.path("checkpoints/checkpoint-012.json").exists());
}

/// What only the schema refuses (the typed list would take it) is refused like any invalid
/// list: the read that is its own schema check (issue 23) sends it to the whole check. A field
/// given twice, which that read does not take, is read by the whole reading as JSON reads it.
#[test]
fn what_only_the_schema_refuses_is_an_invalid_list() {
    for (task, valid) in [
        (r#"{"id": "T1", "status": "PENDING", "title": null}"#, false),
        (
            r#"{"id": "T1", "status": "PENDING", "stale_count": 1.5}"#,
            false,
        ),
        (
            r#"{"id": "T1", "status": "PENDING", "created_at": "2026-13-01T00:00:00Z"}"#,
            false,
        ),
        (
            r#"{"id": "T1", "status": "PENDING", "subtasks": [""]}"#,
            false,
        ),
        (
            r#"{"id": "T1", "status": "PENDING", "external_ids": {"JIRA": 1}}"#,
            false,
        ),
        (
            r#"{"id": "T1", "status": "PENDING", "level": "Epic"}"#,
            false,
        ),
        (
            r#"{"id": "T0", "status": "PENDING", "id": "T1", "stale_count": 2.0}"#,
            true,
        ),
    ] {
        let pr = Proj::new("web");
        pr.add("T1", &[]);
        std::fs::write(pr.path("tasks.json"), format!(r#"{{"tasks": [{task}]}}"#)).unwrap();
        let mut v = pr.p.payload("PostToolUse.Write.json");
        v["tool_input"]["file_path"] = json!(pr.path("tasks.json"));
        let run = pr.hook_at(NOW, &v);
        if valid {
            assert!(!run.stdout.contains("block"), "{task}: {run:?}");
            // The last `id` holds: T1, the one ready task.
            let next = pr.p.run(&["projects", "next", "web"], "");
            assert!(next.stdout.contains("T1"), "{task}: {next:?}");
        } else {
            let out = run.json();
            assert_eq!(out["decision"], "block", "{task}: {run:?}");
            assert!(
                out["reason"].as_str().unwrap().contains("projects-tasks"),
                "{task}: {run:?}"
            );
        }
    }
}

#[test]
fn an_edit_that_breaks_tasks_json_is_blocked_and_logged() {
    let pr = Proj::new("web");
    pr.add("T1", &[]);
    std::fs::write(
        pr.path("tasks.json"),
        r#"{"tasks": [{"id": "T1", "status": "done"}]}"#,
    )
    .unwrap();
    let mut v = pr.p.payload("PostToolUse.Write.json");
    v["tool_input"]["file_path"] = json!(pr.path("tasks.json"));
    let run = pr.hook_at(NOW, &v);
    let out = run.json();
    assert_eq!(out["decision"], "block", "{run:?}");
    assert!(out["reason"].as_str().unwrap().contains("projects-tasks"));
    let log = pr.log();
    assert!(
        log.contains("— ERROR\n- Error: an edit left tasks.json invalid:"),
        "{log}"
    );
}

#[test]
fn events_for_no_store_or_other_files_touch_nothing() {
    let pr = Proj::new("web");
    pr.add("T1", &[]);
    let before = pr.p.snapshot();
    let mut v = pr.p.payload("PostToolUse.Write.json");
    v["tool_input"]["file_path"] = json!(pr.p.root.join("src/main.rs"));
    silent(&pr.hook_at(NOW, &v));
    silent(&pr.launch(NOW, "look at <task>T9</task>"));
    silent(&pr.stop(NOW, "z", "unrelated", "<signal>T9_DONE</signal>"));
    assert_eq!(pr.p.snapshot(), before);
}
