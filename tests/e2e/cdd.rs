//! Layout `cdd` (seed 004) against the real Claude Code: a subagent finishes the task before a
//! stop, and the orchestrating main agent halts at once (no further model request), again in
//! the next session, until a person runs `taskhook cdd continue`; then a new session goes on.

use serde_json::{json, Value};

use super::harness::{self, Scenario};

const SESSION_CONTEXT: &str = "SessionStart hook additional context: ";

const ORDER: &str = r#"{
  "tasks": [
    {"task": "foo.md", "group": "Core", "model": "sonnet", "thinking": "none"},
    {"stop": "verify-core", "message": "Verify core features work before proceeding"},
    {"task": "bar.md", "group": "Tests", "model": "sonnet", "thinking": "thinking"}
  ]
}
"#;

fn bash(command: &str) -> Value {
    json!([{"tool": "Bash", "input": {"command": command, "description": "cdd"}}])
}

/// The history's actions, in order.
fn actions(s: &Scenario) -> Vec<String> {
    s.read("cdd/tasks/history.jsonl")
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"));
            format!(
                "{} {}",
                v["action"].as_str().unwrap_or("?"),
                v["task"].as_str().unwrap_or("?")
            )
        })
        .collect()
}

#[test]
fn a_stop_halts_the_orchestrator_until_continue() {
    let next = format!("{} cdd next", harness::taskhook_bin().display());
    let script = json!({
        "main": [
            [
                {"text": "Delegating foo.md."},
                {"tool": "Agent", "input": {
                    "description": "Work on foo.md",
                    "prompt": "SUBAGENT-FOO <task>foo.md</task> Implement foo.md from cdd/tasks/in_progress/foo.md.",
                    "subagent_type": "general-purpose",
                    "run_in_background": false
                }}
            ],
            "E2E-MAIN-AFTER-THE-STOP"
        ],
        "agents": {
            "SUBAGENT-FOO": ["Implemented foo.md.\n<signal>foo.md_DONE</signal>"],
            "E2E-SESSION-2": [bash("echo E2E-SESSION-2-BASH"), "E2E-SESSION-2-AFTER-BASH"],
            "E2E-SESSION-3": [bash(&next), "E2E-SESSION-3-DONE"]
        },
        "latency_ms": {"SUBAGENT-FOO": 250},
    });
    let s = Scenario::new("cdd-stop", &script);
    std::fs::write(s.path(".claude/taskhook.json"), r#"{"cdd_dir": "cdd"}"#).unwrap();
    s.taskhook(&["cdd", "init"]);
    std::fs::write(s.path("cdd/tasks/order.json"), ORDER).unwrap();
    for t in ["foo.md", "bar.md"] {
        std::fs::write(s.path(&format!("cdd/tasks/{t}")), format!("# {t}\n")).unwrap();
    }
    s.taskhook(&["cdd", "import"]);

    // Session 1: the launch starts foo.md, the subagent's DONE completes it, and the next entry
    // is the stop: the main agent is halted on its Agent call's PostToolUse.
    let run = s.claude(&["-p", "Work through the cdd plan."], &[]);
    assert_ne!(run.text(), "E2E-MAIN-AFTER-THE-STOP", "{:?}", run.result);
    assert_eq!(s.stream("SUBAGENT-FOO").len(), 1);
    let main = s.stream("main");
    assert_eq!(
        main.len(),
        1,
        "no model request after the halt: {:?}",
        run.result
    );
    assert!(s.path("cdd/tasks/completed/foo.md").exists());
    assert!(s.path("cdd/tasks/pending/bar.md").exists());
    assert_eq!(
        actions(&s),
        [
            "import foo.md",
            "import bar.md",
            "start foo.md",
            "done foo.md",
            "stop_reached verify-core"
        ]
    );
    let agents = s.json(".claude/taskhook/agents.json");
    let halts = agents["halts"].as_array().expect("a halt is kept");
    assert_eq!(halts.len(), 1, "{agents:#}");
    assert!(
        halts[0]["message"]
            .as_str()
            .unwrap()
            .contains("taskhook cdd continue verify-core"),
        "{agents:#}"
    );

    // Session 2, before anyone passed the stop: the context says it is waiting, and the first
    // tool call halts the main agent again.
    s.claude(&["-p", "E2E-SESSION-2 carry on with the plan."], &[]);
    let second = s.stream("E2E-SESSION-2");
    assert_eq!(second.len(), 1, "halted after its first tool call");
    let ctx = second[0].hook_contexts(SESSION_CONTEXT).join("\n");
    assert!(
        ctx.contains("Stop waiting for a person: verify-core"),
        "{ctx}"
    );
    assert!(ctx.contains("taskhook cdd continue verify-core"), "{ctx}");

    // A person passes the stop.
    let out = s.taskhook(&["cdd", "continue", "verify-core"]);
    let reply: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(reply["data"]["halt_lifted"], true, "{reply}");

    // Session 3: the context names bar.md; the orchestrator's `taskhook cdd next` answers it,
    // and the session goes on to its end.
    let run = s.claude(&["-p", "E2E-SESSION-3 carry on with the plan."], &[]);
    assert_eq!(run.text(), "E2E-SESSION-3-DONE", "{:?}", run.result);
    let third = s.stream("E2E-SESSION-3");
    assert_eq!(third.len(), 2);
    let ctx = third[0].hook_contexts(SESSION_CONTEXT).join("\n");
    assert!(ctx.contains("Next: bar.md"), "{ctx}");
    let answer = third[1].last_user_text();
    assert!(
        answer.contains(r#""type":"task","task":"bar.md""#),
        "{answer}"
    );
    let last = actions(&s);
    assert_eq!(
        last.last().map(String::as_str),
        Some("stop_continue verify-core")
    );
    s.taskhook(&["validate"]);
}
