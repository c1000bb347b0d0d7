//! Layout `iterative` (seed 003), issue 14 items 7, 16, 17 and 18 through the real binary:
//! state.json against progress.md in both directions with git as evidence, full rebuilds that
//! keep what the log cannot know, `recover` that salvages, and `status` / `reconcile` that say
//! what they would do and fail when a store cannot be reconciled.

use std::path::Path;
use std::process::Command;

use serde_json::{json, Value};

use crate::common::{Project, NOW};
use crate::iterative::{reason, Loop};

const DONE: &str = "<signal>T1_DONE</signal>";

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// Makes the project a real git repository.
fn git_init(l: &Loop) {
    std::fs::remove_dir_all(l.p.root.join(".git")).unwrap();
    git(&l.p.root, &["init", "-q"]);
}

/// A PostToolUse Bash that shows `git commit` printing `[main HASH] subject`.
fn commit_seen(l: &Loop, hash: &str, subject: &str) {
    let mut bash = l.p.payload("PostToolUse.Bash.json");
    bash["tool_input"]["command"] = json!(format!("git commit -m '{subject}'"));
    bash["tool_response"]["stdout"] = json!(format!("[main {hash}] {subject}\n 1 file changed"));
    assert_eq!(l.p.hook(&bash).code, 0);
}

fn write_state(l: &Loop, v: &Value) {
    std::fs::write(
        l.dir().join("state.json"),
        serde_json::to_vec_pretty(v).unwrap(),
    )
    .unwrap();
}

#[test]
fn a_hand_edited_status_is_checked_against_the_log_and_git() {
    // Item 7 (status hand-edited) and item 18 (`status` says what reconcile would do).
    let l = Loop::new("s", &["T1", "T2"], 5);
    git_init(&l);
    commit_seen(&l, "deadbee", "feat: lost");
    reason(&l.bound("T1", "Started."));
    assert!(l.progress().contains("**Commit:** deadbee"));
    let mut s = l.state();
    s["tasks"]["T1"]["status"] = json!("done");
    write_state(&l, &s);
    let before = l.p.snapshot();
    let st = l.p.run(&["status"], "");
    assert_eq!(st.code, 0, "{st:?}");
    assert!(
        st.stdout.contains("which progress.md does not support")
            && st.stdout.contains("T1 would become in_progress")
            && !st.stdout.contains("is now"),
        "{st:?}"
    );
    assert_eq!(l.p.snapshot(), before, "status wrote");
    let ctx =
        l.p.hook(&l.p.payload("SessionStart.startup.json"))
            .context();
    let want = "state.json had T1 done after 1 iteration(s) and 0 confirmation(s), which progress.md does not support (it logs 1 iteration(s); git lacks deadbee): T1 is now in_progress";
    assert!(ctx.contains(want), "{ctx}");
    assert_eq!(l.counters("T1"), ("in_progress".into(), 1, 0));
    assert!(
        l.progress()
            .contains(&format!("<!-- taskhook {NOW} reconciled: {want} -->")),
        "{}",
        l.progress()
    );
    // Fixed once: the next session start changes nothing.
    let before = l.p.snapshot();
    l.p.hook(&l.p.payload("SessionStart.startup.json"));
    assert_eq!(l.p.snapshot(), before);
}

#[test]
fn state_ahead_of_the_log_is_kept_only_when_git_proves_the_work() {
    // Item 7 (state.json ahead of progress.md), both outcomes.
    for proven in [true, false] {
        let l = Loop::new("s", &["T1", "T2"], 5);
        git_init(&l);
        let hash = if proven {
            std::fs::write(l.p.root.join("model.rs"), "struct User;\n").unwrap();
            git(&l.p.root, &["add", "model.rs"]);
            git(&l.p.root, &["commit", "-qm", "feat: model"]);
            git(&l.p.root, &["rev-parse", "--short", "HEAD"])
        } else {
            "abc1234".to_string()
        };
        commit_seen(&l, &hash, "feat: model");
        for _ in 0..3 {
            l.bound("T1", DONE);
        }
        assert_eq!(l.counters("T1"), ("done".into(), 3, 1));
        // progress.md goes back to an older copy (only its header): state.json is ahead.
        std::fs::write(l.dir().join("progress.md"), "# Progress Log\n\n").unwrap();
        let ctx = l.p.hook(&l.p.payload("SessionStart.resume.json")).context();
        assert!(
            ctx.contains("progress.md has 16 bytes, fewer than"),
            "{ctx}"
        );
        if proven {
            assert!(
                ctx.contains(&format!(
                    "state.json is ahead of progress.md for T1 (progress.md logs 0 iteration(s), pending); kept state.json's T1 (done after 3 iteration(s) and 1 confirmation(s)): git has commit(s) {hash} that state.json records and progress.md does not name"
                )),
                "{ctx}"
            );
            assert_eq!(l.counters("T1"), ("done".into(), 3, 1));
            assert!(
                l.progress().contains("set T1 {\"status\":\"done\""),
                "{}",
                l.progress()
            );
        } else {
            assert!(
                ctx.contains("state.json had T1 done after 3 iteration(s) and 1 confirmation(s), which progress.md does not support (it logs 0 iteration(s)): T1 is now pending"),
                "{ctx}"
            );
            assert_eq!(l.counters("T1"), ("pending".into(), 0, 0));
            assert!(l.unit("T1").get("completed_at").is_none());
        }
        let before = l.p.snapshot();
        l.p.hook(&l.p.payload("SessionStart.resume.json"));
        assert_eq!(l.p.snapshot(), before, "proven {proven}: fixed once");
        assert_eq!(l.p.run(&["validate"], "").code, 0);
    }
}

#[test]
fn the_seeds_own_state_and_log_agree() {
    // The seed's example: T1 done after 3 iterations while the skill logged 2 (the second with
    // T1_DONE); T5 blocked "Waiting on T3". Not a conflict: nothing changes.
    let p = Project::new();
    let dir = p.root.join(".claude/iterative/user-auth");
    p.write(
        ".claude/iterative/user-auth/state.json",
        serde_json::to_vec_pretty(&json!({
            "task": "user-authentication", "slug": "user-auth", "mode": "development",
            "created": "2026-01-14T10:30:00Z", "updated": "2026-01-14T14:22:00Z",
            "phase": "execute", "current_task": "T3", "current_iteration": 2,
            "tasks": {
                "T1": {"status": "done", "iterations_used": 3, "confirmations_used": 1,
                       "verification_passed": true, "max_iterations": 5,
                       "completed_at": "2026-01-14T11:15:00Z"},
                "T3": {"status": "confirming", "iterations_used": 2, "confirmations_used": 1, "max_iterations": 10},
                "T5": {"status": "blocked", "reason": "Waiting on T3", "max_iterations": 5}
            },
            "commits": ["abc1234: feat(user-auth): Add User model"]
        }))
        .unwrap(),
    );
    p.write(
        ".claude/iterative/user-auth/progress.md",
        "# Progress Log\n\n## T1 - Iteration 1 - 2026-01-14T10:40:00Z\n**Did:** model\n**Remaining:** tests\n**Blockers:** None\n**Commit:** abc1234\n\n## T1 - Iteration 2 - 2026-01-14T11:00:00Z\n**Did:** tests\n**Remaining:** None\n**Signal:** T1_DONE\n**Commit:** abc1234\n\n## T3 - Iteration 1 - 2026-01-14T13:00:00Z\n**Did:** a\n**Remaining:** b\n**Blockers:** None\n**Commit:** none\n\n## T3 - Iteration 2 - 2026-01-14T14:00:00Z\n**Did:** c\n**Remaining:** None\n**Signal:** T3_DONE\n**Commit:** none\n\n",
    );
    let before = p.snapshot();
    let run = p.hook(&p.payload("SessionStart.startup.json"));
    let ctx = run.context();
    assert!(
        ctx.contains("Current: T3 (confirming, iteration 2 of 10)")
            && ctx.contains("Blocked: T5 (Waiting on T3).")
            && !ctx.contains("Reconciled"),
        "{ctx}"
    );
    assert_eq!(p.snapshot(), before);
    assert!(dir.exists());
}

#[test]
fn a_full_rebuild_keeps_commits_times_and_the_task_name() {
    // Item 16.
    let p = Project::new();
    let new = p.run(
        &[
            "iterative",
            "new",
            "s",
            "--name",
            "User auth",
            "--task",
            "T1",
            "--task",
            "T2",
        ],
        "",
    );
    assert_eq!(new.code, 0, "{new:?}");
    let l = Loop {
        p,
        slug: "s".into(),
    };
    commit_seen(&l, "1a2b3c4", "feat: model");
    let at = |t: &str| {
        let mut c = l.p.cmd();
        c.env("TASKHOOK_NOW", t);
        c
    };
    let stop_at = |t: &str| {
        let mut payload = l.p.payload("SubagentStop.json");
        payload["agent_transcript_path"] = json!("/nonexistent/t.jsonl");
        payload["last_assistant_message"] = json!(format!("<task>T1</task> {DONE}"));
        let run =
            l.p.run_with(at(t), &["hook"], serde_json::to_vec(&payload).unwrap());
        assert_eq!(run.code, 0, "{run:?}");
    };
    stop_at("2026-03-01T10:00:00Z");
    stop_at("2026-03-01T10:30:00Z");
    stop_at("2026-03-01T11:00:00Z");
    let good = l.state();
    assert_eq!(good["tasks"]["T1"]["completed_at"], "2026-03-01T11:00:00Z");
    std::fs::write(l.dir().join("state.json"), b"{\"tas").unwrap();
    l.p.hook(&l.p.payload("SessionStart.startup.json"))
        .context();
    let s = l.state();
    assert_eq!(s["task"], "User auth", "{s:#}");
    assert_eq!(
        s["commits"],
        json!(["1a2b3c4: (subject unknown: named in progress.md)"])
    );
    let t1 = &s["tasks"]["T1"];
    assert_eq!(t1["started_at"], "2026-03-01T10:00:00Z", "{s:#}");
    assert_eq!(t1["completed_at"], "2026-03-01T11:00:00Z", "{s:#}");
    assert_eq!(
        (t1["status"].as_str(), t1["iterations_used"].as_u64()),
        (Some("done"), Some(3))
    );
    assert_eq!(s["created"], good["created"]);
    // A cut file keeps what it still says: the commit's subject and the name.
    let bytes = serde_json::to_vec_pretty(&good).unwrap();
    let text = String::from_utf8(bytes).unwrap();
    let cut = &text[..text.find("\"taskhook\"").unwrap()];
    std::fs::write(l.dir().join("state.json"), cut).unwrap();
    l.p.hook(&l.p.payload("SessionStart.startup.json"));
    assert_eq!(l.state()["commits"], json!(["1a2b3c4: feat: model"]));
}

#[test]
fn recover_salvages_what_validates_and_dry_run_says_so() {
    // Item 17 (the iterative part).
    let l = Loop::new("s", &["T1", "T2"], 5);
    for _ in 0..3 {
        l.bound("T1", DONE);
    }
    reason(&l.stop("b", "Do <task>T2</task>", "<signal>T2_DONE</signal>"));
    let mut s = l.state();
    s["task"] = json!("Keep me");
    s["tasks"]["T2"]["status"] = json!("finished");
    write_state(&l, &s);
    let original = std::fs::read(l.dir().join("state.json")).unwrap();
    let before = l.p.snapshot();
    let dry =
        l.p.run(&["recover", ".claude/iterative/s", "--dry-run"], "");
    assert_eq!(dry.code, 0, "{dry:?}");
    for want in [
        "Would rebuild",
        "would keep: task",
        "units T1",
        "would drop: T2 (",
        "/tasks/T2/status",
        "would move the original bytes to state.json.corrupt-",
    ] {
        assert!(dry.stdout.contains(want), "missing {want:?}: {dry:?}");
    }
    assert_eq!(l.p.snapshot(), before, "the dry run wrote");
    let run = l.p.run(&["recover", ".claude/iterative/s"], "");
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout.contains("kept: task") && run.stdout.contains("dropped: T2 ("),
        "{run:?}"
    );
    let s = l.state();
    assert_eq!(s["task"], "Keep me");
    assert_eq!(s["tasks"]["T1"]["completed_at"], NOW);
    assert_eq!(l.counters("T1"), ("done".into(), 3, 1));
    assert_eq!(l.counters("T2"), ("confirming".into(), 1, 1));
    let aside: Vec<_> = std::fs::read_dir(l.dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().contains("state.json.corrupt-"))
        .collect();
    assert_eq!(aside.len(), 1);
    assert_eq!(std::fs::read(&aside[0]).unwrap(), original);
    assert_eq!(l.p.run(&["validate"], "").code, 0);
}

#[test]
fn status_is_read_only_and_reconcile_reports_each_problem_once() {
    // Item 18.
    let l = Loop::new("s", &["T1"], 5);
    std::fs::write(l.dir().join("state.json"), b"{").unwrap();
    let before = l.p.snapshot();
    let st = l.p.run(&["status"], "");
    assert!(
        st.stdout
            .contains("would move it aside and rebuild it from progress.md")
            && !st.stdout.contains("rebuilt"),
        "{st:?}"
    );
    assert_eq!(l.p.snapshot(), before);
    // A store that cannot be read: one line, exit 1, never "Nothing to reconcile.".
    std::fs::remove_file(l.dir().join("state.json")).unwrap();
    std::fs::create_dir(l.dir().join("state.json")).unwrap();
    let run = l.p.run(&["reconcile"], "");
    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(
        run.stdout.matches("Is a directory").count()
            + run.stdout.matches("not a regular file").count(),
        1,
        "{run:?}"
    );
    assert!(!run.stdout.contains("Nothing to reconcile."), "{run:?}");
    // A corrupt task list (claude-tasks) the reconciliation cannot fix: said once, exit 1.
    let p = Project::new();
    let list = p.home.join(".claude/tasks/proj");
    std::fs::create_dir_all(&list).unwrap();
    std::fs::write(list.join("tasks.json"), b"{").unwrap();
    let run = p.run(&["reconcile"], "");
    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(run.stdout.matches("tasks.json").count(), 1, "{run:?}");
    assert!(run.stdout.starts_with("problem: "), "{run:?}");
    assert!(!run.stdout.contains("Nothing to reconcile."), "{run:?}");
}

#[test]
fn a_transition_keeps_key_order_unknown_fields_and_nulls() {
    // Issue 21: state.json is read into a typed model and written back over the document, so
    // a hook transition keeps the file's key order (not the seed's), fields taskhook does not
    // know (top level, a unit, a nested object), `null`s, and numbers as written.
    let p = Project::new();
    let text = r#"{
  "phase": "execute",
  "x_owner": {"name": "ana", "weights": [1, 2.5]},
  "tasks": {
    "T2": {"max_iterations": 4, "x_note": "later", "status": "pending", "started_at": null},
    "T1": {"x_points": 3, "status": "pending", "max_iterations": 5, "x_ratio": 0.5}
  },
  "mode": "development",
  "slug": "s",
  "current_task": null,
  "commits": []
}"#;
    p.write(".claude/iterative/s/state.json", text);
    let run = p.hook(&p.subagent_stop(
        "a1",
        "Work on <task>T1</task>.",
        "Model added.\n<signal>T1_DONE</signal>",
    ));
    assert!(reason(&run).contains("confirmation pass"), "{run:?}");
    let after = std::fs::read_to_string(p.root.join(".claude/iterative/s/state.json")).unwrap();
    let v: Value = serde_json::from_str(&after).unwrap();
    let keys = |v: &Value| -> Vec<String> { v.as_object().unwrap().keys().cloned().collect() };
    // The file's keys in its order, then what the transition added.
    assert_eq!(
        keys(&v),
        [
            "phase",
            "x_owner",
            "tasks",
            "mode",
            "slug",
            "current_task",
            "commits",
            "updated",
            "current_iteration",
            "taskhook"
        ],
        "{after}"
    );
    assert_eq!(v["x_owner"], json!({"name": "ana", "weights": [1, 2.5]}));
    assert!(
        after.contains("\"weights\": [\n      1,\n      2.5\n    ]"),
        "{after}"
    );
    assert_eq!(keys(&v["tasks"]), ["T2", "T1"]);
    let t1 = &v["tasks"]["T1"];
    assert_eq!(
        keys(t1),
        [
            "x_points",
            "status",
            "max_iterations",
            "x_ratio",
            "iterations_used",
            "confirmations_used",
            "started_at",
            "last_signal"
        ],
        "{after}"
    );
    assert_eq!(
        (t1["x_points"].as_u64(), t1["x_ratio"].as_f64()),
        (Some(3), Some(0.5))
    );
    assert_eq!(t1["status"], "confirming");
    assert_eq!(v["current_task"], "T1");
    let t2 = &v["tasks"]["T2"];
    assert_eq!(
        t2,
        &json!({"max_iterations": 4, "x_note": "later", "status": "pending", "started_at": null})
    );
    assert_eq!(
        keys(t2),
        ["max_iterations", "x_note", "status", "started_at"]
    );
}
