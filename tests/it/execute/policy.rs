//! One decision for whether a task may start, shared by the launch (hook and `taskhook execute
//! start`) and the resume plan: a stopped run (`taskhook execute stop`), an abandoned run, a
//! task whose earlier layer is not completed. The plan never proposes what the hook denies.

use serde_json::{json, Value};

use super::{silent, Exec};

/// The reason a PreToolUse of `Agent` was denied.
fn denied(run: &crate::common::Run) -> String {
    assert_eq!(run.code, 0, "{run:?}");
    let v = run.json();
    assert_eq!(
        v["hookSpecificOutput"]["permissionDecision"], "deny",
        "{run:?}"
    );
    v["hookSpecificOutput"]["permissionDecisionReason"]
        .as_str()
        .unwrap()
        .to_string()
}

fn plan_lines(e: &Exec) -> Vec<String> {
    let v = e.cmd(&["status", "--json"]).json();
    v["stores"][0]["plan_lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn execute_stop_refuses_launches_until_resume() {
    let e = Exec::init("shop", &["1-core=L1-001,L1-002"]);
    silent(&e.launch("L1-001"));
    let run = e.cmd(&["stop", "--reason", "budget review"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        run.stdout,
        "Stopped run shop: launches of its tasks are refused until `taskhook execute resume` (reason: budget review).\n"
    );
    let s = e.state();
    assert_eq!(s["status"], "stopped");
    assert_eq!(
        s["stop"],
        json!({"at": crate::common::NOW, "reason": "budget review"})
    );
    // New starts and relaunches alike are refused.
    assert_eq!(
        denied(&e.launch("L1-002")),
        "taskhook: execute shop: not starting L1-002: the run is stopped (budget review). `taskhook execute resume` continues a stopped run."
    );
    assert_eq!(
        denied(&e.launch("L1-001")),
        "taskhook: execute shop: not starting L1-001: the run is stopped (budget review). `taskhook execute resume` continues a stopped run."
    );
    let start = e.cmd(&["start", "L1-002"]);
    start.assert_one_line_error();
    assert_eq!(e.status("L1-002"), "pending");
    // The plan proposes nothing the hook would refuse.
    let lines = plan_lines(&e);
    assert!(
        lines.contains(&"Held: L1-001 (in_progress, attempt 1 of 5), L1-002: the run is stopped (budget review).".to_string()),
        "{lines:#?}"
    );
    assert!(
        !lines.iter().any(|l| l.starts_with("Execute:")
            || l.starts_with("Resume: L1-001")
            || l.starts_with("Resume: Continue")),
        "{lines:#?}"
    );
    // A session start keeps it stopped; stopping again says so.
    e.p.hook(&e.p.payload("SessionStart.startup.json"));
    assert_eq!(e.state()["status"], "stopped");
    let again = e.cmd(&["stop"]);
    assert_eq!(
        again.stdout,
        "Run shop is already stopped (since 2026-03-01T12:00:00Z: budget review).\n"
    );
    // resume lifts it.
    let out = e.cmd(&["resume"]).stdout;
    assert!(
        out.contains("changed: the run was stopped; it continues"),
        "{out}"
    );
    let s = e.state();
    assert_eq!(s["status"], "in_progress");
    assert!(s.get("stop").is_none(), "{s:#}");
    silent(&e.launch("L1-002"));
}

#[test]
fn execute_stop_answers_json_and_refuses_a_completed_run() {
    let e = Exec::init("shop", &["1-core=L1-001"]);
    let v = e.cmd(&["stop", "--json"]).json();
    assert_eq!(v["store"], "shop");
    assert_eq!(v["status"], "stopped");
    assert_eq!(v["stop"], json!({"at": crate::common::NOW}));
    e.cmd(&["resume"]);
    for cmd in [
        &["start", "L1-001"][..],
        &["done", "L1-001"],
        &["done", "L1-001"],
        &["merged", "L1-001"],
    ] {
        assert_eq!(e.cmd(cmd).code, 0, "{cmd:?}");
    }
    assert_eq!(e.state()["status"], "completed");
    let run = e.cmd(&["stop"]);
    run.assert_one_line_error();
    assert_eq!(
        run.stderr,
        "taskhook: run shop is completed; there is nothing to stop\n"
    );
}

#[test]
fn a_later_layers_task_waits_for_the_earlier_layers() {
    let e = Exec::init("app", &["1-core=L1-001,L1-002", "2-api=L2-001"]);
    let before = std::fs::read(e.file()).unwrap();
    assert_eq!(
        denied(&e.launch("L2-001")),
        "taskhook: execute app: not starting L2-001: its layer 2-api waits for layer 1-core (0/2 completed). Layers run in order: finish layer 1-core first (L1-001 pending, L1-002 pending)."
    );
    assert_eq!(std::fs::read(e.file()).unwrap(), before);
    let run = e.cmd(&["start", "L2-001"]);
    run.assert_one_line_error();
    assert_eq!(
        run.stderr,
        "taskhook: execute app: not starting L2-001: its layer 2-api waits for layer 1-core (0/2 completed). Layers run in order: finish layer 1-core first (L1-001 pending, L1-002 pending).\n"
    );
    // One task of the layer merged is not enough; both are.
    for id in ["L1-001", "L1-002"] {
        silent(&e.launch(id));
        e.cmd(&["done", id]);
        e.cmd(&["done", id]);
    }
    e.cmd(&["merged", "L1-001"]);
    assert!(denied(&e.launch("L2-001")).contains("(1/2 completed)"));
    e.cmd(&["merged", "L1-002"]);
    silent(&e.launch("L2-001"));
    assert_eq!(e.status("L2-001"), "in_progress");
}

fn stopped_layer() -> Value {
    let failed = |n: u64| {
        json!({"status": "failed", "attempts": n, "worktree_path": null, "branch": null,
            "retry_feedback": [{"attempt": n + 1, "feedback": "fix the test"}]})
    };
    json!({
        "schema_version": "2.0", "prd_slug": "shop", "status": "abandoned",
        "current_layer": "2-backend", "current_batch": 1,
        "started_at": "2026-03-01T11:00:00Z", "updated_at": "2026-03-01T11:30:00Z", "completed_at": null,
        "layers": {
            "1-core": {"status": "completed", "tasks_total": 1, "tasks_completed": 1, "tasks_failed": 0},
            "2-backend": {"status": "in_progress", "tasks_total": 3, "tasks_completed": 0, "tasks_failed": 2}
        },
        "tasks": {
            "L1-001": {"status": "completed", "attempts": 1, "worktree_path": null, "branch": null},
            "L2-004": {"status": "abandoned", "attempts": 5, "worktree_path": null, "branch": null},
            "L2-005": failed(2),
            "L2-006": {"status": "pending", "attempts": 0, "worktree_path": null, "branch": null}
        },
        "merge_queue": [],
        "metrics": {"total_tasks": 4, "completed_tasks": 1, "failed_tasks": 2, "total_attempts": 8,
            "total_commits": 0, "elapsed_time_seconds": 1800}
    })
}

#[test]
fn the_plan_never_proposes_a_launch_the_hook_denies() {
    let e = Exec::with_state("shop", &stopped_layer());
    let lines = plan_lines(&e);
    assert_eq!(
        lines,
        [
            "Layer 2-backend: 0/3 completed.",
            "Resume: Skip L2-004, stop layer 2-backend (L2-004 is abandoned after 5 attempts; `taskhook execute reset-task L2-004` gives it fresh attempts).",
            "Held: L2-005 (retry, attempt 3 of 5), L2-006: the run is abandoned (L2-004 failed 5 times and its layer is stopped).",
        ],
        "{lines:#?}"
    );
    // SessionStart's context and `status` say the same; neither lists them as ready.
    let ctx =
        e.p.hook(&e.p.payload("SessionStart.startup.json"))
            .context();
    assert!(!ctx.contains("Retry L2-005"), "{ctx}");
    assert!(!ctx.contains("Ready:"), "{ctx}");
    assert!(
        ctx.contains("L2-005 (held: the run is abandoned (L2-004 failed 5 times and its layer is stopped)); L2-006 (held: the run is abandoned"),
        "{ctx}"
    );
    let why = denied(&e.launch("L2-005"));
    assert_eq!(
        why,
        "taskhook: execute shop: not starting L2-005: the run is abandoned (L2-004 failed 5 times and its layer is stopped). Ask the user, or give L2-004 fresh attempts with `taskhook execute reset-task L2-004`."
    );
    // Once the abandoned task is reset, the plan retries L2-005 and the hook lets it start.
    e.cmd(&["reset-task", "L2-004"]);
    let lines = plan_lines(&e);
    assert!(
        lines.contains(
            &"Resume: Retry L2-005 (attempt 3 of 5; feedback: fix the test).".to_string()
        ),
        "{lines:#?}"
    );
    assert!(!lines.iter().any(|l| l.starts_with("Held")), "{lines:#?}");
    silent(&e.launch("L2-005"));
    assert_eq!(e.task("L2-005")["attempts"], 3);
}

#[test]
fn a_failed_task_with_no_attempts_left_is_never_launched_again() {
    let mut s = stopped_layer();
    s["status"] = json!("in_progress");
    s["tasks"]["L2-004"] = json!({"status": "pending", "attempts": 0});
    s["tasks"]["L2-005"]["attempts"] = json!(5);
    let e = Exec::with_state("shop", &s);
    let before = std::fs::read(e.file()).unwrap();
    assert_eq!(
        denied(&e.launch("L2-005")),
        "taskhook: execute shop: not starting L2-005: L2-005 has used all 5 attempts. `taskhook execute reset-task L2-005` gives it fresh attempts."
    );
    assert_eq!(std::fs::read(e.file()).unwrap(), before);
}
