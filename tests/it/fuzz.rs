//! Payload fuzzing (issue 9): every captured Claude Code payload, mutated (a value retyped, a
//! lone UTF-16 surrogate, deep nesting, a huge string, a field removed, another event name),
//! through the real binary in a project with stores. No panic; the exit code CONTRACT §2
//! allows; no file changed on exit 1; and a mutation of a field no handler reads never fails.

use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use serde_json::{json, Value};

use crate::common::{reference_payload_files, Project};

/// Top-level fields some handler reads; a mutation anywhere else must not fail a payload.
const READ_FIELDS: &[&str] = &[
    "hook_event_name",
    "session_id",
    "cwd",
    "agent_id",
    "agent_type",
    "source",
    "tool_name",
    "tool_input",
    "tool_response",
    "stop_hook_active",
    "agent_transcript_path",
    "last_assistant_message",
    "tasks_completed",
    "task_id",
];

const EVENTS: &[&str] = &[
    "SessionStart",
    "PostToolUse",
    "SubagentStop",
    "TaskCompleted",
    "Stop",
    "Teleport",
];

#[derive(Debug, Clone)]
enum Mutation {
    Retype(usize, Value),
    Surrogate(usize, bool),
    Nest(usize, usize),
    Huge(usize, usize),
    Remove(usize),
    Event(usize),
}

fn any_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        (-1e12f64..1e12).prop_map(|f| json!(f)),
        "[a-zA-Z0-9 /._-]{0,12}".prop_map(Value::from),
        prop::collection::vec(any::<u8>(), 0..3).prop_map(|v| json!(v)),
        "[a-z]{1,6}".prop_map(|k| json!({ k: [1, "x"] })),
    ]
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        4 => (any::<usize>(), any_value()).prop_map(|(i, v)| Mutation::Retype(i, v)),
        2 => (any::<usize>(), any::<bool>()).prop_map(|(i, high)| Mutation::Surrogate(i, high)),
        1 => (any::<usize>(), 2usize..300).prop_map(|(i, d)| Mutation::Nest(i, d)),
        1 => (any::<usize>(), 1usize..4).prop_map(|(i, mib)| Mutation::Huge(i, mib)),
        1 => any::<usize>().prop_map(Mutation::Remove),
        1 => any::<usize>().prop_map(Mutation::Event),
    ]
}

/// Every JSON pointer below the root, in document order.
fn pointers(v: &Value, at: &str, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, child) in m {
                let p = format!("{at}/{}", k.replace('~', "~0").replace('/', "~1"));
                out.push(p.clone());
                pointers(child, &p, out);
            }
        }
        Value::Array(a) => {
            for (i, child) in a.iter().enumerate() {
                let p = format!("{at}/{i}");
                out.push(p.clone());
                pointers(child, &p, out);
            }
        }
        _ => {}
    }
}

/// Applies a mutation; returns the payload's bytes and the top-level field it touched.
fn apply(payload: &Value, m: &Mutation) -> (Vec<u8>, String) {
    let mut v = payload.clone();
    let mut all = Vec::new();
    pointers(&v, "", &mut all);
    let pick = |i: usize| all[i % all.len()].clone();
    let top = |p: &str| p.split('/').nth(1).unwrap_or("").to_string();
    let set = |v: &mut Value, p: &str, new: Value| *v.pointer_mut(p).unwrap() = new;
    match m {
        Mutation::Retype(i, new) => {
            let p = pick(*i);
            set(&mut v, &p, new.clone());
            (serde_json::to_vec(&v).unwrap(), top(&p))
        }
        Mutation::Surrogate(i, high) => {
            let p = pick(*i);
            set(&mut v, &p, json!("cut <LONE> emoji"));
            let text = serde_json::to_string(&v).unwrap();
            let lone = if *high { "\\ud83d" } else { "\\ude00" };
            (text.replace("<LONE>", lone).into_bytes(), top(&p))
        }
        Mutation::Nest(i, depth) => {
            let p = pick(*i);
            let mut nested = json!("deep");
            for _ in 0..*depth {
                nested = json!([nested]);
            }
            set(&mut v, &p, nested);
            (serde_json::to_vec(&v).unwrap(), top(&p))
        }
        Mutation::Huge(i, mib) => {
            let p = pick(*i);
            set(&mut v, &p, json!("é".repeat(mib << 19)));
            (serde_json::to_vec(&v).unwrap(), top(&p))
        }
        Mutation::Remove(i) => {
            let p = pick(*i);
            let (parent, last) = p.rsplit_once('/').unwrap();
            match v.pointer_mut(if parent.is_empty() { "" } else { parent }) {
                Some(Value::Object(o)) => {
                    o.remove(&last.replace("~1", "/").replace("~0", "~"));
                }
                Some(Value::Array(a)) => {
                    a.remove(last.parse::<usize>().unwrap());
                }
                _ => {}
            }
            (serde_json::to_vec(&v).unwrap(), top(&p))
        }
        Mutation::Event(i) => {
            v["hook_event_name"] = json!(EVENTS[i % EVENTS.len()]);
            (serde_json::to_vec(&v).unwrap(), "hook_event_name".into())
        }
    }
}

/// A project with an iterative slug and a task list, for the payloads to reach.
fn project_with_stores() -> Project {
    let p = Project::new();
    let run = p.run(
        &["iterative", "new", "x", "--task", "T1", "--task", "T2"],
        "",
    );
    assert_eq!(run.code, 0, "{run:?}");
    let run = p.run(
        &["tasks", "write", "--id", "1", "--description", "first"],
        "",
    );
    assert_eq!(run.code, 0, "{run:?}");
    p
}

#[test]
fn mutated_payloads_never_panic_and_exit_per_contract() {
    let cases: u32 = std::env::var("TASKHOOK_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(400);
    let files = reference_payload_files();
    let p = project_with_stores();
    let payloads: Vec<Value> = files.iter().map(|f| p.payload(f)).collect();
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        max_shrink_iters: 64,
        ..Config::default()
    });
    let ran = std::cell::Cell::new(0u32);
    let outcome = runner.run(&(0..payloads.len(), mutation()), |(i, m)| {
        ran.set(ran.get() + 1);
        let (bytes, field) = apply(&payloads[i], &m);
        let event = payloads[i]["hook_event_name"].as_str().unwrap_or("");
        let before = p.snapshot();
        let run = p.run(&["hook"], bytes);
        let what: String = format!("{} {m:?}: {run:?}", files[i])
            .chars()
            .take(2000)
            .collect();
        let what = what.as_str();
        prop_assert!(!run.stderr.contains("internal error"), "panic: {}", what);
        match run.code {
            0 => prop_assert!(
                run.stdout.is_empty()
                    || (run.stdout.lines().count() == 1
                        && serde_json::from_str::<Value>(&run.stdout).is_ok_and(|v| v.is_object())),
                "exit 0 must print nothing or one object: {}",
                what
            ),
            1 => {
                prop_assert!(run.stdout.is_empty(), "{}", what);
                prop_assert_eq!(run.stderr.lines().count(), 1, "{}", what);
                prop_assert!(run.stderr.starts_with("taskhook: "), "{}", what);
                prop_assert!(p.snapshot() == before, "exit 1 changed files: {}", what);
                let nested = matches!(m, Mutation::Nest(_, d) if d > 100);
                prop_assert!(
                    READ_FIELDS.contains(&field.as_str()) || nested,
                    "a field no handler reads failed the payload: {}",
                    what
                );
                prop_assert!(
                    !(matches!(m, Mutation::Surrogate(..)) && run.stderr.contains("valid JSON")),
                    "a lone surrogate failed the payload: {}",
                    what
                );
            }
            2 => {
                let name = match &m {
                    Mutation::Event(k) => EVENTS[k % EVENTS.len()],
                    _ => event,
                };
                prop_assert_eq!(name, "TaskCompleted", "exit 2: {}", what);
            }
            other => return Err(TestCaseError::fail(format!("exit {other}: {what}"))),
        }
        Ok(())
    });
    eprintln!(
        "payload fuzz: {} cases over {} captured payloads",
        ran.get(),
        files.len()
    );
    if let Err(e) = outcome {
        panic!("{e}");
    }
}
