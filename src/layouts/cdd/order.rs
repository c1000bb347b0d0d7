//! `tasks/order.json` (seed 004): the ordered tasks and stops, checked once when read (schema,
//! safe file names, every name unique across tasks and stops), merged on a second import, and
//! the escalation ladder that rewrites a task's `model` / `thinking`.
//!
//! An order is read typed, straight from its bytes ([`Order::from_bytes`]), by a parse never
//! looser than the schema: when it cannot vouch for the file (a field of another kind, a key
//! given twice, an entry with both `task` and `stop`), the file is parsed as a JSON tree and
//! checked against the schema, which decides and names what is wrong. Its text is kept
//! ([`Order::doc`]): a rewrite changes only the fields it means to, so unknown fields survive.

use std::collections::hash_map::RandomState;
use std::collections::HashSet;
use std::hash::BuildHasher;
use std::rc::Rc;

use serde::Deserialize;
use serde_json::Value;

use super::check_task_name;
use super::error::{CResult, Code, Failure};
use crate::error::Error;
// A present field must be a string (`null` included: refused, so the schema decides).
use crate::layouts::json::present::deserialize as string;
use crate::layouts::json::str_field;
use crate::store::{check_unit_id, check_word, parse_json, schema, Bytes};

/// The schema of order.json.
pub const SCHEMA: &str = "cdd-order";

/// A task of the order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Task {
    /// Its file name (`foo.md`), checked by [`check_task_name`].
    pub name: String,
    /// These three, one copy of each value however many tasks share it.
    pub group: Option<Rc<str>>,
    pub model: Option<Rc<str>>,
    pub thinking: Option<Rc<str>>,
    /// Its position in `tasks`.
    pub index: usize,
}

impl Task {
    /// How it runs, in words: `group auth, model sonnet, thinking none`.
    pub fn describe(&self) -> String {
        format!(
            "group {}, model {}, thinking {}",
            self.group.as_deref().unwrap_or("-"),
            self.model.as_deref().unwrap_or("(default)"),
            self.thinking.as_deref().unwrap_or("none")
        )
    }
}

/// A stop of the order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stop {
    pub id: String,
    pub message: Option<String>,
    pub index: usize,
}

/// One entry of the order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Item {
    Task(Task),
    Stop(Stop),
}

impl Item {
    /// The task name or stop id.
    pub fn id(&self) -> &str {
        match self {
            Item::Task(t) => &t.name,
            Item::Stop(s) => &s.id,
        }
    }

    /// Its position in `tasks`.
    pub fn index(&self) -> usize {
        match self {
            Item::Task(t) => t.index,
            Item::Stop(s) => s.index,
        }
    }

    /// Why its name is no valid id for a new entry (whitespace, which tags, signals and
    /// printed commands cannot carry); an order written by hand may still hold one.
    pub fn id_error(&self) -> Option<Error> {
        match self {
            Item::Task(t) => check_unit_id("task name", &t.name).err(),
            Item::Stop(s) => check_word("stop id", &s.id).err(),
        }
    }

    /// What `status` and SessionStart say of an entry whose name is no valid id.
    pub fn id_problem(&self) -> Option<String> {
        let reason = match self.id_error()? {
            Error::UnsafeId { reason, .. } => reason.to_string(),
            other => other.one_line(),
        };
        Some(match self {
            Item::Task(t) => format!(
                "task name {:?} is not a valid id ({reason}); rename it (its order.json entry and its file)",
                t.name
            ),
            Item::Stop(s) => format!(
                "stop id {:?} is not a valid id ({reason}); rename it in order.json",
                s.id
            ),
        })
    }
}

/// Whether task `name` can be named by `<task>` and `<signal>` tags.
pub fn taggable(name: &str) -> bool {
    check_word("task name", name).is_ok()
}

/// A checked order.json.
#[derive(Debug, Clone)]
pub struct Order {
    /// The document's text, as read (shared with what remembers it) or as taskhook wrote it.
    text: Bytes,
    pub items: Vec<Item>,
    /// Task name or stop id → its place in `items` (names are unique across both).
    by_name: Names,
}

/// Where each name is in an order's items, without a copy of the names: an open-addressed
/// table of positions, probed from the name's hash and confirmed against the items (a slot's
/// tag, more bits of the hash, spares most of those comparisons).
#[derive(Debug, Clone)]
struct Names {
    /// A position in the items plus one (0: free) and its name's tag; a power of two long, at
    /// most half full. An order.json within its cap has far fewer than `u32::MAX` entries.
    slots: Vec<(u32, u32)>,
    keys: RandomState,
}

impl Names {
    /// Room for the names of `n` items.
    fn with_room(n: usize) -> Names {
        Names {
            slots: vec![(0, 0); (n * 2).next_power_of_two().max(8)],
            keys: RandomState::new(),
        }
    }

    /// Where probing for `name` starts, and its tag.
    fn start(&self, name: &str) -> (usize, u32) {
        let h = self.keys.hash_one(name);
        // Truncated on purpose: the low bits pick the slot, the high ones are the tag.
        ((h as usize) & (self.slots.len() - 1), (h >> 32) as u32)
    }

    /// Records item `i` of `items` under its name: `false` when another item has it.
    fn insert(&mut self, items: &[Item], i: usize) -> bool {
        let id = items[i].id();
        let (mut at, tag) = self.start(id);
        loop {
            match self.slots[at] {
                (0, _) => {
                    self.slots[at] = (u32::try_from(i + 1).unwrap_or(u32::MAX), tag);
                    return true;
                }
                (k, t) if t == tag && items[k as usize - 1].id() == id => return false,
                _ => at = (at + 1) & (self.slots.len() - 1),
            }
        }
    }

    /// The position of the item named `name`.
    fn get(&self, items: &[Item], name: &str) -> Option<usize> {
        let (mut at, tag) = self.start(name);
        loop {
            match self.slots[at] {
                (0, _) => return None,
                (k, t) if t == tag && items.get(k as usize - 1)?.id() == name => {
                    return Some(k as usize - 1)
                }
                _ => at = (at + 1) & (self.slots.len() - 1),
            }
        }
    }
}

/// order.json as the fast parse reads it: only what it can vouch for (see [`Order::from_bytes`]).
#[derive(Deserialize)]
struct Wire {
    tasks: Vec<WireItem>,
}

/// One entry: the fields the schema constrains, each a string when present; other keys are
/// skipped (the schema allows them).
#[derive(Deserialize)]
struct WireItem {
    #[serde(default, deserialize_with = "string")]
    task: Option<String>,
    #[serde(default, deserialize_with = "string")]
    stop: Option<String>,
    #[serde(default, deserialize_with = "string")]
    group: Option<String>,
    #[serde(default, deserialize_with = "string")]
    model: Option<String>,
    #[serde(default, deserialize_with = "string")]
    thinking: Option<String>,
    #[serde(default, deserialize_with = "string")]
    message: Option<String>,
}

/// The thinking levels the schema allows.
const THINKING: [&str; 4] = ["none", "thinking", "extended", "ultrathink"];

impl WireItem {
    /// The entry, when the schema surely accepts it: exactly one of `task` and `stop`, not
    /// empty, and a task's `thinking` one of the levels.
    fn vouched(self, index: usize, shared: &mut Shared) -> Option<Raw> {
        match (self.task, self.stop) {
            (Some(name), None) if !name.is_empty() => {
                if self
                    .thinking
                    .as_deref()
                    .is_some_and(|t| !THINKING.contains(&t))
                {
                    return None;
                }
                Some(Item::Task(Task {
                    name,
                    group: shared.of(self.group),
                    model: shared.of(self.model),
                    thinking: shared.of(self.thinking),
                    index,
                }))
            }
            (None, Some(id)) if !id.is_empty() => Some(Item::Stop(Stop {
                id,
                message: self.message,
                index,
            })),
            _ => None,
        }
    }
}

/// An entry before the checks the schema cannot make (safe names, unique names).
type Raw = Item;

/// One copy of each value of the fields many tasks share (a group, a model, a thinking level).
#[derive(Default)]
struct Shared(HashSet<Rc<str>>);

impl Shared {
    fn of(&mut self, value: Option<String>) -> Option<Rc<str>> {
        let value = value?;
        if let Some(known) = self.0.get(value.as_str()) {
            return Some(known.clone());
        }
        let new: Rc<str> = Rc::from(value);
        self.0.insert(new.clone());
        Some(new)
    }
}

fn opt(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(Value::as_str).map(str::to_string)
}

impl Order {
    /// Reads an order from its bytes: typed in one pass when the fast parse can vouch for
    /// them, else as a JSON tree checked against the schema ([`Order::parse`]). `what` names
    /// the order in messages.
    pub fn from_bytes(bytes: &Bytes, what: &str) -> CResult<Order> {
        let mut shared = Shared::default();
        let fast = serde_json::from_slice::<Wire>(bytes).ok().and_then(|w| {
            w.tasks
                .into_iter()
                .enumerate()
                .map(|(i, item)| item.vouched(i, &mut shared))
                .collect::<Option<Vec<Raw>>>()
        });
        match fast {
            Some(raw) => Order::checked(raw, Bytes::clone(bytes), what),
            None => {
                let doc = parse_json(bytes)
                    .map_err(|why| Failure::new(Code::InvalidOrder, format!("{what} is {why}")))?;
                Order::parse(doc, what)
            }
        }
    }

    /// Checks a document: its schema, safe task file names, unique names.
    pub fn parse(doc: Value, what: &str) -> CResult<Order> {
        let invalid = |msg: String| Failure::new(Code::InvalidOrder, format!("{what} {msg}"));
        if let Err(issues) = schema::check(SCHEMA, &doc)? {
            return Err(invalid(format!(
                "does not match schema {SCHEMA}: {}",
                schema::summarize(&issues)
            )));
        }
        let mut shared = Shared::default();
        let raw = doc["tasks"]
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
            .map(|(index, v)| match v.get("task").and_then(Value::as_str) {
                Some(name) => Item::Task(Task {
                    name: name.to_string(),
                    group: shared.of(opt(v, "group")),
                    model: shared.of(opt(v, "model")),
                    thinking: shared.of(opt(v, "thinking")),
                    index,
                }),
                None => Item::Stop(Stop {
                    id: str_field(v, "stop").to_string(),
                    message: opt(v, "message"),
                    index,
                }),
            })
            .collect();
        let text = Bytes::new(serde_json::to_vec(&doc).unwrap_or_default());
        Order::checked(raw, text, what)
    }

    /// The checks the schema cannot make: safe task file names, every name unique.
    fn checked(mut items: Vec<Raw>, text: Bytes, what: &str) -> CResult<Order> {
        // A list collected in place keeps the allocation of what it was collected from.
        items.shrink_to_fit();
        let invalid = |msg: String| Failure::new(Code::InvalidOrder, format!("{what} {msg}"));
        let mut by_name = Names::with_room(items.len());
        for (i, item) in items.iter().enumerate() {
            if let Item::Task(t) = item {
                check_task_name(&t.name)
                    .map_err(|e| invalid(format!("tasks[{}]: {}", t.index, e.one_line())))?;
            }
            if !by_name.insert(&items, i) {
                return Err(invalid(format!(
                    "names {:?} twice (task names and stop ids must all differ)",
                    item.id()
                )));
            }
        }
        Ok(Order {
            text,
            items,
            by_name,
        })
    }

    /// The document, parsed from its text: what a rewrite starts from.
    pub fn doc(&self) -> Value {
        serde_json::from_slice(&self.text).unwrap_or(Value::Null)
    }

    /// Checks the ids of an order a plan brings in (`import`): each must be a valid id for a
    /// new entry ([`Item::id_error`]). `what` names the order.
    pub fn check_new_ids(&self, what: &str) -> CResult<()> {
        for item in &self.items {
            if let Some(e) = item.id_error() {
                return Err(Failure::new(
                    Code::InvalidOrder,
                    format!(
                        "{what} tasks[{}]: {}; rename it (in the order, and its file for a task) and import again",
                        item.index(),
                        e.one_line()
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The tasks, in order.
    pub fn tasks(&self) -> impl Iterator<Item = &Task> {
        self.items.iter().filter_map(|i| match i {
            Item::Task(t) => Some(t),
            Item::Stop(_) => None,
        })
    }

    /// The stops, in order.
    pub fn stops(&self) -> impl Iterator<Item = &Stop> {
        self.items.iter().filter_map(|i| match i {
            Item::Stop(s) => Some(s),
            Item::Task(_) => None,
        })
    }

    /// Where the entry named `name` is in [`Order::items`].
    pub fn position(&self, name: &str) -> Option<usize> {
        self.by_name.get(&self.items, name)
    }

    /// The task named `name`.
    pub fn task(&self, name: &str) -> Option<&Task> {
        match self.items.get(self.by_name.get(&self.items, name)?)? {
            Item::Task(t) => Some(t),
            Item::Stop(_) => None,
        }
    }

    /// The stop `id`.
    pub fn stop(&self, id: &str) -> Option<&Stop> {
        match self.items.get(self.by_name.get(&self.items, id)?)? {
            Item::Stop(s) => Some(s),
            Item::Task(_) => None,
        }
    }

    /// The document with task `name`'s `model` and `thinking` set (other fields kept).
    pub fn with_pair(&self, name: &str, model: &str, thinking: &str) -> Value {
        let mut doc = self.doc();
        if let Some(entry) = self
            .task(name)
            .and_then(|t| doc["tasks"].get_mut(t.index))
            .and_then(Value::as_object_mut)
        {
            entry.insert("model".into(), Value::String(model.into()));
            entry.insert("thinking".into(), Value::String(thinking.into()));
        }
        doc
    }

    /// A second import: this order's entries stay as they are (escalations kept); each entry
    /// of `incoming` it lacks is inserted after the nearest entry before it in `incoming` that
    /// this order has. Nothing is removed.
    pub fn merged(&self, incoming: &Order) -> Value {
        let mut doc = self.doc();
        let mut list: Vec<Value> = doc["tasks"].as_array().cloned().unwrap_or_default();
        let mut ids: Vec<String> = self.items.iter().map(|i| i.id().to_string()).collect();
        let raw = incoming.doc()["tasks"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let mut at = 0;
        for (item, v) in incoming.items.iter().zip(raw) {
            match ids.iter().position(|id| id == item.id()) {
                Some(i) => at = i + 1,
                None => {
                    list.insert(at, v);
                    ids.insert(at, item.id().to_string());
                    at += 1;
                }
            }
        }
        doc["tasks"] = Value::Array(list);
        doc
    }
}

/// The seed's escalation ladder: level 1 to 4.
pub const LADDER: [(&str, &str); 4] = [
    ("sonnet", "thinking"),
    ("sonnet", "extended"),
    ("opus", "extended"),
    ("opus", "ultrathink"),
];

/// How capable a model is, by its family name (`claude-opus-4` is opus); unknown is lowest.
fn model_rank(model: &str) -> u8 {
    let m = model.to_ascii_lowercase();
    if m.contains("opus") {
        3
    } else if m.contains("sonnet") {
        2
    } else if m.contains("haiku") {
        1
    } else {
        0
    }
}

fn thinking_rank(thinking: &str) -> u8 {
    match thinking {
        "thinking" => 1,
        "extended" => 2,
        "ultrathink" => 3,
        _ => 0,
    }
}

fn ranks(model: Option<&str>, thinking: Option<&str>) -> (u8, u8) {
    (
        model.map_or(0, model_rank),
        thinking.map_or(0, thinking_rank),
    )
}

/// The next rung for a task at (`model`, `thinking`): the first ladder level at or above it in
/// both model and thinking, and not equal to it. `None` past level 4.
pub fn next_rung(
    model: Option<&str>,
    thinking: Option<&str>,
) -> Option<(usize, &'static str, &'static str)> {
    let cur = ranks(model, thinking);
    LADDER.iter().enumerate().find_map(|(i, &(m, t))| {
        let r = ranks(Some(m), Some(t));
        (r.0 >= cur.0 && r.1 >= cur.1 && r != cur).then_some((i + 1, m, t))
    })
}

/// The ladder level of a pair (0 when it is not on the ladder).
pub fn level_of(model: Option<&str>, thinking: Option<&str>) -> usize {
    let cur = ranks(model, thinking);
    LADDER
        .iter()
        .position(|&(m, t)| ranks(Some(m), Some(t)) == cur)
        .map_or(0, |i| i + 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    #[test]
    fn the_ladder_climbs_from_anywhere() {
        assert_eq!(
            next_rung(Some("sonnet"), Some("none")),
            Some((1, "sonnet", "thinking"))
        );
        assert_eq!(
            next_rung(Some("sonnet"), Some("thinking")),
            Some((2, "sonnet", "extended"))
        );
        assert_eq!(
            next_rung(Some("sonnet"), Some("extended")),
            Some((3, "opus", "extended"))
        );
        assert_eq!(
            next_rung(Some("opus"), Some("extended")),
            Some((4, "opus", "ultrathink"))
        );
        assert_eq!(next_rung(Some("opus"), Some("ultrathink")), None);
        // Never down in either dimension.
        assert_eq!(
            next_rung(Some("opus"), Some("thinking")),
            Some((3, "opus", "extended"))
        );
        assert_eq!(
            next_rung(Some("sonnet"), Some("ultrathink")),
            Some((4, "opus", "ultrathink"))
        );
        assert_eq!(next_rung(None, None), Some((1, "sonnet", "thinking")));
        assert_eq!(next_rung(Some("claude-opus-4-1"), Some("ultrathink")), None);
        assert_eq!(level_of(Some("opus"), Some("extended")), 3);
        assert_eq!(level_of(Some("haiku"), None), 0);
    }

    /// The fast parse alone: `Some` when it vouches for the bytes.
    fn fast(bytes: &[u8]) -> Option<Vec<Item>> {
        let w = serde_json::from_slice::<Wire>(bytes).ok()?;
        let mut shared = Shared::default();
        let raw = w
            .tasks
            .into_iter()
            .enumerate()
            .map(|(i, item)| item.vouched(i, &mut shared))
            .collect::<Option<Vec<Raw>>>()?;
        Some(
            Order::checked(raw, Bytes::new(bytes.to_vec()), "o")
                .ok()?
                .items,
        )
    }

    fn field() -> impl Strategy<Value = Option<Value>> {
        prop_oneof![
            3 => Just(None),
            1 => Just(Some(Value::Null)),
            1 => Just(Some(json!(7))),
            1 => Just(Some(json!(""))),
            4 => prop::sample::select(vec!["a.md", "b.md", "s", "none", "ultrathink", "opus", "x"])
                .prop_map(|s| Some(json!(s))),
        ]
    }

    fn entry() -> impl Strategy<Value = Value> {
        (
            field(),
            field(),
            field(),
            field(),
            field(),
            field(),
            any::<bool>(),
        )
            .prop_map(|(task, stop, group, model, thinking, message, extra)| {
                let mut m = serde_json::Map::new();
                for (k, v) in [
                    ("task", task),
                    ("stop", stop),
                    ("group", group),
                    ("model", model),
                    ("thinking", thinking),
                    ("message", message),
                ] {
                    if let Some(v) = v {
                        m.insert(k.into(), v);
                    }
                }
                if extra {
                    m.insert("notes".into(), json!([1, {"a": null}]));
                }
                Value::Object(m)
            })
    }

    proptest! {
        /// The fast parse is never looser than the schema, and reads what the tree reads.
        #[test]
        fn the_fast_parse_is_never_looser_than_the_schema(
            entries in prop::collection::vec(entry(), 0..6),
            twice in any::<bool>(),
        ) {
            let doc = json!({"tasks": entries});
            let mut text = serde_json::to_string(&doc).unwrap();
            if twice {
                // A key given twice: the tree keeps the last, the fast parse declines.
                text = text.replacen("\"task\":", "\"task\":\"z.md\",\"task\":", 1);
            }
            if let Some(items) = fast(text.as_bytes()) {
                let tree: Value = serde_json::from_str(&text).unwrap();
                prop_assert!(schema::check(SCHEMA, &tree).unwrap().is_ok(), "{text}");
                let slow = Order::parse(tree, "o").unwrap();
                prop_assert_eq!(items, slow.items);
            }
            // Either way, from_bytes agrees with the tree on acceptance.
            let tree: Value = serde_json::from_str(&text).unwrap();
            prop_assert_eq!(
                Order::from_bytes(&Bytes::new(text.as_bytes().to_vec()), "o").is_ok(),
                Order::parse(tree, "o").is_ok()
            );
        }
    }

    #[test]
    fn names_are_checked_and_unique() {
        let bad = json!({"tasks": [{"task": "../x.md"}]});
        assert_eq!(Order::parse(bad, "o").unwrap_err().code, Code::InvalidOrder);
        let twice = json!({"tasks": [{"task": "a.md"}, {"stop": "a.md"}]});
        assert!(Order::parse(twice, "o")
            .unwrap_err()
            .message
            .contains("twice"));
    }

    #[test]
    fn a_merge_adds_only_what_is_new_in_place() {
        let cur = Order::parse(
            json!({"tasks": [{"task": "a.md", "model": "opus"}, {"stop": "s"}, {"task": "c.md"}]}),
            "o",
        )
        .unwrap();
        let new = Order::parse(
            json!({"tasks": [{"task": "a.md", "model": "sonnet"}, {"task": "b.md"}, {"stop": "s"}, {"task": "d.md"}]}),
            "o",
        )
        .unwrap();
        let merged = Order::parse(cur.merged(&new), "o").unwrap();
        let ids: Vec<&str> = merged.items.iter().map(Item::id).collect();
        assert_eq!(ids, ["a.md", "b.md", "s", "d.md", "c.md"]);
        assert_eq!(merged.task("a.md").unwrap().model.as_deref(), Some("opus"));
    }
}
