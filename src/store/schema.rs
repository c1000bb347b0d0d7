//! The JSON Schemas, embedded from `schemas/` at build time and compiled at most once per
//! process (only when something is validated: the hot path never compiles one). Nothing is ever
//! fetched: the schemas use local `$ref`s only and jsonschema is built without its resolvers.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use serde_json::Value;

use crate::error::{Error, Result};

/// One embedded schema.
#[derive(Debug, Clone, Copy)]
pub struct SchemaDef {
    /// Short name (`claude-tasks`), the file name without `.schema.json`.
    pub name: &'static str,
    /// Which state file it describes.
    pub describes: &'static str,
    /// The schema text.
    pub source: &'static str,
}

macro_rules! schema {
    ($name:literal, $describes:literal) => {
        SchemaDef {
            name: $name,
            describes: $describes,
            source: include_str!(concat!("../../schemas/", $name, ".schema.json")),
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
        ".claude/projects/{id}/project.json (seed 000)"
    ),
    schema!(
        "projects-tasks",
        ".claude/projects/{id}/tasks.json (seed 000)"
    ),
    schema!(
        "projects-velocity",
        ".claude/projects/{id}/progress/velocity.json (seed 000)"
    ),
    schema!("execute-state", "execute-state.json v2.0 (seed 001)"),
    schema!(
        "iterative-state",
        ".claude/iterative/{slug}/state.json (seed 003)"
    ),
    schema!("cdd-order", "$CDD_DIR/tasks/order.json (seed 004)"),
    schema!(
        "cdd-history",
        "one line of $CDD_DIR/tasks/history.jsonl (seed 004)"
    ),
    schema!(
        "taskhook-agents",
        ".claude/taskhook/agents.json (subagent bindings, notices)"
    ),
    schema!(
        "taskhook-applied",
        ".claude/taskhook/applied.json (events applied, each once)"
    ),
    schema!(
        "taskhook-claims",
        ".claude/taskhook/claims.json (claims and leases of units)"
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
/// strict readings (`layouts::strict`) are held to it by their property tests; no reading
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
mod tests {
    use super::*;

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
