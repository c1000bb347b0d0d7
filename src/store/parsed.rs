//! What this invocation has already parsed, remembered by the exact bytes it came from, so an
//! event reads each state file's meaning once (issue 23): a transaction's re-read under its
//! lock, or another room of the same event reading the same file, finds the same bytes and
//! reuses the first parse instead of repeating it. The bytes are still read every time and
//! compared in full, so a file another process changed in between is parsed afresh.
//!
//! One entry per kind of document (a schema name, or a layout's own kind): the last bytes
//! parsed and what they gave.

use std::any::Any;
use std::cell::RefCell;
use std::rc::Rc;

struct Entry {
    kind: &'static str,
    bytes: Vec<u8>,
    value: Rc<dyn Any>,
}

thread_local! {
    static PARSED: RefCell<Vec<Entry>> = const { RefCell::new(Vec::new()) };
}

/// What `parse` gives for `bytes`, from memory when the last bytes of this `kind` were the
/// same. `parse` must be a function of the bytes alone.
pub fn remembered<T: 'static>(
    kind: &'static str,
    bytes: &[u8],
    parse: impl FnOnce(&[u8]) -> T,
) -> Rc<T> {
    let hit = PARSED.with(|p| {
        p.borrow()
            .iter()
            .find(|e| e.kind == kind && e.bytes == bytes)
            .and_then(|e| e.value.clone().downcast::<T>().ok())
    });
    if let Some(v) = hit {
        return v;
    }
    let value = Rc::new(parse(bytes));
    let stored: Rc<dyn Any> = value.clone();
    PARSED.with(|p| {
        let mut p = p.borrow_mut();
        p.retain(|e| e.kind != kind);
        p.push(Entry {
            kind,
            bytes: bytes.to_vec(),
            value: stored,
        });
    });
    value
}

/// The last bytes of `kind` parsed and what they gave, for a parse that can continue from a
/// prefix (an append-only log).
pub fn last<T: 'static>(kind: &'static str) -> Option<(Vec<u8>, Rc<T>)> {
    PARSED.with(|p| {
        p.borrow().iter().find(|e| e.kind == kind).and_then(|e| {
            e.value
                .clone()
                .downcast::<T>()
                .ok()
                .map(|v| (e.bytes.clone(), v))
        })
    })
}

/// Remembers what `bytes` of `kind` gave (see [`last`]).
pub fn remember<T: 'static>(kind: &'static str, bytes: &[u8], value: Rc<T>) {
    PARSED.with(|p| {
        let mut p = p.borrow_mut();
        p.retain(|e| e.kind != kind);
        p.push(Entry {
            kind,
            bytes: bytes.to_vec(),
            value,
        });
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_bytes_parse_once_other_bytes_again() {
        let calls = std::cell::Cell::new(0);
        let parse = |b: &[u8]| {
            calls.set(calls.get() + 1);
            b.len()
        };
        assert_eq!(*remembered("test-kind", b"abc", parse), 3);
        assert_eq!(*remembered("test-kind", b"abc", parse), 3);
        assert_eq!(calls.get(), 1);
        assert_eq!(*remembered("test-kind", b"abcd", parse), 4);
        assert_eq!(*remembered("other-kind", b"abcd", parse), 4);
        assert_eq!(calls.get(), 3);
        assert_eq!(
            last::<usize>("test-kind").map(|(b, v)| (b, *v)),
            Some((b"abcd".to_vec(), 4))
        );
    }
}
