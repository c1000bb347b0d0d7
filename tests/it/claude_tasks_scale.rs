//! Payload-driven loops of the claude-tasks mirror at sizes that were quadratic (issue 13):
//! 20,000 todos, 4,000 identical todos, 3,000 `addBlockedBy` ids; and the caps past which a
//! call is refused with one clear line. Correctness only: how long they take is measured by
//! `cargo bench --bench tasks`, never here.

use serde_json::{json, Value};

use crate::claude_tasks::{doc, hook_ok, ids, task, tasks_json, tool, update, write};
use crate::common::Project;

fn todo_list(p: &Project, items: Vec<Value>) -> Value {
    tool(p, "TodoWrite", json!({"todos": items}), json!({}))
}

#[test]
fn twenty_thousand_todos_and_the_same_list_again() {
    let p = Project::new();
    let items: Vec<Value> = (0..20_000)
        .map(|i| json!({"content": format!("todo {i}"), "status": "pending", "activeForm": "x"}))
        .collect();
    hook_ok(&p, &todo_list(&p, items.clone()));
    assert_eq!(ids(&doc(&p)).len(), 20_000);
    let before = std::fs::read(tasks_json(&p)).unwrap();
    hook_ok(&p, &todo_list(&p, items));
    assert_eq!(
        std::fs::read(tasks_json(&p)).unwrap(),
        before,
        "nothing to write"
    );
}

#[test]
fn four_thousand_identical_todos_get_numbered_ids() {
    let p = Project::new();
    let items: Vec<Value> =
        vec![json!({"content": "Same", "status": "pending", "activeForm": "x"}); 4_000];
    hook_ok(&p, &todo_list(&p, items));
    let got = ids(&doc(&p));
    assert_eq!(got.len(), 4_000);
    let base = taskhook::layouts::claude_tasks::todo_id("Same");
    assert_eq!(got[0], base);
    assert_eq!(got[1], format!("{base}-2"));
    assert_eq!(got[3_999], format!("{base}-4000"));
}

#[test]
fn three_thousand_blockers_in_one_update() {
    let p = Project::new();
    let blockers: Vec<String> = (2..3_002).map(|n| n.to_string()).collect();
    let r = hook_ok(
        &p,
        &update(&p, json!({"taskId": "1", "addBlockedBy": blockers})),
    );
    assert!(r.stderr.is_empty(), "{r:?}");
    let d = doc(&p);
    assert_eq!(ids(&d).len(), 3_001);
    let deps = task(&d, "1@s-1")["dependencies"].as_array().unwrap().len();
    assert_eq!(deps, 3_000);
    assert_eq!(task(&d, "1@s-1")["status"], "blocked");
    // The reverse edge of any of them would close a cycle: left out, and said.
    let r = hook_ok(
        &p,
        &update(&p, json!({"taskId": "1", "addBlocks": ["2", "3"]})),
    );
    assert!(r.context().contains("2@s-1 → 1@s-1 → 2@s-1"), "{r:?}");
    assert_eq!(
        task(&doc(&p), "2@s-1")["dependencies"],
        json!([]),
        "the cycle was not closed"
    );
}

#[test]
fn past_the_caps_a_call_is_refused_in_one_line() {
    let p = Project::new();
    let before = p.snapshot();
    let items: Vec<Value> = (0..50_001)
        .map(|i| json!({"content": format!("t{i}"), "status": "pending"}))
        .collect();
    let r = p.hook(&todo_list(&p, items));
    r.assert_one_line_error();
    assert_eq!(
        r.stderr,
        "taskhook: TodoWrite sent 50001 todos; taskhook mirrors at most 50000 in one call, so \
         task list proj was left as it was\n"
    );
    let many: Vec<String> = (0..10_001).map(|n| n.to_string()).collect();
    let r = p.hook(&update(&p, json!({"taskId": "1", "addBlockedBy": many})));
    r.assert_one_line_error();
    // The README quotes it: the cap counts `addBlockedBy` and `addBlocks` together.
    assert_eq!(
        r.stderr,
        "taskhook: TaskUpdate of task #1 names 10001 dependencies; taskhook mirrors at most \
         10000 in one call, so task list proj was left as it was\n"
    );
    let (a, b): (Vec<String>, Vec<String>) = (
        (0..5_000).map(|n| n.to_string()).collect(),
        (5_000..10_001).map(|n| n.to_string()).collect(),
    );
    let r = p.hook(&update(
        &p,
        json!({"taskId": "1", "addBlockedBy": a, "addBlocks": b}),
    ));
    r.assert_one_line_error();
    assert!(r.stderr.contains("names 10001 dependencies"), "{r:?}");
    let mut args = vec!["--id", "x", "--description", "X"];
    let deps: Vec<String> = (0..10_001).map(|n| format!("d{n}")).collect();
    for d in &deps {
        args.extend(["--dependency", d.as_str()]);
    }
    let r = write(&p, &args);
    r.assert_one_line_error();
    assert_eq!(
        r.stderr,
        "taskhook: a task may be given at most 10000 dependencies in one write; nothing was \
         written\n"
    );
    let mut stop = p.payload("SubagentStop.json");
    stop["tasks_completed"] = json!(many);
    let r = p.hook(&stop);
    r.assert_one_line_error();
    assert_eq!(
        r.stderr,
        "taskhook: tasks_completed names 10001 tasks; taskhook completes at most 10000 in one \
         event, so task list proj was left as it was\n"
    );
    assert_eq!(p.snapshot(), before);
}

/// Issue 20 item 21: `addBlockedBy` at the cap (10,000 ids), with a repeat, a dependency
/// closing a cycle and the task itself among them: each id is added once, in the order named;
/// the two that would close a cycle are left out and said. (That this is linear is measured by
/// `cargo bench --bench tasks`, never here.)
#[test]
fn ten_thousand_blockers_with_repeats_and_cycles_in_one_update() {
    let p = Project::new();
    hook_ok(&p, &crate::claude_tasks::create(&p, "1", "Root"));
    hook_ok(&p, &crate::claude_tasks::create(&p, "2", "Child"));
    hook_ok(
        &p,
        &update(&p, json!({"taskId": "2", "addBlockedBy": ["1"]})),
    );
    let mut names: Vec<String> = ["3", "2", "3", "1"].map(String::from).to_vec();
    names.extend((4..10_000).map(|n| n.to_string()));
    assert_eq!(names.len(), 10_000);
    let r = hook_ok(
        &p,
        &update(&p, json!({"taskId": "1", "addBlockedBy": names.clone()})),
    );
    let ctx = r.context();
    assert!(
        ctx.contains(
            "left out the dependency of 1@s-1 on 2@s-1: it would close the cycle 1@s-1 → \
             2@s-1 → 1@s-1."
        ) && ctx.contains("left out the dependency of 1@s-1 on 1@s-1"),
        "{ctx}"
    );
    let d = doc(&p);
    assert_eq!(ids(&d).len(), 9_999);
    let deps: Vec<&str> = task(&d, "1@s-1")["dependencies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    let want: Vec<String> = std::iter::once(3)
        .chain(4..10_000)
        .map(|n| format!("{n}@s-1"))
        .collect();
    assert_eq!(deps, want);
    assert_eq!(task(&d, "1@s-1")["status"], "blocked");
    assert_eq!(task(&d, "2@s-1")["dependencies"], json!(["1@s-1"]));
    // The same call again adds nothing: the list is left byte for byte.
    let before = std::fs::read(tasks_json(&p)).unwrap();
    hook_ok(
        &p,
        &update(&p, json!({"taskId": "1", "addBlockedBy": names})),
    );
    assert_eq!(std::fs::read(tasks_json(&p)).unwrap(), before);
}
