//! Small helpers for state kept as JSON values, where unknown fields must survive a rewrite:
//! slots made into the kind a layout needs (never a panic on a file of the wrong shape), and
//! the two ends of a typed model: [`typed`] reads one from the checked document, [`write_back`]
//! puts it back so the file's key order and its unknown fields (kept by the model in a
//! `#[serde(flatten)]` map) survive.

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{Map, Value};

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
    match (old, new) {
        (Value::Object(mut old), Value::Object(mut new)) => {
            // Linear: each key is looked up once by hash, none is removed from the middle.
            let mut out = Map::with_capacity(new.len());
            for (k, o) in std::mem::take(&mut old) {
                if let Some(n) = new.get_mut(&k) {
                    let n = std::mem::take(n);
                    out.insert(k, keep_order(o, n));
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
                        Some(o) => keep_order(o, n),
                        None => n,
                    })
                    .collect(),
            )
        }
        (_, new) => new,
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
            rest: Map::new(),
        });
        write_back(&mut doc, &m).unwrap();
        assert_eq!(
            serde_json::to_string(&doc).unwrap(),
            r#"{"z":1,"tasks":[{"status":"completed","x":[1],"id":"a"},{"id":"b","status":"pending"}],"a":{"q":1,"p":2}}"#
        );
    }
}
