//! `taskhook execute init`: a new run from `--layer NAME=ID,ID` flags or a JSON plan file,
//! every task pending, written in the seed's format; a folder outside `docs/tasks/` is added to
//! `.claude/taskhook.json` so the hooks find it.

use std::path::{Component, Path, PathBuf};

use serde::Deserialize;
use serde_json::{json, Map, Value};

use super::derive::derive;
use super::model::State;
use super::save;
use super::state::{self, layer_by_convention, lock_path, state_path, FILE};
use super::NAME;
use crate::context::Ctx;
use crate::error::{Error, Result};
use crate::layouts::json::typed;
use crate::layouts::{name_of, StoreRef};
use crate::project::Project;
use crate::store::check_unit_id;

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

/// A plan file as `read_plan` takes it: any JSON in each field, what is not of use ignored.
#[derive(Deserialize, Default)]
#[serde(default)]
struct PlanFile {
    layers: Value,
    prd_slug: Value,
    project_path: Value,
    worktree_dir: Value,
}

/// One layer of a plan file's `layers` list.
#[derive(Deserialize, Default)]
#[serde(default)]
struct PlanLayer {
    name: Value,
    tasks: Value,
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
    let no_layers = || {
        Error::BadInput(format!(
            "`{}` has no \"layers\" (expected {{\"layers\": {{\"0-setup\": [\"L0-001\"]}}}})",
            path.display()
        ))
    };
    let plan = PlanFile::deserialize(&v).map_err(|_| no_layers())?;
    let ids = |t: &Value| -> Vec<String> {
        t.as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect()
    };
    match &plan.layers {
        Value::Object(m) => init
            .layers
            .extend(m.iter().map(|(k, t)| (k.clone(), ids(t)))),
        Value::Array(a) => init.layers.extend(
            a.iter()
                .filter_map(|l| PlanLayer::deserialize(l).ok())
                .filter_map(|l| Some((l.name.as_str()?.to_string(), ids(&l.tasks)))),
        ),
        _ => return Err(no_layers()),
    }
    for (given, slot) in [
        (&plan.prd_slug, &mut init.prd_slug),
        (&plan.project_path, &mut init.project_path),
        (&plan.worktree_dir, &mut init.worktree_dir),
    ] {
        if slot.is_none() {
            *slot = given.as_str().map(str::to_string);
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
            check_unit_id("task id", id)?;
            if tasks.contains_key(id) {
                return Err(Error::Usage(format!("task {id:?} is listed twice")));
            }
            let mut t =
                json!({"status": "pending", "attempts": 0, "worktree_path": null, "branch": null});
            if layer_by_convention(&layer_names, id).as_ref() != Some(name) {
                crate::layouts::json::ensure_object(&mut t).insert("layer".into(), json!(name));
            }
            tasks.insert(id.clone(), t);
        }
    }
    let project_path = i
        .project_path
        .clone()
        .unwrap_or_else(|| project.root.display().to_string());
    let id = name_of(&dir);
    let slug = i.prd_slug.clone().unwrap_or_else(|| id.clone());
    let now = cx.store.clock().stamp();
    let s = json!({
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
    let before: State = typed(&s).map_err(Error::BadInput)?;
    let mut run = before.clone();
    derive(&before, &mut run, &now);
    let store = StoreRef::new(NAME, id, dir.clone(), &project.root);
    let under_docs = rel.parent() == Some(Path::new("docs/tasks"));
    if !under_docs {
        // Settings that cannot be edited are said before anything is written.
        crate::config::edit(&cx.store, &project.root, |_| {})?;
    }
    cx.store.create_dir_all(&dir)?;
    cx.store.with_lock(&lock_path(&dir), || {
        if cx.store.exists(&file) {
            return Err(Error::Rule(format!("`{}` already exists", file.display())));
        }
        save::save(cx, &store, state::Source::Value(s.clone()), None, &mut run).map(|_| ())
    })?;
    if !under_docs {
        register(cx, project, &rel.join(FILE))?;
    }
    Ok((file, s))
}

/// Adds a state path to `.claude/taskhook.json`'s `execute` list (other keys kept).
fn register(cx: &Ctx, project: &Project, rel: &Path) -> Result<()> {
    let rel = rel.display().to_string();
    crate::config::edit(&cx.store, &project.root, |root| {
        let list = crate::layouts::json::array_at(root, "execute");
        if !list.iter().any(|x| x == rel.as_str()) {
            list.push(json!(rel));
        }
    })
}
