//! Layout `projects` (seed 000): `.claude/projects/{project-id}/` with `project.json`,
//! `tasks.json` (the flat master list, `{"tasks": [...]}`, every level in creation order),
//! `progress/log.md` (append-only audit log), `progress/velocity.json`, `research/{task-id}.md`,
//! `checkpoints/checkpoint-NNN.json` (the last 10) and `temp/.write-{uuid}`.
//!
//! Hooks drive the tasks: a bound subagent's launch starts its task (a parent's launch is
//! denied), its `<signal>ID_DONE|BLOCKED|FAILED</signal>` moves it on, a stop without a signal
//! is a LOOP_ITERATION, a research file written makes it RESEARCHED, PreCompact and SessionEnd
//! write a checkpoint, SessionStart detects stale tasks, reconciles, cleans up and restores a
//! corrupt list. The rooms: [`model`] (the list, pure), [`lifecycle`] (the pure step),
//! [`log`] (the log's format, velocity), [`files`] (every write, the seed's protocol),
//! [`restore`], [`reconcile`], [`hooks`] (transactions and hook replies), [`summary`],
//! [`commands`] (what `taskhook projects …` does).

pub mod commands;
pub mod files;
pub mod hooks;
pub mod lifecycle;
pub mod log;
pub mod model;
pub mod pending;
pub mod reconcile;
pub mod restore;
pub mod summary;
pub mod validate;
pub mod work;

use std::path::{Component, Path, PathBuf};

use crate::context::Ctx;
use crate::error::{Error, Result};
use crate::layouts::fact::{Fact, Start};
use crate::layouts::{
    Input, Layout, Reaction, Reconciled, Shown, StateFile, StoreRef, Summary, Turn, Unit, WorkUnit,
};
use crate::project::Project;
use crate::store::{check_id, parse_checked};

use files::{Paths, SCHEMA_PROJECT, SCHEMA_VELOCITY};
use lifecycle::Action;

/// The layout's name.
pub const NAME: &str = "projects";
/// The schema of tasks.json (and of its checkpoints).
pub const SCHEMA_TASKS: &str = "projects-tasks";

/// The layout.
pub struct Projects;

/// The registered instance.
pub static LAYOUT: Projects = Projects;

/// The folder holding the projects.
pub fn base(project: &Path) -> PathBuf {
    project.join(".claude").join("projects")
}

/// A file of a project an edit can touch.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Touched<'a> {
    /// project.json, tasks.json or progress/velocity.json (checked by the edit rule).
    State,
    /// `research/{task}.md`.
    Research(&'a str),
}

/// Which project file `path` is (`…/.claude/projects/{id}/…`), judged from the path alone.
fn touched(path: &str) -> Option<(&str, Touched<'_>)> {
    let names: Vec<&str> = Path::new(path)
        .components()
        .filter_map(|c| match c {
            Component::Normal(n) => n.to_str(),
            _ => None,
        })
        .collect();
    let at = |from_end: usize| names.len().checked_sub(from_end).map(|i| names[i]);
    let under =
        |depth: usize| at(depth + 1) == Some("projects") && at(depth + 2) == Some(".claude");
    match (at(1)?, at(2)?) {
        ("tasks.json" | "project.json", id) if under(2) => Some((id, Touched::State)),
        ("velocity.json", "progress") if under(3) => Some((at(3)?, Touched::State)),
        (file, "research") if under(3) => {
            let task = file.strip_suffix(".md").filter(|t| !t.is_empty())?;
            Some((at(3)?, Touched::Research(task)))
        }
        _ => None,
    }
}

/// A research file written: PENDING / IN_RESEARCH → RESEARCHED (TASK_RESEARCHED).
fn research_written(cx: &Ctx, store: &StoreRef, path: &str, task: &str) -> Result<Reaction> {
    let p = Paths::of(&store.root);
    let file = Path::new(path);
    let parent = file.parent().unwrap_or(Path::new(""));
    let ours = if file.is_absolute() {
        parent == p.research
    } else {
        p.research.ends_with(parent)
    };
    if !ours || !cx.store.exists(&p.research.join(format!("{task}.md"))) {
        return Ok(Reaction::default());
    }
    let a = hooks::act(cx, store, task, Action::Researched)?;
    let mut r = Reaction::default();
    for msg in a.committed.settled.iter().chain(&a.committed.restored) {
        r.tell_user
            .push(format!("taskhook: projects {}: {msg}", store.id));
    }
    Ok(r)
}

/// PreCompact / SessionEnd (`event`, the reason logged): a checkpoint of tasks.json, unless the
/// newest one holds the same.
/// A change a kill interrupted is settled first, so the checkpoint holds a whole state.
fn checkpoint_now(cx: &Ctx, store: &StoreRef, event: &str) -> Result<Reaction> {
    let p = Paths::of(&store.root);
    cx.store.transact(&p.lock(), |pass| {
        let interrupted = pending::waiting(cx, &p);
        let mut reply = Reaction::default();
        let mut say = |msg: String| reply.tell_user.push(format!("taskhook: projects {}: {msg}", store.id));
        if pass.writes() {
            if let Some(msg) = pending::settle(cx, &p)? {
                say(msg);
            }
        }
        let Some(bytes) = files::read_file(cx, &p.tasks)? else {
            return Ok((reply, interrupted));
        };
        let valid = parse_checked(&bytes, SCHEMA_TASKS)?.is_ok();
        if !valid {
            say(format!(
                "tasks.json is unusable, so no checkpoint was written; the next session start (or `taskhook recover {}`) restores it from the newest valid checkpoint.",
                store.root.display()
            ));
            return Ok((reply, interrupted));
        }
        let ring = p.ring();
        let newest = ring.list(&cx.store)?.pop();
        let same = match &newest {
            Some(cp) => cx.store.read(&cp.path)?.as_deref() == Some(&bytes[..]),
            None => false,
        };
        if same {
            return Ok((reply, interrupted));
        }
        if pass.writes() {
            files::checkpoint(cx, &p, &bytes, event)?;
        }
        Ok((reply, true))
    })
}

impl Layout for Projects {
    fn name(&self) -> &'static str {
        NAME
    }

    fn wants(&self, fact: &Fact<'_>) -> bool {
        match fact {
            Fact::SessionStart(_) | Fact::Checkpoint(_) => true,
            Fact::Edit(path) => touched(path).is_some(),
            _ => false,
        }
    }

    fn discover(&self, cx: &Ctx, project: &Project) -> Result<Vec<StoreRef>> {
        let base = base(&project.root);
        Ok(cx
            .store
            .list_dir(&base)?
            .into_iter()
            .filter(|e| e.is_dir && check_id("project id", &e.name).is_ok())
            .map(|e| StoreRef {
                project: project.root.clone(),
                layout: NAME,
                root: base.join(&e.name),
                id: e.name,
            })
            .filter(|s| {
                let p = Paths::of(&s.root);
                cx.store.exists(&p.tasks) || cx.store.exists(&p.project)
            })
            .collect())
    }

    fn state_files(&self, _cx: &Ctx, store: &StoreRef) -> Result<Vec<StateFile>> {
        let p = Paths::of(&store.root);
        Ok([
            (p.project, SCHEMA_PROJECT),
            (p.tasks, SCHEMA_TASKS),
            (p.velocity, SCHEMA_VELOCITY),
        ]
        .into_iter()
        .map(|(path, schema)| StateFile {
            path,
            schema,
            json_lines: false,
        })
        .collect())
    }

    fn file_issues(
        &self,
        cx: &Ctx,
        store: &StoreRef,
        file: &StateFile,
    ) -> Result<Vec<crate::store::schema::Issue>> {
        validate::file_issues(cx, store, file)
    }

    fn summarize(&self, cx: &Ctx, store: &StoreRef) -> Result<Summary> {
        let p = Paths::of(&store.root);
        let (list, restored) = files::read(cx, &p)?;
        let mut s = summary::summarize(cx, store, &list)?;
        if pending::waiting(cx, &p) {
            s.problems.insert(
                0,
                format!(
                    "a change was interrupted (temp/{}): the next write to the store, or the next session start, finishes it or drops it",
                    pending::NAME
                ),
            );
        }
        if let Some(r) = &restored {
            s.problems.insert(
                0,
                format!(
                    "{}; the next session start (or `taskhook recover {}`) writes this",
                    r.describe(None),
                    store.root.display()
                ),
            );
        }
        Ok(s)
    }

    fn reconcile(&self, cx: &Ctx, store: &StoreRef, start: Option<Start>) -> Result<Reconciled> {
        reconcile::reconcile(cx, store, start)
    }

    fn units(&self, cx: &Ctx, store: &StoreRef) -> Result<Vec<Unit>> {
        let (list, _) = files::read(cx, &Paths::of(&store.root))?;
        Ok(list
            .tasks
            .into_iter()
            .filter(|t| !t.id.is_empty())
            .map(|t| Unit {
                active: !t.status.is_finished(),
                id: t.id,
            })
            .collect())
    }

    fn step(
        &self,
        cx: &Ctx,
        store: &StoreRef,
        unit: &str,
        input: Input<'_>,
        _turn: &Turn<'_>,
    ) -> Result<Reaction> {
        hooks::step(cx, store, unit, input)
    }

    fn work(&self, cx: &Ctx, store: &StoreRef) -> Result<Vec<WorkUnit>> {
        work::work(cx, store)
    }

    fn show(&self, cx: &Ctx, store: &StoreRef, unit: &str) -> Result<Shown> {
        work::show(cx, store, unit)
    }

    fn release(&self, cx: &Ctx, store: &StoreRef, unit: &str) -> Result<Reaction> {
        work::release(cx, store, unit)
    }

    fn note(&self, cx: &Ctx, store: &StoreRef, unit: &str, text: &str) -> Result<()> {
        work::note(cx, store, unit, text)
    }

    fn on_fact(&self, cx: &Ctx, store: &StoreRef, fact: &Fact<'_>) -> Result<Reaction> {
        match fact {
            Fact::Edit(path) => match touched(path) {
                Some((id, Touched::Research(task))) if id == store.id => {
                    research_written(cx, store, path, task)
                }
                _ => Ok(Reaction::default()),
            },
            Fact::Checkpoint(event) => checkpoint_now(cx, store, event),
            _ => Ok(Reaction::default()),
        }
    }

    fn log_error(&self, cx: &Ctx, store: &StoreRef, message: &str) -> Result<()> {
        let p = Paths::of(&store.root);
        let now = cx.store.clock().stamp();
        cx.store.with_lock(&p.lock(), || {
            pending::settle(cx, &p)?;
            files::append(cx, &p, &[log::Entry::error(&now, None, message)])
        })
    }

    fn recover(&self, cx: &Ctx, store: &StoreRef) -> Result<String> {
        let p = Paths::of(&store.root);
        cx.store.with_lock(&p.lock(), || {
            let mut t = files::try_load(cx, &p)?.map_err(|why| {
                Error::Rule(format!(
                    "cannot recover `{}`: it is unusable ({why}), and no checkpoint holds a valid task to restore it from: fix it by hand (`taskhook validate` names the problems, `taskhook schema {SCHEMA_TASKS}` shows the format) or restore it from version control; its bytes are left as they are",
                    p.tasks.display()
                ))
            })?;
            if t.restored.is_none() && !cx.store.exists(&p.tasks) {
                return Err(Error::Rule(format!(
                    "cannot recover `{}`: it is missing, and no checkpoint holds a list to restore it from: `taskhook projects add {} TASK --title …` starts a new one",
                    p.tasks.display(),
                    store.id
                )));
            }
            if t.restored.is_none() {
                return Ok(format!(
                    "{} is valid ({} task(s)); nothing to recover. To roll back, copy a file of {} over it.",
                    p.tasks.display(),
                    t.list.tasks.len(),
                    p.checkpoints.display()
                ));
            }
            let done = files::commit(cx, &p, &mut t, &files::Change::default())?;
            let msg = done.restored.unwrap_or_default();
            Ok(format!("{}: {msg}.", p.tasks.display()))
        })
    }
}

/// The project's store, which must exist.
pub fn store_ref(cx: &Ctx, project: &Project, id: &str) -> Result<StoreRef> {
    check_id("project id", id)?;
    let root = base(&project.root).join(id);
    let p = Paths::of(&root);
    if !cx.store.exists(&p.tasks) && !cx.store.exists(&p.project) {
        return Err(Error::NotFound(format!(
            "no project `{}` (create it with `taskhook projects new {id}`)",
            root.display()
        )));
    }
    Ok(StoreRef {
        project: project.root.clone(),
        layout: NAME,
        id: id.to_string(),
        root,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn touched_files() {
        assert_eq!(
            touched("/p/.claude/projects/web/tasks.json"),
            Some(("web", Touched::State))
        );
        assert_eq!(
            touched(".claude/projects/web/progress/velocity.json"),
            Some(("web", Touched::State))
        );
        assert_eq!(
            touched("/p/.claude/projects/web/research/T1.md"),
            Some(("web", Touched::Research("T1")))
        );
        assert_eq!(touched("/p/.claude/projects/web/notes.md"), None);
        assert_eq!(touched("/p/src/tasks.json"), None);
        assert_eq!(touched("/p/.claude/projects/web/research/.md"), None);
    }
}
