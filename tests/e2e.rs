//! End-to-end: the real Claude Code CLI (pinned in tests/e2e/package.json), offline, against a
//! fake Messages API (tests/e2e/fake_api.py), with taskhook registered by `taskhook install`.
//! Each scenario checks the files taskhook wrote AND what reached the model (the fake API's
//! request log). See docs/e2e.md.
#![allow(
    clippy::disallowed_methods,
    clippy::print_stderr,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic
)]

#[path = "e2e/agent.rs"]
mod agent;
#[path = "e2e/execute.rs"]
mod execute;
#[path = "e2e/harness.rs"]
mod harness;
#[path = "e2e/plugin.rs"]
mod plugin;
#[path = "e2e/projects.rs"]
mod projects;

#[path = "e2e/cdd.rs"]
mod cdd;

use harness::{Request, Scenario};
use serde_json::{json, Value};

const SESSION_CONTEXT: &str = "SessionStart hook additional context: ";

/// How long the fake model takes to answer a subagent, as a real model does. Answering in a
/// millisecond races Claude Code's transcript writer: in about 1 run in 40–60, the
/// subagent's transcript did not yet hold its prompt when SubagentStop ran, so taskhook saw
/// an unbound subagent (README, `transcript_race_stress`). With 250 ms: 0 in 60 under
/// load.
fn subagent_latency() -> Value {
    json!({"SUBAGENT-T1": 250})
}

fn guardrail(s: &Scenario, slug: &str, marker: &str) {
    s.taskhook(&[
        "iterative",
        "guardrail",
        slug,
        "--when",
        "always",
        "--problem",
        &format!("{marker} was forgotten"),
        "--solution",
        "read guardrails.md first",
    ]);
}

/// The taskhook SessionStart contexts in a request (each cut at the next hook's text).
fn taskhook_contexts(r: &Request) -> Vec<String> {
    r.hook_contexts(SESSION_CONTEXT)
        .into_iter()
        .filter(|c| c[SESSION_CONTEXT.len()..].starts_with("taskhook · "))
        .collect()
}

fn iterations(progress: &str, unit: &str) -> usize {
    progress
        .lines()
        .filter(|l| l.starts_with(&format!("## {unit} - Iteration ")))
        .count()
}

/// Scenario 1, session continuity: taskhook's SessionStart context (with guardrails.md)
/// reaches the model at startup, after `--resume`, and after `/compact`.
#[test]
fn session_continuity() {
    let script = json!({
        "main": ["E2E-REPLY-STARTUP", "E2E-REPLY-RESUME"],
        "compacted": ["E2E-REPLY-AFTER-COMPACT", "E2E-REPLY-AFTER-COMPACT"],
    });
    let s = Scenario::new("continuity", &script);
    s.taskhook(&["iterative", "new", "cont", "--task", "T1", "--task", "T2"]);
    guardrail(&s, "cont", "E2E-GUARD-STARTUP");
    let state_before = s.read(".claude/iterative/cont/state.json");

    // Startup: the first request carries the context as a system message.
    let run = s.claude(&["-p", "E2E-PROMPT-STARTUP: carry on"], &[]);
    assert_eq!(run.text(), "E2E-REPLY-STARTUP", "{:?}", run.result);
    let sid = run.session_id();
    let main = s.stream("main");
    assert_eq!(main.len(), 1, "one main request at startup");
    let ctx = taskhook_contexts(&main[0]);
    assert_eq!(
        ctx.len(),
        1,
        "one taskhook context: {:#?}",
        main[0].messages()
    );
    assert!(ctx[0].contains("iterative \"cont\""), "{}", ctx[0]);
    assert!(ctx[0].contains("Current: T1 (pending"), "{}", ctx[0]);
    assert!(
        ctx[0].contains("E2E-GUARD-STARTUP was forgotten"),
        "{}",
        ctx[0]
    );

    // Resume: a new guardrail, and the new context is added after the new prompt.
    guardrail(&s, "cont", "E2E-GUARD-RESUME");
    let run = s.claude(&["--resume", &sid, "-p", "E2E-PROMPT-RESUME"], &[]);
    assert_eq!(run.session_id(), sid);
    assert_eq!(run.text(), "E2E-REPLY-RESUME");
    let main = s.stream("main");
    assert_eq!(main.len(), 2);
    let msgs = main[1].messages();
    let prompt_at = msgs
        .iter()
        .position(|(r, t)| r == "user" && t.contains("E2E-PROMPT-RESUME"))
        .expect("the resume prompt reached the model");
    let after: Vec<&(String, String)> = msgs[prompt_at..]
        .iter()
        .filter(|(r, t)| r == "system" && t.contains("E2E-GUARD-RESUME"))
        .collect();
    assert_eq!(after.len(), 1, "resume context after the prompt: {msgs:#?}");
    assert!(after[0].1.contains(SESSION_CONTEXT));

    // /compact: one summary request; no main-agent request in that run.
    guardrail(&s, "cont", "E2E-GUARD-COMPACT");
    let run = s.claude(&["--resume", &sid, "-p", "/compact"], &[]);
    assert_eq!(run.session_id(), sid);
    assert_eq!(s.stream("compact").len(), 1, "one summary request");
    assert_eq!(s.stream("main").len(), 2);

    // After the compaction, the next request has lost the old conversation but carries the
    // context SessionStart(compact) gave (before E2E-GUARD-AFTER existed) and the resume's.
    guardrail(&s, "cont", "E2E-GUARD-AFTER");
    let run = s.claude(&["--resume", &sid, "-p", "E2E-PROMPT-AFTER"], &[]);
    assert_eq!(run.text(), "E2E-REPLY-AFTER-COMPACT");
    let after = s.stream("compacted");
    assert_eq!(
        after.len(),
        1,
        "requests: {:?}",
        s.requests()
            .iter()
            .map(|r| (r.n, r.stream.clone()))
            .collect::<Vec<_>>()
    );
    let r = &after[0];
    let all = r.all_text();
    assert!(
        !all.contains("E2E-PROMPT-STARTUP"),
        "pre-compact prompt still sent"
    );
    assert!(all.contains("E2E-PROMPT-AFTER"));
    let ctx = taskhook_contexts(r);
    assert!(
        ctx.iter()
            .any(|c| c.contains("E2E-GUARD-COMPACT") && !c.contains("E2E-GUARD-AFTER")),
        "no SessionStart(compact) context after the compaction: {ctx:#?}"
    );
    assert!(
        ctx.iter().any(|c| c.contains("E2E-GUARD-AFTER")),
        "no SessionStart(resume) context after the compaction: {ctx:#?}"
    );

    // On disk: nothing to change, so nothing changed; every file still validates.
    assert_eq!(
        s.read(".claude/iterative/cont/state.json"),
        state_before,
        "state.json rewritten by sessions that changed nothing"
    );
    let progress = s.read(".claude/iterative/cont/progress.md");
    assert_eq!(iterations(&progress, "T1"), 0, "{progress}");
    assert!(!progress.contains("## Reconciled"), "{progress}");
    let guardrails = s.read(".claude/iterative/cont/guardrails.md");
    for m in [
        "E2E-GUARD-STARTUP",
        "E2E-GUARD-RESUME",
        "E2E-GUARD-COMPACT",
        "E2E-GUARD-AFTER",
    ] {
        assert!(guardrails.contains(m), "{guardrails}");
    }
    s.taskhook(&["validate"]);
}

/// Scenario 2, the confirm / verify loop: a foreground subagent bound to T1 signals T1_DONE
/// three times; taskhook's confirmation and verification instructions reach it as Stop hook
/// feedback; T1 ends done; the main agent is told.
#[test]
fn confirm_verify_loop() {
    let prompt = "SUBAGENT-T1 <task>T1</task> Implement T1 from .claude/iterative/loop/tasks.md.";
    let script = json!({
        "main": [
            [
                {"text": "Delegating T1."},
                {"tool": "Agent", "input": {
                    "description": "Work on T1",
                    "prompt": prompt,
                    "subagent_type": "general-purpose",
                    "run_in_background": false
                }}
            ],
            "E2E-MAIN-FINISHED"
        ],
        "agents": {"SUBAGENT-T1": [
            "Implemented the parser.\nRemaining: None\n<signal>T1_DONE</signal>",
            "Re-checked every criterion: all hold.\n<signal>T1_DONE</signal>",
            "Reviewed the diff: clean.\n<signal>T1_DONE</signal>",
            "E2E-SUBAGENT-TOO-MANY-TURNS"
        ]},
        "latency_ms": subagent_latency(),
    });
    let s = Scenario::new("confirm-verify", &script);
    s.taskhook(&["iterative", "new", "loop", "--task", "T1", "--task", "T2"]);

    let run = s.claude(&["-p", "Work through the plan."], &[]);
    assert_eq!(run.text(), "E2E-MAIN-FINISHED", "{:?}", run.result);

    // What reached the subagent: its prompt, then the two Stop hook feedbacks, then nothing.
    let sub = s.stream("SUBAGENT-T1");
    assert_eq!(
        sub.len(),
        3,
        "the subagent stops after verification: {:#?}",
        sub.iter().map(Request::last_user_text).collect::<Vec<_>>()
    );
    assert_eq!(sub.iter().map(|r| r.turn).collect::<Vec<_>>(), [0, 1, 2]);
    assert!(sub[0].last_user_text().contains(prompt));
    let confirm = sub[1].last_user_text();
    assert!(
        confirm.starts_with("Stop hook feedback:\nT1: confirmation pass"),
        "{confirm}"
    );
    assert!(confirm.contains("<signal>T1_DONE</signal>"), "{confirm}");
    let verify = sub[2].last_user_text();
    assert!(
        verify.starts_with("Stop hook feedback:\nT1: verification pass"),
        "{verify}"
    );

    // What reached the main agent after the Agent call: taskhook's notice.
    let main = s.stream("main");
    assert_eq!(main.len(), 2);
    let notices = main[1].hook_contexts("PostToolUse:Agent hook additional context: ");
    assert_eq!(notices.len(), 1, "{:#?}", main[1].messages());
    assert!(
        notices[0]
            .contains("iterative loop: T1 is done (confirmed and verified after 3 iterations)"),
        "{}",
        notices[0]
    );
    assert!(notices[0].contains("Ready now: T2"), "{}", notices[0]);

    // On disk.
    let state = s.json(".claude/iterative/loop/state.json");
    let t1 = &state["tasks"]["T1"];
    assert_eq!(t1["status"], "done", "{state:#}");
    assert_eq!(t1["confirmations_used"], 1, "{state:#}");
    assert_eq!(t1["iterations_used"], 3, "{state:#}");
    assert_eq!(t1["verification_passed"], true, "{state:#}");
    assert!(t1["completed_at"].is_string(), "{state:#}");
    assert_eq!(state["current_task"], "T2", "{state:#}");
    let progress = s.read(".claude/iterative/loop/progress.md");
    assert_eq!(iterations(&progress, "T1"), 3, "{progress}");
    assert_eq!(
        progress.matches("**Signal:** T1_DONE").count(),
        3,
        "{progress}"
    );
    let agents = s.json(".claude/taskhook/agents.json");
    let bindings = agents["bindings"].as_object().expect("bindings");
    assert_eq!(bindings.len(), 1, "{agents:#}");
    let binding = bindings.values().next().unwrap();
    assert_eq!(binding["units"], json!(["T1"]), "{agents:#}");
    assert_eq!(agents["notices"], json!([]), "notice delivered: {agents:#}");
    s.taskhook(&["validate"]);
}

/// Scenario 5, bad day: state.json is corrupt before the session starts. The session runs;
/// taskhook rebuilds state.json from progress.md, keeps the bad bytes, and tells the model.
#[test]
fn bad_day_corrupt_state() {
    let script = json!({
        "main": [
            [{"tool": "Bash", "input": {"command": "echo E2E-BASH-RAN", "description": "check"}}],
            "E2E-BAD-DAY-DONE"
        ],
    });
    let s = Scenario::new("bad-day", &script);
    s.taskhook(&["iterative", "new", "bad", "--task", "T1", "--task", "T2"]);
    for _ in 0..3 {
        s.taskhook(&["iterative", "signal", "bad", "T1", "DONE"]);
    }
    s.taskhook(&["iterative", "signal", "bad", "T2", "DONE"]);
    let good: Value = s.json(".claude/iterative/bad/state.json");
    assert_eq!(good["tasks"]["T1"]["status"], "done");
    assert_eq!(good["tasks"]["T2"]["status"], "confirming");
    let bad_bytes = b"{\"task\": \"bad\", \"tasks\": {\"T1\": {\"status\": \"do";
    std::fs::write(s.path(".claude/iterative/bad/state.json"), bad_bytes).unwrap();

    let run = s.claude(&["-p", "Carry on."], &[]);
    assert_eq!(run.text(), "E2E-BAD-DAY-DONE", "{:?}", run.result);

    // What reached the model: the problem and the rebuilt state, in the first request.
    let main = s.stream("main");
    assert_eq!(main.len(), 2);
    let ctx = taskhook_contexts(&main[0]);
    assert_eq!(ctx.len(), 1, "{:#?}", main[0].messages());
    assert!(ctx[0].contains("state.json was unusable"), "{}", ctx[0]);
    assert!(ctx[0].contains("rebuilt it from progress.md"), "{}", ctx[0]);
    assert!(ctx[0].contains("Current: T2 (confirming"), "{}", ctx[0]);
    assert!(ctx[0].contains("Done: T1."), "{}", ctx[0]);
    // The session still ran its tools.
    assert!(main[1].all_text().contains("E2E-BASH-RAN"));

    // On disk: rebuilt, valid, and the bad bytes kept.
    let state = s.json(".claude/iterative/bad/state.json");
    for unit in ["T1", "T2"] {
        for key in ["status", "iterations_used", "confirmations_used"] {
            assert_eq!(
                state["tasks"][unit][key], good["tasks"][unit][key],
                "{unit}.{key}: rebuilt {state:#} vs before {good:#}"
            );
        }
    }
    assert_eq!(state["current_task"], "T2", "{state:#}");
    let dir = s.path(".claude/iterative/bad");
    let corrupt: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("state.json.corrupt-")
        })
        .collect();
    assert_eq!(corrupt.len(), 1, "{corrupt:?}");
    assert_eq!(std::fs::read(&corrupt[0]).unwrap(), bad_bytes);
    let progress = s.read(".claude/iterative/bad/progress.md");
    // Issue 14 item 13: the discrepancy is a note line the seed's readers skip.
    assert!(
        progress.contains("reconciled: state.json was unusable"),
        "{progress}"
    );
    s.taskhook(&["validate"]);
}

/// Claude Code's own task files (`<N>.json`) in a folder, by id.
fn claude_code_tasks(dir: &std::path::Path) -> Vec<(String, Value)> {
    let mut out: Vec<(String, Value)> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter_map(|p| {
            let name = p.file_name()?.to_string_lossy().into_owned();
            let id = name.strip_suffix(".json")?;
            id.chars().all(|c| c.is_ascii_digit()).then(|| {
                let v: Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap())
                    .unwrap_or_else(|e| panic!("{}: {e}", p.display()));
                (id.to_string(), v)
            })
        })
        .collect();
    out.sort_by_key(|(id, _)| id.parse::<u64>().unwrap_or(u64::MAX));
    out
}

fn task_by_id<'a>(list: &'a Value, id: &str) -> &'a Value {
    list["tasks"]
        .as_array()
        .and_then(|ts| ts.iter().find(|t| t["id"] == id))
        .unwrap_or_else(|| panic!("no task {id:?} in {list:#}"))
}

/// Scenario 3, task tools mirrored (claude-tasks layout): TaskCreate / TaskUpdate land in
/// taskhook's tasks.json beside Claude Code's own `<N>.json` files and match them; completing
/// the dependent task first is refused through TaskCompleted (exit 2), and the model sees why.
#[test]
fn task_tools_mirrored() {
    let update = |input: Value| json!([{"tool": "TaskUpdate", "input": input}]);
    let script = json!({
        "main": [
            [{"tool": "ToolSearch", "input": {"query": "select:TaskCreate,TaskUpdate,TaskList", "max_results": 5}}],
            [{"tool": "TaskCreate", "input": {"subject": "Write parser", "description": "Implement the parser module", "activeForm": "Writing parser"}}],
            [{"tool": "TaskCreate", "input": {"subject": "Test parser", "description": "Cover the parser with tests", "activeForm": "Testing parser"}}],
            update(json!({"taskId": "2", "addBlockedBy": ["1"]})),
            update(json!({"taskId": "2", "status": "completed"})),
            update(json!({"taskId": "1", "status": "in_progress"})),
            update(json!({"taskId": "1", "status": "completed"})),
            update(json!({"taskId": "2", "status": "completed"})),
            "E2E-TASKS-DONE"
        ],
    });
    let s = Scenario::new("task-tools", &script);
    let env = [
        ("CLAUDE_CODE_ENABLE_TODO_TOOLS", "1"),
        ("CLAUDE_CODE_TASK_LIST_ID", "e2e-list"),
    ];
    let run = s.claude(&["-p", "Plan the parser work as tasks and do it."], &env);
    assert_eq!(run.text(), "E2E-TASKS-DONE", "{:?}", run.result);

    // What reached the model: the refusal of the early completion, as TaskCompleted feedback.
    let main = s.stream("main");
    assert_eq!(main.len(), 9, "every scripted turn was requested");
    let refused = main[5].last_user_text();
    assert!(
        refused.contains("TaskCompleted hook feedback:"),
        "the refusal did not reach the model: {refused}"
    );
    // `[<command>]: <stderr>` is how Claude Code quotes a hook that exited 2; the project's
    // shared settings run `taskhook` from PATH.
    assert!(
        refused.contains("[taskhook hook]: Task 2 (Test parser"),
        "not taskhook's exit-2 refusal: {refused}"
    );
    assert!(
        refused.contains("cannot be completed yet") && refused.contains("Write parser"),
        "{refused}"
    );
    let ready = main[7].hook_contexts("PostToolUse:TaskUpdate hook additional context: ");
    assert!(
        ready
            .iter()
            .any(|c| c.contains("now ready (all dependencies completed): 2 (Test parser")),
        "{:#?}",
        main[7].messages()
    );
    let done = main[8].last_user_text();
    assert!(!done.contains("TaskCompleted hook feedback"), "{done}");

    // On disk: taskhook's mirror beside Claude Code's own files, and they agree.
    let dir = s.home.join(".claude/tasks/e2e-list");
    let mirror: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("tasks.json")).expect("taskhook wrote tasks.json"),
    )
    .unwrap();
    let theirs = claude_code_tasks(&dir);
    assert_eq!(
        theirs.iter().map(|(id, _)| id.as_str()).collect::<Vec<_>>(),
        ["1", "2"],
        "Claude Code's own files in {}",
        dir.display()
    );
    assert_eq!(
        mirror["tasks"].as_array().map(Vec::len),
        Some(2),
        "{mirror:#}"
    );
    for (id, cc) in &theirs {
        let t = task_by_id(&mirror, id);
        let subject = cc["subject"].as_str().unwrap();
        let description = cc["description"].as_str().unwrap();
        assert_eq!(
            t["description"],
            format!("{subject}\n\n{description}"),
            "{t:#}"
        );
        assert_eq!(t["status"], cc["status"], "task {id}: {t:#} vs {cc:#}");
        assert_eq!(
            t["dependencies"], cc["blockedBy"],
            "task {id}: {t:#} vs {cc:#}"
        );
        assert_eq!(t["metadata"]["source"], "agent", "{t:#}");
        let custom = &t["metadata"]["custom_fields"];
        assert_eq!(custom["origin"], "TaskCreate", "{t:#}");
        assert_eq!(custom["subject"], cc["subject"], "{t:#}");
        assert_eq!(custom["activeForm"], cc["activeForm"], "{t:#}");
        assert_eq!(cc["status"], "completed", "{cc:#}");
    }
    assert_eq!(task_by_id(&mirror, "2")["dependencies"], json!(["1"]));
    s.taskhook(&["validate"]);
}

/// Scenario 4, TodoWrite mirrored (claude-tasks layout): with the Task tools off, TodoWrite
/// calls are mirrored into tasks.json (Claude Code itself writes nothing to disk for them), and
/// the next session's start tells the model what is left.
#[test]
fn todowrite_mirrored() {
    let todo = |content: &str, status: &str, active: &str| json!({"content": content, "status": status, "activeForm": active});
    let write = |todos: Vec<Value>| json!([{"tool": "TodoWrite", "input": {"todos": todos}}]);
    let script = json!({
        "main": [
            [{"tool": "ToolSearch", "input": {"query": "select:TodoWrite", "max_results": 5}}],
            write(vec![
                todo("Write parser", "in_progress", "Writing parser"),
                todo("Test parser", "pending", "Testing parser"),
                todo("Ship it", "pending", "Shipping it"),
            ]),
            write(vec![
                todo("Write parser", "completed", "Writing parser"),
                todo("Test parser", "in_progress", "Testing parser"),
                todo("Ship it", "pending", "Shipping it"),
            ]),
            write(vec![
                todo("Write parser", "completed", "Writing parser"),
                todo("Test parser", "in_progress", "Testing parser"),
            ]),
            "E2E-TODOS-WRITTEN",
            "E2E-TODOS-RESUMED"
        ],
    });
    let s = Scenario::new("todowrite", &script);
    let env = [
        ("CLAUDE_CODE_ENABLE_TODO_TOOLS", "1"),
        ("CLAUDE_CODE_ENABLE_TASKS", "0"),
        ("CLAUDE_CODE_TASK_LIST_ID", "e2e-todos"),
    ];
    let run = s.claude(&["-p", "Plan the parser work as todos."], &env);
    assert_eq!(run.text(), "E2E-TODOS-WRITTEN", "{:?}", run.result);
    let main = s.stream("main");
    assert_eq!(main.len(), 5, "every scripted turn was requested");
    let tools: Vec<&str> = main[1].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(tools.contains(&"TodoWrite"), "{tools:?}");
    assert!(!tools.contains(&"TaskCreate"), "{tools:?}");

    // On disk: the mirror, with seed 002's fields and the todo's id derived from its text.
    let dir = s.home.join(".claude/tasks/e2e-todos");
    let mirror: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("tasks.json")).expect("taskhook wrote tasks.json"),
    )
    .unwrap();
    assert!(
        claude_code_tasks(&dir).is_empty(),
        "TodoWrite writes no <N>.json"
    );
    let tasks = mirror["tasks"].as_array().expect("tasks");
    assert_eq!(tasks.len(), 2, "\"Ship it\" left the list: {mirror:#}");
    let parser = task_by_id(&mirror, "todo-091774a950e1e8b3");
    assert_eq!(parser["description"], "Write parser");
    assert_eq!(parser["status"], "completed");
    let test = tasks
        .iter()
        .find(|t| t["description"] == "Test parser")
        .expect("Test parser mirrored");
    assert_eq!(test["status"], "in_progress");
    for t in tasks {
        assert_eq!(t["metadata"]["source"], "agent", "{t:#}");
        assert_eq!(
            t["metadata"]["custom_fields"]["origin"], "TodoWrite",
            "{t:#}"
        );
    }
    assert_eq!(
        test["metadata"]["custom_fields"]["activeForm"],
        "Testing parser"
    );
    assert_eq!(mirror["version"], 2);
    s.taskhook(&["validate"]);

    // The next session starts with taskhook's summary of the list.
    let sid = run.session_id();
    let run = s.claude(&["--resume", &sid, "-p", "Where are we?"], &env);
    assert_eq!(run.text(), "E2E-TODOS-RESUMED");
    let last = s.stream("main").pop().unwrap();
    let msgs = last.messages();
    let summary = msgs
        .iter()
        .rev()
        .find(|(r, t)| r == "system" && t.contains("Task list e2e-todos"))
        .map(|(_, t)| t.clone())
        .unwrap_or_else(|| panic!("no claude-tasks summary at resume: {msgs:#?}"));
    assert!(summary.contains(SESSION_CONTEXT), "{summary}");
    assert!(summary.contains("1 in progress"), "{summary}");
    assert!(summary.contains("Test parser"), "{summary}");
}

/// A `/compact` summary that quotes a signal is not a signal. Claude Code runs the compaction
/// as a forked subagent (SubagentStop with `agent_type: ""`, `last_assistant_message` = the
/// summary); a summary that repeats taskhook's own "Completion signal: <signal>T1_DONE</signal>"
/// must not move T1.
///
/// Found by this suite: T1 went pending → confirming, an iteration was counted and a progress
/// entry was logged whose **Did:** was the summary; the next SessionStart(compact) then told
/// the model "Current: T1 (confirming …)". Fixed in 0404fb6.
#[test]
fn compact_summary_is_not_a_signal() {
    let script = json!({
        "main": ["Working on T1."],
        "summary": "<analysis>The user asked for T1.</analysis>\n<summary>1. Primary Request and \
            Intent: work on <task>T1</task>. T1 is pending; taskhook says its completion signal \
            is <signal>T1_DONE</signal>.</summary>",
        "compacted": ["E2E-AFTER-COMPACT"],
    });
    let s = Scenario::new("compact-signal", &script);
    s.taskhook(&["iterative", "new", "cmp", "--task", "T1", "--task", "T2"]);
    let run = s.claude(&["-p", "Please work on <task>T1</task> now."], &[]);
    let sid = run.session_id();
    let state = s.read(".claude/iterative/cmp/state.json");
    s.claude(&["--resume", &sid, "-p", "/compact"], &[]);
    assert_eq!(s.stream("compact").len(), 1, "one summary request");
    let progress = s.read(".claude/iterative/cmp/progress.md");
    assert_eq!(iterations(&progress, "T1"), 0, "{progress}");
    assert_eq!(
        s.read(".claude/iterative/cmp/state.json"),
        state,
        "the compaction summary changed state.json"
    );
    s.claude(&["--resume", &sid, "-p", "Go on."], &[]);
    let after = s.stream("compacted");
    let ctx = taskhook_contexts(after.last().expect("a request after the compaction"));
    assert!(
        ctx.iter().all(|c| c.contains("Current: T1 (pending")),
        "{ctx:#?}"
    );
}

fn agent_call(prompt: &str) -> Value {
    json!([{"tool": "Agent", "input": {
        "description": "Work on T1",
        "prompt": prompt,
        "subagent_type": "general-purpose",
        "run_in_background": false
    }}])
}

/// A bound subagent that never signals is sent back ("keep going") until T1's budget is spent,
/// then stops: T1 times out, and the main agent is told. No payload sequence blocks forever.
#[test]
fn keep_going_is_bounded() {
    let prompt = "SUBAGENT-T1 <task>T1</task> Implement T1.";
    let script = json!({
        "main": [agent_call(prompt), "E2E-MAIN-AFTER-TIMEOUT"],
        // No turns: every subagent request gets "OK." (no signal).
        "agents": {"SUBAGENT-T1": []},
        "latency_ms": subagent_latency(),
    });
    let s = Scenario::new("keep-going", &script);
    s.taskhook(&[
        "iterative",
        "new",
        "bound",
        "--task",
        "T1",
        "--max-iterations",
        "3",
    ]);
    let run = s.claude(&["-p", "Work through the plan."], &[]);
    assert_eq!(run.text(), "E2E-MAIN-AFTER-TIMEOUT", "{:?}", run.result);

    let sub = s.stream("SUBAGENT-T1");
    assert_eq!(sub.len(), 3, "one request per iteration, then stop");
    for (i, r) in sub.iter().enumerate().skip(1) {
        let fb = r.last_user_text();
        assert!(
            fb.starts_with(&format!(
                "Stop hook feedback:\nT1 is not done yet (iteration {i} of 3)"
            )),
            "{fb}"
        );
    }
    let main = s.stream("main");
    let notices = main[1].hook_contexts("PostToolUse:Agent hook additional context: ");
    assert!(
        notices
            .iter()
            .any(|n| n.contains("T1 timed out after 3 iterations (max_iterations 3)")),
        "{:#?}",
        main[1].messages()
    );

    let state = s.json(".claude/iterative/bound/state.json");
    assert_eq!(state["tasks"]["T1"]["status"], "timeout", "{state:#}");
    assert_eq!(state["tasks"]["T1"]["iterations_used"], 3, "{state:#}");
    let progress = s.read(".claude/iterative/bound/progress.md");
    assert_eq!(iterations(&progress, "T1"), 3, "{progress}");
    assert!(
        progress.contains("Hit max iterations (3): status timeout"),
        "{progress}"
    );
    s.taskhook(&["validate"]);
}

/// A commit the subagent makes in T1's first iteration is recorded against T1 (seed 003:
/// `commits` in state.json, `**Commit:**` in the progress entry).
///
/// Found by this suite: T1 is still `pending` while its first iteration runs (taskhook moves
/// it at the first SubagentStop), and commits were recorded only for a unit in_progress /
/// confirming / verifying, so the commit was lost (`commits` stayed `[]`, iteration 1 said
/// `**Commit:** none`). Fixed in 0404fb6. The real Bash output is
/// `[main (root-commit) 1a2b3c4] feat: parser`.
#[test]
fn first_iteration_commit_is_recorded() {
    let prompt = "SUBAGENT-T1 <task>T1</task> Implement T1 and commit.";
    let commit = "echo parser > parser.txt && git add parser.txt && git commit -m 'feat: parser'";
    let script = json!({
        "main": [agent_call(prompt), "E2E-MAIN-DONE"],
        "agents": {"SUBAGENT-T1": [
            [{"tool": "Bash", "input": {"command": commit, "description": "Commit the parser"}}],
            "Committed the parser.\n<signal>T1_DONE</signal>",
            "Re-checked.\n<signal>T1_DONE</signal>",
            "Reviewed.\n<signal>T1_DONE</signal>",
        ]},
        "latency_ms": subagent_latency(),
    });
    let s = Scenario::new("first-commit", &script);
    s.taskhook(&["iterative", "new", "c", "--task", "T1"]);
    for (k, v) in [("user.name", "E2E"), ("user.email", "e2e@example.invalid")] {
        let st = std::process::Command::new("git")
            .args(["config", k, v])
            .current_dir(&s.proj)
            .status()
            .unwrap();
        assert!(st.success());
    }
    s.claude(&["-p", "Work through the plan."], &[]);
    let sub = s.stream("SUBAGENT-T1");
    let out = sub[1].last_user_text();
    let hash = out
        .strip_prefix("[main (root-commit) ")
        .and_then(|r| r.split(']').next())
        .unwrap_or_else(|| panic!("the commit's output: {out}"))
        .to_string();
    let state = s.json(".claude/iterative/c/state.json");
    assert_eq!(state["tasks"]["T1"]["status"], "done", "{state:#}");
    assert_eq!(
        state["commits"],
        json!([format!("{hash}: feat: parser")]),
        "{state:#}"
    );
    let progress = s.read(".claude/iterative/c/progress.md");
    assert!(
        progress.contains(&format!("**Commit:** {hash}")),
        "{progress}"
    );
}

/// The Agent tool's default, a background subagent: the same loop runs while the main agent
/// waits; `-p` feeds the completion back as a task notification, and taskhook's notice reaches
/// the main agent at its next tool call.
#[test]
fn background_subagent() {
    let prompt = "SUBAGENT-T1 <task>T1</task> Implement T1.";
    let script = json!({
        "main": [
            // No run_in_background: the default (background).
            [{"tool": "Agent", "input": {"description": "Work on T1", "prompt": prompt, "subagent_type": "general-purpose"}}],
            "Waiting for T1.",
            [{"tool": "Bash", "input": {"command": "echo E2E-AFTER-NOTIFICATION", "description": "check"}}],
            "E2E-MAIN-DONE"
        ],
        "agents": {"SUBAGENT-T1": [
            "Implemented.\n<signal>T1_DONE</signal>",
            "Re-checked.\n<signal>T1_DONE</signal>",
            "Reviewed.\n<signal>T1_DONE</signal>",
        ]},
        "latency_ms": subagent_latency(),
    });
    let s = Scenario::new("background", &script);
    s.taskhook(&["iterative", "new", "bg", "--task", "T1", "--task", "T2"]);
    let run = s.claude(&["-p", "Work through the plan."], &[]);
    assert_eq!(run.text(), "E2E-MAIN-DONE", "{:?}", run.result);

    let main = s.stream("main");
    assert_eq!(main.len(), 4);
    assert!(
        main[1]
            .last_user_text()
            .contains("Async agent launched successfully"),
        "{}",
        main[1].last_user_text()
    );
    let sub = s.stream("SUBAGENT-T1");
    assert_eq!(sub.len(), 3);
    assert!(sub[1]
        .last_user_text()
        .starts_with("Stop hook feedback:\nT1: confirmation pass"));
    assert!(sub[2]
        .last_user_text()
        .starts_with("Stop hook feedback:\nT1: verification pass"));
    let notices = main[3].hook_contexts("PostToolUse:Bash hook additional context: ");
    assert!(
        notices.iter().any(|n| n.contains(
            "iterative bg: T1 is done (confirmed and verified after 3 iterations). Ready now: T2."
        )),
        "{:#?}",
        main[3].messages()
    );

    let state = s.json(".claude/iterative/bg/state.json");
    assert_eq!(state["tasks"]["T1"]["status"], "done", "{state:#}");
    assert_eq!(state["tasks"]["T1"]["iterations_used"], 3, "{state:#}");
    assert_eq!(state["tasks"]["T1"]["confirmations_used"], 1, "{state:#}");
    let agents = s.json(".claude/taskhook/agents.json");
    assert_eq!(agents["notices"], json!([]), "{agents:#}");
    s.taskhook(&["validate"]);
}

/// Stress for the transcript race (README, end-to-end tests): 60 foreground subagents whose fake model
/// answers at once. Each must be treated as bound to T1 (three subagent requests: work,
/// confirmation, verification). Before taskhook waited (bounded) for a live transcript to
/// hold the prompt, about 1 run in 40–60 failed; since then 60 of 60 pass. Ignored only for
/// its time (about 70 s): run it by hand after touching the binding code.
#[test]
#[ignore = "stress, about 70 s: run by hand (cargo test --test e2e -- --ignored)"]
fn transcript_race_stress() {
    let prompt = "SUBAGENT-T1 <task>T1</task> Implement T1.";
    let script = json!({
        "main": [agent_call(prompt), "E2E-MAIN-DONE"],
        "agents": {"SUBAGENT-T1": [
            "Implemented.\n<signal>T1_DONE</signal>",
            "Re-checked.\n<signal>T1_DONE</signal>",
            "Reviewed.\n<signal>T1_DONE</signal>",
        ]},
    });
    let mut unbound = Vec::new();
    for i in 0..60 {
        let s = Scenario::new("race", &script);
        s.taskhook(&["iterative", "new", "race", "--task", "T1"]);
        s.claude(&["-p", "Work through the plan."], &[]);
        let n = s.stream("SUBAGENT-T1").len();
        if n != 3 {
            let notice = s.stream("main")[1]
                .hook_contexts("PostToolUse:Agent hook additional context: ")
                .join(" | ");
            unbound.push(format!(
                "run {i}: {n} subagent request(s); main agent told: {notice}"
            ));
        }
    }
    assert!(unbound.is_empty(), "{unbound:#?}");
}
