//! A task list parsed once, edited in place, written back without re-serialising what did not
//! change (issue 13).
//!
//! [`List::parse`] borrows the file's text: each task keeps its original bytes and a typed
//! [`View`] of the fields decisions are made on (no JSON tree of the whole file). An edit
//! materialises only the task it touches ([`List::edit`]); an id index answers lookups.
//! [`List::to_bytes`] ([`super::canon`]) copies every task whose bytes are already in the
//! canonical 2-space form and re-serialises the rest, so the output is byte for byte what
//! serialising the whole document would give. When the fast parse cannot vouch for a file (odd
//! but possibly valid JSON), the caller loads it as a JSON tree and uses [`List::from_value`].
//!
//! The pipeline over a list (recompute `blocked`, stamps, graph checks, what to validate) is
//! in [`super::lifecycle`].

use std::borrow::Cow;
use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet};
use std::fmt;

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::canon::is_canonical;
use super::model::{stamp_kind, to_zulu, Status, View};
use super::scope::Keys;

/// What a task is compared with to decide whether it changed.
#[derive(Debug, Clone)]
pub(crate) enum Base {
    /// Its bytes in the file.
    Raw,
    /// Its content as loaded (normalised, or from the JSON-tree fallback).
    Snapshot(Box<Map<String, Value>>),
    /// Added by this change.
    New,
}

/// One task of the list.
#[derive(Debug, Clone)]
pub(crate) struct Slot<'a> {
    /// Its text in the file.
    pub raw: Option<&'a str>,
    /// `raw` is exactly its canonical form at the task depth.
    pub canonical: bool,
    /// Its content, once materialised (edited, normalised or from the fallback).
    pub value: Option<Box<Map<String, Value>>>,
    pub view: View<'a>,
    pub base: Base,
    /// Its status as loaded (`None` for a new task).
    pub orig_status: Option<Status>,
    pub removed: bool,
    /// An edit reached it (whether it changed is decided at the end).
    pub touched: bool,
}

impl<'a> Slot<'a> {
    fn loaded(raw: Option<&'a str>, view: View<'a>, base: Base) -> Self {
        Slot {
            raw,
            canonical: false,
            value: None,
            orig_status: Some(view.status),
            view,
            base,
            removed: false,
            touched: false,
        }
    }

    pub fn is_new(&self) -> bool {
        matches!(self.base, Base::New)
    }
}

/// A root value other than `tasks`.
#[derive(Debug, Clone)]
pub(crate) enum RootVal<'a> {
    Raw(&'a RawValue),
    Owned(Value),
    /// The place of `tasks` among the root keys.
    Tasks,
}

/// A parsed task list.
#[derive(Debug, Clone)]
pub struct List<'a> {
    pub(crate) root: Vec<(String, RootVal<'a>)>,
    pub(crate) slots: Vec<Slot<'a>>,
    /// First live slot of each id.
    index: HashMap<Cow<'a, str>, usize>,
    /// Some id occurs in more than one slot (then removals rescan).
    pub(crate) dup_ids: bool,
    /// The dependencies of edited tasks as they were loaded (the others have not changed).
    orig_deps: HashMap<usize, Vec<Cow<'a, str>>>,
    /// Who reads it: how its tasks are named in messages ([`List::shown`]).
    pub(crate) keys: Keys,
}

/// The schema's root: `tasks` (array), `version` (integer >= 1, optional), `last_updated`.
struct RootMap<'a>(Vec<(Cow<'a, str>, &'a RawValue)>);

impl<'de: 'a, 'a> Deserialize<'de> for RootMap<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RootMap<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Self::Value, A::Error> {
                let mut out: Vec<(Cow<'de, str>, &'de RawValue)> = Vec::new();
                while let Some(k) = a.next_key::<Cow<'de, str>>()? {
                    if out.iter().any(|(o, _)| *o == k) {
                        return Err(de::Error::custom("duplicate key"));
                    }
                    let v: &'de RawValue = a.next_value()?;
                    out.push((k, v));
                }
                Ok(RootMap(out))
            }
        }
        d.deserialize_map(V)
    }
}

impl<'a> List<'a> {
    /// An empty list as a new file starts (`tasks`, `version`, `last_updated`).
    pub fn empty(version: u64, now: &str) -> List<'static> {
        List {
            root: vec![
                ("tasks".into(), RootVal::Tasks),
                ("version".into(), RootVal::Owned(Value::from(version))),
                ("last_updated".into(), RootVal::Owned(Value::from(now))),
            ],
            slots: Vec::new(),
            index: HashMap::new(),
            dup_ids: false,
            orig_deps: HashMap::new(),
            keys: Keys::default(),
        }
    }

    /// Parses a list the fast way; `None` when this parse cannot vouch that the file is valid
    /// (then the caller decides with the schema on a JSON tree).
    pub fn parse(text: &'a str) -> Option<List<'a>> {
        let RootMap(entries) = serde_json::from_str(text).ok()?;
        let mut root = Vec::with_capacity(entries.len());
        let mut tasks_raw = None;
        let mut stamped = false;
        for (k, v) in entries {
            match &*k {
                "tasks" => {
                    tasks_raw = Some(v);
                    root.push((k.into_owned(), RootVal::Tasks));
                    continue;
                }
                "version" => {
                    let n: u64 = serde_json::from_str(v.get()).ok()?;
                    if n < 1 {
                        return None;
                    }
                }
                "last_updated" => {
                    let s: &str = serde_json::from_str(v.get()).ok()?;
                    stamp_kind(s)?;
                    stamped = true;
                }
                _ => {}
            }
            root.push((k.into_owned(), RootVal::Raw(v)));
        }
        if !stamped {
            return None;
        }
        let raws: Vec<&'a RawValue> = serde_json::from_str(tasks_raw?.get()).ok()?;
        let mut list = List {
            root,
            slots: Vec::with_capacity(raws.len()),
            index: HashMap::with_capacity(raws.len()),
            dup_ids: false,
            orig_deps: HashMap::new(),
            keys: Keys::default(),
        };
        for raw in raws {
            let text = raw.get();
            let view = View::parse(text)?;
            let mut slot = Slot::loaded(Some(text), view, Base::Raw);
            if slot.view.zulu {
                slot.canonical = is_canonical(text.as_bytes(), 2);
            } else {
                let mut m: Map<String, Value> = serde_json::from_str(text).ok()?;
                normalise(&mut m);
                slot.view = View::of_map(&m);
                slot.base = Base::Snapshot(Box::new(m.clone()));
                slot.value = Some(Box::new(m));
            }
            list.add_slot(slot);
        }
        Some(list)
    }

    /// A list from a document already checked against the schema (the fallback path).
    pub fn from_value(doc: Value) -> List<'static> {
        let Value::Object(map) = doc else {
            return List::empty(super::FORMAT_VERSION, "");
        };
        let mut list = List {
            root: Vec::new(),
            slots: Vec::new(),
            index: HashMap::new(),
            dup_ids: false,
            orig_deps: HashMap::new(),
            keys: Keys::default(),
        };
        for (k, v) in map {
            if k == "tasks" {
                for t in v.as_array().cloned().unwrap_or_default() {
                    let Value::Object(mut m) = t else { continue };
                    normalise(&mut m);
                    let view = View::of_map(&m);
                    let mut slot = Slot::loaded(None, view, Base::Snapshot(Box::new(m.clone())));
                    slot.value = Some(Box::new(m));
                    list.add_slot(slot);
                }
                list.root.push((k, RootVal::Tasks));
            } else {
                list.root.push((k, RootVal::Owned(v)));
            }
        }
        list
    }

    fn add_slot(&mut self, slot: Slot<'a>) -> usize {
        let i = self.slots.len();
        match self.index.entry(slot.view.id.clone()) {
            Entry::Occupied(_) => self.dup_ids = true,
            Entry::Vacant(e) => {
                e.insert(i);
            }
        }
        self.slots.push(slot);
        i
    }

    // ---- reading ---------------------------------------------------------------------

    /// The first live task with this id.
    pub fn find(&self, id: &str) -> Option<usize> {
        self.index.get(id).copied()
    }

    /// How the session reading the list names slot `i` ([`Keys::shown`]): `1` for its own
    /// Claude Code task `1@defa37fe`, every other task by its id.
    pub fn shown(&self, i: usize) -> &str {
        self.keys.shown(self, i)
    }

    /// The name of task `id` in messages ([`List::shown`]); `id` itself when it is not a task.
    pub fn shown_id<'s>(&'s self, id: &'s str) -> &'s str {
        self.find(id).map_or(id, |i| self.shown(i))
    }

    /// The view of slot `i`.
    pub fn view(&self, i: usize) -> &View<'a> {
        &self.slots[i].view
    }

    /// The dependencies slot `i` had when the list was loaded.
    pub fn deps_before(&self, i: usize) -> &[Cow<'a, str>] {
        self.orig_deps
            .get(&i)
            .map_or(&self.slots[i].view.deps, Vec::as_slice)
    }

    /// Live tasks in order, with their slot index.
    pub fn live(&self) -> impl Iterator<Item = (usize, &View<'a>)> {
        self.slots
            .iter()
            .enumerate()
            .filter(|(_, s)| !s.removed)
            .map(|(i, s)| (i, &s.view))
    }

    /// The number of live tasks.
    pub fn len(&self) -> usize {
        self.slots.iter().filter(|s| !s.removed).count()
    }

    /// Whether the list has no live task.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The content of slot `i` (parsed from its bytes when it was not materialised).
    pub fn value(&self, i: usize) -> Cow<'_, Map<String, Value>> {
        let s = &self.slots[i];
        match (&s.value, s.raw) {
            (Some(v), _) => Cow::Borrowed(&**v),
            (None, Some(raw)) => Cow::Owned(serde_json::from_str(raw).unwrap_or_default()),
            (None, None) => Cow::Owned(Map::new()),
        }
    }

    /// The description of slot `i`, or `""`.
    pub fn description(&self, i: usize) -> String {
        #[derive(Deserialize)]
        struct D<'b> {
            #[serde(borrow)]
            description: Option<Cow<'b, str>>,
        }
        let s = &self.slots[i];
        match (&s.value, s.raw) {
            (Some(v), _) => v
                .get("description")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
            (None, Some(raw)) => serde_json::from_str::<D>(raw)
                .ok()
                .and_then(|d| d.description)
                .map(Cow::into_owned)
                .unwrap_or_default(),
            (None, None) => String::new(),
        }
    }

    /// The root's `version`, when it is an integer.
    pub fn version(&self) -> Option<u64> {
        self.root
            .iter()
            .find(|(k, _)| k == "version")
            .and_then(|(_, v)| match v {
                RootVal::Raw(r) => serde_json::from_str(r.get()).ok(),
                RootVal::Owned(v) => v.as_u64(),
                RootVal::Tasks => None,
            })
    }

    // ---- editing ---------------------------------------------------------------------

    /// Edits slot `i` in place; its view follows the edit.
    pub fn edit<R>(&mut self, i: usize, f: impl FnOnce(&mut Map<String, Value>) -> R) -> R {
        let s = &mut self.slots[i];
        if !s.touched {
            s.touched = true;
            if !s.is_new() {
                self.orig_deps
                    .entry(i)
                    .or_insert_with(|| s.view.deps.clone());
            }
        }
        let raw = s.raw;
        let m = s.value.get_or_insert_with(|| {
            Box::new(
                raw.and_then(|r| serde_json::from_str(r).ok())
                    .unwrap_or_default(),
            )
        });
        let r = f(m);
        let id_before = s.view.id.clone();
        s.view = View::of_map(m);
        if s.view.id != id_before {
            self.reindex();
        }
        r
    }

    /// Appends a new task; returns its slot.
    pub fn push(&mut self, task: Map<String, Value>) -> usize {
        let view = View::of_map(&task);
        let mut slot = Slot::loaded(None, view, Base::New);
        slot.orig_status = None;
        slot.value = Some(Box::new(task));
        slot.touched = true;
        self.add_slot(slot)
    }

    /// Replaces the content of slot `i` (a task taking another's place, in place).
    pub fn replace(&mut self, i: usize, task: Map<String, Value>) {
        self.edit(i, |m| *m = task);
    }

    /// Removes every task whose id is in `ids`, and every dependency on them; returns how many
    /// tasks went.
    pub fn remove(&mut self, ids: &HashSet<&str>) -> usize {
        if ids.is_empty() {
            return 0;
        }
        let mut gone = 0;
        for s in self.slots.iter_mut() {
            if !s.removed && ids.contains(&*s.view.id) {
                s.removed = true;
                gone += 1;
            }
        }
        if gone == 0 {
            return 0;
        }
        let dependants: Vec<usize> = self
            .live()
            .filter(|(_, v)| v.deps.iter().any(|d| ids.contains(&**d)))
            .map(|(i, _)| i)
            .collect();
        for i in dependants {
            self.edit(i, |m| {
                if let Some(deps) = m.get_mut("dependencies").and_then(Value::as_array_mut) {
                    deps.retain(|d| d.as_str().is_none_or(|d| !ids.contains(d)));
                }
            });
        }
        self.reindex();
        gone
    }

    /// Rebuilds the id index (after removals or an id edit).
    fn reindex(&mut self) {
        self.index.clear();
        self.dup_ids = false;
        for (i, s) in self.slots.iter().enumerate() {
            if s.removed {
                continue;
            }
            match self.index.entry(s.view.id.clone()) {
                Entry::Occupied(_) => self.dup_ids = true,
                Entry::Vacant(e) => {
                    e.insert(i);
                }
            }
        }
    }

    /// Sets a root value (appended when the key is new).
    pub(crate) fn set_root(&mut self, key: &str, value: Value) {
        match self.root.iter_mut().find(|(k, _)| k == key) {
            Some((_, v)) => *v = RootVal::Owned(value),
            None => self.root.push((key.to_string(), RootVal::Owned(value))),
        }
    }
}

/// Timestamps with an offset become UTC with `Z` (seed 002's rule for writers), in place.
pub(crate) fn normalise(m: &mut Map<String, Value>) {
    for key in ["created_at", "updated_at"] {
        if let Some(Value::String(s)) = m.get_mut(key) {
            if stamp_kind(s) == Some(false) {
                if let Some(z) = to_zulu(s) {
                    *s = z;
                }
            }
        }
    }
}
