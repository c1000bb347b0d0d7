//! The bytes a document was read from, for a write spliced over them (issue 23): held in memory,
//! or a file read a window at a time where the splice needs it, never whole. A large state
//! whose parse was streamed from its file ([`super::Store::read_hashed`]) is written over the
//! file itself: only the windows the scan passes through and the runs it copies are read, and
//! every byte read is hashed, so a file that is no longer the one parsed is found out before the
//! write lands ([`super::Store::base_of`]).

use std::borrow::Cow;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::ops::Range;

/// How many bytes a file base reads at a time.
const WINDOW: usize = 64 * 1024;

/// Bytes read where they are needed: a scan takes them a window at a time, forward; a copy
/// takes a range. `None` is an end the caller did not expect (past the end, or a read that
/// failed): the caller then gives up on the splice and writes the whole document.
pub trait Src {
    /// The bytes from `at` on, as many as are at hand (empty at the end).
    fn chunk(&mut self, at: usize) -> Option<&[u8]>;
    /// The bytes of `r`.
    fn range(&mut self, r: Range<usize>) -> Option<Cow<'_, [u8]>>;
    /// How many bytes there are.
    fn len(&self) -> usize;
    /// Whether there are none.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Src for &[u8] {
    fn chunk(&mut self, at: usize) -> Option<&[u8]> {
        self.get(at..)
    }

    fn range(&mut self, r: Range<usize>) -> Option<Cow<'_, [u8]>> {
        self.get(r).map(Cow::Borrowed)
    }

    fn len(&self) -> usize {
        <[u8]>::len(self)
    }
}

impl<S: Src + ?Sized> Src for &mut S {
    fn chunk(&mut self, at: usize) -> Option<&[u8]> {
        (**self).chunk(at)
    }

    fn range(&mut self, r: Range<usize>) -> Option<Cow<'_, [u8]>> {
        (**self).range(r)
    }

    fn len(&self) -> usize {
        (**self).len()
    }
}

/// A document's bytes as a [`Src`]: held (the dry run's overlay, a file read whole), or its
/// regular file, opened once and read a window at a time.
pub enum Base {
    Held(super::Bytes),
    File(FileBase),
}

impl Src for Base {
    fn chunk(&mut self, at: usize) -> Option<&[u8]> {
        match self {
            Base::Held(b) => b.get(at..),
            Base::File(f) => f.chunk(at),
        }
    }

    fn range(&mut self, r: Range<usize>) -> Option<Cow<'_, [u8]>> {
        match self {
            Base::Held(b) => b.get(r).map(Cow::Borrowed),
            Base::File(f) => f.range(r),
        }
    }

    fn len(&self) -> usize {
        match self {
            Base::Held(b) => b.len(),
            Base::File(f) => f.len,
        }
    }
}

/// A regular file read a window at a time; its length as opened. A read that comes short (the
/// file shrank) is `None`; one that grew is found by the hash of what was read.
pub struct FileBase {
    file: File,
    len: usize,
    window: Vec<u8>,
    /// Where the window stands in the file.
    start: usize,
}

impl FileBase {
    pub(super) fn new(file: File, len: u64) -> Option<FileBase> {
        Some(FileBase {
            file,
            len: usize::try_from(len).ok()?,
            window: Vec::new(),
            start: 0,
        })
    }

    /// `buf.len()` bytes from `at`.
    fn read_at(&mut self, at: usize, buf: &mut [u8]) -> Option<()> {
        self.file.seek(SeekFrom::Start(at as u64)).ok()?;
        self.file.read_exact(buf).ok()
    }

    fn chunk(&mut self, at: usize) -> Option<&[u8]> {
        if at > self.len {
            return None;
        }
        let end = self.start + self.window.len();
        if at < self.start || at >= end || self.window.is_empty() {
            let mut w = std::mem::take(&mut self.window);
            w.resize((self.len - at).min(WINDOW), 0);
            self.read_at(at, &mut w)?;
            self.window = w;
            self.start = at;
        }
        self.window.get(at - self.start..)
    }

    fn range(&mut self, r: Range<usize>) -> Option<Cow<'_, [u8]>> {
        if r.start > r.end || r.end > self.len {
            return None;
        }
        if r.start >= self.start && r.end <= self.start + self.window.len() {
            let (a, b) = (r.start - self.start, r.end - self.start);
            return Some(Cow::Borrowed(&self.window[a..b]));
        }
        let mut out = vec![0; r.len()];
        self.read_at(r.start, &mut out)?;
        Some(Cow::Owned(out))
    }
}

/// A stream read forward into a window that keeps everything from its mark on ([`Src`] for a
/// scan that reads a file once, as it streams past): what the scan has passed, before the mark,
/// is let go of at the next read. A range before the window, or a read that fails, is `None`.
pub struct Window<R> {
    r: R,
    buf: Vec<u8>,
    /// Where the window stands in the stream.
    start: usize,
    mark: usize,
    failed: bool,
}

impl<R: Read> Window<R> {
    pub fn new(r: R) -> Window<R> {
        Window {
            r,
            buf: Vec::new(),
            start: 0,
            mark: 0,
            failed: false,
        }
    }

    /// Keeps the bytes from `at` on until the next mark: a range from there is at hand.
    pub fn mark(&mut self, at: usize) {
        self.mark = at;
    }

    /// Reads on, letting go of what stands before the mark; `false` at the end or on a failure.
    fn more(&mut self) -> bool {
        let passed = self.mark.saturating_sub(self.start).min(self.buf.len());
        if passed > 0 {
            self.buf.drain(..passed);
            self.start += passed;
        }
        let old = self.buf.len();
        self.buf.resize(old + WINDOW, 0);
        loop {
            match self.r.read(&mut self.buf[old..]) {
                Ok(n) => {
                    self.buf.truncate(old + n);
                    return n > 0;
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => {
                    self.buf.truncate(old);
                    self.failed = true;
                    return false;
                }
            }
        }
    }

    /// Whether a read failed (the scan's `None` was not the document's).
    pub fn failed(&self) -> bool {
        self.failed
    }
}

impl<R: Read> Src for Window<R> {
    fn chunk(&mut self, at: usize) -> Option<&[u8]> {
        if at < self.start {
            return None;
        }
        while at >= self.start + self.buf.len() {
            if !self.more() {
                let end = self.start + self.buf.len();
                return (at == end && !self.failed).then_some(&[][..]);
            }
        }
        self.buf.get(at - self.start..)
    }

    fn range(&mut self, r: Range<usize>) -> Option<Cow<'_, [u8]>> {
        let (a, b) = (
            r.start.checked_sub(self.start)?,
            r.end.checked_sub(self.start)?,
        );
        self.buf.get(a..b).map(Cow::Borrowed)
    }

    /// What has been read so far (the stream's length is known only at its end).
    fn len(&self) -> usize {
        self.start + self.buf.len()
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // The tests' own files, made and opened directly.
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A file base gives the bytes a slice gives, window or not, and `None` past the end.
    #[test]
    fn a_file_base_reads_what_the_file_holds() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let bytes: Vec<u8> = (0..3 * WINDOW + 17).map(|i| (i * 7 % 251) as u8).collect();
        std::fs::write(&path, &bytes).unwrap();
        let mut f = FileBase::new(File::open(&path).unwrap(), bytes.len() as u64).unwrap();
        for at in [
            0,
            1,
            WINDOW - 1,
            WINDOW,
            2 * WINDOW + 5,
            bytes.len() - 1,
            3,
            0,
        ] {
            let c = f.chunk(at).unwrap().to_vec();
            assert!(!c.is_empty() && c.len() <= WINDOW);
            assert_eq!(c, bytes[at..at + c.len()]);
        }
        assert_eq!(f.chunk(bytes.len()), Some(&[][..]));
        assert_eq!(f.chunk(bytes.len() + 1), None);
        for r in [0..10, WINDOW - 3..WINDOW + 3, 5..3 * WINDOW, 2..2] {
            assert_eq!(f.range(r.clone()).unwrap().as_ref(), &bytes[r]);
        }
        assert!(f.range(0..bytes.len() + 1).is_none());
        // A file that shrank since it was opened reads short: `None`, not fewer bytes.
        std::fs::write(&path, &bytes[..10]).unwrap();
        let mut f = FileBase::new(File::open(&path).unwrap(), bytes.len() as u64).unwrap();
        assert!(f.chunk(WINDOW).is_none());
        assert!(f.range(5..20).is_none());
    }

    /// A window reads forward, keeps what follows its mark, and says where the stream ends.
    #[test]
    fn a_window_keeps_what_follows_its_mark() {
        let bytes: Vec<u8> = (0..3 * WINDOW + 17).map(|i| (i * 7 % 251) as u8).collect();
        let mut w = Window::new(&bytes[..]);
        assert_eq!(w.chunk(0).unwrap(), &bytes[..WINDOW]);
        w.mark(10);
        assert_eq!(w.chunk(2 * WINDOW + 3).unwrap()[0], bytes[2 * WINDOW + 3]);
        assert_eq!(
            w.range(10..2 * WINDOW).unwrap().as_ref(),
            &bytes[10..2 * WINDOW]
        );
        w.mark(2 * WINDOW);
        assert_eq!(w.chunk(3 * WINDOW).unwrap(), &bytes[3 * WINDOW..]);
        assert!(w.range(10..20).is_none(), "let go of");
        assert_eq!(
            w.range(2 * WINDOW..2 * WINDOW + 5).unwrap().as_ref(),
            &bytes[2 * WINDOW..2 * WINDOW + 5]
        );
        assert_eq!(w.chunk(bytes.len()), Some(&[][..]));
        assert_eq!(w.chunk(bytes.len() + 1), None);
        assert!(!w.failed());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// Any walk of chunks and ranges over a file base gives the slice's bytes.
        #[test]
        fn a_file_base_is_its_bytes(
            len in 0usize..200_000,
            steps in proptest::collection::vec((0usize..210_000, 0usize..70_000), 1..20),
        ) {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("f");
            let bytes: Vec<u8> = (0..len).map(|i| (i * 13 % 241) as u8).collect();
            std::fs::write(&path, &bytes).unwrap();
            let mut f = FileBase::new(File::open(&path).unwrap(), len as u64).unwrap();
            let mut s: &[u8] = &bytes;
            for (at, n) in steps {
                let got = f.chunk(at).map(<[u8]>::to_vec);
                let want = s.chunk(at).map(<[u8]>::to_vec);
                match (&got, &want) {
                    (Some(g), Some(w)) => prop_assert!(w.starts_with(g) && (!g.is_empty() || w.is_empty())),
                    _ => prop_assert_eq!(got.is_none(), want.is_none()),
                }
                let r = at..at + n;
                prop_assert_eq!(f.range(r.clone()).map(Cow::into_owned), s.range(r).map(Cow::into_owned));
            }
        }
    }
}
