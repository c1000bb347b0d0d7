//! Unit tests of the layout's rooms, and the proof of the fast path (issue 13): a
//! straightforward implementation (the whole document as a JSON tree, before and after,
//! compared and re-serialised) and the parsed-once, edit-in-place [`List`] pipeline must give
//! the same bytes, the same errors and the same reports on random lists and random edits.

use std::collections::HashSet;
use std::path::Path;

use proptest::prelude::*;
use serde_json::{json, Map, Value};

use super::commands::{apply_write, WriteParams};
use super::doc::new_task;
use super::list::List;
use super::mirror::{body_of, join_subject, todo_id};
use super::model::View;
use super::scope::Keys;
use super::write::{plan, render};
use reference::reference_op;

mod reference;
use crate::error::{Error, Result};
use crate::store::{schema, to_pretty};

const NOW: &str = "2026-03-01T12:00:00Z";

/// What a pipeline run gives: the bytes to write (if any), unblocked and re-blocked ids.
type Run = (Option<Vec<u8>>, Vec<String>, Vec<String>);
/// The same, comparable: text, and errors as text.
type Seen = std::result::Result<(Option<String>, Vec<String>, Vec<String>), String>;

#[test]
fn todo_ids_are_stable_and_documented() {
    // FNV-1a 64 of the empty string is its offset basis.
    assert_eq!(todo_id(""), "todo-cbf29ce484222325");
    assert_eq!(todo_id("a"), "todo-af63dc4c8601ec8c");
    assert_eq!(todo_id("Write parser"), todo_id("Write parser"));
    assert_ne!(todo_id("Write parser"), todo_id("Write parser "));
}

#[test]
fn subject_join_round_trips() {
    assert_eq!(
        join_subject("Write parser", "Implement it"),
        "Write parser\n\nImplement it"
    );
    assert_eq!(join_subject("Write parser", ""), "Write parser");
    assert_eq!(join_subject("", "Implement it"), "Implement it");
    assert_eq!(join_subject("Same", "Same"), "Same");
    let d = join_subject("S", "B\n\nmore");
    assert_eq!(body_of(&d, "S"), "B\n\nmore");
    assert_eq!(body_of("S", "S"), "");
}

fn task(id: &str, status: &str, deps: &[&str], stamp: &str) -> Value {
    json!({"id": id, "description": id.to_uppercase(), "status": status, "created_at": stamp,
           "updated_at": stamp, "dependencies": deps})
}

fn doc_text(tasks: Vec<Value>) -> String {
    String::from_utf8(to_pretty(
        &json!({"tasks": tasks, "version": 2, "last_updated": "2026-01-01T00:00:00Z"}),
    ))
    .unwrap()
}

/// Runs `change` through the fast pipeline: the bytes it would write (if any) and the report.
fn fast(text: Option<&str>, change: impl Fn(&mut List<'_>, &str) -> Result<()>) -> Result<Run> {
    let path = Path::new("/l/tasks.json");
    let (list, (), out) = plan(path, "/l", text, (NOW, &Keys::default()), &change)?;
    let bytes = if out.changed {
        Some(render(path, &list)?)
    } else {
        None
    };
    Ok((bytes, out.unblocked, out.reblocked))
}

fn statuses(bytes: &[u8]) -> Vec<String> {
    let v: Value = serde_json::from_slice(bytes).unwrap();
    v["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["status"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn blocked_is_recomputed_without_downgrading() {
    let text = doc_text(vec![
        task("a", "pending", &[], "2026-01-01T00:00:00Z"),
        task("b", "pending", &["a"], "2026-01-01T00:00:00Z"),
        task("c", "in_progress", &["a"], "2026-01-01T00:00:00Z"),
        task("d", "blocked", &[], "2026-01-01T00:00:00Z"),
    ]);
    let (bytes, _, reblocked) = fast(Some(&text), |_, _| Ok(())).unwrap();
    assert_eq!(
        statuses(&bytes.unwrap()),
        ["pending", "blocked", "in_progress", "pending"]
    );
    assert!(reblocked.is_empty(), "an early start is not a re-block");
}

#[test]
fn a_reopened_dependency_reblocks_what_was_started() {
    let text = doc_text(vec![
        task("a", "completed", &[], "2026-01-01T00:00:00Z"),
        task("b", "in_progress", &["a"], "2026-01-01T00:00:00Z"),
        task("c", "pending", &["a"], "2026-01-01T00:00:00Z"),
        task("d", "completed", &["a"], "2026-01-01T00:00:00Z"),
    ]);
    let reopen = |l: &mut List<'_>, _: &str| {
        let i = l.find("a").unwrap();
        l.edit(i, |m| m["status"] = json!("pending"));
        Ok(())
    };
    let (bytes, _, reblocked) = fast(Some(&text), reopen).unwrap();
    assert_eq!(
        statuses(&bytes.unwrap()),
        ["pending", "blocked", "blocked", "completed"]
    );
    assert_eq!(reblocked, ["b", "c"]);
}

#[test]
fn finalize_stamps_only_changed_tasks() {
    let text = doc_text(vec![
        task("a", "pending", &[], "2026-01-01T00:00:00Z"),
        task("b", "pending", &[], "2026-01-01T00:00:00Z"),
    ]);
    let same = fast(Some(&text), |l, _| {
        let i = l.find("a").unwrap();
        l.edit(i, |m| m["status"] = json!("pending"));
        Ok(())
    })
    .unwrap();
    assert_eq!(same.0, None, "an edit that changes nothing writes nothing");
    let (bytes, ..) = fast(Some(&text), |l, _| {
        let i = l.find("b").unwrap();
        l.edit(i, |m| m["status"] = json!("completed"));
        Ok(())
    })
    .unwrap();
    let v: Value = serde_json::from_slice(&bytes.unwrap()).unwrap();
    assert_eq!(v["tasks"][0]["updated_at"], "2026-01-01T00:00:00Z");
    assert_eq!(v["tasks"][1]["updated_at"], NOW);
    assert_eq!(v["last_updated"], NOW);
}

#[test]
fn files_taskhook_wrote_are_copied_not_reserialised() {
    let text = doc_text(vec![
        json!({"id": "a", "description": "é \"q\" \n tab\t ctl\u{1} /", "status": "pending",
               "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00.5Z",
               "assignee": null, "dependencies": [], "metadata": {"priority": "high",
               "tags": ["x"], "custom_fields": {"n": -3, "o": {}, "l": [], "b": true}}}),
        task("b", "blocked", &["a"], "2026-01-01T00:00:00Z"),
    ]);
    let list = List::parse(&text).unwrap();
    assert!(list.slots.iter().all(|s| s.canonical && s.value.is_none()));
    assert_eq!(list.to_bytes(), text.as_bytes());
}

// ---- random lists and random edits ------------------------------------------------------

const POOL: usize = 8;

pub(super) fn pid(k: usize) -> String {
    format!("t{k}")
}

#[derive(Debug, Clone)]
pub(super) enum Op {
    Status(usize, &'static str),
    Deps(usize, Vec<usize>),
    Add(usize, Vec<usize>),
    Remove(usize),
    Desc(usize, String),
    Write(usize, Option<&'static str>, Option<Vec<usize>>),
}

fn arb_status() -> impl Strategy<Value = &'static str> {
    prop_oneof![
        Just("pending"),
        Just("in_progress"),
        Just("completed"),
        Just("blocked")
    ]
}

fn arb_op() -> impl Strategy<Value = Op> {
    let ids = || prop::collection::vec(0..POOL + 1, 0..3);
    prop_oneof![
        (0..POOL, arb_status()).prop_map(|(k, s)| Op::Status(k, s)),
        (0..POOL, ids()).prop_map(|(k, d)| Op::Deps(k, d)),
        (0..POOL, ids()).prop_map(|(k, d)| Op::Add(k, d)),
        (0..POOL).prop_map(Op::Remove),
        (0..POOL, "[a-z é\n\"/]{0,6}").prop_map(|(k, d)| Op::Desc(k, d)),
        (
            0..POOL,
            prop::option::of(arb_status()),
            prop::option::of(ids())
        )
            .prop_map(|(k, s, d)| Op::Write(k, s, d)),
    ]
}

/// A random valid list: tasks `t0…` with dependencies on earlier ones (acyclic, as taskhook
/// writes them), odd but valid content, written in one of three layouts.
fn arb_list() -> impl Strategy<Value = String> {
    let one = (
        arb_status(),
        prop::collection::vec(0..POOL, 0..3),
        any::<bool>(),
        any::<bool>(),
        "[a-z é\\\\\n\u{1}\"/]{0,8}",
    );
    (
        prop::collection::vec(one, 0..POOL),
        0..3usize,
        any::<bool>(),
    )
        .prop_map(|(specs, layout, no_version)| {
            let mut tasks = Vec::new();
            for (k, (status, deps, extra, offset, desc)) in specs.into_iter().enumerate() {
                let deps: Vec<String> = deps.into_iter().filter(|&d| d < k).map(pid).collect();
                let stamp = if offset {
                    "2026-01-01T01:00:00+01:00"
                } else {
                    "2026-01-01T00:00:00Z"
                };
                let mut t = json!({"id": pid(k), "description": desc, "status": status,
                    "created_at": stamp, "updated_at": stamp, "assignee": null,
                    "dependencies": deps});
                if extra {
                    t["x_extra"] = json!({"k": [1, 2.5, "s"], "n": null});
                    t["metadata"] = json!({"priority": "low", "custom_fields": {"origin": 3}});
                }
                tasks.push(t);
            }
            let mut doc = json!({"tasks": tasks, "last_updated": "2026-01-01T00:00:00Z",
                                 "x_root": {"keep": true}});
            if !no_version {
                doc["version"] = json!(1);
            }
            match layout {
                0 => String::from_utf8(to_pretty(&doc)).unwrap(),
                1 => serde_json::to_string(&doc).unwrap(),
                _ => {
                    let mut out = Vec::new();
                    let f = serde_json::ser::PrettyFormatter::with_indent(b"    ");
                    let mut ser = serde_json::Serializer::with_formatter(&mut out, f);
                    serde::Serialize::serialize(&doc, &mut ser).unwrap();
                    String::from_utf8(out).unwrap()
                }
            }
        })
}

fn fast_op(l: &mut List<'_>, op: &Op, now: &str) -> Result<()> {
    let path = Path::new("/l/tasks.json");
    match op {
        Op::Status(k, s) => {
            if let Some(i) = l.find(&pid(*k)) {
                l.edit(i, |m| m["status"] = json!(s));
            }
        }
        Op::Deps(k, d) => {
            if let Some(i) = l.find(&pid(*k)) {
                let deps: Vec<String> = d.iter().map(|&d| pid(d)).collect();
                l.edit(i, |m| m["dependencies"] = json!(deps));
            }
        }
        Op::Add(k, d) => {
            if l.find(&pid(*k)).is_none() {
                let mut t = new_task(&pid(*k), "new", "pending", now);
                t["dependencies"] = json!(d.iter().map(|&d| pid(d)).collect::<Vec<_>>());
                l.push(t);
            }
        }
        Op::Remove(k) => {
            l.remove(&HashSet::from([pid(*k).as_str()]));
        }
        Op::Desc(k, d) => {
            if let Some(i) = l.find(&pid(*k)) {
                l.edit(i, |m| m["description"] = json!(d));
            }
        }
        Op::Write(k, s, d) => {
            let params = WriteParams {
                id: Some(pid(*k)),
                description: Some("w".into()),
                status: s.map(str::to_string),
                dependencies: d.as_ref().map(|d| d.iter().map(|&x| pid(x)).collect()),
                ..Default::default()
            };
            apply_write(l, &params, &pid(*k), path, now)?;
        }
    }
    Ok(())
}

/// Errors compared by kind and text (the reference reports a schema refusal as `BadInput`).
fn outcome(r: Result<Run>) -> Seen {
    match r {
        Ok((b, u, rb)) => Ok((b.map(|b| String::from_utf8(b).unwrap()), u, rb)),
        Err(Error::SchemaInvalid { .. }) => Err("schema".into()),
        Err(Error::BadInput(_)) => Err("schema".into()),
        Err(e) => Err(e.one_line()),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// The fast pipeline writes exactly what the straightforward one writes, refuses exactly
    /// what it refuses, and reports the same unblocked and re-blocked tasks.
    #[test]
    fn fast_path_matches_the_reference(text in arb_list(), ops in prop::collection::vec(arb_op(), 1..5)) {
        let fast_result = fast(Some(&text), |l, now| {
            for op in &ops {
                fast_op(l, op, now)?;
            }
            Ok(())
        });
        let ref_result = reference::run(Some(&text), |d, now| {
            for op in &ops {
                reference_op(d, op, now)?;
            }
            Ok(())
        });
        prop_assert_eq!(outcome(fast_result), outcome(ref_result), "{}\n{:?}", text, ops);
    }

    /// A new list (no file yet) is built the same way too.
    #[test]
    fn fast_path_matches_the_reference_from_nothing(ops in prop::collection::vec(arb_op(), 1..6)) {
        let f = fast(None, |l, now| ops.iter().try_for_each(|op| fast_op(l, op, now)));
        let r = reference::run(None, |d, now| ops.iter().try_for_each(|op| reference_op(d, op, now)));
        prop_assert_eq!(outcome(f), outcome(r));
    }

    /// Whatever the fast parse accepts, the schema accepts (so skipping the schema for tasks it
    /// vouched for is safe).
    #[test]
    fn the_typed_view_is_never_looser_than_the_schema(t in arb_task_like()) {
        let raw = serde_json::to_string(&t).unwrap();
        if View::parse(&raw).is_some() {
            let doc = json!({"tasks": [t], "version": 2, "last_updated": NOW});
            prop_assert!(schema::check("claude-tasks", &doc).unwrap().is_ok(), "{}", raw);
        }
        let doc = json!({"tasks": [t.clone()], "version": 2, "last_updated": NOW});
        let text = serde_json::to_string(&doc).unwrap();
        if List::parse(&text).is_some() {
            prop_assert!(schema::check("claude-tasks", &doc).unwrap().is_ok(), "{}", text);
        }
    }
}

/// List-shaped documents, often slightly wrong at the root, with task-like items.
fn arb_doc_like() -> impl Strategy<Value = Value> {
    let version = prop_oneof![
        6 => Just(Some(json!(2))),
        2 => Just(None),
        1 => Just(Some(json!(0))),
        1 => Just(Some(json!(-1))),
        1 => Just(Some(json!(2.0))),
        1 => Just(Some(json!("2"))),
        1 => Just(Some(Value::Null)),
    ];
    let stamp = prop_oneof![
        6 => Just(Some(json!("2026-01-01T00:00:00Z"))),
        2 => Just(Some(json!("2026-01-01T00:00:00-03:30"))),
        1 => Just(None),
        1 => Just(Some(json!("yesterday"))),
        1 => Just(Some(json!(5))),
    ];
    let tasks = prop_oneof![
        8 => prop::collection::vec(arb_task_like(), 0..4).prop_map(Value::Array),
        1 => Just(json!({})),
        1 => Just(Value::Null),
    ];
    (tasks, version, stamp, any::<bool>()).prop_map(|(tasks, version, stamp, extra)| {
        let mut m = Map::new();
        m.insert("tasks".into(), tasks);
        if let Some(v) = version {
            m.insert("version".into(), v);
        }
        if let Some(t) = stamp {
            m.insert("last_updated".into(), t);
        }
        if extra {
            m.insert("x_root".into(), json!([1, {"a": null}]));
        }
        Value::Object(m)
    })
}

proptest! {
    /// Whatever the fast parse of a whole file accepts, the schema accepts (`validate` trusts
    /// it, and so does the write path).
    #[test]
    fn the_fast_parse_of_a_file_is_never_looser_than_the_schema(doc in arb_doc_like()) {
        for text in [serde_json::to_string(&doc).unwrap(), String::from_utf8(to_pretty(&doc)).unwrap()] {
            if List::parse(&text).is_some() {
                prop_assert!(schema::check("claude-tasks", &doc).unwrap().is_ok(), "{}", text);
            }
        }
    }
}

/// Task-shaped values, often slightly wrong: every field of the item schema with a valid
/// value, a wrong type, `null`, or missing.
fn arb_task_like() -> impl Strategy<Value = Value> {
    let odd = prop_oneof![
        Just(Value::Null),
        Just(json!(1)),
        Just(json!(1.5)),
        Just(json!(true)),
        Just(json!([])),
        Just(json!(["a"])),
        Just(json!({})),
        Just(json!("")),
        Just(json!("x")),
    ];
    let field = |good: Value| {
        prop_oneof![
            12 => Just(Some(good)),
            1 => odd.clone().prop_map(Some),
            1 => Just(None),
        ]
    };
    (
        field(json!("t1")),
        field(json!("desc")),
        field(json!("pending")),
        prop_oneof![
            12 => Just(Some(json!("2026-01-01T00:00:00Z"))),
            6 => Just(Some(json!("2026-01-01T00:00:00+01:00"))),
            1 => Just(Some(json!("2026-13-01T00:00:00Z"))),
            1 => Just(Some(json!("2026-01-01T00:00:00"))),
            1 => Just(Some(json!("2026-01-01T24:00:00Z"))),
            1 => Just(Some(json!("2026-01-01T00:00:00.Z"))),
            1 => Just(Some(json!("2026-01-01T00:00:00+24:00"))),
            1 => Just(None),
        ],
        field(json!("2026-01-01T00:00:00Z")),
        field(Value::Null),
        field(json!(["t0"])),
        field(json!("p")),
        field(json!({"priority": "high", "tags": ["a"], "source": "agent",
                     "custom_fields": {"origin": "TodoWrite", "session_id": 3}})),
        prop_oneof![
            20 => Just(None),
            1 => Just(Some(json!({"priority": "urgent"}))),
            1 => Just(Some(json!({"priority": {"high": null}}))),
            1 => Just(Some(json!({"tags": [1]}))),
            1 => Just(Some(json!({"custom_fields": ["x"]}))),
            1 => Just(Some(json!({"custom_fields": null}))),
            1 => Just(Some(json!({"source": null}))),
        ],
    )
        .prop_map(
            |(id, description, status, created, updated, assignee, deps, parent, meta, meta2)| {
                let mut m = Map::new();
                for (k, v) in [
                    ("id", id),
                    ("description", description),
                    ("status", status),
                    ("created_at", created),
                    ("updated_at", updated),
                    ("assignee", assignee),
                    ("dependencies", deps),
                    ("parent_id", parent),
                    ("metadata", meta2.or(meta)),
                ] {
                    if let Some(v) = v {
                        m.insert(k.into(), v);
                    }
                }
                Value::Object(m)
            },
        )
}
