//! The model of a workspace: the status folders ([`Folder`], the seed's statuses) and one read
//! of `order.json`, `history.jsonl` and the four folders, and what follows from them: each task's status (the folder holding its file), each stop's (its last
//! `stop_*` event), and what `next` answers.

use std::collections::{BTreeSet, HashMap};
use std::rc::Rc;

use super::error::{CResult, Code, Failure};
use super::log::{self, History, StopState};
use super::order::{Item, Order, Stop, Task};
use super::{check_task_name, Paths};
use crate::context::Ctx;
use crate::store::parsed;

/// A status folder of `tasks/`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Folder {
    Pending,
    InProgress,
    Completed,
    Failed,
}

/// The four status folders, in lifecycle order.
pub const FOLDERS: [Folder; 4] = [
    Folder::Pending,
    Folder::InProgress,
    Folder::Completed,
    Folder::Failed,
];

impl Folder {
    pub fn as_str(self) -> &'static str {
        match self {
            Folder::Pending => "pending",
            Folder::InProgress => "in_progress",
            Folder::Completed => "completed",
            Folder::Failed => "failed",
        }
    }

    pub fn parse(s: &str) -> Option<Folder> {
        FOLDERS.into_iter().find(|f| f.as_str() == s)
    }
}

/// The status folders holding one file name, in the order they were found (lifecycle order,
/// as listed), each once: at most the four, held inline.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Folders {
    n: u8,
    at: [Folder; 4],
}

impl Folders {
    const NONE: Folders = Folders {
        n: 0,
        at: [Folder::Pending; 4],
    };

    /// Adds folder `f` (a fifth is impossible: a name is listed once per folder).
    fn push(&mut self, f: Folder) {
        if let Some(slot) = self.at.get_mut(usize::from(self.n)) {
            *slot = f;
            self.n += 1;
        }
    }
}

impl Default for Folders {
    fn default() -> Folders {
        Folders::NONE
    }
}

impl std::ops::Deref for Folders {
    type Target = [Folder];
    fn deref(&self) -> &[Folder] {
        &self.at[..usize::from(self.n)]
    }
}

impl std::ops::DerefMut for Folders {
    fn deref_mut(&mut self) -> &mut [Folder] {
        &mut self.at[..usize::from(self.n)]
    }
}

impl std::fmt::Debug for Folders {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// Which status folders hold each task file name: for a name of the order (a task's, or a
/// stop's), by its place in the order, without a copy of the name; for any other, by name.
#[derive(Debug, Clone, Default)]
pub struct Files {
    order: Option<Rc<Order>>,
    /// By the order's items: the folders holding a file of that name (none: no file).
    ordered: Vec<Folders>,
    /// The files no entry of the order names.
    other: HashMap<String, Folders>,
}

impl Files {
    /// No files yet, for the names of `order`.
    pub fn new(order: Option<Rc<Order>>) -> Files {
        let n = order.as_ref().map_or(0, |o| o.items.len());
        Files {
            order,
            ordered: vec![Folders::NONE; n],
            other: HashMap::new(),
        }
    }

    /// Records that folder `f` holds a file named `name`.
    pub fn add(&mut self, name: String, f: Folder) {
        match self.order.as_ref().and_then(|o| o.position(&name)) {
            Some(i) => self.ordered[i].push(f),
            None => self.other.entry(name).or_insert(Folders::NONE).push(f),
        }
    }

    /// The folders holding a file named `name`; `None` when none does.
    pub fn get(&self, name: &str) -> Option<&Folders> {
        match self.order.as_ref().and_then(|o| o.position(name)) {
            Some(i) => self.ordered.get(i).filter(|fs| !fs.is_empty()),
            None => self.other.get(name),
        }
    }

    fn get_mut(&mut self, name: &str) -> Option<&mut Folders> {
        match self.order.as_ref().and_then(|o| o.position(name)) {
            Some(i) => self.ordered.get_mut(i).filter(|fs| !fs.is_empty()),
            None => self.other.get_mut(name),
        }
    }

    /// The folders holding the file of `task`, found by its place in the order when it is
    /// this order's (no lookup by name), else by name: what [`Files::get`] gives.
    pub fn of_task(&self, task: &Task) -> Option<&Folders> {
        let here = self
            .order
            .as_ref()
            .and_then(|o| o.items.get(task.index))
            .is_some_and(|item| item.id() == task.name);
        if !here {
            return self.get(&task.name);
        }
        self.ordered.get(task.index).filter(|fs| !fs.is_empty())
    }

    /// Whether a folder holds a file named `name`.
    pub fn contains_key(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    /// Every name some folder holds, with its folders, in no order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Folders)> {
        let items = self.order.iter().flat_map(|o| o.items.iter());
        items
            .zip(&self.ordered)
            .filter(|(_, fs)| !fs.is_empty())
            .map(|(item, fs)| (item.id(), fs))
            .chain(self.other.iter().map(|(n, fs)| (n.as_str(), fs)))
    }

    /// The folders of every name some folder holds.
    pub fn values(&self) -> impl Iterator<Item = &Folders> {
        self.iter().map(|(_, fs)| fs)
    }
}

/// Where a task's file is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    /// In exactly one status folder.
    In(Folder),
    /// In several (SessionStart repairs it from the history).
    Several(Vec<Folder>),
    /// Not in a status folder; the file waits in `tasks/` for `import`.
    NotImported,
    /// Nowhere.
    Missing,
}

impl Status {
    /// The status as `list` and `stats` name it.
    pub fn name(&self) -> &'static str {
        match self {
            Status::In(f) => f.as_str(),
            Status::Several(_) => "conflict",
            Status::NotImported => "not_imported",
            Status::Missing => "missing",
        }
    }
}

/// What `next` answers.
#[derive(Debug, Clone, PartialEq)]
pub enum Next {
    Task(Task, Folder),
    Stop(Stop, StopState),
    Done,
}

/// A workspace as read.
#[derive(Debug, Clone)]
pub struct Workspace {
    pub paths: Paths,
    /// `None` when there is no order.json yet.
    pub order: Option<Rc<Order>>,
    pub history: Rc<History>,
    /// File name → the status folders holding it, in lifecycle order (task names only:
    /// [`check_task_name`]); in no order: a question that lists names sorts them.
    pub files: Files,
    /// Files directly in `tasks/` (waiting for import; never order.json or history.jsonl).
    pub loose: BTreeSet<String>,
}

/// Largest order.json read.
pub const MAX_ORDER_BYTES: usize = 16 * 1024 * 1024;

/// Reads and checks an order file; `None` when missing.
pub fn read_order(cx: &Ctx, path: &std::path::Path) -> CResult<Option<Order>> {
    Ok(read_shared_order(cx, path)?.map(|o| (*o).clone()))
}

/// [`read_order`], shared: the same bytes read again in this invocation give the order they
/// gave (a failure is worked out again, for its message naming `path`).
fn read_shared_order(cx: &Ctx, path: &std::path::Path) -> CResult<Option<Rc<Order>>> {
    // The file still holds the bytes parsed last (a step's locked read after its peek):
    // compared as it is read, not read into a second copy.
    if let Some((_, known)) = cx.store.still_parsed::<Option<Rc<Order>>>(ORDER, path) {
        if let Some(order) = &*known {
            return Ok(Some(order.clone()));
        }
    }
    let Some(bytes) = cx.store.read_capped(path, MAX_ORDER_BYTES)? else {
        return Ok(None);
    };
    let (bytes, known) =
        parsed::remembered(ORDER, bytes, |b| Order::from_bytes(b, "").ok().map(Rc::new));
    if let Some(order) = &*known {
        return Ok(Some(order.clone()));
    }
    let fix = "; fix it (`taskhook schema cdd-order` shows the format) or import the order again";
    Order::from_bytes(&bytes, &format!("`{}`", path.display()))
        .map(|o| Some(Rc::new(o)))
        .map_err(|f| Failure::new(f.code, format!("{}{fix}", f.message)))
}

/// The kind of document [`read_shared_order`] remembers.
const ORDER: &str = "cdd-order.json";

/// The failure of a command on a workspace that has no `tasks/` yet.
pub fn not_initialized(paths: &Paths) -> Failure {
    Failure::new(
        Code::NotInitialized,
        format!(
            "`{}` does not exist; run `taskhook cdd init`",
            paths.tasks.display()
        ),
    )
}

/// The kind of document [`Workspace::peek`] remembers (keyed by the workspace and the
/// invocation's count of writes).
const PEEK: &str = "cdd-workspace-peek";

fn peek_key(cx: &Ctx, paths: &Paths) -> Vec<u8> {
    let mut key = paths.tasks.as_os_str().as_encoded_bytes().to_vec();
    key.push(0);
    key.extend(cx.store.write_count().to_le_bytes());
    key
}

impl Workspace {
    /// Reads the workspace; `tasks/` must exist.
    pub fn load(cx: &Ctx, paths: &Paths) -> CResult<Workspace> {
        // A fresh read lets go of a peek's: what it holds of the history is then extended in
        // place rather than copied.
        parsed::forget(PEEK);
        Workspace::read(cx, paths)
    }

    /// A look at the workspace outside its lock, shared by every look of this invocation until
    /// it writes or reads the workspace afresh: the engine's look at the units, an agent's
    /// status and a step's peek list the four folders once. What it says only guides a
    /// decision; the commands read the workspace again under the lock before they move
    /// anything.
    pub fn peek(cx: &Ctx, paths: &Paths) -> CResult<Rc<Workspace>> {
        if let Some(ws) = parsed::get::<Workspace>(PEEK, &peek_key(cx, paths)) {
            return Ok(ws);
        }
        Ok(Workspace::load(cx, paths)?.into_peek(cx))
    }

    /// This read as the one later looks share until the invocation writes again: a read made
    /// under the lock and kept in step with the moves made under it ([`Workspace::moved`])
    /// is what the folders hold once the lock is let go.
    pub fn into_peek(self, cx: &Ctx) -> Rc<Workspace> {
        let ws = Rc::new(self);
        parsed::remember(PEEK, &peek_key(cx, &ws.paths), ws.clone());
        ws
    }

    /// The workspace after this invocation moved task `name` from folder `from` to `to` and
    /// logged it, under the lock it was read under: the folders as they now stand without
    /// listing them again, the history read again (only its new lines are parsed).
    pub fn moved(&mut self, cx: &Ctx, name: &str, from: Folder, to: Folder) -> CResult<()> {
        if let Some(fs) = self.files.get_mut(name) {
            if let Some(f) = fs.iter_mut().find(|f| **f == from) {
                *f = to;
            }
        }
        // Let go of the history first, so the read extends it in place rather than copying it.
        self.history = Rc::default();
        self.history = log::read(cx, &self.paths.history)?;
        Ok(())
    }

    fn read(cx: &Ctx, paths: &Paths) -> CResult<Workspace> {
        if !cx.store.is_dir(&paths.tasks) {
            return Err(not_initialized(paths));
        }
        let order = read_shared_order(cx, &paths.order)?;
        let history = log::read(cx, &paths.history)?;
        let mut files = Files::new(order.clone());
        for f in FOLDERS {
            for e in cx.store.list_dir_unordered(&paths.folder(f))? {
                if !e.is_dir && check_task_name(&e.name).is_ok() {
                    files.add(e.name, f);
                }
            }
        }
        let loose = cx
            .store
            .list_dir(&paths.tasks)?
            .into_iter()
            .filter(|e| !e.is_dir && check_task_name(&e.name).is_ok())
            .map(|e| e.name)
            .collect();
        Ok(Workspace {
            paths: paths.clone(),
            order,
            history,
            files,
            loose,
        })
    }

    /// A command's `data` with `warnings` added when there is something to warn of (history
    /// lines no event can be read from).
    pub fn warned<T>(&self, body: T) -> super::outcome::Data<T> {
        super::outcome::Data {
            body,
            warnings: log::bad_lines_warning(&self.history, &self.paths.tasks)
                .into_iter()
                .collect(),
        }
    }

    /// The order, which must exist.
    pub fn order(&self) -> CResult<&Order> {
        self.order.as_deref().ok_or_else(|| {
            Failure::new(
                Code::NoOrder,
                format!(
                    "`{}` does not exist; write it and run `taskhook cdd import` (or `taskhook cdd import PATH`)",
                    self.paths.order.display()
                ),
            )
        })
    }

    /// The task `name` of the order.
    pub fn task(&self, name: &str) -> CResult<&Task> {
        check_task_name(name)?;
        self.order()?.task(name).ok_or_else(|| {
            Failure::new(
                Code::NotFound,
                format!("{name:?} is not a task of `{}`", self.paths.order.display()),
            )
        })
    }

    /// Where a task's file is.
    pub fn status(&self, name: &str) -> Status {
        self.status_in(self.files.get(name), name)
    }

    /// [`Workspace::status`] of a task of the order, found by its place there.
    pub fn status_of(&self, t: &Task) -> Status {
        self.status_in(self.files.of_task(t), &t.name)
    }

    fn status_in(&self, folders: Option<&Folders>, name: &str) -> Status {
        match folders.map(|fs| &**fs) {
            Some([one]) => Status::In(*one),
            Some(many) if !many.is_empty() => Status::Several(many.to_vec()),
            _ if self.loose.contains(name) => Status::NotImported,
            _ => Status::Missing,
        }
    }

    /// The tasks of the order in folder `f`.
    pub fn in_folder(&self, f: Folder) -> Vec<&Task> {
        self.order
            .iter()
            .flat_map(|o| o.tasks())
            .filter(|t| self.status_of(t) == Status::In(f))
            .collect()
    }

    /// The first stop before `task` in the order that has not been passed.
    pub fn stop_before(&self, task: &Task) -> Option<&Stop> {
        self.order
            .iter()
            .flat_map(|o| o.stops())
            .filter(|s| s.index < task.index)
            .find(|s| self.history.stop_state(&s.id) != StopState::Passed)
    }

    /// What `next` answers: a task already in progress first, else in order the first entry
    /// that is not done: a pending task, or a stop not passed. Completed and failed tasks are
    /// skipped; a task not imported, or in several folders, is an error where it is reached.
    pub fn next(&self) -> CResult<Next> {
        let order = self.order()?;
        if let Some(t) = order
            .tasks()
            .find(|t| self.status_of(t) == Status::In(Folder::InProgress))
        {
            return Ok(Next::Task(t.clone(), Folder::InProgress));
        }
        for item in &order.items {
            match item {
                Item::Stop(s) => {
                    let state = self.history.stop_state(&s.id);
                    if state != StopState::Passed {
                        return Ok(Next::Stop(s.clone(), state));
                    }
                }
                Item::Task(t) => match self.status_of(t) {
                    Status::In(Folder::Completed | Folder::Failed) => {}
                    Status::In(f) => return Ok(Next::Task(t.clone(), f)),
                    other => return Err(self.unusable(&t.name, &other)),
                },
            }
        }
        Ok(Next::Done)
    }

    /// Why a task whose file is not in exactly one folder cannot be used ([`unusable`]).
    pub fn unusable(&self, name: &str, status: &Status) -> Failure {
        unusable(&self.paths, name, status)
    }
}

/// Why a task whose file is not in exactly one folder of the workspace at `paths` cannot be
/// used.
pub fn unusable(paths: &Paths, name: &str, status: &Status) -> Failure {
    let tasks = paths.tasks.display();
    match status {
        Status::Several(fs) => Failure::new(
            Code::Inconsistent,
            format!(
                "{name} is in several folders ({}); run `taskhook reconcile` (SessionStart does it) to repair it from the history",
                fs.iter().map(|f| format!("{}/", f.as_str())).collect::<Vec<_>>().join(", ")
            ),
        ),
        Status::NotImported => Failure::new(
            Code::NotImported,
            format!("{name} is in order.json but its file is still in `{tasks}`; run `taskhook cdd import`"),
        ),
        _ => Failure::new(
            Code::NotImported,
            format!("{name} is in order.json but its file is in no folder of `{tasks}`; put it in pending/ (or beside order.json and run `taskhook cdd import`)"),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::super::log::tests::{reference, some_line, NAMES};
    use super::*;
    use proptest::prelude::*;

    /// `next` as it was before the history's index (issue 23): every stop's state a scan of the
    /// events. The reference the index must agree with.
    fn reference_next(ws: &Workspace, events: &[super::super::log::Event]) -> CResult<Next> {
        let order = ws.order()?;
        if let Some(t) = order
            .tasks()
            .find(|t| ws.status(&t.name) == Status::In(Folder::InProgress))
        {
            return Ok(Next::Task(t.clone(), Folder::InProgress));
        }
        for item in &order.items {
            match item {
                Item::Stop(s) => {
                    let state = reference::stop_state(events, &s.id);
                    if state != StopState::Passed {
                        return Ok(Next::Stop(s.clone(), state));
                    }
                }
                Item::Task(t) => match ws.status(&t.name) {
                    Status::In(Folder::Completed | Folder::Failed) => {}
                    Status::In(f) => return Ok(Next::Task(t.clone(), f)),
                    other => return Err(ws.unusable(&t.name, &other)),
                },
            }
        }
        Ok(Next::Done)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// The next unit (and each task's blocking stop) is the same with the index as with
        /// the scans, on random orders, folders and histories.
        #[test]
        fn next_matches_the_scans(
            names in Just(NAMES.to_vec()).prop_shuffle(),
            keep in 1..=NAMES.len(),
            folders in prop::collection::vec(prop::collection::vec(0..4usize, 0..3), NAMES.len()),
            lines in prop::collection::vec(some_line(), 0..30),
        ) {
            let items: Vec<serde_json::Value> = names[..keep]
                .iter()
                .map(|n| if n.ends_with(".md") {
                    serde_json::json!({"task": n})
                } else {
                    serde_json::json!({"stop": n})
                })
                .collect();
            let order = Order::parse(serde_json::json!({"tasks": items}), "order").unwrap();
            let order = Rc::new(order);
            let mut files = Files::new(Some(order.clone()));
            for (name, fs) in NAMES.iter().zip(&folders) {
                for &f in fs {
                    files.add(name.to_string(), FOLDERS[f]);
                }
            }
            let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
            let ws = Workspace {
                paths: Paths::of(std::path::Path::new("/ws")),
                order: Some(order),
                history: Rc::new(History::parse(text.as_bytes())),
                files,
                loose: BTreeSet::new(),
            };
            let events = reference::events(text.as_bytes());
            prop_assert_eq!(format!("{:?}", ws.next()), format!("{:?}", reference_next(&ws, &events)));
            let order = ws.order().unwrap();
            for t in order.tasks() {
                prop_assert_eq!(ws.status_of(t), ws.status(&t.name));
                let want = order
                    .stops()
                    .filter(|s| s.index < t.index)
                    .find(|s| reference::stop_state(&events, &s.id) != StopState::Passed);
                prop_assert_eq!(ws.stop_before(t), want);
            }
            for name in NAMES {
                let linear = order.tasks().find(|t| t.name == name);
                prop_assert_eq!(order.task(name), linear);
                let linear = order.stops().find(|s| s.id == name);
                prop_assert_eq!(order.stop(name), linear);
            }
        }
    }
}
