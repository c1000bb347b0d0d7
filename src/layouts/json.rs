//! Small helpers for state kept as JSON values, where unknown fields must survive a rewrite:
//! slots made into the kind a layout needs (never a panic on a file of the wrong shape), and
//! the two ends of a typed model: [`typed`] reads one from the checked document, [`write_back`]
//! puts it back so the file's key order and its unknown fields (kept by the model in a
//! `#[serde(flatten)]` map) survive.

use std::borrow::Cow;

use serde::de::{self, DeserializeOwned, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde::Serialize;
use serde_json::{Map, Value};

mod in_place;
pub use in_place::{pretty_at, write_in_place, write_pretty_at, Shape, Splice};

/// The typed model of a document already checked against its schema; the error names what did
/// not fit, in one line.
pub fn typed<T: DeserializeOwned>(doc: &Value) -> Result<T, String> {
    T::deserialize(doc).map_err(|e| e.to_string())
}

/// Writes a typed model back over the document it was read from: the document becomes the
/// model, each object keeping the keys it had in the order it had them (new keys after them,
/// removed keys gone), arrays matched by position.
pub fn write_back<T: Serialize>(doc: &mut Value, model: &T) -> Result<(), String> {
    let new = serde_json::to_value(model).map_err(|e| e.to_string())?;
    let old = std::mem::take(doc);
    *doc = keep_order(old, new);
    Ok(())
}

/// `new`, with the key order of `old` wherever both hold an object at the same place.
pub fn keep_order(old: Value, new: Value) -> Value {
    ordered(old, new, true)
}

/// [`keep_order`]; `in_place` takes the objects whose keys already stand in the same order (a
/// file taskhook wrote) as they are, ordering their values in place, rather than rebuilding
/// them key by key (the tests hold the two ways to the same result).
fn ordered(old: Value, new: Value, in_place: bool) -> Value {
    match (old, new) {
        (Value::Object(mut old), Value::Object(mut new)) => {
            if in_place && old.len() == new.len() && old.keys().eq(new.keys()) {
                for ((_, o), (_, n)) in std::mem::take(&mut old).into_iter().zip(new.iter_mut()) {
                    *n = ordered(o, std::mem::take(n), in_place);
                }
                return Value::Object(new);
            }
            // Linear: each key is looked up once by hash, none is removed from the middle.
            let mut out = Map::with_capacity(new.len());
            for (k, o) in std::mem::take(&mut old) {
                if let Some(n) = new.get_mut(&k) {
                    let n = std::mem::take(n);
                    out.insert(k, ordered(o, n, in_place));
                }
            }
            for (k, n) in new {
                if !out.contains_key(&k) {
                    out.insert(k, n);
                }
            }
            Value::Object(out)
        }
        (Value::Array(old), Value::Array(new)) => {
            let mut old = old.into_iter();
            Value::Array(
                new.into_iter()
                    .map(|n| match old.next() {
                        Some(o) => ordered(o, n, in_place),
                        None => n,
                    })
                    .collect(),
            )
        }
        (_, new) => new,
    }
}

/// What a typed model was read from, for the write back: a file's checked bytes (parsed again
/// only by a write that needs the whole document; [`write_in_place`] needs less) or a document
/// made in memory.
#[derive(Debug, Clone)]
pub enum Source {
    /// A file's bytes, parsed and checked in this invocation (shared with what remembers
    /// their parse, and with the undo of a write over them).
    Bytes(crate::store::Bytes),
    /// A document made in memory (a new or rebuilt state).
    Value(Value),
}

impl Source {
    /// The bytes the document was read from; `None` for one made in memory.
    pub fn bytes(&self) -> Option<&crate::store::Bytes> {
        match self {
            Source::Bytes(b) => Some(b),
            Source::Value(_) => None,
        }
    }

    /// The document as JSON.
    pub fn to_value(&self) -> Result<Value, String> {
        match self {
            Source::Value(v) => Ok(v.clone()),
            Source::Bytes(b) => crate::store::parse_json(b),
        }
    }
}

/// Where `needle` first stands in `hay` (an empty needle: at 0): how recovery finds its way in
/// the bytes of a damaged file.
pub fn find_bytes(hay: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() {
        return Some(0);
    }
    hay.windows(needle.len()).position(|w| w == needle)
}

/// The value as an object, replacing it with an empty one when it is of another kind.
pub fn ensure_object(slot: &mut Value) -> &mut Map<String, Value> {
    match slot {
        Value::Object(m) => m,
        other => {
            *other = Value::Object(Map::new());
            ensure_object(other)
        }
    }
}

/// The value as an array, replacing it with an empty one when it is of another kind.
pub fn ensure_array(slot: &mut Value) -> &mut Vec<Value> {
    match slot {
        Value::Array(a) => a,
        other => {
            *other = Value::Array(Vec::new());
            ensure_array(other)
        }
    }
}

/// The object at `key` of `m`, created (or replaced) when missing or of another kind.
pub fn object_at<'a>(m: &'a mut Map<String, Value>, key: &str) -> &'a mut Map<String, Value> {
    ensure_object(m.entry(key).or_insert_with(|| Value::Object(Map::new())))
}

/// The array at `key` of `m`, created (or replaced) when missing or of another kind.
pub fn array_at<'a>(m: &'a mut Map<String, Value>, key: &str) -> &'a mut Vec<Value> {
    ensure_array(m.entry(key).or_insert_with(|| Value::Array(Vec::new())))
}

/// A string field, or `""`.
pub fn str_field<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

/// Sets a string field.
pub fn set_str(m: &mut Map<String, Value>, key: &str, v: &str) {
    m.insert(key.to_string(), Value::String(v.to_string()));
}

/// Merges `patch` into `target`: a `null` value deletes the key.
pub fn merge_keys(target: &mut Map<String, Value>, patch: &Map<String, Value>) {
    for (k, v) in patch {
        if v.is_null() {
            target.shift_remove(k);
        } else {
            target.insert(k.clone(), v.clone());
        }
    }
}

/// The non-empty strings of an array field.
pub fn string_list(v: &Value, key: &str) -> Vec<String> {
    v.get(key)
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// `with = "present"` on an `Option` field (with `default`): `Some` of whatever a present
/// field holds, `null` included, and `None` when it is absent. On an `Option<Option<T>>` it
/// tells absent (`None`), `null` (`Some(None)`) and a value apart, and each is written back as
/// it was read (with `skip_serializing_if = "Option::is_none"`).
pub mod present {
    use serde::{Deserialize, Deserializer};

    /// The present field's value.
    pub fn deserialize<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
        d: D,
    ) -> Result<Option<T>, D::Error> {
        T::deserialize(d).map(Some)
    }

    pub use super::as_is as serialize;
}

/// `with = "lenient"` on an `Option` field (with `default`): read as `T` when it is one, else
/// as none (the file is not taskhook's to judge here: the schema check says what is wrong).
pub mod lenient {
    use serde::de::DeserializeOwned;
    use serde::{Deserialize, Deserializer};
    use serde_json::Value;

    /// The field's value when it is a `T`.
    pub fn deserialize<'de, D: Deserializer<'de>, T: DeserializeOwned>(
        d: D,
    ) -> Result<Option<T>, D::Error> {
        Ok(serde_json::from_value(Value::deserialize(d)?).ok())
    }

    pub use super::as_is as serialize;
}

/// Serializes a value as it is: the writing half of a `#[serde(with = …)]` module whose
/// reading half is its own.
pub fn as_is<T: Serialize, S: serde::Serializer>(v: &T, s: S) -> Result<S::Ok, S::Error> {
    v.serialize(s)
}

/// Any JSON value, kept only when it is a string (borrowed from the input when it has no
/// escapes): a field that may hold anything, or a key.
pub struct Lenient<'a>(pub Option<Cow<'a, str>>);

impl<'de: 'a, 'a> Deserialize<'de> for Lenient<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Option<Cow<'de, str>>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("any value")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Some(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Some(Cow::Owned(v.to_string())))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
                Ok(None)
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
                Ok(None)
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
                Ok(None)
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
                Ok(None)
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(None)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Self::Value, A::Error> {
                while a.next_element::<IgnoredAny>()?.is_some() {}
                Ok(None)
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Self::Value, A::Error> {
                while a.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(None)
            }
        }
        d.deserialize_any(V).map(Lenient)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn slots_take_the_kind_asked_for() {
        let mut v = json!({"a": 1, "b": [1]});
        ensure_array(&mut v["a"]).push(json!(2));
        assert_eq!(v["a"], json!([2]));
        let m = ensure_object(&mut v);
        object_at(m, "c").insert("x".into(), json!(true));
        array_at(m, "b").push(json!(3));
        assert_eq!(v, json!({"a": [2], "b": [1, 3], "c": {"x": true}}));
    }

    #[derive(serde::Deserialize, Serialize)]
    struct Model {
        tasks: Vec<Task>,
        #[serde(flatten)]
        rest: Map<String, Value>,
    }

    #[derive(serde::Deserialize, Serialize)]
    struct Task {
        id: String,
        status: String,
        #[serde(flatten)]
        rest: Map<String, Value>,
    }

    #[test]
    fn a_typed_model_written_back_keeps_key_order_and_unknown_fields() {
        let text = r#"{"z":1,"tasks":[{"status":"pending","x":[1],"id":"a"}],"a":{"q":1,"p":2}}"#;
        let mut doc: Value = serde_json::from_str(text).unwrap();
        let mut m: Model = typed(&doc).unwrap();
        m.tasks[0].status = "completed".into();
        m.tasks.push(Task {
            id: "b".into(),
            status: "pending".into(),
            rest: Default::default(),
        });
        write_back(&mut doc, &m).unwrap();
        assert_eq!(
            serde_json::to_string(&doc).unwrap(),
            r#"{"z":1,"tasks":[{"status":"completed","x":[1],"id":"a"},{"id":"b","status":"pending"}],"a":{"q":1,"p":2}}"#
        );
    }

    /// `keep_order` without its fast path for objects whose keys already stand in the same
    /// order: the reference it must agree with.
    fn reference_keep_order(old: Value, new: Value) -> Value {
        ordered(old, new, false)
    }

    fn some_value() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let leaf = prop_oneof![Just(Value::Null), (0..3i64).prop_map(|n| json!(n))];
        leaf.prop_recursive(4, 48, 5, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::vec(("[a-d]", inner), 0..5)
                    .prop_map(|kv| Value::Object(kv.into_iter().collect())),
            ]
        })
    }

    proptest::proptest! {
        /// The same document, keys in the same order, as the reference: on random pairs and on
        /// a document against a changed copy of itself (the fast path's case).
        #[test]
        fn keep_order_is_the_reference(old in some_value(), new in some_value(), leaf in 0..3i64) {
            let same = |a: &Value, b: &Value| serde_json::to_string(a).unwrap() == serde_json::to_string(b).unwrap();
            let got = keep_order(old.clone(), new.clone());
            proptest::prop_assert!(same(&got, &reference_keep_order(old.clone(), new)));
            let mut changed = old.clone();
            if let Value::Object(m) = &mut changed {
                if let Some(v) = m.values_mut().last() {
                    *v = json!(leaf);
                }
            }
            let got = keep_order(old.clone(), changed.clone());
            proptest::prop_assert!(same(&got, &reference_keep_order(old, changed)));
        }
    }
}
