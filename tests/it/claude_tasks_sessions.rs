//! Two sessions, or two projects that share a list, never overwrite each other's mirrored
//! tasks (issue 9, item 7), through the real binary: Claude Code's task numbers are per
//! session, TodoWrite's removals are per project, session and agent, and TaskCompleted,
//! `tasks_completed` and signals resolve a bare number within the payload's session.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::claude_tasks::{doc, ids, list_path, task};
use crate::common::{Project, Run};

const A: &str = "aaaaaaaa-1111-4111-8111-111111111111";
const B: &str = "bbbbbbbb-2222-4222-8222-222222222222";

pub(crate) fn post(cwd: &Path, session: &str, tool: &str, input: Value, response: Value) -> Value {
    json!({"session_id": session, "cwd": cwd.display().to_string(),
           "hook_event_name": "PostToolUse", "tool_name": tool,
           "tool_input": input, "tool_response": response})
}

pub(crate) fn create(cwd: &Path, session: &str, n: &str, subject: &str) -> Value {
    post(
        cwd,
        session,
        "TaskCreate",
        json!({"subject": subject, "description": ""}),
        json!({"task": {"id": n, "subject": subject}}),
    )
}

pub(crate) fn update(cwd: &Path, session: &str, input: Value) -> Value {
    let n = input["taskId"].clone();
    post(
        cwd,
        session,
        "TaskUpdate",
        input,
        json!({"success": true, "taskId": n}),
    )
}

fn todos(cwd: &Path, session: &str, list: &[&str]) -> Value {
    let items: Vec<Value> = list
        .iter()
        .map(|c| json!({"content": c, "status": "pending", "activeForm": c}))
        .collect();
    post(
        cwd,
        session,
        "TodoWrite",
        json!({"todos": items}),
        json!({}),
    )
}

fn run(p: &Project, payload: &Value) -> Run {
    let r = p.hook(payload);
    assert_eq!(r.code, 0, "{r:?}");
    r
}

#[test]
fn two_sessions_keep_their_own_task_numbers() {
    let p = Project::new();
    let cwd = p.root.clone();
    run(&p, &create(&cwd, A, "1", "Migrate database"));
    run(&p, &create(&cwd, B, "1", "Write docs"));
    run(&p, &create(&cwd, B, "2", "Publish docs"));
    run(
        &p,
        &update(&cwd, B, json!({"taskId": "2", "addBlockedBy": ["1"]})),
    );
    let d = doc(&p);
    assert_eq!(ids(&d), ["1@aaaaaaaa", "1@bbbbbbbb", "2@bbbbbbbb"]);
    assert_eq!(task(&d, "1@aaaaaaaa")["description"], "Migrate database");
    assert_eq!(
        task(&d, "2@bbbbbbbb")["dependencies"],
        json!(["1@bbbbbbbb"])
    );
    // A completing its #1 completes A's, not B's "migrate database" twin.
    run(
        &p,
        &update(&cwd, A, json!({"taskId": "1", "status": "completed"})),
    );
    let d = doc(&p);
    assert_eq!(task(&d, "1@aaaaaaaa")["status"], "completed");
    assert_eq!(task(&d, "1@bbbbbbbb")["status"], "pending");
    // TaskCompleted for B's #2 looks at B's #1.
    let done = |session: &str, n: &str| {
        json!({"session_id": session, "cwd": cwd.display().to_string(),
               "hook_event_name": "TaskCompleted", "task_id": n, "task_subject": "x"})
    };
    let r = p.hook(&done(B, "2"));
    assert_eq!(r.code, 2, "{r:?}");
    // Named as B knows them (issue 26 item 9): Claude Code's numbers, no `@`.
    assert!(
        r.stderr.contains("Task 2 (Publish docs)")
            && r.stderr.contains(": 1 (Write docs) [pending]")
            && !r.stderr.contains('@'),
        "{r:?}"
    );
    // A signal naming #1 in B's session completes B's #1.
    let mut stop = p.payload("SubagentStop.json");
    stop["session_id"] = json!(B);
    stop["last_assistant_message"] = json!("done <signal>1_DONE</signal>");
    let out = run(&p, &stop).json();
    assert_eq!(
        out["hookSpecificOutput"]["tasks_to_update"],
        json!([{"task_id": "1", "status": "completed"}])
    );
    assert_eq!(p.hook(&done(B, "2")).code, 0);
    // tasks_completed names numbers the same way.
    let mut stop = p.payload("SubagentStop.json");
    stop["session_id"] = json!(B);
    stop["tasks_completed"] = json!(["2"]);
    run(&p, &stop);
    let d = doc(&p);
    assert_eq!(task(&d, "2@bbbbbbbb")["status"], "completed");
    assert_eq!(ids(&d).len(), 3);
}

#[test]
fn a_named_shared_list_keeps_claude_codes_numbers() {
    let p = Project::new();
    let mut c = p.cmd();
    c.env("CLAUDE_CODE_TASK_LIST_ID", "team");
    let payload = create(&p.root, A, "1", "Migrate database");
    let r = p.run_with(c, &["hook"], serde_json::to_vec(&payload).unwrap());
    assert_eq!(r.code, 0, "{r:?}");
    let d: Value = serde_json::from_slice(&std::fs::read(list_path(&p, "team")).unwrap()).unwrap();
    assert_eq!(ids(&d), ["1"]);
}

fn app_under(p: &Project, parent: &str) -> PathBuf {
    let dir = p.tmp.path().join(parent).join("app");
    std::fs::create_dir_all(dir.join(".git")).unwrap();
    dir
}

#[test]
fn todowrite_removes_only_what_its_own_project_and_session_wrote() {
    let p = Project::new();
    let (a, b) = (app_under(&p, "a"), app_under(&p, "b"));
    let list = || -> Value {
        serde_json::from_slice(&std::fs::read(list_path(&p, "app")).unwrap()).unwrap()
    };
    let descriptions = |d: &Value| -> Vec<String> {
        d["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["description"].as_str().unwrap().to_string())
            .collect()
    };
    run(&p, &todos(&a, A, &["Write parser", "Ship it"]));
    // b/app shares the list `app`; its "Write parser" is its own todo, not a's.
    run(&p, &todos(&b, B, &["Write parser", "Deploy"]));
    let d = list();
    assert_eq!(
        ids(&d),
        [
            "todo-091774a950e1e8b3",
            "todo-d753d5d39c00b968",
            "todo-091774a950e1e8b3-2",
            "todo-ff01f19295c3b47e"
        ]
    );
    // a drops "Ship it": only a's todo goes.
    run(&p, &todos(&a, A, &["Write parser"]));
    assert_eq!(
        descriptions(&list()),
        ["Write parser", "Write parser", "Deploy"]
    );
    // Another session in a/app sends its own list: the first session's todo stays.
    run(&p, &todos(&a, B, &["Review"]));
    assert_eq!(
        descriptions(&list()),
        ["Write parser", "Write parser", "Deploy", "Review"]
    );
    // b empties its list: only b's todos go.
    run(&p, &todos(&b, B, &[]));
    assert_eq!(descriptions(&list()), ["Write parser", "Review"]);
    let d = list();
    let first = task(&d, "todo-091774a950e1e8b3");
    assert_eq!(first["metadata"]["custom_fields"]["session_id"], A);
    assert_eq!(
        first["metadata"]["custom_fields"]["project"],
        a.display().to_string()
    );
}
