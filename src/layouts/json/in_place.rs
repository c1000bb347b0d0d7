//! A typed model written over the bytes it was read from, in place (issue 23): the bytes of
//! the entries a change left alone kept as read, each changed entry written over its own, the
//! rest of the document written back; the result a [`Splice`] of those bytes, written or
//! hashed without the whole. The scanner that finds a document's members and entries without
//! parsing them lives here too.

use serde::Serialize;
use serde_json::{Map, Value};

use super::{find_bytes, keep_order, write_back};
use crate::store::base::Src;
use crate::store::parsed::Digester;
use crate::store::scan::Scan;

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
/// hashed straight from `bytes`, or made whole ([`Splice::to_vec`]). `bytes` may be held or a
/// file read where needed ([`Src`]): only the scan's windows, the rest of the document and the
/// changed entries' old bytes are read.
pub fn write_in_place<'n, E: Serialize + PartialEq + 'n>(
    mut bytes: impl Src,
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
    let Some(found) = member_entries(&mut bytes, key, &wanted, shape.kept)
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
    // Whether each member is an object (its first byte), by where it starts.
    let mut objects = Vec::with_capacity(spans.len());
    for (_, r) in &spans {
        let Some(first) = bytes.chunk(r.start).and_then(|c| c.first().copied()) else {
            return Ok(None);
        };
        objects.push((r.start, first == b'{'));
    }
    let empty_of = |r: &std::ops::Range<usize>| -> &'static [u8] {
        if objects.contains(&(r.start, true)) {
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
        let Some(run) = bytes.range(from..r.start) else {
            return Ok(None);
        };
        old.extend_from_slice(&run);
        old.extend_from_slice(empty_of(r));
        from = r.end;
    }
    let end = bytes.len();
    let Some(run) = bytes.range(from..end) else {
        return Ok(None);
    };
    old.extend_from_slice(&run);
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
        let Some(Ok(mut v)) = bytes.range(at.clone()).map(|b| parse_json(&b)) else {
            return Ok(None);
        };
        write_back(&mut v, entry).map_err(crate::error::Error::BadInput)?;
        let name = match k {
            Some(k) => match bytes
                .range(k.clone())
                .map(|b| serde_json::from_slice::<String>(&b))
            {
                Some(Ok(name)) => Some(name),
                _ => return Ok(None),
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

    /// Writes the new document from a base read where needed ([`Src`]: a file), each new piece
    /// handed to `put`. Every byte of the base is read once, in order (those kept and those
    /// replaced), and folded into `seen`: the caller compares it with the digest of the bytes
    /// the splice was made over, and a base that is no longer those bytes is found out. An
    /// error when the base ends before its runs do.
    pub fn write_from(
        &self,
        base: &mut impl Src,
        seen: &mut Digester,
        put: &mut dyn FnMut(&[u8]) -> std::io::Result<()>,
    ) -> std::io::Result<()> {
        let short = || std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "the file ended");
        // Reads `run` of the base in order, hashing it, and passes it on when `keep`.
        let mut through = |base: &mut dyn Src,
                           run: std::ops::Range<usize>,
                           keep: bool,
                           put: &mut dyn FnMut(&[u8]) -> std::io::Result<()>|
         -> std::io::Result<()> {
            let mut at = run.start;
            while at < run.end {
                let c = base.chunk(at).filter(|c| !c.is_empty()).ok_or_else(short)?;
                let c = &c[..c.len().min(run.end - at)];
                seen.add(c);
                if keep {
                    put(c)?;
                }
                at += c.len();
            }
            Ok(())
        };
        let mut pos = 0;
        for p in &self.pieces {
            match p {
                Piece::New(b) => put(b)?,
                Piece::Base(r) => {
                    if r.start < pos {
                        return Err(short());
                    }
                    through(base, pos..r.start, false, put)?;
                    through(base, r.clone(), true, put)?;
                    pos = r.end;
                }
            }
        }
        let end = base.len();
        through(base, pos..end, false, put)
    }

    /// The whole of a base `len` bytes long, unchanged (a copy written from it).
    pub fn whole(len: usize) -> Splice {
        let mut out = Splice::default();
        out.base(0..len);
        out
    }

    /// Whether the runs of the base it keeps stand in the base's order, none before the end of
    /// the one before: what [`Splice::write_from`], reading the base once, needs.
    pub fn runs_in_order(&self) -> bool {
        let mut at = 0;
        self.pieces.iter().all(|p| match p {
            Piece::Base(r) if r.start < at => false,
            Piece::Base(r) => {
                at = r.end;
                true
            }
            Piece::New(_) => true,
        })
    }

    /// Whether the new document is the whole of a base `len` bytes long, unchanged.
    pub fn is_whole_base(&self, len: usize) -> bool {
        let mut at = 0;
        self.pieces.iter().all(|p| match p {
            Piece::Base(r) if r.start == at => {
                at = r.end;
                true
            }
            _ => false,
        }) && at == len
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
fn member_entries(bytes: impl Src, key: &str, wanted: &[usize], kept: &[&str]) -> Option<Members> {
    let mut s = Scan::new(bytes);
    s.ws();
    let mut found = None;
    let mut whole: Vec<Option<Span>> = vec![None; kept.len()];
    s.each(b'{', b'}', |s| {
        let k = s.key()?;
        let raw = s.b.range(k.start + 1..k.end - 1)?.into_owned();
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

/// `value` pretty-printed as an element nested `depth` levels deep in a document that
/// `store::to_pretty` writes (two spaces a level): the same bytes that document has there.
pub fn pretty_at(value: &impl Serialize, depth: usize) -> Vec<u8> {
    let mut out = Vec::new();
    write_pretty_at(&mut out, value, depth);
    out
}

/// Appends [`pretty_at`]'s bytes to `out` (`null` for a value that cannot be written).
pub fn write_pretty_at(out: &mut Vec<u8>, value: &impl Serialize, depth: usize) {
    let start = out.len();
    if serde_json::to_writer_pretty(&mut *out, value).is_err() {
        out.truncate(start);
        out.extend_from_slice(b"null");
        return;
    }
    if depth == 0 || !out[start..].contains(&b'\n') {
        return;
    }
    // Strings never hold a raw newline (serde_json escapes it), so every newline is layout.
    let body = out.split_off(start);
    let pad = 2 * depth;
    out.reserve(body.len() + body.len() / 8 * pad);
    for &b in &body {
        out.push(b);
        if b == b'\n' {
            out.resize(out.len() + pad, b' ');
        }
    }
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
        let some = member_entries(&doc[..], "tasks", &[1, 4], &[]).unwrap();
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
        let m = member_entries(&doc[..], "tasks", &[], &["m", "q"]).unwrap();
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

    /// A splice written from a base read once: every byte of the base seen in order, the runs
    /// it keeps copied; runs out of order are said so, and their write fails rather than
    /// reading back.
    #[test]
    fn a_splice_is_written_from_a_base_read_once() {
        let base: &[u8] = b"0123456789";
        let mut sp = Splice::default();
        sp.base(0..3);
        sp.made(b"ab".to_vec());
        sp.base(5..7);
        assert!(sp.runs_in_order() && !sp.is_whole_base(base.len()));
        let (mut out, mut seen) = (Vec::new(), Digester::default());
        let mut b = base;
        sp.write_from(&mut b, &mut seen, &mut |p| {
            out.extend_from_slice(p);
            Ok(())
        })
        .unwrap();
        assert_eq!(out, b"012ab56");
        assert_eq!(seen.finish(), crate::store::parsed::Digest::of(base));
        assert!(Splice::whole(10).is_whole_base(10));
        let mut back = Splice::default();
        back.base(5..7);
        back.base(0..3);
        assert!(!back.runs_in_order());
        let mut b = base;
        let err = back.write_from(&mut b, &mut Digester::default(), &mut |_| Ok(()));
        assert!(err.is_err());
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
