//! A typed model written over the bytes it was read from, in place (issue 23): the bytes of
//! the entries a change left alone kept as read, each changed entry written over its own, the
//! rest of the document written back; the result a [`Splice`] of those bytes, written or
//! hashed without the whole. The scanner that finds a document's members and entries without
//! parsing them lives here too.

use serde::Serialize;
use serde_json::{Map, Value};

use super::{find_bytes, keep_order, write_back};

/// A typed model written over the checked bytes it was read from, in place: the document's one
/// bulky member (`key`, an object or array of many entries) keeps the bytes of every entry the
/// change left alone; each entry it changed (`changed`: position, new value) is written over
/// its own old bytes, and the rest of the document (`head`: the model with that member emptied)
/// is written back as [`write_back`] would, key order and unknown fields kept. The result is
/// checked against the schema with only the changed entries in the member, which is the whole
/// check when the schema asks nothing of an entry that involves another (the callers' schemas
/// do not). `was` are the entries as the bytes hold them and `now` the model's, in the same
/// places (an object's keys are the caller's to compare). See [`Shape`] for the members taken
/// out before the write back and those kept as read.
///
/// `None` when this cannot be done exactly (entries added or removed; bytes the scan cannot
/// split; the schema refusing): the caller then writes the whole document back, which words
/// any refusal. A file taskhook wrote (two-space indents) comes out byte for byte as that whole
/// write would make it; in a file formatted by hand, only what changed takes that format.
///
/// The result is a [`Splice`] of `bytes` (their runs and the bytes made anew), written or
/// hashed straight from `bytes`, or made whole ([`Splice::to_vec`]).
pub fn write_in_place<'n, E: Serialize + PartialEq + 'n>(
    bytes: &[u8],
    key: &str,
    head: &impl Serialize,
    was: impl IntoIterator<Item = &'n E>,
    now: impl IntoIterator<Item = &'n E>,
    shape: Shape<'_>,
) -> crate::error::Result<Option<Splice>> {
    use crate::store::{parse_json, schema::check, to_pretty};
    // The entries the change touched, by position; none when it added or removed some.
    let (mut was, mut now) = (was.into_iter(), now.into_iter());
    let mut changed = Vec::new();
    let mut count = 0;
    loop {
        match (was.next(), now.next()) {
            (Some(old), Some(new)) => {
                if old != new {
                    changed.push((count, new));
                }
                count += 1;
            }
            (None, None) => break,
            _ => return Ok(None),
        }
    }
    let wanted: Vec<usize> = changed.iter().map(|(i, _)| *i).collect();
    let Some(found) = member_entries(bytes, key, &wanted, shape.kept)
        .filter(|f| f.count == count && f.entries.len() == wanted.len())
    else {
        return Ok(None);
    };
    let Members {
        span,
        entries,
        kept,
        ..
    } = found;
    // The members written from their bytes as read (the bulky one's entries spliced, the kept
    // ones whole), by where they stand, each with the name and the empty value standing for it
    // in the head.
    let mut spans: Vec<(&str, std::ops::Range<usize>)> = std::iter::once((key, span.clone()))
        .chain(shape.kept.iter().copied().zip(kept))
        .collect();
    spans.sort_by_key(|(_, r)| r.start);
    let empty_of = |r: &std::ops::Range<usize>| -> &'static [u8] {
        if bytes.get(r.start) == Some(&b'{') {
            b"{}"
        } else {
            b"[]"
        }
    };
    let mut old = Vec::with_capacity(
        bytes.len() - spans.iter().map(|(_, r)| r.len()).sum::<usize>() + 2 * spans.len(),
    );
    let mut from = 0;
    for (_, r) in &spans {
        old.extend_from_slice(&bytes[from..r.start]);
        old.extend_from_slice(empty_of(r));
        from = r.end;
    }
    old.extend_from_slice(&bytes[from..]);
    let (Ok(mut old), Ok(new)) = (parse_json(&old), serde_json::to_value(head)) else {
        return Ok(None);
    };
    if let Value::Object(m) = &mut old {
        for k in shape.last {
            m.shift_remove(*k);
        }
    }
    let mut doc = keep_order(old, new);
    let empty_value = |r: &std::ops::Range<usize>| {
        if empty_of(r) == b"{}" {
            Value::Object(Map::new())
        } else {
            Value::Array(Vec::new())
        }
    };
    // The head must hold each of them empty: a kept member the model changed is not kept.
    if spans
        .iter()
        .any(|(k, r)| doc.get(*k) != Some(&empty_value(r)))
    {
        return Ok(None);
    }
    let is_map = empty_of(&span) == b"{}";
    let mut values = Vec::with_capacity(changed.len());
    for ((i, entry), (k, at)) in changed.into_iter().zip(entries) {
        let Ok(mut v) = parse_json(&bytes[at.clone()]) else {
            return Ok(None);
        };
        write_back(&mut v, entry).map_err(crate::error::Error::BadInput)?;
        let name = match k {
            Some(k) => match serde_json::from_slice::<String>(&bytes[k.clone()]) {
                Ok(name) => Some(name),
                Err(_) => return Ok(None),
            },
            None => None,
        };
        values.push((i, name, v, at));
    }
    let probe = if is_map {
        Value::Object(
            values
                .iter()
                .map(|(_, k, v, _)| (k.clone().unwrap_or_default(), v.clone()))
                .collect(),
        )
    } else {
        Value::Array(values.iter().map(|(_, _, v, _)| v.clone()).collect())
    };
    if let Some(slot) = doc.get_mut(key) {
        *slot = probe;
    }
    if check(shape.schema, &doc)?.is_err() {
        return Ok(None);
    }
    if let Some(slot) = doc.get_mut(key) {
        *slot = empty_value(&span);
    }
    let head = to_pretty(&doc);
    // Where each member stands empty in the head, in the head's order.
    let mut at = Vec::with_capacity(spans.len());
    for (k, r) in &spans {
        let mut marker = b"\n  ".to_vec();
        marker.extend_from_slice(serde_json::to_string(k).unwrap_or_default().as_bytes());
        marker.extend_from_slice(b": ");
        marker.extend_from_slice(empty_of(r));
        let Some(i) = find_bytes(&head, &marker) else {
            return Ok(None);
        };
        at.push((i + marker.len() - 2, *k, r.clone()));
    }
    at.sort_by_key(|(i, _, _)| *i);
    let mut out = Splice::default();
    let mut made = 0;
    for (i, k, r) in at {
        out.made(head[made..i].to_vec());
        made = i + 2;
        if k != key {
            out.base(r);
            continue;
        }
        let mut from = r.start;
        for (_, _, v, old) in &values {
            out.base(from..old.start);
            out.made(pretty_at(v, 2));
            from = old.end;
        }
        out.base(from..r.end);
    }
    out.made(head[made..].to_vec());
    Ok(Some(out))
}

/// What [`write_in_place`] is to do with the members of a document besides its bulky one.
#[derive(Debug, Clone, Copy)]
pub struct Shape<'a> {
    /// The schema the result is checked against.
    pub schema: &'static str,
    /// Members taken out of the document before the write back, so the model puts them after
    /// the others.
    pub last: &'a [&'a str],
    /// Members (arrays or objects) written as the bytes hold them: the caller has found them
    /// unchanged and left them empty in the head. Each must stand once in the bytes.
    pub kept: &'a [&'a str],
}

impl Shape<'static> {
    /// Only the schema: no member taken out or kept.
    pub const fn schema(schema: &'static str) -> Self {
        Shape {
            schema,
            last: &[],
            kept: &[],
        }
    }
}

/// A document's new bytes as pieces: runs of the bytes it was read from (its base), and bytes
/// made anew between them ([`write_in_place`]). Small however large the document: the new
/// file is written, or hashed, straight from the base and these pieces.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Splice {
    pieces: Vec<Piece>,
    len: usize,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    Base(std::ops::Range<usize>),
    New(Vec<u8>),
}

impl Splice {
    fn base(&mut self, run: std::ops::Range<usize>) {
        if !run.is_empty() {
            self.len += run.len();
            self.pieces.push(Piece::Base(run));
        }
    }

    fn made(&mut self, bytes: Vec<u8>) {
        if !bytes.is_empty() {
            self.len += bytes.len();
            self.pieces.push(Piece::New(bytes));
        }
    }

    /// The new document's length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the new document is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The new document's bytes, in order, given the base they were spliced from.
    pub fn pieces<'a>(&'a self, base: &'a [u8]) -> impl Iterator<Item = &'a [u8]> + 'a {
        self.pieces.iter().map(move |p| match p {
            Piece::Base(r) => base.get(r.clone()).unwrap_or_default(),
            Piece::New(b) => b.as_slice(),
        })
    }

    /// Whether the new document is its base unchanged.
    pub fn is_base(&self, base: &[u8]) -> bool {
        let mut at = 0;
        self.len == base.len()
            && self.pieces(base).all(|p| {
                let same = base.get(at..at + p.len()) == Some(p);
                at += p.len();
                same
            })
    }

    /// Writes the new document, given its base.
    pub fn write_to(&self, base: &[u8], w: &mut dyn std::io::Write) -> std::io::Result<()> {
        self.pieces(base).try_for_each(|p| w.write_all(p))
    }

    /// The new document whole, given its base.
    pub fn to_vec(&self, base: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.len);
        self.pieces(base).for_each(|p| out.extend_from_slice(p));
        out
    }
}

/// A range of the bytes.
type Span = std::ops::Range<usize>;

/// What [`member_entries`] finds of a document's top-level members.
struct Members {
    /// The bulky member's value.
    span: Span,
    /// How many entries it has.
    count: usize,
    /// The entries asked for, in order: key (an object's) and value.
    entries: Vec<(Option<Span>, Span)>,
    /// The values of the members asked for whole, in the order asked.
    kept: Vec<Span>,
}

/// The value range of the top-level member `key` of a JSON object document, its number of
/// entries and those at the positions `wanted` (ascending) when it is an object (key and value
/// ranges) or an array (value ranges), with the value ranges of the members `kept` (each an
/// object or array), in one pass over the bytes (holding no range of the entries not asked
/// for); `None` when the bytes are not an object, or one of these keys is absent, written with
/// escapes (any key with an escape may be one) or given twice.
fn member_entries(bytes: &[u8], key: &str, wanted: &[usize], kept: &[&str]) -> Option<Members> {
    let mut s = Scan { b: bytes, at: 0 };
    s.ws();
    let mut found = None;
    let mut whole: Vec<Option<Span>> = vec![None; kept.len()];
    s.each(b'{', b'}', |s| {
        let k = s.key()?;
        let raw = bytes.get(k.start + 1..k.end - 1)?;
        if raw.contains(&b'\\') {
            return None;
        }
        if let Some(i) = kept.iter().position(|k| k.as_bytes() == raw) {
            if whole[i].is_some() || !matches!(s.peek()?, b'[' | b'{') {
                return None;
            }
            let start = s.at;
            s.value()?;
            whole[i] = Some(start..s.at);
            return Some(());
        }
        if raw != key.as_bytes() {
            return s.value().map(drop);
        }
        if found.is_some() {
            return None;
        }
        let start = s.at;
        let mut count = 0;
        let mut entries = Vec::with_capacity(wanted.len());
        let mut take = |k: Option<Span>, v: Span| {
            if wanted.get(entries.len()) == Some(&count) {
                entries.push((k, v));
            }
            count += 1;
        };
        match s.peek()? {
            b'[' => s.each(b'[', b']', |s| {
                take(None, s.value()?);
                Some(())
            })?,
            b'{' => s.each(b'{', b'}', |s| {
                let k = s.key()?;
                take(Some(k), s.value()?);
                Some(())
            })?,
            _ => return None,
        };
        found = Some((start..s.at, count, entries));
        Some(())
    })?;
    let (span, count, entries) = found?;
    Some(Members {
        span,
        count,
        entries,
        kept: whole.into_iter().collect::<Option<_>>()?,
    })
}

/// The bytes a scan stops at inside a string (its end, an escape) and inside a container (a
/// string, a nested container, an end).
const IN_STRING: [bool; 256] = table(b"\"\\");
const IN_CONTAINER: [bool; 256] = table(b"\"{}[]");

const fn table(bytes: &[u8]) -> [bool; 256] {
    let mut t = [false; 256];
    let mut i = 0;
    while i < bytes.len() {
        t[bytes[i] as usize] = true;
        i += 1;
    }
    t
}

/// A cursor over JSON bytes for [`member_entries`]: every step checks its bounds.
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
        self.at = self.string_end(self.at)?;
        Some(start..self.at)
    }

    /// An object member's key (quotes included) and the colon after it, with the space around.
    fn key(&mut self) -> Option<std::ops::Range<usize>> {
        let k = self.string()?;
        self.ws();
        self.eat(b':')?;
        self.ws();
        Some(k)
    }

    /// Where the string whose contents begin at `i` ends (after its closing quote): a tight
    /// loop over the bytes, an escape skipping the byte after it.
    fn string_end(&self, mut i: usize) -> Option<usize> {
        let b = self.b;
        while i < b.len() {
            // Plain text skipped a byte at a time on one table look-up.
            while i < b.len() && !IN_STRING[usize::from(b[i])] {
                i += 1;
            }
            match b.get(i)? {
                b'"' => return Some(i + 1),
                _ => i += 2,
            }
        }
        None
    }

    /// One value of any kind.
    fn value(&mut self) -> Option<std::ops::Range<usize>> {
        let start = self.at;
        match self.peek()? {
            b'"' => {
                self.string()?;
            }
            b'{' | b'[' => {
                let b = self.b;
                let mut depth = 0usize;
                let mut i = self.at;
                loop {
                    while i < b.len() && !IN_CONTAINER[usize::from(b[i])] {
                        i += 1;
                    }
                    match *b.get(i)? {
                        b'"' => {
                            i = self.string_end(i + 1)?;
                            continue;
                        }
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => depth = depth.checked_sub(1)?,
                        _ => {}
                    }
                    i += 1;
                    if depth == 0 {
                        break;
                    }
                }
                self.at = i;
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

    /// The items of an object or array, between `open` and `close`, separated by commas,
    /// each handed to `item` (none kept).
    fn each(
        &mut self,
        open: u8,
        close: u8,
        mut item: impl FnMut(&mut Self) -> Option<()>,
    ) -> Option<()> {
        self.eat(open)?;
        self.ws();
        if self.peek()? == close {
            self.at += 1;
            return Some(());
        }
        loop {
            self.ws();
            item(self)?;
            self.ws();
            match self.next()? {
                b',' => continue,
                c if c == close => return Some(()),
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn member_entries_split_an_array_or_object_and_refuse_what_they_cannot() {
        let element_spans = |b: &[u8], k: &str| {
            member_entries(b, k, &(0..9).collect::<Vec<_>>(), &[])
                .map(|m| m.entries.into_iter().map(|(_, v)| v).collect::<Vec<_>>())
        };
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
        // Only the entries asked for are held, with the count of all.
        let some = member_entries(doc, "tasks", &[1, 4], &[]).unwrap();
        assert_eq!(some.count, 5);
        let held: Vec<&str> = some
            .entries
            .iter()
            .map(|(_, r)| std::str::from_utf8(&doc[r.clone()]).unwrap())
            .collect();
        assert_eq!(held, ["[1, [2]]", "null"]);
        assert!(element_spans(br#"{"tasks": []}"#, "tasks")
            .unwrap()
            .is_empty());
        for bad in [
            &br#"{"tasks": [1], "tasks": [2]}"#[..],
            br#"{"ta\u0073ks": [1]}"#,
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

    /// A member kept as read is found once, whole, wherever it stands; one given twice,
    /// missing, a scalar or behind an escape sends the caller to the whole document.
    #[test]
    fn kept_members_are_found_whole_or_refused() {
        let doc = br#"{"q": [ {"a": "]"} ], "tasks": {"A": 1}, "m": {"k": [1]}}"#;
        let m = member_entries(doc, "tasks", &[], &["m", "q"]).unwrap();
        let text = |r: &Span| std::str::from_utf8(&doc[r.clone()]).unwrap().to_string();
        assert_eq!(text(&m.span), r#"{"A": 1}"#);
        assert_eq!(
            m.kept.iter().map(text).collect::<Vec<_>>(),
            [r#"{"k": [1]}"#, r#"[ {"a": "]"} ]"#]
        );
        for bad in [
            &br#"{"tasks": {}, "q": [], "q": []}"#[..],
            br#"{"tasks": {}}"#,
            br#"{"tasks": {}, "q": 1}"#,
            br#"{"tasks": {}, "\u0071": []}"#,
        ] {
            assert!(
                member_entries(bad, "tasks", &[], &["q"]).is_none(),
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    /// A kept member keeps its bytes (here compact, which a whole write would lay out again)
    /// while the rest is written back; one the model did not leave empty in the head is not
    /// kept: the whole write then.
    #[test]
    fn a_kept_member_keeps_its_bytes_and_a_changed_one_is_written_whole() {
        let queue = r#"[{"task_id":"A",  "priority":1,"status":"pending"}]"#;
        let doc = format!(
            r#"{{"schema_version": "2.0", "status": "pending", "merge_queue": {queue}, "tasks": {{"A": {{"status": "pending"}}}}}}"#
        );
        let shape = Shape {
            schema: "execute-state",
            last: &[],
            kept: &["merge_queue"],
        };
        let (was, now) = (
            [json!({"status": "pending"})],
            [json!({"status": "in_progress"})],
        );
        let head = json!({"schema_version": "2.0", "status": "in_progress", "merge_queue": [], "tasks": {}});
        let out = write_in_place(doc.as_bytes(), "tasks", &head, &was, &now, shape)
            .unwrap()
            .unwrap()
            .to_vec(doc.as_bytes());
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.contains(&format!("\"merge_queue\": {queue},")),
            "{text}"
        );
        assert_eq!(
            serde_json::from_str::<Value>(&text).unwrap(),
            json!({"schema_version": "2.0", "status": "in_progress",
                "merge_queue": [{"task_id": "A", "priority": 1, "status": "pending"}],
                "tasks": {"A": {"status": "in_progress"}}})
        );
        let mut changed = head.clone();
        changed["merge_queue"] = json!([{"task_id": "A", "priority": 2, "status": "pending"}]);
        let out = write_in_place(doc.as_bytes(), "tasks", &changed, &was, &now, shape).unwrap();
        assert_eq!(out, None);
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
}
