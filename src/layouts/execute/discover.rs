//! Where a project's execute runs are: `docs/tasks/*/execute-state.json` (real folders only)
//! and the paths `.claude/taskhook.json` lists under `execute`; what taskhook refuses of those
//! (outside the project, through a link, not named execute-state.json, missing), and run
//! folders under `docs/tasks/` reached through a link.

use std::path::{Component, Path, PathBuf};

use super::state::{state_path, FILE};
use super::NAME;
use crate::context::Ctx;
use crate::error::Result;
use crate::layouts::{name_of, StoreRef, Summary};
use crate::project::Project;
use crate::store::{check_id, fs};

/// Whether `parent/name` is a real folder (a symlink is not).
fn real_dir(cx: &Ctx, parent: &Path, name: &str) -> bool {
    cx.store
        .list_dir(parent)
        .map(|es| es.iter().any(|e| e.name == name && e.is_dir))
        .unwrap_or(false)
}

/// A path `.claude/taskhook.json` lists under `execute`, as taskhook takes it.
enum Listed {
    Store(StoreRef),
    /// Not a store: why, in one line.
    Refused(PathBuf, String),
}

/// The store at a path `.claude/taskhook.json` lists: relative (or absolute inside the
/// project), inside the project through real folders only, named `execute-state.json`.
fn listed_store(cx: &Ctx, root: &Path, listed: &str) -> Listed {
    let head = format!("`.claude/taskhook.json` lists {listed:?} under \"execute\"");
    let raw = Path::new(listed);
    let rel = if raw.is_absolute() {
        raw.strip_prefix(root).unwrap_or(raw)
    } else {
        raw
    };
    if rel.is_absolute()
        || !rel.components().all(|c| matches!(c, Component::Normal(_)))
        || rel.as_os_str().is_empty()
    {
        return Listed::Refused(
            raw.to_path_buf(),
            format!(
                "{head}: refused, it is outside the project ({}); taskhook reads and writes runs only inside the project: move the run into it (e.g. docs/tasks/SLUG/) and list that path",
                root.display()
            ),
        );
    }
    let full = root.join(rel);
    if rel.file_name().is_none_or(|n| n != FILE) {
        return Listed::Refused(
            full,
            format!("{head}, which is not a run: the file must be named {FILE}"),
        );
    }
    let missing = || Listed::Refused(full.clone(), format!("{head}, which does not exist"));
    let mut at = root.to_path_buf();
    for c in rel.parent().unwrap_or(Path::new("")).components() {
        at.push(c);
        if fs::is_symlink(&at) {
            let shown = at.strip_prefix(root).unwrap_or(&at).display().to_string();
            return Listed::Refused(
                full.clone(),
                format!("{head}: refused, {shown} is a symbolic link and taskhook never reads or writes a run through a link (if you did not make it, remove it)"),
            );
        }
        if !fs::is_dir(&at) {
            return missing();
        }
    }
    if at == root || !cx.store.exists(&state_path(&at)) {
        return missing();
    }
    Listed::Store(StoreRef::new(NAME, name_of(&at), at, root))
}

/// Most entries of `docs/tasks/` looked at for runs behind links.
const MAX_LINKED_LOOKS: usize = 1000;

/// Run folders under `docs/tasks/` that taskhook does not track because a link leads to them
/// (`docs`, `docs/tasks` or the run's folder itself), one problem each.
fn linked_run_folders(root: &Path) -> Vec<(PathBuf, String)> {
    let has_run = |dir: &Path| fs::is_file(&state_path(dir));
    let why = "taskhook never reads or writes a run through a link";
    let fix = "(if you did not make it, remove it)";
    let docs = root.join("docs");
    let tasks = docs.join("tasks");
    for link in [&docs, &tasks] {
        if fs::is_symlink(link) {
            let runs = fs::list_dir(&tasks)
                .unwrap_or_default()
                .iter()
                .take(MAX_LINKED_LOOKS)
                .filter(|e| has_run(&tasks.join(&e.name)))
                .count();
            if runs == 0 {
                return Vec::new();
            }
            let shown = link
                .strip_prefix(root)
                .unwrap_or(link)
                .display()
                .to_string();
            return vec![(
                link.to_path_buf(),
                format!("{shown} is a symbolic link to {runs} run folder(s): {why}, so they are not tracked {fix}"),
            )];
        }
    }
    fs::list_dir(&tasks)
        .unwrap_or_default()
        .into_iter()
        .take(MAX_LINKED_LOOKS)
        .map(|e| tasks.join(&e.name))
        .filter(|d| fs::is_symlink(d) && has_run(d))
        .map(|d| {
            let shown = d.strip_prefix(root).unwrap_or(&d).display().to_string();
            let text = format!(
                "{shown} is a symbolic link to a run folder: {why}, so this run is not tracked {fix}"
            );
            (d, text)
        })
        .collect()
}

/// The runs of a project, `docs/tasks/` first.
pub fn stores(cx: &Ctx, project: &Project) -> Result<Vec<StoreRef>> {
    let root = &project.root;
    let mut out: Vec<StoreRef> = Vec::new();
    let docs = root.join("docs");
    if real_dir(cx, root, "docs") && real_dir(cx, &docs, "tasks") {
        let tasks = docs.join("tasks");
        for e in cx.store.list_dir(&tasks)? {
            let dir = tasks.join(&e.name);
            if e.is_dir && check_id("store", &e.name).is_ok() && cx.store.exists(&state_path(&dir))
            {
                out.push(StoreRef::new(NAME, e.name, dir, root));
            }
        }
    }
    for rel in &project.config(&cx.store)?.execute {
        if let Listed::Store(s) = listed_store(cx, root, rel) {
            if !out.iter().any(|o| o.root == s.root) {
                out.push(s);
            }
        }
    }
    Ok(out)
}

/// Paths `.claude/taskhook.json` lists that taskhook refuses, and run folders under
/// `docs/tasks/` reached through a link, one problem each.
pub fn refused(cx: &Ctx, project: &Project) -> Result<Vec<Summary>> {
    let root = &project.root;
    let mut out = Vec::new();
    for rel in &project.config(&cx.store)?.execute {
        if let Listed::Refused(path, why) = listed_store(cx, root, rel) {
            out.push(Summary::problem(NAME, rel, path, why));
        }
    }
    for (path, why) in linked_run_folders(root) {
        out.push(Summary::problem(NAME, &name_of(&path), path, why));
    }
    Ok(out)
}
