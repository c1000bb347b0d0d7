//! Byte-identical output without re-serialising what did not change (CONTRACT §3).
//!
//! taskhook writes a list as `serde_json`'s 2-space pretty form of the parsed document. A task
//! whose bytes in the file are already exactly that form (at its depth in the document) can be
//! copied as it is; [`is_canonical`] decides that with one pass over its bytes, conservatively:
//! whenever it cannot be sure (a float, an escape serde_json would not write, a duplicate key,
//! other whitespace), it says no, and that task is re-serialised through `serde_json`, which
//! is what the straightforward implementation does for every task.

use std::io::{self, Write};

use serde_json::{Map, Value};

use super::list::{List, RootVal};
use super::model::{stamp_kind, View};
use crate::layouts::json::write_pretty_at;

/// Whether `raw` (one valid JSON value) is byte for byte what `serde_json::to_vec_pretty` writes
/// for it when it sits at nesting `depth` of a pretty document (its closing bracket indented by
/// `2 * depth` spaces).
pub fn is_canonical(raw: &[u8], depth: usize) -> bool {
    let mut c = Cur { b: raw, i: 0 };
    c.value(depth) && c.i == raw.len()
}

/// Writing a parsed list back.
impl List<'_> {
    /// The whole document as taskhook writes it: 2-space pretty JSON and a final newline.
    pub fn to_bytes(&self) -> Vec<u8> {
        let size: usize = self
            .slots
            .iter()
            .map(|s| s.raw.map_or(256, str::len) + 6)
            .sum();
        let mut out = Vec::with_capacity(size + 256);
        // Writing to memory cannot fail.
        let _ = self.write_to(&mut out);
        out
    }

    /// Writes the whole document (see [`List::to_bytes`]) to `w`, task by task: tasks whose
    /// bytes are canonical are copied, the rest re-serialised.
    pub fn write_to(&self, w: &mut dyn Write) -> io::Result<()> {
        let mut buf = Vec::with_capacity(4096);
        w.write_all(b"{")?;
        for (n, (k, v)) in self.root.iter().enumerate() {
            buf.clear();
            buf.extend_from_slice(if n == 0 { b"\n  " } else { b",\n  " });
            write_pretty_at(&mut buf, k, 1);
            buf.extend_from_slice(b": ");
            match v {
                RootVal::Tasks => {
                    w.write_all(&buf)?;
                    self.write_tasks(w)?;
                    continue;
                }
                RootVal::Raw(r) => {
                    let parsed: Value = serde_json::from_str(r.get()).unwrap_or(Value::Null);
                    write_pretty_at(&mut buf, &parsed, 1);
                }
                RootVal::Owned(v) => write_pretty_at(&mut buf, v, 1),
            }
            w.write_all(&buf)?;
        }
        w.write_all(if self.root.is_empty() {
            b"}\n"
        } else {
            b"\n}\n"
        })
    }

    fn write_tasks(&self, w: &mut dyn Write) -> io::Result<()> {
        let mut first = true;
        let mut buf = Vec::with_capacity(4096);
        for s in self.slots.iter().filter(|s| !s.removed) {
            w.write_all(if first { b"[\n    " } else { b",\n    " })?;
            first = false;
            match (&s.value, s.raw) {
                (None, Some(raw)) if s.canonical => w.write_all(raw.as_bytes())?,
                (Some(v), _) => {
                    buf.clear();
                    write_pretty_at(&mut buf, v, 2);
                    w.write_all(&buf)?;
                }
                (None, Some(raw)) => {
                    let v: Value = serde_json::from_str(raw).unwrap_or(Value::Null);
                    buf.clear();
                    write_pretty_at(&mut buf, &v, 2);
                    w.write_all(&buf)?;
                }
                (None, None) => w.write_all(b"{}")?,
            }
        }
        w.write_all(if first { b"[]" } else { b"\n  ]" })
    }

    /// Whether every task the write re-serialises from JSON (edited, new, normalised) passes
    /// the typed check ([`View::parse`], never looser than the item schema), and the root
    /// values taskhook set are valid. Tasks copied or re-indented from the file were checked
    /// when it was read.
    pub fn vouched(&self) -> bool {
        let tasks = self
            .slots
            .iter()
            .filter(|s| !s.removed)
            .all(|s| match &s.value {
                None => true,
                Some(m) => serde_json::to_string(m)
                    .ok()
                    .is_some_and(|t| View::parse(&t).is_some()),
            });
        let root = self.root.iter().all(|(k, v)| match (k.as_str(), v) {
            ("version", RootVal::Owned(v)) => v.as_u64().is_some_and(|n| n >= 1),
            ("last_updated", RootVal::Owned(v)) => v.as_str().and_then(stamp_kind).is_some(),
            _ => true,
        });
        tasks && root
    }

    /// The document the schema is asked about before a write: the root, and of the tasks only
    /// those held as JSON (edited, new, normalised, or from the fallback). Every other task was
    /// vouched for by [`View::parse`] when the file was read, and is written back unchanged.
    pub fn for_schema(&self) -> Value {
        let mut root = Map::new();
        for (k, v) in &self.root {
            let v = match v {
                RootVal::Tasks => Value::Array(
                    self.slots
                        .iter()
                        .filter(|s| !s.removed)
                        .filter_map(|s| s.value.as_ref().map(|m| Value::Object((**m).clone())))
                        .collect(),
                ),
                RootVal::Raw(r) => serde_json::from_str(r.get()).unwrap_or(Value::Null),
                RootVal::Owned(v) => v.clone(),
            };
            root.insert(k.clone(), v);
        }
        Value::Object(root)
    }
}

/// Objects with more keys than this check duplicates with a set, not pairwise.
const PAIRWISE_KEYS: usize = 16;
/// Longest integer literal accepted as canonical (fits in `i64` and `u64`).
const MAX_INT_DIGITS: usize = 18;

struct Cur<'a> {
    b: &'a [u8],
    i: usize,
}

impl<'a> Cur<'a> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn eat(&mut self, lit: &[u8]) -> bool {
        if self.b[self.i..].starts_with(lit) {
            self.i += lit.len();
            true
        } else {
            false
        }
    }

    /// A newline followed by exactly `2 * depth` spaces (and no more).
    fn newline(&mut self, depth: usize) -> bool {
        if self.peek() != Some(b'\n') {
            return false;
        }
        let pad = 2 * depth;
        let end = self.i + 1 + pad;
        if end > self.b.len() || self.b[self.i + 1..end].iter().any(|&c| c != b' ') {
            return false;
        }
        self.i = end;
        self.peek() != Some(b' ')
    }

    fn value(&mut self, depth: usize) -> bool {
        match self.peek() {
            Some(b'{') => self.object(depth),
            Some(b'[') => self.array(depth),
            Some(b'"') => self.string().is_some(),
            Some(b't') => self.eat(b"true"),
            Some(b'f') => self.eat(b"false"),
            Some(b'n') => self.eat(b"null"),
            Some(b'-' | b'0'..=b'9') => self.number(),
            _ => false,
        }
    }

    fn object(&mut self, depth: usize) -> bool {
        self.i += 1;
        if self.eat(b"}") {
            return true;
        }
        let mut keys: Vec<&'a [u8]> = Vec::new();
        loop {
            if !self.newline(depth + 1) {
                return false;
            }
            let Some(key) = self.string() else {
                return false;
            };
            keys.push(key);
            if !self.eat(b": ") || !self.value(depth + 1) {
                return false;
            }
            if !self.eat(b",") {
                break;
            }
        }
        self.newline(depth) && self.eat(b"}") && distinct(&mut keys)
    }

    fn array(&mut self, depth: usize) -> bool {
        self.i += 1;
        if self.eat(b"]") {
            return true;
        }
        loop {
            if !self.newline(depth + 1) || !self.value(depth + 1) {
                return false;
            }
            if !self.eat(b",") {
                break;
            }
        }
        self.newline(depth) && self.eat(b"]")
    }

    /// A string with only the escapes serde_json writes; returns its raw bytes.
    fn string(&mut self) -> Option<&'a [u8]> {
        let start = self.i;
        self.i += 1;
        loop {
            let rest = &self.b[self.i..];
            let stop = rest
                .iter()
                .position(|&c| c == b'"' || c == b'\\' || c < 0x20)?;
            self.i += stop;
            match self.b[self.i] {
                b'"' => {
                    self.i += 1;
                    return Some(&self.b[start..self.i]);
                }
                b'\\' => {
                    let esc = *self.b.get(self.i + 1)?;
                    match esc {
                        b'"' | b'\\' | b'n' | b'r' | b't' | b'b' | b'f' => self.i += 2,
                        b'u' => {
                            let hex = self.b.get(self.i + 2..self.i + 6)?;
                            // serde_json writes \u00XX (lowercase) only for control characters
                            // that have no short escape.
                            let ok = hex[0] == b'0'
                                && hex[1] == b'0'
                                && matches!(hex[2], b'0' | b'1')
                                && matches!(hex[3], b'0'..=b'9' | b'a'..=b'f')
                                && !matches!(&hex[2..], b"08" | b"09" | b"0a" | b"0c" | b"0d");
                            if !ok {
                                return None;
                            }
                            self.i += 6;
                        }
                        _ => return None,
                    }
                }
                _ => return None,
            }
        }
    }

    /// An integer serde_json would print the same way; floats are never taken as canonical.
    fn number(&mut self) -> bool {
        let start = self.i;
        let neg = self.eat(b"-");
        let digits_start = self.i;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.i += 1;
        }
        let digits = &self.b[digits_start..self.i];
        let ok = !digits.is_empty()
            && digits.len() <= MAX_INT_DIGITS
            && (digits == b"0" || digits[0] != b'0')
            && !(neg && digits == b"0");
        ok && !matches!(self.peek(), Some(b'.' | b'e' | b'E')) && self.i > start
    }
}

fn distinct(keys: &mut [&[u8]]) -> bool {
    if keys.len() <= PAIRWISE_KEYS {
        keys.iter().enumerate().all(|(i, k)| !keys[..i].contains(k))
    } else {
        keys.sort_unstable();
        keys.windows(2).all(|w| w[0] != w[1])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layouts::json::pretty_at;
    use proptest::prelude::*;
    use serde_json::{json, Value};

    #[test]
    fn what_serde_json_writes_is_canonical() {
        let v =
            json!({"id": "a\n\"b\"\u{1}é", "n": [1, -2, 0, {}, []], "o": {"x": null, "t": true}});
        for depth in 0..4 {
            assert!(is_canonical(&pretty_at(&v, depth), depth));
        }
        assert!(!is_canonical(&pretty_at(&v, 1), 2));
    }

    #[test]
    fn anything_else_is_not() {
        for raw in [
            r#"{"a": 1}"#,
            "{\n  \"a\":1\n}",
            "{\n  \"a\": 1.0\n}",
            "{\n  \"a\": -0\n}",
            "{\n  \"a\": \"\\/\"\n}",
            "{\n  \"a\": \"\\u00e9\"\n}",
            "{\n  \"a\": 1,\n  \"a\": 2\n}",
            "{\n  \"a\": 1 \n}",
            "{\n   \"a\": 1\n}",
            "[\n  1\n] ",
        ] {
            assert!(!is_canonical(raw.as_bytes(), 0), "{raw}");
        }
    }

    fn arb_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(|n| json!(n)),
            any::<u64>().prop_map(|n| json!(n)),
            (-1e6f64..1e6).prop_map(|f| json!(f)),
            "\\PC{0,8}".prop_map(Value::String),
            "[\\x00-\\x1f\"\\\\/a]{0,6}".prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 32, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
                prop::collection::vec(("[a-c]{1,2}", inner), 0..5)
                    .prop_map(|kv| Value::Object(kv.into_iter().collect())),
            ]
        })
    }

    /// A float, or an integer too long for the canonical check.
    fn has_odd_number(v: &Value) -> bool {
        match v {
            Value::Number(n) => n.is_f64() || n.to_string().trim_start_matches('-').len() > 18,
            Value::Array(a) => a.iter().any(has_odd_number),
            Value::Object(m) => m.values().any(has_odd_number),
            _ => false,
        }
    }

    proptest! {
        /// A value judged canonical is exactly its own re-serialisation; serde_json's output is
        /// always judged canonical unless it holds a float.
        #[test]
        fn canonical_means_reserialises_to_the_same_bytes(v in arb_value(), depth in 0usize..3) {
            let bytes = pretty_at(&v, depth);
            if is_canonical(&bytes, depth) {
                let again: Value = serde_json::from_slice(&bytes).unwrap();
                prop_assert_eq!(pretty_at(&again, depth), bytes);
            } else {
                prop_assert!(has_odd_number(&v), "{}", String::from_utf8_lossy(&bytes));
            }
            let compact = serde_json::to_vec(&v).unwrap();
            if is_canonical(&compact, depth) {
                let again: Value = serde_json::from_slice(&compact).unwrap();
                prop_assert_eq!(pretty_at(&again, depth), compact);
            }
        }
    }
}
