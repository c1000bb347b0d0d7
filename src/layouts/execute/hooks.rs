//! The hook glue of the layout: a fact (a launch, a subagent's signal or its stop without one,
//! a commit, a merge, an edit of the state file) made into one lifecycle step under the store's
//! lock, and the step's [`Reaction`] ([`super::messages`]).

use std::path::Path;
use std::rc::Rc;

use super::lifecycle::{self, Event, Failure, Outcome, Who};
use super::model::State;
use super::save;
use super::state::{self, state_path};
use super::{derive, git, git_evidence, git_root, messages, project_root};
use crate::agents;
use crate::context::Ctx;
use crate::error::Result;
use crate::layouts::fact::{Commit, Fact};
use crate::layouts::{Input, Reaction, StoreRef, Turn};
use crate::signals::{split_name, SignalKind};
use crate::store::parsed::Digest;
use crate::store::{check_id, fs};

/// Longest failure message, details or feedback kept, in characters (a subagent may paste a
/// whole test log into `<details>`).
pub const MAX_REPORT_CHARS: usize = 4000;

/// A report cut to [`MAX_REPORT_CHARS`], with a marker where it was cut.
pub fn cap(text: &str) -> String {
    match text.char_indices().nth(MAX_REPORT_CHARS) {
        Some((at, _)) => format!("{}[… truncated by taskhook]", &text[..at]),
        None => text.to_string(),
    }
}

/// One change of the state under the store's lock, decided on an unlocked read first:
/// `change` gets the state as read, a copy to change and the time, and says what to return and
/// whether it changed anything. A change is derived ([`derive::derive`]) and written when the
/// state then differs in more than the clock; no change writes nothing (not even a recount).
/// Returns what `change` said and the state after.
///
/// A change decided on the unlocked read is not decided again under the lock when the file
/// still holds the same bytes (`change` and the derivation are functions of the state and the
/// time): the locked pass takes it over.
pub fn transition<T>(
    cx: &Ctx,
    store: &StoreRef,
    mut change: impl FnMut(&State, &mut State, &str) -> (T, bool),
) -> Result<(T, Rc<State>)> {
    let now = cx.store.clock().stamp();
    cx.store.transact_decided(
        &state::lock_path(&store.root),
        |peeked: Option<Decided<T>>| {
            if let Some(d) = peeked {
                if state::still_known(cx, store, d.digest) {
                    return Ok(d);
                }
            }
            // The state as read is shared with the invocation's other reads; the one copy is
            // the one changed. Its bytes are known by their digest, not held.
            let (digest, before) = state::load_shared(cx, store)?;
            let mut s = (*before).clone();
            let (out, changed) = change(&before, &mut s, &now);
            if changed {
                derive::derive(&before, &mut s, &now);
            }
            let changed = changed && state::differs(&before, &s);
            Ok(Decided {
                digest,
                before,
                after: s,
                out,
                changed,
            })
        },
        |d| d.changed,
        |pass, d| {
            let after = if pass.writes() && d.changed {
                let origin = save::Origin::Known(d.digest);
                save::save_owned(cx, store, origin, Some(&d.before), d.after)?
            } else {
                Rc::new(d.after)
            };
            Ok((d.out, after))
        },
    )
}

/// A state change worked out by [`transition`]: what it was read from, the state before and
/// after, what `change` said, and whether it changes the state in more than the clock.
struct Decided<T> {
    digest: Digest,
    before: Rc<State>,
    after: State,
    out: T,
    changed: bool,
}

/// Applies one lifecycle event to a task under the lock (decided on an unlocked read first);
/// returns the outcome and the state after, `None` when the store has no such task.
pub fn apply_event(
    cx: &Ctx,
    store: &StoreRef,
    id: &str,
    ev: Event<'_>,
    who: Who<'_>,
) -> Result<Option<(Outcome, Rc<State>)>> {
    let (out, s) = transition(cx, store, |before, s, now| {
        if before.task(id).is_none() {
            return (None, false);
        }
        let out = lifecycle::step(s, id, ev, who, now);
        // A refused or empty step writes nothing (not even a recount).
        let changed = !matches!(
            out.effect,
            lifecycle::Effect::Denied(_)
                | lifecycle::Effect::Unchanged
                | lifecycle::Effect::NotVerification { .. }
        );
        (Some(out), changed)
    })?;
    Ok(out.map(|o| (o, s)))
}

/// Where git has the task's worktree (`.worktrees/ID`, or under the state's `worktree_dir`) and
/// its `worktree-ID` branch, for a launch.
pub(super) fn git_place(cx: &Ctx, store: &StoreRef, id: &str) -> (Option<String>, Option<String>) {
    let Some(root) = git_root(cx, store).filter(|_| check_id("task id", id).is_ok()) else {
        return (None, None);
    };
    let Some(worktrees) = git::worktrees(&root) else {
        return (None, None);
    };
    let dir = state::load_shared(cx, store)
        .ok()
        .and_then(|(_, s)| s.worktree_dir.clone());
    let wanted = format!("worktree-{id}");
    let found = worktrees.iter().skip(1).find(|w| {
        let p = Path::new(&w.path);
        p.ends_with(Path::new(".worktrees").join(id))
            || dir.as_ref().is_some_and(|d| p == Path::new(d).join(id))
    });
    let branch = match found.and_then(|w| w.branch.clone()) {
        Some(b) if b == wanted => Some(b),
        _ => git::has_branch(&root, &wanted).then_some(wanted),
    };
    (found.map(|w| w.path.clone()), branch)
}

/// The task a commit belongs to: by its branch (the task's `branch`, or `worktree-ID`), else by
/// the subagent's binding, else the one task its message names.
fn commit_task(
    state: &State,
    store: &StoreRef,
    c: &Commit<'_>,
    bound: &[String],
) -> Option<String> {
    if let Some(id) = c
        .branch
        .as_deref()
        .and_then(|b| git_evidence::task_of_branch(state, b))
    {
        return Some(id);
    }
    let mut from_binding = bound.iter().filter_map(|name| {
        let n = split_name(name);
        let here = n.store.as_deref().is_none_or(|s| s == store.id);
        (here && state.tasks.contains_key(&n.id)).then_some(n.id)
    });
    if let (Some(one), None) = (from_binding.next(), from_binding.next()) {
        return Some(one);
    }
    git_evidence::named_task(state, &c.message)
}

fn record_commit(cx: &Ctx, store: &StoreRef, c: &Commit<'_>) -> Result<Reaction> {
    let bound = match c.agent_id {
        Some(a) => agents::binding(cx, &project_root(cx, store), a).unwrap_or_default(),
        None => Vec::new(),
    };
    transition(cx, store, |before, s, now| {
        let Some(id) = commit_task(before, store, c, &bound) else {
            return ((), false);
        };
        if !lifecycle::record_commit(s, &id, &c.hash, None, now) {
            return ((), false);
        }
        if let Some(b) = c
            .branch
            .as_deref()
            .filter(|b| *b == format!("worktree-{id}"))
        {
            if s.task(&id).and_then(|t| t.branch.non_empty()).is_none() {
                let wt = project_root(cx, store).join(".worktrees").join(&id);
                let wt = (check_id("task id", &id).is_ok() && fs::is_file(&wt.join(".git")))
                    .then(|| wt.display().to_string());
                lifecycle::record_worktree(s, &id, wt.as_deref(), Some(b));
            }
        }
        ((), true)
    })?;
    Ok(Reaction::default())
}

fn record_merge(cx: &Ctx, store: &StoreRef, branches: &[String]) -> Result<Reaction> {
    let (done, after) = transition(cx, store, |_, s, now| {
        let mut done = Vec::new();
        for b in branches {
            let Some(id) = git_evidence::task_of_branch(s, b) else {
                continue;
            };
            let o = lifecycle::step(s, &id, Event::Merged, Who::default(), now);
            if let lifecycle::Effect::Merged { was, ahead } = o.effect {
                done.push((id, ahead, was));
            }
        }
        let changed = !done.is_empty();
        (done, changed)
    })?;
    Ok(Reaction {
        context: messages::merged(store, &done, &after),
        ..Default::default()
    })
}

/// After an edit of the store's state file (Claude's Write or Edit tool: the seed's skill
/// writing it), a valid state is copied as the latest ([`state::LAST_GOOD`]); an invalid one is
/// the edit check's to report, and leaves the copy as it was.
fn copy_after_edit(cx: &Ctx, store: &StoreRef, edited: &Path) -> Result<Reaction> {
    let path = state_path(&store.root);
    if edited != path {
        return Ok(Reaction::default());
    }
    cx.store.transact(&state::lock_path(&store.root), |pass| {
        // Read as a stream and known by its digest: the copy is compared, and written, from
        // the file as it is read (never held).
        let Ok((digest, _)) = state::read_shared(cx, &path)? else {
            return Ok(((), false));
        };
        if save::copy_is_known(cx, store, digest) {
            return Ok(((), false));
        }
        if pass.writes() {
            save::refresh_copy_known(cx, store, digest)?;
        }
        Ok(((), true))
    })?;
    Ok(Reaction::default())
}

/// A launch or a subagent's report for task `unit`, as one lifecycle step.
pub fn step(
    cx: &Ctx,
    store: &StoreRef,
    unit: &str,
    input: Input<'_>,
    turn: &Turn<'_>,
) -> Result<Reaction> {
    let details = turn.message.details.as_deref().map(cap);
    let feedback = turn.message.feedback.as_deref().map(cap);
    let message = match input {
        Input::Signal(SignalKind::Failed, reason) => Some(cap(reason
            .or_else(|| details.as_deref().and_then(|d| d.lines().next()))
            .unwrap_or("failed without a message"))),
        _ => None,
    };
    let (worktree, branch) = match input {
        Input::Launch => git_place(cx, store, unit),
        _ => (None, None),
    };
    let bound_before = match input {
        Input::Launch => {
            let names = [unit.to_string(), format!("{}/{unit}", store.id)];
            agents::agents_bound_to(cx, &project_root(cx, store), &names).unwrap_or_default()
        }
        _ => Vec::new(),
    };
    let ev = match input {
        Input::Launch => Event::Launch {
            worktree: worktree.as_deref(),
            branch: branch.as_deref(),
            bound_before: &bound_before,
        },
        Input::NoSignal => Event::NoSignal,
        Input::Signal(SignalKind::Done, _) => Event::Done,
        Input::Signal(SignalKind::Blocked, reason) => Event::Blocked(reason),
        Input::Signal(SignalKind::Failed, _) => Event::Failed(Failure {
            message: message.as_deref().unwrap_or_default(),
            details: details.as_deref(),
            feedback: feedback.as_deref(),
        }),
    };
    let who = Who {
        bound: turn.bound && input != Input::Launch,
        agent: turn.agent_id,
        by_hand: turn.by_hand,
    };
    match apply_event(cx, store, unit, ev, who)? {
        Some((out, s)) => Ok(messages::reply(
            store,
            unit,
            &out,
            &s,
            messages::Origin::Subagent,
        )),
        None => Ok(Reaction::default()),
    }
}

/// A commit, a merge or an edit of the state file.
pub fn on_fact(cx: &Ctx, store: &StoreRef, fact: &Fact<'_>) -> Result<Reaction> {
    match fact {
        Fact::Commit(c) => record_commit(cx, store, c),
        Fact::Merge(branches) => record_merge(cx, store, branches),
        Fact::Edit(path) => copy_after_edit(cx, store, Path::new(path)),
        _ => Ok(Reaction::default()),
    }
}
