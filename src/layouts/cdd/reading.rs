//! cdd's files read strictly as their schemas check them (issue 23): order.json
//! (`cdd-order`) and a line of history.jsonl (`cdd-history`), each its schema's own check
//! ([`crate::store::schema::Native`]), held to the schema by the property tests below.

use serde_json::Value;

use crate::store::strict::{
    checked_record, name_in, non_empty, number_at_least_zero, string, takes, timestamp,
};

/// The schemas' `thinking` values.
const THINKING: [&str; 4] = ["none", "thinking", "extended", "ultrathink"];

checked_record! {
    /// A task of order.json (`$defs/task`).
    TaskItem,
    ["task", "group", "model", "thinking"],
    required: ["task"],
    |m, name| {
        match name {
            "task" => _ = non_empty(m, name)?,
            "thinking" => _ = name_in(m, &THINKING, name)?,
            // group, model
            _ => _ = string(m)?,
        }
        Ok(())
    }
}

checked_record! {
    /// A stop of order.json (`$defs/stop`).
    StopItem,
    ["stop", "message"],
    required: ["stop"],
    |m, name| {
        match name {
            "stop" => _ = non_empty(m, name)?,
            _ => _ = string(m)?,
        }
        Ok(())
    }
}

/// `cdd-order`'s own check: `tasks` an array whose every item is a task or a stop, not both
/// (the schema's `oneOf`).
pub fn order_is_valid(doc: &Value) -> bool {
    doc.as_object().is_some_and(|o| {
        o.get("tasks")
            .and_then(Value::as_array)
            .is_some_and(|items| {
                items
                    .iter()
                    .all(|i| takes::<TaskItem>(i) != takes::<StopItem>(i))
            })
    })
}

checked_record! {
    /// A line of history.jsonl (`cdd-history`).
    LineCheck,
    [
        "timestamp", "action", "task", "from", "to", "elapsed_seconds", "from_model",
        "from_thinking", "to_model", "to_thinking", "stop", "message", "reason",
    ],
    required: ["timestamp", "action"],
    |m, name| {
        match name {
            "timestamp" => _ = timestamp(m, name)?,
            "action" => _ = non_empty(m, name)?,
            "elapsed_seconds" => _ = number_at_least_zero(m, name)?,
            "from_thinking" | "to_thinking" => _ = name_in(m, &THINKING, name)?,
            // The other strings.
            _ => _ = string(m)?,
        }
        Ok(())
    }
}

/// `cdd-history`'s own check.
pub fn line_is_valid(line: &Value) -> bool {
    takes::<LineCheck>(line)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::{json, Value};

    use crate::store::schema::tests::native_is_the_schema;
    use crate::store::strict::tests::{any_value, object, pick, stamp};

    fn thinking() -> BoxedStrategy<Value> {
        pick(vec![
            json!("ultrathink"),
            json!("none"),
            json!("deep"),
            json!(1),
        ])
    }

    fn item() -> impl Strategy<Value = Value> {
        let task = object(
            vec![
                ("task", pick(vec![json!("task-001.md"), json!("")])),
                ("group", pick(vec![json!("api"), json!(2)])),
                ("model", pick(vec![json!("opus"), Value::Null])),
                ("thinking", thinking()),
                ("stop", pick(vec![json!("review"), json!("")])),
                ("message", pick(vec![json!("look"), json!([])])),
            ],
            vec![("task", json!("task-002.md"))],
            4,
        );
        let stop = object(
            vec![
                ("stop", pick(vec![json!("review"), json!(""), json!(3)])),
                ("message", pick(vec![json!("look"), json!({})])),
                ("task", pick(vec![json!("task-001.md"), json!(false)])),
            ],
            vec![("stop", json!("check-in"))],
            3,
        );
        prop_oneof![task, stop, any_value()]
    }

    fn order() -> impl Strategy<Value = Value> {
        prop_oneof![
            8 => prop::collection::vec(item(), 0..4).prop_map(|items| json!({"tasks": items})),
            1 => any_value().prop_map(|tasks| json!({"tasks": tasks})),
            1 => any_value(),
        ]
    }

    fn line() -> impl Strategy<Value = Value> {
        let text = || pick(vec![json!("task-001.md"), json!(""), json!(7), Value::Null]);
        object(
            vec![
                ("timestamp", stamp()),
                ("action", pick(vec![json!("done"), json!(""), json!(1)])),
                ("task", text()),
                ("from", text()),
                ("to", text()),
                (
                    "elapsed_seconds",
                    pick(vec![json!(0), json!(2.5), json!(-1), json!("3")]),
                ),
                ("from_model", text()),
                ("from_thinking", thinking()),
                ("to_model", text()),
                ("to_thinking", thinking()),
                ("stop", text()),
                ("message", text()),
                ("reason", text()),
            ],
            vec![
                ("timestamp", json!("2026-01-05T08:00:00Z")),
                ("action", json!("start")),
            ],
            6,
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]

        /// order.json's own check is its schema.
        #[test]
        fn the_order_check_is_the_schema(v in order()) {
            native_is_the_schema("cdd-order", &v)?;
        }

        /// A history line's own check is its schema.
        #[test]
        fn the_line_check_is_the_schema(v in line()) {
            native_is_the_schema("cdd-history", &v)?;
        }
    }
}
