//! A formatting-preserving JSON editor, small on purpose: parse the text into a tree of byte
//! spans, then apply each edit by splicing new text into the old. Everything an edit does not
//! touch keeps its bytes (indentation width, key spacing, non-ASCII text, inline arrays), so
//! the diff of an edit is only what it adds or removes.
//!
//! New text mimics its neighbours: an element added to a one-line array is written inline; one
//! added after a multi-line sibling is indented like that sibling, nested levels by the file's
//! own indentation unit. The caller checks the result against the same edits applied to a
//! [`Value`] (see [`apply_value`]), so a surprise here can cost formatting, never content.

use serde_json::{Map, Value};

use super::jsonspan::{child, Kid, Kind, Node, Parser};

/// One step of a path into a JSON document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seg {
    Key(String),
    Index(usize),
}

/// One edit.
#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    /// Sets an object member: replaces its value, or appends the member when absent.
    Set(Vec<Seg>, Value),
    /// Appends an element to an array.
    Push(Vec<Seg>, Value),
    /// Removes an object member or an array element.
    Remove(Vec<Seg>),
}

/// Applies an edit to a value (the meaning the text edit must reproduce).
pub fn apply_value(doc: &mut Value, op: &Op) -> Result<(), String> {
    let (path, last) = match op {
        Op::Set(p, _) | Op::Remove(p) => match p.split_last() {
            Some((last, rest)) => (rest, Some(last)),
            None => return Err("empty path".into()),
        },
        Op::Push(p, _) => (&p[..], None),
    };
    let mut cur = doc;
    for seg in path {
        cur = match (seg, cur) {
            (Seg::Key(k), Value::Object(m)) => m.get_mut(k),
            (Seg::Index(i), Value::Array(a)) => a.get_mut(*i),
            _ => None,
        }
        .ok_or_else(|| format!("no {seg:?} in the document"))?;
    }
    match (op, last, cur) {
        (Op::Set(_, v), Some(Seg::Key(k)), Value::Object(m)) => {
            m.insert(k.clone(), v.clone());
        }
        (Op::Push(_, v), None, Value::Array(a)) => a.push(v.clone()),
        (Op::Remove(_), Some(Seg::Key(k)), Value::Object(m)) => {
            m.shift_remove(k).ok_or("no such member")?;
        }
        (Op::Remove(_), Some(Seg::Index(i)), Value::Array(a)) if *i < a.len() => {
            a.remove(*i);
        }
        _ => return Err(format!("{op:?} does not fit the document")),
    }
    Ok(())
}

/// Applies an edit to JSON text, keeping every byte it does not need to change.
pub fn apply_text(text: &str, op: &Op) -> Result<String, String> {
    let root = Parser::parse(text)?;
    let unit = indent_unit(text);
    let (path, last) = match op {
        Op::Set(p, _) | Op::Remove(p) => match p.split_last() {
            Some((last, rest)) => (rest, Some(last)),
            None => return Err("empty path".into()),
        },
        Op::Push(p, _) => (&p[..], None),
    };
    let mut node = &root;
    for seg in path {
        node = child(node, seg).ok_or_else(|| format!("no {seg:?} in the text"))?;
    }
    let kids: Vec<&Kid> = match &node.kind {
        Kind::Object(k) | Kind::Array(k) => k.iter().collect(),
        Kind::Scalar => return Err("not a container".into()),
    };
    let splice =
        |start: usize, end: usize, new: &str| format!("{}{}{}", &text[..start], new, &text[end..]);
    match (op, last) {
        (Op::Set(_, v), Some(Seg::Key(k))) if matches!(node.kind, Kind::Object(_)) => {
            if let Some(kid) = kids.iter().rev().find(|c| c.key.as_deref() == Some(k)) {
                let old = &kid.value;
                let new = if is_multiline(text, old) {
                    render(v, Some(&line_indent(text, old.start)), unit.as_deref())
                } else {
                    render(v, None, None)
                };
                return Ok(splice(old.start, old.end, &new));
            }
            let member = format!("{}: ", quote(k));
            Ok(insert(text, node, &kids, &member, v, unit.as_deref()))
        }
        (Op::Push(_, v), None) if matches!(node.kind, Kind::Array(_)) => {
            Ok(insert(text, node, &kids, "", v, unit.as_deref()))
        }
        (Op::Remove(_), Some(seg)) => {
            let i = match (seg, &node.kind) {
                (Seg::Key(k), Kind::Object(_)) => {
                    kids.iter().rposition(|c| c.key.as_deref() == Some(k))
                }
                (Seg::Index(i), Kind::Array(_)) => (*i < kids.len()).then_some(*i),
                _ => None,
            }
            .ok_or("nothing to remove there")?;
            if kids.len() == 1 {
                // The only child: the container becomes empty (`{}` / `[]`).
                return Ok(splice(node.start + 1, node.end - 1, ""));
            }
            if i > 0 {
                // `, child` from the end of the previous sibling.
                return Ok(splice(kids[i - 1].value.end, kids[i].value.end, ""));
            }
            // The first of several: `child, ` up to where the next one starts.
            Ok(splice(kids[0].start, kids[1].start, ""))
        }
        _ => Err(format!("{op:?} does not fit the text")),
    }
}

/// Adds a child (`prefix` is `"key": ` for a member) at the end of a container.
fn insert(
    text: &str,
    node: &Node,
    kids: &[&Kid],
    prefix: &str,
    v: &Value,
    unit: Option<&str>,
) -> String {
    let Some(last) = kids.last() else {
        // An empty container: open it up like the file's other containers.
        let inner = match unit {
            Some(u) => {
                let base = line_indent(text, node.start);
                let ind = format!("{base}{u}");
                format!("\n{ind}{prefix}{}\n{base}", render(v, Some(&ind), Some(u)))
            }
            None => format!("{prefix}{}", render(v, None, None)),
        };
        let open = node.start + 1;
        let close = node.end - 1;
        return format!("{}{}{}", &text[..open], inner, &text[close..]);
    };
    let node_inline = !is_multiline(text, node);
    let new = match unit {
        Some(u) if !node_inline => {
            let own_line = text[..last.start]
                .rsplit('\n')
                .next()
                .is_some_and(|before| before.trim().is_empty());
            let ind = if own_line {
                line_indent(text, last.start)
            } else {
                format!("{}{u}", line_indent(text, node.start))
            };
            let neighbour_inline = matches!(last.value.kind, Kind::Object(_) | Kind::Array(_))
                && !is_multiline(text, &last.value);
            let body = if neighbour_inline {
                render(v, None, None)
            } else {
                render(v, Some(&ind), Some(u))
            };
            format!(",\n{ind}{prefix}{body}")
        }
        _ => format!(", {prefix}{}", render(v, None, None)),
    };
    let at = last.value.end;
    format!("{}{}{}", &text[..at], new, &text[at..])
}

/// Renders a value: inline (`{"a": 1, "b": [2]}`) without an indent, else one item per line,
/// nested items `unit` deeper than `base` (the column of the line the value starts on).
pub fn render(v: &Value, base: Option<&str>, unit: Option<&str>) -> String {
    match (base, unit) {
        (Some(base), Some(unit)) => {
            let mut out = String::new();
            multi(v, base, unit, &mut out);
            out
        }
        _ => {
            let mut out = String::new();
            inline(v, &mut out);
            out
        }
    }
}

fn inline(v: &Value, out: &mut String) {
    match v {
        Value::Object(m) => {
            out.push('{');
            for (i, (k, x)) in m.iter().enumerate() {
                out.push_str(if i == 0 { "" } else { ", " });
                out.push_str(&quote(k));
                out.push_str(": ");
                inline(x, out);
            }
            out.push('}');
        }
        Value::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                out.push_str(if i == 0 { "" } else { ", " });
                inline(x, out);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

fn multi(v: &Value, base: &str, unit: &str, out: &mut String) {
    let inner = format!("{base}{unit}");
    let (open, close, items): (char, char, Vec<(Option<&String>, &Value)>) = match v {
        Value::Object(m) if !m.is_empty() => {
            ('{', '}', m.iter().map(|(k, x)| (Some(k), x)).collect())
        }
        Value::Array(a) if !a.is_empty() => ('[', ']', a.iter().map(|x| (None, x)).collect()),
        other => return inline(other, out),
    };
    out.push(open);
    for (i, (k, x)) in items.iter().enumerate() {
        out.push_str(if i == 0 { "\n" } else { ",\n" });
        out.push_str(&inner);
        if let Some(k) = k {
            out.push_str(&quote(k));
            out.push_str(": ");
        }
        multi(x, &inner, unit, out);
    }
    out.push('\n');
    out.push_str(base);
    out.push(close);
}

fn quote(s: &str) -> String {
    Value::String(s.to_string()).to_string()
}

/// The file's indentation unit: the leading whitespace of its first indented line (the root's
/// first child). `None` for a document on one line.
pub fn indent_unit(text: &str) -> Option<String> {
    text.lines().skip(1).find_map(|l| {
        let ws: String = l.chars().take_while(|c| *c == ' ' || *c == '\t').collect();
        (!ws.is_empty() && l.len() > ws.len()).then_some(ws)
    })
}

/// The whitespace that starts the line holding byte `pos`.
fn line_indent(text: &str, pos: usize) -> String {
    let start = text[..pos].rfind('\n').map_or(0, |i| i + 1);
    text[start..]
        .chars()
        .take_while(|c| *c == ' ' || *c == '\t')
        .collect()
}

fn is_multiline(text: &str, n: &Node) -> bool {
    text[n.start..n.end].contains('\n')
}

/// Edits `text` by `ops` and checks the result means exactly `expected`. `None` when an edit
/// did not fit or the meaning differs: the caller then writes `expected` reformatted.
pub fn edit(text: &str, ops: &[Op], expected: &Value) -> Option<String> {
    let mut out = text.to_string();
    for op in ops {
        out = apply_text(&out, op).ok()?;
    }
    let got: Value = serde_json::from_str(&out).ok()?;
    (got == *expected).then_some(out)
}

/// `expected` written with the file's indentation unit (the fallback when [`edit`] gives up).
pub fn reformat(expected: &Value, unit: Option<&str>) -> String {
    let unit = unit.unwrap_or("  ");
    let mut out = String::new();
    multi(expected, "", unit, &mut out);
    out.push('\n');
    out
}

/// An empty object, for a document that does not exist yet.
pub fn empty_object() -> Value {
    Value::Object(Map::new())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn k(s: &str) -> Seg {
        Seg::Key(s.into())
    }

    fn check(text: &str, ops: &[Op]) -> String {
        let mut want: Value = serde_json::from_str(text).unwrap();
        for op in ops {
            apply_value(&mut want, op).unwrap();
        }
        edit(text, ops, &want).unwrap_or_else(|| panic!("edit gave up on {text}"))
    }

    #[test]
    fn appends_keep_neighbours_style() {
        let text = "{\n    \"a\": [1, 2],\n    \"b\": {\n        \"x\": \"é\"\n    }\n}\n";
        let out = check(text, &[Op::Push(vec![k("a")], json!(3))]);
        assert_eq!(out, text.replace("[1, 2]", "[1, 2, 3]"));
        let out = check(text, &[Op::Set(vec![k("b"), k("y")], json!({"z": [1]}))]);
        assert_eq!(
            out,
            "{\n    \"a\": [1, 2],\n    \"b\": {\n        \"x\": \"é\",\n        \"y\": {\n            \"z\": [\n                1\n            ]\n        }\n    }\n}\n"
        );
        let out = check(text, &[Op::Set(vec![k("c")], json!([{"q": 1}]))]);
        assert!(
            out.ends_with(
                "    },\n    \"c\": [\n        {\n            \"q\": 1\n        }\n    ]\n}\n"
            ),
            "{out}"
        );
    }

    #[test]
    fn inline_neighbours_get_inline_siblings() {
        let text = "{\n  \"hooks\": {\n    \"A\": [{\"hooks\": []}]\n  }\n}";
        let out = check(
            text,
            &[Op::Set(vec![k("hooks"), k("B")], json!([{"x": 1}]))],
        );
        assert_eq!(
            out,
            "{\n  \"hooks\": {\n    \"A\": [{\"hooks\": []}],\n    \"B\": [{\"x\": 1}]\n  }\n}"
        );
    }

    #[test]
    fn empty_containers_and_one_line_documents() {
        assert_eq!(
            check(
                "{\n  \"a\": {}\n}",
                &[Op::Set(vec![k("a"), k("b")], json!(1))]
            ),
            "{\n  \"a\": {\n    \"b\": 1\n  }\n}"
        );
        assert_eq!(
            check("{}", &[Op::Set(vec![k("a")], json!([1]))]),
            "{\"a\": [1]}"
        );
        assert_eq!(
            check("{\"a\":1}", &[Op::Set(vec![k("b")], json!(2))]),
            "{\"a\":1, \"b\": 2}"
        );
    }

    #[test]
    fn removals_take_their_comma() {
        let text = "{\n  \"a\": 1,\n  \"b\": [1, 2, 3],\n  \"c\": 3\n}";
        assert_eq!(
            check(text, &[Op::Remove(vec![k("a")])]),
            "{\n  \"b\": [1, 2, 3],\n  \"c\": 3\n}"
        );
        assert_eq!(
            check(text, &[Op::Remove(vec![k("c")])]),
            "{\n  \"a\": 1,\n  \"b\": [1, 2, 3]\n}"
        );
        assert_eq!(
            check(text, &[Op::Remove(vec![k("b"), Seg::Index(1)])]),
            text.replace("[1, 2, 3]", "[1, 3]")
        );
        assert_eq!(
            check("{\"a\": [ 1 ]}", &[Op::Remove(vec![k("a"), Seg::Index(0)])]),
            "{\"a\": []}"
        );
    }

    #[test]
    fn replaced_values_and_escapes() {
        let text = "{\"k\\\"ey\": \"v\", \"t\": 30}";
        assert_eq!(
            check(text, &[Op::Set(vec![k("t")], json!(15))]),
            "{\"k\\\"ey\": \"v\", \"t\": 15}"
        );
        assert_eq!(check(text, &[Op::Remove(vec![k("k\"ey")])]), "{\"t\": 30}");
    }

    #[test]
    fn hostile_text_is_refused_not_crashed() {
        let deep = "[".repeat(100_000);
        assert!(apply_text(&deep, &Op::Push(vec![], json!(1))).is_err());
        assert!(apply_text("{\"a\" 1}", &Op::Set(vec![k("a")], json!(1))).is_err());
        assert!(apply_text("\"é", &Op::Push(vec![], json!(1))).is_err());
    }

    #[test]
    fn reformat_uses_the_unit() {
        assert_eq!(
            reformat(&json!({"a": [1]}), Some("\t")),
            "{\n\t\"a\": [\n\t\t1\n\t]\n}\n"
        );
    }
}
