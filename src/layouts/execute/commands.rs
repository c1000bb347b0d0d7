//! What `taskhook execute …` does, so the CLI only parses and prints: create a run, find a
//! store or task, drive the lifecycle by hand (the same step a hook takes), reset a task or the
//! whole run (backup first), and the metrics.

use std::path::{Component, Path, PathBuf};

use serde_json::{json, Map, Value};

use super::derive::derive;
use super::lifecycle::{Event, Failure, Outcome, Who};
use super::state::{self, bak_path, layer_by_convention, lock_path, state_path, task, FILE};
use super::{apply_event, git, git_root, messages, Layout as _, LAYOUT, NAME};
use crate::context::Ctx;
use crate::error::{Error, Result};
use crate::layouts::{Step, StoreRef};
use crate::project::Project;
use crate::signals::split_name;
use crate::store::check_id;

/// The runs of the project.
pub fn stores(cx: &Ctx, project: &Project) -> Result<Vec<StoreRef>> {
    LAYOUT.discover(cx, project)
}

/// The run named by `--store`, or the only one.
pub fn pick_store(cx: &Ctx, project: &Project, name: Option<&str>) -> Result<StoreRef> {
    let all = stores(cx, project)?;
    let ids: Vec<&str> = all.iter().map(|s| s.id.as_str()).collect();
    match name {
        Some(n) => all.iter().find(|s| s.id == n).cloned().ok_or_else(|| {
            Error::NotFound(format!("no execute run {n:?} (runs: {})", or_none(&ids)))
        }),
        None => match all.as_slice() {
            [one] => Ok(one.clone()),
            [] => Err(Error::NotFound(format!(
                "no execute-state.json in {} (create one with `taskhook execute init docs/tasks/SLUG --layer NAME=ID,ID`)",
                project.root.display()
            ))),
            _ => Err(Error::Usage(format!(
                "several execute runs ({}): name one with --store",
                ids.join(", ")
            ))),
        },
    }
}

fn or_none(ids: &[&str]) -> String {
    if ids.is_empty() {
        "none".into()
    } else {
        ids.join(", ")
    }
}

/// The run and task `name` (`ID` or `STORE/ID`) means: the one run listing it (an active task
/// preferred).
pub fn find_task(
    cx: &Ctx,
    project: &Project,
    store: Option<&str>,
    name: &str,
) -> Result<(StoreRef, String)> {
    let n = split_name(name);
    let id = check_id("task id", &n.id)?.to_string();
    let store = n.store.as_deref().or(store);
    let candidates: Vec<StoreRef> = match store {
        Some(s) => vec![pick_store(cx, project, Some(s))?],
        None => stores(cx, project)?,
    };
    let mut hits: Vec<(StoreRef, bool)> = Vec::new();
    for s in candidates {
        let st = state::load(cx, &s)?;
        if let Some(t) = task(&st, &id) {
            hits.push((s, state::is_active(state::status(t))));
        }
    }
    if hits.len() > 1 && hits.iter().filter(|(_, a)| *a).count() == 1 {
        hits.retain(|(_, a)| *a);
    }
    match hits.as_slice() {
        [(s, _)] => Ok((s.clone(), id)),
        [] => Err(Error::NotFound(format!("no execute run lists task {id:?}"))),
        _ => Err(Error::Usage(format!(
            "task {id:?} is in several runs ({}): name it as STORE/{id} or use --store",
            hits.iter()
                .map(|(s, _)| s.id.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

/// What `execute init` creates.
#[derive(Debug, Clone, Default)]
pub struct Init {
    /// The tasks folder (`{tasks_path}`), where execute-state.json goes.
    pub tasks_path: PathBuf,
    pub prd_slug: Option<String>,
    pub project_path: Option<String>,
    pub worktree_dir: Option<String>,
    /// Layers in execution order, each with its task ids.
    pub layers: Vec<(String, Vec<String>)>,
}

/// Reads a plan file: `{"layers": {"NAME": ["ID", …]} | [{"name", "tasks"}], "prd_slug"?,
/// "project_path"?, "worktree_dir"?}`.
pub fn read_plan(cx: &Ctx, path: &Path, init: &mut Init) -> Result<()> {
    let bytes = cx
        .store
        .read_capped(path, 1024 * 1024)?
        .ok_or_else(|| Error::NotFound(format!("no plan file `{}`", path.display())))?;
    let v: Value = serde_json::from_slice(&bytes)
        .map_err(|e| Error::BadInput(format!("`{}` is not a JSON plan: {e}", path.display())))?;
    let ids = |t: &Value| -> Vec<String> {
        t.as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect()
    };
    match &v["layers"] {
        Value::Object(m) => init
            .layers
            .extend(m.iter().map(|(k, t)| (k.clone(), ids(t)))),
        Value::Array(a) => init.layers.extend(
            a.iter()
                .filter_map(|l| Some((l["name"].as_str()?.to_string(), ids(&l["tasks"])))),
        ),
        _ => {
            return Err(Error::BadInput(format!(
                "`{}` has no \"layers\" (expected {{\"layers\": {{\"0-setup\": [\"L0-001\"]}}}})",
                path.display()
            )))
        }
    }
    for (key, slot) in [
        ("prd_slug", &mut init.prd_slug),
        ("project_path", &mut init.project_path),
        ("worktree_dir", &mut init.worktree_dir),
    ] {
        if slot.is_none() {
            *slot = v[key].as_str().map(str::to_string);
        }
    }
    Ok(())
}

/// Creates `{tasks_path}/execute-state.json` (all tasks pending); a folder outside
/// `docs/tasks/` is added to `.claude/taskhook.json`. Returns the file and the state.
pub fn init(cx: &Ctx, project: &Project, i: &Init) -> Result<(PathBuf, Value)> {
    let dir = cx.absolute(&i.tasks_path);
    let rel = dir
        .strip_prefix(&project.root)
        .ok()
        .filter(|r| {
            r.components().all(|c| matches!(c, Component::Normal(_)))
                && r.components().next().is_some()
        })
        .ok_or_else(|| {
            Error::Usage(format!(
                "TASKS_PATH `{}` must be a folder inside the project {} (no `..`)",
                i.tasks_path.display(),
                project.root.display()
            ))
        })?
        .to_path_buf();
    let file = state_path(&dir);
    if cx.store.exists(&file) {
        return Err(Error::Rule(format!(
            "`{}` already exists (see `taskhook execute status`; `taskhook execute reset --all` starts it over)",
            file.display()
        )));
    }
    let layer_names: Vec<String> = i.layers.iter().map(|(l, _)| l.clone()).collect();
    let mut layers = Map::new();
    let mut tasks = Map::new();
    for (name, ids) in &i.layers {
        if name.trim().is_empty() || layers.contains_key(name) {
            return Err(Error::Usage(format!(
                "layer names must be distinct and non-empty ({name:?})"
            )));
        }
        layers.insert(
            name.clone(),
            json!({"status": "pending", "tasks_total": ids.len(), "tasks_completed": 0, "tasks_failed": 0}),
        );
        for id in ids {
            check_id("task id", id)?;
            if tasks.contains_key(id) {
                return Err(Error::Usage(format!("task {id:?} is listed twice")));
            }
            let mut t =
                json!({"status": "pending", "attempts": 0, "worktree_path": null, "branch": null});
            if layer_by_convention(&layer_names, id).as_ref() != Some(name) {
                t["layer"] = json!(name);
            }
            tasks.insert(id.clone(), t);
        }
    }
    let project_path = i
        .project_path
        .clone()
        .unwrap_or_else(|| project.root.display().to_string());
    let slug = match &i.prd_slug {
        Some(s) => s.clone(),
        None => dir
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned(),
    };
    let now = cx.store.clock().stamp();
    let mut s = json!({
        "schema_version": "2.0",
        "prd_slug": slug,
        "project_path": project_path,
        "worktree_dir": i.worktree_dir.clone().unwrap_or_else(|| format!("{project_path}/.worktrees")),
        "tasks_path": dir.display().to_string(),
        "status": "pending",
        "current_layer": layer_names.first(),
        "current_batch": null,
        "started_at": null,
        "updated_at": now,
        "completed_at": null,
        "layers": layers,
        "tasks": tasks,
        "merge_queue": [],
        "metrics": {},
    });
    let before = s.clone();
    derive(&before, &mut s, &now);
    let store = StoreRef {
        layout: NAME,
        id: dir
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned(),
        root: dir.clone(),
    };
    cx.store.create_dir_all(&dir)?;
    cx.store.with_lock(&lock_path(&dir), || {
        if cx.store.exists(&file) {
            return Err(Error::Rule(format!("`{}` already exists", file.display())));
        }
        state::save(cx, &store, &s).map(|_| ())
    })?;
    let under_docs = rel.parent() == Some(Path::new("docs/tasks"));
    if !under_docs {
        register(cx, project, &rel.join(FILE))?;
    }
    Ok((file, s))
}

/// Adds a state path to `.claude/taskhook.json`'s `execute` list (other keys kept).
fn register(cx: &Ctx, project: &Project, rel: &Path) -> Result<()> {
    let path = crate::config::path(&project.root);
    let rel = rel.display().to_string();
    cx.store.create_dir_all(&project.claude_dir())?;
    cx.store.with_lock(&crate::store::lock_path_for(&path), || {
        let mut v: Value = match cx.store.read_capped(&path, 1024 * 1024)? {
            Some(b) => serde_json::from_slice(&b).map_err(|e| {
                Error::BadInput(format!("`{}` is not valid JSON: {e}", path.display()))
            })?,
            None => json!({}),
        };
        let root = crate::layouts::json::ensure_object(&mut v);
        let list = crate::layouts::json::array_at(root, "execute");
        if !list.iter().any(|x| x == rel.as_str()) {
            list.push(json!(rel));
            cx.store.replace(&path, &crate::store::to_pretty(&v))?;
        }
        Ok(())
    })
}

/// A lifecycle event by hand (`start`, `done`, `fail`): the step a hook takes for an unbound
/// report, so instructions go to the person as notices. Returns the task after it and the step.
pub fn by_hand(cx: &Ctx, store: &StoreRef, id: &str, ev: HandEvent) -> Result<(Value, Step)> {
    let (worktree, branch) = match ev {
        HandEvent::Start => super::git_place(cx, store, id),
        _ => (None, None),
    };
    let capped = match &ev {
        HandEvent::Fail {
            message,
            details,
            feedback,
        } => Some((
            super::cap(message),
            details.as_deref().map(super::cap),
            feedback.as_deref().map(super::cap),
        )),
        _ => None,
    };
    let event = match &ev {
        HandEvent::Start => Event::Launch {
            worktree: worktree.as_deref(),
            branch: branch.as_deref(),
        },
        HandEvent::Done => Event::Done,
        HandEvent::Fail { .. } => {
            let (message, details, feedback) = capped.as_ref().map_or(("", None, None), |c| {
                (c.0.as_str(), c.1.as_deref(), c.2.as_deref())
            });
            Event::Failed(Failure {
                message,
                details,
                feedback,
            })
        }
    };
    let Some((out, s)) = apply_event(cx, store, id, event, Who::default())? else {
        return Err(Error::NotFound(format!("{} has no task {id:?}", store.id)));
    };
    let step = messages::reply(store, id, &out, &s);
    if let Some(deny) = &step.deny {
        return Err(Error::Rule(
            deny.trim_start_matches("taskhook: ").to_string(),
        ));
    }
    Ok((task(&s, id).cloned().unwrap_or_default(), step))
}

/// What a person reports by hand.
#[derive(Debug, Clone)]
pub enum HandEvent {
    Start,
    Done,
    Fail {
        message: String,
        details: Option<String>,
        feedback: Option<String>,
    },
}

/// `taskhook execute merged ID`: the task's branch was merged another way.
pub fn merged(cx: &Ctx, store: &StoreRef, id: &str) -> Result<(Value, Vec<String>)> {
    let Some((out, s)) = apply_event(cx, store, id, Event::Merged, Who::default())? else {
        return Err(Error::NotFound(format!("{} has no task {id:?}", store.id)));
    };
    let lines = match out {
        Outcome {
            effect: super::lifecycle::Effect::Merged { was, ahead },
            ..
        } => messages::merged(store, &[(id.to_string(), ahead, was)], &s),
        _ => vec![format!("{id} was already completed; nothing changed.")],
    };
    Ok((task(&s, id).cloned().unwrap_or_default(), lines))
}

/// Copies the state file's bytes to `execute-state.json.bak` (under the caller's lock).
fn backup(cx: &Ctx, store: &StoreRef) -> Result<PathBuf> {
    let bak = bak_path(&store.root);
    let bytes = cx
        .store
        .read_capped(&state_path(&store.root), state::MAX_STATE_BYTES)?
        .unwrap_or_default();
    cx.store.replace(&bak, &bytes)?;
    Ok(bak)
}

/// `reset-task ID`: backup first; then the task is pending with a fresh attempt count, its
/// merge-queue entry removed; its commits, worktree and branch stay, and the rest of its run
/// (status, attempts, errors, retry feedback, merge time) moves to `resets`.
pub fn reset_task(cx: &Ctx, store: &StoreRef, id: &str) -> Result<(PathBuf, Value)> {
    let now = cx.store.clock().stamp();
    cx.store.with_lock(&lock_path(&store.root), || {
        let before = state::load(cx, store)?;
        if task(&before, id).is_none() {
            return Err(Error::NotFound(format!("{} has no task {id:?}", store.id)));
        }
        let bak = backup(cx, store)?;
        let mut s = before.clone();
        if let Some(t) = state::task_mut(&mut s, id) {
            let mut old = Map::new();
            old.insert("reset_at".into(), json!(now));
            for key in [
                "status",
                "attempts",
                "errors",
                "retry_feedback",
                "merged_at",
                "batch",
            ] {
                if let Some(v) = t.shift_remove(key) {
                    old.insert(key.into(), v);
                }
            }
            t.shift_remove("subagent");
            t.insert("status".into(), json!("pending"));
            t.insert("attempts".into(), json!(0));
            crate::layouts::json::array_at(t, "resets").push(Value::Object(old));
        }
        if let Some(q) = s["merge_queue"].as_array_mut() {
            q.retain(|e| e["task_id"] != id);
        }
        derive(&before, &mut s, &now);
        state::save(cx, store, &s)?;
        Ok((bak, task(&s, id).cloned().unwrap_or_default()))
    })
}

/// `reset --all`: backup first; then every task pending with no attempts, commits, errors or
/// worktree, every layer pending, the queue empty, metrics zero. Returns the backup and what
/// git still keeps (worktrees and `worktree-*` branches are git's, left alone).
pub fn reset_all(cx: &Ctx, store: &StoreRef) -> Result<(PathBuf, Vec<String>)> {
    let now = cx.store.clock().stamp();
    let bak = cx.store.with_lock(&lock_path(&store.root), || {
        let current = state::load(cx, store)?;
        let mut counted = current.clone();
        derive(&current, &mut counted, &now);
        let bak = backup(cx, store)?;
        let mut s = counted.clone();
        for (k, v) in [
            ("status", json!("pending")),
            ("current_batch", Value::Null),
            ("started_at", Value::Null),
            ("completed_at", Value::Null),
            ("merge_queue", json!([])),
        ] {
            s[k] = v;
        }
        let order = state::layer_order(&s);
        s["current_layer"] = json!(order.first());
        if let Some(layers) = s["layers"].as_object_mut() {
            for l in layers.values_mut() {
                if let Some(m) = l.as_object_mut() {
                    m.insert("status".into(), json!("pending"));
                    m.insert("tasks_completed".into(), json!(0));
                    m.insert("tasks_failed".into(), json!(0));
                    m.shift_remove("started_at");
                    m.shift_remove("completed_at");
                }
            }
        }
        for id in state::task_ids(&s) {
            if let Some(t) = state::task_mut(&mut s, &id) {
                for key in [
                    "commits",
                    "errors",
                    "retry_feedback",
                    "merged_at",
                    "subagent",
                    "batch",
                    "resets",
                ] {
                    t.shift_remove(key);
                }
                t.insert("status".into(), json!("pending"));
                t.insert("attempts".into(), json!(0));
                t.insert("worktree_path".into(), Value::Null);
                t.insert("branch".into(), Value::Null);
            }
        }
        let total = counted["metrics"]["total_tasks"].clone();
        s["metrics"] = json!({"total_tasks": total, "completed_tasks": 0, "failed_tasks": 0,
            "total_attempts": 0, "total_commits": 0, "elapsed_time_seconds": 0});
        let fresh = s.clone();
        derive(&fresh, &mut s, &now);
        state::save(cx, store, &s)?;
        Ok(bak)
    })?;
    let mut left = Vec::new();
    if let Some(root) = git_root(cx, store) {
        for w in git::worktrees(&root).unwrap_or_default().iter().skip(1) {
            left.push(format!(
                "git keeps worktree {} (remove it with `git worktree remove {}`)",
                w.path, w.path
            ));
        }
        let heads = git::run(
            &root,
            &[
                "for-each-ref",
                "--format=%(refname:short)",
                "refs/heads/worktree-*",
            ],
        )
        .unwrap_or_default();
        for b in heads.lines().filter(|l| !l.is_empty()) {
            left.push(format!(
                "git keeps branch {b} (delete it with `git branch -D {b}`)"
            ));
        }
    }
    Ok((bak, left))
}

/// The metrics and layer counters, recounted (read-only).
pub fn metrics(cx: &Ctx, store: &StoreRef) -> Result<Value> {
    let s = state::load(cx, store)?;
    let mut d = s.clone();
    derive(&s, &mut d, &cx.store.clock().stamp());
    Ok(
        json!({"store": store.id, "metrics": d["metrics"], "layers": d["layers"],
        "status": d["status"], "current_layer": d["current_layer"], "current_batch": d["current_batch"]}),
    )
}
