//! The tour's chapters for the layouts driven by launches and signals of subagents: projects
//! (seed 000), execute (seed 001) and cdd (seed 004).

use serde_json::json;

use super::tour::Tour;
use crate::error::Result;

/// A PreToolUse of the main agent's `Agent` call with `prompt`.
fn launch(t: &Tour<'_>, prompt: &str) -> serde_json::Value {
    t.payload(
        "PreToolUse",
        json!({"tool_name": "Agent", "tool_input": {"description": "work", "prompt": prompt, "subagent_type": "general-purpose", "run_in_background": false}}),
    )
}

/// A SubagentStop of a subagent launched with `prompt` (its transcript, as Claude Code writes
/// it, starts with the prompt: that binds it), with its final message.
fn stop(t: &mut Tour<'_>, agent: &str, prompt: &str, text: &str) -> Result<serde_json::Value> {
    let transcript = t.home.join(format!(
        ".claude/projects/demo/demo-session/subagents/agent-{agent}.jsonl"
    ));
    let line = json!({"type": "user", "message": {"role": "user", "content": prompt}});
    t.write_abs(&transcript, &format!("{line}\n"))?;
    Ok(t.payload(
        "SubagentStop",
        json!({"agent_id": agent, "agent_type": "general-purpose", "stop_hook_active": false,
               "agent_transcript_path": transcript, "last_assistant_message": text}),
    ))
}

/// The PostToolUse of the main agent's `Agent` call, after its subagent finished.
fn returned(t: &Tour<'_>, agent: &str, prompt: &str) -> serde_json::Value {
    t.payload(
        "PostToolUse",
        json!({"tool_name": "Agent", "tool_input": {"description": "work", "prompt": prompt},
               "tool_response": {"status": "completed", "agentId": agent, "content": [{"type": "text", "text": "done"}]}}),
    )
}

pub fn projects(t: &mut Tour<'_>) -> Result<()> {
    t.chapter("projects: a tree of tasks, a progress log, velocity and checkpoints")?;
    t.cmd(&["projects", "new", "web", "--name", "Web app"], 1)?;
    t.cmd(
        &[
            "projects",
            "add",
            "web",
            "T1",
            "--title",
            "Parser",
            "--estimate",
            "30",
        ],
        1,
    )?;
    t.cmd(
        &[
            "projects",
            "add",
            "web",
            "T2",
            "--title",
            "Tests",
            "--depends",
            "T1",
        ],
        1,
    )?;
    let prompt = "Implement <task>web/T1</task>; end with <signal>T1_DONE</signal>.";
    t.send(
        "PreToolUse of Agent: a subagent launched for web/T1 starts it",
        &launch(t, prompt),
    )?;
    let p = stop(
        t,
        "a-web",
        prompt,
        "Parser written, tests green.\n<signal>T1_DONE</signal>",
    )?;
    t.send("SubagentStop: it signals T1_DONE", &p)?;
    t.send(
        "PostToolUse of the Agent call: the main agent hears it",
        &returned(t, "a-web", prompt),
    )?;
    let log = t.root.join(".claude/projects/web/progress/log.md");
    t.show(&log, 12)?;
    Ok(())
}

pub fn execute(t: &mut Tour<'_>) -> Result<()> {
    t.chapter("execute: layered runs with verification, retries with feedback, a merge queue")?;
    t.cmd(
        &[
            "execute",
            "init",
            "docs/tasks/api",
            "--prd-slug",
            "api",
            "--layer",
            "1-core=L1-001",
        ],
        1,
    )?;
    let prompt =
        "Implement <task>L1-001</task> in its worktree; signal <signal>L1-001_DONE</signal>.";
    t.send(
        "PreToolUse of Agent: attempt 1 of L1-001 starts",
        &launch(t, prompt),
    )?;
    for (what, text) in [
        (
            "it fails; the retry starts at once, with the feedback",
            "<signal>L1-001_FAILED: tests red</signal>\n<feedback>Mock the clock in the token test.</feedback>",
        ),
        ("it says done; taskhook asks it to verify", "Fixed the clock. <signal>L1-001_DONE</signal>"),
        ("verified; it joins the merge queue", "Tests and acceptance checks pass. <signal>L1-001_DONE</signal>"),
    ] {
        let p = stop(t, "a-l1", prompt, text)?;
        t.send(&format!("SubagentStop: {what}"), &p)?;
    }
    t.send(
        "PostToolUse of the Agent call: the main agent hears it",
        &returned(t, "a-l1", prompt),
    )?;
    t.cmd(&["execute", "merged", "L1-001"], 2)?;
    t.cmd(&["execute", "metrics"], 4)?;
    Ok(())
}

pub fn cdd(t: &mut Tour<'_>) -> Result<()> {
    t.chapter("cdd: task files moved between status folders, and stops that really halt")?;
    t.write(
        "work/cdd/tasks/order.json",
        &serde_json::to_string_pretty(&json!({"tasks": [
            {"task": "foo.md", "group": "Core", "model": "sonnet", "thinking": "none"},
            {"stop": "verify-core", "message": "Verify core features work before proceeding"},
            {"task": "bar.md", "group": "Tests", "model": "sonnet", "thinking": "thinking"}
        ]}))
        .unwrap_or_default(),
    )?;
    t.write("work/cdd/tasks/foo.md", "# foo\nBuild the core.\n")?;
    t.write("work/cdd/tasks/bar.md", "# bar\nTest it.\n")?;
    t.cmd(&["cdd", "import"], 1)?;
    t.cmd(&["cdd", "next"], 1)?;
    let prompt = "Do <task>foo.md</task>.";
    t.send(
        "PreToolUse of Agent: the launch starts foo.md",
        &launch(t, prompt),
    )?;
    let p = stop(
        t,
        "a-foo",
        prompt,
        "Core built. <signal>foo.md_DONE</signal>",
    )?;
    t.send("SubagentStop: foo.md is done; the next entry is a stop", &p)?;
    t.send(
        "PostToolUse of the Agent call: the main agent halts",
        &returned(t, "a-foo", prompt),
    )?;
    let next = t.payload(
        "PreToolUse",
        json!({"tool_name": "Bash", "tool_input": {"command": "taskhook cdd continue verify-core"}}),
    );
    t.send(
        "PreToolUse of Bash: the agent may not pass the stop itself",
        &next,
    )?;
    t.say("A person checks the core, then passes the stop in their own terminal:")?;
    t.cmd(&["cdd", "continue", "verify-core"], 1)?;
    t.cmd(&["cdd", "next"], 1)?;
    Ok(())
}
