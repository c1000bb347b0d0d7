//! The journal of decisions (`taskhook log`) and the opt-in payload capture, through the binary.

use serde_json::{json, Value};

use crate::common::Project;

fn todo(p: &Project, session: &str, content: &str) -> Value {
    let mut v = p.payload("PostToolUse.TodoWrite.json");
    v["session_id"] = json!(session);
    v["tool_input"] =
        json!({"todos": [{"content": content, "status": "in_progress", "activeForm": content}]});
    v
}

fn journal(p: &Project) -> Vec<Value> {
    std::fs::read_to_string(p.root.join(".claude/taskhook/journal.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn events_that_change_files_are_journaled_and_shown() {
    let p = Project::new();
    // A no-op and a SessionStart that only summarizes write nothing.
    p.hook(&p.payload("PostToolUse.Read.json"));
    p.hook(&p.payload("SessionStart.startup.json"));
    assert!(journal(&p).is_empty());
    assert_eq!(p.hook(&todo(&p, "s-one", "Write parser")).code, 0);
    assert_eq!(p.hook(&todo(&p, "s-two", "Test parser")).code, 0);
    let j = journal(&p);
    assert_eq!(j.len(), 2, "{j:?}");
    assert_eq!(j[0]["event"], "PostToolUse");
    assert_eq!(j[0]["tool"], "TodoWrite");
    assert_eq!(j[0]["session"], "s-one");
    assert_eq!(j[0]["exit"], 0);
    assert!(
        j[0]["changed"][0].as_str().unwrap().ends_with("tasks.json"),
        "{j:?}"
    );
    let log = p.run(&["log"], "");
    assert_eq!(log.code, 0, "{log:?}");
    assert!(log.stdout.contains("PostToolUse:TodoWrite"), "{log:?}");
    assert!(
        log.stdout.contains("changed: ") && log.stdout.contains("tasks.json"),
        "{log:?}"
    );
    let one = p.run(&["log", "--session", "s-two", "--json"], "");
    let lines = one.json_lines();
    assert_eq!(lines.len(), 1, "{one:?}");
    assert_eq!(lines[0]["session"], "s-two");
}

#[test]
fn the_journal_rotates_past_its_bound() {
    let p = Project::new();
    let big = format!(
        "{}\n",
        json!({"event": "old", "pad": "x".repeat(2_000_000)})
    );
    p.write(".claude/taskhook/journal.jsonl", &big);
    assert_eq!(p.hook(&todo(&p, "s", "Write parser")).code, 0);
    let dir = p.root.join(".claude/taskhook");
    assert_eq!(
        std::fs::read_to_string(dir.join("journal.1.jsonl")).unwrap(),
        big
    );
    assert_eq!(journal(&p).len(), 1);
    // `log` shows both, the rotated one first.
    let lines = p.run(&["log", "--json"], "").json_lines();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["event"], "old");
}

#[test]
fn a_capture_replays_into_the_same_state() {
    let p = Project::new();
    let capture = p.tmp.path().join("capture.jsonl");
    for payload in [
        p.payload("SessionStart.startup.json"),
        todo(&p, "s", "Write parser"),
        p.payload("PostToolUse.Read.json"),
    ] {
        let mut c = p.cmd();
        c.env("TASKHOOK_CAPTURE", &capture);
        let run = p.run_with(c, &["hook"], serde_json::to_vec(&payload).unwrap());
        assert_eq!(run.code, 0, "{run:?}");
    }
    let captured = std::fs::read_to_string(&capture).unwrap();
    assert_eq!(
        captured.lines().count(),
        3,
        "every payload, no-ops included"
    );
    let list = p.home.join(".claude/tasks/proj/tasks.json");
    let first = std::fs::read(&list).unwrap();
    std::fs::remove_file(&list).unwrap();
    let run = p.run(&["replay", capture.to_str().unwrap()], "");
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(std::fs::read(&list).unwrap(), first);
}
