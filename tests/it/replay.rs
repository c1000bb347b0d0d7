//! `taskhook replay`: objects, arrays, JSON Lines and stdin through the same code as `hook`.

use serde_json::{json, Value};

use crate::common::{reference_payload, Project};

fn events(lines: &[Value]) -> Vec<Value> {
    lines.iter().map(|l| l["event"].clone()).collect()
}

#[test]
fn replays_object_array_and_json_lines() {
    let p = Project::new();
    let a = reference_payload("SessionStart.startup.json");
    let b = reference_payload("PostToolUse.Read.json");
    let c = reference_payload("Stop.json");
    p.write("one.json", serde_json::to_vec_pretty(&a).unwrap());
    p.write("many.json", serde_json::to_vec(&json!([b, c])).unwrap());
    let jsonl = format!(
        "{}\n\n{}\n",
        serde_json::to_string(&c).unwrap(),
        serde_json::to_string(&a).unwrap()
    );
    p.write("log.jsonl", jsonl);
    let run = p.run(&["replay", "one.json", "many.json", "log.jsonl"], "");
    assert_eq!(run.code, 0, "{run:?}");
    let lines = run.json_lines();
    assert_eq!(
        events(&lines),
        [
            "SessionStart",
            "PostToolUse",
            "Stop",
            "Stop",
            "SessionStart"
        ]
    );
    for l in &lines {
        assert_eq!(l["exit"], 0);
        assert_eq!(l["stdout"], Value::Null);
        assert_eq!(l["changed"], json!([]));
    }
}

#[test]
fn replays_stdin_and_reports_bad_lines_without_stopping() {
    let p = Project::new();
    let input = format!(
        "{}\nnot json\n{}\n{{\"no_event\": 1}}\n",
        serde_json::to_string(&reference_payload("Stop.json")).unwrap(),
        serde_json::to_string(&json!({"hook_event_name": "Unheard"})).unwrap()
    );
    let run = p.run(&["replay", "-"], input);
    assert_eq!(run.code, 1, "{run:?}");
    let lines = run.json_lines();
    assert_eq!(lines.len(), 4);
    assert_eq!(
        lines
            .iter()
            .map(|l| l["exit"].as_i64().unwrap())
            .collect::<Vec<_>>(),
        [0, 1, 0, 1]
    );
    assert_eq!(lines[2]["event"], "Unheard");
    assert!(
        lines[1]["stderr"]
            .as_str()
            .unwrap()
            .starts_with("taskhook: line 2"),
        "{lines:?}"
    );
    assert!(lines[3]["stderr"]
        .as_str()
        .unwrap()
        .contains("no hook_event_name"));
}

#[test]
fn missing_file_is_one_line_error() {
    let p = Project::new();
    p.run(&["replay", "nope.json"], "").assert_one_line_error();
}

#[test]
fn dry_run_writes_nothing() {
    let p = Project::new();
    p.write(
        "all.json",
        serde_json::to_vec(&json!([
            reference_payload("SessionStart.startup.json"),
            reference_payload("PostToolUse.TodoWrite.json"),
            reference_payload("PostToolUse.TaskCreate.json"),
            reference_payload("PreCompact.manual.json"),
            reference_payload("SessionEnd.other.json"),
        ]))
        .unwrap(),
    );
    let before = p.snapshot();
    let run = p.run(&["replay", "--dry-run", "all.json"], "");
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.json_lines().len(), 5);
    assert_eq!(p.snapshot(), before);
}
