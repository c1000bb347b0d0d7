//! A cursor over JSON bytes that finds where values, keys and entries stand without parsing
//! them (issue 23): what a write in place splits a document by ([`crate::layouts::json`]), and
//! what a large state is read by, entry by entry, from its file as it streams past
//! ([`super::entries`]). It checks the document's structure (brackets, commas, colons, strings)
//! as it goes; what it finds is parsed by serde_json, which checks the rest.

use super::base::Src;

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

/// A cursor over JSON bytes: every step checks its bounds. The bytes are
/// taken a chunk at a time ([`Src`]: the whole slice, or a file's window), forward.
pub struct Scan<S> {
    /// The bytes.
    pub b: S,
    /// Where the cursor stands.
    pub at: usize,
}

impl<S: Src> Scan<S> {
    /// A cursor at the start of `b`.
    pub fn new(b: S) -> Scan<S> {
        Scan { b, at: 0 }
    }

    pub fn peek(&mut self) -> Option<u8> {
        self.b.chunk(self.at)?.first().copied()
    }

    pub fn advance(&mut self) -> Option<u8> {
        let c = self.peek()?;
        self.at += 1;
        Some(c)
    }

    pub fn eat(&mut self, c: u8) -> Option<()> {
        (self.advance()? == c).then_some(())
    }

    pub fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    /// A string, quotes included.
    pub fn string(&mut self) -> Option<std::ops::Range<usize>> {
        let start = self.at;
        self.eat(b'"')?;
        self.at = self.string_end(self.at)?;
        Some(start..self.at)
    }

    /// An object member's key (quotes included) and the colon after it, with the space around.
    pub fn key(&mut self) -> Option<std::ops::Range<usize>> {
        let k = self.string()?;
        self.ws();
        self.eat(b':')?;
        self.ws();
        Some(k)
    }

    /// Where the first byte at or after `i` that `stop` marks stands, and that byte: plain
    /// bytes skipped a chunk at a time on one table look-up each.
    fn find_next(&mut self, mut i: usize, stop: &[bool; 256]) -> Option<(usize, u8)> {
        loop {
            let c = self.b.chunk(i).filter(|c| !c.is_empty())?;
            match c.iter().position(|b| stop[usize::from(*b)]) {
                Some(p) => return Some((i + p, c[p])),
                None => i += c.len(),
            }
        }
    }

    /// Where the string whose contents begin at `i` ends (after its closing quote), an escape
    /// skipping the byte after it.
    fn string_end(&mut self, mut i: usize) -> Option<usize> {
        loop {
            match self.find_next(i, &IN_STRING)? {
                (at, b'"') => return Some(at + 1),
                (at, _) => i = at + 2,
            }
        }
    }

    /// One value of any kind.
    pub fn value(&mut self) -> Option<std::ops::Range<usize>> {
        let start = self.at;
        match self.peek()? {
            b'"' => {
                self.string()?;
            }
            b'{' | b'[' => {
                let mut depth = 0usize;
                let mut i = self.at;
                loop {
                    let (at, c) = self.find_next(i, &IN_CONTAINER)?;
                    i = at;
                    match c {
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
    pub fn each(
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
            match self.advance()? {
                b',' => continue,
                c if c == close => return Some(()),
                _ => return None,
            }
        }
    }
}
