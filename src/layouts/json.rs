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

/// The byte ranges of the elements of the array a JSON object document holds at its top-level
/// `key`, found by one linear scan (strings and their escapes honoured), so a write can change
/// one element's bytes and keep the others as they are. `None` when the bytes are not such an
/// object, the key is written with escapes or more than once, or anything is out of place: the
/// caller then writes the whole document.
pub fn element_spans(bytes: &[u8], key: &str) -> Option<Vec<std::ops::Range<usize>>> {
    let mut s = Scan { b: bytes, at: 0 };
    s.ws();
    s.eat(b'{')?;
    let mut found = None;
    loop {
        s.ws();
        if s.peek()? == b'}' {
            break;
        }
        let k = s.string()?;
        s.ws();
        s.eat(b':')?;
        s.ws();
        let raw = bytes.get(k.start + 1..k.end - 1)?;
        if raw.contains(&b'\\') {
            return None;
        }
        if raw == key.as_bytes() {
            if found.is_some() {
                return None;
            }
            found = Some(s.elements()?);
        } else {
            s.value()?;
        }
        s.ws();
        match s.next()? {
            b',' => continue,
            b'}' => break,
            _ => return None,
        }
    }
    found
}

/// A cursor over JSON bytes for [`element_spans`]: every step checks its bounds.
struct Scan<'a> {
    b: &'a [u8],
    at: usize,
}

impl Scan<'_> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.at).copied()
    }

    fn next(&mut self) -> Option<u8> {
        let c = self.peek()?;
        self.at += 1;
        Some(c)
    }

    fn eat(&mut self, c: u8) -> Option<()> {
        (self.next()? == c).then_some(())
    }

    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    /// A string, quotes included.
    fn string(&mut self) -> Option<std::ops::Range<usize>> {
        let start = self.at;
        self.eat(b'"')?;
        loop {
            match self.next()? {
                b'"' => return Some(start..self.at),
                b'\\' => {
                    self.next()?;
                }
                _ => {}
            }
        }
    }

    /// One value of any kind.
    fn value(&mut self) -> Option<std::ops::Range<usize>> {
        let start = self.at;
        match self.peek()? {
            b'"' => {
                self.string()?;
            }
            b'{' | b'[' => {
                let mut depth = 0usize;
                loop {
                    match self.peek()? {
                        b'"' => {
                            self.string()?;
                            continue;
                        }
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => depth = depth.checked_sub(1)?,
                        _ => {}
                    }
                    self.at += 1;
                    if depth == 0 {
                        break;
                    }
                }
            }
            _ => {
                while !matches!(
                    self.peek()?,
                    b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r'
                ) {
                    self.at += 1;
                }
            }
        }
        (self.at > start).then_some(start..self.at)
    }

    /// The elements of an array.
    fn elements(&mut self) -> Option<Vec<std::ops::Range<usize>>> {
        self.eat(b'[')?;
        let mut out = Vec::new();
        self.ws();
        if self.peek()? == b']' {
            self.at += 1;
            return Some(out);
        }
        loop {
            self.ws();
            out.push(self.value()?);
            self.ws();
            match self.next()? {
                b',' => continue,
                b']' => return Some(out),
                _ => return None,
            }
        }
    }
}

/// `value` pretty-printed as an element nested `depth` levels deep in a document that
/// `store::to_pretty` writes (two spaces a level): the same bytes that document has there.
pub fn pretty_at(value: &Value, depth: usize) -> Vec<u8> {
    let flat = serde_json::to_vec_pretty(value).unwrap_or_default();
    let pad = 2 * depth;
    let mut out = Vec::with_capacity(flat.len() + flat.len() / 8 * pad);
    for &c in &flat {
        out.push(c);
        if c == b'\n' {
            out.extend(std::iter::repeat_n(b' ', pad));
        }
    }
    out
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
    fn element_spans_split_an_array_and_refuse_what_they_cannot() {
        let doc = br#" {"a": {"tasks": [1]}, "tasks" : [ {"s": "x\"]}"} , [1, [2]], "y", -1.5e3, null ], "z": "}"} "#;
        let spans = element_spans(doc, "tasks").unwrap();
        let parts: Vec<&str> = spans
            .iter()
            .map(|r| std::str::from_utf8(&doc[r.clone()]).unwrap())
            .collect();
        assert_eq!(
            parts,
            [r#"{"s": "x\"]}"}"#, "[1, [2]]", r#""y""#, "-1.5e3", "null"]
        );
        assert!(element_spans(br#"{"tasks": []}"#, "tasks")
            .unwrap()
            .is_empty());
        for bad in [
            &br#"{"tasks": [1], "tasks": [2]}"#[..],
            br#"{"ta\u0073ks": [1]}"#,
            br#"{"tasks": {"a": 1}}"#,
            br#"{"tasks": [1, 2"#,
            br#"[{"tasks": [1]}]"#,
            br#"{"other": [1]}"#,
            b"",
        ] {
            assert_eq!(
                element_spans(bad, "tasks"),
                None,
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    #[test]
    fn an_element_printed_at_its_depth_is_what_the_whole_document_has_there() {
        let el = json!({"id": "T1", "deps": [], "o": {"k": [1, {"x": null}]}, "s": "a\nb"});
        let doc = json!({"tasks": [el.clone()]});
        let whole = String::from_utf8(crate::store::to_pretty(&doc)).unwrap();
        let part = String::from_utf8(pretty_at(&el, 2)).unwrap();
        assert!(
            whole.contains(&format!("\n    {part}\n")),
            "{whole}\n---\n{part}"
        );
    }

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
