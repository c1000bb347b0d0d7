//! The store-wide work behind SessionStart and the commands `status`, `validate`, `reconcile`
//! and `recover`: every store of every layout in a project.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::agents;
use crate::claims::{self, Claims};
use crate::context::Ctx;
use crate::engine::facts::Start;
use crate::engine::index;
use crate::error::{Error, Result};
use crate::hook::output::Reply;
use crate::layouts::{registry, StoreRef, Summary};
use crate::project::Project;
use crate::store::{check, schema};

/// SessionStart's work (`start`; `None` for `taskhook reconcile`) for every store: what changed
/// and the summary of each active store, as context; failures per store.
pub fn session_start(
    cx: &Ctx,
    project: &Project,
    start: Option<Start>,
) -> (Reply, Vec<(String, Error)>) {
    let (mut reply, mut errors, done) = reconcile(cx, project, start);
    let held = if cx.store.exists(&claims::path(&project.root)) {
        claims::load(cx, &project.root).unwrap_or_else(|e| {
            errors.push(("claims".into(), e));
            Claims::default()
        })
    } else {
        Claims::default()
    };
    let seen: Vec<index::Seen> = done
        .into_iter()
        .filter_map(|r| {
            r.summary.map(|summary| index::Seen {
                summary,
                changes: r.changes,
            })
        })
        .collect();
    let held = if held.claims.is_empty() {
        held
    } else {
        crate::engine::agent::in_view(cx, project, &held)
    };
    reply.context = index::context(cx, &seen, &held, cx.session.as_deref())
        .into_iter()
        .collect();
    (reply, errors)
}

/// What reconciling one store did: its changes, and the problems it could not fix.
#[derive(Debug, Clone, Default)]
pub struct Reconciliation {
    /// `layout id`.
    pub store: String,
    pub changes: Vec<String>,
    /// The store as it is now.
    pub summary: Option<Summary>,
}

impl Reconciliation {
    /// The problems it could not fix.
    pub fn problems(&self) -> &[String] {
        self.summary.as_ref().map_or(&[], |s| &s.problems)
    }

    /// What it says as context on its own (`taskhook reconcile`): the store's summary when it
    /// has something to say or something changed, else each change. SessionStart says it
    /// through the index instead ([`index::context`]).
    pub fn context(&self) -> Vec<String> {
        match &self.summary {
            Some(s) if !s.quiet || !self.changes.is_empty() => vec![s.context(&self.changes)],
            _ => self
                .changes
                .iter()
                .map(|c| format!("{}: {c}.", self.store))
                .collect(),
        }
    }
}

/// Reconciles every store: the reply's messages for the user, the stores that failed, and per
/// store what changed, what it could not fix and its summary (from which [`session_start`]
/// builds the context, and `taskhook reconcile` its report).
pub fn reconcile(
    cx: &Ctx,
    project: &Project,
    start: Option<Start>,
) -> (Reply, Vec<(String, Error)>, Vec<Reconciliation>) {
    let mut reply = Reply::default();
    let mut errors = Vec::new();
    let mut done = Vec::new();
    for &layout in registry() {
        let stores = match layout.discover(cx, project) {
            Ok(s) => s,
            Err(e) => {
                errors.push((layout.name().to_string(), e));
                continue;
            }
        };
        for store in stores {
            match layout.reconcile(cx, &store, start) {
                Ok(mut r) => {
                    if let Some(s) = r.summary.as_mut() {
                        s.flag_invalid_ids();
                    }
                    reply.system.extend(r.tell_user);
                    done.push(Reconciliation {
                        store: format!("{} {}", store.layout, store.id),
                        changes: r.changes,
                        summary: r.summary,
                    });
                }
                Err(e) => errors.push((format!("{} {}", store.layout, store.id), e)),
            }
        }
    }
    (reply, errors, done)
}

/// Every store of the project, summarized; a store that cannot be read reports its problem.
pub fn status(cx: &Ctx, project: &Project) -> Vec<Summary> {
    let mut out = Vec::new();
    for &layout in registry() {
        match layout.discover(cx, project) {
            Err(e) => out.push(Summary::problem(
                layout.name(),
                "",
                project.root.clone(),
                e.one_line(),
            )),
            Ok(stores) => {
                for store in stores {
                    let mut s = layout.summarize(cx, &store).unwrap_or_else(|e| {
                        Summary::problem(store.layout, &store.id, store.root.clone(), e.one_line())
                    });
                    s.flag_invalid_ids();
                    out.push(s);
                }
            }
        }
        match layout.refused(cx, project) {
            Ok(r) => out.extend(r),
            Err(e) => out.push(Summary::problem(
                layout.name(),
                "",
                project.root.clone(),
                e.one_line(),
            )),
        }
    }
    out
}

/// The result of checking one state file.
#[derive(Debug, Clone, Serialize)]
pub struct FileReport {
    pub layout: &'static str,
    pub store: String,
    pub path: PathBuf,
    pub schema: &'static str,
    pub valid: bool,
    /// `(JSON path, message)` per problem; JSONL problems start with `line N`.
    pub errors: Vec<schema::Issue>,
}

/// Checks every state file of every store, and taskhook's own `agents.json`.
pub fn validate(cx: &Ctx, project: &Project) -> Result<Vec<FileReport>> {
    let mut out = Vec::new();
    for &layout in registry() {
        for store in layout.discover(cx, project)? {
            for file in layout.state_files(cx, &store)? {
                let mut errors = if layout.vouches(cx, &file)? {
                    Vec::new()
                } else if file.json_lines {
                    check::json_lines(&cx.store, &file.path, file.schema)?
                } else {
                    check::document(&cx.store, &file.path, file.schema)?
                };
                errors.extend(layout.file_issues(cx, &store, &file)?);
                out.push(FileReport {
                    layout: layout.name(),
                    store: store.id.clone(),
                    path: file.path,
                    schema: file.schema,
                    valid: errors.is_empty(),
                    errors,
                });
            }
        }
    }
    let claims_file = claims::path(&project.root);
    if cx.store.exists(&claims_file) {
        let errors = check::document(&cx.store, &claims_file, claims::SCHEMA)?;
        out.push(FileReport {
            layout: "taskhook",
            store: "claims".into(),
            path: claims_file,
            schema: claims::SCHEMA,
            valid: errors.is_empty(),
            errors,
        });
    }
    let own = agents::path(&project.root);
    if cx.store.exists(&own) {
        let errors = check::document(&cx.store, &own, "taskhook-agents")?;
        out.push(FileReport {
            layout: "taskhook",
            store: "agents".into(),
            path: own,
            schema: "taskhook-agents",
            valid: errors.is_empty(),
            errors,
        });
    }
    Ok(out)
}

/// Finds the store whose folder holds `target`.
pub fn store_at(
    cx: &Ctx,
    project: &Project,
    target: &Path,
) -> Result<(&'static dyn crate::layouts::Layout, StoreRef)> {
    for &layout in registry() {
        for store in layout.discover(cx, project)? {
            if target.starts_with(&store.root) {
                return Ok((layout, store));
            }
        }
    }
    Err(Error::NotFound(format!(
        "no taskhook store at `{}` (see `taskhook status`)",
        target.display()
    )))
}

/// Restores the store holding `target` from what its layout keeps.
pub fn recover(cx: &Ctx, project: &Project, target: &Path) -> Result<String> {
    let (layout, store) = store_at(cx, project, target)?;
    layout.recover(cx, &store)
}
