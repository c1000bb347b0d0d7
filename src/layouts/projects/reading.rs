//! A task read from JSON (issue 23): [`Task`]'s own `Deserialize`, field by field (serde's
//! derive with a `flatten` of the unknown fields would first buffer every field), and its
//! strict reading ([`Strict`]), which refuses, as it reads, whatever the task schema
//! (`projects-tasks`, `$defs/task`) refuses. A valid tasks.json is then read without a JSON
//! tree per task and without a schema check per task; any refusal sends the read to the whole
//! document's check, which words it. `tests` holds the strict reading to the schema.

use std::cell::RefCell;
use std::collections::HashSet;
use std::fmt;
use std::rc::Rc;

use serde::de::{self, Deserializer, Error as _, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::{Map, Number, Value};

use super::model::{Priority, Status, Task};
use crate::store::entries::Strict;
use crate::store::strict::{
    at_least_zero, checked_record, integer, is_integer_at_least, is_timestamp, list, non_empty,
    number_at_least_zero, number_at_least_zero_or_null, refused, string, string_or_null, takes,
    timestamp,
};

impl<'de> Deserialize<'de> for Task {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Task, D::Error> {
        d.deserialize_map(TaskVisitor { strict: false })
    }
}

impl Strict for Task {
    fn strict<'de, D: Deserializer<'de>>(d: D) -> Result<Task, D::Error> {
        d.deserialize_map(TaskVisitor { strict: true })
    }
}

/// The schema's `level` values.
const LEVELS: [&str; 5] = ["epic", "story", "task", "subtask", "micro-task"];

/// The task's fields, by their names in the file.
enum Field {
    Id,
    Title,
    Level,
    Status,
    Priority,
    Phase,
    ParentId,
    Subtasks,
    Dependencies,
    EstimateMinutes,
    ActualMinutes,
    CreatedAt,
    StartedAt,
    CompletedAt,
    BlockedReason,
    StaleCount,
    ExternalIds,
    Description,
    Other(String),
}

impl Field {
    fn of(name: &str) -> Field {
        match name {
            "id" => Field::Id,
            "title" => Field::Title,
            "level" => Field::Level,
            "status" => Field::Status,
            "priority" => Field::Priority,
            "phase" => Field::Phase,
            "parent_id" => Field::ParentId,
            "subtasks" => Field::Subtasks,
            "dependencies" => Field::Dependencies,
            "estimate_minutes" => Field::EstimateMinutes,
            "actual_minutes" => Field::ActualMinutes,
            "created_at" => Field::CreatedAt,
            "started_at" => Field::StartedAt,
            "completed_at" => Field::CompletedAt,
            "blocked_reason" => Field::BlockedReason,
            "stale_count" => Field::StaleCount,
            "external_ids" => Field::ExternalIds,
            "description" => Field::Description,
            other => Field::Other(other.to_string()),
        }
    }

    /// Its bit in the set of fields seen (an unknown field has none).
    fn bit(&self) -> u32 {
        let n = match self {
            Field::Id => 0,
            Field::Title => 1,
            Field::Level => 2,
            Field::Status => 3,
            Field::Priority => 4,
            Field::Phase => 5,
            Field::ParentId => 6,
            Field::Subtasks => 7,
            Field::Dependencies => 8,
            Field::EstimateMinutes => 9,
            Field::ActualMinutes => 10,
            Field::CreatedAt => 11,
            Field::StartedAt => 12,
            Field::CompletedAt => 13,
            Field::BlockedReason => 14,
            Field::StaleCount => 15,
            Field::ExternalIds => 16,
            Field::Description => 17,
            Field::Other(_) => return 0,
        };
        1 << n
    }
}

impl<'de> Deserialize<'de> for Field {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Field, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Field;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a field name")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Field, E> {
                Ok(Field::of(v))
            }
        }
        d.deserialize_identifier(V)
    }
}

struct TaskVisitor {
    /// Refuse what the task schema refuses.
    strict: bool,
}

impl<'de> Visitor<'de> for TaskVisitor {
    type Value = Task;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a task object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Task, A::Error> {
        let strict = self.strict;
        let mut t = Task::default();
        let (mut id, mut status) = (None, None);
        let mut rest = Map::new();
        let mut seen = 0u32;
        while let Some(field) = m.next_key::<Field>()? {
            let bit = field.bit();
            if seen & bit != 0 {
                return Err(A::Error::custom("a task field given twice"));
            }
            seen |= bit;
            match field {
                Field::Id => {
                    let v: String = m.next_value()?;
                    if strict && v.is_empty() {
                        return Err(refused("id"));
                    }
                    id = Some(v);
                }
                Field::Status => status = Some(m.next_value::<Status>()?),
                Field::Title => t.title = optional(&mut m, strict, "title")?,
                Field::Phase => t.phase = optional(&mut m, strict, "phase")?.map(name),
                Field::Level => {
                    t.level = optional::<String, _>(&mut m, strict, "level")?.map(name);
                    if strict && !t.level.as_deref().is_some_and(|l| LEVELS.contains(&l)) {
                        return Err(refused("level"));
                    }
                }
                Field::Priority => {
                    t.priority = match m.next_value::<Value>()? {
                        Value::Number(n) => Some(Priority::Rank(n)),
                        Value::String(s) => Some(Priority::Label(name(s))),
                        Value::Null if !strict => None,
                        _ => return Err(refused("priority")),
                    }
                }
                Field::ParentId => {
                    t.parent_id = Some(m.next_value::<Option<String>>()?.map(name));
                }
                Field::Subtasks => t.subtasks = ids(&mut m, strict, "subtasks")?,
                Field::Dependencies => t.dependencies = ids(&mut m, strict, "dependencies")?,
                Field::EstimateMinutes => {
                    t.estimate_minutes = optional(&mut m, strict, "estimate_minutes")?;
                    if strict && !t.estimate_minutes.as_ref().is_some_and(at_least_zero) {
                        return Err(refused("estimate_minutes"));
                    }
                }
                Field::ActualMinutes => {
                    let v: Option<Number> = m.next_value()?;
                    if strict && v.as_ref().is_some_and(|n| !at_least_zero(n)) {
                        return Err(refused("actual_minutes"));
                    }
                    t.actual_minutes = Some(v);
                }
                Field::CreatedAt => {
                    t.created_at = optional(&mut m, strict, "created_at")?;
                    if strict && !t.created_at.as_deref().is_some_and(is_timestamp) {
                        return Err(refused("created_at"));
                    }
                }
                Field::StartedAt => t.started_at = Some(nullable_time(&mut m, strict)?),
                Field::CompletedAt => t.completed_at = Some(nullable_time(&mut m, strict)?),
                Field::BlockedReason => t.blocked_reason = Some(m.next_value()?),
                Field::StaleCount => {
                    t.stale_count = optional(&mut m, strict, "stale_count")?;
                    if strict
                        && !t
                            .stale_count
                            .as_ref()
                            .is_some_and(|n| is_integer_at_least(n, 0))
                    {
                        return Err(refused("stale_count"));
                    }
                }
                Field::ExternalIds => {
                    t.external_ids =
                        optional::<Map<String, Value>, _>(&mut m, strict, "ids")?.map(Box::new);
                    if strict
                        && !t
                            .external_ids
                            .as_ref()
                            .is_some_and(|ids| ids.values().all(Value::is_string))
                    {
                        return Err(refused("external_ids"));
                    }
                }
                Field::Description => t.description = Some(m.next_value()?),
                Field::Other(name) => {
                    // The last of a name given twice holds, where the first stood.
                    let v = m.next_value::<Value>()?;
                    rest.insert(name, v);
                }
            }
        }
        t.id = id.ok_or_else(|| A::Error::missing_field("id"))?;
        t.status = status.ok_or_else(|| A::Error::missing_field("status"))?;
        t.rest = rest.into();
        Ok(t)
    }
}

/// An optional field's value: `null` is none, except in the strict reading, where the schema
/// refuses it.
fn optional<'de, T: Deserialize<'de>, A: MapAccess<'de>>(
    m: &mut A,
    strict: bool,
    field: &str,
) -> Result<Option<T>, A::Error> {
    let v = m.next_value::<Option<T>>()?;
    if strict && v.is_none() {
        return Err(refused(field));
    }
    Ok(v)
}

thread_local! {
    /// The values read so far while an [`Interning`] is held.
    static NAMES: RefCell<Option<HashSet<Rc<str>>>> = const { RefCell::new(None) };
}

/// While one is held, the values many tasks share (`level`, `phase`, `parent_id`, a
/// `priority` label) are read
/// into one copy each (issue 23: a list of 10,000 tasks held 20,000 copies of a few levels
/// and phases, and one copy of a parent's id per subtask). The first one held ends it.
pub struct Interning {
    started: bool,
}

impl Interning {
    pub fn start() -> Interning {
        let started = NAMES.with(|n| {
            let mut n = n.borrow_mut();
            n.is_none().then(|| *n = Some(HashSet::new())).is_some()
        });
        Interning { started }
    }
}

impl Drop for Interning {
    fn drop(&mut self) {
        if self.started {
            NAMES.with(|n| *n.borrow_mut() = None);
        }
    }
}

/// `s` as a shared value: the copy read before when an [`Interning`] is held.
fn name(s: String) -> Rc<str> {
    NAMES.with(|n| match n.borrow_mut().as_mut() {
        Some(seen) => match seen.get(s.as_str()) {
            Some(known) => known.clone(),
            None => {
                let new: Rc<str> = Rc::from(s);
                seen.insert(new.clone());
                new
            }
        },
        None => Rc::from(s),
    })
}

/// A list of ids; in the strict reading, none of them empty.
fn ids<'de, A: MapAccess<'de>>(
    m: &mut A,
    strict: bool,
    field: &str,
) -> Result<Option<Vec<String>>, A::Error> {
    let mut v = optional::<Vec<String>, _>(m, strict, field)?;
    if strict && v.iter().flatten().any(String::is_empty) {
        return Err(refused(field));
    }
    // A list read from JSON grows by doubling from four (no length is known ahead): one id
    // kept in room for four.
    v.iter_mut().for_each(Vec::shrink_to_fit);
    Ok(v)
}

/// A timestamp or `null`; in the strict reading, a timestamp of the schema's form.
fn nullable_time<'de, A: MapAccess<'de>>(
    m: &mut A,
    strict: bool,
) -> Result<Option<String>, A::Error> {
    let v: Option<String> = m.next_value()?;
    if strict && v.as_deref().is_some_and(|s| !is_timestamp(s)) {
        return Err(refused("a timestamp"));
    }
    Ok(v)
}

/// `projects-tasks`' own check ([`crate::store::schema::Native`]): each task read strictly.
pub fn list_is_valid(doc: &Value) -> bool {
    doc.get("tasks")
        .and_then(Value::as_array)
        .is_some_and(|tasks| tasks.iter().all(takes::<Task>))
}

checked_record! {
    /// project.json (`projects-project`).
    ProjectCheck,
    ["id", "name", "status", "phase", "created_at", "updated_at", "current_task"],
    required: ["id"],
    |m, name| {
        match name {
            "id" => _ = non_empty(m, name)?,
            "created_at" | "updated_at" => _ = timestamp(m, name)?,
            "current_task" => _ = string_or_null(m)?,
            // name, status, phase
            _ => _ = string(m)?,
        }
        Ok(())
    }
}

/// `projects-project`'s own check ([`crate::store::schema::Native`]).
pub fn project_is_valid(doc: &Value) -> bool {
    takes::<ProjectCheck>(doc)
}

checked_record! {
    /// velocity.json (`projects-velocity`).
    VelocityCheck,
    [
        "tasks_completed", "total_estimate_minutes", "total_actual_minutes", "ratio",
        "window_size", "window_ratio", "window", "updated_at",
    ],
    required: [],
    |m, name| {
        match name {
            "tasks_completed" => _ = integer(m, 0, name)?,
            "window_size" => _ = integer(m, 1, name)?,
            "ratio" | "window_ratio" => _ = number_at_least_zero_or_null(m, name)?,
            "window" => _ = list::<CompletionCheck, _>(m)?,
            "updated_at" => _ = timestamp(m, name)?,
            // The totals.
            _ => _ = number_at_least_zero(m, name)?,
        }
        Ok(())
    }
}

checked_record! {
    /// One completion in velocity.json's window (`$defs/completion`).
    CompletionCheck,
    ["task_id", "estimate_minutes", "actual_minutes", "completed_at"],
    required: ["task_id", "estimate_minutes", "actual_minutes"],
    |m, name| {
        match name {
            "task_id" => _ = non_empty(m, name)?,
            "completed_at" => _ = timestamp(m, name)?,
            // The minutes.
            _ => _ = number_at_least_zero(m, name)?,
        }
        Ok(())
    }
}

/// `projects-velocity`'s own check ([`crate::store::schema::Native`]).
pub fn velocity_is_valid(doc: &Value) -> bool {
    takes::<VelocityCheck>(doc)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::schema;
    use crate::store::schema::tests::native_is_the_schema;
    use crate::store::strict::tests::{
        any_value, is_the_schema_on_the_head, object, pick, read, sorted, stamp, timestamp,
    };
    use proptest::prelude::*;
    use serde_json::json;

    fn strict(v: &Value) -> Option<Task> {
        read(v)
    }

    /// While an `Interning` is held, equal shared values are one copy; without one, or once it
    /// ends, each task has its own. Id lists keep no room beyond their ids.
    #[test]
    fn shared_values_are_one_copy_while_interning() {
        let task = |id: &str| {
            json!({"id": id, "status": "PENDING", "level": "task", "phase": "p1",
                "priority": "high", "parent_id": "S1", "dependencies": ["A"],
                "subtasks": ["B", "C", "D", "E", "F"]})
        };
        let same = |a: &Task, b: &Task| {
            let label = |t: &Task| match &t.priority {
                Some(Priority::Label(l)) => l.clone(),
                _ => Rc::from(""),
            };
            [
                Rc::ptr_eq(a.level.as_ref().unwrap(), b.level.as_ref().unwrap()),
                Rc::ptr_eq(a.phase.as_ref().unwrap(), b.phase.as_ref().unwrap()),
                Rc::ptr_eq(&label(a), &label(b)),
                Rc::ptr_eq(
                    a.parent_id.as_ref().unwrap().as_ref().unwrap(),
                    b.parent_id.as_ref().unwrap().as_ref().unwrap(),
                ),
            ]
        };
        let (a, b) = {
            let _interning = Interning::start();
            let nested = Interning::start();
            drop(nested);
            (strict(&task("T1")).unwrap(), strict(&task("T2")).unwrap())
        };
        assert_eq!(same(&a, &b), [true; 4], "one copy each");
        let c = strict(&task("T3")).unwrap();
        assert_eq!(same(&a, &c), [false; 4], "the interning ended");
        assert_eq!(
            (a.level.as_deref(), a.parent_id()),
            (Some("task"), Some("S1"))
        );
        for ids in [&c.dependencies, &c.subtasks] {
            let ids = ids.as_ref().unwrap();
            assert_eq!(ids.capacity(), ids.len());
        }
    }

    /// What one field of a task may hold, valid or not: anything, and the task schema's own
    /// words.
    fn field_value() -> impl Strategy<Value = Value> {
        prop_oneof![
            4 => any_value(),
            1 => prop::sample::select(vec![
                json!("PENDING"),
                json!("COMPLETE"),
                json!("epic"),
                json!("micro-task"),
                json!("Micro-task"),
                json!({"JIRA": 1}),
            ]),
        ]
    }

    /// A value the schema takes for the field `name` (any value for an unknown field).
    fn valid_for(name: &'static str) -> BoxedStrategy<Value> {
        let pick = |vs: Vec<Value>| prop::sample::select(vs).boxed();
        match name {
            "id" | "title" | "phase" => pick(vec![json!("T1-2"), json!("x")]),
            "status" => pick(vec![json!("PENDING"), json!("COMPLETE")]),
            "level" => pick(vec![json!("epic"), json!("micro-task")]),
            "priority" => pick(vec![json!("high"), json!(1), json!(-2.5)]),
            "parent_id" | "blocked_reason" => pick(vec![json!("T1"), Value::Null]),
            "subtasks" | "dependencies" => pick(vec![json!([]), json!(["A", "B"])]),
            "estimate_minutes" => pick(vec![json!(0), json!(2.5), json!(30)]),
            "actual_minutes" => pick(vec![json!(0), json!(2.5), Value::Null]),
            "stale_count" => pick(vec![json!(0), json!(2), json!(2.0)]),
            "created_at" => pick(vec![json!("2026-01-05T08:00:00Z")]),
            "started_at" | "completed_at" => {
                pick(vec![json!("2026-01-05T08:00:00.5Z"), Value::Null])
            }
            "external_ids" => pick(vec![json!({}), json!({"JIRA": "P-1"})]),
            _ => field_value().boxed(),
        }
    }

    /// A task-shaped object: some of the schema's fields and unknown ones, in any order, each
    /// valid for its field or (less often) anything.
    fn task() -> impl Strategy<Value = Value> {
        let names = prop::sample::select(vec![
            "id",
            "status",
            "title",
            "level",
            "priority",
            "phase",
            "parent_id",
            "subtasks",
            "dependencies",
            "estimate_minutes",
            "actual_minutes",
            "created_at",
            "started_at",
            "completed_at",
            "blocked_reason",
            "stale_count",
            "external_ids",
            "description",
            "notes",
            "x-extra",
        ]);
        let field = names.prop_flat_map(|name| {
            prop_oneof![3 => valid_for(name), 1 => field_value()].prop_map(move |v| (name, v))
        });
        (prop::collection::vec(field, 0..8), any::<bool>()).prop_map(|(fields, base)| {
            let mut m = Map::new();
            if base {
                m.insert("id".into(), json!("T1"));
                m.insert("status".into(), json!("PENDING"));
            }
            for (k, v) in fields {
                m.insert(k.to_string(), v);
            }
            Value::Object(m)
        })
    }

    fn project() -> impl Strategy<Value = Value> {
        let text = || pick(vec![json!("web"), json!(""), json!(1), Value::Null]);
        object(
            vec![
                ("id", text()),
                ("name", text()),
                ("status", text()),
                ("phase", text()),
                ("created_at", stamp()),
                ("updated_at", stamp()),
                ("current_task", text()),
            ],
            vec![("id", json!("web"))],
            5,
        )
    }

    fn velocity() -> impl Strategy<Value = Value> {
        let minutes = || {
            pick(vec![
                json!(0),
                json!(2.5),
                json!(-1),
                json!("3"),
                Value::Null,
            ])
        };
        let completion = object(
            vec![
                ("task_id", pick(vec![json!("T1"), json!(""), json!(1)])),
                ("estimate_minutes", minutes()),
                ("actual_minutes", minutes()),
                ("completed_at", stamp()),
            ],
            vec![
                ("task_id", json!("T2")),
                ("estimate_minutes", json!(30)),
                ("actual_minutes", json!(45.5)),
            ],
            3,
        );
        object(
            vec![
                (
                    "tasks_completed",
                    pick(vec![json!(3), json!(0), json!(2.0), json!(-1), json!(1.5)]),
                ),
                ("total_estimate_minutes", minutes()),
                ("total_actual_minutes", minutes()),
                ("ratio", minutes()),
                (
                    "window_size",
                    pick(vec![json!(10), json!(0), json!(1), json!(2.0)]),
                ),
                ("window_ratio", minutes()),
                (
                    "window",
                    prop::collection::vec(completion, 0..3)
                        .prop_map(Value::from)
                        .boxed(),
                ),
                ("updated_at", stamp()),
            ],
            vec![],
            6,
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]

        /// The strict reading takes a task exactly when the task schema does, and gives the
        /// task the lenient reading of the same JSON gives, which writes back the same JSON.
        #[test]
        fn the_strict_reading_is_the_schema(v in task()) {
            let valid = schema::entry_is_valid("projects-tasks", "tasks", &v).unwrap();
            let got = strict(&v);
            prop_assert_eq!(got.is_some(), valid, "{}", v);
            if let Some(t) = got {
                let lenient: Task = serde_json::from_value(v.clone()).unwrap();
                prop_assert_eq!(&t, &lenient);
                prop_assert_eq!(sorted(serde_json::to_value(&t).unwrap()), sorted(v));
            }
        }

        /// The list's own check of the rest of the document (its tasks emptied) is the
        /// schema's.
        #[test]
        fn the_head_check_is_the_schema(
            tasks in prop::sample::select(vec![None, Some(json!([])), Some(json!({}))]),
            other in any_value(),
        ) {
            let mut head = json!({"notes": other});
            if let Some(t) = tasks {
                head["tasks"] = t;
            }
            is_the_schema_on_the_head("projects-tasks", &["tasks"], head)?;
        }

        /// The list's own check is the schema's.
        #[test]
        fn the_list_check_is_the_schema(tasks in prop::collection::vec(task(), 0..3)) {
            native_is_the_schema("projects-tasks", &json!({"tasks": tasks}))?;
        }

        /// project.json's own check is the schema's.
        #[test]
        fn the_project_check_is_the_schema(v in project()) {
            native_is_the_schema("projects-project", &v)?;
        }

        /// velocity.json's own check is the schema's.
        #[test]
        fn the_velocity_check_is_the_schema(v in velocity()) {
            native_is_the_schema("projects-velocity", &v)?;
        }

        /// The timestamp check is the schema's pattern.
        #[test]
        fn the_timestamp_is_the_pattern(s in timestamp()) {
            let v = json!({"id": "A", "status": "PENDING", "created_at": s});
            let valid = schema::entry_is_valid("projects-tasks", "tasks", &v).unwrap();
            prop_assert_eq!(is_timestamp(&s), valid, "{}", s);
        }
    }

    /// A field given twice is not read by either reading (the whole document's JSON keeps the
    /// last, and is read from there); unknown fields keep their order.
    #[test]
    fn a_field_given_twice_goes_to_the_whole_reading() {
        let twice = br#"{"id": "A", "status": "PENDING", "id": "B"}"#;
        let mut de = serde_json::Deserializer::from_slice(twice);
        assert!(Task::strict(&mut de).is_err());
        assert!(serde_json::from_slice::<Task>(twice).is_err());
        let t: Task =
            serde_json::from_slice(br#"{"z": 1, "id": "A", "a": 2, "status": "PENDING", "z": 3}"#)
                .unwrap();
        assert_eq!(t.rest.keys().collect::<Vec<_>>(), ["z", "a"]);
        assert_eq!(t.rest["z"], 3);
    }
}
