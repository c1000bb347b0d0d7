//! `taskhook show`: everything needed to do one unit.

use serde::Serialize;

use super::resolve::resolve;
use super::{claim_view, reference, stores, ClaimView};
use crate::claims;
use crate::context::Ctx;
use crate::error::Result;
use crate::layouts::{Phase, Shown};
use crate::project::Project;

/// What `show` answers.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct ShowOut {
    pub unit: String,
    pub layout: &'static str,
    pub store: String,
    pub task: String,
    pub title: Option<String>,
    pub status: String,
    pub phase: Phase,
    pub why: Option<String>,
    pub deps: Vec<Dep>,
    pub pass: Option<String>,
    pub claim: Option<ClaimView>,
    /// The layout's own sections (description, files, attempts, guardrails, history).
    pub sections: Vec<Section>,
}

/// A dependency and where it stands.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Dep {
    pub task: String,
    pub status: String,
}

/// One labelled section of `show`.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Section {
    pub label: String,
    pub text: String,
}

/// `taskhook show UNIT`.
pub fn show(cx: &Ctx, project: &Project, name: &str) -> Result<ShowOut> {
    let (found, broken) = stores(cx, project);
    let at = resolve(&found, &broken, name)?;
    let f = &found[at.store];
    let u = &f.units[at.unit];
    let held = claims::load(cx, &project.root)?;
    let Shown { sections } = f.layout.show(cx, &f.store, &u.id)?;
    let deps = u
        .deps
        .iter()
        .map(|d| Dep {
            task: d.clone(),
            status: f
                .units
                .iter()
                .find(|x| &x.id == d)
                .map(|x| x.status.clone())
                .unwrap_or_else(|| "unknown".into()),
        })
        .collect();
    Ok(ShowOut {
        unit: reference(&f.store.id, &u.id),
        layout: f.layout.name(),
        store: f.store.id.clone(),
        task: u.id.clone(),
        title: u.title.clone(),
        status: u.status.clone(),
        phase: u.phase,
        why: u.why.clone(),
        deps,
        pass: u.pass.clone(),
        claim: held
            .of(f.layout.name(), &f.store.id, f.key(at.unit))
            .map(|c| claim_view(cx, c)),
        sections: sections
            .into_iter()
            .map(|(label, text)| Section { label, text })
            .collect(),
    })
}
