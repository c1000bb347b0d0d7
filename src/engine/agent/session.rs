//! Claims made and ended by hook events: a subagent launched with `<task>` claims its unit
//! for the launching session; SessionEnd gives back what the session held.

use super::reference;
use crate::context::Ctx;
use crate::engine::claims::{self, Claim, Owner};
use crate::error::Result;
use crate::layouts::{registry, Phase, StoreRef};
use crate::project::Project;

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
    let lease = claims::lease_seconds(cx, &project.root);
    let path = claims::path(&project.root);
    if check_only {
        if !cx.store.exists(&path) {
            return Ok(None);
        }
        let held = claims::load(cx, &project.root)?;
        return Ok(held
            .of(store.layout, &store.id, task)
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
    claims::update(cx, &project.root, |held| {
        if held
            .of(store.layout, &store.id, task)
            .is_some_and(|c| c.owner == owner.id)
        {
            return Ok(None);
        }
        claims::keep_alive(cx, &owner)?;
        held.put(claims::new_claim(
            cx,
            lease,
            &owner,
            (store.layout, &store.id, task),
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
            let r = reference(&c.store, &c.task);
            let in_progress = layout
                .work(cx, &store)?
                .iter()
                .any(|u| u.id == c.task && u.phase == Phase::InProgress);
            if !in_progress {
                continue;
            }
            match layout.release(cx, &store, &c.task) {
                Ok(step) if step.deny.is_none() => {
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
                Ok(step) => said.push(format!(
                    "{r}: its session ended; not released ({})",
                    step.deny.unwrap_or_default()
                )),
                Err(e) => said.push(format!("{r}: its session ended; {}", e.one_line())),
            }
        }
        Ok(said)
    })
}
