//! The claude-tasks layout's units for the agent's verbs and the board
//! ([`crate::layouts::work`]): every task of the list, as the session asking reads it.
//!
//! - **Ids.** A session's own Claude Code tasks are named by Claude Code's numbers (`1`, as its
//!   TaskList shows them), never `1@defa37fe`; another session's keep the mirror's `1@aaaaaaaa`
//!   ("that session's task 1"); every other task its id ([`Keys::shown`](super::scope::Keys::shown)). Claims are recorded
//!   under the mirror's ids, which every session agrees on ([`work_keyed`]).
//! - **Phases.** `completed` is done; `in_progress` in progress; a task waiting for a
//!   dependency that is not completed is blocked, with what it waits for; `pending` (or
//!   `blocked`) with every dependency completed is ready. Another live session's unfinished
//!   tasks are blocked, "session aaaaaaaa's task" ([`Whose::Theirs`], issue 26 item 10); a quiet
//!   or ended session's are left over and offered like anyone's, saying whose they were.
//! - **Order.** Ready tasks first, in the list's order, then the rest in the list's order.
//! - **Transitions**, all through the list's one write path (lock, checks, atomic replace):
//!   `claim` → `in_progress` with `assignee` set to the claimant; `release` → `pending`, the
//!   assignee cleared; a failure → `pending` again with the reason kept in
//!   `metadata.custom_fields.last_failure`. Completion is [`super::hooks`](mod@super::hooks)'s. Each says what
//!   Claude Code's own file needs to agree ([`super::truth`]).

use std::collections::HashSet;

use serde_json::{json, Value};

use super::doc::{custom_fields, label, tasks_path, unmet, with_list};
use super::list::List;
use super::mirror::{body_of, claude_own_dir_of, claude_own_task};
use super::model::Status;
use super::scope::{asking_session, claude_number, Other, Owners, Whose};
use super::truth::{self, kept, Kept};
use super::write::update;
use crate::claims;
use crate::context::Ctx;
use crate::error::Result;
use crate::layouts::json::{set_str, str_field};
use crate::layouts::{Phase, Reaction, Shown, StoreRef, Unit, WorkUnit};

/// Every task (each id once), ready ones first, with the mirror's id of each (the claims' key).
pub fn work_keyed(cx: &Ctx, store: &StoreRef) -> Result<(Vec<WorkUnit>, Vec<String>)> {
    let mut owners = Owners::of(cx, store);
    with_list(cx, store, |list| {
        let Some(list) = list else {
            return (Vec::new(), Vec::new());
        };
        let mut first = HashSet::new();
        let (mut ready, mut rest) = (Vec::new(), Vec::new());
        for (i, v) in list.live() {
            if !first.insert(&*v.id) {
                continue;
            }
            let whose = owners.whose(cx, v);
            let waits = unmet(list, &v.id);
            let (phase, why) = match (&whose, v.status) {
                (_, Status::Completed) => (Phase::Done, None),
                (Whose::Theirs(o), _) => (Phase::Blocked, Some(theirs_why(cx, o))),
                (_, Status::InProgress) => (
                    Phase::InProgress,
                    match (&whose, &v.assignee) {
                        (Whose::Left(o), _) => Some(format!("left by {}", o.describe(cx))),
                        (_, Some(a)) => Some(format!("assignee {a}")),
                        _ => None,
                    },
                ),
                _ if !waits.is_empty() => (
                    Phase::Blocked,
                    Some(format!("waits for {}", waits.join(", "))),
                ),
                (Whose::Left(o), _) => (Phase::Ready, Some(format!("left by {}", o.describe(cx)))),
                _ => (Phase::Ready, None),
            };
            let mut seen = HashSet::new();
            let unit = WorkUnit {
                id: list.shown(i).to_string(),
                title: title(&list.description(i)),
                status: v.status.as_str().to_string(),
                phase,
                why,
                deps: v
                    .deps
                    .iter()
                    .filter(|d| seen.insert(&***d))
                    .map(|d| list.shown_id(d).to_string())
                    .collect(),
                ..Default::default()
            };
            let slot = (unit, v.id.to_string());
            if phase == Phase::Ready {
                ready.push(slot);
            } else {
                rest.push(slot);
            }
        }
        ready.into_iter().chain(rest).unzip()
    })
}

/// Why another live session's task is not the asker's: `session aaaaaaaa's task, not yours to
/// work on; that session was last active 5 min ago`.
fn theirs_why(cx: &Ctx, o: &Other) -> String {
    let mut why = format!("{}'s task, not yours to work on", claims::label(&o.session));
    if let Some(t) = o.seen {
        why.push_str(&format!(
            "; that session was last active {}",
            claims::relative(cx, t)
        ));
    }
    why
}

/// A task's title: the first line of its description (a Claude Code task's subject), cut at
/// 80 characters.
fn title(description: &str) -> Option<String> {
    crate::layouts::work::title_of(description.lines().next().unwrap_or("").trim())
}

/// A task's subject and description, activeForm, owner, whose it is, where it came from, its
/// last failure or done note, and the files (the list, and Claude Code's own file of it).
pub fn show(cx: &Ctx, store: &StoreRef, unit: &str) -> Result<Shown> {
    let mut owners = Owners::of(cx, store);
    let shown = with_list(cx, store, |list| {
        let mut s = Shown::default();
        let Some(list) = list else {
            return s;
        };
        let Some(i) = list.keys.find_shown(list, unit) else {
            return s;
        };
        let task = list.value(i);
        let cf = task
            .get("metadata")
            .and_then(|m| m.get("custom_fields"))
            .cloned()
            .unwrap_or(Value::Null);
        let description = task
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or("");
        match cf.get("subject").and_then(Value::as_str) {
            Some(subject) => {
                s.add("subject", subject);
                s.add("description", body_of(description, subject));
            }
            None => s.add("description", description),
        }
        s.add("active form", str_field(&cf, "activeForm"));
        let v = list.view(i);
        let mut facts = Vec::new();
        if let Some(a) = &v.assignee {
            facts.push(format!("assignee: {a}"));
        }
        match owners.whose(cx, v) {
            Whose::Own => facts.push("session: this session's".into()),
            Whose::Theirs(o) => facts.push(format!("session: {} (live)", o.describe(cx))),
            Whose::Left(o) => facts.push(format!("session: left by {}", o.describe(cx))),
            Whose::Anyone => {}
        }
        if let Some(n) = claude_number(v) {
            facts.push(format!("Claude Code's task: #{n}"));
        }
        let meta = task.get("metadata").cloned().unwrap_or(Value::Null);
        let origin = cf
            .get("origin")
            .and_then(Value::as_str)
            .or_else(|| meta.get("source").and_then(Value::as_str));
        if let Some(o) = origin {
            facts.push(format!("origin: {o}"));
        }
        for key in ["priority", "tags"] {
            match meta.get(key) {
                Some(Value::String(p)) => facts.push(format!("{key}: {p}")),
                Some(Value::Array(a)) if !a.is_empty() => {
                    let t: Vec<&str> = a.iter().filter_map(Value::as_str).collect();
                    facts.push(format!("{key}: {}", t.join(", ")));
                }
                _ => {}
            }
        }
        for key in ["created_at", "updated_at"] {
            if let Some(t) = task.get(key).and_then(Value::as_str) {
                facts.push(format!("{}: {t}", key.replace('_', " ")));
            }
        }
        s.add("facts", facts.join("\n"));
        let dependents: Vec<String> = list
            .live()
            .filter(|(_, d)| d.deps.iter().any(|x| **x == *v.id))
            .map(|(j, d)| format!("{} [{}]", list.shown(j), d.status.as_str()))
            .collect();
        s.add("blocks", dependents.join(", "));
        if let Some(f) = cf.get("last_failure") {
            s.add(
                "last failure",
                format!("{} ({})", str_field(f, "reason"), str_field(f, "at")),
            );
        }
        s.add("done note", str_field(&cf, "done_note"));
        let mut files = format!("list: {}", tasks_path(store).display());
        if let Some(n) = claude_number(v) {
            if let Some(dir) = claude_own_dir_of(cx, v.session()) {
                let path = dir.join(format!("{n}.json"));
                if let Some(own) = claude_own_task(cx, Some(&dir), n) {
                    files.push_str(&format!(
                        "\nClaude Code's own (read-only): {} [{}]",
                        path.display(),
                        str_field(&own, "status")
                    ));
                }
            }
        }
        s.add("files", files);
        s
    })?;
    Ok(shown)
}

/// What a transition of one task did: its label, whether Claude Code keeps it, its status now.
type Moved = std::result::Result<(String, Option<Kept>, &'static str), String>;

/// Applies `edit` to the task the asking session names `unit`, through the list's write path;
/// `edit` refuses (changing nothing) by returning why.
fn transition(
    cx: &Ctx,
    store: &StoreRef,
    unit: &str,
    edit: impl Fn(&mut List<'_>, usize, &str) -> std::result::Result<(), String>,
) -> Result<Moved> {
    let applied = update(
        cx,
        store,
        |list, now| {
            let keys = list.keys.clone();
            let Some(i) = keys.find_shown(list, unit) else {
                return Ok(Err(format!("task list {} has no task {unit}", store.id)));
            };
            let id = list.view(i).id.to_string();
            Ok(edit(list, i, now).map(|()| (i, id)))
        },
        |list, r| {
            r.map(|(i, id)| {
                (
                    label(list, &id),
                    kept(list, i),
                    list.view(i).status.as_str(),
                )
            })
        },
    )?;
    Ok(applied.value)
}

/// A step refused with `why`, or the transition's step with what Claude Code's own file needs.
fn step_of(cx: &Ctx, moved: Moved, mut said: Vec<String>) -> Reaction {
    match moved {
        Err(why) => Reaction::refused(why),
        Ok((_, kept, status)) => {
            let (main, user) = truth::tell(cx, &kept.into_iter().collect::<Vec<_>>(), status);
            said.extend(main);
            Reaction {
                status: Some(status.to_string()),
                tell_main: said,
                tell_user: user,
                ..Default::default()
            }
        }
    }
}

/// Whoever claims: the session asking (`session aaaaaaaa`), else the person (`alice@host`).
fn claimant(cx: &Ctx) -> String {
    match asking_session(cx) {
        Some(s) => claims::label(&s),
        None => claims::Owner::of_command(cx).map_or_else(|_| "someone".into(), |o| o.label()),
    }
}

/// Takes a ready task: `in_progress`, its `assignee` the claimant. Refused while a dependency
/// is not completed, when it is completed, or another live session's.
pub fn claim(cx: &Ctx, store: &StoreRef, unit: &str) -> Result<Reaction> {
    let who = claimant(cx);
    let moved = transition(cx, store, unit, |list, i, _| {
        let v = list.view(i);
        let name = list.shown(i).to_string();
        if v.status == Status::Completed {
            return Err(format!("task {name} is already completed"));
        }
        if let Whose::Theirs(o) = Owners::of(cx, store).whose(cx, v) {
            return Err(format!(
                "task {name} is {}'s ({}); it is not yours to claim",
                claims::label(&o.session),
                o.describe(cx)
            ));
        }
        let id = v.id.to_string();
        let waits = unmet(list, &id);
        if !waits.is_empty() {
            return Err(format!(
                "task {name} waits for {}; nothing changed",
                waits.join(", ")
            ));
        }
        list.edit(i, |t| {
            set_str(t, "status", "in_progress");
            set_str(t, "assignee", &who);
        });
        Ok(())
    })?;
    Ok(step_of(cx, moved, Vec::new()))
}

/// Gives a task back: `in_progress` → `pending` (blocked again if a dependency was reopened
/// meanwhile), its assignee cleared; nothing else changes.
pub fn release(cx: &Ctx, store: &StoreRef, unit: &str) -> Result<Reaction> {
    let moved = transition(cx, store, unit, |list, i, _| {
        let v = list.view(i);
        if v.status != Status::InProgress {
            return Err(format!(
                "task {} is {}, not in progress; nothing to release",
                list.shown(i),
                v.status.as_str()
            ));
        }
        list.edit(i, |t| {
            set_str(t, "status", "pending");
            t.insert("assignee".into(), Value::Null);
        });
        Ok(())
    })?;
    Ok(step_of(cx, moved, Vec::new()))
}

/// A failure (`<signal>1_FAILED: why</signal>`, `taskhook fail`): a task in progress goes back
/// to `pending` with its assignee cleared, and the reason is kept in
/// `metadata.custom_fields.last_failure` (`{"at", "reason"}`), the only place seed 002 has for
/// such text. A completed task is left as it is.
pub fn fail(
    cx: &Ctx,
    store: &StoreRef,
    unit: &str,
    reason: Option<&str>,
    by_subagent: bool,
) -> Result<Reaction> {
    let reason = reason.unwrap_or("").trim();
    let moved = transition(cx, store, unit, |list, i, now| {
        let v = list.view(i);
        if v.status == Status::Completed {
            return Err(format!(
                "task {} is completed; a failure changes nothing",
                list.shown(i)
            ));
        }
        let was_running = v.status == Status::InProgress;
        list.edit(i, |t| {
            if was_running {
                set_str(t, "status", "pending");
                t.insert("assignee".into(), Value::Null);
            }
            custom_fields(t).insert("last_failure".into(), json!({"at": now, "reason": reason}));
        });
        Ok(())
    })?;
    let said = match &moved {
        Ok((label, _, status)) => vec![format!(
            "taskhook: {} task {label} of list {} as FAILED{}; it is {status} now, the reason \
             kept in its metadata.custom_fields.last_failure.",
            if by_subagent {
                "a subagent reported"
            } else {
                "reported"
            },
            store.id,
            if reason.is_empty() {
                String::new()
            } else {
                format!(": {reason}")
            }
        )],
        Err(why) => vec![format!("taskhook: {why} (list {}).", store.id)],
    };
    let mut step = step_of(cx, moved, said.clone());
    if step.refused.is_some() {
        step.tell_main = said;
    }
    Ok(step)
}

/// A subagent launched for `unit`: denied when it is another live session's task (issue 26
/// item 10: sessions do not hand each other work); otherwise nothing changes (the launch is a
/// claim, recorded by the engine).
pub fn launch(cx: &Ctx, store: &StoreRef, unit: &str) -> Result<Reaction> {
    let mut owners = Owners::of(cx, store);
    let deny = with_list(cx, store, |list| {
        let list = list?;
        let i = list.keys.find_shown(list, unit)?;
        let v = list.view(i);
        match owners.whose(cx, v) {
            Whose::Theirs(o) if v.status != Status::Completed => Some(format!(
                "taskhook: task {} of list {} is {}; launch a subagent for a task of this \
                 session (taskhook next).",
                list.shown(i),
                store.id,
                theirs_why(cx, &o)
            )),
            _ => None,
        }
    })?;
    Ok(Reaction {
        refused: deny,
        ..Default::default()
    })
}

/// The units a `<task>` or `<signal>` name may resolve to: each task by the name the session
/// asking reads ([`Keys::shown`](super::scope::Keys::shown)) and by its id.
pub fn names(cx: &Ctx, store: &StoreRef) -> Result<Vec<Unit>> {
    with_list(cx, store, |list| {
        let Some(list) = list else {
            return Vec::new();
        };
        let mut units = Vec::with_capacity(list.len());
        for (i, v) in list.live() {
            let active = v.status != Status::Completed;
            let shown = list.shown(i);
            if shown != v.id {
                units.push(Unit::new(shown, active));
            }
            units.push(Unit::new(&*v.id, active));
        }
        units
    })
}
