//! SessionStart (CONTRACT §6.1): stale detection, reconciliation, temp clean-up, recovery of a
//! corrupt tasks.json, and the context.

use serde_json::json;

use super::{silent, Proj};
use crate::common::NOW;

#[test]
fn stale_once_goes_back_to_pending_twice_blocks() {
    let pr = Proj::new("web");
    pr.add("T1", &["--estimate", "30", "--priority", "high"]);
    pr.add("T2", &[]);
    std::fs::write(pr.path("research/T1.md"), "findings").unwrap();
    // Started 3 hours ago: more than 4 × 30 minutes.
    pr.run_at("2026-03-01T09:00:00Z", &["projects", "start", "web", "T1"]);
    let run = pr.session(NOW, "compact");
    let ctx = run.context();
    assert!(
        ctx.contains(
            "Stale: T1 (Task T1; reset to PENDING: IN_PROGRESS 180 min, over 4 × 30 min estimate)."
        ),
        "{ctx}"
    );
    let t1 = pr.task("T1");
    assert_eq!(t1["status"], "PENDING");
    assert_eq!(t1["stale_count"], 1);
    assert_eq!(t1["estimate_minutes"], 30, "estimate untouched");
    assert!(pr.path("research/T1.md").exists(), "research kept");
    let log = pr.log();
    assert!(log.contains("— ERROR\n- Task: T1\n- Previous status: IN_PROGRESS\n- New status: PENDING\n- Error: stale task reset: IN_PROGRESS for 180 min since 2026-03-01T09:00:00Z, over 4 × its 30 min estimate, with no TASK_COMPLETE logged; reset to PENDING (estimate and research kept)\n- stale_count: 1\n"), "{log}");
    // Stale a second time: BLOCKED, skipped by next.
    pr.run_at("2026-03-01T12:00:00Z", &["projects", "start", "web", "T1"]);
    let run = pr.session("2026-03-01T15:00:00Z", "resume");
    assert!(
        run.context()
            .contains("Blocked: T1 (Task T1; Stale twice — requires human review)."),
        "{}",
        run.context()
    );
    let t1 = pr.task("T1");
    assert_eq!(t1["status"], "BLOCKED");
    assert_eq!(t1["blocked_reason"], "Stale twice — requires human review");
    assert_eq!(t1["stale_count"], 2);
    assert!(pr.log().contains("— TASK_BLOCKED\n- Task: T1\n- Previous status: IN_PROGRESS\n- New status: BLOCKED\n- Reason: Stale twice — requires human review\n"));
    let next = pr.ok(&["projects", "next", "web", "--json"]).json();
    assert_eq!(next["task"]["id"], "T2");
    // A person acts: PENDING again, the stale count starts over.
    pr.ok(&["projects", "set", "web", "T1", "PENDING"]);
    assert_eq!(pr.task("T1")["stale_count"], 0);
    assert_eq!(pr.task("T1")["blocked_reason"], json!(null));
}

#[test]
fn a_task_completed_in_the_log_is_not_stale_but_complete() {
    let pr = Proj::new("web");
    pr.add("T1", &["--estimate", "10"]);
    pr.run_at("2026-03-01T09:00:00Z", &["projects", "start", "web", "T1"]);
    // The log says it completed (the tasks.json write was lost).
    let mut log = pr.log();
    log.push_str("## 2026-03-01T09:20:00Z — TASK_COMPLETE\n- Task: T1\n- Previous status: IN_PROGRESS\n- New status: COMPLETE\n- actual_minutes: 20\n\n");
    std::fs::write(pr.path("progress/log.md"), &log).unwrap();
    pr.session(NOW, "compact");
    assert_eq!(pr.status("T1"), "COMPLETE", "finished from the log");
    assert_eq!(pr.task("T1")["completed_at"], "2026-03-01T09:20:00Z");
    assert_eq!(pr.task("T1")["actual_minutes"], 20);
    assert_eq!(pr.task("T1").get("stale_count"), None);
    assert_eq!(pr.json("progress/velocity.json")["tasks_completed"], 1);
}

#[test]
fn reconciliation_on_startup_and_resume_not_on_compact() {
    let pr = Proj::new("web");
    for t in ["A", "B", "C", "D", "E", "F"] {
        pr.add(t, &[]);
    }
    pr.ok(&["projects", "start", "web", "A"]);
    pr.ok(&["projects", "set", "web", "B", "IN_RESEARCH"]);
    pr.ok(&["projects", "set", "web", "C", "VALIDATING"]);
    pr.ok(&["projects", "set", "web", "D", "COMPLETE"]);
    pr.ok(&[
        "projects",
        "set",
        "web",
        "E",
        "BLOCKED",
        "--reason",
        "waiting on legal",
    ]);
    pr.ok(&["projects", "set", "web", "F", "CANCELLED"]);
    // A's research is fresh (newer than its created_at); C's predates the task.
    std::fs::write(pr.path("research/A.md"), "fresh").unwrap();
    std::fs::write(pr.path("research/C.md"), "old").unwrap();
    pr.age("research/C.md", 3600);
    for source in ["compact", "clear", "fork"] {
        let before = pr.p.snapshot();
        pr.session(NOW, source);
        assert_eq!(pr.p.snapshot(), before, "{source} resets nothing");
    }
    let run = pr.session(NOW, "startup");
    let ctx = run.context();
    assert!(ctx.contains("Reconciled: A was IN_PROGRESS when the last session ended: now RESEARCHED (research/A.md is newer than its created_at)."), "{ctx}");
    assert!(
        ctx.contains("Reconciled: B was IN_RESEARCH when the last session ended: reset to PENDING"),
        "{ctx}"
    );
    let got: Vec<String> = ["A", "B", "C", "D", "E", "F"]
        .iter()
        .map(|t| pr.status(t))
        .collect();
    assert_eq!(
        got,
        [
            "RESEARCHED",
            "PENDING",
            "PENDING",
            "COMPLETE",
            "BLOCKED",
            "CANCELLED"
        ]
    );
    let log = pr.log();
    assert!(log.contains("— TASK_RESEARCHED\n- Task: A\n- Previous status: IN_PROGRESS\n- New status: RESEARCHED\n"), "{log}");
    assert!(
        log.contains("— ERROR\n- Task: C\n- Previous status: VALIDATING\n- New status: PENDING\n"),
        "{log}"
    );
    // Nothing left to do: a second startup writes nothing.
    let before = pr.p.snapshot();
    pr.session(NOW, "resume");
    assert_eq!(pr.p.snapshot(), before);
    // `taskhook reconcile` is a startup too.
    pr.ok(&["projects", "start", "web", "B"]);
    let run = pr.ok(&["reconcile", "--dry-run", "--json"]).json();
    assert!(run["changed"]
        .as_array()
        .unwrap()
        .iter()
        .any(|p| p.as_str().unwrap().ends_with("tasks.json")));
    assert_eq!(pr.status("B"), "IN_PROGRESS", "dry run");
    pr.ok(&["reconcile"]);
    assert_eq!(pr.status("B"), "PENDING");
}

#[test]
fn old_temp_files_are_removed() {
    let pr = Proj::new("web");
    std::fs::write(pr.path("temp/.write-old"), "x").unwrap();
    std::fs::write(pr.path("temp/.write-new"), "y").unwrap();
    pr.real_age("temp/.write-old", 600);
    let run = pr.session(NOW, "compact");
    assert!(
        run.context()
            .contains("removed 1 abandoned temp file(s) older than 5 minutes"),
        "{:?}",
        run
    );
    assert!(!pr.path("temp/.write-old").exists());
    assert!(pr.path("temp/.write-new").exists());
}

/// A store with history: checkpoint-001 after ten completions, more work after it.
fn store_with_history() -> Proj {
    let pr = Proj::new("web");
    for i in 1..=13 {
        pr.add(&format!("T{i}"), &["--estimate", "5"]);
    }
    for i in 1..=10 {
        pr.ok(&["projects", "set", "web", &format!("T{i}"), "COMPLETE"]);
    }
    assert!(pr.path("checkpoints/checkpoint-001.json").exists());
    pr.run_at(
        "2026-03-01T12:05:00Z",
        &["projects", "set", "web", "T11", "COMPLETE"],
    );
    pr.run_at("2026-03-01T12:06:00Z", &["projects", "start", "web", "T12"]);
    pr.run_at(
        "2026-03-01T12:07:00Z",
        &[
            "projects",
            "set",
            "web",
            "T13",
            "BLOCKED",
            "--reason",
            "needs a key",
        ],
    );
    pr
}

#[test]
fn a_corrupt_tasks_json_is_restored_from_the_newest_valid_checkpoint_and_the_log() {
    let pr = store_with_history();
    // A newer checkpoint that is itself corrupt, and a torn tasks.json.
    std::fs::write(
        pr.path("checkpoints/checkpoint-002.json"),
        "{\"tasks\": [{\"id\"",
    )
    .unwrap();
    let bad = b"{\"tasks\": [{\"id\": \"T1\", \"status\": \"COMP";
    std::fs::write(pr.path("tasks.json"), bad).unwrap();
    // status says so before anything is written.
    let st = pr.ok(&["status", "--json"]).json();
    let problems = st["stores"][0]["problems"].to_string();
    assert!(problems.contains("tasks.json was unusable"), "{problems}");
    let run = pr.session("2026-03-01T12:30:00Z", "startup");
    let ctx = run.context();
    assert!(ctx.contains("restored 13 task(s) from checkpoints/checkpoint-001.json (checkpoint-002.json unusable), brought forward by 3 log entries written after it"), "{ctx}");
    // The torn file could not be read whole: no claim that nothing was lost.
    assert!(ctx.contains("; tasks.json could not be read whole, so a task it held that neither checkpoints/checkpoint-001.json nor progress/log.md names (one added since that checkpoint) is lost and cannot be named"), "{ctx}");
    assert!(!ctx.contains("nothing lost"), "{ctx}");
    // Restored, then brought forward; reconciliation then ran on the result (T12 was IN_PROGRESS).
    assert_eq!(pr.status("T10"), "COMPLETE");
    assert_eq!(pr.status("T11"), "COMPLETE");
    assert_eq!(pr.task("T11")["completed_at"], "2026-03-01T12:05:00Z");
    assert_eq!(pr.task("T13")["blocked_reason"], "needs a key");
    assert_eq!(pr.status("T12"), "PENDING");
    // The bad bytes are kept aside, the restoration logged.
    let aside: Vec<_> = std::fs::read_dir(pr.dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with("tasks.json.corrupt-"))
        .collect();
    assert_eq!(aside.len(), 1, "{aside:?}");
    assert_eq!(std::fs::read(pr.path(&aside[0])).unwrap(), bad);
    assert!(
        pr.log()
            .contains("- Error: tasks.json was unusable (not valid JSON"),
        "{}",
        pr.log()
    );
    assert!(pr
        .log()
        .contains(&format!("kept its bytes in {}", aside[0])));
    pr.ok(&["validate"]);
}

#[test]
fn partial_recovery_keeps_what_validates_and_says_what_was_lost() {
    let pr = store_with_history();
    // checkpoint-001 with one task that no longer validates; tasks.json schema-invalid.
    let mut cp = pr.json("checkpoints/checkpoint-001.json");
    cp["tasks"][1]["status"] = json!("done");
    std::fs::write(pr.path("checkpoints/checkpoint-001.json"), cp.to_string()).unwrap();
    let mut now = pr.tasks();
    now["tasks"][1]["status"] = json!("finished");
    now["tasks"][2]["title"] = json!("Renamed after the checkpoint");
    std::fs::write(pr.path("tasks.json"), now.to_string()).unwrap();
    let out = pr.ok(&["recover", ".claude/projects/web"]);
    assert!(
        out.stdout.contains("lost (no valid copy anywhere): T2"),
        "{out:?}"
    );
    let ids = pr.ids();
    assert!(!ids.contains(&"T2".to_string()));
    assert_eq!(ids.len(), 12);
    assert_eq!(
        pr.task("T3")["title"],
        "Renamed after the checkpoint",
        "the damaged file's valid tasks are newer"
    );
    // Recovering a valid file does nothing.
    let out = pr.ok(&["recover", ".claude/projects/web"]);
    assert!(out.stdout.contains("nothing to recover"), "{out:?}");
}

#[test]
fn with_nothing_to_restore_from_writes_are_refused() {
    let pr = Proj::new("web");
    std::fs::write(pr.path("tasks.json"), "garbage").unwrap();
    let run =
        pr.p.run(&["projects", "add", "web", "T1", "--title", "x"], "");
    run.assert_one_line_error();
    assert!(run.stderr.contains("no valid checkpoint"), "{run:?}");
    assert_eq!(pr.read("tasks.json"), "garbage");
    let run = pr.session(NOW, "startup");
    assert!(run.context().contains("no valid checkpoint"), "{run:?}");
    assert_eq!(pr.read("tasks.json"), "garbage");
}

#[test]
fn the_context_lists_work_ready_blocked_research_and_velocity() {
    let pr = Proj::new("web");
    pr.add("T1", &["--estimate", "30"]);
    pr.add("T2", &["--priority", "low"]);
    pr.add("T3", &["--priority", "critical", "--estimate", "15"]);
    pr.add("T4", &["--depends", "T1"]);
    pr.add("T5", &[]);
    pr.run_at("2026-03-01T11:00:00Z", &["projects", "start", "web", "T1"]);
    pr.run_at("2026-03-01T11:00:00Z", &["projects", "start", "web", "T5"]);
    pr.run_at(
        "2026-03-01T11:40:00Z",
        &["projects", "set", "web", "T5", "COMPLETE"],
    );
    pr.ok(&[
        "projects",
        "set",
        "web",
        "T2",
        "BLOCKED",
        "--reason",
        "design review",
    ]);
    std::fs::write(pr.path("research/T3.md"), "notes").unwrap();
    pr.age("research/T3.md", 2 * 3600);
    std::fs::write(pr.path("research/T4.md"), "old notes").unwrap();
    pr.age("research/T4.md", 30 * 3600);
    let ctx = pr.session(NOW, "compact").context();
    for want in [
        "taskhook · projects \"web\" (Web app), .claude/projects/web/: 5 task(s) (2 PENDING, 1 IN_PROGRESS, 1 COMPLETE, 1 BLOCKED)",
        "In progress: T1 (Task T1; IN_PROGRESS, since 2026-03-01T11:00:00Z, estimate 30 min).",
        "Ready: T3 (Task T3; priority critical, estimate 15 min).",
        "Blocked: T2 (Task T2; design review).",
        "Research to reuse (under 24 h): T3 (research/T3.md, 2 h old).",
        "Velocity: 1 task(s) completed.",
        "<task>web/TASK</task>",
    ] {
        assert!(ctx.contains(want), "missing {want:?} in\n{ctx}");
    }
    assert!(!ctx.contains("T4.md"), "{ctx}");
}

#[test]
fn a_task_added_after_the_newest_checkpoint_and_lost_is_named() {
    let pr = store_with_history();
    pr.add("T14", &["--estimate", "5"]);
    // A tear inside T14, the last task: its id is there, its object is not whole.
    let text = pr.read("tasks.json");
    let cut = text.find("\"id\": \"T14\"").unwrap() + "\"id\": \"T14\",".len();
    std::fs::write(pr.path("tasks.json"), &text[..cut]).unwrap();
    let run = pr.session("2026-03-01T12:30:00Z", "startup");
    let ctx = run.context();
    assert!(
        ctx.contains("; lost (no valid copy anywhere): T14"),
        "{ctx}"
    );
    assert!(!ctx.contains("nothing lost"), "{ctx}");
    assert!(
        ctx.contains("kept the 13 task(s) of the damaged file that still validate"),
        "the tasks before the tear are read: {ctx}"
    );
    assert_eq!(pr.tasks()["tasks"].as_array().unwrap().len(), 13);
    assert_eq!(pr.task("T3")["title"], "Task T3");
}

#[test]
fn a_list_that_cannot_be_read_at_all_never_claims_nothing_was_lost() {
    let pr = store_with_history();
    pr.add("T14", &[]);
    std::fs::write(pr.path("tasks.json"), "garbage").unwrap();
    let out = pr.ok(&["recover", ".claude/projects/web"]);
    assert!(!out.stdout.contains("nothing lost"), "{out:?}");
    assert!(
        out.stdout.ends_with("; tasks.json could not be read whole, so a task it held that neither checkpoints/checkpoint-001.json nor progress/log.md names (one added since that checkpoint) is lost and cannot be named.\n"),
        "{out:?}"
    );
}

#[test]
fn a_task_held_valid_in_an_older_checkpoint_is_recovered_from_it() {
    let pr = store_with_history();
    // checkpoint-002 at a PreCompact, holding T2 in a shape that no longer validates.
    silent(&pr.hook_at(NOW, &pr.p.payload("PreCompact.manual.json")));
    let mut cp = pr.json("checkpoints/checkpoint-002.json");
    assert_eq!(cp["tasks"][1]["id"], "T2");
    cp["tasks"][1]["status"] = json!("done");
    std::fs::write(pr.path("checkpoints/checkpoint-002.json"), cp.to_string()).unwrap();
    let mut now = pr.tasks();
    now["tasks"][1]["status"] = json!("finished");
    std::fs::write(pr.path("tasks.json"), now.to_string()).unwrap();
    let out = pr.ok(&["recover", ".claude/projects/web"]);
    assert!(
        out.stdout
            .contains("; recovered T2 from checkpoints/checkpoint-001.json, the newest valid copy"),
        "{out:?}"
    );
    assert!(out.stdout.contains("; nothing lost"), "{out:?}");
    assert!(!out.stdout.contains("no valid copy anywhere"), "{out:?}");
    let t2 = pr.task("T2");
    assert_eq!(t2["status"], "COMPLETE");
    let ids = pr.ids();
    assert_eq!(ids.len(), 13, "{ids:?}");
    assert_eq!(ids[1], "T2", "kept in its place");
}
