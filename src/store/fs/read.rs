//! The read side of [`crate::store::fs`]: every read opens non-blocking, no-follow (unless the
//! caller allows a link), requires a regular file and stops at a cap.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

use std::fs::{File, Metadata, OpenOptions};
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::Path;

use super::{flags, open_error, regular};
use crate::error::{Error, Result};

fn over_cap(op: &'static str, path: &Path, size: u64, cap: u64) -> Error {
    Error::refused(
        op,
        path,
        format!(
            "it is {size} bytes, over taskhook's {} cap for this file",
            human(cap)
        ),
    )
}

/// `64 MiB`, `512 KiB`, `100 bytes`.
pub fn human(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{} MiB", b >> 20),
        b if b >= 1 << 10 && b % (1 << 10) == 0 => format!("{} KiB", b >> 10),
        b => format!("{b} bytes"),
    }
}

/// Opens a file for reading: non-blocking, no-follow unless `follow`, regular files only.
/// `None` when it does not exist.
fn open_regular(path: &Path, follow: bool) -> Result<Option<(File, Metadata)>> {
    let f = match flags(OpenOptions::new().read(true), follow).open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) if follow => return Err(Error::io("read", path, e)),
        Err(e) => return Err(open_error("read", path, e)),
    };
    let meta = regular("read", path, &f)?;
    Ok(Some((f, meta)))
}

/// Reads a whole regular file of at most `cap` bytes; `None` when it does not exist. A link
/// (unless `follow`), a FIFO, a device or a file over `cap` is [`Error::Refused`].
pub fn read_regular(path: &Path, cap: u64, follow: bool) -> Result<Option<Vec<u8>>> {
    let Some((f, len)) = open_capped(path, cap, follow)? else {
        return Ok(None);
    };
    read_up_to(f, path, cap, len).map(Some)
}

/// Opens a regular file of at most `cap` bytes to be read where needed (the base of a write
/// spliced over it), with its length as opened; `None` when it does not exist. Opened like
/// [`read_regular`], with the same refusals.
pub fn open_capped(path: &Path, cap: u64, follow: bool) -> Result<Option<(File, u64)>> {
    let Some((f, meta)) = open_regular(path, follow)? else {
        return Ok(None);
    };
    if meta.len() > cap {
        return Err(over_cap("read", path, meta.len(), cap));
    }
    Ok(Some((f, meta.len())))
}

/// Hands a regular file of at most `cap` bytes to `read` as a buffered stream, never holding it
/// whole (an append-only log read line by line); `None` when it does not exist. Opened like
/// [`read_regular`]; a file that grew past `cap` after its `fstat` is refused too, however much
/// of it `read` took.
pub fn read_with<T>(
    path: &Path,
    cap: u64,
    follow: bool,
    read: impl FnOnce(&mut dyn BufRead) -> io::Result<T>,
) -> Result<Option<T>> {
    let Some((f, _)) = open_capped(path, cap, follow)? else {
        return Ok(None);
    };
    let mut r = BufReader::with_capacity(64 * 1024, f.take(cap + 1));
    let out = read(&mut r).map_err(|e| Error::io("read", path, e))?;
    if r.get_ref().limit() == 0 {
        return Err(over_cap("read", path, cap + 1, cap));
    }
    Ok(Some(out))
}

/// Reads to the end, failing past `cap` bytes (a file may grow after its `fstat`).
fn read_up_to(f: impl Read, path: &Path, cap: u64, size_hint: u64) -> Result<Vec<u8>> {
    let mut buf = Vec::with_capacity(size_hint.min(cap) as usize);
    f.take(cap + 1)
        .read_to_end(&mut buf)
        .map_err(|e| Error::io("read", path, e))?;
    if buf.len() as u64 > cap {
        return Err(over_cap("read", path, buf.len() as u64, cap));
    }
    Ok(buf)
}

/// Reads the first `head` and the last `tail` bytes of a regular file, whole lines only (a line
/// cut by either bound is dropped); the whole file when it fits. `None` when it does not exist.
pub fn read_head_tail(path: &Path, head: u64, tail: u64, follow: bool) -> Result<Option<Vec<u8>>> {
    let Some((mut f, meta)) = open_regular(path, follow)? else {
        return Ok(None);
    };
    let err = |e| Error::io("read", path, e);
    let size = meta.len();
    if size <= head + tail {
        let mut buf = Vec::with_capacity(size as usize);
        (&mut f)
            .take(head + tail)
            .read_to_end(&mut buf)
            .map_err(err)?;
        // The file may have grown since the fstat: keep whole lines only.
        if buf.len() as u64 == head + tail {
            let keep = buf.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
            buf.truncate(keep);
        }
        return Ok(Some(buf));
    }
    let mut first = Vec::with_capacity(head as usize);
    (&mut f).take(head).read_to_end(&mut first).map_err(err)?;
    let keep = first.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
    first.truncate(keep);
    f.seek(SeekFrom::Start(size - tail)).map_err(err)?;
    let mut last = Vec::with_capacity(tail as usize);
    f.take(tail).read_to_end(&mut last).map_err(err)?;
    let from = last
        .iter()
        .position(|b| *b == b'\n')
        .map_or(last.len(), |i| i + 1);
    first.extend_from_slice(&last[from..]);
    Ok(Some(first))
}

/// Whether the regular file at `path` holds exactly `expected` (`None`: there is no file),
/// compared chunk by chunk as it is read, never holding a second copy. Opened like
/// [`read_regular`].
pub fn same_content(path: &Path, expected: Option<&[u8]>, follow: bool) -> Result<bool> {
    let Some((mut f, meta)) = open_regular(path, follow)? else {
        return Ok(expected.is_none());
    };
    let Some(expected) = expected.filter(|e| e.len() as u64 == meta.len()) else {
        return Ok(false);
    };
    let mut buf = vec![0u8; 64 * 1024];
    let mut at = 0;
    loop {
        let n = match f.read(&mut buf) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(Error::io("read", path, e)),
        };
        if n == 0 {
            return Ok(at == expected.len());
        }
        if expected.get(at..at + n) != Some(&buf[..n]) {
            return Ok(false);
        }
        at += n;
    }
}

/// Reads a regular file from byte `offset` on (an offset past the end reads nothing), at most
/// `cap` bytes; `None` when it does not exist. Opened like [`read_regular`]: a link (unless
/// `follow`), a FIFO or a device is [`Error::Refused`]; more than `cap` bytes is too.
pub fn read_range(path: &Path, offset: u64, cap: u64, follow: bool) -> Result<Option<Vec<u8>>> {
    let Some((mut f, meta)) = open_regular(path, follow)? else {
        return Ok(None);
    };
    let from = offset.min(meta.len());
    if meta.len() - from > cap {
        return Err(over_cap("read", path, meta.len() - from, cap));
    }
    f.seek(SeekFrom::Start(from))
        .map_err(|e| Error::io("seek in", path, e))?;
    read_up_to(f, path, cap, meta.len() - from).map(Some)
}

/// The error for a file holding more than `cap` bytes from `offset` on.
pub fn too_large(path: &Path, size: u64, cap: u64) -> Error {
    over_cap("read", path, size, cap)
}

/// Reads a regular file of at most `cap` bytes, following links (a file the user points at,
/// such as a dotfiles `settings.json`): [`read_regular`] with `follow`.
pub fn read_capped(path: &Path, cap: usize) -> Result<Option<Vec<u8>>> {
    read_regular(path, cap as u64, true)
}

/// Reads a file a person named on the command line (`replay FILE`): links are followed and a
/// FIFO is read (`replay <(…)`), up to `cap` bytes.
pub fn read_named(path: &Path, cap: u64) -> Result<Option<Vec<u8>>> {
    let f = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io("read", path, e)),
    };
    read_up_to(f, path, cap, 0).map(Some)
}
