//! Every change to a list goes through [`update`]: read the file once, unlocked; parse it once
//! ([`List`]); make the change in place; check, recompute and stamp ([`super::pipeline`]). A
//! change that changes nothing ends there: no lock, no write. Otherwise the sidecar lock is
//! taken and the file compared with what was read (chunk by chunk, no second copy): when it is
//! the same, the parsed, changed list is written as it is (no second parse); when another
//! writer got there first, the file is read again and the change made on what is there now. Only the tasks re-serialised are checked before the write (the
//! typed check of [`super::view`], never looser than the item schema, else the schema itself);
//! the rest were vouched for when the file was read, and `taskhook validate` checks the whole
//! file. The write itself does not read the old file again (it is known to differ).
//!
//! On top of it: seed 002's TodoWrite / TodoRead as `taskhook tasks write|read` (completing
//! tasks is in [`super::complete`](mod@super::complete)).

use std::collections::HashMap;
use std::path::Path;

use serde::Deserialize;
use serde_json::{json, Map, Value};

use super::doc::*;
use super::list::List;
use super::pipeline::{check_graph, finalize, Outcome};
use super::scope::Keys;
use super::view::Status;
use super::{FORMAT_VERSION, NAME, STATUSES};
use crate::context::Ctx;
use crate::error::{Error, Result};
use crate::layouts::json::{merge_keys, object_at, set_str};
use crate::layouts::StoreRef;
use crate::store::{lock_path_for, schema};

/// What a write did.
#[derive(Debug, Clone)]
pub struct Applied<T> {
    /// What the change returned, as `finish` made it.
    pub value: T,
    /// Whether the file changed.
    pub changed: bool,
    /// Tasks this change unblocked (all their dependencies now completed), as ids.
    pub unblocked: Vec<String>,
    /// The same, as labels (`id (description)`).
    pub unblocked_labels: Vec<String>,
    /// Tasks blocked again because a dependency was reopened, as labels.
    pub reblocked: Vec<String>,
}

/// Plans a change on a list's text (pure: no I/O): the list after the change, what `change`
/// returned, and what finishing found. `path` and `store_root` name the file in errors.
pub(crate) fn plan<'t, T>(
    path: &Path,
    store_root: &str,
    text: Option<&'t str>,
    (now, keys): (&str, &Keys),
    change: &impl Fn(&mut List<'t>, &str) -> Result<T>,
) -> Result<(List<'t>, T, Outcome)> {
    let mut list = match load_list(path, store_root, text)? {
        Some(l) => {
            check_version(path, &l)?;
            l
        }
        None => List::empty(FORMAT_VERSION, now),
    };
    list.keys = keys.clone();
    let value = change(&mut list, now)?;
    check_graph(&list)?;
    let out = finalize(&mut list, now);
    Ok((list, value, out))
}

/// Refuses a planned list that might not match the schema: every task it re-serialises passes
/// the typed check (never looser than the schema), or the document goes through the schema
/// itself, whose errors refuse the write.
pub(crate) fn check_before_write(path: &Path, list: &List<'_>) -> Result<()> {
    if list.vouched() {
        return Ok(());
    }
    match schema::check(NAME, &list.for_schema())? {
        Ok(()) => Ok(()),
        Err(issues) => Err(Error::SchemaInvalid {
            path: path.to_path_buf(),
            schema: NAME,
            details: schema::summarize(&issues),
        }),
    }
}

/// The bytes a planned list is written as, once checked.
#[cfg(test)]
pub(crate) fn render(path: &Path, list: &List<'_>) -> Result<Vec<u8>> {
    check_before_write(path, list)?;
    Ok(list.to_bytes())
}

fn applied<T, U>(
    list: &List<'_>,
    value: T,
    out: Outcome,
    finish: &impl Fn(&List<'_>, T) -> U,
) -> Applied<U> {
    Applied {
        unblocked_labels: out.unblocked.iter().map(|id| label(list, id)).collect(),
        reblocked: out.reblocked.iter().map(|id| label(list, id)).collect(),
        value: finish(list, value),
        changed: out.changed,
        unblocked: out.unblocked,
    }
}

/// Applies `change(list, now)` to the list of `store` (see the module doc); `finish` turns what
/// it returned into the result, looking at the list as written.
pub fn update<T, U>(
    cx: &Ctx,
    store: &StoreRef,
    change: impl Fn(&mut List<'_>, &str) -> Result<T>,
    finish: impl Fn(&List<'_>, T) -> U,
) -> Result<Applied<U>> {
    let path = tasks_path(store);
    let lock = lock_path_for(&path);
    let now = cx.store.clock().stamp();
    let root = store.root.display().to_string();
    let keys = Keys::of(cx);
    let a = read_text(cx, &path)?;
    let first = match plan(&path, &root, a.as_deref(), (&now, &keys), &change) {
        Ok((list, value, out)) if !out.changed => return Ok(applied(&list, value, out, &finish)),
        Ok(planned) => Some(planned),
        Err(e @ Error::Corrupt { .. }) => return Err(e),
        // Never locked before: a refused first write creates nothing, not even the lock file.
        Err(e) if !cx.store.exists(&lock) => return Err(e),
        Err(_) => None,
    };
    cx.store.with_lock(&lock, || {
        let same = first.is_some()
            && cx
                .store
                .has_content(&path, a.as_deref().map(str::as_bytes))?;
        match first.filter(|_| same) {
            Some((list, value, out)) => commit(cx, &path, list, value, out, &finish),
            None => {
                let b = read_text(cx, &path)?;
                let (list, value, out) = plan(&path, &root, b.as_deref(), (&now, &keys), &change)?;
                commit(cx, &path, list, value, out, &finish)
            }
        }
    })
}

fn commit<T, U>(
    cx: &Ctx,
    path: &Path,
    list: List<'_>,
    value: T,
    out: Outcome,
    finish: &impl Fn(&List<'_>, T) -> U,
) -> Result<Applied<U>> {
    let result = applied(&list, value, out, finish);
    if result.changed {
        check_before_write(path, &list)?;
        // Streamed into the temp file: the new list is never held in memory whole.
        cx.store.replace_streamed(path, &mut |w| {
            let mut out = std::io::BufWriter::with_capacity(1 << 20, w);
            list.write_to(&mut out)?;
            std::io::Write::flush(&mut out)
        })?;
    }
    Ok(result)
}

pub(crate) fn check_version(path: &Path, list: &List<'_>) -> Result<()> {
    match list.version() {
        Some(v) if v > FORMAT_VERSION => Err(Error::Rule(format!(
            "`{}` has format version {v}; this taskhook writes version {FORMAT_VERSION} and will \
             not rewrite it (upgrade taskhook)",
            path.display()
        ))),
        _ => Ok(()),
    }
}

/// Seed 002's TodoWrite parameters (plus `parent_id`), as `taskhook tasks write` takes them.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WriteParams {
    pub id: Option<String>,
    pub description: Option<String>,
    pub status: Option<String>,
    pub dependencies: Option<Vec<String>>,
    /// `Some(None)` is an explicit `null`: clear the assignee.
    #[serde(default, deserialize_with = "present")]
    pub assignee: Option<Option<String>>,
    pub metadata: Option<Map<String, Value>>,
    pub parent_id: Option<String>,
}

pub(crate) fn present<'de, D, T>(d: D) -> std::result::Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    T::deserialize(d).map(Some)
}

pub(crate) fn check_status(s: &str) -> Result<&str> {
    if STATUSES.contains(&s) {
        Ok(s)
    } else {
        Err(Error::BadInput(format!(
            "invalid status {s:?}: expected one of {}",
            STATUSES.join(", ")
        )))
    }
}

/// Most dependencies one write may name.
pub const MAX_DEPENDENCIES: usize = 10_000;

/// Creates or updates one task (seed 002's TodoWrite); returns the task as stored.
pub fn write_task(cx: &Ctx, store: &StoreRef, params: &WriteParams) -> Result<Applied<Value>> {
    if let Some(s) = &params.status {
        check_status(s)?;
    }
    if params
        .dependencies
        .as_ref()
        .is_some_and(|d| d.len() > MAX_DEPENDENCIES)
    {
        return Err(Error::BadInput(format!(
            "a task may be given at most {MAX_DEPENDENCIES} dependencies in one write; nothing \
             was written"
        )));
    }
    let id = match &params.id {
        Some(id) if id.trim().is_empty() => {
            return Err(Error::BadInput("task id must not be empty".into()))
        }
        Some(id) => id.clone(),
        None => uuid::Uuid::new_v4().to_string(),
    };
    let path = tasks_path(store);
    update(
        cx,
        store,
        |list, now| apply_write(list, params, &id, &path, now),
        |list, ()| {
            list.find(&id)
                .map(|i| Value::Object(list.value(i).into_owned()))
                .unwrap_or(Value::Null)
        },
    )
}

/// The change `tasks write` makes, on a parsed list.
pub(crate) fn apply_write(
    list: &mut List<'_>,
    params: &WriteParams,
    id: &str,
    path: &Path,
    now: &str,
) -> Result<()> {
    let existing = list.find(id);
    let i = match existing {
        Some(i) => i,
        None => {
            let Some(desc) = &params.description else {
                return Err(Error::BadInput(format!(
                    "no task {id:?} in `{}`: a new task needs a description",
                    path.display()
                )));
            };
            let status = params.status.as_deref().unwrap_or("pending");
            list.push(new_task(id, desc, status, now))
        }
    };
    let mut deps = None;
    if let Some(given) = &params.dependencies {
        let mut kept: Vec<&String> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for d in given {
            if d == id {
                return Err(Error::Rule(format!(
                    "dependency cycle {id} → {id}: a task cannot depend on itself; nothing was written"
                )));
            }
            if list.find(d).is_none() {
                return Err(Error::Rule(format!(
                    "unknown dependency {d:?} of task {id:?}: no task with that id in `{}`; \
                     nothing was written",
                    path.display()
                )));
            }
            if seen.insert(d) {
                kept.push(d);
            }
        }
        deps = Some(json!(kept));
    }
    if let Some(p) = &params.parent_id {
        if p == id || list.find(p).is_none() {
            return Err(Error::Rule(format!(
                "parent_id {p:?} of task {id:?} is not another task of this list; nothing was written"
            )));
        }
    }
    list.edit(i, |task| {
        if existing.is_some() {
            if let Some(d) = &params.description {
                set_str(task, "description", d);
            }
            if let Some(s) = &params.status {
                set_str(task, "status", s);
            }
        }
        if let Some(list) = deps {
            task.insert("dependencies".into(), list);
        }
        match &params.assignee {
            Some(Some(a)) => set_str(task, "assignee", a),
            Some(None) => {
                task.insert("assignee".into(), Value::Null);
            }
            None => {}
        }
        if let Some(p) = &params.parent_id {
            set_str(task, "parent_id", p);
        }
        if let Some(meta) = &params.metadata {
            merge_keys(object_at(task, "metadata"), meta);
        }
    });
    let status = list.view(i).status;
    // Checked when this write sets the status or the dependencies: a task the mirror recorded
    // as started early can still have its description edited.
    let rule_applies = params.status.is_some() || params.dependencies.is_some();
    if rule_applies && matches!(status, Status::InProgress | Status::Completed) {
        let waiting = unmet(list, id);
        if !waiting.is_empty() {
            return Err(Error::Rule(format!(
                "task {id:?} cannot be {}: its dependencies are not completed: {}; nothing was \
                 written",
                status.as_str(),
                waiting.join(", ")
            )));
        }
    }
    // Seed 002's `blocked` means "waiting for a dependency": refused when nothing is waited for.
    if params.status.as_deref() == Some("blocked") && unmet(list, id).is_empty() {
        let why = if list.view(i).deps.is_empty() {
            "it has no dependencies"
        } else {
            "all of its dependencies are completed"
        };
        return Err(Error::Rule(format!(
            "task {id:?} cannot be blocked: {why}, and seed 002's `blocked` means waiting for a \
             dependency (write `pending` instead); nothing was written"
        )));
    }
    Ok(())
}

/// Seed 002's TodoRead parameters.
#[derive(Debug, Clone, Default)]
pub struct ReadParams {
    pub status: Option<String>,
    pub assignee: Option<String>,
    pub include_completed: bool,
}

/// Seed 002's TodoRead: `{tasks, count, pending_count, in_progress_count, completed_count,
/// blocked_count}`. Completed tasks are left out unless asked for (`include_completed`, or a
/// `status` filter of `completed`); `count` is the number returned, the `*_count`s cover the
/// whole list.
pub fn read_tasks(cx: &Ctx, store: &StoreRef, params: &ReadParams) -> Result<Value> {
    if let Some(s) = &params.status {
        check_status(s)?;
    }
    let path = tasks_path(store);
    let text = read_text(cx, &path)?;
    let list = load_list(&path, &store.root.display().to_string(), text.as_deref())?
        .unwrap_or_else(|| List::empty(FORMAT_VERSION, ""));
    let mut counts: HashMap<Status, usize> = HashMap::new();
    let mut picked = Vec::new();
    let want = params.status.as_deref().map(Status::of);
    for (i, v) in list.live() {
        *counts.entry(v.status).or_default() += 1;
        let keep = want.is_none_or(|s| v.status == s)
            && params
                .assignee
                .as_deref()
                .is_none_or(|a| v.assignee.as_deref() == Some(a))
            && (params.include_completed
                || want == Some(Status::Completed)
                || v.status != Status::Completed);
        if keep {
            picked.push(Value::Object(list.value(i).into_owned()));
        }
    }
    let count = picked.len();
    let mut out = Map::new();
    out.insert("tasks".into(), Value::Array(picked));
    out.insert("count".into(), json!(count));
    for s in [
        Status::Pending,
        Status::InProgress,
        Status::Completed,
        Status::Blocked,
    ] {
        let n = counts.get(&s).copied().unwrap_or(0);
        out.insert(format!("{}_count", s.as_str()), json!(n));
    }
    Ok(Value::Object(out))
}
