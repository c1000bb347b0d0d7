//! A unit read strictly (issue 23): straight from the state file's bytes into [`Unit`],
//! refusing as it reads whatever the unit schema (`iterative-state`, `$defs/unit`) refuses
//! ([`crate::store::entries::Strict`], through [`Record`]). A valid state is then read without
//! a JSON tree per unit and without a schema check per unit; anything refused sends the read
//! to the whole document's check, which words it. The lenient reading stays serde's derive;
//! `tests` holds this one to the schema and to the derive.

use serde::de::MapAccess;
use serde_json::{Map, Value};

use super::model::{count, Reason, Unit};
use crate::layouts::strict::{flag, integer, one_of, other, string, timestamp_or_null, Record};

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

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::{json, Value};

    use super::*;
    use crate::layouts::strict::tests::{
        any_value, is_the_schema_and_the_derive, object, pick, timestamp,
    };

    fn unit() -> impl Strategy<Value = Value> {
        let counts = || pick(vec![json!(0), json!(2), json!(2.0), json!(1e300)]);
        let times = || prop_oneof![timestamp().prop_map(Value::String), Just(Value::Null)].boxed();
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
                ("started_at", times()),
                ("last_signal", pick(vec![json!("T1_DONE")])),
                ("verification_passed", pick(vec![json!(true), json!(false)])),
                ("completed_at", times()),
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
}
