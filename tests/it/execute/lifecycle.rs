//! The lifecycle driven by hooks: launches, DONE twice, FAILED with feedback and retries,
//! abandonment at the 5th failure, the 8-block limit, commits, merges, parallel stops; the
//! seed's own example advanced; metrics equal to a recount after every step.

use serde_json::{json, Value};

use super::{assert_recount, reason, silent, Exec};
use crate::common::NOW;

fn main_tool_use(e: &Exec) -> crate::common::Run {
    e.p.hook(&e.p.payload("PostToolUse.Read.json"))
}

#[test]
fn full_path_from_pending_to_completed_with_the_queue_in_completion_order() {
    let e = Exec::init("app", &["1-core=L1-001,L1-002,L1-003", "2-api=L2-001"]);
    let s = e.state();
    assert_eq!(s["status"], "pending");
    assert_eq!(s["current_layer"], "1-core");
    assert_recount(&s);

    for id in ["L1-001", "L1-002", "L1-003"] {
        silent(&e.launch(id));
        let t = e.task(id);
        assert_eq!(
            (
                t["status"].as_str(),
                t["attempts"].as_u64(),
                t["batch"].as_u64()
            ),
            (Some("in_progress"), Some(1), Some(1)),
            "{id}"
        );
        assert_recount(&e.state());
    }
    let s = e.state();
    assert_eq!(
        (s["status"].as_str(), s["started_at"].as_str()),
        (Some("in_progress"), Some(NOW))
    );
    assert_eq!(s["layers"]["1-core"]["status"], "in_progress");
    assert_eq!(s["layers"]["1-core"]["started_at"], NOW);
    assert_eq!(s["current_batch"], 1);

    // Completion order L1-002, L1-001, L1-003 gives the merge priorities.
    for (n, id) in ["L1-002", "L1-001", "L1-003"].iter().enumerate() {
        let r = reason(&e.bound(
            id,
            &format!("Implemented {id}.\n<signal>{id}_DONE</signal>"),
        ));
        assert!(
            r.starts_with(&format!("{id}: verification (attempt 1 of 5)")),
            "{r}"
        );
        assert!(
            r.contains(&format!("<signal>{id}_DONE</signal> again")),
            "{r}"
        );
        assert_eq!(e.status(id), "verifying");
        assert_recount(&e.state());
        silent(&e.bound(id, &format!("Tests pass.\n<signal>{id}_DONE</signal>")));
        assert_eq!(e.status(id), "verified");
        let q = e.state()["merge_queue"].clone();
        assert_eq!(
            q[n],
            json!({"task_id": id, "priority": n + 1, "status": "ready"}),
            "{q:#}"
        );
        assert_recount(&e.state());
    }
    // The main agent hears of each verification at its next tool call.
    let ctx = main_tool_use(&e).context();
    assert!(
        ctx.contains("L1-002 is verified and queued for merge (priority 1)"),
        "{ctx}"
    );
    assert!(
        ctx.contains("next is L1-002 (priority 1)") || ctx.contains("it is next"),
        "{ctx}"
    );

    let ctx = e.merge("worktree-L1-002").context();
    assert!(ctx.contains("L1-002 is merged and completed."), "{ctx}");
    let t = e.task("L1-002");
    assert_eq!(
        (t["status"].as_str(), t["merged_at"].as_str()),
        (Some("completed"), Some(NOW))
    );
    assert_eq!(
        (t["worktree_path"].clone(), t["branch"].clone()),
        (Value::Null, Value::Null)
    );
    assert_eq!(e.state()["merge_queue"][0]["status"], "merged");
    assert_recount(&e.state());

    let ctx = e.merge("worktree-L1-003").context();
    assert!(
        ctx.contains("out of priority order (L1-001 was ready before it)"),
        "{ctx}"
    );
    let ctx = e.merge("worktree-L1-001").context();
    assert!(
        ctx.contains("layer 1-core is completed; layer 2-api is current. Ready: L2-001."),
        "{ctx}"
    );
    let s = e.state();
    assert_eq!(s["layers"]["1-core"]["status"], "completed");
    assert_eq!(s["layers"]["1-core"]["completed_at"], NOW);
    assert_eq!(s["current_layer"], "2-api");
    assert_eq!(s["current_batch"], Value::Null);
    assert_recount(&s);

    silent(&e.launch("L2-001"));
    assert_eq!(e.state()["current_batch"], 1);
    reason(&e.bound("L2-001", "<signal>L2-001_DONE</signal>"));
    silent(&e.bound("L2-001", "<signal>L2-001_DONE</signal>"));
    let ctx = e.merge("worktree-L2-001").context();
    assert!(
        ctx.contains("every layer is completed: the run is completed"),
        "{ctx}"
    );
    let s = e.state();
    assert_eq!(
        (s["status"].as_str(), s["completed_at"].as_str()),
        (Some("completed"), Some(NOW))
    );
    assert_eq!(s["current_layer"], Value::Null);
    assert_recount(&s);
    assert_eq!(e.p.run(&["validate"], "").code, 0);
}

#[test]
fn failure_feedback_and_earlier_errors_reach_the_next_attempt() {
    let e = Exec::init("app", &["1-core=L1-001"]);
    silent(&e.launch("L1-001"));
    let msg = "Ran the tests.\n<signal>L1-001_FAILED: test_create_task failed</signal>\n<details>expected 201 got 422</details>\n<feedback>Add min_length=1 to TaskCreateRequest.title</feedback>";
    let r = reason(&e.bound("L1-001", msg));
    assert!(
        r.starts_with(
            "L1-001 failed on attempt 1 of 5: test_create_task failed. Attempt 2 of 5 starts now"
        ),
        "{r}"
    );
    assert!(
        r.contains("Feedback for attempt 2: Add min_length=1 to TaskCreateRequest.title"),
        "{r}"
    );
    assert!(
        r.contains("- attempt 1: test_create_task failed (expected 201 got 422)"),
        "{r}"
    );
    let t = e.task("L1-001");
    assert_eq!(t["status"], "in_progress");
    assert_eq!(t["attempts"], 2);
    assert_eq!(
        t["errors"],
        json!([{"attempt": 1, "message": "test_create_task failed", "details": "expected 201 got 422", "timestamp": NOW}])
    );
    assert_eq!(
        t["retry_feedback"],
        json!([{"attempt": 2, "feedback": "Add min_length=1 to TaskCreateRequest.title"}])
    );
    assert_recount(&e.state());

    // The second failure (no <feedback>): the feedback is made from the message; both errors shown.
    let r = reason(&e.bound("L1-001", "<signal>L1-001_FAILED: lint red</signal>"));
    assert!(
        r.contains("Feedback for attempt 3: Fix what failed: lint red"),
        "{r}"
    );
    assert!(
        r.contains("- attempt 1: test_create_task failed") && r.contains("- attempt 2: lint red"),
        "{r}"
    );
    reason(&e.bound("L1-001", "<signal>L1-001_DONE</signal>"));
    silent(&e.bound("L1-001", "<signal>L1-001_DONE</signal>"));
    let t = e.task("L1-001");
    assert_eq!(
        (t["status"].as_str(), t["attempts"].as_u64()),
        (Some("verified"), Some(3))
    );
    assert_recount(&e.state());
}

#[test]
fn abandonment_at_exactly_the_fifth_failure_stops_the_layer() {
    let e = Exec::init("app", &["1-core=L1-001,L1-002", "2-api=L2-001"]);
    silent(&e.launch("L1-001"));
    for n in 1..5u64 {
        let r = reason(&e.bound(
            "L1-001",
            &format!("<signal>L1-001_FAILED: red {n}</signal>"),
        ));
        assert!(
            r.contains(&format!("Attempt {} of 5 starts now", n + 1)),
            "{r}"
        );
        assert_eq!(e.task("L1-001")["attempts"], n + 1);
        assert_recount(&e.state());
    }
    let run = e.bound("L1-001", "<signal>L1-001_FAILED: red 5</signal>");
    assert_eq!(run.code, 0, "{run:?}");
    let v = run.json();
    assert!(v.get("decision").is_none(), "no 6th attempt: {v}");
    assert!(
        v["systemMessage"]
            .as_str()
            .unwrap()
            .contains("L1-001 is abandoned after 5 failed attempts (last: red 5)"),
        "{v}"
    );
    let s = e.state();
    assert_eq!(s["tasks"]["L1-001"]["status"], "abandoned");
    assert_eq!(s["tasks"]["L1-001"]["errors"].as_array().unwrap().len(), 5);
    assert_eq!(
        s["tasks"]["L1-001"]["retry_feedback"]
            .as_array()
            .unwrap()
            .len(),
        4
    );
    assert_eq!(s["status"], "abandoned");
    assert_eq!(s["current_layer"], "1-core");
    assert_eq!(s["layers"]["1-core"]["tasks_failed"], 1);
    assert_recount(&s);

    // The main agent is told, and no task of the stopped run starts.
    let ctx = main_tool_use(&e).context();
    assert!(
        ctx.contains("Layer 1-core is stopped and the run is abandoned: do not start more tasks"),
        "{ctx}"
    );
    let denied = e.launch("L1-002").json();
    assert_eq!(
        denied["hookSpecificOutput"]["permissionDecision"], "deny",
        "{denied}"
    );
    let why = denied["hookSpecificOutput"]["permissionDecisionReason"]
        .as_str()
        .unwrap();
    assert!(
        why.contains("not starting L1-002: the run is abandoned")
            && why.contains("reset-task L1-001"),
        "{why}"
    );
    assert_eq!(e.status("L1-002"), "pending");

    let ctx =
        e.p.hook(&e.p.payload("SessionStart.startup.json"))
            .context();
    assert!(
        ctx.contains("Resume: Skip L1-001, stop layer 1-core"),
        "{ctx}"
    );
    assert!(
        ctx.contains("Blocked: L1-001 (abandoned after 5 attempts"),
        "{ctx}"
    );

    // reset-task gives fresh attempts and lifts the abandonment.
    assert_eq!(e.cmd(&["reset-task", "L1-001"]).code, 0);
    assert_eq!(e.state()["status"], "in_progress");
    silent(&e.launch("L1-002"));
    assert_eq!(e.status("L1-002"), "in_progress");
}

#[test]
fn the_ninth_block_is_never_sent_and_a_new_subagent_continues_the_count() {
    let e = Exec::init("app", &["1-core=L1-001"]);
    silent(&e.launch("L1-001"));
    for _ in 0..8 {
        let r = reason(&e.bound("L1-001", "Still working."));
        assert!(
            r.starts_with(
                "L1-001 is in_progress (attempt 1 of 5) and your final message has no signal"
            ),
            "{r}"
        );
    }
    assert_eq!(
        e.task("L1-001")["subagent"],
        json!({"agent_id": "a-L1-001", "blocks": 8})
    );
    let run = e.bound("L1-001", "<signal>L1-001_FAILED: flaky</signal>");
    let v = run.json();
    assert!(
        v.get("decision").is_none(),
        "a 9th block is ignored by Claude Code: {v}"
    );
    let t = e.task("L1-001");
    assert_eq!(
        (t["status"].as_str(), t["attempts"].as_u64()),
        (Some("failed"), Some(1))
    );
    assert_eq!(t["retry_feedback"][0]["attempt"], 2);
    let ctx = main_tool_use(&e).context();
    assert!(
        ctx.contains("lets a subagent go after 8 hook blocks in a row"),
        "{ctx}"
    );
    assert!(
        ctx.contains("Relaunch it with <task>L1-001</task> for attempt 2"),
        "{ctx}"
    );
    // The relaunched subagent runs attempt 2 and may be sent back again.
    silent(&e.launch("L1-001"));
    assert_eq!(e.task("L1-001")["attempts"], 2);
    let r = reason(&e.stop(
        "a-second",
        "Retry <task>L1-001</task>.",
        "<signal>L1-001_DONE</signal>",
    ));
    assert!(r.contains("verification (attempt 2 of 5)"), "{r}");
    assert_recount(&e.state());
}

#[test]
fn unbound_and_blocked_signals_tell_the_main_agent_and_never_block() {
    let e = Exec::init("app", &["1-core=L1-001"]);
    silent(&e.launch("L1-001"));
    silent(&e.stop(
        "other",
        "Do something else.",
        "<signal>L1-001_DONE</signal>",
    ));
    assert_eq!(e.status("L1-001"), "verifying");
    let ctx = main_tool_use(&e).context();
    assert!(
        ctx.contains("L1-001 is verifying (a subagent not bound to it signalled DONE)"),
        "{ctx}"
    );
    let run = e.bound(
        "L1-001",
        "<signal>L1-001_BLOCKED: needs the API key</signal>",
    );
    assert!(run.json()["systemMessage"]
        .as_str()
        .unwrap()
        .contains("reports it is blocked: needs the API key"));
    assert_eq!(e.status("L1-001"), "verifying");
    // An unbound failure waits for a relaunch: failed, attempts unchanged.
    silent(&e.stop("other", "x", "<signal>L1-001_FAILED: broke</signal>"));
    let t = e.task("L1-001");
    assert_eq!(
        (t["status"].as_str(), t["attempts"].as_u64()),
        (Some("failed"), Some(1))
    );
}

#[test]
fn commits_are_attributed_by_branch_binding_or_message() {
    let e = Exec::init("app", &["1-core=L1-001,L1-002,L1-003"]);
    for id in ["L1-001", "L1-002", "L1-003"] {
        silent(&e.launch(id));
    }
    silent(&e.commit(Some("a9"), "worktree-L1-001", "1a2b3c4", "feat: parser"));
    // The subagent's binding (remembered at its Agent call) names L1-002.
    let mut returned = e.p.payload("PostToolUse.Agent.json");
    returned["tool_input"]["prompt"] = json!("Implement <task>L1-002</task>.");
    returned["tool_response"]["agentId"] = json!("bg-2");
    e.p.hook(&returned);
    silent(&e.commit(Some("bg-2"), "main", "2b3c4d5", "feat: routes"));
    silent(&e.commit(None, "main", "3c4d5e6", "fix(L1-003): typo"));
    silent(&e.commit(None, "main", "4d5e6f7", "chore: unrelated"));
    silent(&e.commit(None, "worktree-L1-001", "1a2b3c4", "feat: parser"));
    let s = e.state();
    assert_eq!(
        s["tasks"]["L1-001"]["commits"],
        json!([{"hash": "1a2b3c4", "type": "implementation", "attempt": 1, "created_at": NOW}])
    );
    assert_eq!(s["tasks"]["L1-001"]["branch"], "worktree-L1-001");
    assert_eq!(s["tasks"]["L1-002"]["commits"][0]["hash"], "2b3c4d5");
    assert_eq!(s["tasks"]["L1-003"]["commits"][0]["hash"], "3c4d5e6");
    assert_eq!(s["metrics"]["total_commits"], 3);
    // A commit in a later attempt is a fix.
    reason(&e.bound("L1-001", "<signal>L1-001_FAILED: red</signal>"));
    silent(&e.commit(None, "worktree-L1-001", "5e6f7a8", "fix: red"));
    assert_eq!(
        e.task("L1-001")["commits"][1],
        json!({"hash": "5e6f7a8", "type": "fix", "attempt": 2, "created_at": NOW})
    );
    assert_recount(&e.state());
}

#[test]
fn parallel_stops_of_one_batch_lose_nothing() {
    let e = Exec::init("app", &["1-core=L1-001,L1-002,L1-003"]);
    let ids = ["L1-001", "L1-002", "L1-003"];
    for id in ids {
        silent(&e.launch(id));
    }
    let round = |message: &dyn Fn(&str) -> String| {
        let children: Vec<_> = ids
            .iter()
            .map(|id| {
                let prompt = format!("Implement <task>{id}</task>.");
                e.p.spawn_hook(&e.stop_payload(&format!("a-{id}"), &prompt, &message(id)))
            })
            .collect();
        children
            .into_iter()
            .map(|c| c.wait_with_output().unwrap())
            .collect::<Vec<_>>()
    };
    for out in round(&|id| format!("<signal>{id}_DONE</signal>")) {
        assert!(out.status.success(), "{out:?}");
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["decision"], "block", "{v}");
    }
    for id in ids {
        assert_eq!(e.status(id), "verifying");
    }
    for out in round(&|id| format!("<signal>{id}_DONE</signal>")) {
        assert!(out.status.success(), "{out:?}");
    }
    let s = e.state();
    let mut queued: Vec<(String, i64)> = s["merge_queue"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| {
            (
                q["task_id"].as_str().unwrap().to_string(),
                q["priority"].as_i64().unwrap(),
            )
        })
        .collect();
    queued.sort_by_key(|q| q.1);
    assert_eq!(
        queued.iter().map(|q| q.1).collect::<Vec<_>>(),
        [1, 2, 3],
        "{s:#}"
    );
    let mut names: Vec<String> = queued.into_iter().map(|q| q.0).collect();
    names.sort();
    assert_eq!(names, ids);
    for id in ids {
        assert_eq!(e.status(id), "verified");
    }
    assert_recount(&s);
}

fn seed_example() -> Value {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/schemas/execute-state/valid/seed-full-example.json"
    ))
    .unwrap();
    let mut v: Value = serde_json::from_str(&text).unwrap();
    v["x_skill_notes"] = json!({"kept": true});
    v["tasks"]["L2-003"]["x_owner"] = json!("skill");
    v
}

#[test]
fn the_seeds_own_example_is_advanced_as_it_is() {
    let e = Exec::with_state("slack-task-manager", &seed_example());
    // SessionStart changes nothing in a consistent state.
    let before = std::fs::read(e.file()).unwrap();
    let ctx =
        e.p.hook(&e.p.payload("SessionStart.startup.json"))
            .context();
    assert!(ctx.contains("execute \"slack-task-manager\""), "{ctx}");
    assert!(
        ctx.contains("layer 2-backend 4/6 completed, batch 2"),
        "{ctx}"
    );
    assert!(
        ctx.contains("Resume: Continue with remaining 2 tasks."),
        "{ctx}"
    );
    assert!(
        ctx.contains("In progress: L2-003 (in_progress, attempt 1 of 5)"),
        "{ctx}"
    );
    assert_eq!(
        std::fs::read(e.file()).unwrap(),
        before,
        "nothing to fix, nothing written"
    );

    reason(&e.bound("L2-003", "Done.\n<signal>L2-003_DONE</signal>"));
    silent(&e.commit(
        Some("a-L2-003"),
        "worktree-L2-003",
        "a1b2c3d",
        "feat: L2-003 endpoints",
    ));
    silent(&e.bound("L2-003", "Verified.\n<signal>L2-003_DONE</signal>"));
    let s = e.state();
    // Its queue entry was already there (pending, priority 1): now ready, same priority.
    assert_eq!(
        s["merge_queue"][0],
        json!({"task_id": "L2-003", "priority": 1, "status": "ready"})
    );
    assert_eq!(
        s["merge_queue"][1],
        json!({"task_id": "L2-004", "priority": 2, "status": "pending"})
    );
    assert_eq!(s["tasks"]["L2-003"]["commits"][0]["type"], "implementation");
    e.merge("worktree-L2-003");
    let s = e.state();
    assert_eq!(s["tasks"]["L2-003"]["status"], "completed");
    assert_eq!(s["layers"]["2-backend"]["tasks_completed"], 5);
    assert_eq!(
        s["layers"]["2-backend"]["status"], "in_progress",
        "the file counts 6 tasks"
    );
    assert_eq!(s["layers"]["0-setup"], seed_example()["layers"]["0-setup"]);
    assert_eq!(s["status"], "in_progress");
    let m = &s["metrics"];
    assert_eq!(
        (
            m["total_tasks"].as_u64(),
            m["completed_tasks"].as_u64(),
            m["total_attempts"].as_u64(),
            m["total_commits"].as_u64()
        ),
        (Some(15), Some(12), Some(13), Some(15))
    );
    // From started_at 2025-01-11T10:00:00Z to now.
    assert_eq!(m["elapsed_time_seconds"], 35_776_800);
    assert_eq!(s["x_skill_notes"], json!({"kept": true}));
    assert_eq!(s["tasks"]["L2-003"]["x_owner"], "skill");
    assert_eq!(s["prd_slug"], "slack-task-manager");
    assert_eq!(e.p.run(&["validate"], "").code, 0);
}

/// PostToolUse of a background `Agent` call: Claude Code's answer names the new agent, and
/// taskhook remembers which tasks its prompt bound it to.
fn background_launched(e: &Exec, agent: &str, id: &str) {
    let mut p = e.p.payload("PostToolUse.Agent.background.json");
    p["tool_input"]["prompt"] = json!(format!("Implement <task>{id}</task>."));
    p["tool_response"]["prompt"] = p["tool_input"]["prompt"].clone();
    p["tool_response"]["agentId"] = json!(agent);
    e.p.hook(&p);
}

#[test]
fn a_second_agents_done_is_not_the_verification_pass_asked_of_the_first() {
    let e = Exec::init("app", &["1-core=L1-001"]);
    let prompt = "Implement <task>L1-001</task>.";
    silent(&e.launch("L1-001"));
    silent(&e.launch("L1-001"));
    let r = reason(&e.stop("agent-a", prompt, "<signal>L1-001_DONE</signal>"));
    assert!(
        r.starts_with("L1-001: verification (attempt 1 of 5)"),
        "{r}"
    );
    // agent-b finished its own implementation: not the pass asked of agent-a.
    silent(&e.stop(
        "agent-b",
        prompt,
        "Implemented.\n<signal>L1-001_DONE</signal>",
    ));
    assert_eq!(e.status("L1-001"), "verifying");
    assert_eq!(
        main_tool_use(&e).context(),
        "execute app: L1-001 is verifying; the DONE from subagent agent-b does not count as the verification pass (verification was asked of subagent agent-a). Wait for its report, or launch a subagent with <task>L1-001</task> to verify it."
    );
    // agent-a's pass counts.
    silent(&e.stop(
        "agent-a",
        prompt,
        "Tests pass.\n<signal>L1-001_DONE</signal>",
    ));
    assert_eq!(e.status("L1-001"), "verified");
    assert!(e.task("L1-001").get("verification").is_none());
}

#[test]
fn a_verification_asked_of_the_main_agent_counts_from_the_subagent_it_launches() {
    let e = Exec::init("app", &["1-core=L1-001"]);
    let prompt = "Implement <task>L1-001</task>.";
    silent(&e.launch("L1-001"));
    background_launched(&e, "agent-b", "L1-001");
    // An unbound subagent's DONE: the main agent is asked to launch a verifier.
    silent(&e.stop("other", "Something else.", "<signal>L1-001_DONE</signal>"));
    assert_eq!(e.status("L1-001"), "verifying");
    main_tool_use(&e);
    // agent-b (working on it before verification was asked) is not that verifier…
    silent(&e.stop("agent-b", prompt, "<signal>L1-001_DONE</signal>"));
    assert_eq!(e.status("L1-001"), "verifying");
    assert_eq!(
        main_tool_use(&e).context(),
        "execute app: L1-001 is verifying; the DONE from subagent agent-b does not count as the verification pass (no subagent has been launched to verify it since verification was asked). Launch a subagent with <task>L1-001</task> to verify it."
    );
    // … not even after one was launched.
    silent(&e.launch("L1-001"));
    silent(&e.stop("agent-b", prompt, "<signal>L1-001_DONE</signal>"));
    assert_eq!(e.status("L1-001"), "verifying");
    assert_eq!(
        main_tool_use(&e).context(),
        "execute app: L1-001 is verifying; the DONE from subagent agent-b does not count as the verification pass (agent-b was working on it before verification was asked). Wait for the report of the subagent launched to verify it."
    );
    // The subagent launched to verify it is.
    silent(&e.stop("agent-c", prompt, "<signal>L1-001_DONE</signal>"));
    assert_eq!(e.status("L1-001"), "verified");
}

#[test]
fn a_verification_by_hand_counts() {
    let e = Exec::init("app", &["1-core=L1-001"]);
    silent(&e.launch("L1-001"));
    reason(&e.bound("L1-001", "<signal>L1-001_DONE</signal>"));
    assert_eq!(e.cmd(&["done", "L1-001"]).code, 0);
    assert_eq!(e.status("L1-001"), "verified");
}

#[test]
fn a_notice_a_later_event_made_false_is_not_delivered() {
    let e = Exec::init("shop", &["0-setup=L0-001,L0-002"]);
    silent(&e.launch("L0-002"));
    for _ in 0..5 {
        e.bound("L0-002", "<signal>L0-002_FAILED: red</signal>");
    }
    assert_eq!(e.status("L0-002"), "abandoned");
    // Before the main agent's next tool call: the user resets L0-002, it is redone, verified
    // (another notice: "it is next: `git merge worktree-L0-002`") and merged by hand.
    assert_eq!(e.cmd(&["reset-task", "L0-002"]).code, 0);
    silent(&e.launch("L0-002"));
    reason(&e.bound("L0-002", "<signal>L0-002_DONE</signal>"));
    silent(&e.bound("L0-002", "<signal>L0-002_DONE</signal>"));
    assert_eq!(e.cmd(&["merged", "L0-002"]).code, 0);
    // L0-001 is verified and waits for its merge: that notice is still true.
    silent(&e.launch("L0-001"));
    reason(&e.bound("L0-001", "<signal>L0-001_DONE</signal>"));
    silent(&e.bound("L0-001", "<signal>L0-001_DONE</signal>"));
    let ctx = main_tool_use(&e).context();
    assert_eq!(
        ctx,
        "execute shop: L0-001 is verified and queued for merge (priority 2). Merge in priority order; it is next: `git merge worktree-L0-001` (after a merge done another way: `taskhook execute merged ID`)."
    );
    silent(&main_tool_use(&e));
}

#[test]
fn a_later_notice_about_a_task_supersedes_an_earlier_one() {
    let e = Exec::init("shop", &["1-core=L1-001"]);
    for n in 1..=2 {
        silent(&e.launch("L1-001"));
        silent(&e.stop(
            "other",
            "Something else.",
            &format!("<signal>L1-001_FAILED: red {n}</signal>"),
        ));
    }
    assert_eq!(
        main_tool_use(&e).context(),
        "execute shop: L1-001 failed attempt 2 of 5. Relaunch it with <task>L1-001</task> for attempt 3 and give the subagent this feedback: Fix what failed: red 2"
    );
}

/// The typed model writes back over the file it read: a state in its own key order, with
/// fields taskhook does not know (at the top, in a task, a layer and the metrics) and fields
/// that are `null`, keeps all of them, in place, through real hook transitions.
#[test]
fn a_hook_transition_keeps_key_order_nulls_and_unknown_fields() {
    let text = r#"{
  "tasks": {
    "L1-001": {"x_note": {"keep": [1, 2.5]}, "branch": null, "attempts": 0, "status": "pending", "worktree_path": null},
    "L1-002": {"status": "pending", "x_owner": "me", "attempts": 0}
  },
  "x_top": {"z": 1, "a": 2},
  "metrics": {"x_rate": 0.5, "total_tasks": 2, "completed_tasks": 0, "failed_tasks": 0, "total_attempts": 0, "total_commits": 0, "elapsed_time_seconds": 0},
  "layers": {"1-core": {"x_layer": true, "status": "pending", "tasks_total": 2, "tasks_completed": 0, "tasks_failed": 0}},
  "status": "pending",
  "schema_version": "2.0",
  "current_layer": "1-core",
  "current_batch": null,
  "completed_at": null,
  "merge_queue": []
}"#;
    let before: Value = serde_json::from_str(text).unwrap();
    let e = Exec::with_state("app", &before);
    silent(&e.launch("L1-001"));
    reason(&e.bound("L1-001", "Done.\n<signal>L1-001_DONE</signal>"));
    let s = e.state();
    assert_eq!(e.status("L1-001"), "verifying");
    let keys = |v: &Value| -> Vec<String> { v.as_object().unwrap().keys().cloned().collect() };
    let old = keys(&before);
    assert_eq!(keys(&s)[..old.len()], old[..], "{s:#}");
    assert_eq!(
        keys(&s)[old.len()..],
        ["started_at".to_string(), "updated_at".to_string()]
    );
    let t = &s["tasks"]["L1-001"];
    let old_t = keys(&before["tasks"]["L1-001"]);
    assert_eq!(keys(t)[..old_t.len()], old_t[..], "{t:#}");
    assert_eq!(t["x_note"], json!({"keep": [1, 2.5]}));
    assert_eq!(
        (&t["branch"], &t["worktree_path"]),
        (&Value::Null, &Value::Null)
    );
    assert_eq!(s["tasks"]["L1-002"], before["tasks"]["L1-002"]);
    assert_eq!(
        keys(&s["tasks"]["L1-002"]),
        keys(&before["tasks"]["L1-002"])
    );
    assert_eq!(keys(&s["x_top"]), ["z", "a"]);
    assert_eq!(s["x_top"], before["x_top"]);
    assert_eq!(keys(&s["metrics"]), keys(&before["metrics"]));
    assert_eq!(s["metrics"]["x_rate"], 0.5);
    assert!(s["metrics"]["elapsed_time_seconds"].is_u64(), "{s:#}");
    assert_eq!(s["layers"]["1-core"]["x_layer"], true);
    assert_eq!(
        keys(&s["layers"]["1-core"])[..5],
        keys(&before["layers"]["1-core"])[..]
    );
    assert_eq!(
        (&s["completed_at"], &s["current_batch"]),
        (&Value::Null, &json!(1))
    );
}

/// A transition that keeps every task in its place is written as a stream over the file as
/// read: the tasks it left alone keep their bytes exactly (here written compactly, which a
/// whole write would lay out again), the copy of the latest state holds the same bytes as the
/// state, and no temp file is left beside them.
#[test]
fn a_transition_in_place_keeps_other_tasks_bytes_and_the_copy_current() {
    let e = Exec::with_state(
        "app",
        &json!({"schema_version": "2.0", "status": "pending", "current_layer": "1-core",
            "layers": {"1-core": {"status": "pending", "tasks_total": 2, "tasks_completed": 0, "tasks_failed": 0}},
            "tasks": {"L1-001": {"status": "pending", "attempts": 0}, "L1-002": {"status": "pending", "attempts": 0}},
            "merge_queue": []}),
    );
    // The first transition writes the file as taskhook lays it out; then L1-002 is given
    // compactly, as another writer might.
    silent(&e.launch("L1-001"));
    let laid_out = String::from_utf8(std::fs::read(e.file()).unwrap()).unwrap();
    let pretty = "\"L1-002\": {\n      \"status\": \"pending\",\n      \"attempts\": 0\n    }";
    assert!(laid_out.contains(pretty), "{laid_out}");
    let compact = "\"L1-002\": {\"status\":\"pending\",  \"attempts\":0}";
    let written = laid_out.replace(pretty, compact);
    std::fs::write(e.file(), &written).unwrap();
    reason(&e.bound("L1-001", "Done.\n<signal>L1-001_DONE</signal>"));
    assert_eq!(e.status("L1-001"), "verifying");
    let now = std::fs::read(e.file()).unwrap();
    let text = String::from_utf8(now.clone()).unwrap();
    assert!(text.contains(compact), "{text}");
    assert_eq!(
        std::fs::read(e.dir().join(".execute-state.json.last-good")).unwrap(),
        now
    );
    let mut names: Vec<String> = std::fs::read_dir(e.dir())
        .unwrap()
        .map(|d| d.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            ".execute-state.json.last-good",
            ".execute-state.json.lock",
            "execute-state.json"
        ]
    );
}

/// The merge queue is read entry by entry straight into its type: one entry the schema refuses
/// refuses the whole state as before (the whole reading words where), and a valid queue comes
/// back whole through a transition.
#[test]
fn a_merge_queue_entry_the_schema_refuses_refuses_the_state() {
    let state = |status: &str| {
        json!({"schema_version": "2.0", "status": "in_progress", "current_layer": "1-core",
            "layers": {"1-core": {"status": "in_progress", "tasks_total": 2, "tasks_completed": 1, "tasks_failed": 0}},
            "tasks": {"L1-001": {"status": "completed", "attempts": 1}, "L1-002": {"status": "pending", "attempts": 0}},
            "merge_queue": [{"task_id": "L1-001", "priority": 1, "status": status, "x_by": "me"}]})
    };
    let bad = Exec::with_state("app", &state("done"));
    let before = std::fs::read(bad.file()).unwrap();
    let run = bad.launch("L1-002");
    assert!(run.stderr.contains("is corrupt"), "{run:?}");
    assert!(run.stderr.contains("merge_queue"), "{run:?}");
    assert_eq!(std::fs::read(bad.file()).unwrap(), before);

    let good = Exec::with_state("app", &state("merged"));
    silent(&good.launch("L1-002"));
    assert_eq!(good.status("L1-002"), "in_progress");
    assert_eq!(
        good.state()["merge_queue"],
        json!([{"task_id": "L1-001", "priority": 1, "status": "merged", "x_by": "me"}])
    );
}
