//! The JSON Schemas, embedded from `schemas/` at build time and compiled at most once per
//! process (only when something is validated: the hot path never compiles one). Nothing is ever
//! fetched: the schemas use local `$ref`s only and jsonschema is built without its resolvers.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use serde_json::Value;

use crate::error::{Error, Result};

/// A schema's own check, written as a strict reading of what it describes (issue 23):
/// `true` only for a value the schema takes, so a valid file is checked without compiling the
/// schema (which costs more than the check, and touches code no other part of an event needs).
/// `false` sends the value to the schema's validator, which words what is wrong. Each is held
/// to its schema by a property test beside it (`tests::native_is_the_schema`).
pub type Native = fn(&Value) -> bool;

/// One embedded schema.
#[derive(Debug, Clone, Copy)]
pub struct SchemaDef {
    /// Short name (`claude-tasks`), the file name without `.schema.json`.
    pub name: &'static str,
    /// Which state file it describes.
    pub describes: &'static str,
    /// The schema text.
    pub source: &'static str,
    /// Its own check, where it has one.
    pub native: Option<Native>,
}

macro_rules! schema {
    ($name:literal, $describes:literal) => {
        SchemaDef {
            name: $name,
            describes: $describes,
            source: include_str!(concat!("../../schemas/", $name, ".schema.json")),
            native: None,
        }
    };
    ($name:literal, $describes:literal, $native:path) => {
        SchemaDef {
            native: Some($native),
            ..schema!($name, $describes)
        }
    };
}

/// Every schema taskhook knows, in a stable order.
pub static SCHEMAS: &[SchemaDef] = &[
    schema!(
        "claude-tasks",
        "~/.claude/tasks/{list-id}/tasks.json (seed 002)"
    ),
    schema!(
        "projects-project",
        ".claude/projects/{id}/project.json (seed 000)",
        crate::layouts::projects::reading::project_is_valid
    ),
    schema!(
        "projects-tasks",
        ".claude/projects/{id}/tasks.json (seed 000)",
        crate::layouts::projects::reading::list_is_valid
    ),
    schema!(
        "projects-velocity",
        ".claude/projects/{id}/progress/velocity.json (seed 000)",
        crate::layouts::projects::reading::velocity_is_valid
    ),
    schema!(
        "execute-state",
        "execute-state.json v2.0 (seed 001)",
        crate::layouts::execute::reading::state_is_valid
    ),
    schema!(
        "iterative-state",
        ".claude/iterative/{slug}/state.json (seed 003)",
        crate::layouts::iterative::reading::state_is_valid
    ),
    schema!(
        "cdd-order",
        "$CDD_DIR/tasks/order.json (seed 004)",
        crate::layouts::cdd::reading::order_is_valid
    ),
    schema!(
        "cdd-history",
        "one line of $CDD_DIR/tasks/history.jsonl (seed 004)",
        crate::layouts::cdd::reading::line_is_valid
    ),
    schema!(
        "taskhook-agents",
        ".claude/taskhook/agents.json (subagent bindings, notices)",
        crate::agents::is_valid
    ),
    schema!(
        "taskhook-applied",
        ".claude/taskhook/applied.json (events applied, each once)",
        super::claim::applied_is_valid
    ),
    schema!(
        "taskhook-claims",
        ".claude/taskhook/claims.json (claims and leases of units)",
        crate::claims::is_valid
    ),
];

/// One schema violation: where in the instance (JSON pointer) and what.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Issue {
    pub path: String,
    pub message: String,
}

/// Looks up a schema by name.
pub fn find(name: &str) -> Option<&'static SchemaDef> {
    SCHEMAS.iter().find(|s| s.name == name)
}

fn compiled(name: &str) -> Result<&'static jsonschema::Validator> {
    static CACHE: OnceLock<Mutex<HashMap<&'static str, &'static jsonschema::Validator>>> =
        OnceLock::new();
    let def = find(name).ok_or_else(|| Error::NotFound(format!("no schema named {name:?}")))?;
    let cache = CACHE.get_or_init(Mutex::default);
    let mut map = cache.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(v) = map.get(def.name) {
        return Ok(v);
    }
    let schema: Value = serde_json::from_str(def.source)
        .map_err(|e| Error::BadInput(format!("embedded schema {} is not JSON: {e}", def.name)))?;
    let validator = jsonschema::validator_for(&schema)
        .map_err(|e| Error::BadInput(format!("embedded schema {} is invalid: {e}", def.name)))?;
    let leaked: &'static jsonschema::Validator = Box::leak(Box::new(validator));
    map.insert(def.name, leaked);
    Ok(leaked)
}

/// Whether `value` is a valid entry of the member `member` of schema `name` (an element of its
/// array, a value of its object): checked against that entry's own schema, compiled once. The
/// strict readings (`store::strict`) are held to it by their property tests; no reading
/// needs it any more.
#[cfg(test)]
pub fn entry_is_valid(name: &str, member: &str, value: &Value) -> Result<bool> {
    Ok(entry_validator(name, member)?.is_valid(value))
}

/// The compiled schema of an entry of the member `member` of schema `name` ([`entry_is_valid`]),
/// for a reader that checks many entries: found once, not per entry.
#[cfg(test)]
pub fn entry_validator(name: &str, member: &str) -> Result<&'static jsonschema::Validator> {
    static CACHE: OnceLock<Mutex<HashMap<String, &'static jsonschema::Validator>>> =
        OnceLock::new();
    let key = format!("{name}#{member}");
    let cache = CACHE.get_or_init(Mutex::default);
    let mut map = cache.lock().unwrap_or_else(|p| p.into_inner());
    let validator = match map.get(&key) {
        Some(v) => *v,
        None => {
            let def =
                find(name).ok_or_else(|| Error::NotFound(format!("no schema named {name:?}")))?;
            let bad = |why: String| Error::BadInput(format!("embedded schema {name}: {why}"));
            let mut whole: Value =
                serde_json::from_str(def.source).map_err(|e| bad(e.to_string()))?;
            let m = &whole["properties"][member];
            let entry = m.get("items").or_else(|| m.get("additionalProperties"));
            let Some(Value::Object(entry)) = entry.cloned() else {
                return Err(bad(format!("{member} has no schema for its entries")));
            };
            // The entry's schema at the root, beside the definitions its references name.
            let mut root = entry;
            for k in ["$schema", "$defs"] {
                if let Some(v) = whole.get_mut(k).map(std::mem::take) {
                    root.insert(k.to_string(), v);
                }
            }
            let validator =
                jsonschema::validator_for(&Value::Object(root)).map_err(|e| bad(e.to_string()))?;
            let leaked: &'static jsonschema::Validator = Box::leak(Box::new(validator));
            map.insert(key, leaked);
            leaked
        }
    };
    Ok(validator)
}

/// Checks `value` against schema `name`: `Ok(Ok(()))` when valid, `Ok(Err(issues))` when not.
/// The outer error is for an unknown schema name.
pub fn check(name: &str, value: &Value) -> Result<std::result::Result<(), Vec<Issue>>> {
    if find(name)
        .and_then(|d| d.native)
        .is_some_and(|native| native(value))
    {
        return Ok(Ok(()));
    }
    validate(name, value)
}

/// [`check`] by the schema's validator alone.
fn validate(name: &str, value: &Value) -> Result<std::result::Result<(), Vec<Issue>>> {
    let v = compiled(name)?;
    let issues: Vec<Issue> = v
        .iter_errors(value)
        .map(|e| Issue {
            path: e.instance_path().to_string(),
            message: e.to_string(),
        })
        .collect();
    Ok(if issues.is_empty() {
        Ok(())
    } else {
        Err(issues)
    })
}

/// Renders issues on one line: `/tasks/0/status: "x" is not one of [...]; …` (at most 5).
pub fn summarize(issues: &[Issue]) -> String {
    let mut parts: Vec<String> = issues
        .iter()
        .take(5)
        .map(|i| {
            let at = if i.path.is_empty() { "(root)" } else { &i.path };
            let mut msg = crate::error::one_line(&i.message);
            if msg.chars().count() > 200 {
                msg = msg.chars().take(200).collect::<String>() + "…";
            }
            format!("{at}: {msg}")
        })
        .collect();
    if issues.len() > 5 {
        parts.push(format!("and {} more", issues.len() - 5));
    }
    parts.join("; ")
}

#[cfg(test)]
pub mod tests {
    use super::*;

    /// What a schema's own check is held to: it takes `value` exactly when the schema's
    /// validator does.
    pub fn native_is_the_schema(
        name: &str,
        value: &Value,
    ) -> std::result::Result<(), proptest::test_runner::TestCaseError> {
        let native = find(name).and_then(|d| d.native).expect("a native check");
        let valid = validate(name, value).unwrap().is_ok();
        proptest::prop_assert_eq!(native(value), valid, "{} {}", name, value);
        Ok(())
    }

    /// [`native_is_the_schema`] for a value whose entries the model can type (`typed`); for
    /// one it cannot, the own check refuses it (and leaves it to the validator).
    pub fn native_is_the_schema_where(
        name: &str,
        value: &Value,
        typed: bool,
    ) -> std::result::Result<(), proptest::test_runner::TestCaseError> {
        if typed {
            return native_is_the_schema(name, value);
        }
        let native = find(name).and_then(|d| d.native).expect("a native check");
        proptest::prop_assert!(!native(value), "{} {}", name, value);
        Ok(())
    }

    /// Every schema a file is checked against on an event's way has its own check.
    #[test]
    fn the_schemas_on_an_events_way_have_their_own_checks() {
        let without: Vec<&str> = SCHEMAS
            .iter()
            .filter(|s| s.native.is_none())
            .map(|s| s.name)
            .collect();
        assert_eq!(without, ["claude-tasks"]);
    }

    #[test]
    fn every_embedded_schema_compiles() {
        for s in SCHEMAS {
            compiled(s.name).unwrap_or_else(|e| panic!("{}: {e}", s.name));
        }
    }

    #[test]
    fn unknown_schema_is_an_error() {
        assert!(check("nope", &Value::Null).is_err());
    }
}
