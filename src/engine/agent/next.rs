//! `taskhook next`: the unit an owner should work on now, across every store.

use serde::Serialize;

use super::{reference, stores, then, Broken, Found, Then};
use crate::claims::{self, Claims, Owner};
use crate::context::Ctx;
use crate::error::{Error, Result};
use crate::layouts::{Phase, WorkUnit};
use crate::project::Project;

/// What `next` answers.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Next {
    /// `STORE/TASK`, or `None` when nothing is ready.
    pub unit: Option<String>,
    pub layout: Option<&'static str>,
    pub store: Option<String>,
    pub task: Option<String>,
    pub title: Option<String>,
    pub status: Option<String>,
    /// Why this unit (or, with none, what blocks).
    pub why: String,
    /// The commands to claim, finish or fail it.
    pub then: Option<Then>,
    /// Expired claims found on the way (another session may take them over).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub expired: Vec<String>,
    /// Stores that could not be read.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub broken: Vec<Broken>,
}

/// `taskhook next`: the unit this owner should work on next, across every store (or one).
/// A unit it already holds comes first, then one whose claim expired (to be taken over), then
/// the first ready unit of each store in the layouts' own order; units other owners hold are
/// skipped.
pub fn next(cx: &Ctx, project: &Project, owner: &Owner, only: Option<&str>) -> Result<Next> {
    let (found, broken) = stores(cx, project);
    if let Some(s) = only {
        if !found.iter().any(|f| f.store.id == s) && !broken.iter().any(|b| b.store == s) {
            return Err(Error::NotFound(format!(
                "no store {s:?} (see `taskhook status`)"
            )));
        }
    }
    let held = claims::load(cx, &project.root)?;
    let in_scope = |f: &Found| only.is_none_or(|s| f.store.id == s);
    let claim_of = |f: &Found, i: usize| held.of(f.layout.name(), &f.store.id, f.key(i));
    let mut expired = Vec::new();
    for f in found.iter().filter(|f| in_scope(f)) {
        for (i, u) in f.units.iter().enumerate() {
            if let Some(c) = claim_of(f, i) {
                if c.owner != owner.id && !claims::is_live(cx, c) && u.phase == Phase::InProgress {
                    expired.push(format!(
                        "{} (held by {}, lease ended {})",
                        reference(&f.store.id, &u.id),
                        claims::label(&c.owner),
                        claims::relative(cx, claims::lease_end(cx, c))
                    ));
                }
            }
        }
    }
    let pick = |f: &Found, u: &WorkUnit, why: String, held_by_me: bool| {
        let r = reference(&f.store.id, &u.id);
        Next {
            unit: Some(r.clone()),
            layout: Some(f.layout.name()),
            store: Some(f.store.id.clone()),
            task: Some(u.id.clone()),
            title: u.title.clone(),
            status: Some(u.status.clone()),
            why,
            then: Some(then(&r, held_by_me)),
            expired: expired.clone(),
            broken: broken.clone(),
        }
    };
    // 1. What this owner holds and has not finished.
    for f in found.iter().filter(|f| in_scope(f)) {
        for (i, u) in f.units.iter().enumerate() {
            if u.phase == Phase::Done {
                continue;
            }
            if claim_of(f, i).is_some_and(|c| c.owner == owner.id) {
                let why = match &u.pass {
                    Some(p) => format!("you hold it, and it owes {p}"),
                    None => format!("you hold it ({})", u.status),
                };
                return Ok(pick(f, u, why, true));
            }
        }
    }
    // 2. Work another owner left: in progress, its lease ended.
    for f in found.iter().filter(|f| in_scope(f)) {
        for (i, u) in f.units.iter().enumerate() {
            if u.phase != Phase::InProgress {
                continue;
            }
            if let Some(c) = claim_of(f, i).filter(|c| !claims::is_live(cx, c)) {
                let why = format!(
                    "{} left it {} and its lease ended {}; claiming it takes it over",
                    claims::label(&c.owner),
                    u.status,
                    claims::relative(cx, claims::lease_end(cx, c))
                );
                return Ok(pick(f, u, why, false));
            }
        }
    }
    // 3. The first ready unit nobody holds.
    let mut others = Vec::new();
    for f in found.iter().filter(|f| in_scope(f)) {
        for (i, u) in f.units.iter().enumerate() {
            if u.phase != Phase::Ready {
                continue;
            }
            match claim_of(f, i) {
                Some(c) if claims::is_live(cx, c) => others.push(format!(
                    "{} ({})",
                    reference(&f.store.id, &u.id),
                    claims::label(&c.owner)
                )),
                _ => {
                    let why = u
                        .why
                        .clone()
                        .map(|w| format!("ready: {w}"))
                        .unwrap_or_else(|| format!("ready ({} {})", f.layout.name(), f.store.id));
                    return Ok(pick(f, u, why, false));
                }
            }
        }
    }
    Ok(Next {
        unit: None,
        layout: None,
        store: None,
        task: None,
        title: None,
        status: None,
        why: nothing_ready(cx, &found, &held, owner, only, others),
        then: None,
        expired,
        broken,
    })
}

/// Why nothing is ready: what waits for a person, on dependencies, in other owners' hands,
/// or that all is done.
fn nothing_ready(
    cx: &Ctx,
    found: &[Found],
    held: &Claims,
    owner: &Owner,
    only: Option<&str>,
    mut others: Vec<String>,
) -> String {
    let mut person = Vec::new();
    let mut blocked = Vec::new();
    let mut total = 0;
    let mut done = 0;
    for f in found
        .iter()
        .filter(|f| only.is_none_or(|s| f.store.id == s))
    {
        for (i, u) in f.units.iter().enumerate() {
            total += 1;
            let r = reference(&f.store.id, &u.id);
            let with_why = |r: String| match &u.why {
                Some(w) => format!("{r} ({w})"),
                None => r,
            };
            match u.phase {
                Phase::Done => done += 1,
                Phase::Person => person.push(with_why(r)),
                Phase::Blocked => blocked.push(with_why(r)),
                Phase::InProgress => {
                    if let Some(c) = held
                        .of(f.layout.name(), &f.store.id, f.key(i))
                        .filter(|c| c.owner != owner.id && claims::is_live(cx, c))
                    {
                        others.push(format!("{r} ({})", claims::label(&c.owner)));
                    } else {
                        others.push(format!("{r} ({}, no claim)", u.status));
                    }
                }
                Phase::Ready => {}
            }
        }
    }
    if total == 0 {
        return "no store of this project has units (see `taskhook status`)".into();
    }
    if done == total {
        return format!("all {total} units are done");
    }
    let list = |v: &[String]| {
        let mut s: Vec<String> = v.iter().take(5).cloned().collect();
        if v.len() > 5 {
            s.push(format!("and {} more", v.len() - 5));
        }
        s.join(", ")
    };
    let mut parts = Vec::new();
    if !person.is_empty() {
        parts.push(format!("waiting for a person: {}", list(&person)));
    }
    if !others.is_empty() {
        parts.push(format!("held or in progress elsewhere: {}", list(&others)));
    }
    if !blocked.is_empty() {
        parts.push(format!("waiting on other units: {}", list(&blocked)));
    }
    format!(
        "nothing is ready ({done} of {total} done); {}",
        parts.join("; ")
    )
}
