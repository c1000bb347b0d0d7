//! Every kind of answer a layout gives, pinned whole and word for word (issue 21: pinned before
//! the layouts' replies became one `Reaction` the engine turns into the event's reply): a
//! launch denied by each layout, a subagent's Bash refused, an order edit blocked, a halt, a
//! TaskCompleted refused with exit 2, `tasks_to_update`, a signal a layout would not apply, a
//! merge's context, and a verb a layout refuses.

use serde_json::{json, Value};

use crate::agent::{verb, A};
use crate::cdd::{bash_ran, payload, Ws};
use crate::common::{Project, Run, NOW};
use crate::execute::Exec;
use crate::projects::Proj;

/// Exit code, stdout and stderr, with the temporary folder written `<tmp>`.
fn whole(run: &Run, tmp: &std::path::Path) -> String {
    let t = tmp.display().to_string();
    format!(
        "exit {}\nstdout: {}\nstderr: {}",
        run.code,
        run.stdout.trim_end().replace(&t, "<tmp>"),
        run.stderr.trim_end().replace(&t, "<tmp>")
    )
}

/// Collects every mismatch of a test, to report them all at once.
#[derive(Default)]
struct Pins(Vec<String>);

impl Pins {
    fn eq(&mut self, got: String, want: &str) {
        if got != want {
            self.0.push(format!("got:\n{got}\nwant:\n{want}\n"));
        }
    }
}

impl Drop for Pins {
    fn drop(&mut self) {
        if !self.0.is_empty() && !std::thread::panicking() {
            panic!("{}", self.0.join("\n"));
        }
    }
}

fn launch_payload(p: &Project, prompt: &str) -> Value {
    let mut v = p.payload("PreToolUse.Agent.json");
    v["tool_input"]["prompt"] = json!(prompt);
    v
}

#[test]
fn iterative_replies() {
    let mut pins = Pins::default();
    let p = Project::new();
    p.new_slug("s", &["T1", "T2", "T3"], 5);
    p.write(
        ".claude/iterative/s/tasks.md",
        "## Tasks\n\n- [ ] **T1**: a\n- [ ] **T2**: b\n- [ ] **T3**: c\n  - Depends: T2\n",
    );
    let tmp = p.tmp.path();
    let run = p.hook(&launch_payload(&p, "Work on <task>T3</task>."));
    pins.eq(whole(&run, tmp),
        r#"exit 0
stdout: {"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"iterative s: T3 waits on T2 (not done yet): launch a subagent for T2 first."}}
stderr: "#
    );
    let run = p.hook(&p.subagent_stop("x", "Do <task>T3</task>", "<signal>T3_DONE</signal>"));
    pins.eq(whole(&run, tmp),
        r#"exit 0
stdout: {"systemMessage":"taskhook: iterative s: T3 is unchanged: a subagent signalled T3_DONE but it waits on T2 (not done)."}
stderr: "#
    );
    // The same refusal through a verb: its one-line error.
    let run = verb(&p, Some(A), NOW, &["done", "s/T3"]);
    pins.eq(whole(&run, tmp),
        "exit 1\nstdout: \nstderr: taskhook: s/T3 is not ready (pending: Waiting on T2); nothing changed"
    );
}

#[test]
fn projects_replies() {
    let mut pins = Pins::default();
    let pr = Proj::new("web");
    pr.add("T1", &[]);
    pr.add("T2", &["--depends", "T1"]);
    let tmp = pr.p.tmp.path();
    let run = pr.launch(NOW, "Work on <task>T2</task>.");
    pins.eq(whole(&run, tmp), r#"exit 0
stdout: {"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"taskhook: projects web: T2 waits for T1 (PENDING) to be COMPLETE; ready now: T1."}}
stderr: "#);
    let run = pr.stop(
        NOW,
        "a1",
        "Work on <task>T2</task>.",
        "<signal>T2_DONE</signal>",
    );
    pins.eq(
        whole(&run, tmp),
        r#"exit 0
stdout: 
stderr: "#,
    );
    let run = pr.returned(NOW, "a1", "Work on <task>T2</task>.");
    pins.eq(whole(&run, tmp), r#"exit 0
stdout: {"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"projects web: T2 is COMPLETE. Ready: T1."}}
stderr: "#);
    let run = verb(&pr.p, Some(A), NOW, &["claim", "web/T2"]);
    pins.eq(
        whole(&run, tmp),
        r#"exit 1
stdout: 
stderr: taskhook: web/T2 is already finished (COMPLETE)"#,
    );
}

#[test]
fn execute_replies() {
    let mut pins = Pins::default();
    let e = Exec::init("shop", &["1-core=L1-001,L1-002"]);
    let tmp = e.p.tmp.path();
    let run = e.cmd(&["stop", "--reason", "budget review"]);
    assert_eq!(run.code, 0, "{run:?}");
    pins.eq(whole(&e.launch("L1-002"), tmp),
        r#"exit 0
stdout: {"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"taskhook: execute shop: not starting L1-002: the run is stopped (budget review). `taskhook execute resume` continues a stopped run."}}
stderr: "#
    );
    let run = e.cmd(&["start", "L1-002"]);
    pins.eq(whole(&run, tmp),
        "exit 1\nstdout: \nstderr: taskhook: execute shop: not starting L1-002: the run is stopped (budget review). `taskhook execute resume` continues a stopped run."
    );
    let run = verb(&e.p, Some(A), NOW, &["claim", "shop/L1-002"]);
    pins.eq(whole(&run, tmp),
        r#"exit 1
stdout: 
stderr: taskhook: shop/L1-002 is not ready (pending: the run is stopped (budget review): `taskhook execute resume` continues a stopped run.); nothing changed"#
    );
}

#[test]
fn execute_merge_context() {
    let mut pins = Pins::default();
    let e = Exec::init("shop", &["1-core=L1-001,L1-002"]);
    let tmp = e.p.tmp.path();
    e.launch("L1-001");
    e.bound("L1-001", "<signal>L1-001_DONE</signal>");
    e.bound("L1-001", "<signal>L1-001_DONE</signal>");
    let run = e.merge("worktree-L1-001");
    pins.eq(whole(&run, tmp), r#"exit 0
stdout: {"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"execute shop: L1-001 is merged and completed."}}
stderr: "#);
}

#[test]
fn cdd_replies() {
    let mut pins = Pins::default();
    let w = Ws::seeded();
    let tmp = w.p.tmp.path();
    let launch = |task: &str| {
        let mut v = payload(&w, "PreToolUse.Agent.json");
        v["tool_input"]["prompt"] = json!(format!("SUBAGENT: do <task>{task}</task>."));
        w.hook(&v)
    };
    pins.eq(whole(&launch("foo.md"), tmp), "exit 0\nstdout: \nstderr: ");
    pins.eq(whole(&launch("bar.md"), tmp),
        r#"exit 0
stdout: {"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"taskhook: cdd ws: not launching a subagent for bar.md: foo.md is already in in_progress/ (one task runs at a time); finish it with `taskhook cdd done`, `fail` or `escalate` first [TASK_IN_PROGRESS]"}}
stderr: "#
    );
    let pre = |agent: Option<&str>, command: &str| {
        let mut v = payload(&w, "PreToolUse.Bash.json");
        v["tool_input"]["command"] = json!(command);
        if let Some(a) = agent {
            v["agent_id"] = json!(a);
            v["agent_type"] = json!("general-purpose");
        }
        w.hook(&v)
    };
    pins.eq(whole(&pre(Some("a1"), "taskhook cdd done foo.md"), tmp), r#"exit 0
stdout: {"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"only the orchestrator manipulates task state (the cdd format): a subagent may not run `taskhook cdd done foo.md`. Do the task's work, then end your final message with <signal>NAME_DONE</signal> or <signal>NAME_FAILED: why</signal>; the orchestrator moves the task."}}
stderr: "#);
    pins.eq(whole(&pre(None, "taskhook cdd continue verify-core"), tmp),
        r#"exit 0
stdout: {"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"a cdd stop is a checkpoint for a person: the agent stops here and the person passes it, in their own terminal (`taskhook cdd continue STOP_ID`). Tell the user the stop is waiting and what to check, then end your turn."}}
stderr: "#
    );
    // A signal the workspace cannot apply: the main agent is told; nothing for the subagent.
    let run = w.hook(&w.p.subagent_stop(
        "a2",
        "Do <task>baz.md</task>",
        "<signal>baz.md_DONE</signal>",
    ));
    pins.eq(
        whole(&run, tmp),
        r#"exit 0
stdout: 
stderr: "#,
    );
    let mut read = payload(&w, "PostToolUse.Read.json");
    read["tool_use_id"] = json!("toolu_read_1");
    pins.eq(whole(&w.hook(&read), tmp), r#"exit 0
stdout: {"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"cdd ws: baz.md signalled DONE but is in pending/ and cannot be started: baz.md comes after stop verify-core, which has not been passed; a person runs `taskhook cdd continue verify-core` first; nothing changed."}}
stderr: "#);
    // Through the verbs: the same workspace's refusal as one line.
    let run = verb(&w.p, Some(A), NOW, &["done", "baz.md"]);
    pins.eq(
        whole(&run, tmp),
        r#"exit 1
stdout: 
stderr: taskhook: no unit "baz.md" in this project (see `taskhook status`)"#,
    );
    // The stop reached by `next`: halted.
    for t in ["foo.md", "bar.md"] {
        let _ = w.cdd(&["start", t]);
        let _ = w.cdd(&["done", t]);
    }
    let out = w.cdd(&["next"]).stdout;
    let run = w.hook(&bash_ran(&w, "taskhook cdd next", out.trim()));
    pins.eq(whole(&run, tmp), r#"exit 0
stdout: {"continue":false,"stopReason":"Stop verify-core reached (cdd workspace ws): Verify core features work before proceeding. The orchestrator waits here until a person passes it with: taskhook cdd continue verify-core"}
stderr: "#);
}

#[test]
fn cdd_order_edit_block() {
    let mut pins = Pins::default();
    let w = Ws::seeded();
    let tmp = w.p.tmp.path();
    let order = w.path("tasks/order.json");
    let mut v: Value = serde_json::from_str(crate::cdd::SEED_ORDER).unwrap();
    v["tasks"]
        .as_array_mut()
        .unwrap()
        .insert(1, json!({"task": "pending", "group": "Core"}));
    std::fs::write(&order, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    let mut edit = payload(&w, "PostToolUse.Write.json");
    edit["tool_input"]["file_path"] = json!(order);
    pins.eq(whole(&w.hook(&edit), tmp), r#"exit 0
stdout: {"decision":"block","reason":"`<tmp>/ws/tasks/order.json` tasks[1]: invalid task name \"pending\": it is a name the workspace uses itself (order.json, history.jsonl and their copies order.json.* and history.jsonl.*, the folders pending, in_progress, completed, failed, tmp and tasks). Every cdd command refuses this order until that entry is renamed (its file too)."}
stderr: "#);
}

#[test]
fn claude_tasks_replies() {
    let mut pins = Pins::default();
    let p = crate::claude_tasks::list_a_then_b();
    let tmp = p.tmp.path();
    let run = p.hook(&crate::claude_tasks::completed_event(&p, "b"));
    pins.eq(whole(&run, tmp), r#"exit 2
stdout: 
stderr: Task b (B) cannot be completed yet: its dependencies are not completed: a (A) [pending]. Complete them first (task list `<tmp>/home/.claude/tasks/proj/tasks.json`)."#);
    let mut stop = p.subagent_stop("a1", "Do the work.", "Finished.");
    stop["tasks_completed"] = json!(["a", "zz"]);
    let run = p.hook(&stop);
    pins.eq(whole(&run, tmp), r#"exit 0
stdout: {"systemMessage":"taskhook: a subagent reported a task as completed that is not in task list proj: zz; nothing was changed for it.","hookSpecificOutput":{"hookEventName":"SubagentStop","tasks_to_update":[{"task_id":"a","status":"completed"}]}}
stderr: "#);
    let mut read = p.payload("PostToolUse.Read.json");
    read["tool_use_id"] = json!("toolu_read_2");
    pins.eq(whole(&p.hook(&read), tmp), r#"exit 0
stdout: {"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"taskhook: a subagent completed task a (A) of list proj; now ready: b (B).\n\ntaskhook: a subagent reported a task as completed that is not in task list proj: zz; nothing was changed for it."}}
stderr: "#);
}
