//! What this invocation has already parsed, remembered by the exact bytes it came from, so an
//! event reads each state file's meaning once (issue 23): a transaction's re-read under its
//! lock, or another room of the same event reading the same file, finds the same bytes and
//! reuses the first parse instead of repeating it. The file is still read every time and
//! compared in full (whole, or as it is read: `Store::still_parsed`), so a file another
//! process changed in between is parsed afresh.
//!
//! One entry per kind of document (a schema name, or a layout's own kind): the last bytes
//! parsed and what they gave. The bytes are held once ([`Bytes`]), shared with whoever read
//! them.

use std::any::Any;
use std::cell::RefCell;
use std::rc::Rc;

use crate::store::Bytes;

struct Entry {
    kind: &'static str,
    /// The bytes, shared with whoever read them ([`remember_shared`]).
    bytes: Bytes,
    value: Rc<dyn Any>,
    /// What the kind's bytes before these gave, kept until the next ones replace these: a
    /// write's old document is then not freed in the middle of the event (see [`leave`]).
    _before: Option<Rc<dyn Any>>,
}

thread_local! {
    static PARSED: RefCell<Vec<Entry>> = const { RefCell::new(Vec::new()) };
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
    if let Some(known) = shared(kind, &bytes) {
        return known;
    }
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
    if let Some((bytes, value)) = shared(kind, &bytes) {
        return Ok((bytes, Ok(value)));
    }
    let value = parse(&bytes)?.map(Rc::new);
    let bytes = Bytes::new(bytes);
    if let Ok(value) = &value {
        remember_shared(kind, bytes.clone(), value.clone());
    }
    Ok((bytes, value))
}

/// What the last bytes of `kind` gave, when they were exactly `bytes`.
pub fn get<T: 'static>(kind: &'static str, bytes: &[u8]) -> Option<Rc<T>> {
    shared(kind, bytes).map(|(_, v)| v)
}

/// [`get`], with the remembered bytes (equal to `bytes`): a caller that read a large file
/// again keeps these and lets its own copy go.
pub fn shared<T: 'static>(kind: &'static str, bytes: &[u8]) -> Option<(Bytes, Rc<T>)> {
    find(kind, |b| b == bytes)
}

/// The last bytes of `kind` and what they gave.
pub fn latest<T: 'static>(kind: &'static str) -> Option<(Bytes, Rc<T>)> {
    find(kind, |_| true)
}

/// The entry of `kind` whose bytes `fits`, when what they gave is a `T`.
fn find<T: 'static>(kind: &'static str, fits: impl Fn(&[u8]) -> bool) -> Option<(Bytes, Rc<T>)> {
    PARSED.with(|p| {
        p.borrow()
            .iter()
            .find(|e| e.kind == kind && fits(&e.bytes))
            .and_then(|e| Some((e.bytes.clone(), e.value.clone().downcast::<T>().ok()?)))
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
    PARSED.with(|p| {
        let mut p = p.borrow_mut();
        let before = p
            .iter()
            .position(|e| e.kind == kind)
            .map(|i| p.swap_remove(i).value);
        p.push(Entry {
            kind,
            bytes,
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
