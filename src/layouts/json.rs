//! Small helpers for state kept as JSON values, where unknown fields must survive a rewrite:
//! slots made into the kind a layout needs (never a panic on a file of the wrong shape).

use serde_json::{Map, Value};

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
}
