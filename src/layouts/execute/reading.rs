//! A task read strictly (issue 23): straight from execute-state.json's bytes into [`Task`] and
//! its records, refusing as it reads whatever the task schema (`execute-state`, `$defs/task`)
//! refuses ([`crate::store::entries::Strict`], through [`Record`]). A valid state is then read
//! without a JSON tree per task and without a schema check per task; anything refused sends the
//! read to the whole document's check, which words it. The lenient reading stays serde's
//! derive; `tests` holds this one to the schema and to the derive.

use serde::de::{Error as _, MapAccess};
use serde_json::{Map, Value};

use super::model::{
    int, CommitRecord, ErrorRecord, Feedback, Loose, QueueEntry, ResetRecord, Slot, Subagent, Task,
};
use crate::store::strict::checked_record;
use crate::store::strict::{
    any, any_array, any_object, integer, integer_or_null, list, name_in, non_empty,
    number_at_least_zero, one_of, other, record, string, string_or_null, takes, timestamp,
    timestamp_or_null, values_of, Record,
};

/// A count of at least `min` (`"type": "integer", "minimum": min`), as taskhook reads one.
fn count<'de, A: MapAccess<'de>>(m: &mut A, min: u64, field: &str) -> Result<u64, A::Error> {
    int::count(&integer(m, min, field)?)
}

/// A field the schema does not constrain, kept as found (boxed, as the model keeps it).
fn kept<'de, A: MapAccess<'de>>(m: &mut A) -> Result<Slot<Box<Value>>, A::Error> {
    m.next_value()
}

impl Record for Task {
    const NAMES: &'static [&'static str] = &[
        "status",
        "attempts",
        "worktree_path",
        "branch",
        "commits",
        "merged_at",
        "errors",
        "retry_feedback",
        "layer",
        "batch",
        "subagent",
        "resets",
        "verification",
        "title",
        "name",
        "description",
        "acceptance_criteria",
        "files",
        "dependencies",
        "worktree",
        "started_at",
        "completed_at",
    ];
    const REQUIRED: &'static [&'static str] = &["status"];

    fn field<'de, A: MapAccess<'de>>(
        &mut self,
        m: &mut A,
        name: &'static str,
    ) -> Result<(), A::Error> {
        match name {
            "status" => self.status = Some(one_of(m, name)?),
            "attempts" => self.attempts = Some(count(m, 0, name)?),
            "worktree_path" => self.worktree_path = Slot::from(string_or_null(m)?),
            "branch" => self.branch = Slot::from(string_or_null(m)?),
            "commits" => self.commits = Some(list(m)?),
            "merged_at" => self.merged_at = Slot::from(timestamp_or_null(m, name)?),
            "errors" => self.errors = Some(list(m)?),
            "retry_feedback" => self.retry_feedback = Some(list(m)?),
            "layer" => self.layer = Some(non_empty(m, name)?),
            "batch" => self.batch = Some(count(m, 1, name)?),
            "subagent" => self.subagent = Some(Box::new(record(m)?)),
            "resets" => self.resets = Some(list(m)?),
            "verification" => {
                // Not the schema's to judge: taskhook's record when it has that shape, else
                // kept as found (read as the derive reads it).
                self.verification = match any(m)? {
                    Value::Null => Slot::Null,
                    v => Slot::Is(Box::new(
                        serde_json::from_value::<Loose<_>>(v).map_err(A::Error::custom)?,
                    )),
                };
            }
            "title" => self.title = kept(m)?,
            "name" => self.name = kept(m)?,
            "description" => self.description = kept(m)?,
            "acceptance_criteria" => self.acceptance_criteria = kept(m)?,
            "files" => self.files = kept(m)?,
            "dependencies" => self.dependencies = kept(m)?,
            "worktree" => self.worktree = kept(m)?,
            "started_at" => self.started_at = kept(m)?,
            "completed_at" => self.completed_at = kept(m)?,
            _ => other(m, &mut self.rest, name.to_string())?,
        }
        Ok(())
    }

    fn rest(&mut self) -> &mut Map<String, Value> {
        &mut self.rest
    }
}

impl Record for CommitRecord {
    const NAMES: &'static [&'static str] = &["hash", "type", "attempt", "created_at"];
    const REQUIRED: &'static [&'static str] = &["hash", "type", "attempt"];

    fn field<'de, A: MapAccess<'de>>(
        &mut self,
        m: &mut A,
        name: &'static str,
    ) -> Result<(), A::Error> {
        match name {
            "hash" => self.hash = non_empty(m, name)?,
            "type" => self.kind = Some(string(m)?),
            "attempt" => self.attempt = Some(count(m, 1, name)?),
            "created_at" => self.created_at = Some(timestamp(m, name)?),
            _ => other(m, &mut self.rest, name.to_string())?,
        }
        Ok(())
    }

    fn rest(&mut self) -> &mut Map<String, Value> {
        &mut self.rest
    }
}

impl Record for ErrorRecord {
    const NAMES: &'static [&'static str] = &["attempt", "message", "details", "timestamp"];
    const REQUIRED: &'static [&'static str] = &["attempt", "message"];

    fn field<'de, A: MapAccess<'de>>(
        &mut self,
        m: &mut A,
        name: &'static str,
    ) -> Result<(), A::Error> {
        match name {
            "attempt" => self.attempt = count(m, 1, name)?,
            "message" => self.message = string(m)?,
            "details" => self.details = Some(string(m)?),
            "timestamp" => self.timestamp = Some(timestamp(m, name)?),
            _ => other(m, &mut self.rest, name.to_string())?,
        }
        Ok(())
    }

    fn rest(&mut self) -> &mut Map<String, Value> {
        &mut self.rest
    }
}

impl Record for Feedback {
    const NAMES: &'static [&'static str] = &["attempt", "feedback"];
    const REQUIRED: &'static [&'static str] = &["attempt", "feedback"];

    fn field<'de, A: MapAccess<'de>>(
        &mut self,
        m: &mut A,
        name: &'static str,
    ) -> Result<(), A::Error> {
        match name {
            "attempt" => self.attempt = count(m, 1, name)?,
            "feedback" => self.feedback = string(m)?,
            _ => other(m, &mut self.rest, name.to_string())?,
        }
        Ok(())
    }

    fn rest(&mut self) -> &mut Map<String, Value> {
        &mut self.rest
    }
}

impl Record for Subagent {
    const NAMES: &'static [&'static str] = &["agent_id", "blocks"];
    const REQUIRED: &'static [&'static str] = &["blocks"];

    fn field<'de, A: MapAccess<'de>>(
        &mut self,
        m: &mut A,
        name: &'static str,
    ) -> Result<(), A::Error> {
        match name {
            "agent_id" => self.agent_id = Slot::from(string_or_null(m)?),
            "blocks" => self.blocks = count(m, 0, name)?,
            _ => other(m, &mut self.rest, name.to_string())?,
        }
        Ok(())
    }

    fn rest(&mut self) -> &mut Map<String, Value> {
        &mut self.rest
    }
}

impl Record for ResetRecord {
    const NAMES: &'static [&'static str] = &[
        "reset_at",
        "status",
        "attempts",
        "errors",
        "retry_feedback",
        "merged_at",
        "batch",
    ];
    const REQUIRED: &'static [&'static str] = &["reset_at"];

    fn field<'de, A: MapAccess<'de>>(
        &mut self,
        m: &mut A,
        name: &'static str,
    ) -> Result<(), A::Error> {
        match name {
            "reset_at" => self.reset_at = timestamp(m, name)?,
            "status" => self.status = Some(one_of(m, name)?),
            "attempts" => self.attempts = Some(count(m, 0, name)?),
            "errors" => self.errors = Some(list(m)?),
            "retry_feedback" => self.retry_feedback = Some(list(m)?),
            "merged_at" => self.merged_at = Slot::from(timestamp_or_null(m, name)?),
            "batch" => self.batch = Some(count(m, 1, name)?),
            _ => other(m, &mut self.rest, name.to_string())?,
        }
        Ok(())
    }

    fn rest(&mut self) -> &mut Map<String, Value> {
        &mut self.rest
    }
}

/// A merge-queue priority as the model reads one (any whole number in range).
#[derive(serde::Deserialize)]
struct Priority(#[serde(deserialize_with = "int::i64")] i64);

impl Record for QueueEntry {
    const NAMES: &'static [&'static str] = &["task_id", "priority", "status"];
    const REQUIRED: &'static [&'static str] = &["task_id", "priority", "status"];

    fn field<'de, A: MapAccess<'de>>(
        &mut self,
        m: &mut A,
        name: &'static str,
    ) -> Result<(), A::Error> {
        match name {
            "task_id" => self.task_id = non_empty(m, name)?,
            // Any integer (`"type": "integer"`), as the model takes one.
            "priority" => self.priority = m.next_value::<Priority>()?.0,
            "status" => self.status = one_of(m, name)?,
            _ => other(m, &mut self.rest, name.to_string())?,
        }
        Ok(())
    }

    fn rest(&mut self) -> &mut Map<String, Value> {
        &mut self.rest
    }
}

checked_record! {
    /// The state but its tasks and merge queue (whose entries the readings above check), as
    /// `execute-state` checks it.
    HeadCheck,
    [
        "schema_version", "prd_slug", "project_path", "worktree_dir", "tasks_path", "status",
        "current_layer", "current_batch", "started_at", "updated_at", "completed_at", "layers",
        "tasks", "merge_queue", "metrics",
    ],
    required: ["schema_version", "status", "tasks"],
    |m, name| {
        match name {
            "schema_version" => _ = name_in(m, &["2.0"], name)?,
            "status" => _ = name_in(
                m,
                &["pending", "in_progress", "completed", "stopped", "abandoned"],
                name,
            )?,
            "current_layer" => _ = string_or_null(m)?,
            "current_batch" => _ = integer_or_null(m, 0, name)?,
            "started_at" | "updated_at" | "completed_at" => _ = timestamp_or_null(m, name)?,
            "layers" => values_of::<LayerCheck, _>(m)?,
            "tasks" => any_object(m)?,
            "merge_queue" => any_array(m)?,
            "metrics" => _ = record::<MetricsCheck, _>(m)?,
            // prd_slug, project_path, worktree_dir, tasks_path
            _ => _ = string(m)?,
        }
        Ok(())
    }
}

checked_record! {
    /// A layer (`$defs/layer`).
    LayerCheck,
    [
        "status", "tasks_total", "tasks_completed", "tasks_failed", "started_at",
        "completed_at",
    ],
    required: ["status"],
    |m, name| {
        match name {
            "status" => _ = name_in(m, &["pending", "in_progress", "completed"], name)?,
            "started_at" | "completed_at" => _ = timestamp_or_null(m, name)?,
            // The counts.
            _ => _ = integer(m, 0, name)?,
        }
        Ok(())
    }
}

checked_record! {
    /// The run's metrics (`$defs/metrics`).
    MetricsCheck,
    [
        "total_tasks", "completed_tasks", "failed_tasks", "total_attempts", "total_commits",
        "elapsed_time_seconds",
    ],
    required: [],
    |m, name| {
        match name {
            "elapsed_time_seconds" => _ = number_at_least_zero(m, name)?,
            // The counts.
            _ => _ = integer(m, 0, name)?,
        }
        Ok(())
    }
}

/// `execute-state`'s own check ([`crate::store::schema::Native`]): the rest of the state, each
/// task and each entry of the merge queue read strictly (a task the model cannot type is
/// refused here, and left to the schema's validator).
pub fn state_is_valid(doc: &Value) -> bool {
    takes::<HeadCheck>(doc)
        && doc["tasks"]
            .as_object()
            .is_some_and(|tasks| tasks.values().all(takes::<Task>))
        && doc.get("merge_queue").is_none_or(|q| {
            q.as_array()
                .is_some_and(|q| q.iter().all(takes::<QueueEntry>))
        })
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::{json, Value};

    use super::*;
    use crate::store::entries::Strict;
    use crate::store::schema::tests::native_is_the_schema_where;
    use crate::store::strict::tests::{
        any_value, is_the_schema_and_the_derive, is_the_schema_on_the_head, object, pick, stamp,
        stamp_or_null,
    };

    fn counts(min: u64) -> BoxedStrategy<Value> {
        let mut vs = vec![json!(2), json!(2.0), json!(7)];
        if min == 0 {
            vs.push(json!(0));
        }
        pick(vs)
    }

    fn some_of(item: impl Strategy<Value = Value> + 'static) -> BoxedStrategy<Value> {
        prop::collection::vec(item, 0..3)
            .prop_map(Value::Array)
            .boxed()
    }

    fn commit() -> impl Strategy<Value = Value> {
        object(
            vec![
                ("hash", pick(vec![json!("711bf04"), json!("a")])),
                ("type", pick(vec![json!("implementation"), json!("fix")])),
                ("attempt", counts(1)),
                ("created_at", stamp()),
            ],
            vec![
                ("hash", json!("711bf04")),
                ("type", json!("fix")),
                ("attempt", json!(1)),
            ],
            3,
        )
    }

    fn error() -> impl Strategy<Value = Value> {
        object(
            vec![
                ("attempt", counts(1)),
                ("message", pick(vec![json!("tests failed"), json!("")])),
                ("details", pick(vec![json!("x")])),
                ("timestamp", stamp()),
            ],
            vec![("attempt", json!(1)), ("message", json!("m"))],
            3,
        )
    }

    fn feedback() -> impl Strategy<Value = Value> {
        object(
            vec![
                ("attempt", counts(1)),
                ("feedback", pick(vec![json!("fix it")])),
            ],
            vec![("attempt", json!(1)), ("feedback", json!("f"))],
            2,
        )
    }

    fn statuses() -> BoxedStrategy<Value> {
        pick(vec![
            json!("pending"),
            json!("completed"),
            json!("failed"),
            json!("in_progress"),
        ])
    }

    fn task() -> impl Strategy<Value = Value> {
        let subagent = object(
            vec![
                ("agent_id", pick(vec![json!("a1"), Value::Null])),
                ("blocks", counts(0)),
            ],
            vec![("blocks", json!(0))],
            2,
        );
        let reset = object(
            vec![
                ("reset_at", stamp()),
                ("status", statuses()),
                ("attempts", counts(0)),
                ("errors", some_of(error())),
                ("retry_feedback", some_of(feedback())),
                ("merged_at", stamp_or_null()),
                ("batch", counts(1)),
            ],
            vec![("reset_at", json!("2026-01-05T08:00:00Z"))],
            4,
        );
        object(
            vec![
                ("status", statuses()),
                ("attempts", counts(0)),
                ("worktree_path", pick(vec![json!("/w/L2-001"), Value::Null])),
                ("branch", pick(vec![json!("b"), Value::Null])),
                ("commits", some_of(commit())),
                ("merged_at", stamp_or_null()),
                ("errors", some_of(error())),
                ("retry_feedback", some_of(feedback())),
                ("layer", pick(vec![json!("2-backend"), json!("")])),
                ("batch", counts(1)),
                ("subagent", subagent.boxed()),
                ("resets", some_of(reset)),
                (
                    "verification",
                    pick(vec![
                        json!({"attempt": 1, "asked": "a1", "launched": true}),
                        json!({"asked": 7}),
                        json!("text"),
                        Value::Null,
                    ]),
                ),
                ("title", any_value().boxed()),
                ("description", any_value().boxed()),
                ("files", any_value().boxed()),
                ("started_at", any_value().boxed()),
            ],
            vec![("status", json!("pending"))],
            8,
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]

        /// The strict reading takes a task exactly when the task schema does and the derive
        /// can type it, and gives the task the derive gives.
        #[test]
        fn the_strict_reading_is_the_schema_and_the_derive(v in task()) {
            is_the_schema_and_the_derive::<Task>("execute-state", "tasks", &v)?;
        }
    }

    fn queue_entry() -> impl Strategy<Value = Value> {
        object(
            vec![
                ("task_id", pick(vec![json!("L2-001"), json!(""), json!(7)])),
                (
                    "priority",
                    pick(vec![
                        json!(1),
                        json!(-3),
                        json!(2.0),
                        json!(2.5),
                        json!("1"),
                        json!(1e30),
                    ]),
                ),
                (
                    "status",
                    pick(vec![
                        json!("pending"),
                        json!("merged"),
                        json!("done"),
                        Value::Null,
                    ]),
                ),
            ],
            vec![
                ("task_id", json!("L1-001")),
                ("priority", json!(1)),
                ("status", json!("ready")),
            ],
            3,
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// The merge queue's entries too: read strictly exactly when the entry schema takes
        /// them and the derive can type them, as the derive types them.
        #[test]
        fn a_queue_entry_read_strictly_is_the_schema_and_the_derive(v in queue_entry()) {
            is_the_schema_and_the_derive::<QueueEntry>("execute-state", "merge_queue", &v)?;
        }
    }

    /// A state with its tasks and merge queue emptied, near the edges of what the schema
    /// takes.
    fn head() -> impl Strategy<Value = Value> {
        let counts = || pick(vec![json!(0), json!(3), json!(2.0), json!(-1), json!(2.5)]);
        let layer = object(
            vec![
                (
                    "status",
                    pick(vec![
                        json!("pending"),
                        json!("completed"),
                        json!("abandoned"),
                    ]),
                ),
                ("tasks_total", counts()),
                ("tasks_completed", counts()),
                ("tasks_failed", counts()),
                ("started_at", stamp_or_null()),
                ("completed_at", stamp_or_null()),
            ],
            vec![("status", json!("in_progress"))],
            4,
        );
        let layers = prop_oneof![
            1 => Just(json!({})),
            4 => layer.prop_map(|l| json!({"2-backend": l})),
        ];
        let metrics = object(
            vec![
                ("total_tasks", counts()),
                ("completed_tasks", counts()),
                ("failed_tasks", counts()),
                ("total_attempts", counts()),
                ("total_commits", counts()),
                (
                    "elapsed_time_seconds",
                    pick(vec![json!(0), json!(2.5), json!(-0.5), json!("1")]),
                ),
            ],
            vec![],
            4,
        );
        object(
            vec![
                (
                    "schema_version",
                    pick(vec![json!("2.0"), json!("2.1"), json!(2)]),
                ),
                ("prd_slug", pick(vec![json!("shop"), json!(""), json!(1)])),
                ("project_path", pick(vec![json!("/p"), Value::Null])),
                ("worktree_dir", pick(vec![json!(".worktrees"), json!([])])),
                ("tasks_path", pick(vec![json!("docs/tasks"), json!(false)])),
                (
                    "status",
                    pick(vec![json!("abandoned"), json!("stopped"), json!("done")]),
                ),
                (
                    "current_layer",
                    pick(vec![json!("2-backend"), Value::Null, json!(2)]),
                ),
                (
                    "current_batch",
                    pick(vec![
                        json!(0),
                        json!(2.0),
                        json!(-1),
                        Value::Null,
                        json!("1"),
                    ]),
                ),
                ("started_at", stamp_or_null()),
                ("updated_at", stamp_or_null()),
                ("completed_at", stamp_or_null()),
                ("layers", layers.boxed()),
                ("tasks", pick(vec![json!({}), json!([])])),
                ("merge_queue", pick(vec![json!([]), json!({})])),
                ("metrics", metrics.boxed()),
            ],
            vec![
                ("schema_version", json!("2.0")),
                ("status", json!("in_progress")),
                ("tasks", json!({})),
            ],
            8,
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]

        /// The state's own check of the rest of the document is the schema's.
        #[test]
        fn the_head_check_is_the_schema(v in head()) {
            is_the_schema_on_the_head("execute-state", &["tasks", "merge_queue"], v)?;
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// The whole state's own check takes no state the schema refuses, and every one it
        /// takes whose tasks the model can type.
        #[test]
        fn the_state_check_is_the_schema(
            mut v in head(),
            tasks in prop::collection::vec(task(), 0..3),
            queue in prop::option::of(prop::collection::vec(queue_entry(), 0..3)),
        ) {
            let typed = tasks.iter().all(|t| serde_json::from_value::<Task>(t.clone()).is_ok())
                && queue.iter().flatten().all(|e| serde_json::from_value::<QueueEntry>(e.clone()).is_ok());
            if let Some(m) = v.as_object_mut() {
                if m.get("tasks").is_some_and(Value::is_object) {
                    let keyed = tasks.into_iter().enumerate().map(|(i, t)| (format!("L1-{i}"), t));
                    m.insert("tasks".into(), Value::Object(keyed.collect()));
                }
                if let Some(q) = queue {
                    m.insert("merge_queue".into(), Value::from(q));
                }
            }
            native_is_the_schema_where("execute-state", &v, typed)?;
        }
    }

    /// A field given twice goes to the whole reading; unknown fields keep their order, and
    /// the last of a name given twice holds where the first stood.
    #[test]
    fn a_field_given_twice_goes_to_the_whole_reading() {
        let twice = br#"{"status": "pending", "attempts": 1, "attempts": 2}"#;
        let mut de = serde_json::Deserializer::from_slice(twice);
        assert!(Task::strict(&mut de).is_err());
        let text = br#"{"z": 1, "status": "pending", "a": 2, "z": 3}"#;
        let mut de = serde_json::Deserializer::from_slice(text);
        let t = Task::strict(&mut de).unwrap();
        assert_eq!(t.rest.keys().collect::<Vec<_>>(), ["z", "a"]);
        assert_eq!(t.rest["z"], 3);
    }
}
