//! The summary of a workspace for `status` and the SessionStart context: counts per status, the
//! task in progress, the pending tasks up to the next stop, the stop waiting for a person with
//! the command that passes it, failed tasks, problems, and one line saying what comes next.

use super::log::StopState;
use super::model::{Next, Status, Workspace};
use super::order::{taggable, Item as Entry, Task};
use super::report::problems;
use super::{Folder, NAME};
use crate::layouts::{Item, Summary};
use crate::shell::quote;

fn item(t: &Task) -> Item {
    Item {
        detail: Some(format!(
            "{}{}/{}",
            t.group
                .as_deref()
                .map(|g| format!("{g}, "))
                .unwrap_or_default(),
            t.model.as_deref().unwrap_or("default model"),
            t.thinking.as_deref().unwrap_or("none")
        )),
        ..Item::id(t.name.clone())
    }
}

fn signals(name: &str) -> String {
    format!("<signal>{name}_DONE</signal> (or <signal>{name}_FAILED: why</signal>)")
}

/// What to do with a pending task whose name no tag can carry.
pub fn untaggable(name: &str) -> String {
    format!(
        "no <task> tag can bind a subagent to it and no signal can finish it (its name is not a valid id); rename it, or move it yourself: `taskhook cdd start {}`, then `taskhook cdd done {}`",
        quote(name),
        quote(name)
    )
}

/// Summarizes a workspace as read.
pub fn summarize(ws: &Workspace) -> Summary {
    let paths = &ws.paths;
    let mut out = Summary {
        layout: NAME,
        id: paths.id(),
        path: paths.tasks.clone(),
        current_label: "In progress",
        ..Default::default()
    };
    let Some(order) = &ws.order else {
        out.headline = format!(
            "taskhook · cdd workspace \"{}\" ({}): no order.json yet.",
            out.id,
            paths.tasks.display()
        );
        out.quiet = true;
        return out;
    };
    // Counted by the status's own name, each name copied once.
    let mut counts: std::collections::BTreeMap<&'static str, usize> = Default::default();
    for t in order.tasks() {
        *counts.entry(ws.status_of(t).name()).or_default() += 1;
    }
    out.counts
        .extend(counts.into_iter().map(|(k, n)| (k.to_string(), n)));
    let counts: Vec<String> = out
        .counts
        .iter()
        .map(|(k, v)| format!("{v} {}", k.replace('_', " ")))
        .collect();
    out.headline = format!(
        "taskhook · cdd workspace \"{}\" ({}): {} task(s): {}; {} stop(s).",
        out.id,
        paths.tasks.display(),
        order.tasks().count(),
        counts.join(", "),
        order.stops().count()
    );
    let with = |s: Status| -> Vec<Item> {
        order
            .tasks()
            .filter(|t| ws.status_of(t) == s)
            .map(item)
            .collect()
    };
    out.current = with(Status::In(Folder::InProgress));
    for e in &order.items {
        match e {
            Entry::Stop(s) if ws.history.stop_state(&s.id) != StopState::Passed => break,
            Entry::Task(t) if ws.status_of(t) == Status::In(Folder::Pending) => {
                out.ready.push(item(t))
            }
            _ => {}
        }
    }
    out.more
        .push(("Failed", with(Status::In(Folder::Failed)), true));
    out.more
        .push(("Not imported", with(Status::NotImported), false));
    out.problems = problems(ws);
    let next = match ws.next() {
        Ok(Next::Task(t, Folder::InProgress)) if !taggable(&t.name) => format!(
            "Next: {} is in progress; no signal can finish it (its name is not a valid id): run `taskhook cdd done {}` when its work is done.",
            quote(&t.name),
            quote(&t.name)
        ),
        Ok(Next::Task(t, Folder::InProgress)) => format!(
            "Next: {} is in progress; its subagent ends with {}.",
            t.name,
            signals(&t.name)
        ),
        Ok(Next::Task(t, _)) if !taggable(&t.name) => format!(
            "Next: {} ({}): {}.",
            quote(&t.name),
            item(&t).detail.unwrap_or_default(),
            untaggable(&t.name)
        ),
        Ok(Next::Task(t, _)) => format!(
            "Next: {} ({}): launch a subagent whose prompt holds <task>{}</task>; it ends with {}.",
            t.name,
            item(&t).detail.unwrap_or_default(),
            t.name,
            signals(&t.name)
        ),
        Ok(Next::Stop(s, state)) => {
            let message = s
                .message
                .as_deref()
                .unwrap_or("a manual verification checkpoint");
            out.stops_waiting.push(Item {
                detail: Some(format!(
                    "{message}; a person passes it with `taskhook cdd continue {}`",
                    quote(&s.id)
                )),
                ..Item::id(s.id.clone())
            });
            format!(
                "Next: stop {} ({}): \"{message}\". Start no further task: the orchestrator {} here until a person runs `taskhook cdd continue {}`.",
                s.id,
                if state == StopState::Reached { "reached" } else { "not reached yet" },
                if state == StopState::Reached { "is halted" } else { "halts" },
                quote(&s.id)
            )
        }
        Ok(Next::Done) => "Next: nothing; every task is finished.".into(),
        Err(f) => {
            out.problems.push(f.to_string());
            String::new()
        }
    };
    if !next.is_empty() {
        out.context_extra.push(next);
    }
    out.context_extra.push(
        "Only the orchestrator moves tasks (`taskhook cdd next|start|done|fail|escalate`); a subagent does the task named in its <task> tag and ends with its signal."
            .into(),
    );
    out.quiet = out.current.is_empty()
        && out.ready.is_empty()
        && out.stops_waiting.is_empty()
        && out.problems.is_empty()
        && !out.counts.contains_key("not_imported");
    out
}
