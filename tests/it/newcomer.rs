//! Issue 26, a newcomer's first hour: the home folder is not a project, a mistyped
//! `--project-dir` is an error, a relative `CDD_DIR` is the project's.

use crate::common::Project;

/// Item 6: run in the home folder (no project above it), the commands that create stores
/// refuse, and nothing is written under `~/.claude`.
#[test]
fn the_home_folder_is_not_a_project() {
    let p = Project::new();
    std::fs::create_dir_all(p.home.join(".claude/projects/-some-session")).unwrap();
    let before = p.snapshot();
    for args in [
        &["iterative", "new", "X", "--task", "T1"][..],
        &["projects", "new", "X"],
        &["execute", "init", "docs/tasks/x", "--layer", "0=L0-001"],
    ] {
        let mut c = p.cmd();
        c.current_dir(&p.home);
        let run = p.run_with(c, args, "");
        run.assert_one_line_error();
        assert!(run.stderr.contains("is your home folder"), "{run:?}");
        assert!(
            run.stderr.contains("`cd` into a project"),
            "says what to do: {run:?}"
        );
    }
    assert_eq!(p.snapshot(), before, "nothing written");
    // The same from a folder below the home folder is a project of its own.
    let sub = p.home.join("work");
    std::fs::create_dir_all(&sub).unwrap();
    let mut c = p.cmd();
    c.current_dir(&sub);
    let run = p.run_with(c, &["iterative", "new", "X", "--task", "T1"], "");
    assert_eq!(run.code, 0, "{run:?}");
    assert!(sub.join(".claude/iterative/X/state.json").is_file());
    // Reading is fine in the home folder.
    let mut c = p.cmd();
    c.current_dir(&p.home);
    let run = p.run_with(c, &["status"], "");
    assert_eq!(run.code, 0, "{run:?}");
}

/// Item 6: a `--project-dir` (or `TASKHOOK_PROJECT_DIR`) that does not exist is an error, and
/// no folder is created.
#[test]
fn a_missing_project_dir_is_an_error_and_creates_nothing() {
    let p = Project::new();
    let missing = p.tmp.path().join("proj-typo");
    let dir = missing.display().to_string();
    let run = p.run(
        &[
            "--project-dir",
            &dir,
            "iterative",
            "new",
            "X",
            "--task",
            "T1",
        ],
        "",
    );
    run.assert_one_line_usage_error();
    assert!(run.stderr.contains("--project-dir"), "{run:?}");
    assert!(run.stderr.contains("does not exist"), "{run:?}");
    assert!(!missing.exists());
    let mut c = p.cmd();
    c.env("TASKHOOK_PROJECT_DIR", &missing);
    let run = p.run_with(c, &["projects", "new", "X"], "");
    run.assert_one_line_usage_error();
    assert!(run.stderr.contains("TASKHOOK_PROJECT_DIR"), "{run:?}");
    assert!(!missing.exists());
    // A file is not a folder either.
    let file = p.write("notes.txt", "x");
    let run = p.run(&["--project-dir", file.to_str().unwrap(), "status"], "");
    run.assert_one_line_usage_error();
}

/// Item 7: a relative `CDD_DIR` is relative to the project folder (as `cdd_dir` in
/// `.claude/taskhook.json` is), so `cdd init` from a subfolder finds the same workspace and
/// never makes a second one.
#[test]
fn a_relative_cdd_dir_is_the_projects_from_any_subfolder() {
    let p = Project::new();
    let sub = p.root.join("src/deep");
    std::fs::create_dir_all(&sub).unwrap();
    let cdd = |cwd: &std::path::Path, args: &[&str]| {
        let mut c = p.cmd();
        c.current_dir(cwd).env("CDD_DIR", "work");
        let mut all = vec!["cdd"];
        all.extend_from_slice(args);
        p.run_with(c, &all, "")
    };
    let run = cdd(&p.root, &["init"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(p.root.join("work/tasks/pending").is_dir());
    let run = cdd(&sub, &["init"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        run.json()["data"]["created"],
        serde_json::json!([]),
        "{run:?}"
    );
    assert!(
        !sub.join("work").exists(),
        "a second workspace in the subfolder"
    );
    let run = cdd(&sub, &["next"]);
    let ws = p.root.join("work/tasks/order.json");
    assert!(run.stdout.contains(&ws.display().to_string()), "{run:?}");
    // doctor sees the same folder.
    let mut c = p.cmd();
    c.current_dir(&sub).env("CDD_DIR", "work");
    let run = p.run_with(c, &["doctor", "--json"], "");
    assert!(!run.stdout.contains("does not exist"), "{run:?}");
}

/// (status, iterations_used, confirmations_used) of an iterative unit, and the number of its
/// progress entries.
fn unit_record(p: &Project, slug: &str, unit: &str) -> (String, u64, u64, usize) {
    let dir = p.root.join(".claude/iterative").join(slug);
    let s: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("state.json")).unwrap()).unwrap();
    let u = &s["tasks"][unit];
    let progress = std::fs::read_to_string(dir.join("progress.md")).unwrap();
    (
        u["status"].as_str().unwrap().to_string(),
        u["iterations_used"].as_u64().unwrap_or(0),
        u["confirmations_used"].as_u64().unwrap_or(0),
        progress.matches(&format!("## {unit} - Iteration")).count(),
    )
}

/// An iterative store `s` with T1, and the SubagentStop of a subagent bound to T1 signalling
/// DONE.
fn bound_done(p: &Project) -> serde_json::Value {
    p.new_slug("s", &["T1"], 5);
    p.subagent_stop(
        "a1",
        "Work on <task>T1</task>.",
        "Done.\n<signal>T1_DONE</signal>",
    )
}

/// Item 5: the same SubagentStop handled twice (the plugin and a settings registration both
/// running taskhook) is applied once, whether the two runs overlap or follow each other.
#[test]
fn the_same_subagent_stop_twice_is_applied_once() {
    let once = Project::new();
    let payload = bound_done(&once);
    let first = once.hook(&payload);
    assert_eq!(first.code, 0, "{first:?}");
    let want = unit_record(&once, "s", "T1");
    assert_eq!(want.0, "confirming", "{want:?}");

    // One after the other: the second run changes nothing and says nothing.
    let seq = Project::new();
    let payload = bound_done(&seq);
    let a = seq.hook(&payload);
    assert_eq!(a.stdout, first.stdout, "{a:?}");
    let b = seq.hook(&payload);
    assert_eq!(
        (b.code, b.stdout.as_str(), b.stderr.as_str()),
        (0, "", ""),
        "{b:?}"
    );
    assert_eq!(unit_record(&seq, "s", "T1"), want);

    // At once: one of them applies it.
    for round in 0..5 {
        let par = Project::new();
        let payload = bound_done(&par);
        let children = [par.spawn_hook(&payload), par.spawn_hook(&payload)];
        let outs: Vec<_> = children
            .into_iter()
            .map(|c| c.wait_with_output().unwrap())
            .collect();
        for o in &outs {
            assert!(o.status.success(), "{round}: {o:?}");
        }
        let replies: Vec<String> = outs
            .iter()
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .collect();
        assert_eq!(
            replies
                .iter()
                .filter(|r| r.contains("confirmation pass"))
                .count(),
            1,
            "{round}: {replies:?}"
        );
        assert_eq!(unit_record(&par, "s", "T1"), want, "{round}");
    }

    // The next pass of the same subagent (its transcript has grown) is a new event.
    let next = seq.subagent_stop(
        "a1",
        "Work on <task>T1</task>.",
        "Confirmed.\n<signal>T1_DONE</signal>",
    );
    let run = seq.hook(&next);
    assert_eq!(run.code, 0, "{run:?}");
    assert_ne!(
        unit_record(&seq, "s", "T1"),
        want,
        "the confirmation pass counted"
    );
}

/// Item 5, tool events: a tool event taskhook acts on is keyed by its `tool_use_id` in the
/// record of applied events; one it does not act on (a Read) never touches the record.
#[test]
fn tool_events_are_keyed_by_their_tool_use_id() {
    let p = Project::new();
    p.new_slug("s", &["T1"], 5);
    let mut launch = p.payload("PreToolUse.Agent.json");
    launch["tool_input"]["prompt"] = serde_json::json!("Work on <task>T1</task>.");
    let id = launch["tool_use_id"].as_str().unwrap().to_string();
    let run = p.hook(&launch);
    assert_eq!(run.code, 0, "{run:?}");
    let record = p.root.join(".claude/taskhook/applied.json");
    let text = std::fs::read_to_string(&record).unwrap();
    assert!(text.contains("PreToolUse ") && text.contains(&id), "{text}");
    // The record is not among the files the event changed (the journal's list).
    let log = std::fs::read_to_string(p.root.join(".claude/taskhook/journal.jsonl")).unwrap();
    assert!(!log.contains("applied.json"), "{log}");
    // A Read changes nothing and never reads the record.
    std::fs::remove_file(&record).unwrap();
    let read = p.payload("PostToolUse.Read.json");
    let run = p.hook(&read);
    assert_eq!((run.code, run.stdout.as_str()), (0, ""), "{run:?}");
    assert!(!record.exists());
}
