//! Events to layouts: decides which layouts an event concerns (without I/O when none does),
//! finds their stores, runs each store's handler, and merges the reactions into the one reply
//! Claude Code accepts for that event. Also the store-wide work behind `status`, `validate` and
//! `reconcile`.

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use crate::context::Ctx;
use crate::error::{Error, Result};
use crate::hook::input::{Event, Payload};
use crate::hook::output::{Decision, HookOutput, HookSpecific};
use crate::hook::Outcome;
use crate::layouts::{registry, Layout, Reaction, StoreRef, StoreStatus};
use crate::store::{parse_json, schema, Loaded};

/// Handles one payload across every layout that wants it.
pub fn handle(cx: &Ctx, payload: &Payload) -> Result<Outcome> {
    if matches!(payload.event, Event::Unknown) {
        return Ok(Outcome::default());
    }
    let layouts: Vec<&dyn Layout> = registry()
        .iter()
        .copied()
        .filter(|l| l.wants(payload))
        .collect();
    if layouts.is_empty() {
        return Ok(Outcome::default());
    }
    let project = cx.project_dir(payload.common.cwd.as_deref()).to_path_buf();
    let is_start = matches!(payload.event, Event::SessionStart(_));
    let (reaction, errors) = for_each_store(cx, &project, &layouts, |layout, store| {
        if is_start {
            layout.session_start(cx, store)
        } else {
            layout.on_event(cx, store, payload)
        }
    });
    finish(&payload.name, reaction, errors)
}

/// Runs SessionStart's work for every store of the project (`taskhook reconcile`).
pub fn reconcile(cx: &Ctx) -> Result<(Reaction, Vec<(String, Error)>)> {
    let project = cx.project_dir(None).to_path_buf();
    let layouts: Vec<&dyn Layout> = registry().to_vec();
    Ok(for_each_store(cx, &project, &layouts, |l, s| {
        l.session_start(cx, s)
    }))
}

fn for_each_store(
    cx: &Ctx,
    project: &Path,
    layouts: &[&dyn Layout],
    mut f: impl FnMut(&dyn Layout, &StoreRef) -> Result<Reaction>,
) -> (Reaction, Vec<(String, Error)>) {
    let mut total = Reaction::default();
    let mut errors = Vec::new();
    for &layout in layouts {
        let stores = match layout.discover(cx, project) {
            Ok(s) => s,
            Err(e) => {
                errors.push((layout.name().to_string(), e));
                continue;
            }
        };
        for store in stores {
            match f(layout, &store) {
                Ok(r) => total.merge(r),
                Err(e) => errors.push((format!("{} {}", store.layout, store.id), e)),
            }
        }
    }
    (total, errors)
}

/// Merges reactions into the reply `event` accepts. A store that failed is reported beside the
/// others' results; when nothing else has anything to say, its error becomes the exit-1 error.
fn finish(event: &str, mut r: Reaction, mut errors: Vec<(String, Error)>) -> Result<Outcome> {
    if !errors.is_empty() && r.is_empty() && errors.len() == 1 {
        return Err(errors.remove(0).1);
    }
    for (who, e) in &errors {
        let line = format!("taskhook: {who}: {}", e.one_line());
        if event == "SessionStart" {
            r.context.push(line.clone());
        }
        r.system.push(line);
    }
    let mut out = HookOutput::default();
    let context_allowed = matches!(
        event,
        "SessionStart"
            | "PostToolUse"
            | "PostToolUseFailure"
            | "UserPromptSubmit"
            | "SubagentStart"
    );
    let block_allowed = matches!(event, "PostToolUse" | "SubagentStop" | "Stop");
    if !r.system.is_empty() {
        out.system_message = Some(r.system.join("\n"));
    }
    if block_allowed && !r.block.is_empty() {
        out.decision = Some(Decision::Block);
        out.reason = Some(r.block.join("\n\n"));
    }
    if let Some(reason) = r.halt.filter(|_| event != "SubagentStop") {
        out.continue_ = Some(false);
        out.stop_reason = Some(reason);
    }
    let context = (context_allowed && !r.context.is_empty()).then(|| r.context.join("\n\n"));
    if context.is_some() || !r.extra.is_empty() {
        out.hook_specific_output = Some(HookSpecific {
            hook_event_name: event.to_string(),
            additional_context: context,
            extra: r.extra,
        });
    }
    let refusal = r.refuse.filter(|_| event == "TaskCompleted");
    Ok(Outcome {
        output: (!out.is_empty()).then_some(out),
        refusal,
        changed: Vec::new(),
    })
}

/// Every store of the project with its status; a store that cannot be read reports its problem.
pub fn status(cx: &Ctx) -> Vec<StoreStatus> {
    let project = cx.project_dir(None).to_path_buf();
    let mut out = Vec::new();
    for &layout in registry() {
        match layout.discover(cx, &project) {
            Err(e) => out.push(StoreStatus {
                layout: layout.name(),
                id: String::new(),
                path: project.clone(),
                problems: vec![e.one_line()],
                ..Default::default()
            }),
            Ok(stores) => {
                for store in stores {
                    out.push(layout.status(cx, &store).unwrap_or_else(|e| StoreStatus {
                        layout: store.layout,
                        id: store.id.clone(),
                        path: store.root.clone(),
                        problems: vec![e.one_line()],
                        ..Default::default()
                    }));
                }
            }
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

/// Checks every state file of every store against its schema.
pub fn validate(cx: &Ctx) -> Result<Vec<FileReport>> {
    let project = cx.project_dir(None).to_path_buf();
    let mut out = Vec::new();
    for &layout in registry() {
        for store in layout.discover(cx, &project)? {
            for file in layout.state_files(cx, &store)? {
                let errors = if file.json_lines {
                    check_json_lines(cx, &file.path, file.schema)?
                } else {
                    check_document(cx, &file.path, file.schema)?
                };
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
    Ok(out)
}

/// Checks one JSON document file; a missing file has no errors.
pub fn check_document(cx: &Ctx, path: &Path, schema_name: &str) -> Result<Vec<schema::Issue>> {
    let Some(bytes) = cx.store.read(path)? else {
        return Ok(Vec::new());
    };
    Ok(match parse_json(&bytes) {
        Err(msg) => vec![schema::Issue {
            path: String::new(),
            message: msg,
        }],
        Ok(v) => schema::check(schema_name, &v)?.err().unwrap_or_default(),
    })
}

fn check_json_lines(cx: &Ctx, path: &Path, schema_name: &str) -> Result<Vec<schema::Issue>> {
    let Some(text) = cx.store.read_text(path)? else {
        return Ok(Vec::new());
    };
    let mut issues = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let at = |p: &str| {
            format!(
                "line {}{}{}",
                i + 1,
                if p.is_empty() { "" } else { ": " },
                p
            )
        };
        match serde_json::from_str::<Value>(line) {
            Err(e) => issues.push(schema::Issue {
                path: at(""),
                message: format!("not valid JSON: {e}"),
            }),
            Ok(v) => {
                if let Err(errs) = schema::check(schema_name, &v)? {
                    issues.extend(errs.into_iter().map(|e| schema::Issue {
                        path: at(&e.path),
                        message: e.message,
                    }));
                }
            }
        }
    }
    Ok(issues)
}

/// Loads a state file for a layout under the corrupt-file policy: a valid file is returned; a
/// corrupt one either is moved aside (when the layout can rebuild it: `rebuildable`) or refuses
/// writes with an error naming the fix.
pub fn load_or_refuse(
    cx: &Ctx,
    store: &StoreRef,
    path: &Path,
    schema_name: &str,
    rebuildable: bool,
) -> Result<(Option<Value>, Option<PathBuf>)> {
    match cx.store.load_json(path, schema_name)? {
        Loaded::Missing => Ok((None, None)),
        Loaded::Valid(v) => Ok((Some(v), None)),
        Loaded::Invalid(details) if rebuildable => {
            let _ = details;
            let aside = cx.store.quarantine(path)?;
            Ok((None, Some(aside)))
        }
        Loaded::Invalid(details) => Err(Error::Corrupt {
            path: path.to_path_buf(),
            store: store.root.display().to_string(),
            details,
        }),
    }
}
