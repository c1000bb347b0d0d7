//! Claims made and ended by hook events: a subagent launched with `<task>` claims its unit
//! for the launching session; SessionEnd gives back what the session held.

use super::reference;
use crate::claims::{self, Claim, Claims, Owner};
use crate::context::Ctx;
use crate::error::Result;
use crate::layouts::{registry, Phase, StoreRef};
use crate::project::Project;

/// The id the claims of `store`'s unit `task` (as this invocation names it) are recorded under
/// ([`crate::layouts::Layout::claim_key`]).
fn key_of(cx: &Ctx, store: &StoreRef, task: &str) -> Result<String> {
    match registry().iter().find(|l| l.name() == store.layout) {
        Some(layout) => layout.claim_key(cx, store, task),
        None => Ok(task.to_string()),
    }
}

/// A subagent launched with `<task>` by `session` took `task` of `store`: the launch is a claim
/// by that session. Refused (the launch is denied) when another session's live claim holds it.
pub fn launched(
    cx: &Ctx,
    project: &Project,
    session: &str,
    store: &StoreRef,
    task: &str,
    check_only: bool,
) -> Result<Option<String>> {
    let Ok(owner) = Owner::session(session) else {
        return Ok(None);
    };
    let path = claims::path(&project.root);
    if check_only {
        if !cx.store.exists(&path) {
            return Ok(None);
        }
        let held = claims::load(cx, &project.root)?;
        let key = key_of(cx, store, task)?;
        return Ok(held
            .of(store.layout, &store.id, &key)
            .filter(|c| c.owner != owner.id && claims::is_live(cx, c))
            .map(|c| {
                format!(
                    "{} is held by {} (lease ends {}); launch a subagent for another unit (taskhook next)",
                    reference(&store.id, task),
                    claims::label(&c.owner),
                    claims::relative(cx, claims::lease_end(cx, c))
                )
            }));
    }
    let key = key_of(cx, store, task)?;
    let lease = claims::lease_seconds(cx, &project.root);
    claims::update(cx, &project.root, |held| {
        if held
            .of(store.layout, &store.id, &key)
            .is_some_and(|c| c.owner == owner.id)
        {
            return Ok(None);
        }
        claims::keep_alive(cx, &owner)?;
        held.put(claims::new_claim(
            cx,
            lease,
            &owner,
            (store.layout, &store.id, &key),
            "launch",
        ));
        Ok(None)
    })
}

/// SessionEnd of `session`: every unit it holds is given back (the layout's release), its
/// claims end. Returns what was released, one line each.
pub fn session_ended(cx: &Ctx, project: &Project, session: &str) -> Result<Vec<String>> {
    if !cx.store.exists(&claims::path(&project.root)) {
        return Ok(Vec::new());
    }
    let held = claims::load(cx, &project.root)?;
    if !held.claims.iter().any(|c| c.owner == session) {
        return Ok(Vec::new());
    }
    claims::update(cx, &project.root, |held| {
        let mine: Vec<Claim> = held
            .claims
            .iter()
            .filter(|c| c.owner == session)
            .cloned()
            .collect();
        let mut said = Vec::new();
        for c in mine {
            held.remove(&c.layout, &c.store, &c.task);
            let Some(layout) = registry().iter().find(|l| l.name() == c.layout) else {
                continue;
            };
            let Some(store) = layout
                .discover(cx, project)?
                .into_iter()
                .find(|s| s.id == c.store)
            else {
                continue;
            };
            let (units, keys) = layout.work_keyed(cx, &store)?;
            let Some(u) = keys
                .iter()
                .position(|k| *k == c.task)
                .and_then(|i| units.get(i))
            else {
                continue;
            };
            let r = reference(&c.store, &u.id);
            if u.phase != Phase::InProgress {
                continue;
            }
            match layout.release(cx, &store, &u.id) {
                Ok(step) => match step.refused {
                    None => {
                        // With team sync on, the give-back is an op by the session.
                        crate::sync::record(
                            cx,
                            project,
                            &store,
                            &c.task,
                            "release",
                            serde_json::Map::new(),
                            Some(session),
                        )?;
                        said.push(format!("{r} released: its session ended"))
                    }
                    Some(why) => said.push(format!("{r}: its session ended; not released ({why})")),
                },
                Err(e) => said.push(format!("{r}: its session ended; {}", e.one_line())),
            }
        }
        Ok(said)
    })
}

/// The claims as this invocation names their units ([`crate::layouts::Layout::work_keyed`]:
/// claude-tasks shows a session its own tasks by Claude Code's numbers), for the SessionStart
/// context. Reads only the stores that hold claims; a store that cannot be read keeps the
/// recorded ids.
pub fn in_view(cx: &Ctx, project: &Project, held: &Claims) -> Claims {
    let mut out = held.clone();
    let mut seen: Vec<(String, String)> = Vec::new();
    for c in &held.claims {
        if !seen.contains(&(c.layout.clone(), c.store.clone())) {
            seen.push((c.layout.clone(), c.store.clone()));
        }
    }
    for (layout_name, store_id) in seen {
        let Some(layout) = registry().iter().find(|l| l.name() == layout_name) else {
            continue;
        };
        let Ok(stores) = layout.discover(cx, project) else {
            continue;
        };
        let Some(store) = stores.into_iter().find(|s| s.id == store_id) else {
            continue;
        };
        let Ok((units, keys)) = layout.work_keyed(cx, &store) else {
            continue;
        };
        for c in out
            .claims
            .iter_mut()
            .filter(|c| c.layout == layout_name && c.store == store_id)
        {
            if let Some(u) = keys
                .iter()
                .position(|k| *k == c.task)
                .and_then(|i| units.get(i))
            {
                c.task = u.id.clone();
            }
        }
    }
    out
}

/// A subagent's signal moved `task` of `store`: when the unit has left "in progress" (finished,
/// failed back to ready, held for a person), its claim ends, as it does after a verb. Nothing
/// is read or written when the project holds no claim.
pub fn settled(cx: &Ctx, project: &Project, store: &StoreRef, task: &str) -> Result<()> {
    if !cx.store.exists(&claims::path(&project.root)) {
        return Ok(());
    }
    let key = key_of(cx, store, task)?;
    if claims::load(cx, &project.root)?
        .of(store.layout, &store.id, &key)
        .is_none()
    {
        return Ok(());
    }
    let Some(layout) = registry().iter().find(|l| l.name() == store.layout) else {
        return Ok(());
    };
    let (units, keys) = layout.work_keyed(cx, store)?;
    let in_progress = keys
        .iter()
        .position(|k| *k == key)
        .is_some_and(|i| units[i].phase == Phase::InProgress);
    if in_progress {
        return Ok(());
    }
    claims::update(cx, &project.root, |held| {
        held.remove(store.layout, &store.id, &key);
        Ok(())
    })
}
