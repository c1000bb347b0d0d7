//! `taskhook status` for people and for `--json`.

use serde_json::json;

use crate::common::Project;

#[test]
fn long_lists_are_cut_for_people_and_whole_in_json() {
    let p = Project::new();
    let tasks: Vec<_> = (1..=15)
        .map(|i| {
            json!({"id": format!("t{i:02}"), "description": format!("Task number {i}"), "status": "pending",
                   "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z",
                   "assignee": null, "dependencies": []})
        })
        .collect();
    let doc = json!({"tasks": tasks, "version": 2, "last_updated": "2026-01-01T00:00:00Z"});
    let path = p.home.join(".claude/tasks/proj/tasks.json");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, serde_json::to_vec_pretty(&doc).unwrap()).unwrap();
    let human = p.run(&["status"], "");
    assert_eq!(human.code, 0, "{human:?}");
    assert!(human.stdout.contains("t01  Task number 1"), "{human:?}");
    assert!(human.stdout.contains("… and 5 more"), "{human:?}");
    assert!(!human.stdout.contains("t15"), "{human:?}");
    assert!(!human.stdout.contains('\x1b'), "no colour off a terminal");
    let v = p.run(&["status", "--json"], "").json();
    assert_eq!(v["stores"][0]["ready"].as_array().unwrap().len(), 15);
    // The SessionStart context cuts the same list the same way.
    let ctx = p.hook(&p.payload("SessionStart.startup.json")).context();
    assert!(ctx.contains("and 5 more"), "{ctx}");
}

#[test]
fn an_empty_project_says_how_to_start() {
    let p = Project::new();
    let run = p.run(&["status"], "");
    assert_eq!(run.code, 0);
    assert!(run.stdout.contains("No taskhook stores found"), "{run:?}");
    assert!(run.stdout.contains("taskhook iterative new"), "{run:?}");
}

#[test]
fn the_status_line_says_what_is_in_progress_and_how_far() {
    let p = Project::new();
    let input = serde_json::to_vec(&json!({
        "hook_event_name": "Status",
        "session_id": "s",
        "cwd": p.root,
        "model": {"id": "claude-opus", "display_name": "Opus"},
        "workspace": {"current_dir": p.root, "project_dir": p.root}
    }))
    .unwrap();
    // No store: nothing to say.
    let run = p.run(&["statusline"], input.clone());
    assert_eq!((run.code, run.stdout.as_str()), (0, ""), "{run:?}");
    assert_eq!(
        p.run(
            &["iterative", "new", "s", "--task", "T1", "--task", "T2"],
            ""
        )
        .code,
        0
    );
    let mut stop = p.payload("SubagentStop.json");
    stop["last_assistant_message"] = json!("<signal>T1_DONE</signal>");
    assert_eq!(p.hook(&stop).code, 0);
    let run = p.run(&["statusline"], input);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.stdout.lines().count(), 1, "{run:?}");
    assert!(run.stdout.contains("▶ T1"), "{run:?}");
    assert!(run.stdout.contains("0/2 done"), "{run:?}");
    // Garbage in: one error line, exit 1.
    p.run(&["statusline"], "not json").assert_one_line_error();
}
