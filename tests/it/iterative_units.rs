//! Layout `iterative` (seed 003), issue 14 items 8–15 through the real binary: budgets, held
//! units, a person's commands, launches, dependencies, the progress format, the templates of
//! `iterative new`, archiving.

use serde_json::{json, Value};

use crate::common::NOW;
use crate::iterative::{reason, silent, Loop};

const DONE: &str = "<signal>T1_DONE</signal>";

fn ok(l: &Loop, args: &[&str]) -> String {
    let run = l.p.run(args, "");
    assert_eq!(run.code, 0, "{args:?}: {run:?}");
    run.stdout
}

/// A PreToolUse of `Agent` whose prompt names `unit`.
fn launch(l: &Loop, unit: &str) -> Value {
    let mut pre = l.p.payload("PreToolUse.Agent.json");
    pre["tool_input"]["prompt"] = json!(format!("Work on <task>{unit}</task>."));
    let run = l.p.hook(&pre);
    assert_eq!(run.code, 0, "{run:?}");
    if run.stdout.is_empty() {
        Value::Null
    } else {
        run.json()
    }
}

#[test]
fn every_budget_of_one_or_more_finishes_and_zero_is_refused() {
    // Item 8: confirmation and verification passes are not charged against max_iterations.
    for max in [1, 2] {
        let l = Loop::new("s", &["T1"], max);
        let r = reason(&l.bound("T1", DONE));
        assert!(r.contains("confirmation pass (iteration 1 of"), "{r}");
        let r = reason(&l.bound("T1", DONE));
        assert!(r.contains("verification pass"), "{r}");
        silent(&l.bound("T1", DONE));
        assert_eq!(l.counters("T1"), ("done".into(), 3, 1), "max {max}");
    }
    let l = Loop::new("s", &["T1"], 5);
    let run = l.p.run(
        &[
            "iterative",
            "new",
            "zero",
            "--task",
            "T1",
            "--max-iterations",
            "0",
        ],
        "",
    );
    run.assert_one_line_usage_error();
    assert!(run.stderr.contains("at least 1"), "{run:?}");
    assert!(!l.p.root.join(".claude/iterative/zero").exists());
}

#[test]
fn a_timed_out_unit_changes_only_by_a_person() {
    // Item 9.
    let l = Loop::new("s", &["T1"], 2);
    reason(&l.bound("T1", "Started."));
    let run = l.bound("T1", "More.");
    assert!(run.json().get("decision").is_none(), "{run:?}");
    assert_eq!(l.counters("T1"), ("timeout".into(), 2, 0));
    // Later stops count nothing; a later DONE is reported, not swallowed.
    let before = l.state();
    silent(&l.bound("T1", "Still here."));
    let run = l.bound("T1", &format!("Finished after all. {DONE}"));
    let v = run.json();
    assert!(v.get("decision").is_none(), "{v}");
    let msg = v["systemMessage"].as_str().unwrap();
    assert!(
        msg.contains("T1 is unchanged") && msg.contains("timed out after 2 iterations"),
        "{msg}"
    );
    let mut after = l.state();
    after["taskhook"] = before["taskhook"].clone();
    assert_eq!(after, before);
    assert!(
        l.progress()
            .contains("ignored T1: <signal>T1_DONE</signal> from a subagent was not applied"),
        "{}",
        l.progress()
    );
    let ctx = l.p.hook(&l.p.payload("PostToolUse.Read.json")).context();
    assert!(ctx.contains("taskhook iterative set-max s T1 N"), "{ctx}");
    // A person raises the budget: the unit works again, with the iterations it has left.
    l.p.run(&["iterative", "set-max", "s", "T1", "2"], "")
        .assert_one_line_error();
    let out = ok(&l, &["iterative", "set-max", "s", "T1", "4"]);
    assert!(
        out.contains("in progress again (2 iteration(s) left)"),
        "{out}"
    );
    assert_eq!(l.counters("T1"), ("in_progress".into(), 2, 0));
    reason(&l.bound("T1", DONE));
    assert_eq!(l.counters("T1"), ("confirming".into(), 3, 1));
    // The person's command is in the log, so a check of state.json against it agrees.
    assert!(l.progress().contains("set T1 {"), "{}", l.progress());
    let out = ok(&l, &["recover", ".claude/iterative/s"]);
    assert!(out.contains("they agree"), "{out}");
}

#[test]
fn add_reset_and_units_only_the_plan_lists() {
    // Item 10.
    let l = Loop::new("s", &["T1"], 5);
    let out = ok(
        &l,
        &[
            "iterative",
            "add",
            "s",
            "T9",
            "--title",
            "Docs",
            "--depends",
            "T1",
            "--criteria",
            "README updated",
            "--max-iterations",
            "3",
        ],
    );
    assert!(out.contains("blocked: Waiting on T1"), "{out}");
    let tasks = std::fs::read_to_string(l.dir().join("tasks.md")).unwrap();
    assert!(
        tasks.contains("- [ ] **T9**: Docs\n  - Criteria: README updated\n")
            && tasks.contains("  - Depends: T1\n")
            && tasks.contains("**Total:** 2 tasks"),
        "{tasks}"
    );
    assert_eq!(l.unit("T9")["max_iterations"], 3);
    l.p.run(&["iterative", "add", "s", "T9"], "")
        .assert_one_line_error();
    l.p.run(&["iterative", "add", "s", "T8", "--depends", "T42"], "")
        .assert_one_line_error();
    // reset: T1 starts over.
    reason(&l.bound("T1", DONE));
    let out = ok(&l, &["iterative", "reset", "s", "T1"]);
    assert!(
        out.contains("reset (was confirming after 1 iteration(s))"),
        "{out}"
    );
    assert_eq!(l.counters("T1"), ("pending".into(), 0, 0));
    // A unit only tasks.md lists is a unit: its signal applies.
    let mut tasks = std::fs::read_to_string(l.dir().join("tasks.md")).unwrap();
    tasks.push_str("- [ ] **T7**: Extra\n  - Max iterations: 4\n");
    std::fs::write(l.dir().join("tasks.md"), tasks).unwrap();
    let run = l.stop("x", "Do <task>T7</task>", "<signal>T7_DONE</signal>");
    assert!(reason(&run).contains("T7: confirmation pass"), "{run:?}");
    assert_eq!(l.unit("T7")["status"], "confirming");
    assert_eq!(l.unit("T7")["max_iterations"], 4);
    assert_eq!(l.p.run(&["validate"], "").code, 0);
}

#[test]
fn launches_start_units_and_dependencies_are_enforced() {
    // Item 11.
    let l = Loop::new("s", &["T1", "T2", "T3"], 5);
    l.p.write(
        ".claude/iterative/s/tasks.md",
        "## Tasks\n\n- [ ] **T1**: a\n- [ ] **T2**: b\n- [ ] **T3**: c\n  - Depends: T2\n",
    );
    // A bound launch makes the pending unit in_progress (CONTRACT §6).
    assert_eq!(launch(&l, "T1"), Value::Null);
    let t1 = l.unit("T1");
    assert_eq!(
        (t1["status"].as_str(), t1["started_at"].as_str()),
        (Some("in_progress"), Some(NOW))
    );
    assert_eq!(t1["iterations_used"], 0);
    // A unit waiting on an unfinished dependency: the launch is refused, its signal not applied.
    let v = launch(&l, "T3");
    let deny = &v["hookSpecificOutput"];
    assert_eq!(deny["permissionDecision"], "deny", "{v}");
    assert!(
        deny["permissionDecisionReason"]
            .as_str()
            .unwrap()
            .contains("T3 waits on T2"),
        "{v}"
    );
    let run = l.stop("x", "Do <task>T3</task>", "<signal>T3_DONE</signal>");
    assert!(run.json()["systemMessage"]
        .as_str()
        .unwrap()
        .contains("it waits on T2"));
    assert_eq!(l.unit("T3")["iterations_used"].as_u64().unwrap_or(0), 0);
    let ctx =
        l.p.hook(&l.p.payload("SessionStart.startup.json"))
            .context();
    assert!(ctx.contains("Blocked: T3 (Waiting on T2)."), "{ctx}");
    // current_iteration follows the current unit.
    for _ in 0..3 {
        l.bound("T1", DONE);
    }
    let s = l.state();
    assert_eq!(s["tasks"]["T1"]["status"], "done");
    assert_eq!(
        (s["current_task"].as_str(), s["current_iteration"].as_u64()),
        (Some("T2"), Some(0))
    );
    reason(&l.stop("y", "Do <task>T2</task>", "Started T2."));
    assert_eq!(l.state()["current_iteration"], 1);
    // Once T2 is done, T3 no longer waits.
    reason(&l.stop("y", "Do <task>T2</task>", "<signal>T2_DONE</signal>"));
    reason(&l.stop("y", "Do <task>T2</task>", "<signal>T2_DONE</signal>"));
    l.stop("y", "Do <task>T2</task>", "<signal>T2_DONE</signal>");
    assert_eq!(l.unit("T3")["status"], "pending");
    assert_eq!(launch(&l, "T3"), Value::Null);
    assert_eq!(l.unit("T3")["status"], "in_progress");
}

#[test]
fn the_confirmation_cap_holds_until_a_person_unblocks() {
    // Item 12.
    let l = Loop::new("s", &["T1"], 20);
    for _ in 0..3 {
        reason(&l.bound("T1", DONE));
        l.bound("T1", "<signal>T1_FAILED: tests red</signal>");
    }
    assert_eq!(
        l.unit("T1")["reason"],
        "failed confirmation 3 times: needs review"
    );
    let run = l.stop("other", "Explore", "Fixed it. <signal>T1_DONE</signal>");
    assert!(run.json()["systemMessage"]
        .as_str()
        .unwrap()
        .contains("unchanged"));
    assert_eq!(l.unit("T1")["status"], "blocked");
    let v = launch(&l, "T1");
    assert!(
        v["hookSpecificOutput"]["permissionDecisionReason"]
            .as_str()
            .unwrap()
            .contains("taskhook iterative unblock s T1"),
        "{v}"
    );
    let out = ok(&l, &["iterative", "unblock", "s", "T1"]);
    assert!(out.contains("it is in_progress again"), "{out}");
    let u = l.unit("T1");
    assert_eq!(
        (u["status"].as_str(), u["failed_confirmations"].as_u64()),
        (Some("in_progress"), Some(0))
    );
    reason(&l.bound("T1", DONE));
    assert_eq!(l.unit("T1")["status"], "confirming");
    l.p.run(&["iterative", "unblock", "s", "T1"], "")
        .assert_one_line_error();
}

#[test]
fn progress_entries_follow_the_seed_format() {
    // Item 13.
    let l = Loop::new("s", &["T1"], 5);
    reason(&l.bound("T1", "Wrote the model.\nRemaining: the tests"));
    reason(&l.bound("T1", &format!("Tests pass. {DONE}")));
    reason(&l.bound("T1", "<signal>T1_FAILED: flaky test</signal>"));
    let progress = l.progress();
    assert!(
        progress.contains(&format!(
            "## T1 - Iteration 1 - {NOW}\n**Did:** Wrote the model.\n**Remaining:** the tests\n**Blockers:** None\n**Commit:** none\n\n"
        )),
        "{progress}"
    );
    assert!(
        progress.contains(&format!(
            "## T1 - Iteration 2 - {NOW}\n**Did:** Tests pass.\n**Remaining:** None\n**Signal:** T1_DONE\n**Commit:** none\n\n"
        )),
        "{progress}"
    );
    assert!(
        progress.contains(&format!(
            "## T1 - Iteration 3 - {NOW}\n**Did:** (no final message)\n**Remaining:** Fix what the check found: flaky test\n**Signal:** T1_FAILED: flaky test\n**Commit:** none\n\n"
        )),
        "{progress}"
    );
    // taskhook's own notes are no `## ` heading: every heading is an iteration entry.
    std::fs::write(l.dir().join("state.json"), b"{").unwrap();
    l.p.hook(&l.p.payload("SessionStart.startup.json"));
    let progress = l.progress();
    assert!(progress.contains("<!-- taskhook "), "{progress}");
    for line in progress.lines().filter(|l| l.starts_with("## ")) {
        assert!(line.starts_with("## T1 - Iteration "), "{line}");
    }
}

#[test]
fn new_fills_the_brief_and_context_templates() {
    // Item 14.
    let l = Loop::new("s", &["T1"], 5);
    ok(
        &l,
        &[
            "iterative",
            "new",
            "auth",
            "--name",
            "User authentication",
            "--task",
            "T1",
            "--goal",
            "Users can log in",
            "--done-when",
            "login works",
            "--done-when",
            "tests pass",
            "--constraint",
            "no new deps",
            "--approach",
            "sessions in Redis",
            "--domain",
            "feature",
        ],
    );
    let dir = l.p.root.join(".claude/iterative/auth");
    let brief = std::fs::read_to_string(dir.join("brief.md")).unwrap();
    assert_eq!(
        brief,
        format!("# User authentication\n\n**Created:** {NOW}\n**Mode:** development\n**Domain:** feature\n\n## Outcome Needed\nUsers can log in\n\n## Done When\n- login works\n- tests pass\n\n## Constraints\n- no new deps\n\n## Approach / Notes\nsessions in Redis\n")
    );
    let context = std::fs::read_to_string(dir.join("context.md")).unwrap();
    assert!(
        context.starts_with("# User authentication Context\n\n**Goal:** Users can log in\n\n**Approach:** sessions in Redis\n")
            && context.contains("- T1: `<signal>T1_DONE</signal>`"),
        "{context}"
    );
    let state: Value =
        serde_json::from_slice(&std::fs::read(dir.join("state.json")).unwrap()).unwrap();
    assert_eq!(
        (state["task"].as_str(), state["domain"].as_str()),
        (Some("User authentication"), Some("feature"))
    );
    // SessionStart shows context.md.
    let ctx =
        l.p.hook(&l.p.payload("SessionStart.startup.json"))
            .context();
    assert!(ctx.contains("**Goal:** Users can log in"), "{ctx}");
    // Knowledge mode: domain research by default; a development domain is refused.
    ok(
        &l,
        &[
            "iterative",
            "new",
            "k",
            "--mode",
            "knowledge",
            "--task",
            "R1",
        ],
    );
    let k: Value = serde_json::from_slice(
        &std::fs::read(l.p.root.join(".claude/iterative/k/state.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(k["domain"], "research");
    l.p.run(
        &[
            "iterative",
            "new",
            "k2",
            "--mode",
            "knowledge",
            "--domain",
            "bug",
        ],
        "",
    )
    .assert_one_line_usage_error();
}

#[test]
fn archive_refuses_unfinished_work_and_guardrails_carry_over() {
    // Item 15.
    let l = Loop::new("s", &["T1"], 5);
    l.migrate_first_guardrail();
    let run = l.p.run(&["iterative", "archive", "s"], "");
    run.assert_one_line_error();
    assert!(
        run.stderr.contains("T1 (pending)") && run.stderr.contains("--force"),
        "{run:?}"
    );
    assert!(l.dir().exists());
    for _ in 0..3 {
        l.bound("T1", DONE);
    }
    ok(&l, &["iterative", "archive", "s"]);
    // The same slug archived again the same day gets `-2`.
    ok(&l, &["iterative", "new", "s", "--task", "T1"]);
    let out = ok(&l, &["iterative", "archive", "s", "--force"]);
    assert!(out.contains("archive/s-20260301-2"), "{out}");
    // A new store seeded with the guardrails of past work.
    let out = ok(
        &l,
        &[
            "iterative",
            "new",
            "next",
            "--task",
            "T1",
            "--guardrails-from",
            "s",
        ],
    );
    assert!(out.contains("carried 1 guardrail(s) from s"), "{out}");
    let g = std::fs::read_to_string(l.p.root.join(".claude/iterative/next/guardrails.md")).unwrap();
    assert!(
        g.starts_with("# Guardrails\n")
            && g.contains("## Migrate first\n- **When**: touching models"),
        "{g}"
    );
    l.p.run(
        &["iterative", "new", "x", "--guardrails-from", "nowhere"],
        "",
    )
    .assert_one_line_error();
}
