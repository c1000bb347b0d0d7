//! The summary of a task list (counts, in progress, ready, blocked with what each waits for,
//! graph problems) for `status` and the SessionStart context, and the lines describing Claude
//! Code's own `<N>.json` files beside it (read only).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

use serde_json::Value;

use super::doc::{deps_of, id_of, nodes, short, status_of, tasks};
use super::NAME;
use crate::context::Ctx;
use crate::error::{Error, Result};
use crate::graph;
use crate::layouts::json::{str_field, string_list};
use crate::layouts::{Item, StoreRef, Summary};
use crate::store::Loaded;

/// Largest Claude Code `<N>.json` read for `status`.
const OWN_TASK_CAP: usize = 4 * 1024 * 1024;

/// Summarizes the list of `store` (its file at `path`).
pub(crate) fn summarize(cx: &Ctx, store: &StoreRef, path: &Path) -> Result<Summary> {
    let mut s = Summary {
        layout: NAME,
        id: store.id.clone(),
        path: path.to_path_buf(),
        current_label: "In progress",
        headline: format!("Task list {} ({})", store.id, path.display()),
        ..Default::default()
    };
    match cx.store.load_json(path, NAME)? {
        Loaded::Missing => s.quiet = true,
        Loaded::Invalid(details) => s.problems.push(
            Error::Corrupt {
                path: path.to_path_buf(),
                store: store.root.display().to_string(),
                details,
            }
            .one_line(),
        ),
        Loaded::Valid(doc) => of_document(&doc, &mut s),
    }
    s.notes.extend(claude_own_lines(cx, &store.root)?);
    Ok(s)
}

/// Fills `s` from a valid document, in one pass over the tasks plus the graph checks.
fn of_document(doc: &Value, s: &mut Summary) {
    let all = tasks(doc);
    if all.is_empty() {
        s.quiet = true;
        return;
    }
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for t in all {
        *counts.entry(status_of(t).to_string()).or_insert(0) += 1;
    }
    let count = |k: &str| counts.get(k).copied().unwrap_or(0);
    s.headline.push_str(&format!(
        ": {} tasks: {} in progress, {} pending, {} blocked, {} completed.",
        all.len(),
        count("in_progress"),
        count("pending"),
        count("blocked"),
        count("completed"),
    ));
    let by_id: HashMap<&str, &Value> = all.iter().rev().map(|t| (id_of(t), t)).collect();
    let titled = |id: &str| Item {
        title: by_id
            .get(id)
            .map(|t| str_field(t, "description"))
            .filter(|d| !d.trim().is_empty())
            .map(|d| short(d, 60)),
        ..Item::id(id)
    };
    let done: HashSet<&str> = all
        .iter()
        .filter(|t| status_of(t) == "completed")
        .map(id_of)
        .collect();
    let ns = nodes(doc);
    s.current = all
        .iter()
        .filter(|t| status_of(t) == "in_progress")
        .map(|t| titled(id_of(t)))
        .collect();
    s.ready = graph::ready(&ns, &done)
        .into_iter()
        .filter(|id| by_id.get(id).is_some_and(|t| status_of(t) == "pending"))
        .map(titled)
        .collect();
    s.blocked = all
        .iter()
        .filter(|t| status_of(t) == "blocked")
        .map(|t| Item {
            waits_for: deps_of(t)
                .into_iter()
                .filter(|d| !done.contains(d))
                .map(str::to_string)
                .collect(),
            ..Item::id(id_of(t))
        })
        .collect();
    for d in graph::duplicate_ids(&ns) {
        s.problems.push(format!("several tasks have the id {d:?}"));
    }
    for (t, d) in graph::unknown_deps(&ns) {
        s.problems
            .push(format!("task {t:?} depends on unknown task {d:?}"));
    }
    if let Some(c) = graph::find_cycle(&ns) {
        s.problems
            .push(format!("dependency cycle {}", graph::describe_cycle(&c)));
    }
    s.counts = counts;
}

/// Lines describing Claude Code's own `<N>.json` files in `dir` (read only).
pub(crate) fn claude_own_lines(cx: &Ctx, dir: &Path) -> Result<Vec<String>> {
    let mut files: Vec<(u64, String)> = cx
        .store
        .list_dir(dir)?
        .into_iter()
        .filter(|e| !e.is_dir)
        .filter_map(|e| {
            let n = e.name.strip_suffix(".json")?.parse::<u64>().ok()?;
            Some((n, e.name))
        })
        .collect();
    if files.is_empty() {
        return Ok(Vec::new());
    }
    files.sort();
    let mut lines = vec![format!(
        "Claude Code's own tasks (read-only) in {}:",
        dir.display()
    )];
    for (n, name) in files {
        let v = cx
            .store
            .read_capped(&dir.join(&name), OWN_TASK_CAP)
            .ok()
            .flatten()
            .and_then(|b| serde_json::from_slice::<Value>(&b).ok());
        let Some(v) = v else {
            lines.push(format!("  #{n} (unreadable)"));
            continue;
        };
        let mut line = format!(
            "  #{n} [{}] {}",
            str_field(&v, "status"),
            str_field(&v, "subject")
        );
        if let Some(o) = v.get("owner").and_then(Value::as_str) {
            line.push_str(&format!(" ({o})"));
        }
        let by = string_list(&v, "blockedBy");
        if !by.is_empty() {
            let by: Vec<String> = by.iter().map(|b| format!("#{b}")).collect();
            line.push_str(&format!(" [blocked by {}]", by.join(", ")));
        }
        lines.push(line);
    }
    Ok(lines)
}

/// Whether `dir` holds Claude Code's own `<N>.json` task files.
pub(crate) fn has_claude_own_files(cx: &Ctx, dir: &Path) -> Result<bool> {
    Ok(cx.store.list_dir(dir)?.iter().any(|e| {
        !e.is_dir
            && e.name
                .strip_suffix(".json")
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    }))
}
