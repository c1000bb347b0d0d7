//! Layout `projects` (seed 000) with the real Claude Code CLI: the SessionStart context names
//! the ready task; launching a parent task is denied at PreToolUse with its subtasks named; a
//! foreground subagent bound to a task completes it; the main agent's next request carries
//! what became ready; SessionEnd writes a checkpoint.

use serde_json::{json, Value};

use crate::harness::Scenario;

fn agent(prompt: &str, description: &str) -> Value {
    json!([{"tool": "Agent", "input": {
        "description": description,
        "prompt": prompt,
        "subagent_type": "general-purpose",
        "run_in_background": false
    }}])
}

#[test]
fn projects_bound_subagent_completes_a_task() {
    let parent = "SUBAGENT-E1 <task>web/E1</task> Build the whole epic.";
    let prompt =
        "SUBAGENT-T1 <task>web/T1</task> Implement the parser (.claude/projects/web/tasks.json).";
    let script = json!({
        "main": [
            agent(parent, "Work on E1"),
            agent(prompt, "Work on T1"),
            "E2E-PROJECTS-FINISHED"
        ],
        "agents": {
            "SUBAGENT-T1": [
                "Parser implemented and tested.\n<signal>T1_DONE</signal>",
                "E2E-SUBAGENT-TOO-MANY-TURNS"
            ],
            "SUBAGENT-E1": ["E2E-PARENT-SHOULD-NOT-RUN"]
        },
        "latency_ms": {"SUBAGENT-T1": 250},
    });
    let s = Scenario::new("projects", &script);
    s.taskhook(&["projects", "new", "web", "--name", "Web app"]);
    for args in [
        &[
            "T1",
            "--title",
            "Parser",
            "--estimate",
            "30",
            "--priority",
            "high",
        ][..],
        &[
            "T2",
            "--title",
            "Parser tests",
            "--estimate",
            "20",
            "--depends",
            "T1",
        ],
        &["E1", "--title", "Checkout epic", "--level", "epic"],
        &[
            "S1",
            "--title",
            "Cart story",
            "--parent",
            "E1",
            "--depends",
            "T2",
        ],
    ] {
        let mut a = vec!["projects", "add", "web"];
        a.extend_from_slice(args);
        s.taskhook(&a);
    }

    let run = s.claude(&["-p", "Work through project web."], &[]);
    assert_eq!(run.text(), "E2E-PROJECTS-FINISHED", "{:?}", run.result);

    // The first request carries the SessionStart context with the ready task.
    let main = s.stream("main");
    assert_eq!(
        main.len(),
        3,
        "{:?}",
        main.iter().map(|r| r.turn).collect::<Vec<_>>()
    );
    let ctx = main[0].hook_contexts("SessionStart hook additional context: ");
    let ours: Vec<&String> = ctx
        .iter()
        .filter(|c| c.contains("projects \"web\""))
        .collect();
    assert_eq!(ours.len(), 1, "{:#?}", main[0].messages());
    assert!(
        ours[0].contains("Ready: T1 (Parser; priority high, estimate 30 min)."),
        "{}",
        ours[0]
    );

    // The parent's launch was denied with its subtasks named; its subagent never ran.
    assert!(s.stream("SUBAGENT-E1").is_empty(), "the parent task ran");
    let denied = main[1].all_text();
    assert!(
        denied.contains("E1 is a parent task with subtasks S1 (PENDING)"),
        "{denied}"
    );

    // The bound subagent ran once (no block), and the main agent learned what became ready.
    let sub = s.stream("SUBAGENT-T1");
    assert_eq!(
        sub.len(),
        1,
        "{:#?}",
        sub.iter().map(|r| r.last_user_text()).collect::<Vec<_>>()
    );
    let notices = main[2].hook_contexts("PostToolUse:Agent hook additional context: ");
    assert_eq!(notices.len(), 1, "{:#?}", main[2].messages());
    assert!(
        notices[0].contains("projects web: T1 is COMPLETE"),
        "{}",
        notices[0]
    );
    assert!(notices[0].contains("Ready now: T2."), "{}", notices[0]);

    // On disk: T1 complete with its times, the log in the seed's format, velocity, and the
    // SessionEnd checkpoint.
    let tasks = s.json(".claude/projects/web/tasks.json");
    let t1 = tasks["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == "T1")
        .unwrap();
    assert_eq!(t1["status"], "COMPLETE", "{tasks:#}");
    assert!(
        t1["started_at"].is_string() && t1["completed_at"].is_string(),
        "{t1:#}"
    );
    assert!(t1["actual_minutes"].is_number(), "{t1:#}");
    let log = s.read(".claude/projects/web/progress/log.md");
    assert!(
        log.contains(
            " — TASK_STARTED\n- Task: T1\n- Previous status: PENDING\n- New status: IN_PROGRESS\n"
        ),
        "{log}"
    );
    assert!(log.contains(" — TASK_COMPLETE\n- Task: T1\n- Previous status: IN_PROGRESS\n- New status: COMPLETE\n- actual_minutes: "), "{log}");
    assert!(
        log.contains(" — CHECKPOINT_WRITTEN\n- Checkpoint: checkpoints/checkpoint-001.json\n"),
        "{log}"
    );
    assert_eq!(
        s.read(".claude/projects/web/checkpoints/checkpoint-001.json"),
        s.read(".claude/projects/web/tasks.json")
    );
    let v = s.json(".claude/projects/web/progress/velocity.json");
    assert_eq!(v["tasks_completed"], 1, "{v:#}");
    let agents = s.json(".claude/taskhook/agents.json");
    assert_eq!(agents["notices"], json!([]), "notice delivered: {agents:#}");
    s.taskhook(&["validate"]);
}
