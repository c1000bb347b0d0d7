//! Checking a state file on disk against its schema: one JSON document, or one JSON value per
//! line (history logs). Used by `taskhook validate` and by the rule that an edit leaving a state
//! file invalid is answered with `decision: block` (CONTRACT §5).

use std::path::Path;

use serde_json::Value;

use crate::error::Result;
use crate::store::{parse_json, schema, Store};

/// Checks one JSON document file; a missing file has no issues.
pub fn document(store: &Store, path: &Path, schema_name: &str) -> Result<Vec<schema::Issue>> {
    let Some(bytes) = store.read(path)? else {
        return Ok(Vec::new());
    };
    Ok(match parse_json(&bytes) {
        Err(msg) => vec![schema::Issue {
            path: String::new(),
            message: msg,
        }],
        Ok(v) => schema::check(schema_name, &v)?.err().unwrap_or_default(),
    })
}

/// Checks a JSON Lines file, line by line; issue paths start with `line N`.
pub fn json_lines(store: &Store, path: &Path, schema_name: &str) -> Result<Vec<schema::Issue>> {
    let Some(text) = store.read_text(path)? else {
        return Ok(Vec::new());
    };
    let mut issues = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let at = |p: &str| {
            let sep = if p.is_empty() { "" } else { ": " };
            format!("line {}{sep}{p}", i + 1)
        };
        match serde_json::from_str::<Value>(line) {
            Err(e) => issues.push(schema::Issue {
                path: at(""),
                message: format!("not valid JSON: {e}"),
            }),
            Ok(v) => {
                if let Err(errs) = schema::check(schema_name, &v)? {
                    issues.extend(errs.into_iter().map(|e| schema::Issue {
                        path: at(&e.path),
                        message: e.message,
                    }));
                }
            }
        }
    }
    Ok(issues)
}
