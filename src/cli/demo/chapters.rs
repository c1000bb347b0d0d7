//! The chapters of `taskhook demo`, one per layout, each a few real-shaped payloads.

use serde_json::json;

use super::tour::Tour;
use crate::engine;
use crate::error::Result;
use crate::layouts::{claude_tasks, iterative};

/// Every chapter, in order.
pub fn all(t: &mut Tour<'_>) -> Result<()> {
    quiet_start(t)?;
    task_list(t)?;
    iterative_loop(t)?;
    crash(t)?;
    super::more::projects(t)?;
    super::more::execute(t)?;
    super::more::cdd(t)?;
    status(t)
}

fn quiet_start(t: &mut Tour<'_>) -> Result<()> {
    t.chapter("A session starts in a project with no task state")?;
    let p = t.payload(
        "SessionStart",
        json!({"source": "startup", "model": "claude-opus"}),
    );
    t.send("SessionStart (startup)", &p)?;
    let read = t.payload(
        "PostToolUse",
        json!({"tool_name": "Read", "tool_input": {"file_path": t.root.join("README.md")}, "tool_response": {}}),
    );
    t.send("PostToolUse of Read: the hot path, every tool call", &read)?;
    Ok(())
}

fn task_list(t: &mut Tour<'_>) -> Result<()> {
    t.chapter("claude-tasks: Claude Code's task list, kept durable")?;
    t.say("The model plans with TodoWrite; taskhook mirrors the list into ~/.claude/tasks/<project>/tasks.json.")?;
    let todos = |statuses: [&str; 3]| {
        json!({"tool_name": "TodoWrite", "tool_input": {"todos": [
            {"content": "Write parser", "status": statuses[0], "activeForm": "Writing parser"},
            {"content": "Test parser", "status": statuses[1], "activeForm": "Testing parser"},
            {"content": "Ship it", "status": statuses[2], "activeForm": "Shipping it"}
        ]}, "tool_response": {}})
    };
    let p = t.payload("PostToolUse", todos(["in_progress", "pending", "pending"]));
    t.send("PostToolUse of TodoWrite: three todos", &p)?;
    let p = t.payload(
        "PostToolUse",
        todos(["completed", "in_progress", "pending"]),
    );
    t.send("PostToolUse of TodoWrite: the first is done", &p)?;
    let project = t.cx.project(None);
    let store = claude_tasks::store_for(&t.cx, &project)?;
    t.show(&claude_tasks::tasks_path(&store), 12)?;
    Ok(())
}

fn iterative_loop(t: &mut Tour<'_>) -> Result<()> {
    t.chapter("iterative: a unit is done only after confirmation and verification passes")?;
    let project = t.cx.project(None);
    t.cmd(
        &[
            "iterative",
            "new",
            "user-auth",
            "--task",
            "T1",
            "--task",
            "T2",
            "--name",
            "Add user authentication",
        ],
        1,
    )?;
    let root = iterative::base(&project.root).join("user-auth");
    let stop = |t: &Tour<'_>, text: &str| {
        t.payload(
            "SubagentStop",
            json!({"agent_id": "a-t1", "agent_type": "general-purpose", "stop_hook_active": false,
                   "last_assistant_message": text}),
        )
    };
    let launch = t.payload(
        "PostToolUse",
        json!({"tool_name": "Agent",
               "tool_input": {"description": "T1", "prompt": "Work on <task>T1</task> of user-auth.", "run_in_background": true},
               "tool_response": {"status": "async_launched", "agentId": "a-t1"}}),
    );
    t.send(
        "The main agent launches a subagent with <task>T1</task> (binding remembered)",
        &launch,
    )?;
    for (what, text) in [
        (
            "The subagent says it is done",
            "Login form and session store written.\n<signal>T1_DONE</signal>",
        ),
        (
            "It re-checks the criteria",
            "Re-ran the checks; all hold.\n<signal>T1_DONE</signal>",
        ),
        (
            "It reviews its own diff",
            "Reviewed the diff, tests green.\n<signal>T1_DONE</signal>",
        ),
    ] {
        let p = stop(t, text);
        t.send(&format!("SubagentStop: {what}"), &p)?;
    }
    let next = t.payload(
        "PostToolUse",
        json!({"tool_name": "Bash", "tool_input": {"command": "git status"}, "tool_response": {"stdout": ""}}),
    );
    t.send("The main agent's next tool call hears what changed", &next)?;
    t.show(&iterative::Paths::of(&root).progress, 10)?;
    Ok(())
}

fn crash(t: &mut Tour<'_>) -> Result<()> {
    t.chapter("A crash leaves state.json half written; the next session repairs it")?;
    let project = t.cx.project(None);
    let state = iterative::base(&project.root).join("user-auth/state.json");
    let bytes = t.cx.store.read(&state)?.unwrap_or_default();
    t.cx.store.replace(&state, &bytes[..bytes.len() / 2])?;
    t.say("state.json is cut in half (as a kill during a careless write would leave it).")?;
    let p = t.payload("SessionStart", json!({"source": "resume"}));
    t.send(
        "SessionStart (resume): rebuilt from progress.md, bad bytes kept aside",
        &p,
    )?;
    Ok(())
}

fn status(t: &mut Tour<'_>) -> Result<()> {
    t.chapter("`taskhook status`: every store, the same summary the model gets")?;
    let project = t.cx.project(None);
    for s in engine::ops::status(&t.cx, &project) {
        let st = s.status();
        let counts: Vec<String> = st.counts.iter().map(|(k, v)| format!("{v} {k}")).collect();
        t.say(&format!("{} · {}: {}", st.layout, st.id, counts.join(", ")))?;
    }
    Ok(())
}
