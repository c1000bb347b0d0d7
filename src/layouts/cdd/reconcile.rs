//! SessionStart for a workspace: the status folders checked against `order.json` and
//! `history.jsonl`, and repaired; each repair is one history line (`"action": "repair"`) and a
//! line of the context. Decided on an unlocked read: a consistent workspace is not locked,
//! and nothing is written.
//!
//! Per task of the order, with F the folders holding its file and H the folder its last history
//! event puts it in:
//!
//! - F = {H}: consistent.
//! - F = {f} ≠ {H}: a move whose history line is missing (a kill between the rename and the
//!   line, or a file moved by hand): the rename is what happened, so the folder stands and the
//!   missing line is recorded. Except when several tasks are in `in_progress/`: one whose
//!   history puts it elsewhere goes back there.
//! - F has several folders: the copy in H stays; the others move to `$CDD_DIR/tmp/` (never
//!   deleted). Without H among them, nothing is moved and the problem is reported.
//! - F empty: a file still in `tasks/` while the history puts it in H moves to H (an import
//!   killed before its rename); a file nowhere is reported.
//!
//! `taskhook recover` sets aside the history lines no event can be read from ([`recover`]).
//!
//! The halts follow the stops: a halt at a stop that has been passed (say, by the seed's own
//! `continue.ts`) is lifted; a stop reached and not passed keeps the orchestrator halted.

use super::hooks::{halt, halt_key};
use super::log::{self, Line, StopState};
use super::model::{read_order, Next, Workspace};
use super::{commands, summary, Folder, Paths};
use crate::agents;
use crate::context::Ctx;
use crate::error::{Error, Result};
use crate::layouts::fact::Start;
use crate::layouts::{unused_path, Reconciled, StoreRef, Summary};
use crate::store::Pass;

/// One repair.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fix {
    /// The file stands in `to`; the line its move lacked is recorded.
    Record {
        task: String,
        from: Option<Folder>,
        to: Folder,
    },
    /// The file moves from `from` (`None`: `tasks/` itself) to the folder the history says.
    Move {
        task: String,
        from: Option<Folder>,
        to: Folder,
        why: &'static str,
    },
    /// A second copy in `folder` moves to `tmp/`; the one in `keep` stays.
    Stray {
        task: String,
        folder: Folder,
        keep: Folder,
    },
}

impl Fix {
    /// What the fix does, for the context and the history line's `reason`.
    pub fn describe(&self) -> String {
        match self {
            Fix::Record { task, from: Some(h), to } => format!(
                "{task} is in {}/ but its last history event put it in {}/ (a move whose history line is missing): recorded it in {}/",
                to.as_str(), h.as_str(), to.as_str()
            ),
            Fix::Record { task, from: None, to } => format!(
                "{task} is in {}/ with no history event: recorded it there",
                to.as_str()
            ),
            Fix::Move { task, from, to, why } => format!(
                "{task} moved from {} to {}/, where its last history event puts it ({why})",
                from.map_or("tasks/".to_string(), |f| format!("{}/", f.as_str())),
                to.as_str()
            ),
            Fix::Stray { task, folder, keep } => format!(
                "{task} was in both {}/ and {}/; its last history event puts it in {}/, so the copy in {}/ moved to tmp/",
                keep.as_str(), folder.as_str(), keep.as_str(), folder.as_str()
            ),
        }
    }
}

/// The repairs a workspace needs.
pub fn plan(ws: &Workspace) -> Vec<Fix> {
    let Some(order) = &ws.order else {
        return Vec::new();
    };
    let running = ws
        .files
        .values()
        .filter(|fs| fs.contains(&Folder::InProgress))
        .count();
    let mut fixes = Vec::new();
    for t in order.tasks() {
        let task = t.name.clone();
        let folders = ws.files.get(&t.name).cloned().unwrap_or_default();
        let h = ws.history.folder_of(&t.name);
        match (&*folders, h) {
            ([f], Some(h)) if *f == h => {}
            ([Folder::InProgress], Some(h)) if running > 1 => fixes.push(Fix::Move {
                task,
                from: Some(Folder::InProgress),
                to: h,
                why: "several tasks were in in_progress/",
            }),
            ([f], h) => fixes.push(Fix::Record {
                task,
                from: h,
                to: *f,
            }),
            ([], Some(h)) if ws.loose.contains(&t.name) => fixes.push(Fix::Move {
                task,
                from: None,
                to: h,
                why: "it was imported but its file was still in tasks/",
            }),
            ([], _) => {}
            (many, Some(h)) if many.contains(&h) => {
                for f in many.iter().filter(|f| **f != h) {
                    fixes.push(Fix::Stray {
                        task: task.clone(),
                        folder: *f,
                        keep: h,
                    });
                }
            }
            _ => {}
        }
    }
    fixes
}

/// Applies the fixes: each is its rename (if any), then its history line.
fn apply(cx: &Ctx, paths: &Paths, fixes: &[Fix]) -> Result<()> {
    for fix in fixes {
        let reason = format!("repair at session start: {}", fix.describe());
        let line = match fix {
            Fix::Record { task, from, to } => Line::new(cx, "repair", task)
                .with_opt("from", from.map(Folder::as_str))
                .with("to", to.as_str()),
            Fix::Move { task, from, to, .. } => {
                let src = match from {
                    Some(f) => paths.file(*f, task),
                    None => paths.tasks.join(task),
                };
                cx.store.rename(&src, &paths.file(*to, task))?;
                Line::new(cx, "repair", task)
                    .with_opt("from", from.map(Folder::as_str))
                    .with("to", to.as_str())
            }
            Fix::Stray { task, folder, .. } => {
                cx.store.create_dir_all(&paths.tmp)?;
                let stamp = cx.store.clock().file_stamp();
                let target = unused_path(cx, |n| {
                    paths
                        .tmp
                        .join(format!("{task}.{}-{stamp}{n}", folder.as_str()))
                });
                cx.store.rename(&paths.file(*folder, task), &target)?;
                Line::new(cx, "repair", task).with("from", folder.as_str())
            }
        };
        line.with("reason", reason).append(cx, &paths.history)?;
    }
    Ok(())
}

/// Lifts the halts of this workspace's stops that have been passed (or left the order), and
/// keeps the orchestrator halted at a stop reached and not passed. Returns what it did.
pub fn sync_halts(cx: &Ctx, ws: &Workspace, project: &std::path::Path) -> Result<Vec<String>> {
    let Some(order) = &ws.order else {
        return Ok(Vec::new());
    };
    let keys = agents::halt_keys(cx, project)?;
    let prefix = halt_key(&ws.paths, "");
    let mut done = Vec::new();
    for key in keys.iter().filter(|k| k.starts_with(&prefix)) {
        let stop = &key[prefix.len()..];
        let passed = order
            .stop(stop)
            .is_none_or(|_| ws.history.stop_state(stop) == StopState::Passed);
        if passed && agents::lift_halt(cx, project, key)? {
            done.push(format!(
                "the halt at stop {stop} was lifted: the stop has been passed"
            ));
        }
    }
    if let Ok(Next::Stop(s, StopState::Reached)) = ws.next() {
        let h = halt(&ws.paths, &s);
        if !keys.contains(&h.key) {
            agents::keep(cx, project, "", &[], &[(h.key, h.message)])?;
            done.push(format!(
                "stop {} was reached and has not been passed: the orchestrator stays halted there",
                s.id
            ));
        }
    }
    Ok(done)
}

/// SessionStart's work for a workspace.
pub fn reconcile(
    cx: &Ctx,
    store: &StoreRef,
    project: &std::path::Path,
    _start: Option<Start>,
) -> Result<Reconciled> {
    let paths = Paths::of_store(store);
    let (fixes, read) = cx.store.transact(&paths.lock, |pass| {
        let ws = match Workspace::load(cx, &paths) {
            Ok(ws) => ws,
            // An unreadable order is reported by the summary; there is nothing to repair from.
            Err(_) => return Ok(((Vec::new(), None), false)),
        };
        let fixes = plan(&ws);
        let temps = if pass.writes() {
            cx.store.clean_stale_temps_of(&paths.order)?
        } else {
            cx.store.stale_temps_of(&paths.order)?
        };
        if pass == Pass::Commit {
            apply(cx, &paths, &fixes)?;
        }
        let dirty = !fixes.is_empty() || !temps.is_empty();
        Ok(((fixes, Some(ws)), dirty))
    })?;
    // A read that needed no repair is what the summary shows (removing taskhook's own temp
    // files changes no listing: their names are no task's); after repairs, a fresh one.
    let ws = match read.filter(|_| fixes.is_empty()) {
        Some(ws) => Ok(ws),
        None => Workspace::load(cx, &paths),
    };
    let ws = match ws {
        Ok(ws) => ws,
        Err(f) => {
            return Ok(Reconciled {
                summary: Some(Summary::problem(
                    super::NAME,
                    &store.id,
                    store.root.clone(),
                    f.to_string(),
                )),
                ..Default::default()
            })
        }
    };
    let mut changes: Vec<String> = fixes.iter().map(Fix::describe).collect();
    let tell_user = changes
        .iter()
        .map(|c| format!("taskhook: cdd {}: repaired: {c}", store.id))
        .collect();
    changes.extend(sync_halts(cx, &ws, project).map_err(|e| {
        Error::Rule(format!(
            "keeping the halts in step with the stops: {}",
            e.one_line()
        ))
    })?);
    Ok(Reconciled {
        summary: Some(summary::summarize(&ws)),
        changes,
        tell_user,
    })
}

/// `taskhook recover` for a workspace: the history lines no event can be read from (not UTF-8,
/// a NUL byte, not JSON) move, as they are, to `history.jsonl.corrupt-<time>` beside it, and
/// history.jsonl keeps the others (replaced atomically, under the lock). order.json, of which
/// taskhook keeps no copy, is only checked.
pub fn recover(cx: &Ctx, store: &StoreRef) -> Result<String> {
    let paths = Paths::of_store(store);
    let would = cx.store.is_dry_run();
    let said = commands::locked(cx, &paths, || {
        let bytes = cx
            .store
            .read_capped(&paths.history, log::MAX_BYTES)?
            .unwrap_or_default();
        let (mut keep, mut aside, mut which, mut kept) = (Vec::new(), Vec::new(), Vec::new(), 0);
        for (i, line) in log::lines(&bytes).enumerate() {
            let to = match log::read_line(line) {
                Err(bad) => {
                    which.push(format!("{}: {}", i + 1, bad.as_str()));
                    &mut aside
                }
                Ok(_) => {
                    kept += 1;
                    &mut keep
                }
            };
            to.extend_from_slice(line);
            to.push(b'\n');
        }
        if which.is_empty() {
            return Ok(
                "history.jsonl has no line taskhook cannot read; nothing to recover".to_string(),
            );
        }
        let stamp = cx.store.clock().file_stamp();
        let target = unused_path(cx, |n| {
            paths
                .tasks
                .join(format!("history.jsonl.corrupt-{stamp}{n}"))
        });
        // The lines set aside are written first: a kill between the two writes leaves them
        // twice, never nowhere.
        cx.store.replace(&target, &aside)?;
        cx.store.replace(&paths.history, &keep)?;
        let (moved, keeps) = if would {
            ("would move", "would keep")
        } else {
            ("moved", "keeps")
        };
        Ok(format!(
            "{moved} {} line(s) of history.jsonl that taskhook cannot read ({}) to `{}`; history.jsonl {keeps} its {kept} other line(s)",
            which.len(),
            which.join(", "),
            target.display()
        ))
    })?;
    let order = match read_order(cx, &paths.order) {
        Err(f) => format!(
            "; order.json cannot be used and taskhook keeps no copy of it, so fix it by hand: {}",
            f.message
        ),
        Ok(_) => String::new(),
    };
    Ok(format!("cdd {}: {said}{order}", store.id))
}
