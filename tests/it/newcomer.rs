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
