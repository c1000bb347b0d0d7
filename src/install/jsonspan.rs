//! JSON text as a tree of byte spans, for [`super::jsonedit`]: where each value, member and
//! element starts and ends, and each member's key. Nothing is decoded but keys; nesting is
//! bounded so a planted file cannot overflow the stack.

use super::jsonedit::Seg;

/// Nesting deeper than this is refused.
const MAX_DEPTH: usize = 256;

/// The value under one path step: the last member with that key (as serde_json keeps it), or
/// the element at that index.
pub(super) fn child<'a>(node: &'a Node, seg: &Seg) -> Option<&'a Node> {
    match (&node.kind, seg) {
        (Kind::Object(kids), Seg::Key(k)) => kids
            .iter()
            .rev()
            .find(|c| c.key.as_deref() == Some(k))
            .map(|c| &c.value),
        (Kind::Array(kids), Seg::Index(i)) => kids.get(*i).map(|c| &c.value),
        _ => None,
    }
}

/// A value's byte span in the text.
#[derive(Debug)]
pub(super) struct Node {
    pub(super) start: usize,
    pub(super) end: usize,
    pub(super) kind: Kind,
}

#[derive(Debug)]
pub(super) enum Kind {
    Object(Vec<Kid>),
    Array(Vec<Kid>),
    Scalar,
}

/// A member (with its key) or an element; `start` is where it begins (its key for a member).
#[derive(Debug)]
pub(super) struct Kid {
    pub(super) key: Option<String>,
    pub(super) start: usize,
    pub(super) value: Node,
}

pub(super) struct Parser<'a> {
    b: &'a [u8],
    s: &'a str,
    i: usize,
}

impl<'a> Parser<'a> {
    pub(super) fn parse(s: &'a str) -> Result<Node, String> {
        let mut p = Parser {
            b: s.as_bytes(),
            s,
            i: 0,
        };
        p.ws();
        let n = p.value(0)?;
        p.ws();
        if p.i != p.b.len() {
            return Err(format!("trailing text at byte {}", p.i));
        }
        Ok(n)
    }

    fn ws(&mut self) {
        while self.i < self.b.len() && matches!(self.b[self.i], b' ' | b'\t' | b'\n' | b'\r') {
            self.i += 1;
        }
    }

    fn eat(&mut self, c: u8) -> Result<(), String> {
        if self.b.get(self.i) == Some(&c) {
            self.i += 1;
            Ok(())
        } else {
            Err(format!("expected `{}` at byte {}", c as char, self.i))
        }
    }

    fn value(&mut self, depth: usize) -> Result<Node, String> {
        if depth > MAX_DEPTH {
            return Err("nested too deeply".into());
        }
        let start = self.i;
        let kind = match self.b.get(self.i) {
            Some(b'{') => Kind::Object(self.items(b'}', true, depth)?),
            Some(b'[') => Kind::Array(self.items(b']', false, depth)?),
            Some(b'"') => {
                self.string()?;
                Kind::Scalar
            }
            Some(_) => {
                while self.i < self.b.len()
                    && matches!(self.b[self.i], b'-' | b'+' | b'.' | b'0'..=b'9' | b'a'..=b'z' | b'E')
                {
                    self.i += 1;
                }
                if self.i == start {
                    return Err(format!("unexpected byte at {start}"));
                }
                Kind::Scalar
            }
            None => return Err("unexpected end".into()),
        };
        Ok(Node {
            start,
            end: self.i,
            kind,
        })
    }

    fn items(&mut self, close: u8, keyed: bool, depth: usize) -> Result<Vec<Kid>, String> {
        self.i += 1;
        let mut kids = Vec::new();
        self.ws();
        if self.b.get(self.i) == Some(&close) {
            self.i += 1;
            return Ok(kids);
        }
        loop {
            self.ws();
            let start = self.i;
            let key = if keyed {
                let (a, b) = self.string()?;
                let k: String = serde_json::from_str(&self.s[a..b]).map_err(|e| e.to_string())?;
                self.ws();
                self.eat(b':')?;
                self.ws();
                Some(k)
            } else {
                None
            };
            let value = self.value(depth + 1)?;
            kids.push(Kid { key, start, value });
            self.ws();
            match self.b.get(self.i) {
                Some(b',') => self.i += 1,
                Some(c) if *c == close => {
                    self.i += 1;
                    return Ok(kids);
                }
                _ => {
                    return Err(format!(
                        "expected `,` or `{}` at byte {}",
                        close as char, self.i
                    ))
                }
            }
        }
    }

    /// Skips a string token, returning its span (quotes included).
    fn string(&mut self) -> Result<(usize, usize), String> {
        let start = self.i;
        self.eat(b'"')?;
        while let Some(&c) = self.b.get(self.i) {
            self.i += 1;
            match c {
                b'\\' => self.i += 1,
                b'"' => return Ok((start, self.i)),
                _ => {}
            }
        }
        Err("unterminated string".into())
    }
}
