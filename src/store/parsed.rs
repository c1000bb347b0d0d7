//! What this invocation has already parsed, remembered by the exact bytes it came from, so an
//! event reads each state file's meaning once (issue 23): a transaction's re-read under its
//! lock, or another room of the same event reading the same file, finds the same bytes and
//! reuses the first parse instead of repeating it. The file is still read every time and
//! compared in full (whole, or as it is read: `Store::still_parsed`), so a file another
//! process changed in between is parsed afresh.
//!
//! One entry per kind of document (a schema name, or a layout's own kind): the last bytes
//! parsed and what they gave. The bytes are held once ([`Bytes`]), shared with whoever read
//! them; a file written as a stream is remembered by its [`Digest`] instead
//! ([`remember_digest`]), and a later read of the same bytes takes them up.

use std::any::Any;
use std::cell::RefCell;
use std::collections::hash_map::{DefaultHasher, RandomState};
use std::hash::{BuildHasher, Hasher};
use std::rc::Rc;

use crate::store::Bytes;

/// A SipHash hasher with this process's own random keys: a digest made with it cannot be
/// collided with by a file written in advance.
fn hasher() -> DefaultHasher {
    thread_local! {
        static KEYS: RandomState = RandomState::new();
    }
    KEYS.with(RandomState::build_hasher)
}

/// Bytes known by their length and a SipHash digest with this process's own keys, not held.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Digest {
    len: u64,
    hash: u64,
}

impl Digest {
    /// The digest of `bytes`.
    pub fn of(bytes: &[u8]) -> Digest {
        let mut d = Digester::default();
        d.add(bytes);
        d.finish()
    }
}

/// A [`Digest`] of bytes seen in pieces (the pieces of a write, the buffers of a read): the
/// same as the digest of the pieces joined.
#[derive(Debug, Clone)]
pub struct Digester {
    len: u64,
    hash: DefaultHasher,
}

impl Default for Digester {
    fn default() -> Digester {
        Digester {
            len: 0,
            hash: hasher(),
        }
    }
}

impl Digester {
    /// Folds in the next piece.
    pub fn add(&mut self, bytes: &[u8]) {
        self.len += bytes.len() as u64;
        self.hash.write(bytes);
    }

    /// Folds in what `r` reads, up to `limit` bytes, hashed as it is read (never held);
    /// returns how many bytes that was (fewer when `r` ends first).
    pub fn read(&mut self, r: &mut dyn std::io::BufRead, limit: u64) -> std::io::Result<u64> {
        let mut left = limit;
        while left > 0 {
            let buf = r.fill_buf()?;
            if buf.is_empty() {
                break;
            }
            let n = buf.len().min(usize::try_from(left).unwrap_or(usize::MAX));
            self.add(&buf[..n]);
            r.consume(n);
            left -= n as u64;
        }
        Ok(limit - left)
    }

    /// How many bytes were added.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether nothing was added.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The digest of everything added so far.
    pub fn finish(&self) -> Digest {
        Digest {
            len: self.len,
            hash: self.hash.finish(),
        }
    }
}

/// A reader that folds into a [`Digester`] every byte its reader consumes: a stream parsed
/// once, known afterwards by its digest (a later pass asks [`crate::store::Store::holds`]).
pub struct Digesting<'r> {
    inner: &'r mut dyn std::io::BufRead,
    digest: Digester,
}

impl<'r> Digesting<'r> {
    pub fn new(inner: &'r mut dyn std::io::BufRead) -> Self {
        Digesting {
            inner,
            digest: Digester::default(),
        }
    }

    /// The digest of everything consumed so far.
    pub fn finish(&self) -> Digest {
        self.digest.finish()
    }
}

impl std::io::Read for Digesting<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.digest.add(&buf[..n]);
        Ok(n)
    }
}

impl std::io::BufRead for Digesting<'_> {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        self.inner.fill_buf()
    }

    fn consume(&mut self, n: usize) {
        // The bytes consumed are the front of the buffer the last `fill_buf` gave, still there
        // (a buffered reader fills again only when empty).
        if n > 0 {
            if let Ok(buf) = self.inner.fill_buf() {
                self.digest.add(&buf[..n.min(buf.len())]);
            }
        }
        self.inner.consume(n);
    }
}

/// What an entry knows its bytes by.
enum Held {
    Bytes(Bytes),
    Digest(Digest),
}

impl Held {
    /// Whether these are `bytes` (a digest is computed only when the lengths agree).
    fn is(&self, bytes: &[u8]) -> bool {
        match self {
            Held::Bytes(b) => b.as_slice() == bytes,
            Held::Digest(d) => d.len == bytes.len() as u64 && *d == Digest::of(bytes),
        }
    }
}

struct Entry {
    kind: &'static str,
    /// The bytes, shared with whoever read them ([`remember_shared`]), or their digest.
    held: Held,
    value: Rc<dyn Any>,
    /// What the kind's bytes before these gave, kept until the next ones replace these: a
    /// write's old document is then not freed in the middle of the event (see [`leave`]).
    _before: Option<Rc<dyn Any>>,
}

thread_local! {
    static PARSED: RefCell<Vec<Entry>> = const { RefCell::new(Vec::new()) };
}

/// What the last bytes of `kind` gave when they are `bytes`, with them shared: the bytes
/// remembered, or these (taken up in place of a digest). `Err` gives the bytes back.
#[allow(clippy::type_complexity)]
fn adopt<T: 'static>(
    kind: &'static str,
    bytes: Vec<u8>,
) -> std::result::Result<(Bytes, Rc<T>), Vec<u8>> {
    PARSED.with(|p| {
        let mut p = p.borrow_mut();
        let Some(e) = p.iter_mut().find(|e| e.kind == kind && e.held.is(&bytes)) else {
            return Err(bytes);
        };
        let Ok(value) = e.value.clone().downcast::<T>() else {
            return Err(bytes);
        };
        let shared = match &e.held {
            Held::Bytes(b) => b.clone(),
            Held::Digest(_) => {
                let b = Bytes::new(bytes);
                e.held = Held::Bytes(b.clone());
                b
            }
        };
        Ok((shared, value))
    })
}

/// What `parse` gives for `bytes`, from memory when the last bytes of this `kind` were the
/// same, with the bytes remembered (these, or the equal ones remembered before). `parse` must
/// be a function of the bytes alone; it is handed them shared (what it keeps of them is not a
/// copy).
pub fn remembered<T: 'static>(
    kind: &'static str,
    bytes: Vec<u8>,
    parse: impl FnOnce(&Bytes) -> T,
) -> (Bytes, Rc<T>) {
    let bytes = match adopt(kind, bytes) {
        Ok(known) => return known,
        Err(bytes) => bytes,
    };
    // Kept, not copied: the caller's bytes are the ones remembered.
    let bytes = Bytes::new(bytes);
    let value = Rc::new(parse(&bytes));
    remember_shared(kind, bytes.clone(), value.clone());
    (bytes, value)
}

/// [`remembered`] for a parse that can find the bytes unusable (`Ok(Err(why))`) or fail
/// (`Err`): only a usable value is remembered. The bytes come back shared either way.
#[allow(clippy::type_complexity)]
pub fn remembered_valid<T: 'static, E>(
    kind: &'static str,
    bytes: Vec<u8>,
    parse: impl FnOnce(&[u8]) -> crate::error::Result<std::result::Result<T, E>>,
) -> crate::error::Result<(Bytes, std::result::Result<Rc<T>, E>)> {
    let bytes = match adopt(kind, bytes) {
        Ok((bytes, value)) => return Ok((bytes, Ok(value))),
        Err(bytes) => bytes,
    };
    let value = parse(&bytes)?.map(Rc::new);
    let bytes = Bytes::new(bytes);
    if let Ok(value) = &value {
        remember_shared(kind, bytes.clone(), value.clone());
    }
    Ok((bytes, value))
}

/// What the last bytes of `kind` gave, when they were exactly `bytes`.
pub fn get<T: 'static>(kind: &'static str, bytes: &[u8]) -> Option<Rc<T>> {
    PARSED.with(|p| {
        p.borrow()
            .iter()
            .find(|e| e.kind == kind && e.held.is(bytes))
            .and_then(|e| e.value.clone().downcast::<T>().ok())
    })
}

/// The last bytes of `kind` and what they gave (not when they are known by a digest only:
/// see [`latest_digest`]).
pub fn latest<T: 'static>(kind: &'static str) -> Option<(Bytes, Rc<T>)> {
    find(kind, |_| true)
}

/// The digest of the last bytes of `kind` and what they gave, when they are known by it alone
/// ([`remember_digest`]).
pub fn latest_digest<T: 'static>(kind: &'static str) -> Option<(Digest, Rc<T>)> {
    PARSED.with(|p| {
        p.borrow().iter().find_map(|e| match &e.held {
            Held::Digest(d) if e.kind == kind => Some((*d, e.value.clone().downcast::<T>().ok()?)),
            _ => None,
        })
    })
}

/// The entry of `kind` whose held bytes `fits`, when what they gave is a `T`.
fn find<T: 'static>(kind: &'static str, fits: impl Fn(&[u8]) -> bool) -> Option<(Bytes, Rc<T>)> {
    PARSED.with(|p| {
        p.borrow().iter().find_map(|e| match &e.held {
            Held::Bytes(b) if e.kind == kind && fits(b) => {
                Some((b.clone(), e.value.clone().downcast::<T>().ok()?))
            }
            _ => None,
        })
    })
}

/// What the last bytes of `kind` gave and how long they were, when they begin `bytes` (or are
/// them): for a parse that can continue from a prefix, such as an append-only log's.
pub fn prefix_of<T: 'static>(kind: &'static str, bytes: &[u8]) -> Option<(usize, Rc<T>)> {
    find(kind, |b| bytes.starts_with(b)).map(|(b, v)| (b.len(), v))
}

/// Lets go of what is remembered of `kind` (its value then lives only where it was handed out).
pub fn forget(kind: &'static str) {
    PARSED.with(|p| p.borrow_mut().retain(|e| e.kind != kind));
}

/// Remembers what `bytes` of `kind` gave, in place of what the kind's last bytes gave.
pub fn remember<T: 'static>(kind: &'static str, bytes: &[u8], value: Rc<T>) {
    remember_shared(kind, Bytes::new(bytes.to_vec()), value);
}

/// [`remember`] for bytes the caller holds shared: they are kept, not copied.
pub fn remember_shared<T: 'static>(kind: &'static str, bytes: Bytes, value: Rc<T>) {
    put(kind, Held::Bytes(bytes), value);
}

/// Remembers what bytes known only by their digest give (a file written as a stream, never
/// held whole): a later read of exactly those bytes finds it without a parse.
pub fn remember_digest<T: 'static>(kind: &'static str, digest: Digest, value: Rc<T>) {
    put(kind, Held::Digest(digest), value);
}

fn put<T: 'static>(kind: &'static str, held: Held, value: Rc<T>) {
    PARSED.with(|p| {
        let mut p = p.borrow_mut();
        let before = p
            .iter()
            .position(|e| e.kind == kind)
            .map(|i| p.swap_remove(i).value);
        p.push(Entry {
            kind,
            held,
            value,
            _before: before,
        });
    });
}

/// Lets go of everything remembered without freeing it, for a process about to exit (the
/// system takes the memory back at once; freeing each parsed task would cost more than the
/// parse saved). Later lookups find nothing, so it is never wrong, only slower.
pub fn leave() {
    PARSED.with(|p| std::mem::forget(std::mem::take(&mut *p.borrow_mut())));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stream read line by line through [`Digesting`], its reader's buffer smaller than a
    /// line or larger, is known by the digest of all its bytes; a stream read part way, by the
    /// digest of the part read.
    #[test]
    fn a_stream_read_through_is_known_by_its_digest() {
        use std::io::BufRead;
        let text: Vec<u8> = (0..500)
            .flat_map(|i| format!("line {i} {}\n", "x".repeat(i % 37)).into_bytes())
            .collect();
        for cap in [1, 7, 64, 8192] {
            let mut r = std::io::BufReader::with_capacity(cap, text.as_slice());
            let mut d = Digesting::new(&mut r);
            let (mut line, mut lines) = (Vec::new(), 0);
            while d.read_until(b'\n', &mut line).unwrap() > 0 {
                lines += 1;
                line.clear();
            }
            assert_eq!(lines, 500);
            assert_eq!(d.finish(), Digest::of(&text), "buffer of {cap}");
            let mut r = std::io::BufReader::with_capacity(cap, text.as_slice());
            let mut d = Digesting::new(&mut r);
            d.read_until(b'\n', &mut line).unwrap();
            assert_eq!(d.finish(), Digest::of(&line));
            assert_ne!(d.finish(), Digest::of(&text));
        }
    }

    /// Bytes known by their digest alone (read or written as a stream): a read of the same
    /// bytes takes up what they gave (and holds them), other bytes do not.
    #[test]
    fn bytes_not_held_are_known_by_their_digest() {
        let first = Rc::new(6usize);
        remember_digest("held-kind", Digest::of(b"abcdef"), first.clone());
        assert!(latest::<usize>("held-kind").is_none());
        let (digest, value) = latest_digest::<usize>("held-kind").unwrap();
        assert_eq!(digest, Digest::of(b"abcdef"));
        assert!(Rc::ptr_eq(&first, &value));
        assert!(get::<usize>("held-kind", b"abcdeg").is_none());
        let (bytes, again) = remembered("held-kind", b"abcdef".to_vec(), |_| 0);
        assert!(Rc::ptr_eq(&first, &again), "not parsed again");
        assert_eq!(
            latest::<usize>("held-kind").unwrap().0.as_slice(),
            bytes.as_slice()
        );
    }

    #[test]
    fn same_bytes_parse_once_other_bytes_again() {
        let calls = std::cell::Cell::new(0);
        let parse = |b: &Bytes| {
            calls.set(calls.get() + 1);
            b.len()
        };
        assert_eq!(*remembered("test-kind", b"abc".to_vec(), parse).1, 3);
        assert_eq!(*remembered("test-kind", b"abc".to_vec(), parse).1, 3);
        assert_eq!(calls.get(), 1);
        assert_eq!(*remembered("test-kind", b"abcd".to_vec(), parse).1, 4);
        assert_eq!(*remembered("other-kind", b"abcd".to_vec(), parse).1, 4);
        assert_eq!(calls.get(), 3);
        // An unusable reading is said, not remembered: the same bytes are read again.
        let unusable = |b: &[u8]| {
            calls.set(calls.get() + 1);
            Ok(if b == b"bad" { Err("bad") } else { Ok(b.len()) })
        };
        for _ in 0..2 {
            let (bytes, got) = remembered_valid("valid-kind", b"bad".to_vec(), unusable).unwrap();
            assert_eq!((bytes.as_slice(), got), (&b"bad"[..], Err("bad")));
        }
        assert_eq!(calls.get(), 5);
        for _ in 0..2 {
            let (_, got) = remembered_valid("valid-kind", b"good".to_vec(), unusable).unwrap();
            assert_eq!(got.map(|v| *v), Ok(4));
        }
        assert_eq!(calls.get(), 6);
        let after = prefix_of::<usize>("test-kind", b"abcdef").map(|(n, v)| (n, *v));
        assert_eq!(after, Some((4, 4)));
        assert!(prefix_of::<usize>("test-kind", b"abc").is_none());
    }
}
