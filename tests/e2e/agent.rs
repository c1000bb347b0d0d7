//! The agent's verbs with the real Claude Code on its default settings (no task tools): the
//! scripted model runs `taskhook next --json` through Bash, claims the unit, launches a
//! subagent bound to it, the subagent signals done, and `taskhook next` then names the
//! following unit. The claim's owner is the session Claude Code puts in the Bash tool's
//! environment (`CLAUDE_CODE_SESSION_ID`), the same id its hook payloads carry.

use serde_json::{json, Value};

use super::harness::Scenario;

fn bash(command: &str) -> Value {
    json!([{"tool": "Bash", "input": {"command": command, "description": "taskhook"}}])
}

fn agent(prompt: &str) -> Value {
    json!([{"tool": "Agent", "input": {
        "description": "Work on the unit",
        "prompt": prompt,
        "subagent_type": "general-purpose",
        "run_in_background": false
    }}])
}

/// The text of the tool result the request at `i` of the main stream carries last.
fn last_result(main: &[super::harness::Request], i: usize) -> String {
    main[i].last_user_text()
}

/// One loop over a store: next → claim → a bound subagent's DONE → next.
fn drive(s: &Scenario, unit: &str, prompt_key: &str, following: &str) {
    let main = s.stream("main");
    assert_eq!(
        main.len(),
        5,
        "{:#?}",
        main.iter().map(|r| r.turn).collect::<Vec<_>>()
    );
    // The first request's context opens with the index and teaches the verbs.
    let ctx = main[0].hook_contexts("SessionStart hook additional context: ");
    assert!(
        ctx.iter()
            .any(|c| c.contains("store(s) in this project") && c.contains("`taskhook next`")),
        "{ctx:#?}"
    );
    // `taskhook next --json` answered the unit, with the commands for it.
    let next = last_result(&main, 1);
    assert!(next.contains(&format!("\"unit\":\"{unit}\"")), "{next}");
    assert!(next.contains(&format!("taskhook claim {unit}")), "{next}");
    // The claim is the session's: the id Claude Code gave the Bash tool is the hooks' id.
    let claimed = last_result(&main, 2);
    assert!(
        claimed.contains(&format!("claimed {unit} for session")),
        "{claimed}"
    );
    assert_eq!(s.stream(prompt_key).len(), 1, "the subagent ran once");
    // After the subagent's DONE, `next` names the following unit.
    let after = last_result(&main, 4);
    assert!(
        after.contains(&format!("\"unit\":\"{following}\"")),
        "{after}"
    );
}

#[test]
fn default_settings_next_claim_subagent_done_next_on_a_project() {
    let script = json!({
        "main": [
            bash("taskhook next --json"),
            bash("taskhook claim web/T1"),
            agent("SUBAGENT-T1 <task>web/T1</task> Write the parser."),
            bash("taskhook next --json"),
            "E2E-AGENT-FINISHED"
        ],
        "agents": {"SUBAGENT-T1": ["Parser written.\n<signal>T1_DONE</signal>"]},
        "latency_ms": {"SUBAGENT-T1": 250},
    });
    let s = Scenario::new("agent-projects", &script);
    s.taskhook(&["projects", "new", "web"]);
    s.taskhook(&["projects", "add", "web", "T1", "--title", "Parser"]);
    s.taskhook(&[
        "projects",
        "add",
        "web",
        "T2",
        "--title",
        "Tests",
        "--depends",
        "T1",
    ]);
    let run = s.claude(&["-p", "Work through the project."], &[]);
    assert_eq!(run.text(), "E2E-AGENT-FINISHED", "{:?}", run.result);
    drive(&s, "web/T1", "SUBAGENT-T1", "web/T2");
    let tasks = s.json(".claude/projects/web/tasks.json");
    assert_eq!(tasks["tasks"][0]["status"], "COMPLETE", "{tasks}");
    // The claim ended with the unit; its owner was this session.
    let claims = s.json(".claude/taskhook/claims.json");
    assert_eq!(claims["claims"], json!([]), "{claims}");
    let log = s.read(".claude/projects/web/progress/log.md");
    assert_eq!(log.matches("TASK_STARTED").count(), 1, "{log}");
    // The claim named the session Claude Code reported (its first 8 characters), and
    // SessionEnd removed that session's liveness mark.
    let sid = run.session_id();
    let claimed = s.stream("main")[2].last_user_text();
    assert!(
        claimed.contains(&format!("for session {}", &sid[..8])),
        "{claimed} / {sid}"
    );
    let mark = s.home.join(".claude/taskhook/sessions").join(&sid);
    assert!(
        !mark.exists(),
        "the liveness mark outlived SessionEnd: {}",
        mark.display()
    );
}

#[test]
fn default_settings_next_claim_subagent_done_next_on_a_cdd_workspace() {
    let script = json!({
        "main": [
            bash("taskhook next --json"),
            bash("taskhook claim work/a.md"),
            agent("SUBAGENT-A <task>work/a.md</task> Do a.md."),
            bash("taskhook next --json"),
            "E2E-AGENT-FINISHED"
        ],
        "agents": {"SUBAGENT-A": ["Done.\n<signal>a.md_DONE</signal>"]},
        "latency_ms": {"SUBAGENT-A": 250},
    });
    let s = Scenario::new("agent-cdd", &script);
    std::fs::write(s.path(".claude/taskhook.json"), r#"{"cdd_dir": "work"}"#).unwrap();
    s.taskhook(&["cdd", "init"]);
    std::fs::write(
        s.path("work/tasks/order.json"),
        r#"{"tasks": [{"task": "a.md"}, {"task": "b.md"}]}"#,
    )
    .unwrap();
    for t in ["a.md", "b.md"] {
        std::fs::write(s.path(&format!("work/tasks/{t}")), t).unwrap();
    }
    s.taskhook(&["cdd", "import"]);
    let run = s.claude(&["-p", "Work through the plan."], &[]);
    assert_eq!(run.text(), "E2E-AGENT-FINISHED", "{:?}", run.result);
    drive(&s, "work/a.md", "SUBAGENT-A", "work/b.md");
    assert!(s.path("work/tasks/completed/a.md").exists());
    let history = s.read("work/tasks/history.jsonl");
    assert_eq!(
        history.matches("\"action\": \"start\"").count(),
        1,
        "{history}"
    );
}
