//! One action on one task as a transaction, for hooks and commands alike: decided on an
//! unlocked read by the pure step ([`super::lifecycle::apply`]); only a change takes the lock,
//! is decided again on a fresh read, and is written with its log entries ([`save::commit`]).

use std::rc::Rc;

use super::files::{self, Change, Paths};
use super::lifecycle::{self, Action, Outcome};
use super::model::{self, Status, Task, TaskList};
use super::save::{self, Committed};
use crate::context::Ctx;
use crate::error::Result;
use crate::layouts::StoreRef;

/// What one action did.
#[derive(Debug, Clone)]
pub struct Acted {
    pub outcome: Outcome,
    /// The task after the action.
    pub task: Option<Task>,
    /// The list after the action.
    pub list: Rc<TaskList>,
    pub committed: Committed,
}

/// Applies `action` to task `id` of the store, under its lock when anything changes.
///
/// The step is a function of the list's bytes and the time, so a change decided on the
/// unlocked read is not decided again under the lock when the file still holds the same bytes
/// (its outcome is taken over); other bytes are read and decided afresh.
pub fn act(cx: &Ctx, store: &StoreRef, id: &str, action: Action<'_>) -> Result<Acted> {
    let p = Paths::of(&store.root);
    let now = cx.store.clock().stamp();
    cx.store.transact_decided(
        &p.lock(),
        |peeked: Option<(files::Tasks, Outcome)>| {
            if let Some((t, out)) = peeked {
                if files::still_holds(cx, &p, &t.doc)? {
                    return Ok((t, out));
                }
            }
            let mut t = files::load(cx, &p)?;
            // A refused action changes nothing (the step's promise), so the list is its own.
            let out = lifecycle::apply(t.list_mut(), &store.id, id, action, &now);
            Ok((t, out))
        },
        |(t, out)| dirty(t, out),
        |pass, (mut t, out)| {
            let mut committed = Committed::default();
            if pass.writes() && dirty(&t, &out) {
                let change = if out.refused.is_some() {
                    Change::default()
                } else {
                    let started = out.to == Some(Status::InProgress) && out.from != out.to;
                    Change {
                        entries: out.entries.clone(),
                        tasks_changed: out.changed,
                        task: Some((
                            id.to_string(),
                            model::name(out.from).to_string(),
                            model::name(out.to).to_string(),
                        )),
                        completions: out.completed.len(),
                        phases: out.phases.clone(),
                        started: started.then(|| id.to_string()),
                    }
                };
                committed = save::commit(cx, &p, &mut t, &change)?;
            }
            let task = t.list.find(id).cloned();
            Ok(Acted {
                outcome: out,
                task,
                list: t.list,
                committed,
            })
        },
    )
}

/// Whether an action's outcome is a change to write (a list restored from checkpoints is one).
fn dirty(t: &files::Tasks, out: &Outcome) -> bool {
    out.changed || !out.entries.is_empty() || t.restored.is_some()
}
