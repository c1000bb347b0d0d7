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
    assert!(r.stderr.contains("at most 50000"), "{r:?}");
    let many: Vec<String> = (0..10_001).map(|n| n.to_string()).collect();
    let r = p.hook(&update(&p, json!({"taskId": "1", "addBlockedBy": many})));
    r.assert_one_line_error();
    assert!(r.stderr.contains("at most 10000"), "{r:?}");
    let mut args = vec!["--id", "x", "--description", "X"];
    let deps: Vec<String> = (0..10_001).map(|n| format!("d{n}")).collect();
    for d in &deps {
        args.extend(["--dependency", d.as_str()]);
    }
    let r = write(&p, &args);
    r.assert_one_line_error();
    assert!(r.stderr.contains("at most 10000"), "{r:?}");
    assert_eq!(p.snapshot(), before);
}
