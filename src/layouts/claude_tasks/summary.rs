//! The summary of a task list (counts, in progress, ready, blocked with what each waits for,
//! graph problems) for `status` and the SessionStart context, and the lines describing Claude
//! Code's own `<N>.json` files beside it (read only). One parse of the list ([`List`]), one
//! pass over its tasks and one over the dependency graph; descriptions are read only for the
//! few tasks the context names.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;

use serde_json::Value;

use super::doc::{load_list, read_text, short};
use super::list::List;
use super::view::Status;
use super::NAME;
use crate::context::Ctx;
use crate::error::{Error, Result};
use crate::graph::{self, Node};
use crate::layouts::json::{str_field, string_list};
use crate::layouts::summary::CONTEXT_LIST_CAP;
use crate::layouts::{Item, StoreRef, Summary};

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
    let root = store.root.display().to_string();
    let loaded = read_text(cx, path).and_then(|t| {
        let list = load_list(path, &root, t.as_deref())?;
        Ok(list.map(|l| of_list(&l, &mut s)).is_some())
    });
    match loaded {
        Ok(true) => {}
        Ok(false) => s.quiet = true,
        Err(Error::Corrupt { details, .. }) => s.problems.push(
            Error::Corrupt {
                path: path.to_path_buf(),
                store: root.clone(),
                details,
            }
            .one_line(),
        ),
        Err(e) => return Err(e),
    }
    s.notes.extend(claude_own_lines(cx, &store.root)?);
    Ok(s)
}

/// Fills `s` from a parsed list.
fn of_list(list: &List<'_>, s: &mut Summary) {
    if list.is_empty() {
        s.quiet = true;
        return;
    }
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    let mut total = 0;
    for (_, v) in list.live() {
        *counts.entry(v.status.as_str().to_string()).or_insert(0) += 1;
        total += 1;
    }
    let count = |k: &str| counts.get(k).copied().unwrap_or(0);
    s.headline.push_str(&format!(
        ": {total} tasks: {} in progress, {} pending, {} blocked, {} completed.",
        count("in_progress"),
        count("pending"),
        count("blocked"),
        count("completed"),
    ));
    let done: HashSet<&str> = list
        .live()
        .filter(|(_, v)| v.status == Status::Completed)
        .map(|(_, v)| &*v.id)
        .collect();
    // Only the first items of a list are shown with their description (the rest are counted).
    let titled = |items: Vec<(usize, String)>| -> Vec<Item> {
        items
            .into_iter()
            .enumerate()
            .map(|(n, (i, id))| Item {
                title: (n < CONTEXT_LIST_CAP)
                    .then(|| list.description(i))
                    .filter(|d| !d.trim().is_empty())
                    .map(|d| short(&d, 60)),
                ..Item::id(id)
            })
            .collect()
    };
    let mut first = HashSet::new();
    let unique: Vec<(usize, &super::view::View<'_>)> =
        list.live().filter(|(_, v)| first.insert(&*v.id)).collect();
    s.current = titled(
        unique
            .iter()
            .filter(|(_, v)| v.status == Status::InProgress)
            .map(|(i, v)| (*i, v.id.to_string()))
            .collect(),
    );
    s.ready = titled(
        unique
            .iter()
            .filter(|(_, v)| v.status == Status::Pending)
            .filter(|(_, v)| v.deps.iter().all(|d| done.contains(&**d)))
            .map(|(i, v)| (*i, v.id.to_string()))
            .collect(),
    );
    s.blocked = list
        .live()
        .filter(|(_, v)| v.status == Status::Blocked)
        .map(|(_, v)| Item {
            waits_for: v
                .deps
                .iter()
                .filter(|d| !done.contains(&***d))
                .map(|d| d.to_string())
                .collect(),
            ..Item::id(v.id.to_string())
        })
        .collect();
    let ns: Vec<Node<'_>> = list
        .live()
        .map(|(_, v)| Node::new(&v.id, v.deps.iter().map(|d| &**d)))
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
