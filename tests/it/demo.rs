//! `taskhook demo`: the tour runs, visits every layout, and leaves nothing behind.

use crate::common::Project;

#[test]
fn the_demo_visits_every_layout_and_leaves_nothing_behind() {
    let p = Project::new();
    let tmp = p.tmp.path().join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let mut c = p.cmd();
    c.env("TMPDIR", &tmp).env_remove("TASKHOOK_NOW");
    let before = p.snapshot();
    let run = p.run_with(c, &["demo"], "");
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stderr.is_empty(), "{run:?}");
    for layout in ["claude-tasks", "iterative", "projects", "execute", "cdd"] {
        assert!(
            run.stdout.contains(layout),
            "{layout} missing from the tour:\n{}",
            run.stdout
        );
    }
    for want in [
        "changed: ~/.claude/tasks/demo-project/tasks.json",
        "another pass for the subagent",
        "T1 is done (confirmed and verified after 3 iterations)",
        "state.json.corrupt-",
        "T1 is COMPLETE",
        "queued for merge",
        "halts the main agent: Stop verify-core reached",
        "refuses the tool call: a cdd stop is a checkpoint for a person",
        "\"halt_lifted\":true",
    ] {
        assert!(
            run.stdout.contains(want),
            "missing {want:?}:\n{}",
            run.stdout
        );
    }
    assert_eq!(
        std::fs::read_dir(&tmp).unwrap().count(),
        0,
        "scratch removed"
    );
    assert_eq!(
        p.snapshot(),
        before,
        "the real project and home are untouched"
    );
}
