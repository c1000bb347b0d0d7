//! What the seed's commands do to a workspace, shared by `taskhook cdd …` and the hooks. Each
//! returns the typed `data` of its `{"success":true,"data":…}` reply ([`super::outcome`]), or a
//! [`Failure`] with its code.
//!
//! Every write happens under the workspace lock (`tasks/.taskhook.lock`) on a fresh read. A move
//! is one rename, then one history line: a kill between the two leaves the file in its new
//! folder without its line, which the next SessionStart records ([`super::reconcile`]).

use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use super::error::{CResult, Code, Failure};
use super::log::{Line, StopState};
use super::model::{not_initialized, read_order, Next, Status, Workspace};
use super::order::{next_rung, Order, Stop, SCHEMA as ORDER_SCHEMA};
use super::outcome::{self, Continued, Data, Escalated, Import, Init, Moved, Started, TaskLine};
use super::{hooks, Folder, Paths, FOLDERS};
use crate::agents;
use crate::context::Ctx;
use crate::error::Error;
use crate::shell::quote;

/// Largest task file copied when an import crosses filesystems.
const MAX_TASK_FILE: usize = 64 * 1024 * 1024;

/// Runs `f` under the workspace lock. When `f` fails, the lock's transaction sees the failure
/// (so whatever it wrote can be undone) and its [`Failure`] comes back with its code.
pub fn locked<T>(cx: &Ctx, paths: &Paths, f: impl FnOnce() -> CResult<T>) -> CResult<T> {
    if !cx.store.is_dir(&paths.tasks) {
        return Err(not_initialized(paths));
    }
    let mut failed = None;
    let out = cx.store.with_lock(&paths.lock, || match f() {
        Ok(v) => Ok(v),
        Err(e) => {
            let msg = e.to_string();
            failed = Some(e);
            Err(Error::Rule(msg))
        }
    });
    match (out, failed) {
        (_, Some(f)) => Err(f),
        (Ok(v), None) => Ok(v),
        (Err(e), None) => Err(e.into()),
    }
}

/// Runs a command's `f` on a fresh read of the workspace under its lock; its `data` gets the
/// workspace's `warnings`.
fn on_workspace<T>(
    cx: &Ctx,
    paths: &Paths,
    f: impl FnOnce(&Workspace) -> CResult<T>,
) -> CResult<Data<T>> {
    locked(cx, paths, || {
        let ws = Workspace::load(cx, paths)?;
        f(&ws).map(|data| ws.warned(data))
    })
}

/// Moves a task's file, falling back to copy-then-remove across filesystems (an import PATH).
fn move_file(cx: &Ctx, from: &Path, to: &Path) -> CResult<()> {
    match cx.store.rename(from, to) {
        Ok(()) => Ok(()),
        Err(Error::Io { source, .. }) if source.kind() == ErrorKind::CrossesDevices => {
            let bytes = cx
                .store
                .read_capped(from, MAX_TASK_FILE)?
                .unwrap_or_default();
            cx.store.replace(to, &bytes)?;
            cx.store.remove(from)?;
            Ok(())
        }
        Err(e) => Err(e.into()),
    }
}

/// The folder of task `name`, which `verb` moves only out of one of `from`.
fn movable(ws: &Workspace, name: &str, verb: &str, from: &[Folder]) -> CResult<Folder> {
    ws.task(name)?;
    let now = match ws.status(name) {
        Status::In(f) => f,
        other => return Err(ws.unusable(name, &other)),
    };
    if from.contains(&now) {
        Ok(now)
    } else {
        Err(wrong(name, now, verb, from))
    }
}

/// One move: the rename, then its history line (`action`, `from`, `to`, and what `more` adds).
fn move_task(
    cx: &Ctx,
    paths: &Paths,
    name: &str,
    (action, from, to): (&str, Folder, Folder),
    more: impl FnOnce(Line) -> Line,
) -> CResult<()> {
    cx.store
        .rename(&paths.file(from, name), &paths.file(to, name))?;
    let line = Line::new(cx, action, name)
        .with("from", from.as_str())
        .with("to", to.as_str());
    more(line).append(cx, &paths.history)
}

fn wrong(name: &str, now: Folder, verb: &str, from: &[Folder]) -> Failure {
    let from: Vec<String> = from.iter().map(|f| format!("{}/", f.as_str())).collect();
    Failure::new(
        Code::WrongStatus,
        format!(
            "{name} is in {}/; `{verb}` moves a task from {}",
            now.as_str(),
            from.join(" or ")
        ),
    )
}

/// Whole seconds since the task's last start (`None` when the history has no start).
fn elapsed(cx: &Ctx, ws: &Workspace, name: &str) -> Option<i64> {
    let started = ws.history.last_start(name)?;
    Some((cx.store.clock().now() - started).num_seconds().max(0))
}

/// `init`: the four status folders, `tmp/` and an empty history; idempotent.
pub fn init(cx: &Ctx, paths: &Paths) -> CResult<Init> {
    let mut created = Vec::new();
    let mut dirs: Vec<PathBuf> = FOLDERS.iter().map(|f| paths.folder(*f)).collect();
    dirs.push(paths.tmp.clone());
    for d in std::iter::once(&paths.tasks).chain(&dirs) {
        if !cx.store.is_dir(d) {
            cx.store.create_dir_all(d)?;
            created.push(d.clone());
        }
    }
    locked(cx, paths, || {
        if !cx.store.exists(&paths.history) {
            cx.store.replace(&paths.history, b"")?;
            created.push(paths.history.clone());
        }
        Ok(())
    })?;
    Ok(Init {
        workspace: paths.ws.clone(),
        tasks: paths.tasks.clone(),
        created,
    })
}

/// `import [PATH]`: the order (PATH, a file or a folder holding order.json; else
/// `tasks/order.json`) becomes `tasks/order.json`, merged with the one there (what is new is
/// added; entries already there stay as they are); each task file not yet in a status folder
/// moves from beside the order (or from `tasks/`) into `pending/`, with one `import` line.
pub fn import(cx: &Ctx, paths: &Paths, source: Option<&Path>) -> CResult<Data<Import>> {
    let src_file = match source {
        None => paths.order.clone(),
        Some(p) if cx.store.is_dir(p) => p.join("order.json"),
        Some(p) => p.to_path_buf(),
    };
    let same = src_file == paths.order;
    let incoming = match read_order(cx, &src_file)? {
        Some(o) => o,
        None if same => {
            return Err(Failure::new(
                Code::NoOrder,
                format!(
                "`{}` does not exist; write the order there (or run `taskhook cdd import PATH`)",
                paths.order.display()
            ),
            ))
        }
        None => {
            return Err(Failure::new(
                Code::NotFound,
                format!("`{}` does not exist", src_file.display()),
            ))
        }
    };
    incoming.check_new_ids(&format!("`{}`", src_file.display()))?;
    // Decided first on what is there (nothing is created for an import that is refused), then
    // again under the lock.
    plan_import(cx, paths, &incoming, &src_file, same)?;
    init(cx, paths)?;
    locked(cx, paths, || {
        let plan = plan_import(cx, paths, &incoming, &src_file, same)?;
        if !same {
            cx.store
                .replace_json(&paths.order, ORDER_SCHEMA, &plan.order.doc())?;
        }
        for (name, from) in &plan.moves {
            move_file(cx, from, &paths.file(Folder::Pending, name))?;
            Line::new(cx, "import", name)
                .with("to", "pending")
                .append(cx, &paths.history)?;
        }
        let data = Import {
            imported: plan.moves.iter().map(|(n, _)| n.clone()).collect(),
            already_imported: plan.already.clone(),
            order: paths.order.clone(),
            tasks: plan.order.tasks().count(),
            stops: plan.order.stops().count(),
        };
        Ok(match &plan.ws {
            Some(ws) => ws.warned(data),
            None => Data::plain(data),
        })
    })
}

/// What an import does: the order it leaves, the files it moves, the tasks already imported.
struct ImportPlan {
    /// The workspace as read, when it has `tasks/`.
    ws: Option<Workspace>,
    order: Order,
    moves: Vec<(String, PathBuf)>,
    already: Vec<String>,
}

fn plan_import(
    cx: &Ctx,
    paths: &Paths,
    incoming: &Order,
    src_file: &Path,
    same: bool,
) -> CResult<ImportPlan> {
    let ws = if cx.store.is_dir(&paths.tasks) {
        Some(Workspace::load(cx, paths)?)
    } else {
        None
    };
    let doc = match ws.as_ref().and_then(|w| w.order.as_ref()) {
        Some(cur) if !same => cur.merged(incoming),
        _ => incoming.doc(),
    };
    let order = Order::parse(doc, "the merged order")?;
    let src_dir = src_file.parent().unwrap_or(Path::new("."));
    let (mut moves, mut already, mut missing) = (Vec::new(), Vec::new(), Vec::new());
    for t in order.tasks() {
        let beside = src_dir.join(&t.name);
        if ws.as_ref().is_some_and(|w| w.files.contains_key(&t.name)) {
            already.push(t.name.clone());
        } else if !same && cx.store.exists(&beside) && !cx.store.is_dir(&beside) {
            moves.push((t.name.clone(), beside));
        } else if ws.as_ref().is_some_and(|w| w.loose.contains(&t.name)) {
            moves.push((t.name.clone(), paths.tasks.join(&t.name)));
        } else {
            missing.push(t.name.clone());
        }
    }
    if !missing.is_empty() {
        return Err(Failure::new(
            Code::TaskFileMissing,
            format!(
                "no file for {} beside `{}` (nor in pending/, in_progress/, completed/, failed/); nothing was imported",
                missing.join(", "),
                src_file.display()
            ),
        ));
    }
    Ok(ImportPlan {
        ws,
        order,
        moves,
        already,
    })
}

/// `next`: the task in progress, else the first pending task or stop not passed, in order; a
/// stop is logged `stop_reached` once.
pub fn next(cx: &Ctx, paths: &Paths) -> CResult<Data<outcome::Next>> {
    let ws = Workspace::load(cx, paths)?;
    let data = match ws.next()? {
        Next::Task(t, f) => outcome::Next::Task(TaskLine::of(&t, f.as_str())),
        Next::Stop(s, state) => {
            if state == StopState::NotReached {
                reach_stop(cx, paths, &s)?;
            }
            outcome::Next::Stop {
                stop: s.id,
                message: s.message,
            }
        }
        Next::Done => outcome::Next::Done,
    };
    Ok(ws.warned(data))
}

/// Logs `stop_reached` for `stop` unless it already has it (re-checked under the lock);
/// returns whether a line was written.
pub fn reach_stop(cx: &Ctx, paths: &Paths, stop: &Stop) -> CResult<bool> {
    locked(cx, paths, || {
        let ws = Workspace::load(cx, paths)?;
        if ws.history.stop_state(&stop.id) != StopState::NotReached {
            return Ok(false);
        }
        Line::new(cx, "stop_reached", &stop.id)
            .with("stop", stop.id.as_str())
            .with_opt("message", stop.message.as_deref())
            .append(cx, &paths.history)?;
        Ok(true)
    })
}

/// `start NAME`: pending → in_progress. Refused while another task is in progress, or while a
/// stop before it has not been passed.
pub fn start(cx: &Ctx, paths: &Paths, name: &str) -> CResult<Data<Started>> {
    on_workspace(cx, paths, |ws| start_in(cx, paths, ws, name))
}

/// `start` on the workspace as read under the lock.
fn start_in(cx: &Ctx, paths: &Paths, ws: &Workspace, name: &str) -> CResult<Started> {
    movable(ws, name, "start", &[Folder::Pending])?;
    let t = ws.task(name)?.clone();
    if let Some(s) = ws.stop_before(&t) {
        return Err(Failure::new(
            Code::StopNotPassed,
            format!(
                "{name} comes after stop {}, which has not been passed; a person runs `taskhook cdd continue {}` first",
                s.id, quote(&s.id)
            ),
        ));
    }
    let mut busy: Vec<&str> = ws
        .files
        .iter()
        .filter(|(_, fs)| fs.contains(&Folder::InProgress))
        .map(|(n, _)| n)
        .collect();
    busy.sort();
    if !busy.is_empty() {
        return Err(Failure::new(
            Code::TaskInProgress,
            format!(
                "{} is already in in_progress/ (one task runs at a time); finish it with `taskhook cdd done`, `fail` or `escalate` first",
                busy.join(", ")
            ),
        ));
    }
    let step = ("start", Folder::Pending, Folder::InProgress);
    move_task(cx, paths, name, step, |l| l)?;
    Ok(Started {
        task: TaskLine::of(&t, "in_progress"),
        from: "pending".into(),
        to: "in_progress".into(),
    })
}

/// `done NAME`: in_progress → completed, with `elapsed_seconds` since its last start.
pub fn done(cx: &Ctx, paths: &Paths, name: &str) -> CResult<Data<Moved>> {
    on_workspace(cx, paths, |ws| done_in(cx, paths, ws, name))
}

/// What a subagent's DONE signal does to its task.
pub enum Finished {
    /// The task was still in pending/ (its launch was not seen) and `start` refused it:
    /// nothing moved.
    NotStarted(Failure),
    /// `done` moved it (after `start`, when it was in pending/); the workspace as it stands
    /// after the moves, under the lock they were made under.
    Done(Box<(Data<Moved>, Workspace)>),
}

/// A subagent's DONE under one hold of the workspace lock: `start` first when the task is
/// still in pending/, then `done`, on one read of the workspace kept in step with the moves.
pub fn finish(cx: &Ctx, paths: &Paths, name: &str) -> CResult<Finished> {
    locked(cx, paths, || {
        let mut ws = Workspace::load(cx, paths)?;
        if ws.status(name) == Status::In(Folder::Pending) {
            if let Err(f) = start_in(cx, paths, &ws, name) {
                return Ok(Finished::NotStarted(f));
            }
            ws.moved(cx, name, Folder::Pending, Folder::InProgress)?;
        }
        let moved = done_in(cx, paths, &ws, name)?;
        ws.moved(cx, name, Folder::InProgress, Folder::Completed)?;
        Ok(Finished::Done(Box::new((ws.warned(moved), ws))))
    })
}

/// `done` on the workspace as read under the lock.
fn done_in(cx: &Ctx, paths: &Paths, ws: &Workspace, name: &str) -> CResult<Moved> {
    movable(ws, name, "done", &[Folder::InProgress])?;
    let secs = elapsed(cx, ws, name);
    let step = ("done", Folder::InProgress, Folder::Completed);
    move_task(cx, paths, name, step, |l| {
        l.with_opt("elapsed_seconds", secs)
    })?;
    Ok(Moved {
        task: name.to_string(),
        from: "in_progress".into(),
        to: "completed".into(),
        elapsed_seconds: secs,
        reason: None,
        level: None,
    })
}

/// Moves a pending or in-progress task to failed/ with a `fail` line.
fn to_failed(
    cx: &Ctx,
    paths: &Paths,
    ws: &Workspace,
    name: &str,
    from: Folder,
    reason: Option<&str>,
) -> CResult<Moved> {
    let secs = (from == Folder::InProgress)
        .then(|| elapsed(cx, ws, name))
        .flatten();
    move_task(cx, paths, name, ("fail", from, Folder::Failed), |l| {
        l.with_opt("elapsed_seconds", secs)
            .with_opt("reason", reason)
    })?;
    Ok(Moved {
        task: name.to_string(),
        from: from.as_str().into(),
        to: "failed".into(),
        elapsed_seconds: secs,
        reason: Some(reason.map(str::to_string)),
        level: None,
    })
}

/// `fail NAME [REASON]`: pending or in_progress → failed.
pub fn fail(cx: &Ctx, paths: &Paths, name: &str, reason: Option<&str>) -> CResult<Data<Moved>> {
    on_workspace(cx, paths, |ws| {
        let now = movable(ws, name, "fail", &[Folder::Pending, Folder::InProgress])?;
        to_failed(cx, paths, ws, name, now, reason)
    })
}

/// `escalate NAME REASON`: one rung up the ladder from the task's model/thinking, written to
/// order.json, the task back to pending/; past level 4, to failed/.
pub fn escalate(cx: &Ctx, paths: &Paths, name: &str, reason: &str) -> CResult<Data<Escalated>> {
    on_workspace(cx, paths, |ws| {
        let now = movable(ws, name, "escalate", &[Folder::Pending, Folder::InProgress])?;
        let t = ws.task(name)?.clone();
        let reason = Some(reason).filter(|r| !r.is_empty());
        let Some((level, model, thinking)) = next_rung(t.model.as_deref(), t.thinking.as_deref())
        else {
            let why = match reason {
                Some(r) => format!("max escalation level reached: {r}"),
                None => "max escalation level reached".to_string(),
            };
            let mut data = to_failed(cx, paths, ws, name, now, Some(&why))?;
            data.level = Some(None);
            return Ok(Escalated::Failed(data));
        };
        if now == Folder::InProgress {
            cx.store.rename(
                &paths.file(Folder::InProgress, name),
                &paths.file(Folder::Pending, name),
            )?;
        }
        let order = ws.order()?;
        cx.store.replace_json(
            &paths.order,
            ORDER_SCHEMA,
            &order.with_pair(name, model, thinking),
        )?;
        let from_thinking = t.thinking.as_deref().unwrap_or("none");
        Line::new(cx, "escalate", name)
            .with_opt("from_model", t.model.as_deref())
            .with("from_thinking", from_thinking)
            .with("to_model", model)
            .with("to_thinking", thinking)
            .with_opt("reason", reason)
            .append(cx, &paths.history)?;
        Ok(Escalated::Up {
            task: name.to_string(),
            level,
            from: now.as_str().into(),
            to: "pending".into(),
            from_model: t.model.as_deref().map(str::to_string),
            from_thinking: from_thinking.to_string(),
            to_model: model.to_string(),
            to_thinking: thinking.to_string(),
            reason: reason.map(str::to_string),
        })
    })
}

/// `continue STOP_ID`: `stop_continue` logged (once); the stop is passed from then on. The
/// main agent's halt at the stop (in `project`'s agents.json) is lifted.
pub fn continue_stop(
    cx: &Ctx,
    paths: &Paths,
    project: &Path,
    id: &str,
) -> CResult<Data<Continued>> {
    let key = hooks::halt_key(paths, id);
    let logged = on_workspace(cx, paths, |ws| {
        if ws.order()?.stop(id).is_none() {
            return Err(Failure::new(
                Code::NotFound,
                format!("{id:?} is not a stop of `{}`", paths.order.display()),
            ));
        }
        if ws.history.stop_state(id) == StopState::Passed {
            return Ok(true);
        }
        Line::new(cx, "stop_continue", id)
            .with("stop", id)
            .append(cx, &paths.history)?;
        Ok(false)
    });
    let lifted = match &logged {
        Ok(_) => agents::lift_halt(cx, project, &key)?,
        // A stop no longer in the order cannot be passed, but its halt must not stay.
        Err(f) if f.code == Code::NotFound => {
            if agents::lift_halt(cx, project, &key)? {
                return Ok(Data::plain(Continued {
                    stop: id.to_string(),
                    passed: false,
                    already_passed: None,
                    halt_lifted: true,
                }));
            }
            false
        }
        Err(_) => false,
    };
    let logged = logged?;
    Ok(Data {
        body: Continued {
            stop: id.to_string(),
            passed: true,
            already_passed: Some(logged.body),
            halt_lifted: lifted,
        },
        warnings: logged.warnings,
    })
}
