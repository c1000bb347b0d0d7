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
use super::model::Status;
use super::scope::{claude_number, Keys, Other, Owners, Whose};
use super::NAME;
use crate::context::Ctx;
use crate::error::{Error, Result};
use crate::graph::{self, Node};
use crate::layouts::json::{str_field, string_list};
use crate::layouts::summary::{first_few, CONTEXT_LIST_CAP};
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
        Ok(list
            .map(|mut l| {
                l.keys = Keys::of(cx);
                of_list(cx, store, &l, &mut s)
            })
            .is_some())
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

/// Fills `s` from a parsed list, as the session asking reads it: its own Claude Code tasks by
/// their numbers, another live session's unfinished tasks apart (theirs, never offered as
/// ready or in progress here), a quiet session's left-over tasks with whose they were.
fn of_list(cx: &Ctx, store: &StoreRef, list: &List<'_>, s: &mut Summary) {
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
    let titled = |items: Vec<(usize, Option<String>)>| -> Vec<Item> {
        items
            .into_iter()
            .enumerate()
            .map(|(n, (i, detail))| Item {
                title: (n < CONTEXT_LIST_CAP)
                    .then(|| list.description(i))
                    .filter(|d| !d.trim().is_empty())
                    .map(|d| short(&d, 60)),
                detail,
                ..Item::id(list.shown(i))
            })
            .collect()
    };
    let mut owners = Owners::of(cx, store);
    let (mut current, mut ready, mut blocked) = (Vec::new(), Vec::new(), Vec::new());
    let mut theirs: Vec<(Other, Vec<String>)> = Vec::new();
    let mut first = HashSet::new();
    for (i, v) in list.live() {
        if !first.insert(&*v.id) || v.status == Status::Completed {
            continue;
        }
        let left = match owners.whose(cx, v) {
            Whose::Theirs(o) => {
                let line = theirs_item(list, i);
                match theirs.iter_mut().find(|(t, _)| t.session == o.session) {
                    Some((_, items)) => items.push(line),
                    None => theirs.push((o, vec![line])),
                }
                continue;
            }
            Whose::Left(o) => Some(format!("left by {}", o.describe(cx))),
            Whose::Anyone | Whose::Own => None,
        };
        let mut seen = HashSet::new();
        let waits: Vec<String> = v
            .deps
            .iter()
            .filter(|d| !done.contains(&***d) && seen.insert(&***d))
            .map(|d| list.shown_id(d).to_string())
            .collect();
        match v.status {
            Status::InProgress => current.push((i, left)),
            _ if waits.is_empty() => ready.push((i, left)),
            _ => blocked.push(Item {
                waits_for: waits,
                detail: left,
                ..Item::id(list.shown(i))
            }),
        }
    }
    s.current = titled(current);
    s.ready = titled(ready);
    s.blocked = blocked;
    for (o, items) in theirs {
        let shown = first_few(items.iter().cloned(), items.len(), CONTEXT_LIST_CAP);
        let line = format!(
            "Tasks of another live session ({}), not yours to work on: {}.",
            o.describe(cx),
            shown.join(", ")
        );
        s.context_extra.push(line.clone());
        s.notes.push(line);
    }
    let ns: Vec<Node<'_>> = list
        .live()
        .map(|(_, v)| Node::new(&v.id, v.deps.iter().map(|d| &**d)))
        .collect();
    let name = |id: &str| list.shown_id(id).to_string();
    // One index of the ids for the three checks.
    let ids = graph::Ids::of(&ns);
    for d in ids.duplicates() {
        s.problems
            .push(format!("several tasks have the id {:?}", name(d)));
    }
    let (unknown, cycle) = ids.checks(&ns);
    for (t, d) in unknown {
        s.problems
            .push(format!("task {:?} depends on unknown task {d:?}", name(t)));
    }
    if let Some(c) = cycle {
        let c: Vec<String> = c.iter().map(|id| name(id)).collect();
        s.problems
            .push(format!("dependency cycle {}", graph::describe_cycle(&c)));
    }
    s.counts = counts;
}

/// Another session's task as its session's line lists it: Claude Code's `#1 (subject)`, a
/// todo by its text, any other task by its id; then its status.
fn theirs_item(list: &List<'_>, i: usize) -> String {
    let v = list.view(i);
    let desc = short(&list.description(i), 60);
    let name = match claude_number(v) {
        Some(n) if desc.is_empty() => format!("#{n}"),
        Some(n) => format!("#{n} ({desc})"),
        None if v.origin() == Some("TodoWrite") && !desc.is_empty() => desc,
        None if desc.is_empty() => v.id.to_string(),
        None => format!("{} ({desc})", v.id),
    };
    format!("{} [{}]", crate::display::line(&name), v.status.as_str())
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
