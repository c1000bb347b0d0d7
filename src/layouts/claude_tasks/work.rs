//! The units of a task list for the agent's verbs and the board: every live task in the list's
//! order (the first of a repeated id), with its place among the five phases and what it waits
//! for. One parse of the list; descriptions are read from each task's own bytes.

use std::collections::HashSet;

use super::doc::{load_list, read_text, short};
use super::tasks_path;
use super::view::Status;
use crate::context::Ctx;
use crate::error::Result;
use crate::layouts::{Phase, StoreRef, WorkUnit};

/// Longest title kept (the description's first line).
const TITLE: usize = 80;

/// Every live task of the list, in order: completed ones done, `in_progress` in progress,
/// pending ones ready when every dependency is completed and blocked otherwise (with what they
/// wait for), `blocked` ones blocked.
pub fn work(cx: &Ctx, store: &StoreRef) -> Result<Vec<WorkUnit>> {
    let path = tasks_path(store);
    let root = store.root.display().to_string();
    let text = read_text(cx, &path)?;
    let Some(list) = load_list(&path, &root, text.as_deref())? else {
        return Ok(Vec::new());
    };
    let done: HashSet<&str> = list
        .live()
        .filter(|(_, v)| v.status == Status::Completed)
        .map(|(_, v)| &*v.id)
        .collect();
    let mut first = HashSet::new();
    let mut out = Vec::with_capacity(list.len());
    for (i, v) in list.live() {
        if !first.insert(&*v.id) {
            continue;
        }
        let waits: Vec<String> = v
            .deps
            .iter()
            .filter(|d| !done.contains(&***d))
            .map(|d| d.to_string())
            .collect();
        let (phase, why) = match v.status {
            Status::Completed => (Phase::Done, None),
            Status::InProgress => (Phase::InProgress, None),
            Status::Pending if waits.is_empty() => (Phase::Ready, None),
            _ if !waits.is_empty() => (
                Phase::Blocked,
                Some(format!("waits for {}", waits.join(", "))),
            ),
            _ => (Phase::Blocked, Some(v.status.as_str().to_string())),
        };
        out.push(WorkUnit {
            id: v.id.to_string(),
            title: Some(short(&list.description(i), TITLE)).filter(|t| !t.trim().is_empty()),
            status: v.status.as_str().to_string(),
            phase,
            why,
            deps: v.deps.iter().map(|d| d.to_string()).collect(),
            pass: None,
            since: None,
            group: None,
            parent: None,
        });
    }
    Ok(out)
}
