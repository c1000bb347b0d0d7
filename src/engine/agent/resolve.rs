//! Unit names: `STORE/TASK`, `LAYOUT:STORE/TASK` among stores of one name, or a bare `TASK`
//! when only one unit of the project has that id (or only one of those is unfinished).

use super::{reference, shell_quote, Broken, Found};
use crate::error::{Error, Result};
use crate::layouts::{registry, Phase};

/// Where a name led.
pub(crate) struct At {
    pub store: usize,
    pub unit: usize,
}

/// Resolves a unit name (see the module docs); an unknown or ambiguous name is an error that
/// says why (listing the candidates), and one in a store that cannot be read names its problem.
pub(crate) fn resolve(found: &[Found], broken: &[Broken], name: &str) -> Result<At> {
    let name = name.trim();
    if name.is_empty() {
        return Err(Error::Usage("name a unit: STORE/TASK, or TASK".into()));
    }
    // `layout:STORE/TASK` picks among stores of one name in several layouts.
    let (layout, rest) = match name.split_once(':') {
        Some((l, r)) if registry().iter().any(|x| x.name() == l) && r.contains('/') => (Some(l), r),
        _ => (None, name),
    };
    let candidates: Vec<At> = match rest.split_once('/') {
        Some((store, task)) if !store.is_empty() && !task.is_empty() => {
            let stores: Vec<usize> = found
                .iter()
                .enumerate()
                .filter(|(_, f)| f.store.id == store && layout.is_none_or(|l| f.layout.name() == l))
                .map(|(i, _)| i)
                .collect();
            if stores.is_empty() {
                if let Some(b) = broken.iter().find(|b| b.store == store) {
                    return Err(Error::BadInput(format!(
                        "{} {store} cannot be read: {}",
                        b.layout, b.problem
                    )));
                }
                let names: Vec<String> = found
                    .iter()
                    .map(|f| format!("{} ({})", f.store.id, f.layout.name()))
                    .collect();
                return Err(Error::NotFound(if names.is_empty() {
                    format!("no store {store:?}: this project has no store (see `taskhook status`)")
                } else {
                    format!("no store {store:?}; the stores are: {}", names.join(", "))
                }));
            }
            let hits: Vec<At> = stores
                .iter()
                .flat_map(|&s| {
                    found[s]
                        .units
                        .iter()
                        .enumerate()
                        .filter(|(_, u)| u.id == task)
                        .map(move |(u, _)| At { store: s, unit: u })
                })
                .collect();
            if hits.is_empty() {
                return Err(Error::NotFound(format!(
                    "no unit {task:?} in {} {store} (see `taskhook status`)",
                    found[stores[0]].layout.name()
                )));
            }
            hits
        }
        _ => {
            let hits: Vec<At> = found
                .iter()
                .enumerate()
                .flat_map(|(s, f)| {
                    f.units
                        .iter()
                        .enumerate()
                        .filter(|(_, u)| u.id == rest)
                        .map(move |(u, _)| At { store: s, unit: u })
                })
                .collect();
            let open: Vec<&At> = hits
                .iter()
                .filter(|a| found[a.store].units[a.unit].phase != Phase::Done)
                .collect();
            if open.len() == 1 || hits.len() == 1 {
                let one = open.first().copied().unwrap_or(&hits[0]);
                return Ok(At {
                    store: one.store,
                    unit: one.unit,
                });
            }
            if hits.is_empty() {
                let mut msg = format!("no unit {rest:?} in this project (see `taskhook status`)");
                if !broken.is_empty() {
                    let b: Vec<String> = broken
                        .iter()
                        .map(|b| format!("{} {}: {}", b.layout, b.store, b.problem))
                        .collect();
                    msg.push_str(&format!("; stores that cannot be read: {}", b.join("; ")));
                }
                return Err(Error::NotFound(msg));
            }
            hits
        }
    };
    if candidates.len() == 1 {
        let a = &candidates[0];
        return Ok(At {
            store: a.store,
            unit: a.unit,
        });
    }
    let names: Vec<String> = candidates
        .iter()
        .map(|a| {
            let f = &found[a.store];
            let u = &f.units[a.unit];
            let r = reference(&f.store.id, &u.id);
            let dup = found.iter().filter(|g| g.store.id == f.store.id).count() > 1;
            let r = if dup {
                format!("{}:{r}", f.layout.name())
            } else {
                r
            };
            format!("{} ({}, {})", shell_quote(&r), f.layout.name(), u.status)
        })
        .collect();
    Err(Error::BadInput(format!(
        "{name:?} names several units: {}; name one of them",
        names.join(", ")
    )))
}
