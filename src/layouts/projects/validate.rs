//! What `taskhook validate` says about a project beyond the schemas: a tasks.json or
//! velocity.json the store must have and lacks (with the fix), and the ids of tasks.json that
//! the schema cannot judge: one used twice (the id is the primary key), one that is not safe
//! as a file name (`research/{id}.md`): the ids `projects add` refuses.

use std::collections::HashMap;

use serde_json::Value;

use super::files::{self, Paths};
use super::model;
use crate::context::Ctx;
use crate::error::{Error, Result};
use crate::layouts::{StateFile, StoreRef};
use crate::store::schema::Issue;
use crate::store::{check_id, parse_json};

fn issue(path: String, message: String) -> Issue {
    Issue { path, message }
}

/// Why a task id is refused, when it is.
fn unsafe_id(id: &str) -> Option<String> {
    if id.starts_with(char::is_whitespace) {
        return Some(format!("invalid task id {id:?}: it starts with whitespace"));
    }
    match check_id("task id", id) {
        Err(e @ Error::UnsafeId { .. }) => Some(e.to_string()),
        _ => None,
    }
}

/// The ids of a list used twice or unsafe, at their JSON paths.
pub fn id_issues(doc: &Value) -> Vec<Issue> {
    let mut first: HashMap<&str, usize> = HashMap::new();
    let mut out = Vec::new();
    for (i, t) in model::raw_tasks(doc).into_iter().flatten().enumerate() {
        let Some(id) = model::raw_id(t) else {
            continue;
        };
        let at = format!("/tasks/{i}/id");
        if let Some(f) = first.get(id) {
            out.push(issue(
                at,
                format!("task id {id:?} is used more than once (first at /tasks/{f}/id)"),
            ));
            continue;
        }
        first.insert(id, i);
        if let Some(why) = unsafe_id(id) {
            out.push(issue(at, why));
        }
    }
    out
}

/// The issues of one state file of a project.
pub fn file_issues(cx: &Ctx, store: &StoreRef, file: &StateFile) -> Result<Vec<Issue>> {
    let p = Paths::of(&store.root);
    let missing = |why: String| Ok(vec![issue(String::new(), why)]);
    if file.path == p.tasks {
        let Some(bytes) = files::read_file(cx, &p.tasks)? else {
            if p.ring().list(&cx.store)?.is_empty() {
                return missing(format!(
                    "missing, and no checkpoint holds a list to restore it from: `taskhook projects add {} TASK --title …` starts a new one",
                    store.id
                ));
            }
            return missing(format!(
                "missing: the next session start (or `taskhook recover {}`) restores it from the newest valid checkpoint",
                store.root.display()
            ));
        };
        return Ok(parse_json(&bytes)
            .map(|d| id_issues(&d))
            .unwrap_or_default());
    }
    if file.path == p.velocity && !cx.store.exists(&p.velocity) {
        return missing(
            "missing: the next session start (or `taskhook reconcile`) recomputes it from progress/log.md"
                .to_string(),
        );
    }
    Ok(Vec::new())
}
