//! Messages that must be true and name real things (issue 20, item 19), pinned word for word.

use super::{silent, Proj};
use crate::common::NOW;

/// The reason a launch was denied.
fn denied(pr: &Proj, prompt: &str) -> String {
    let run = pr.launch(NOW, prompt);
    run.json()["hookSpecificOutput"]["permissionDecisionReason"]
        .as_str()
        .unwrap_or_else(|| panic!("not denied: {run:?}"))
        .to_string()
}

#[test]
fn the_stale_twice_deny_names_the_real_project() {
    let pr = Proj::new("web");
    pr.add("T1", &["--estimate", "10"]);
    for (start, session) in [
        ("2026-03-01T06:00:00Z", "2026-03-01T07:00:00Z"),
        ("2026-03-01T08:00:00Z", "2026-03-01T09:00:00Z"),
    ] {
        pr.run_at(start, &["projects", "start", "web", "T1"]);
        pr.session(session, "compact");
    }
    assert_eq!(pr.status("T1"), "BLOCKED");
    assert_eq!(
        denied(&pr, "Work on <task>T1</task>."),
        "taskhook: projects web: T1 is BLOCKED (Stale twice — requires human review) and waits for a person: after acting, they run `taskhook projects set web T1 PENDING`."
    );
    pr.ok(&["projects", "set", "web", "T1", "COMPLETE"]);
    let run = pr.p.run(&["projects", "start", "web", "T1"], "");
    run.assert_one_line_error();
    assert_eq!(
        run.stderr,
        "taskhook: T1 is already COMPLETE; `taskhook projects set web T1 PENDING` reopens it\n"
    );
}

#[test]
fn a_failing_recover_does_not_advise_running_recover() {
    let pr = Proj::new("web");
    std::fs::write(pr.path("tasks.json"), "garbage").unwrap();
    let run = pr.p.run(&["recover", ".claude/projects/web"], "");
    run.assert_one_line_error();
    let dir = pr.dir().display().to_string();
    assert!(
        run.stderr.starts_with(&format!(
            "taskhook: cannot recover `{dir}/tasks.json`: it is unusable (not valid JSON"
        )),
        "{run:?}"
    );
    assert!(
        run.stderr.ends_with("), and no checkpoint holds a valid task to restore it from: fix it by hand (`taskhook validate` names the problems, `taskhook schema projects-tasks` shows the format) or restore it from version control; its bytes are left as they are\n"),
        "{run:?}"
    );
    assert!(!run.stderr.contains("taskhook recover"), "{run:?}");
    assert_eq!(pr.read("tasks.json"), "garbage");
    // Missing, with nothing to restore it from: not "valid, nothing to recover".
    std::fs::remove_file(pr.path("tasks.json")).unwrap();
    let run = pr.p.run(&["recover", ".claude/projects/web"], "");
    run.assert_one_line_error();
    assert_eq!(
        run.stderr,
        format!("taskhook: cannot recover `{dir}/tasks.json`: it is missing, and no checkpoint holds a list to restore it from: `taskhook projects add web TASK --title …` starts a new one\n")
    );
}

#[test]
fn checkpoint_written_says_which_event_wrote_it() {
    let pr = Proj::new("web");
    pr.add("T1", &[]);
    silent(&pr.hook_at(NOW, &pr.p.payload("PreCompact.manual.json")));
    pr.add("T2", &[]);
    silent(&pr.hook_at(NOW, &pr.p.payload("SessionEnd.other.json")));
    let log = pr.log();
    assert!(
        log.contains("— CHECKPOINT_WRITTEN\n- Checkpoint: checkpoints/checkpoint-001.json\n- Reason: PreCompact\n"),
        "{log}"
    );
    assert!(
        log.contains("— CHECKPOINT_WRITTEN\n- Checkpoint: checkpoints/checkpoint-002.json\n- Reason: SessionEnd\n"),
        "{log}"
    );
}
