//! Layout `claude-tasks` (seed 002), end to end through the real binary: `tasks write|read`,
//! the hook mirror of Claude Code's task tools, TaskCompleted refusals, SubagentStop's
//! `tasks_completed`, corrupt files, hostile list ids and concurrency.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::common::{reference_dir, Project, Run, NOW};

/// A later instant than [`NOW`], to see which timestamps move.
pub(crate) const LATER: &str = "2026-03-01T13:00:00Z";

/// The session of the captured Task* payloads.
pub(crate) const SESSION: &str = "defa37fe-7e5f-4f4a-b850-37ec02631c2b";

/// The mirror's id for Claude Code's task `n` of `session` (issue 9: tasks are numbered per
/// session, so the mirror keys them `n@<first 8 characters of the session id>`).
pub(crate) fn cc(n: &str, session: &str) -> String {
    format!("{n}@{}", session.chars().take(8).collect::<String>())
}

pub(crate) fn list_path(p: &Project, list: &str) -> PathBuf {
    p.home.join(".claude/tasks").join(list).join("tasks.json")
}

/// The default list of the test project (named after its folder, `proj`).
pub(crate) fn tasks_json(p: &Project) -> PathBuf {
    list_path(p, "proj")
}

pub(crate) fn doc(p: &Project) -> Value {
    let bytes = std::fs::read(tasks_json(p)).unwrap();
    serde_json::from_slice(&bytes).unwrap()
}

pub(crate) fn task<'a>(d: &'a Value, id: &str) -> &'a Value {
    d["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == id)
        .unwrap_or_else(|| panic!("no task {id} in {d:#}"))
}

pub(crate) fn ids(d: &Value) -> Vec<String> {
    d["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap().to_string())
        .collect()
}

pub(crate) fn write(p: &Project, args: &[&str]) -> Run {
    let mut all = vec!["tasks", "write"];
    all.extend_from_slice(args);
    p.run(&all, "")
}

pub(crate) fn write_at(p: &Project, now: &str, args: &[&str]) -> Run {
    let mut c = p.cmd();
    c.env("TASKHOOK_NOW", now);
    let mut all = vec!["tasks", "write"];
    all.extend_from_slice(args);
    p.run_with(c, &all, "")
}

pub(crate) fn ok(r: &Run) -> Value {
    assert_eq!(r.code, 0, "{r:?}");
    r.json()
}

pub(crate) fn seed_example() -> Vec<u8> {
    std::fs::read(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/schemas/claude-tasks/valid/seed-complete-example.json"),
    )
    .unwrap()
}

pub(crate) fn put(path: &Path, bytes: &[u8]) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, bytes).unwrap();
}

/// A PostToolUse payload for one of Claude Code's task tools, aimed at the project.
pub(crate) fn tool(p: &Project, name: &str, input: Value, response: Value) -> Value {
    json!({
        "session_id": "s-1",
        "cwd": p.root.display().to_string(),
        "hook_event_name": "PostToolUse",
        "tool_name": name,
        "tool_input": input,
        "tool_response": response,
    })
}

pub(crate) fn create(p: &Project, id: &str, subject: &str) -> Value {
    tool(
        p,
        "TaskCreate",
        json!({"subject": subject, "description": format!("do {subject}")}),
        json!({"task": {"id": id, "subject": subject}}),
    )
}

pub(crate) fn update(p: &Project, input: Value) -> Value {
    let id = input["taskId"].clone();
    tool(
        p,
        "TaskUpdate",
        input,
        json!({"success": true, "taskId": id}),
    )
}

pub(crate) fn completed_event(p: &Project, id: &str) -> Value {
    json!({
        "session_id": "s-1",
        "cwd": p.root.display().to_string(),
        "hook_event_name": "TaskCompleted",
        "task_id": id,
        "task_subject": "x",
    })
}

/// A project whose list holds task `a` and task `b`, which depends on `a`.
pub(crate) fn list_a_then_b() -> Project {
    let p = Project::new();
    ok(&write(&p, &["--id", "a", "--description", "A"]));
    ok(&write(
        &p,
        &["--id", "b", "--description", "B", "--dependency", "a"],
    ));
    p
}

pub(crate) fn hook_ok(p: &Project, payload: &Value) -> Run {
    let r = p.hook(payload);
    assert_eq!(r.code, 0, "{r:?}");
    r
}

#[test]
fn seed_example_validates_and_reads() {
    let p = Project::new();
    put(&tasks_json(&p), &seed_example());
    let r = p.run(&["validate"], "");
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        r.stdout.contains("ok") && r.stdout.contains("tasks.json"),
        "{r:?}"
    );
    let read = ok(&p.run(&["tasks", "read", "--include-completed"], ""));
    assert_eq!(read["count"], 3);
    assert_eq!(
        (
            &read["pending_count"],
            &read["in_progress_count"],
            &read["completed_count"],
            &read["blocked_count"]
        ),
        (&json!(0), &json!(1), &json!(1), &json!(1))
    );
    let keys: Vec<&String> = read.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "tasks",
            "count",
            "pending_count",
            "in_progress_count",
            "completed_count",
            "blocked_count"
        ]
    );
    // Completed tasks are left out unless asked for; counts still cover the whole list.
    let read = ok(&p.run(&["tasks", "read"], ""));
    assert_eq!(read["count"], 2);
    assert_eq!(read["completed_count"], 1);
    let read = ok(&p.run(&["tasks", "read", "--assignee", "agent-123"], ""));
    assert_eq!(ids(&read), ["task-002"]);
    let read = ok(&p.run(&["tasks", "read", "--status", "completed"], ""));
    assert_eq!(ids(&read), ["task-001"]);
    let r = p.run(&["tasks", "read", "--status", "done"], "");
    r.assert_one_line_error();
}

#[test]
fn unchanged_rewrite_keeps_bytes_and_unknown_fields_survive() {
    let p = list_a_then_b();
    let before = std::fs::read(tasks_json(&p)).unwrap();
    // The same values again, later: nothing changes, not even a timestamp.
    let t = ok(&write_at(
        &p,
        LATER,
        &["--id", "b", "--description", "B", "--dependency", "a"],
    ));
    assert_eq!(t["updated_at"], NOW);
    assert_eq!(std::fs::read(tasks_json(&p)).unwrap(), before);
    let r = p.run(&["tasks", "write"], r#"{"id": "a", "description": "A"}"#);
    ok(&r);
    assert_eq!(std::fs::read(tasks_json(&p)).unwrap(), before);

    // A file written by someone else keeps its unknown fields on rewrite.
    let mut d: Value = serde_json::from_slice(&before).unwrap();
    d["x_root"] = json!({"keep": true});
    d["tasks"][0]["x_task"] = json!([1, 2]);
    d["tasks"][0]["metadata"] = json!({"priority": "high", "custom_fields": {"k": "v"}});
    put(
        &tasks_json(&p),
        serde_json::to_string(&d).unwrap().as_bytes(),
    );
    ok(&write_at(&p, LATER, &["--id", "b", "--description", "B2"]));
    let after = doc(&p);
    assert_eq!(after["x_root"], json!({"keep": true}));
    assert_eq!(task(&after, "a")["x_task"], json!([1, 2]));
    assert_eq!(task(&after, "a")["metadata"]["custom_fields"]["k"], "v");
    assert_eq!(
        task(&after, "a")["updated_at"],
        NOW,
        "unchanged task keeps its stamp"
    );
    assert_eq!(task(&after, "b")["updated_at"], LATER);
    assert_eq!(after["last_updated"], LATER);
    let text = std::fs::read_to_string(tasks_json(&p)).unwrap();
    assert!(text.starts_with("{\n  \"tasks\": [\n    {\n"), "{text}");
}

#[test]
fn write_creates_with_uuid_and_seed_fields() {
    let p = Project::new();
    let t = ok(&p.run(
        &["tasks", "write"],
        r#"{"description": "Set up", "metadata": {"priority": "high", "tags": ["setup"]}}"#,
    ));
    let id = t["id"].as_str().unwrap();
    let u = uuid_v4(id);
    assert!(u, "{id} is not a UUID v4");
    let keys: Vec<&String> = t.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "id",
            "description",
            "status",
            "created_at",
            "updated_at",
            "assignee",
            "dependencies",
            "metadata"
        ]
    );
    assert_eq!(t["status"], "pending");
    assert_eq!(t["created_at"], NOW);
    let d = doc(&p);
    assert_eq!(d["version"], 2);
    assert_eq!(d["last_updated"], NOW);
    assert_eq!(task(&d, id), &t);
    // Metadata merges; null deletes a key; assignee set and cleared.
    let t = ok(&write(
        &p,
        &[
            "--id",
            id,
            "--metadata",
            r#"{"tags": null, "source": "user"}"#,
            "--assignee",
            "me",
        ],
    ));
    assert_eq!(t["metadata"], json!({"priority": "high", "source": "user"}));
    assert_eq!(t["assignee"], "me");
    let t = ok(&p.run(
        &["tasks", "write"],
        format!(r#"{{"id": "{id}", "assignee": null}}"#),
    ));
    assert_eq!(t["assignee"], Value::Null);
    // Bad input: one line, nothing written.
    let before = p.snapshot();
    for args in [
        vec!["--id", "new"],
        vec!["--id", id, "--status", "done"],
        vec!["--id", id, "--metadata", "[1]"],
    ] {
        write(&p, &args).assert_one_line_error();
    }
    p.run(&["tasks", "write"], r#"{"description": "x", "colour": 1}"#)
        .assert_one_line_error();
    p.run(&["tasks", "write"], "").assert_one_line_error();
    assert_eq!(p.snapshot(), before);
}

fn uuid_v4(s: &str) -> bool {
    let parts: Vec<&str> = s.split('-').collect();
    parts.iter().map(|x| x.len()).collect::<Vec<_>>() == [8, 4, 4, 4, 12]
        && s.chars().all(|c| c == '-' || c.is_ascii_hexdigit())
        && parts[2].starts_with('4')
}

#[test]
fn cycles_and_unknown_dependencies_are_refused() {
    let p = Project::new();
    // A refused first write creates nothing at all.
    let empty = p.snapshot();
    write(
        &p,
        &["--id", "c", "--description", "C", "--dependency", "nope"],
    )
    .assert_one_line_error();
    write(
        &p,
        &["--id", "c", "--description", "C", "--dependency", "c"],
    )
    .assert_one_line_error();
    assert_eq!(p.snapshot(), empty);
    ok(&write(&p, &["--id", "task-a", "--description", "A"]));
    ok(&write(
        &p,
        &[
            "--id",
            "task-b",
            "--description",
            "B",
            "--dependency",
            "task-a",
        ],
    ));
    let before = p.snapshot();
    let r = write(&p, &["--id", "task-a", "--dependency", "task-b"]);
    r.assert_one_line_error();
    assert!(r.stderr.contains("task-a → task-b → task-a"), "{r:?}");
    let r = write(&p, &["--id", "task-a", "--dependency", "task-a"]);
    r.assert_one_line_error();
    assert!(r.stderr.contains("task-a → task-a"), "{r:?}");
    let r = write(
        &p,
        &[
            "--id",
            "task-c",
            "--description",
            "C",
            "--dependency",
            "nope",
        ],
    );
    r.assert_one_line_error();
    assert!(r.stderr.contains("\"nope\""), "{r:?}");
    assert_eq!(p.snapshot(), before);
}

#[test]
fn blocked_follows_dependencies_and_completion_reports_unblocked() {
    let p = Project::new();
    ok(&write(&p, &["--id", "a", "--description", "A"]));
    ok(&write(&p, &["--id", "x", "--description", "unrelated"]));
    let b = ok(&write(
        &p,
        &["--id", "b", "--description", "B", "--dependency", "a"],
    ));
    assert_eq!(b["status"], "blocked");
    let c = ok(&write(
        &p,
        &[
            "--id",
            "c",
            "--description",
            "C",
            "--dependency",
            "a",
            "--dependency",
            "b",
        ],
    ));
    assert_eq!(c["status"], "blocked");

    let r = write_at(&p, LATER, &["--id", "a", "--status", "completed"]);
    ok(&r);
    assert!(
        r.stderr.contains("now ready") && r.stderr.contains('b'),
        "{r:?}"
    );
    let d = doc(&p);
    assert_eq!(task(&d, "b")["status"], "pending");
    assert_eq!(task(&d, "b")["updated_at"], LATER);
    assert_eq!(task(&d, "c")["status"], "blocked");
    assert_eq!(task(&d, "c")["updated_at"], NOW);
    assert_eq!(task(&d, "x")["updated_at"], NOW);

    // A pending task that gains an unmet dependency becomes blocked.
    let x = ok(&write(&p, &["--id", "x", "--dependency", "c"]));
    assert_eq!(x["status"], "blocked");
    // Reopening a completed dependency blocks its pending dependants again.
    ok(&write(&p, &["--id", "a", "--status", "pending"]));
    assert_eq!(task(&doc(&p), "b")["status"], "blocked");
}

#[test]
fn in_progress_needs_completed_dependencies() {
    let p = list_a_then_b();
    let before = p.snapshot();
    for status in ["in_progress", "completed"] {
        let r = write(&p, &["--id", "b", "--status", status]);
        r.assert_one_line_error();
        assert!(
            r.stderr.contains("\"b\"") && r.stderr.contains("a (A) [pending]"),
            "{r:?}"
        );
    }
    assert_eq!(p.snapshot(), before);
    ok(&write(&p, &["--id", "a", "--status", "in_progress"]));
    ok(&write(&p, &["--id", "a", "--status", "completed"]));
    let b = ok(&write(&p, &["--id", "b", "--status", "in_progress"]));
    assert_eq!(b["status"], "in_progress");
}

#[test]
fn reference_payloads_replay_into_the_expected_list() {
    let p = Project::new();
    let files = [
        "PostToolUse.Read.json",
        "PreToolUse.TaskCreate.json",
        "PostToolUse.TaskCreate.json",
        "PostToolUse.TaskGet.json",
        "PostToolUse.TaskList.json",
        "PostToolUse.TaskUpdate.blockedBy.json",
        "TaskCompleted.json",
        "PostToolUse.TaskUpdate.completion_blocked.json",
        "PostToolUse.TaskUpdate.deleted.json",
        "PostToolUse.TaskUpdate.json",
        "PreToolUse.TodoWrite.json",
        "PostToolUse.TodoWrite.json",
        "PostToolUseFailure.TaskCreate.hook_blocked.json",
        "TaskCreated.json",
    ];
    // Every captured Task*/TodoWrite payload takes part.
    for f in crate::common::reference_payload_files() {
        if f.contains("Task") || f.contains("TodoWrite") {
            assert!(files.contains(&f.as_str()), "{f} is not replayed");
        }
    }
    let seq: Vec<Value> = files.iter().map(|f| p.payload(f)).collect();
    let path = p.tmp.path().join("seq.json");
    std::fs::write(&path, serde_json::to_vec(&seq).unwrap()).unwrap();
    let r = p.run(&["replay", path.to_str().unwrap()], "");
    assert_eq!(r.code, 0, "{r:?}");
    let lines = r.json_lines();
    assert_eq!(lines.len(), files.len());
    let changed: Vec<bool> = lines
        .iter()
        .map(|l| {
            assert_eq!(l["exit"], 0, "{l}");
            !l["changed"].as_array().unwrap().is_empty()
        })
        .collect();
    assert_eq!(
        changed,
        [
            false, false, true, false, false, true, false, false, false, true, false, true, false,
            false
        ]
    );
    let ready = lines[9]["stdout"]["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert!(
        // The session's own task, by Claude Code's number (issue 26 item 9).
        ready.contains("now ready (all dependencies completed): 2 (")
            && !ready.contains(&cc("2", SESSION)),
        "{ready}"
    );
    let meta = |origin: &str, extra: Value| {
        let mut cf = json!({"origin": origin});
        cf.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        json!({"source": "agent", "custom_fields": cf})
    };
    // Todos record the session and project that wrote them (issue 9).
    let todo_session = p.payload("PostToolUse.TodoWrite.json")["session_id"].clone();
    let project = p.root.display().to_string();
    let todo_scope = |active: &str| json!({"activeForm": active, "session_id": todo_session, "project": project});
    let t = |id: &str, desc: &str, status: &str, deps: Value, metadata: Value| {
        json!({"id": id, "description": desc, "status": status, "created_at": NOW,
               "updated_at": NOW, "assignee": null, "dependencies": deps, "metadata": metadata})
    };
    let expected = json!({
        "tasks": [
            t(&cc("1", SESSION), "Write parser\n\nImplement the parser module", "completed", json!([]),
              meta("TaskCreate", json!({"subject": "Write parser", "session_id": SESSION, "activeForm": "Writing parser"}))),
            t(&cc("2", SESSION), "Claude Code task #2", "pending", json!([cc("1", SESSION)]), meta("TaskCreate", json!({"session_id": SESSION}))),
            t("todo-091774a950e1e8b3", "Write parser", "completed", json!([]),
              meta("TodoWrite", todo_scope("Writing parser"))),
            t("todo-28e6e79e7c5971b0", "Test parser", "pending", json!([]),
              meta("TodoWrite", todo_scope("Testing parser"))),
            t("todo-d753d5d39c00b968", "Ship it", "pending", json!([]),
              meta("TodoWrite", todo_scope("Shipping it"))),
        ],
        "version": 2,
        "last_updated": NOW,
    });
    assert_eq!(doc(&p), expected);
    // Replaying the same captures again changes nothing.
    let before = p.snapshot();
    let r = p.run(&["replay", path.to_str().unwrap()], "");
    assert!(
        r.json_lines().iter().all(|l| l["changed"] == json!([])),
        "{r:?}"
    );
    assert_eq!(p.snapshot(), before);
}

/// One step of the captured session timeline, as the payload Claude Code sent.
fn timeline_payload(p: &Project, session: &str, step: &Value, created: &mut Vec<String>) -> Value {
    let cwd = p.root.display().to_string();
    match step["event"].as_str().unwrap() {
        "TaskCreated" => {
            created.push(step["task_id"].as_str().unwrap().to_string());
            json!({"session_id": session, "cwd": cwd, "hook_event_name": "TaskCreated",
                   "task_id": step["task_id"]})
        }
        "TaskCompleted" => json!({"session_id": session, "cwd": cwd,
            "hook_event_name": "TaskCompleted", "task_id": step["task_id"]}),
        _ => {
            let name = step["tool_name"].as_str().unwrap();
            let input = step["tool_input"].clone();
            let response = match name {
                "TaskCreate" => json!({"task": {"id": created.last().unwrap(),
                                                "subject": input["subject"]}}),
                "TaskUpdate" => json!({"success": true, "taskId": input["taskId"]}),
                _ => json!({}),
            };
            json!({"session_id": session, "cwd": cwd, "hook_event_name": "PostToolUse",
                   "tool_name": name, "tool_input": input, "tool_response": response})
        }
    }
}

fn timeline() -> Value {
    let text =
        std::fs::read_to_string(reference_dir().join("../tasks_ondisk/timeline.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// Writes Claude Code's own files as they were when the hook ran.
fn claude_files_at(p: &Project, step: &Value) {
    for (rel, content) in step["files_at_hook_time"].as_object().unwrap() {
        put(
            &p.home.join(".claude").join(rel),
            content.as_str().unwrap().as_bytes(),
        );
    }
}

#[test]
fn captured_task_session_mirrors_step_by_step() {
    let p = Project::new();
    let tl = timeline();
    let session = tl["session_id"].as_str().unwrap();
    let mut created = Vec::new();
    for step in tl["steps"].as_array().unwrap() {
        claude_files_at(&p, step);
        let own_before = crate::common::snapshot(&p.home.join(".claude/tasks").join(session));
        let r = p.hook(&timeline_payload(&p, session, step, &mut created));
        assert_eq!(r.code, 0, "{step}: {r:?}");
        assert!(r.stderr.is_empty(), "{r:?}");
        // Claude Code's own folder is read, never written.
        assert_eq!(
            crate::common::snapshot(&p.home.join(".claude/tasks").join(session)),
            own_before
        );
    }
    let d = doc(&p);
    assert_eq!(
        ids(&d),
        [cc("1", session), cc("2", session)],
        "task 3 was deleted"
    );
    let t1 = task(&d, &cc("1", session));
    assert_eq!(
        t1["description"],
        "Write parser\n\nImplement the parser module"
    );
    assert_eq!(t1["status"], "completed");
    assert_eq!(t1["assignee"], "main-agent");
    let t2 = task(&d, &cc("2", session));
    assert_eq!(t2["status"], "completed");
    assert_eq!(t2["dependencies"], json!([cc("1", session)]));
    assert_eq!(
        t2["metadata"],
        json!({"source": "agent", "custom_fields": {"origin": "TaskCreate",
               "subject": "Test parser", "session_id": session, "activeForm": "Testing parser",
               "metadata": {"phase": "T2", "note": "x"}}})
    );
    let v = p.run(&["validate"], "");
    assert_eq!(v.code, 0, "{v:?}");
    // status shows Claude Code's own folder when the list id names it.
    let mut c = p.cmd();
    c.env("CLAUDE_CODE_TASK_LIST_ID", session);
    let s = p.run_with(c, &["status"], "");
    assert_eq!(s.code, 0, "{s:?}");
    assert!(s.stdout.contains("read-only"), "{s:?}");
    assert!(
        s.stdout
            .contains("#1 [completed] Write parser (main-agent)"),
        "{s:?}"
    );
    assert!(
        s.stdout
            .contains("#2 [completed] Test parser [blocked by #1]"),
        "{s:?}"
    );
}

#[test]
fn late_start_imports_tasks_from_claude_codes_own_files() {
    let p = Project::new();
    let tl = timeline();
    let session = tl["session_id"].as_str().unwrap();
    let steps = tl["steps"].as_array().unwrap();
    // taskhook was installed after both TaskCreate calls: start at `addBlockedBy`.
    let start = steps
        .iter()
        .position(|s| s["tool_input"]["addBlockedBy"].is_array())
        .unwrap();
    claude_files_at(&p, &steps[start]);
    let mut created = vec!["1".to_string(), "2".to_string()];
    hook_ok(
        &p,
        &timeline_payload(&p, session, &steps[start], &mut created),
    );
    let d = doc(&p);
    let (t1, t2) = (cc("1", session), cc("2", session));
    assert_eq!(ids(&d), [t2.clone(), t1.clone()]);
    assert_eq!(
        task(&d, &t2)["description"],
        "Test parser\n\nWrite tests for the parser"
    );
    assert_eq!(task(&d, &t2)["status"], "blocked");
    assert_eq!(task(&d, &t2)["dependencies"], json!([t1]));
    assert_eq!(
        task(&d, &t2)["metadata"]["custom_fields"]["metadata"],
        json!({"phase": "T2", "prio": 1})
    );
    assert_eq!(task(&d, &t1)["status"], "pending");
}

#[test]
fn task_completed_is_refused_until_dependencies_complete() {
    let p = Project::new();
    hook_ok(&p, &create(&p, "1", "Write parser"));
    hook_ok(&p, &create(&p, "2", "Test parser"));
    hook_ok(
        &p,
        &update(&p, json!({"taskId": "2", "addBlockedBy": ["1"]})),
    );
    assert_eq!(task(&doc(&p), "2@s-1")["status"], "blocked");
    let before = p.snapshot();
    let r = p.hook(&completed_event(&p, "2"));
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stdout.is_empty(), "{r:?}");
    assert_eq!(r.stderr.lines().count(), 1, "{r:?}");
    assert!(
        r.stderr.contains("Task 2 (Test parser")
            && r.stderr.contains(": 1 (Write parser")
            && r.stderr.contains("[pending]")
            && !r.stderr.contains('@'),
        "{r:?}"
    );
    assert_eq!(p.snapshot(), before);
    // Task 1 has no dependencies: allowed silently, nothing written.
    let r = hook_ok(&p, &completed_event(&p, "1"));
    assert!(r.stdout.is_empty() && r.stderr.is_empty(), "{r:?}");
    assert_eq!(p.snapshot(), before);
    // A task the mirror does not know is allowed.
    let r = hook_ok(&p, &completed_event(&p, "99"));
    assert!(r.stdout.is_empty(), "{r:?}");
    // Once 1 is completed, completing 2 is allowed.
    let r = hook_ok(
        &p,
        &update(&p, json!({"taskId": "1", "status": "completed"})),
    );
    assert!(r.stdout.contains("now ready"), "{r:?}");
    let r = hook_ok(&p, &completed_event(&p, "2"));
    assert!(r.stdout.is_empty() && r.stderr.is_empty(), "{r:?}");
}

#[test]
fn mirror_records_what_claude_code_did_and_says_so() {
    let p = Project::new();
    hook_ok(&p, &create(&p, "1", "Write parser"));
    hook_ok(&p, &create(&p, "2", "Test parser"));
    hook_ok(&p, &update(&p, json!({"taskId": "1", "addBlocks": ["2"]})));
    assert_eq!(task(&doc(&p), "2@s-1")["dependencies"], json!(["1@s-1"]));
    // Claude Code started 2 before 1 completed: recorded, and said.
    let r = hook_ok(
        &p,
        &update(
            &p,
            json!({"taskId": "2", "status": "in_progress", "owner": "agent-7",
                           "subject": "Test the parser", "metadata": {"k": 1}}),
        ),
    );
    let ctx = r.context();
    assert!(
        ctx.contains("task 2 (Test the parser") && ctx.contains("(1 (Write parser"),
        "{ctx}"
    );
    assert!(!ctx.contains("@s-1"), "{ctx}");
    // Editing that task's description is not blamed on the early start.
    ok(&write(
        &p,
        &["--id", "2@s-1", "--description", "edited by a person"],
    ));
    hook_ok(
        &p,
        &update(&p, json!({"taskId": "2", "subject": "Test the parser"})),
    );
    let d = doc(&p);
    let t2 = task(&d, "2@s-1");
    assert_eq!(t2["status"], "in_progress");
    assert_eq!(t2["assignee"], "agent-7");
    assert_eq!(t2["description"], "Test the parser\n\nedited by a person");
    assert_eq!(t2["metadata"]["custom_fields"]["metadata"], json!({"k": 1}));
    // A cycle Claude Code would allow is left out of the mirror, with a note.
    let r = hook_ok(
        &p,
        &update(&p, json!({"taskId": "1", "addBlockedBy": ["2"]})),
    );
    assert!(
        r.stdout.contains("the cycle 1 → 2 → 1") && !r.stdout.contains('@'),
        "{r:?}"
    );
    assert_eq!(task(&doc(&p), "1@s-1")["dependencies"], json!([]));
    // metadata null deletes; the emptied map goes away.
    hook_ok(
        &p,
        &update(&p, json!({"taskId": "2", "metadata": {"k": null}})),
    );
    assert!(task(&doc(&p), "2@s-1")["metadata"]["custom_fields"]
        .get("metadata")
        .is_none());
    // deleted removes the task and the dependencies on it.
    hook_ok(&p, &update(&p, json!({"taskId": "1", "status": "deleted"})));
    let d = doc(&p);
    assert_eq!(ids(&d), ["2@s-1"]);
    assert_eq!(task(&d, "2@s-1")["dependencies"], json!([]));
    // A failed TaskUpdate changes nothing and creates nothing.
    let before = p.snapshot();
    let mut failed = update(&p, json!({"taskId": "2", "status": "completed"}));
    failed["tool_response"]["success"] = json!(false);
    let r = hook_ok(&p, &failed);
    assert!(r.stdout.is_empty(), "{r:?}");
    assert_eq!(p.snapshot(), before);
}

#[test]
fn claude_code_ids_never_clobber_other_tasks() {
    let p = Project::new();
    let mine = ok(&write(
        &p,
        &["--id", "1", "--description", "a person's task"],
    ));
    // Only a shared list (CLAUDE_CODE_TASK_LIST_ID, here naming the same list) keys Claude
    // Code's tasks by their bare number, so only there can a number meet another writer's id.
    let shared = |payload: &Value| {
        let mut c = p.cmd();
        c.env("CLAUDE_CODE_TASK_LIST_ID", "proj");
        let r = p.run_with(c, &["hook"], serde_json::to_vec(payload).unwrap());
        assert_eq!(r.code, 0, "{r:?}");
        r
    };
    let r = shared(&create(&p, "1", "Write parser"));
    assert!(r.stdout.contains("not mirrored"), "{r:?}");
    let r = shared(&update(&p, json!({"taskId": "1", "status": "deleted"})));
    assert!(r.stdout.contains("not mirrored"), "{r:?}");
    shared(&update(&p, json!({"taskId": "1", "status": "completed"})));
    assert_eq!(task(&doc(&p), "1"), &mine);
    // Per session, the number is kept apart from it anyway.
    hook_ok(&p, &create(&p, "1", "Write parser"));
    hook_ok(
        &p,
        &update(&p, json!({"taskId": "1", "status": "completed"})),
    );
    assert_eq!(task(&doc(&p), "1"), &mine);
    assert_eq!(task(&doc(&p), "1@s-1")["status"], "completed");
}

#[test]
fn todowrite_mirror_adds_updates_and_removes_only_its_own() {
    let p = Project::new();
    ok(&write(
        &p,
        &["--id", "mine", "--description", "a user task"],
    ));
    let todos = |list: Value| tool(&p, "TodoWrite", json!({"todos": list}), json!({}));
    let first = todos(json!([
        {"content": "Write parser", "status": "in_progress", "activeForm": "Writing parser"},
        {"content": "Ship it", "status": "pending", "activeForm": "Shipping it"},
    ]));
    hook_ok(&p, &first);
    let d = doc(&p);
    let wp = task(&d, "todo-091774a950e1e8b3");
    assert_eq!(wp["status"], "in_progress");
    assert_eq!(wp["metadata"]["source"], "agent");
    assert_eq!(wp["metadata"]["custom_fields"]["origin"], "TodoWrite");
    assert_eq!(
        wp["metadata"]["custom_fields"]["activeForm"],
        "Writing parser"
    );
    // The identical list again writes nothing.
    let before = p.snapshot();
    let r = hook_ok(&p, &first);
    assert!(r.stdout.is_empty(), "{r:?}");
    assert_eq!(p.snapshot(), before);
    // A todo that left the list leaves the mirror; the user's task stays.
    hook_ok(
        &p,
        &todos(json!([{"content": "Ship it", "status": "completed", "activeForm": "Shipping it"}])),
    );
    let d = doc(&p);
    assert_eq!(ids(&d), ["mine", "todo-d753d5d39c00b968"]);
    assert_eq!(task(&d, "todo-d753d5d39c00b968")["status"], "completed");
    // A subagent's list does not remove the main agent's todos.
    let mut sub =
        todos(json!([{"content": "Sub work", "status": "pending", "activeForm": "Working"}]));
    sub["agent_id"] = json!("a123");
    hook_ok(&p, &sub);
    assert_eq!(ids(&doc(&p)).len(), 3);
}

#[test]
fn subagent_stop_tasks_completed_updates_without_block_or_context() {
    let p = list_a_then_b();
    let mut stop = p.payload("SubagentStop.json");
    // Without tasks_completed: nothing.
    let r = hook_ok(&p, &stop);
    assert!(r.stdout.is_empty(), "{r:?}");
    stop["tasks_completed"] = json!(["a", "ghost"]);
    let r = hook_ok(&p, &stop);
    let out = r.json();
    assert!(out.get("decision").is_none(), "{out}");
    let hso = &out["hookSpecificOutput"];
    assert_eq!(hso["hookEventName"], "SubagentStop");
    assert_eq!(
        hso["tasks_to_update"],
        json!([{"task_id": "a", "status": "completed"}])
    );
    assert!(hso.get("additionalContext").is_none(), "{out}");
    assert!(
        out["systemMessage"].as_str().unwrap().contains("ghost"),
        "{out}"
    );
    let d = doc(&p);
    assert_eq!(task(&d, "a")["status"], "completed");
    assert_eq!(task(&d, "b")["status"], "pending");
}

#[test]
fn subagent_signals_complete_list_tasks_and_tell_the_main_agent() {
    let p = list_a_then_b();
    let mut stop = p.payload("SubagentStop.json");
    stop["last_assistant_message"] = json!("tried\n<signal>b_FAILED: tests red</signal>");
    let r = hook_ok(&p, &stop);
    assert!(r.stdout.is_empty(), "{r:?}");
    assert_eq!(task(&doc(&p), "b")["status"], "blocked");
    stop["last_assistant_message"] = json!("done\n<signal>proj/a_DONE</signal>");
    let out = hook_ok(&p, &stop).json();
    assert!(out.get("decision").is_none(), "{out}");
    assert_eq!(
        out["hookSpecificOutput"],
        json!({"hookEventName": "SubagentStop",
               "tasks_to_update": [{"task_id": "a", "status": "completed"}]})
    );
    let d = doc(&p);
    assert_eq!(task(&d, "a")["status"], "completed");
    assert_eq!(task(&d, "b")["status"], "pending");
    // The main agent hears about both at its next tool call.
    let ctx = hook_ok(&p, &p.payload("PostToolUse.Read.json")).json()["hookSpecificOutput"]
        ["additionalContext"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        ctx.contains(
            "a subagent reported task b (B) of list proj as FAILED: tests red; it is blocked now, \
             the reason kept in its metadata.custom_fields.last_failure"
        ),
        "{ctx}"
    );
    assert!(
        ctx.contains("completed task a") && ctx.contains("now ready: b (B)"),
        "{ctx}"
    );
}

#[test]
fn session_start_summarizes_the_list_and_is_silent_without_one() {
    let p = Project::new();
    let start = p.payload("SessionStart.startup.json");
    let r = hook_ok(&p, &start);
    assert!(r.stdout.is_empty(), "{r:?}");
    assert!(!p.home.join(".claude").exists(), "nothing created");
    put(&tasks_json(&p), &seed_example());
    let r = hook_ok(&p, &start);
    let ctx = r.context();
    assert!(
        ctx.contains("3 tasks: 1 in progress, 0 pending, 1 blocked, 1 completed"),
        "{ctx}"
    );
    assert!(
        ctx.contains("In progress: task-002 (Implement authentication module)"),
        "{ctx}"
    );
    assert!(ctx.contains("task-003 (waits for task-002)"), "{ctx}");
    let s = p.run(&["status", "--json"], "");
    let st = &s.json()["stores"][0];
    assert_eq!(st["layout"], "claude-tasks");
    assert_eq!(st["id"], "proj");
    assert_eq!(
        st["counts"],
        json!({"blocked": 1, "completed": 1, "in_progress": 1})
    );
    // Lists are arrays of items, never comma-joined strings (issue 15: status for people).
    assert_eq!(
        st["current"],
        json!([{"id": "task-002", "title": "Implement authentication module"}])
    );
    assert_eq!(st["ready"], json!([]));
    assert_eq!(
        st["blocked"],
        json!([{"id": "task-003", "waits_for": ["task-002"]}])
    );
    // For people: titles beside ids, one line per blocked task with what it waits for.
    let human = p.run(&["status", "--color", "never"], "");
    assert!(
        human
            .stdout
            .contains("in progress  task-002  Implement authentication module"),
        "{human:?}"
    );
    assert!(
        human.stdout.contains("task-003 — waits for task-002"),
        "{human:?}"
    );
    let coloured = p.run(&["status", "--color", "always"], "");
    assert!(coloured.stdout.contains("\x1b["), "{coloured:?}");
    let mut c = p.cmd();
    c.env("NO_COLOR", "1");
    assert!(!p.run_with(c, &["status"], "").stdout.contains('\x1b'));
}

#[test]
fn corrupt_and_schema_invalid_lists_are_reported_never_overwritten() {
    for bad in [&b"{\"tasks\": [ not json"[..], br#"{"tasks": [{"id": "a", "description": "A", "status": "done", "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z"}], "version": 2, "last_updated": "2026-01-01T00:00:00Z"}"#] {
        let p = Project::new();
        put(&tasks_json(&p), bad);
        let before = p.snapshot();
        let r = write(&p, &["--id", "b", "--description", "B"]);
        r.assert_one_line_error();
        assert!(r.stderr.contains("tasks.json") && r.stderr.contains("taskhook validate"), "{r:?}");
        let todo = tool(&p, "TodoWrite", json!({"todos": [{"content": "x", "status": "pending", "activeForm": "x"}]}), json!({}));
        p.hook(&todo).assert_one_line_error();
        p.run(&["tasks", "read"], "").assert_one_line_error();
        let v = p.run(&["validate"], "");
        assert_eq!(v.code, 1, "{v:?}");
        assert!(v.stdout.contains("INVALID"), "{v:?}");
        let s = p.run(&["status"], "");
        assert!(s.stdout.contains("corrupt"), "{s:?}");
        let r = hook_ok(&p, &p.payload("SessionStart.startup.json"));
        assert!(r.stdout.contains("corrupt"), "{r:?}");
        assert_eq!(p.snapshot(), before, "bytes unchanged");
        // On request, recover moves the bad bytes aside and the list starts again.
        let root = tasks_json(&p).parent().unwrap().to_path_buf();
        let r = p.run(&["recover", root.to_str().unwrap()], "");
        assert_eq!(r.code, 0, "{r:?}");
        let aside: Vec<_> = std::fs::read_dir(&root)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|n| n.starts_with("tasks.json.corrupt-"))
            .collect();
        assert_eq!(aside.len(), 1);
        assert_eq!(std::fs::read(root.join(&aside[0])).unwrap(), bad);
        ok(&write(&p, &["--id", "b", "--description", "B"]));
    }
}

#[test]
fn hostile_list_id_is_refused_and_nothing_is_created() {
    let p = Project::new();
    let before = p.snapshot();
    for hostile in ["../../x", "a/b", ".hidden", ".."] {
        let mut c = p.cmd();
        c.env("CLAUDE_CODE_TASK_LIST_ID", hostile);
        let r = p.run_with(c, &["tasks", "write", "--description", "x"], "");
        r.assert_one_line_error();
        assert!(r.stderr.contains("CLAUDE_CODE_TASK_LIST_ID"), "{r:?}");
        let mut c = p.cmd();
        c.env("CLAUDE_CODE_TASK_LIST_ID", hostile);
        let todo = tool(
            &p,
            "TodoWrite",
            json!({"todos": [{"content": "x", "status": "pending", "activeForm": "x"}]}),
            json!({}),
        );
        p.run_with(c, &["hook"], serde_json::to_vec(&todo).unwrap())
            .assert_one_line_error();
    }
    assert_eq!(p.snapshot(), before);
    assert!(!p.tmp.path().join("x").exists());
}

#[test]
fn no_op_events_create_nothing() {
    let p = Project::new();
    let before = p.snapshot();
    for f in [
        "PostToolUse.Read.json",
        "PostToolUse.TaskGet.json",
        "PostToolUse.TaskUpdate.completion_blocked.json",
        "TaskCompleted.json",
        "SubagentStop.json",
        "Stop.json",
    ] {
        let r = hook_ok(&p, &p.payload(f));
        assert!(r.stdout.is_empty() && r.stderr.is_empty(), "{f}: {r:?}");
    }
    let empty = tool(&p, "TodoWrite", json!({"todos": []}), json!({}));
    hook_ok(&p, &empty);
    assert_eq!(p.snapshot(), before);
}

#[test]
fn list_id_precedence_and_config_dir() {
    let p = Project::new();
    // The folder holding .git names the list.
    ok(&write(&p, &["--description", "x"]));
    assert!(tasks_json(&p).exists());
    // package.json's name wins, made safe.
    p.write("package.json", r#"{"name": "@org/pkg"}"#);
    ok(&write(&p, &["--description", "y"]));
    assert!(list_path(&p, "org-pkg").exists());
    // CLAUDE_CODE_TASK_LIST_ID wins over both.
    let mut c = p.cmd();
    c.env("CLAUDE_CODE_TASK_LIST_ID", "shared-session");
    ok(&p.run_with(c, &["tasks", "write", "--description", "z"], ""));
    assert!(list_path(&p, "shared-session").exists());
    // CLAUDE_CONFIG_DIR moves the whole tree; --home moves ~.
    let cfg = p.tmp.path().join("cfg");
    let mut c = p.cmd();
    c.env("CLAUDE_CONFIG_DIR", &cfg);
    ok(&p.run_with(c, &["tasks", "write", "--description", "w"], ""));
    assert!(cfg.join("tasks/org-pkg/tasks.json").exists());
    let other = p.tmp.path().join("otherhome");
    let home = other.to_str().unwrap();
    ok(&p.run(
        &["--home", home, "tasks", "write", "--description", "v"],
        "",
    ));
    assert!(other.join(".claude/tasks/org-pkg/tasks.json").exists());
}

#[test]
fn concurrent_writers_lose_nothing() {
    let p = Project::new();
    let handles: Vec<_> = (0..8)
        .map(|w| {
            let mut cmds = Vec::new();
            for i in 0..50 {
                let mut c = p.cmd();
                c.env("TASKHOOK_LOCK_TIMEOUT", "120").args([
                    "tasks",
                    "write",
                    "--id",
                    &format!("w{w}-{i}"),
                    "--description",
                    &format!("writer {w} task {i}"),
                ]);
                cmds.push(c);
            }
            std::thread::spawn(move || {
                for mut c in cmds {
                    let out = c.output().unwrap();
                    assert!(out.status.success(), "{out:?}");
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let d = doc(&p);
    let mut got = ids(&d);
    got.sort();
    got.dedup();
    assert_eq!(got.len(), 400);
    assert_eq!(p.run(&["validate"], "").code, 0);
}
