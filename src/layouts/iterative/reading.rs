//! A unit read strictly (issue 23): straight from the state file's bytes into [`Unit`],
//! refusing as it reads whatever the unit schema (`iterative-state`, `$defs/unit`) refuses
//! ([`crate::store::entries::Strict`], through [`Record`]). A valid state is then read without
//! a JSON tree per unit and without a schema check per unit; anything refused sends the read
//! to the whole document's check, which words it. The lenient reading stays serde's derive;
//! `tests` holds this one to the schema and to the derive.

use serde::de::MapAccess;
use serde_json::{Map, Value};

use super::model::{count, Reason, Unit};
use crate::store::entries::Strict;
use crate::store::strict::{
    any_object, flag, integer, name_in, non_empty, one_of, other, string, string_or_null, takes,
    timestamp, timestamp_or_null, values_of, Record,
};

/// A count of at least `min` (`"type": "integer", "minimum": min`), as the model reads one.
fn counted<'de, A: MapAccess<'de>>(m: &mut A, min: u64, field: &str) -> Result<u64, A::Error> {
    count::of(&integer(m, min, field)?)
}

impl Record for Unit {
    const NAMES: &'static [&'static str] = &[
        "status",
        "iterations_used",
        "confirmations_used",
        "failed_confirmations",
        "max_iterations",
        "reason",
        "started_at",
        "last_signal",
        "verification_passed",
        "completed_at",
    ];
    const REQUIRED: &'static [&'static str] = &["status"];

    fn field<'de, A: MapAccess<'de>>(
        &mut self,
        m: &mut A,
        name: &'static str,
    ) -> Result<(), A::Error> {
        match name {
            "status" => self.status = one_of(m, name)?,
            "iterations_used" => self.iterations_used = Some(counted(m, 0, name)?),
            "confirmations_used" => self.confirmations_used = Some(counted(m, 0, name)?),
            "failed_confirmations" => self.failed_confirmations = Some(counted(m, 0, name)?),
            "max_iterations" => self.max_iterations = Some(counted(m, 1, name)?),
            "reason" => self.reason = Some(Reason::from(string(m)?)),
            "started_at" => self.started_at = Some(timestamp_or_null(m, name)?),
            "last_signal" => self.last_signal = Some(string(m)?),
            "verification_passed" => self.verification_passed = Some(flag(m)?),
            "completed_at" => self.completed_at = Some(timestamp_or_null(m, name)?),
            _ => other(m, &mut self.rest, name.to_string())?,
        }
        Ok(())
    }

    fn rest(&mut self) -> &mut Map<String, Value> {
        &mut self.rest
    }
}

/// The state but its tasks (which stand in it empty, each unit read by its own reading above),
/// checked as `iterative-state` checks it (its knowledge-mode phases here, unit by unit);
/// nothing else is kept.
#[derive(Default)]
struct HeadCheck {
    rest: Map<String, Value>,
    mode: String,
    tasks: bool,
    phases: bool,
}

impl Record for HeadCheck {
    const NAMES: &'static [&'static str] = &[
        "task",
        "slug",
        "mode",
        "domain",
        "created",
        "updated",
        "phase",
        "current_task",
        "current_phase",
        "current_iteration",
        "tasks",
        "phases",
        "commits",
    ];
    const REQUIRED: &'static [&'static str] = &["slug", "mode", "phase"];

    fn field<'de, A: MapAccess<'de>>(
        &mut self,
        m: &mut A,
        name: &'static str,
    ) -> Result<(), A::Error> {
        match name {
            "task" | "domain" => _ = string(m)?,
            "slug" => _ = non_empty(m, name)?,
            "mode" => self.mode = name_in(m, &["development", "knowledge"], name)?,
            "created" | "updated" => _ = timestamp(m, name)?,
            "phase" => {
                _ = name_in(
                    m,
                    &[
                        "discover", "plan", "execute", "verify", "deliver", "complete",
                    ],
                    name,
                )?
            }
            "current_task" | "current_phase" => _ = string_or_null(m)?,
            "current_iteration" => _ = integer(m, 0, name)?,
            "tasks" => {
                any_object(m)?;
                self.tasks = true;
            }
            "phases" => {
                values_of::<Unit, _>(m)?;
                self.phases = true;
            }
            "commits" => _ = m.next_value::<Vec<String>>()?,
            _ => other(m, &mut self.rest, name.to_string())?,
        }
        Ok(())
    }

    fn rest(&mut self) -> &mut Map<String, Value> {
        &mut self.rest
    }
}

/// The state but its tasks' entries, as `iterative-state` checks it.
fn head_is_valid(head: &Value) -> bool {
    // The schema's `allOf`: a development state has tasks, a knowledge state phases.
    HeadCheck::strict(head).is_ok_and(|h| match h.mode.as_str() {
        "development" => h.tasks,
        _ => h.phases,
    })
}

/// `iterative-state`'s own check ([`crate::store::schema::Native`]): the rest of the state and
/// each task read strictly.
pub fn state_is_valid(doc: &Value) -> bool {
    head_is_valid(doc)
        && doc
            .get("tasks")
            .is_none_or(|t| t.as_object().is_some_and(|t| t.values().all(takes::<Unit>)))
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::{json, Value};

    use super::*;
    use crate::store::schema::tests::native_is_the_schema_where;
    use crate::store::strict::tests::{
        any_value, is_the_schema_and_the_derive, is_the_schema_on_the_head, object, pick,
        stamp_or_null,
    };

    fn unit() -> impl Strategy<Value = Value> {
        let counts = || pick(vec![json!(0), json!(2), json!(2.0), json!(1e300)]);
        object(
            vec![
                (
                    "status",
                    pick(vec![json!("pending"), json!("done"), json!("timeout")]),
                ),
                ("iterations_used", counts()),
                ("confirmations_used", counts()),
                ("failed_confirmations", counts()),
                ("max_iterations", counts()),
                (
                    "reason",
                    pick(vec![json!("Waiting on T1, T2"), json!("stuck")]),
                ),
                ("started_at", stamp_or_null()),
                ("last_signal", pick(vec![json!("T1_DONE")])),
                ("verification_passed", pick(vec![json!(true), json!(false)])),
                ("completed_at", stamp_or_null()),
                ("description", any_value().boxed()),
            ],
            vec![("status", json!("pending"))],
            7,
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]

        /// The strict reading takes a unit exactly when the unit schema does and the derive
        /// can type it, and gives the unit the derive gives.
        #[test]
        fn the_strict_reading_is_the_schema_and_the_derive(v in unit()) {
            is_the_schema_and_the_derive::<Unit>("iterative-state", "tasks", &v)?;
        }
    }

    /// A state with its tasks emptied (a knowledge state's phases whole), near the edges of
    /// what the schema takes.
    fn head() -> impl Strategy<Value = Value> {
        let phases = prop_oneof![
            1 => Just(json!({})),
            1 => Just(json!([])),
            4 => unit().prop_map(|u| json!({"R1": u})),
        ];
        object(
            vec![
                ("task", pick(vec![json!("Add search"), json!(1)])),
                ("slug", pick(vec![json!("s"), json!(""), Value::Null])),
                (
                    "mode",
                    pick(vec![
                        json!("knowledge"),
                        json!("development"),
                        json!("other"),
                    ]),
                ),
                ("domain", pick(vec![json!("feature"), json!(["x"])])),
                ("created", stamp_or_null()),
                ("updated", stamp_or_null()),
                (
                    "phase",
                    pick(vec![json!("complete"), json!("discover"), json!("done")]),
                ),
                (
                    "current_task",
                    pick(vec![json!("T1"), Value::Null, json!(1)]),
                ),
                (
                    "current_phase",
                    pick(vec![json!("R1"), Value::Null, json!({})]),
                ),
                (
                    "current_iteration",
                    pick(vec![json!(0), json!(2.0), json!(-1), Value::Null]),
                ),
                ("tasks", pick(vec![json!({}), json!([])])),
                ("phases", phases.boxed()),
                (
                    "commits",
                    pick(vec![
                        json!([]),
                        json!(["abc: fix"]),
                        json!([1]),
                        json!("abc"),
                    ]),
                ),
            ],
            vec![
                ("slug", json!("s")),
                ("mode", json!("development")),
                ("phase", json!("execute")),
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
            is_the_schema_on_the_head("iterative-state", &["tasks"], v)?;
        }

        /// The whole state's own check takes no state the schema refuses, and every one it
        /// takes whose units the model can type.
        #[test]
        fn the_state_check_is_the_schema(
            mut v in head(),
            units in prop::collection::vec(unit(), 0..3),
        ) {
            if let Some(m) = v.as_object_mut() {
                if m.get("tasks").is_some_and(Value::is_object) {
                    let keyed = units.into_iter().enumerate().map(|(i, u)| (format!("T{i}"), u));
                    m.insert("tasks".into(), Value::Object(keyed.collect()));
                }
            }
            let typed = ["tasks", "phases"].iter().all(|k| {
                v[*k].as_object().is_none_or(|units| {
                    units.values().all(|u| serde_json::from_value::<Unit>(u.clone()).is_ok())
                })
            });
            native_is_the_schema_where("iterative-state", &v, typed)?;
        }
    }
}
