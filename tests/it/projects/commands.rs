//! `taskhook projects …` and the global commands on a seed-000 store: what they write, the
//! seed's write protocol (validated first, ERROR logged, nothing else touched), the log only
//! ever growing, hostile input.

use serde_json::{json, Value};

use super::{assert_seed_log_format, Proj};
use crate::common::{Project, NOW};

#[test]
fn new_creates_the_seed_layout() {
    let p = Project::new();
    let run = p.run(
        &[
            "projects", "new", "web", "--name", "Web app", "--phase", "build", "--json",
        ],
        "",
    );
    assert_eq!(run.code, 0, "{run:?}");
    let v = run.json();
    assert_eq!(v["project"]["id"], "web");
    let dir = p.root.join(".claude/projects/web");
    for f in [
        "project.json",
        "tasks.json",
        "progress/log.md",
        "progress/velocity.json",
    ] {
        assert!(dir.join(f).is_file(), "{f}");
    }
    for d in ["research", "checkpoints", "temp"] {
        assert!(dir.join(d).is_dir(), "{d}");
    }
    assert_eq!(
        std::fs::read_to_string(dir.join("tasks.json")).unwrap(),
        "{\n  \"tasks\": []\n}\n"
    );
    let project: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("project.json")).unwrap()).unwrap();
    assert_eq!(
        project,
        json!({"id": "web", "name": "Web app", "status": "active", "phase": "build",
               "created_at": NOW, "updated_at": NOW, "current_task": null})
    );
    assert_eq!(
        std::fs::read_dir(dir.join("temp")).unwrap().count(),
        0,
        "temp files renamed away"
    );
    let again = p.run(&["projects", "new", "web"], "");
    again.assert_one_line_error();
    assert!(again.stderr.contains("already exists"));
    for bad in ["../x", ".hidden", "a/b"] {
        let run = p.run(&["projects", "new", bad], "");
        run.assert_one_line_error();
    }
    assert!(!p.root.join(".claude/x").exists());
    let v = p.run(&["validate", "--json"], "");
    assert_eq!(v.code, 0, "{v:?}");
}

#[test]
fn tasks_are_added_in_creation_order_with_the_seed_fields() {
    let pr = Proj::new("web");
    let run = pr.ok(&[
        "projects",
        "add",
        "web",
        "T1",
        "--title",
        "Parser",
        "--estimate",
        "30",
        "--priority",
        "high",
        "--phase",
        "build",
        "--json",
    ]);
    assert_eq!(
        run.json()["task"],
        json!({"id": "T1", "title": "Parser", "status": "PENDING", "priority": "high", "phase": "build",
               "parent_id": null, "subtasks": [], "dependencies": [], "estimate_minutes": 30,
               "actual_minutes": null, "created_at": NOW, "started_at": null, "completed_at": null,
               "blocked_reason": null})
    );
    pr.add("T2", &["--depends", "T1", "--priority", "2"]);
    assert_eq!(pr.task("T2")["priority"], 2);
    let ids: Vec<&str> = vec!["T1", "T2"];
    let tasks = pr.tasks();
    let got: Vec<&str> = tasks["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap())
        .collect();
    assert_eq!(got, ids);
    for (args, want) in [
        (vec!["T1", "--title", "x"], "already exists"),
        (
            vec!["T3", "--title", "x", "--depends", "T9"],
            "unknown dependency",
        ),
        (
            vec!["T3", "--title", "x", "--parent", "T9"],
            "unknown parent",
        ),
        (vec!["../T3", "--title", "x"], "invalid task id"),
    ] {
        let mut a = vec!["projects", "add", "web"];
        a.extend(args);
        let run = pr.p.run(&a, "");
        run.assert_one_line_error();
        assert!(run.stderr.contains(want), "{want}: {run:?}");
    }
    let run =
        pr.p.run(&["projects", "add", "nope", "T1", "--title", "x"], "");
    run.assert_one_line_error();
    assert!(run.stderr.contains("taskhook projects new nope"), "{run:?}");
}

#[test]
fn a_validation_failure_leaves_tasks_json_byte_identical_and_logs_error() {
    let pr = Proj::new("web");
    pr.add("T1", &[]);
    let before = pr.read("tasks.json");
    let log_before = pr.log();
    let run = pr.p.run(
        &[
            "projects",
            "add",
            "web",
            "T2",
            "--title",
            "x",
            "--estimate",
            "-5",
        ],
        "",
    );
    run.assert_one_line_error();
    assert!(
        run.stderr.contains("would not match schema projects-tasks"),
        "{run:?}"
    );
    assert_eq!(pr.read("tasks.json"), before);
    let log = pr.log();
    assert!(log.starts_with(&log_before));
    // No status is claimed that was never written (issue 20, item 19).
    let dir = pr.dir().display().to_string();
    assert_eq!(
        &log[log_before.len()..],
        format!("## {NOW} — ERROR\n- Task: T2\n- Error: refusing to write `{dir}/tasks.json`: it would not match schema projects-tasks: /tasks/1/estimate_minutes: -5 is less than the minimum of 0\n- Not written: T2 as a new PENDING task\n\n")
    );
    assert_eq!(std::fs::read_dir(pr.path("temp")).unwrap().count(), 0);
}

#[test]
fn the_log_is_a_prefix_of_itself_after_every_step() {
    let pr = Proj::new("web");
    let mut last = pr.log();
    let mut check = |what: &str| {
        let now = pr.log();
        assert!(
            now.starts_with(&last),
            "{what} rewrote the log:\n{last}\n---\n{now}"
        );
        last = now;
    };
    pr.add("E1", &["--phase", "one"]);
    check("add");
    pr.add("S1", &["--parent", "E1", "--estimate", "5"]);
    check("decompose");
    pr.subagent(NOW, "S1", "no signal yet");
    check("loop iteration");
    pr.subagent(NOW, "S1", "<signal>S1_FAILED: flaky</signal>");
    check("failed");
    pr.subagent(NOW, "S1", "<signal>S1_DONE</signal>");
    check("done, parent, phase, checkpoint");
    pr.ok(&[
        "projects",
        "log",
        "web",
        "SYNC_TO_JIRA",
        "--task",
        "S1",
        "--detail",
        "WEB-7",
    ]);
    check("sync");
    pr.session("2026-03-02T12:00:00Z", "startup");
    check("session");
    pr.hook_at(NOW, &pr.p.payload("PreCompact.manual.json"));
    check("precompact");
    assert_seed_log_format(&pr.log());
    let events = pr.events();
    for e in [
        "TASK_STARTED",
        "LOOP_ITERATION",
        "ERROR",
        "TASK_COMPLETE",
        "PHASE_COMPLETE",
        "CHECKPOINT_WRITTEN",
        "SYNC_TO_JIRA",
    ] {
        assert!(events.iter().any(|x| x == e), "{e} missing: {events:?}");
    }
}

#[test]
fn sync_entries_carry_the_external_id() {
    let pr = Proj::new("web");
    pr.add("T1", &[]);
    let run = pr.ok(&[
        "projects",
        "log",
        "web",
        "SYNC_TO_JIRA",
        "--task",
        "T1",
        "--detail",
        "WEB-42",
    ]);
    assert_eq!(run.stdout, format!("## {NOW} — SYNC_TO_JIRA\n- Task: T1\n- Previous status: PENDING\n- New status: PENDING\n- External ID: WEB-42\n"));
    assert_eq!(pr.task("T1")["external_ids"], json!({"JIRA": "WEB-42"}));
    pr.ok(&["projects", "log", "web", "ERROR", "--detail", "CI is down"]);
    assert!(pr.log().ends_with("— ERROR\n- Error: CI is down\n\n"));
    for (args, want) in [
        (vec!["SYNC_TO_JIRA", "--task", "T1"], "external id"),
        (vec!["TASK_COMPLETE", "--task", "T1"], "projects set"),
        (vec!["sync_to_", "--detail", "x"], "SYNC_TO_{PLATFORM}"),
        (vec!["LOOP_ITERATION"], "--task"),
        (vec!["ERROR", "--task", "T9", "--detail", "x"], "no task T9"),
    ] {
        let mut a = vec!["projects", "log", "web"];
        a.extend(args);
        let run = pr.p.run(&a, "");
        // A wrong command line is a usage error (exit 2); a task that is not there, a refusal.
        run.assert_one_line_exit(if want == "no task T9" { 1 } else { 2 });
        assert!(run.stderr.contains(want), "{want}: {run:?}");
    }
}

#[test]
fn start_set_next_and_velocity() {
    let pr = Proj::new("web");
    pr.add("T1", &["--estimate", "30", "--priority", "low"]);
    pr.add("T2", &["--estimate", "10", "--priority", "high"]);
    pr.add("T3", &["--depends", "T2"]);
    let next = pr.ok(&["projects", "next", "web"]);
    assert_eq!(
        next.stdout,
        "T2  PENDING  Task T2  priority high  estimate 10 min\nalso ready: T1\n"
    );
    let run = pr
        .run_at(
            "2026-03-01T11:00:00Z",
            &["projects", "start", "web", "T2", "--json"],
        )
        .json();
    assert_eq!(
        (run["previous_status"].as_str(), run["status"].as_str()),
        (Some("PENDING"), Some("IN_PROGRESS"))
    );
    assert_eq!(pr.json("project.json")["current_task"], "T2");
    let run = pr.ok(&["projects", "set", "web", "T2", "complete"]);
    assert_eq!(
        run.stdout,
        "T2: IN_PROGRESS → COMPLETE (actual 60 min)\nready now: T3\n"
    );
    assert_eq!(pr.json("project.json")["current_task"], json!(null));
    let v = pr.ok(&["projects", "velocity", "web", "--json"]).json();
    assert_eq!(
        (v["tasks_completed"].as_u64(), v["ratio"].as_f64()),
        (Some(1), Some(6.0))
    );
    let line = pr.ok(&["projects", "velocity", "web"]).stdout;
    assert_eq!(
        line,
        "web: 1 task(s) completed; 60 min actual vs 10 min estimated (×6.00)\n"
    );
    assert_eq!(pr.json("progress/velocity.json")["tasks_completed"], 1);
    let run = pr.p.run(&["projects", "set", "web", "T1", "DONE"], "");
    run.assert_one_line_usage_error();
    assert!(run.stderr.contains("unknown status"), "{run:?}");
    pr.ok(&["projects", "set", "web", "T1", "CANCELLED"]);
    pr.ok(&["projects", "set", "web", "T3", "COMPLETE"]);
    let next = pr.ok(&["projects", "next", "web", "--json"]).json();
    assert_eq!(next, json!({"task": null, "ready": []}));
    assert_eq!(
        pr.ok(&["projects", "next", "web"]).stdout,
        "Every task is COMPLETE or CANCELLED.\n"
    );
}

#[test]
fn status_and_validate_see_the_store() {
    let pr = Proj::new("web");
    pr.add("T1", &[]);
    pr.add("T2", &["--depends", "T1"]);
    pr.ok(&["projects", "start", "web", "T1"]);
    let st = pr.ok(&["status", "--json"]).json();
    let s = &st["stores"][0];
    assert_eq!(s["layout"], "projects");
    assert_eq!(s["id"], "web");
    assert_eq!(s["counts"], json!({"IN_PROGRESS": 1, "PENDING": 1}));
    assert_eq!(s["current"][0]["id"], "T1");
    assert_eq!(s["current"][0]["title"], "Task T1");
    let human = pr.ok(&["status"]).stdout;
    assert!(human.starts_with("projects · web  "), "{human}");
    std::fs::write(
        pr.path("progress/velocity.json"),
        r#"{"tasks_completed": -1}"#,
    )
    .unwrap();
    let v = pr.p.run(&["validate", "--json"], "");
    assert_eq!(v.code, 1, "{v:?}");
    assert!(v.stdout.contains("velocity.json"), "{v:?}");
}

#[test]
fn a_temp_folder_that_is_a_link_is_refused() {
    let pr = Proj::new("web");
    let outside = pr.p.tmp.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::remove_dir(pr.path("temp")).unwrap();
    std::os::unix::fs::symlink(&outside, pr.path("temp")).unwrap();
    let run =
        pr.p.run(&["projects", "add", "web", "T1", "--title", "x"], "");
    run.assert_one_line_error();
    assert!(run.stderr.contains("not a folder of the store"), "{run:?}");
    assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
}

#[test]
fn planted_special_files_and_links_are_refused_not_followed() {
    let pr = Proj::new("web");
    pr.add("T1", &[]);
    // A FIFO in place of tasks.json: refused at once (never a hang).
    std::fs::remove_file(pr.path("tasks.json")).unwrap();
    let ok = std::process::Command::new("mkfifo")
        .arg(pr.path("tasks.json"))
        .status()
        .unwrap();
    assert!(ok.success());
    let run = pr.p.run(&["projects", "next", "web"], "");
    run.assert_one_line_error();
    assert!(run.stderr.contains("not a regular file"), "{run:?}");
    let run = pr.session(NOW, "startup");
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.context().contains("not a regular file"), "{run:?}");
    // progress/ as a link out of the store: no write lands there.
    let pr = Proj::new("web");
    let outside = pr.p.tmp.path().join("elsewhere");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::rename(pr.path("progress"), outside.join("progress")).unwrap();
    std::os::unix::fs::symlink(outside.join("progress"), pr.path("progress")).unwrap();
    let log_before = std::fs::read(outside.join("progress/log.md")).unwrap();
    let run =
        pr.p.run(&["projects", "add", "web", "T1", "--title", "x"], "");
    run.assert_one_line_error();
    assert!(run.stderr.contains("not a folder of the store"), "{run:?}");
    assert_eq!(
        std::fs::read(outside.join("progress/log.md")).unwrap(),
        log_before
    );
}

#[test]
fn a_log_that_is_a_link_or_a_hard_link_is_never_appended_through() {
    for hard in [false, true] {
        let pr = Proj::new("web");
        pr.add("T1", &[]);
        let victim = pr.p.tmp.path().join("bashrc");
        std::fs::write(&victim, "export PATH=/usr/bin\n").unwrap();
        std::fs::remove_file(pr.path("progress/log.md")).unwrap();
        if hard {
            std::fs::hard_link(&victim, pr.path("progress/log.md")).unwrap();
        } else {
            std::os::unix::fs::symlink(&victim, pr.path("progress/log.md")).unwrap();
        }
        let tasks_before = pr.read("tasks.json");
        // `start` logs a STATUS_CHANGED entry.
        let run = pr.p.run(&["projects", "start", "web", "T1"], "");
        run.assert_one_line_error();
        assert!(run.stderr.contains("log.md"), "{run:?}");
        assert_eq!(
            std::fs::read_to_string(&victim).unwrap(),
            "export PATH=/usr/bin\n",
            "hard link: {hard}"
        );
        assert_eq!(pr.read("tasks.json"), tasks_before, "hard link: {hard}");
    }
}

#[test]
fn validate_names_duplicate_and_unsafe_ids() {
    let pr = Proj::new("web");
    let task = |id: &str| json!({"id": id, "status": "PENDING"});
    let list = json!({"tasks": [
        task("T1"), task("T1"), task("../x"), task("a/b"), task("a\nb"), task(" T2"), task("T3"),
    ]});
    std::fs::write(pr.path("tasks.json"), list.to_string()).unwrap();
    let v = pr.p.run(&["validate"], "");
    assert_eq!(v.code, 1, "{v:?}");
    let want = format!(
        "INVALID {}/tasks.json (projects-tasks)
  /tasks/1/id: task id \"T1\" is used more than once (first at /tasks/0/id)
  /tasks/2/id: invalid task id \"../x\": it contains a path separator
  /tasks/3/id: invalid task id \"a/b\": it contains a path separator
  /tasks/4/id: invalid task id \"a\\nb\": it contains a control character
  /tasks/5/id: invalid task id \" T2\": it starts with whitespace
",
        pr.dir().display()
    );
    assert!(v.stdout.contains(&want), "{}", v.stdout);
    let json = pr.p.run(&["validate", "--json"], "").json();
    assert_eq!(json["valid"], false);
}

#[test]
fn validate_reports_a_missing_tasks_json_or_velocity_json() {
    let pr = Proj::new("web");
    pr.add("T1", &[]);
    let dir = pr.dir().display().to_string();
    std::fs::remove_file(pr.path("progress/velocity.json")).unwrap();
    let v = pr.p.run(&["validate"], "");
    assert_eq!(v.code, 1, "{v:?}");
    assert!(v.stdout.contains(&format!("INVALID {dir}/progress/velocity.json (projects-velocity)\n  (root): missing: the next session start (or `taskhook reconcile`) recomputes it from progress/log.md\n")), "{}", v.stdout);
    // The next session start writes it back.
    let ctx = pr.session(NOW, "compact").context();
    assert!(
        ctx.contains(
            "Reconciled: progress/velocity.json was missing: recomputed from progress/log.md."
        ),
        "{ctx}"
    );
    assert_eq!(pr.json("progress/velocity.json")["tasks_completed"], 0);
    pr.ok(&["validate"]);
    // tasks.json missing, with no checkpoint to restore it from.
    std::fs::remove_file(pr.path("tasks.json")).unwrap();
    let v = pr.p.run(&["validate"], "");
    assert_eq!(v.code, 1, "{v:?}");
    assert!(v.stdout.contains(&format!("INVALID {dir}/tasks.json (projects-tasks)\n  (root): missing, and no checkpoint holds a list to restore it from: `taskhook projects add web TASK --title …` starts a new one\n")), "{}", v.stdout);
    // With a checkpoint, the fix is a restore.
    std::fs::create_dir_all(pr.path("checkpoints")).unwrap();
    std::fs::write(
        pr.path("checkpoints/checkpoint-001.json"),
        r#"{"tasks": [{"id": "T1", "status": "PENDING"}]}"#,
    )
    .unwrap();
    let v = pr.p.run(&["validate"], "");
    assert!(v.stdout.contains(&format!("INVALID {dir}/tasks.json (projects-tasks)\n  (root): missing: the next session start (or `taskhook recover {dir}`) restores it from the newest valid checkpoint\n")), "{}", v.stdout);
}

/// progress/log.md planted as a FIFO in a project whose every task is COMPLETE and whose
/// velocity.json is there (nothing a session start could finish or recount from the log): the
/// session start still reads the log, refuses it in one line and writes nothing.
#[test]
fn a_fifo_log_is_said_at_session_start_even_with_nothing_open() {
    let pr = Proj::by_hand(
        "web",
        &[
            (
                "tasks.json",
                r#"{"tasks": [{"id": "T1", "title": "one", "status": "COMPLETE", "dependencies": []}]}"#,
            ),
            ("progress/velocity.json", "{}\n"),
        ],
    );
    let log = pr.path("progress/log.md");
    std::fs::create_dir_all(log.parent().unwrap()).unwrap();
    let ok = std::process::Command::new("mkfifo")
        .arg(&log)
        .status()
        .unwrap();
    assert!(ok.success());
    let tasks = pr.read("tasks.json");
    let run = pr.session(NOW, "startup");
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.context().contains("not a regular file"), "{run:?}");
    assert_eq!(pr.read("tasks.json"), tasks);
}
