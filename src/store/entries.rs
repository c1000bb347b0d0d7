//! A state document read one entry at a time (issue 23): the entries of its one bulky member
//! (`tasks`: an array, or an object keyed by id) are each parsed, checked against the schema
//! and handed to the caller (who types and keeps them) while the next is read, so the JSON tree
//! of the whole document never exists at once. The rest of the document is checked with that
//! member empty.
//!
//! This is the whole check when the member's schema constrains each entry alone (the member is
//! `{"type": "array", "items": …}` or `{"type": "object", "additionalProperties": …}`, with no
//! counts or uniqueness, and the document's schema with no `anyOf`, `if` and the like beyond an
//! `allOf` that only requires members to be there, as in the three schemas it is used with
//! (projects' tasks.json, execute's and iterative's state; `tests` holds them to it). Anything
//! else — an entry or the rest refused, the caller refusing an entry (a key it has already, in
//! particular), a member given twice, a member that is neither an array nor an object, bytes
//! that are not a JSON object —
//! answers `None`, and the caller reads and checks the whole document instead, which words the
//! verdict.
//!
//! Each entry type is its own schema check ([`Strict`]: projects' and execute's tasks,
//! iterative's units), read straight from the bytes into its type ([`read_strict`]), never a
//! JSON tree; the rest of the document is checked by the schema's own check
//! ([`schema::Native`], which takes the document with those entries empty): a valid document
//! is read without the schema's validator. The tests here read entries as JSON checked against
//! the entry schema instead.

use std::fmt;

use serde::de::{
    DeserializeOwned, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor,
};
use serde::Deserialize;
use serde_json::{Map, Value};

use super::base::{Src, Window};
use super::scan::Scan;
use super::schema;
use crate::error::Result;

/// An entry type that reads itself straight from the document's bytes and refuses there
/// whatever its member's entry schema refuses: its entries are then never a JSON tree, and the
/// schema check is its own (each implementation is held to its schema by a property test).
pub trait Strict: Sized {
    /// Reads one entry, failing on anything the entry schema would refuse.
    fn strict<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error>;
}

/// A second member of the document read whole by its own strict reading (an array of records
/// that grows with the store, such as execute's merge queue): never a JSON tree either. The
/// rest of the document is checked with it empty, so its reading must refuse whatever its
/// schema refuses, entry by entry, as a [`Strict`] entry does.
pub trait Side {
    /// The member's name; `None` reads no second member.
    fn key(&self) -> Option<&str>;
    /// Reads the member's value (an error sends the caller to the whole reading).
    fn read<'de, A: MapAccess<'de>>(&mut self, m: &mut A) -> std::result::Result<(), A::Error>;
}

/// No second member.
pub struct NoSide;

impl Side for NoSide {
    fn key(&self) -> Option<&str> {
        None
    }

    fn read<'de, A: MapAccess<'de>>(&mut self, m: &mut A) -> std::result::Result<(), A::Error> {
        m.next_value::<IgnoredAny>().map(drop)
    }
}

/// How the entries of the member are read and handed over.
trait Entries {
    /// Reads one entry from `d` and hands it over with its key; `false` refuses it.
    fn entry<'de, D: Deserializer<'de>>(
        &mut self,
        name: Option<String>,
        d: D,
    ) -> std::result::Result<bool, D::Error>;
}

/// Each entry read as a JSON value and checked against the member's entry schema (the tests'
/// reading).
#[cfg(test)]
struct Checked<F> {
    /// The entries' own schema, compiled.
    schema: &'static jsonschema::Validator,
    take: F,
}

#[cfg(test)]
impl<F: FnMut(Option<String>, Value) -> bool> Entries for Checked<F> {
    fn entry<'de, D: Deserializer<'de>>(
        &mut self,
        name: Option<String>,
        d: D,
    ) -> std::result::Result<bool, D::Error> {
        let value = Value::deserialize(d)?;
        Ok(self.schema.is_valid(&value) && (self.take)(name, value))
    }
}

/// Each entry read by its own strict reading ([`Strict`]).
struct Direct<E, F>(F, std::marker::PhantomData<E>);

impl<E: Strict, F: FnMut(Option<String>, E) -> bool> Entries for Direct<E, F> {
    fn entry<'de, D: Deserializer<'de>>(
        &mut self,
        name: Option<String>,
        d: D,
    ) -> std::result::Result<bool, D::Error> {
        Ok((self.0)(name, E::strict(d)?))
    }
}

/// Reads `bytes` entry by entry (see the module): each entry of the member `key` goes to `take`
/// with its key (`None` in an array) once checked; returns the rest of the document (the
/// member empty), checked. `take` answers `false` to refuse an entry.
#[cfg(test)]
fn read_checked(
    bytes: &[u8],
    schema_name: &'static str,
    key: &str,
    take: impl FnMut(Option<String>, Value) -> bool,
) -> Result<Option<Map<String, Value>>> {
    // Compiled (or its error said) before any entry is read.
    let entry_schema = schema::entry_validator(schema_name, key)?;
    let checked = Checked {
        schema: entry_schema,
        take,
    };
    read_with(bytes, schema_name, key, checked, &mut NoSide)
}

/// Reads `bytes` entry by entry, each entry read and handed over by `entries` (and the member
/// `side` names read by it); returns the rest of the document (the member, and the side's,
/// empty), checked against the schema (by its own check, [`schema::Native`], when it takes
/// it), or `None` (see the module).
#[cfg(test)]
fn read_with(
    bytes: &[u8],
    schema_name: &'static str,
    key: &str,
    entries: impl Entries,
    side: &mut impl Side,
) -> Result<Option<Map<String, Value>>> {
    // Checked as UTF-8 once, not string by string (bytes that are not go to the whole reading,
    // which refuses them).
    let Ok(text) = std::str::from_utf8(bytes) else {
        return Ok(None);
    };
    read_from(
        serde_json::Deserializer::from_str(text),
        schema_name,
        key,
        entries,
        side,
    )
}

/// The document read entry by entry (see the module) from any of serde_json's readers (the
/// bytes held, or a file as a stream).
fn read_from<'de, R: serde_json::de::Read<'de>>(
    mut de: serde_json::Deserializer<R>,
    schema_name: &'static str,
    key: &str,
    mut entries: impl Entries,
    side: &mut impl Side,
) -> Result<Option<Map<String, Value>>> {
    let mut read = Read {
        key,
        entries: &mut entries,
        side,
        ok: true,
    };
    let head = match (&mut read).deserialize(&mut de) {
        Ok(head) if de.end().is_ok() => head,
        _ => return Ok(None),
    };
    let Some(head) = head.filter(|_| read.ok) else {
        return Ok(None);
    };
    let head = Value::Object(head);
    Ok(match schema::check(schema_name, &head)? {
        Ok(()) => match head {
            Value::Object(m) => Some(m),
            _ => None,
        },
        Err(_) => None,
    })
}

/// The document read entry by entry (see the module), typed: each entry of the member `key`
/// read by its own strict reading ([`Strict`], never a JSON tree) and handed to `add` with its
/// key (answering `false` refuses it; `add` must refuse a key it was given before), the member
/// `side` names read whole by it, the rest of the document checked and typed as `T`, and `fill`
/// puts what `add` gathered and the side into it (told whether the member was there at all). Anything
/// refused goes to the whole reading ([`super::parse_typed`]), which words why the document is
/// unusable; `T` then comes whole from it, and `fill` is not called.
pub fn read_strict<T, E, C, S>(
    bytes: &[u8],
    schema_name: &'static str,
    key: &str,
    add: impl FnMut(&mut C, Option<String>, E) -> bool,
    side: S,
    fill: impl FnOnce(&mut T, C, bool, S),
) -> Result<std::result::Result<T, String>>
where
    T: DeserializeOwned,
    E: Strict,
    C: Default,
    S: Side,
{
    let Ok(text) = std::str::from_utf8(bytes) else {
        return super::parse_typed::<T>(bytes, schema_name);
    };
    let de = serde_json::Deserializer::from_str(text);
    match strict_from(de, schema_name, key, add, side, fill)? {
        Some(whole) => Ok(Ok(whole)),
        None => super::parse_typed::<T>(bytes, schema_name),
    }
}

/// [`read_strict`] from a file read as a stream ([`super::Stream`]: never held whole), for a
/// document too large to hold beside what it gives (issue 23). `None` when anything is refused
/// (or the stream fails): the caller then reads the whole document, whose reading words why.
///
/// The stream passes through a window ([`Window`]) that a scan ([`Scan`]) splits as it goes:
/// each entry of the member `key` is parsed from its own bytes by its strict reading (never
/// the whole document through serde_json's byte-at-a-time reader), and the rest of the document
/// is gathered, with the member empty, and read as [`read_strict`] reads a document. The scan
/// checks the structure between what it hands to serde_json (brackets, commas, colons, the end),
/// and serde_json all it is handed: what this takes, [`read_strict`] takes, and gives the same
/// (`tests` hold the two to it).
pub fn read_strict_stream<T, E, C, S>(
    stream: super::Stream<'_>,
    schema_name: &'static str,
    key: &str,
    mut add: impl FnMut(&mut C, Option<String>, E) -> bool,
    side: S,
    fill: impl FnOnce(&mut T, C, bool, S),
) -> Result<Option<T>>
where
    T: DeserializeOwned,
    E: Strict,
    C: Default,
    S: Side,
{
    let mut gathered = C::default();
    let mut s = Scan::new(Window::new(stream));
    // The document without the member's entries: its other members as they stand.
    let mut head = b"{".to_vec();
    s.ws();
    let walked = s.each(b'{', b'}', |s| {
        s.b.mark(s.at);
        let k = s.key()?;
        let raw = s.b.range(k)?.into_owned();
        let name = serde_json::from_slice::<String>(&raw).ok()?;
        if head.len() > 1 {
            head.push(b',');
        }
        head.extend_from_slice(&raw);
        head.push(b':');
        if name != key {
            let v = s.value()?;
            head.extend_from_slice(&s.b.range(v)?);
            return Some(());
        }
        let mut entry = |s: &mut Scan<Window<super::Stream<'_>>>, id: Option<String>| {
            let v = s.value()?;
            let bytes = s.b.range(v)?;
            let mut de = serde_json::Deserializer::from_slice(&bytes);
            let e = E::strict(&mut de).ok()?;
            de.end().ok()?;
            add(&mut gathered, id, e).then_some(())
        };
        match s.peek()? {
            b'{' => {
                head.extend_from_slice(b"{}");
                s.each(b'{', b'}', |s| {
                    s.b.mark(s.at);
                    let k = s.key()?;
                    let id = serde_json::from_slice::<String>(&s.b.range(k)?).ok()?;
                    entry(s, Some(id))
                })
            }
            b'[' => {
                head.extend_from_slice(b"[]");
                s.each(b'[', b']', |s| {
                    s.b.mark(s.at);
                    entry(s, None)
                })
            }
            _ => None,
        }
    });
    s.ws();
    if walked.is_none() || s.peek().is_some() || s.b.failed() {
        return Ok(None);
    }
    head.push(b'}');
    let Ok(text) = std::str::from_utf8(&head) else {
        return Ok(None);
    };
    // The rest read as a document whose member is empty; what was gathered is put in.
    let de = serde_json::Deserializer::from_str(text);
    let none = |_: &mut C, _: Option<String>, _: E| false;
    strict_from(
        de,
        schema_name,
        key,
        none,
        side,
        |whole, _, present, side| fill(whole, gathered, present, side),
    )
}

/// [`read_strict`] from any of serde_json's readers; `None` when anything is refused.
fn strict_from<'de, R, T, E, C, S>(
    de: serde_json::Deserializer<R>,
    schema_name: &'static str,
    key: &str,
    mut add: impl FnMut(&mut C, Option<String>, E) -> bool,
    mut side: S,
    fill: impl FnOnce(&mut T, C, bool, S),
) -> Result<Option<T>>
where
    R: serde_json::de::Read<'de>,
    T: DeserializeOwned,
    E: Strict,
    C: Default,
    S: Side,
{
    let mut gathered = C::default();
    let direct = Direct(
        |name, e| add(&mut gathered, name, e),
        std::marker::PhantomData,
    );
    let head = read_from(de, schema_name, key, direct, &mut side)?;
    let typed = head.and_then(|head| {
        let present = head.contains_key(key);
        let head = serde_json::from_value::<T>(Value::Object(head)).ok()?;
        Some((head, present))
    });
    Ok(typed.map(|(mut whole, present)| {
        fill(&mut whole, gathered, present, side);
        whole
    }))
}

struct Read<'a, S, Q> {
    key: &'a str,
    entries: &'a mut S,
    side: &'a mut Q,
    /// Cleared by anything that sends the caller to the whole document.
    ok: bool,
}

impl<'de, S: Entries, Q: Side> DeserializeSeed<'de> for &mut Read<'_, S, Q> {
    type Value = Option<Map<String, Value>>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> std::result::Result<Self::Value, D::Error> {
        d.deserialize_map(Top(self))
    }
}

/// The document: its members, the bulky one read entry by entry.
struct Top<'r, 'a, S, Q>(&'r mut Read<'a, S, Q>);

impl<'de, S: Entries, Q: Side> Visitor<'de> for Top<'_, '_, S, Q> {
    type Value = Option<Map<String, Value>>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> std::result::Result<Self::Value, A::Error> {
        let mut head = Map::new();
        while let Some(k) = m.next_key::<String>()? {
            if head.contains_key(&k) {
                // A member given twice: the whole document's reading decides.
                self.0.ok = false;
            }
            if k == self.0.key {
                let empty = m.next_value_seed(Member(&mut *self.0))?;
                head.insert(k, empty);
            } else if self.0.side.key() == Some(k.as_str()) {
                self.0.side.read(&mut m)?;
                head.insert(k, Value::Array(Vec::new()));
            } else {
                let v = m.next_value::<Value>()?;
                head.insert(k, v);
            }
        }
        Ok(Some(head))
    }
}

/// The bulky member: its entries handed over one by one; it reads as its empty self.
struct Member<'r, 'a, S, Q>(&'r mut Read<'a, S, Q>);

/// One entry of the member, with its key: read and handed over, or (once anything was
/// refused) skipped.
struct One<'r, 'a, S, Q>(&'r mut Read<'a, S, Q>, Option<String>);

impl<'de, S: Entries, Q> DeserializeSeed<'de> for One<'_, '_, S, Q> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> std::result::Result<(), D::Error> {
        if self.0.ok {
            self.0.ok = self.0.entries.entry(self.1, d)?;
        } else {
            IgnoredAny::deserialize(d)?;
        }
        Ok(())
    }
}

impl<'de, S: Entries, Q> DeserializeSeed<'de> for Member<'_, '_, S, Q> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> std::result::Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de, S: Entries, Q> Visitor<'de> for Member<'_, '_, S, Q> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array or an object")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> std::result::Result<Value, A::Error> {
        while s.next_element_seed(One(&mut *self.0, None))?.is_some() {}
        Ok(Value::Array(Vec::new()))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> std::result::Result<Value, A::Error> {
        // A key given twice is the caller's to refuse (its `add` answers `false` for a key it
        // has; the whole document's reading then decides which value holds): the caller keeps
        // the keys anyway, so they are not kept twice.
        while let Some(k) = m.next_key::<String>()? {
            m.next_value_seed(One(&mut *self.0, Some(k)))?;
        }
        Ok(Value::Object(Map::new()))
    }

    // Any other kind of value is not one the visitor takes: its error sends the caller to the
    // whole reading.
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The members read entry by entry are constrained entry by entry in every schema this is
    /// used with: the type and the entries' schema, nothing about their number or uniqueness.
    #[test]
    fn the_members_read_by_entries_constrain_each_entry_alone() {
        for (file, key) in [
            ("projects-tasks", "tasks"),
            ("execute-state", "tasks"),
            ("execute-state", "merge_queue"),
            ("iterative-state", "tasks"),
        ] {
            let text = match file {
                "projects-tasks" => include_str!("../../schemas/projects-tasks.schema.json"),
                "iterative-state" => include_str!("../../schemas/iterative-state.schema.json"),
                _ => include_str!("../../schemas/execute-state.schema.json"),
            };
            let s: Value = serde_json::from_str(text).unwrap();
            let member = s["properties"][key].as_object().unwrap();
            let mut keys: Vec<&str> = member.keys().map(String::as_str).collect();
            keys.sort();
            let entries = if member["type"] == "array" {
                "items"
            } else {
                "additionalProperties"
            };
            let mut want = ["description", entries, "type"];
            want.sort();
            assert_eq!(keys, want, "{file} {key}");
            for whole in ["anyOf", "oneOf", "if", "not", "dependentSchemas"] {
                assert!(s.get(whole).is_none(), "{file} has {whole}");
            }
            // An `allOf` may only require members to be there (the rest keeps the member,
            // empty, so its presence is judged the same).
            for part in s
                .get("allOf")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let then = part["then"].as_object().unwrap();
                assert_eq!(then.keys().collect::<Vec<_>>(), ["required"], "{file}");
                let mut keys: Vec<&str> = part
                    .as_object()
                    .unwrap()
                    .keys()
                    .map(String::as_str)
                    .collect();
                keys.sort();
                assert_eq!(keys, ["if", "then"], "{file}");
            }
        }
    }

    fn read(doc: &Value, schema: &'static str) -> Option<(Map<String, Value>, Vec<Value>)> {
        let bytes = serde_json::to_vec(doc).unwrap();
        let mut got = Vec::new();
        let head = read_checked(&bytes, schema, "tasks", |_, v| {
            got.push(v);
            true
        })
        .unwrap()?;
        Some((head, got))
    }

    /// A document is read by entries exactly when the whole check accepts it, and gives the
    /// same members.
    #[test]
    fn reading_by_entries_accepts_what_the_whole_check_accepts() {
        let task = |id: &str, status: &str| json!({"id": id, "status": status});
        for doc in [
            json!({"tasks": [task("A", "PENDING"), task("B", "COMPLETE")], "x": 1}),
            json!({"tasks": []}),
            json!({"tasks": [task("A", "DONE")]}),
            json!({"tasks": [task("", "PENDING")]}),
            json!({"tasks": [1]}),
            json!({"tasks": {}}),
            json!({"tasks": 3}),
            json!({"other": []}),
            json!([{"tasks": []}]),
        ] {
            let whole = matches!(schema::check("projects-tasks", &doc), Ok(Ok(())));
            let by = read(&doc, "projects-tasks");
            assert_eq!(by.is_some(), whole, "{doc}");
            if let Some((mut head, entries)) = by {
                head.insert("tasks".into(), Value::Array(entries));
                let mut want = doc.as_object().unwrap().clone();
                want.sort_keys();
                head.sort_keys();
                assert_eq!(Value::Object(head), Value::Object(want));
            }
        }
        // The document's own required fields are the rest's to check.
        let state = json!({"schema_version": "2.0", "status": "pending",
            "tasks": {"A": {"status": "pending"}, "B": {"status": "failed"}}});
        assert!(read(&state, "execute-state").is_some());
        let bad = json!({"status": "pending", "tasks": {"A": {"status": "pending"}}});
        assert!(read(&bad, "execute-state").is_none());
        let bad = json!({"schema_version": "2.0", "status": "pending", "tasks": {"A": {"status": "lost"}}});
        assert!(read(&bad, "execute-state").is_none());
        // A key given twice, which the caller refuses, or a member given twice goes to the
        // whole reading.
        let twice = br#"{"schema_version": "2.0", "status": "pending", "tasks": {"A": {"status": "pending"}, "A": {"status": "failed"}}}"#;
        let mut keys = std::collections::HashSet::new();
        assert!(
            read_checked(twice, "execute-state", "tasks", |k, _| keys.insert(k))
                .unwrap()
                .is_none()
        );
        let twice = br#"{"tasks": [], "tasks": []}"#;
        assert!(read_checked(twice, "projects-tasks", "tasks", |_, _| true)
            .unwrap()
            .is_none());
        // An entry the caller refuses, trailing bytes, broken JSON: the whole reading.
        assert!(read_checked(
            br#"{"tasks": [{"id": "A", "status": "PENDING"}]}"#,
            "projects-tasks",
            "tasks",
            |_, _| false
        )
        .unwrap()
        .is_none());
        assert!(
            read_checked(br#"{"tasks": []} x"#, "projects-tasks", "tasks", |_, _| {
                true
            })
            .unwrap()
            .is_none()
        );
        assert!(read_checked(
            br#"{"tasks": [{"id": "A""#,
            "projects-tasks",
            "tasks",
            |_, _| true
        )
        .unwrap()
        .is_none());
    }
}
