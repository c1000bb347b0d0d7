//! The hooks of seed 004: launches start tasks, signals finish or escalate them, stops halt the
//! main agent until `taskhook cdd continue`, and subagents may not move tasks.

use serde_json::{json, Value};

use super::{bash_ran, code, ok, payload, Ws};
use crate::common::Run;

fn launch(w: &Ws, task: &str) -> Run {
    let mut v = payload(w, "PreToolUse.Agent.json");
    v["tool_input"]["prompt"] = json!(format!("SUBAGENT: do <task>{task}</task> from the plan."));
    w.hook(&v)
}

/// A subagent bound to `task` stops with `message`.
fn subagent_stops(w: &Ws, agent: &str, task: &str, message: &str) -> Run {
    let transcript = w.p.tmp.path().join(format!("agent-{agent}.jsonl"));
    let lines = [
        json!({"type": "user", "message": {"role": "user", "content": format!("Do <task>{task}</task>.")}}),
        json!({"type": "assistant", "message": {"content": [{"type": "text", "text": message}]}}),
    ];
    std::fs::write(
        &transcript,
        lines.iter().map(|l| format!("{l}\n")).collect::<String>(),
    )
    .unwrap();
    let mut v = payload(w, "SubagentStop.json");
    v["agent_id"] = json!(agent);
    v["agent_transcript_path"] = json!(transcript);
    v["last_assistant_message"] = json!(message);
    w.hook(&v)
}

/// The main agent's `Agent` call for `task` returns.
fn agent_returns(w: &Ws, agent: &str, task: &str) -> Run {
    let mut v = payload(w, "PostToolUse.Agent.json");
    v["tool_input"]["prompt"] = json!(format!("SUBAGENT: do <task>{task}</task> from the plan."));
    v["tool_response"]["agentId"] = json!(agent);
    v["tool_response"]["content"] = json!([{"type": "text", "text": "Finished."}]);
    w.hook(&v)
}

fn main_reads(w: &Ws) -> Run {
    w.hook(&payload(w, "PostToolUse.Read.json"))
}

fn silent(run: &Run) {
    assert_eq!(
        (run.code, run.stdout.as_str(), run.stderr.as_str()),
        (0, "", ""),
        "{run:?}"
    );
}

fn halted(run: &Run) -> String {
    assert_eq!(run.code, 0, "{run:?}");
    let v = run.json();
    assert_eq!(v["continue"], false, "{run:?}");
    v["stopReason"].as_str().unwrap().to_string()
}

fn context(run: &Run) -> String {
    run.context()
}

fn agents(w: &Ws) -> Value {
    serde_json::from_str(
        &std::fs::read_to_string(w.p.root.join(".claude/taskhook/agents.json")).unwrap(),
    )
    .unwrap()
}

#[test]
fn launches_and_signals_drive_the_tasks_and_a_stop_halts_the_main_agent() {
    let w = Ws::seeded();
    // A launch bound to foo.md starts it.
    silent(&launch(&w, "foo.md"));
    assert_eq!(w.folders_of("foo.md"), ["in_progress"]);
    assert_eq!(w.history().last().unwrap()["action"], "start");
    // A second launch of another task while foo.md runs is refused.
    let refused = launch(&w, "bar.md").json();
    assert_eq!(
        refused["hookSpecificOutput"]["permissionDecision"], "deny",
        "{refused}"
    );
    assert!(refused["hookSpecificOutput"]["permissionDecisionReason"]
        .as_str()
        .unwrap()
        .contains("TASK_IN_PROGRESS"));
    // Relaunching foo.md is fine and changes nothing.
    silent(&launch(&w, "foo.md"));

    // DONE runs done; the main agent hears it on the Agent call's PostToolUse.
    let stop = subagent_stops(
        &w,
        "a1",
        "foo.md",
        "All done.\n<signal>foo.md_DONE</signal>",
    );
    silent(&stop);
    assert_eq!(w.folders_of("foo.md"), ["completed"]);
    let said = context(&agent_returns(&w, "a1", "foo.md"));
    assert!(said.contains("foo.md is done"), "{said}");
    assert!(
        said.contains("next is bar.md") && said.contains("<task>bar.md</task>"),
        "{said}"
    );

    // FAILED runs escalate; the main agent is told the next model and thinking level.
    silent(&launch(&w, "bar.md"));
    silent(&subagent_stops(
        &w,
        "a2",
        "bar.md",
        "<signal>bar.md_FAILED: the tests do not compile</signal>",
    ));
    assert_eq!(w.folders_of("bar.md"), ["pending"]);
    let esc = w.history().into_iter().last().unwrap();
    assert_eq!(esc["action"], "escalate");
    assert_eq!(esc["reason"], "the tests do not compile");
    let said = context(&agent_returns(&w, "a2", "bar.md"));
    assert!(
        said.contains("model sonnet and thinking level extended"),
        "{said}"
    );

    // bar.md is done: the next entry is the stop. The main agent halts on its Agent call's
    // PostToolUse, and on every later tool call, in this session and the next.
    silent(&launch(&w, "bar.md"));
    silent(&subagent_stops(
        &w,
        "a3",
        "bar.md",
        "Fixed.\n<signal>bar.md_DONE</signal>",
    ));
    let reason = halted(&agent_returns(&w, "a3", "bar.md"));
    assert!(
        reason.contains("Verify core features work before proceeding"),
        "{reason}"
    );
    assert!(
        reason.contains("taskhook cdd continue verify-core"),
        "{reason}"
    );
    let reached: Vec<Value> = w
        .history()
        .into_iter()
        .filter(|l| l["action"] == "stop_reached")
        .collect();
    assert_eq!(reached.len(), 1);
    halted(&main_reads(&w));
    let start = w.hook(&payload(&w, "SessionStart.resume.json"));
    let ctx = context(&start);
    assert!(
        ctx.contains("Stop waiting for a person: verify-core"),
        "{ctx}"
    );
    assert!(ctx.contains("taskhook cdd continue verify-core"), "{ctx}");
    halted(&main_reads(&w));
    // A subagent's tool calls are not halted by it; a launch behind the stop is refused.
    let mut sub = payload(&w, "PostToolUse.Read.json");
    sub["agent_id"] = json!("a9");
    silent(&w.hook(&sub));
    let refused = launch(&w, "baz.md").json();
    assert!(
        refused["hookSpecificOutput"]["permissionDecisionReason"]
            .as_str()
            .unwrap()
            .contains("STOP_NOT_PASSED"),
        "{refused}"
    );
    assert_eq!(w.folders_of("baz.md"), ["pending"]);

    // A person passes the stop: the halt is lifted, and work goes on.
    let d = ok(&w.cdd(&["continue", "verify-core"]));
    assert_eq!(d["halt_lifted"], true);
    silent(&main_reads(&w));
    assert!(agents(&w).get("halts").is_none(), "{}", agents(&w));
    let ctx = context(&w.hook(&payload(&w, "SessionStart.startup.json")));
    assert!(ctx.contains("Next: baz.md"), "{ctx}");
    silent(&launch(&w, "baz.md"));
    silent(&subagent_stops(
        &w,
        "a4",
        "baz.md",
        "<signal>baz.md_DONE</signal>",
    ));
    let said = context(&agent_returns(&w, "a4", "baz.md"));
    assert!(said.contains("every task is finished"), "{said}");
    assert_eq!(ok(&w.cdd(&["next"])), json!({"type": "done"}));
    assert_eq!(w.p.run(&["validate"], "").code, 0);
}

#[test]
fn next_answering_a_stop_halts_the_main_agent_and_continue_lifts_it() {
    let w = Ws::seeded();
    for t in ["foo.md", "bar.md"] {
        w.ok(&["start", t]);
        w.ok(&["done", t]);
    }
    let out = w.cdd(&["next"]).stdout;
    // The orchestrator's Bash call of `taskhook cdd next` answered the stop: halted.
    let reason = halted(&w.hook(&bash_ran(&w, "taskhook cdd next", out.trim())));
    assert!(reason.contains("Stop verify-core reached"), "{reason}");
    assert_eq!(agents(&w)["halts"].as_array().unwrap().len(), 1);
    // The same through the seed's own script.
    halted(&w.hook(&bash_ran(
        &w,
        ".claude/scripts/task/next.ts",
        &format!("{out}\n"),
    )));
    // Any other Bash call: still halted (the halt is kept), until the stop is passed.
    halted(&w.hook(&bash_ran(&w, "echo hi", "hi")));
    // The seed's continue.ts passes it (one stop_continue line) in the main agent's Bash call:
    // the halt goes with it at once.
    let line = r#"{"timestamp":"2026-03-01T12:00:00.000Z","action":"stop_continue","task":"verify-core","stop":"verify-core"}"#;
    let history = w.path("tasks/history.jsonl");
    let mut text = std::fs::read_to_string(&history).unwrap();
    text.push_str(line);
    text.push('\n');
    std::fs::write(&history, text).unwrap();
    let run = w.hook(&bash_ran(
        &w,
        ".claude/scripts/task/continue.ts verify-core",
        "{\"success\":true}",
    ));
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.json().get("continue").is_none(), "{run:?}");
    silent(&main_reads(&w));
    // A `next` answering a task halts nothing.
    let out = w.cdd(&["next"]).stdout;
    silent(&w.hook(&bash_ran(&w, "taskhook cdd next", &out)));
}

#[test]
fn a_stop_passed_outside_claude_is_lifted_at_session_start() {
    let w = Ws::seeded();
    for t in ["foo.md", "bar.md"] {
        w.ok(&["start", t]);
        w.ok(&["done", t]);
    }
    // Reached in a terminal: the next session keeps the orchestrator halted.
    w.ok(&["next"]);
    let start = w.hook(&payload(&w, "SessionStart.startup.json"));
    assert!(
        context(&start).contains("the orchestrator stays halted"),
        "{start:?}"
    );
    halted(&main_reads(&w));
    // Passed from another folder (the project's halt not reachable from there) or by the
    // seed's script: the next session lifts the halt.
    let mut c = w.p.cmd();
    c.env("CDD_DIR", &w.dir).current_dir(w.p.tmp.path());
    ok(&w.p.run_with(c, &["cdd", "continue", "verify-core"], ""));
    halted(&main_reads(&w));
    let ctx = context(&w.hook(&payload(&w, "SessionStart.startup.json")));
    assert!(
        ctx.contains("the halt at stop verify-core was lifted"),
        "{ctx}"
    );
    silent(&main_reads(&w));
}

#[test]
fn a_subagents_task_command_is_denied_and_the_orchestrators_allowed() {
    let w = Ws::seeded();
    w.ok(&["start", "foo.md"]);
    let pre = |agent: Option<&str>, command: &str| {
        let mut v = payload(&w, "PreToolUse.Bash.json");
        v["tool_input"]["command"] = json!(command);
        if let Some(a) = agent {
            v["agent_id"] = json!(a);
            v["agent_type"] = json!("general-purpose");
        }
        w.hook(&v)
    };
    for command in [
        "taskhook cdd done foo.md",
        "cd /tmp && taskhook cdd escalate foo.md 'too hard'",
        "bun .claude/scripts/task/done.ts foo.md",
        ".claude/scripts/task/continue.ts verify-core",
    ] {
        let v = pre(Some("a1"), command).json();
        let out = &v["hookSpecificOutput"];
        assert_eq!(out["hookEventName"], "PreToolUse");
        assert_eq!(out["permissionDecision"], "deny", "{command}");
        let reason = out["permissionDecisionReason"].as_str().unwrap();
        assert!(
            reason.starts_with("only the orchestrator manipulates task state"),
            "{reason}"
        );
    }
    // Reading is fine for a subagent; the orchestrator may do anything.
    silent(&pre(Some("a1"), "taskhook cdd next"));
    silent(&pre(Some("a1"), ".claude/scripts/task/list.ts"));
    silent(&pre(None, "taskhook cdd done foo.md"));
    // No agent passes a stop: that is the person's (the main agent included).
    for agent in [None, Some("a1")] {
        for command in [
            "taskhook cdd continue verify-core",
            ".claude/scripts/task/continue.ts verify-core",
        ] {
            let v = pre(agent, command).json();
            assert_eq!(
                v["hookSpecificOutput"]["permissionDecision"], "deny",
                "{command}"
            );
        }
    }
    let v = pre(None, "taskhook cdd continue verify-core").json();
    assert!(
        v["hookSpecificOutput"]["permissionDecisionReason"]
            .as_str()
            .unwrap()
            .starts_with("a cdd stop is a checkpoint for a person"),
        "{v}"
    );
    assert_eq!(
        w.folders_of("foo.md"),
        ["in_progress"],
        "a refusal moves nothing"
    );
    ok(&w.cdd(&["done", "foo.md"]));
    // Without any workspace configured, a subagent is refused all the same.
    let bare = crate::common::Project::new();
    let mut v = bare.payload("PreToolUse.Bash.json");
    v["agent_id"] = json!("a1");
    v["tool_input"]["command"] = json!("CDD_DIR=/elsewhere taskhook cdd done foo.md");
    let run = bare.hook(&v);
    assert_eq!(
        run.json()["hookSpecificOutput"]["permissionDecision"],
        "deny",
        "{run:?}"
    );
}

#[test]
fn signals_that_change_nothing_say_so() {
    let w = Ws::seeded();
    // DONE for a task whose launch was not seen: started and finished at once.
    silent(&subagent_stops(
        &w,
        "a1",
        "foo.md",
        "<signal>foo.md_DONE</signal>",
    ));
    assert_eq!(w.folders_of("foo.md"), ["completed"]);
    let actions: Vec<String> = w
        .history()
        .iter()
        .map(|l| l["action"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(actions[3..], ["start", "done"]);
    // BLOCKED and a stop without a signal leave the task in progress and tell the main agent.
    silent(&launch(&w, "bar.md"));
    silent(&subagent_stops(
        &w,
        "a2",
        "bar.md",
        "<signal>bar.md_BLOCKED: no database</signal>",
    ));
    assert!(context(&main_reads(&w)).contains("bar.md reported BLOCKED (no database)"));
    silent(&subagent_stops(&w, "a3", "bar.md", "I looked around."));
    assert!(context(&main_reads(&w)).contains("stopped without <signal>bar.md_DONE</signal>"));
    assert_eq!(w.folders_of("bar.md"), ["in_progress"]);
    // A signal for a qualified name resolves in this workspace.
    silent(&subagent_stops(
        &w,
        "a4",
        "ws/bar.md",
        "<signal>ws/bar.md_DONE</signal>",
    ));
    assert_eq!(w.folders_of("bar.md"), ["completed"]);
    assert_eq!(code(&w.cdd(&["done", "bar.md"])), "WRONG_STATUS");
}

#[test]
fn an_edit_that_breaks_order_json_is_blocked_and_logged() {
    let w = Ws::seeded();
    let order = w.path("tasks/order.json");
    std::fs::write(
        &order,
        r#"{"tasks": [{"task": "foo.md", "thinking": "lots"}]}"#,
    )
    .unwrap();
    let mut edit = payload(&w, "PostToolUse.Write.json");
    edit["tool_input"]["file_path"] = json!(order);
    let v = w.hook(&edit).json();
    assert_eq!(v["decision"], "block", "{v}");
    assert!(v["reason"].as_str().unwrap().contains("cdd-order"), "{v}");
    let last = w.history().into_iter().last().unwrap();
    assert_eq!(last["action"], "error");
    assert!(
        last["message"].as_str().unwrap().contains("order.json"),
        "{last}"
    );
    assert_eq!(code(&w.cdd(&["next"])), "INVALID_ORDER");
    // `status` names the problem.
    let mut c = w.p.cmd();
    c.env("CDD_DIR", &w.dir);
    let st = w.p.run_with(c, &["status", "--json"], "").json();
    let store = &st["stores"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["layout"] == "cdd")
        .unwrap()
        .clone();
    assert!(
        store["problems"][0]
            .as_str()
            .unwrap()
            .contains("INVALID_ORDER"),
        "{store}"
    );
}

#[test]
fn a_launch_naming_two_refused_tasks_claims_neither() {
    let w = Ws::seeded();
    assert_eq!(launch(&w, "foo.md").code, 0);
    assert_eq!(w.folders_of("foo.md"), ["in_progress"]);
    // bar.md is refused (foo.md runs), baz.md too (a stop before it): the first refusal must
    // not make the second look taken.
    let mut v = payload(&w, "PreToolUse.Agent.json");
    v["tool_input"]["prompt"] =
        json!("SUBAGENT: do <task>bar.md</task>, then <task>baz.md</task>.");
    let r = w.hook(&v);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stdout.contains("deny"), "{}", r.stdout);
    let claims = std::fs::read_to_string(w.p.root.join(".claude/taskhook/claims.json")).unwrap();
    assert!(claims.contains("foo.md"), "{claims}");
    assert!(!claims.contains("bar.md"), "{claims}");
    assert!(!claims.contains("baz.md"), "{claims}");
}
