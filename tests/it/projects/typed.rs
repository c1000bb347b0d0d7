//! The typed model writes back only what taskhook changed (issue 21, step 3): a tasks.json with
//! its keys in an order of its own, fields taskhook does not know (at the top and inside a task),
//! `null`s and numbers in their own form keeps all of them through real hook transitions.

use super::{silent, Proj};

/// Keys in a non-seed order, unknown fields at both levels, `null`s, `7.5` and `1.0`.
const ODD_TASKS: &str = r#"{
  "version": 3,
  "tasks": [
    {"status": "PENDING", "title": "Parser", "id": "T1", "x-owner": {"team": "core", "since": null},
     "estimate_minutes": 30, "blocked_reason": null, "subtasks": [],
     "created_at": "2026-03-01T09:00:00Z"},
    {"dependencies": ["T1"], "id": "T2", "status": "PENDING", "estimate_minutes": 7.5,
     "actual_minutes": null, "x-note": null, "priority": 2}
  ],
  "generator": {"name": "skill", "v": 1.0}
}"#;

#[test]
fn key_order_unknown_fields_nulls_and_numbers_survive_a_transition() {
    let pr = Proj::by_hand("web", &[("tasks.json", ODD_TASKS)]);
    let prompt = "Implement <task>T1</task>.";
    silent(&pr.launch("2026-03-01T11:00:00Z", prompt));
    silent(&pr.stop(
        "2026-03-01T11:42:00Z",
        "a1",
        prompt,
        "Done.\n<signal>T1_DONE</signal>",
    ));
    assert_eq!(pr.status("T1"), "COMPLETE");
    // Each object keeps its keys where they were; the keys taskhook added come after them.
    let want = concat!(
        r#"{"version":3,"tasks":["#,
        r#"{"status":"COMPLETE","title":"Parser","id":"T1","x-owner":{"team":"core","since":null},"#,
        r#""estimate_minutes":30,"blocked_reason":null,"subtasks":[],"created_at":"2026-03-01T09:00:00Z","#,
        r#""started_at":"2026-03-01T11:00:00Z","actual_minutes":42,"completed_at":"2026-03-01T11:42:00Z"},"#,
        r#"{"dependencies":["T1"],"id":"T2","status":"PENDING","estimate_minutes":7.5,"#,
        r#""actual_minutes":null,"x-note":null,"priority":2}"#,
        r#"],"generator":{"name":"skill","v":1.0}}"#
    );
    assert_eq!(serde_json::to_string(&pr.tasks()).unwrap(), want);
    // A field absent stays absent: T2 never had a started_at, T1 never a stale_count.
    let text = pr.read("tasks.json");
    assert_eq!(text.matches("started_at").count(), 1, "{text}");
    assert!(!text.contains("stale_count"), "{text}");
}
