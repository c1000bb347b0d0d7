//! Layout `execute` (seed 001) with the real Claude Code: a subagent bound to L1-001 works in
//! the task's worktree, fails once, receives its feedback as Stop hook feedback, fixes it,
//! passes verification; the main agent hears it is queued, merges the branch, and hears the
//! run is completed. Checked on disk (execute-state.json) and in what reached the model.

use serde_json::json;

use crate::harness::{Request, Scenario};

fn git(s: &Scenario, args: &[&str]) {
    let out = std::process::Command::new("git")
        .args(args)
        .current_dir(&s.proj)
        .env("HOME", &s.home)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
}

#[test]
fn execute_fails_once_gets_the_feedback_and_passes() {
    let prompt = "SUBAGENT-L1 <task>L1-001</task> Implement the parser in .worktrees/L1-001.";
    let commit = "cd .worktrees/L1-001 && echo v1 > parser.txt && git add parser.txt && git commit -m 'feat: parser'";
    let fix = "cd .worktrees/L1-001 && echo v2 > parser.txt && git commit -am 'fix: count the last token'";
    let merge = "git merge --no-ff -m 'Merge L1-001' worktree-L1-001";
    let script = json!({
        "main": [
            [
                {"text": "Delegating L1-001."},
                {"tool": "Agent", "input": {
                    "description": "Work on L1-001",
                    "prompt": prompt,
                    "subagent_type": "general-purpose",
                    "run_in_background": false
                }}
            ],
            [{"tool": "Bash", "input": {"command": merge, "description": "Merge L1-001"}}],
            "E2E-MAIN-DONE"
        ],
        "agents": {"SUBAGENT-L1": [
            [{"tool": "Bash", "input": {"command": commit, "description": "Commit the parser"}}],
            "Ran the tests.\n<signal>L1-001_FAILED: test_parse failed</signal>\n<details>expected 3 tokens, got 2</details>\n<feedback>Count the last token too</feedback>",
            [{"tool": "Bash", "input": {"command": fix, "description": "Fix the parser"}}],
            "Fixed the count.\n<signal>L1-001_DONE</signal>",
            "Verified: the tests pass in the worktree.\n<signal>L1-001_DONE</signal>",
            "E2E-SUBAGENT-TOO-MANY-TURNS"
        ]},
        "latency_ms": {"SUBAGENT-L1": 250},
    });
    let s = Scenario::new("execute-retry", &script);
    for (k, v) in [("user.name", "E2E"), ("user.email", "e2e@example.invalid")] {
        git(&s, &["config", k, v]);
    }
    std::fs::write(s.path("README.md"), "app\n").unwrap();
    git(&s, &["add", "README.md"]);
    git(&s, &["commit", "-q", "-m", "initial"]);
    git(
        &s,
        &[
            "worktree",
            "add",
            "-q",
            ".worktrees/L1-001",
            "-b",
            "worktree-L1-001",
        ],
    );
    s.taskhook(&[
        "execute",
        "init",
        "docs/tasks/app",
        "--layer",
        "1-core=L1-001",
    ]);

    let run = s.claude(&["-p", "Execute the plan in docs/tasks/app."], &[]);
    assert_eq!(run.text(), "E2E-MAIN-DONE", "{:?}", run.result);

    // The subagent: its prompt, the commit's output, the failure's feedback, the fix's output,
    // the verification pass; then it is let go (exactly five requests).
    let sub = s.stream("SUBAGENT-L1");
    assert_eq!(
        sub.len(),
        5,
        "{:#?}",
        sub.iter().map(Request::last_user_text).collect::<Vec<_>>()
    );
    let retry = sub[2].last_user_text();
    assert!(
        retry.starts_with("Stop hook feedback:\nL1-001 failed on attempt 1 of 5: test_parse failed. Attempt 2 of 5 starts now"),
        "{retry}"
    );
    assert!(
        retry.contains("Feedback for attempt 2: Count the last token too"),
        "{retry}"
    );
    assert!(
        retry.contains("- attempt 1: test_parse failed (expected 3 tokens, got 2)"),
        "{retry}"
    );
    assert!(
        retry.contains("in its worktree") && retry.contains("(branch worktree-L1-001)"),
        "{retry}"
    );
    let verify = sub[4].last_user_text();
    assert!(
        verify.starts_with("Stop hook feedback:\nL1-001: verification (attempt 2 of 5)"),
        "{verify}"
    );

    // The main agent: told after its Agent call, then after its merge.
    let main = s.stream("main");
    assert_eq!(main.len(), 3);
    let after_agent = main[1].hook_contexts("PostToolUse:Agent hook additional context: ");
    assert!(
        after_agent
            .iter()
            .any(|c| c.contains("L1-001 is verified and queued for merge (priority 1)")),
        "{:#?}",
        main[1].messages()
    );
    let after_merge = main[2].hook_contexts("PostToolUse:Bash hook additional context: ");
    assert!(
        after_merge
            .iter()
            .any(|c| c.contains("L1-001 is merged and completed.")
                && c.contains("every layer is completed: the run is completed")),
        "{:#?}",
        main[2].messages()
    );

    // On disk.
    let state = s.json("docs/tasks/app/execute-state.json");
    let t = &state["tasks"]["L1-001"];
    assert_eq!(t["status"], "completed", "{state:#}");
    assert_eq!(t["attempts"], 2, "{state:#}");
    assert_eq!(t["errors"][0]["attempt"], 1);
    assert_eq!(t["errors"][0]["message"], "test_parse failed");
    assert_eq!(t["errors"][0]["details"], "expected 3 tokens, got 2");
    assert_eq!(
        t["retry_feedback"],
        json!([{"attempt": 2, "feedback": "Count the last token too"}])
    );
    let kinds: Vec<(&str, u64)> = t["commits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["type"].as_str().unwrap(), c["attempt"].as_u64().unwrap()))
        .collect();
    assert_eq!(kinds, [("implementation", 1), ("fix", 2)], "{state:#}");
    assert_eq!(
        (t["worktree_path"].is_null(), t["branch"].is_null()),
        (true, true)
    );
    assert!(t["merged_at"].is_string());
    assert_eq!(
        state["merge_queue"],
        json!([{"task_id": "L1-001", "priority": 1, "status": "merged"}])
    );
    assert_eq!(state["status"], "completed", "{state:#}");
    assert_eq!(state["layers"]["1-core"]["status"], "completed");
    assert_eq!(state["metrics"]["total_attempts"], 2);
    assert_eq!(state["metrics"]["total_commits"], 2);
    s.taskhook(&["validate"]);
}
