//! The read side of [`Store`]: every read goes through the dry-run overlay, the read caps
//! ([`super::limits`]) and the trusted-folder rule for reads ([`super::guard`]); `load_json`
//! and `load_or_refuse` apply CONTRACT §3's corrupt-file policy.

use std::path::Path;

use serde_json::Value;

use super::{fs, limits, parse_checked, Entry, Loaded, Store};
use crate::error::{Error, Result};

impl Store {
    /// Reads a file, up to its cap ([`limits::cap_for`]); `None` when absent. A link, a FIFO,
    /// a device or a file over the cap is [`Error::Refused`], naming the file.
    pub fn read(&self, path: &Path) -> Result<Option<Vec<u8>>> {
        self.read_capped(path, usize::MAX)
    }

    /// [`Store::read`] with an explicit cap in bytes (the smaller of it and the file's own).
    pub fn read_capped(&self, path: &Path, cap: usize) -> Result<Option<Vec<u8>>> {
        if let Some(v) = self.overlay.borrow().get(path) {
            return Ok(v.clone());
        }
        let cap = (cap as u64).min(limits::cap_for(path));
        let got = fs::read_regular(path, cap, self.bases.follows(path));
        if !matches!(got, Ok(None)) {
            self.bases.check_read(path)?;
        }
        got
    }

    /// [`Store::read_capped`] for a reader that takes the file as a buffered stream (an
    /// append-only log parsed line by line), never holding it whole: `read` is handed it;
    /// `None` when absent. The same caps and refusals as a whole read.
    pub fn read_with<T>(
        &self,
        path: &Path,
        cap: usize,
        read: impl FnOnce(&mut dyn std::io::BufRead) -> std::io::Result<T>,
    ) -> Result<Option<T>> {
        let cap = (cap as u64).min(limits::cap_for(path));
        let held = self.overlay.borrow().get(path).cloned();
        if let Some(v) = held {
            let Some(b) = v else { return Ok(None) };
            if b.len() as u64 > cap {
                return Err(fs::too_large(path, b.len() as u64, cap));
            }
            return read(&mut b.as_slice())
                .map(Some)
                .map_err(|e| Error::io("read", path, e));
        }
        let got = fs::read_with(path, cap, self.bases.follows(path), read);
        if !matches!(got, Ok(None)) {
            self.bases.check_read(path)?;
        }
        got
    }

    /// [`Store::read_with`] for a reader that parses the file as a stream and must know it
    /// again later without holding it (a large state, issue 23): `read` is handed the file
    /// buffered, and every byte of the file is hashed as it passes (what `read` leaves unread
    /// is hashed after it). Returns what `read` made of it and the file's digest
    /// ([`super::parsed::Digest`]); `None` when absent. The same caps and refusals.
    pub fn read_hashed<T>(
        &self,
        path: &Path,
        read: impl FnOnce(Stream<'_>) -> T,
    ) -> Result<Option<(super::parsed::Digest, T)>> {
        self.read_with(path, usize::MAX, |r| {
            let mut h = Hashing {
                inner: r,
                seen: super::parsed::Digester::default(),
            };
            let r: &mut dyn std::io::Read = &mut h;
            let out = read(std::io::BufReader::with_capacity(64 * 1024, r));
            // What the reader took into its buffer was hashed as it was taken; the rest now.
            h.seen.read(h.inner, u64::MAX)?;
            Ok((h.seen.finish(), out))
        })
    }

    /// `path` as the base of a write spliced over it ([`super::base::Base`]): the dry run's
    /// overlay, or the regular file itself, opened as [`Store::read`] opens it (the same caps
    /// and refusals) and read only where the splice needs it; `None` when absent.
    pub fn base_of(&self, path: &Path) -> Result<Option<super::base::Base>> {
        use super::base::{Base, FileBase};
        if let Some(v) = self.overlay.borrow().get(path) {
            return Ok(v.clone().map(|b| Base::Held(super::Bytes::new(b))));
        }
        let got = fs::open_capped(path, limits::cap_for(path), self.bases.follows(path));
        if !matches!(got, Ok(None)) {
            self.bases.check_read(path)?;
        }
        Ok(got?.and_then(|(f, len)| FileBase::new(f, len).map(Base::File)))
    }

    /// A subagent transcript, bounded: the whole lines of its first
    /// [`limits::TRANSCRIPT_HEAD_BYTES`] (the prompt) and last
    /// [`limits::TRANSCRIPT_TAIL_BYTES`] (the final message). `None` when absent.
    pub fn read_transcript(&self, path: &Path) -> Result<Option<String>> {
        self.read_head_tail(
            path,
            limits::TRANSCRIPT_HEAD_BYTES,
            limits::TRANSCRIPT_TAIL_BYTES,
        )
    }

    /// The whole lines in the first `head` and the last `tail` bytes of a file, as text (the
    /// whole file when it fits): a subagent transcript's prompt and final message, without
    /// reading the rest. `None` when absent.
    pub fn read_head_tail(&self, path: &Path, head: u64, tail: u64) -> Result<Option<String>> {
        let got = fs::read_head_tail(path, head, tail, self.bases.follows(path));
        if !matches!(got, Ok(None)) {
            self.bases.check_read(path)?;
        }
        Ok(got?.map(|b| String::from_utf8_lossy(&b).into_owned()))
    }

    /// The length of a regular file; `None` when absent.
    pub fn len(&self, path: &Path) -> Option<u64> {
        if let Some(v) = self.overlay.borrow().get(path) {
            return v.as_ref().map(|b| b.len() as u64);
        }
        fs::len(path)
    }

    /// A file's or folder's modification time, length and inode, without opening it (what the
    /// board polls to see that a store changed); `None` when absent.
    pub fn stamp(&self, path: &Path) -> Option<(std::time::SystemTime, u64, u64)> {
        fs::stamp(path)
    }

    /// Reads at most `cap` bytes of a file from byte `offset` on (an offset past the end reads
    /// nothing); `None` when absent; more is an error. The tail of an append-only log.
    pub fn read_range(&self, path: &Path, offset: u64, cap: usize) -> Result<Option<Vec<u8>>> {
        if let Some(v) = self.overlay.borrow().get(path) {
            let Some(b) = v else { return Ok(None) };
            let from = usize::try_from(offset).unwrap_or(usize::MAX).min(b.len());
            if b.len() - from > cap {
                return Err(fs::too_large(path, (b.len() - from) as u64, cap as u64));
            }
            return Ok(Some(b[from..].to_vec()));
        }
        let cap = (cap as u64).min(limits::cap_for(path));
        let got = fs::read_range(path, offset, cap, self.bases.follows(path));
        if !matches!(got, Ok(None)) {
            self.bases.check_read(path)?;
        }
        got
    }

    /// What the last bytes parsed as `kind` gave ([`super::parsed`]), when `path` still holds
    /// exactly those bytes: compared as the file is read, so a re-read of a large state (a
    /// step's locked re-read after its peek) costs no second copy. `None` when it does not (or
    /// cannot be compared: the caller's own read then says why).
    pub fn still_parsed<T: 'static>(
        &self,
        kind: &'static str,
        path: &Path,
    ) -> Option<(super::Bytes, std::rc::Rc<T>)> {
        let (bytes, value) = super::parsed::latest::<T>(kind)?;
        matches!(self.has_content(path, Some(&bytes)), Ok(true)).then_some((bytes, value))
    }

    /// [`Store::still_parsed`] for bytes known by their digest alone
    /// ([`super::parsed::remember_digest`]: a file this invocation read or wrote as a stream),
    /// for a reader that needs only the value (and the digest): the file is hashed as it is
    /// read, never held.
    pub fn still_written<T: 'static>(
        &self,
        kind: &'static str,
        path: &Path,
    ) -> Option<(super::parsed::Digest, std::rc::Rc<T>)> {
        let (digest, value) = super::parsed::latest_digest::<T>(kind)?;
        self.holds(path, digest).then_some((digest, value))
    }

    /// Whether `path` holds exactly the bytes known by `digest`, hashed as it is read (never
    /// held); `false` when it cannot be read.
    pub fn holds(&self, path: &Path, digest: super::parsed::Digest) -> bool {
        matches!(self.digest_of(path), Ok(Some(d)) if d == digest)
    }

    /// The digest of what `path` holds ([`super::parsed::Digest`]), hashed as it is read,
    /// never held; `None` when there is no file. The same caps and refusals as a whole read.
    pub fn digest_of(&self, path: &Path) -> Result<Option<super::parsed::Digest>> {
        self.read_with(path, usize::MAX, |r| {
            let mut d = super::parsed::Digester::default();
            d.read(r, u64::MAX)?;
            Ok(d.finish())
        })
    }

    /// Whether `path` holds exactly `expected` (`None`: no file), compared as it is read (a
    /// transaction that re-reads under its lock, without a second copy of a large file).
    pub fn has_content(&self, path: &Path, expected: Option<&[u8]>) -> Result<bool> {
        if let Some(v) = self.overlay.borrow().get(path) {
            return Ok(v.as_deref() == expected);
        }
        let same = fs::same_content(path, expected, self.bases.follows(path))?;
        if expected.is_some() {
            self.bases.check_read(path)?;
        }
        Ok(same)
    }

    /// Reads a file as UTF-8 text (invalid sequences replaced); `None` when absent.
    pub fn read_text(&self, path: &Path) -> Result<Option<String>> {
        Ok(self
            .read(path)?
            .map(|b| String::from_utf8_lossy(&b).into_owned()))
    }

    /// Whether a file or folder exists.
    pub fn exists(&self, path: &Path) -> bool {
        if let Some(v) = self.overlay.borrow().get(path) {
            return v.is_some();
        }
        if self.overlay_has_under(path) {
            return true;
        }
        fs::exists(path)
    }

    /// Whether a folder exists.
    pub fn is_dir(&self, path: &Path) -> bool {
        self.overlay_has_under(path) || fs::is_dir(path)
    }

    fn overlay_has_under(&self, dir: &Path) -> bool {
        self.overlay
            .borrow()
            .iter()
            .any(|(p, v)| v.is_some() && p != dir && p.starts_with(dir))
    }

    /// Lists a folder, sorted by name (a missing folder is empty).
    pub fn list_dir(&self, dir: &Path) -> Result<Vec<Entry>> {
        let mut entries = self.list_dir_unordered(dir)?;
        // Names in a folder are unique: the unstable sort gives the one order.
        entries.sort_unstable_by(|a, b| a.name.cmp(&b.name));
        Ok(entries)
    }

    /// [`Store::list_dir`] in no particular order, for a caller that indexes the names itself
    /// (thousands of task files need no sort).
    pub fn list_dir_unordered(&self, dir: &Path) -> Result<Vec<Entry>> {
        let mut entries = fs::list_dir(dir)?;
        if !entries.is_empty() || fs::exists(dir) {
            self.bases.check_read(dir)?;
        }
        let overlay = self.overlay.borrow();
        for (path, content) in overlay.iter() {
            let Ok(rest) = path.strip_prefix(dir) else {
                continue;
            };
            let mut comps = rest.components();
            let Some(first) = comps.next() else { continue };
            let name = first.as_os_str().to_string_lossy().into_owned();
            let deeper = comps.next().is_some();
            let pos = entries.iter().position(|e| e.name == name);
            match (content, deeper, pos) {
                (None, false, Some(i)) => {
                    entries.remove(i);
                }
                (Some(_), _, None) => entries.push(Entry {
                    name,
                    is_dir: deeper,
                }),
                _ => {}
            }
        }
        Ok(entries)
    }

    /// Loads a JSON state file and checks it against `schema`.
    pub fn load_json(&self, path: &Path, schema: &'static str) -> Result<Loaded> {
        let Some(bytes) = self.read(path)? else {
            return Ok(Loaded::Missing);
        };
        Ok(match parse_checked(&bytes, schema)? {
            Ok(value) => Loaded::Valid(value),
            Err(problem) => Loaded::Invalid(problem),
        })
    }

    /// Loads a state file its layout cannot rebuild (CONTRACT §3): `Some` when valid, `None`
    /// when missing, and when it does not parse or fails its schema, [`Error::Corrupt`]
    /// naming the file and the fix; such a file is never overwritten. (A layout with an
    /// authoritative source uses [`Store::load_json`] and [`Store::quarantine`] and rebuilds.)
    pub fn load_or_refuse(
        &self,
        path: &Path,
        schema: &'static str,
        store_root: &Path,
    ) -> Result<Option<Value>> {
        match self.load_json(path, schema)? {
            Loaded::Missing => Ok(None),
            Loaded::Valid(v) => Ok(Some(v)),
            Loaded::Invalid(details) => Err(Error::Corrupt {
                path: path.to_path_buf(),
                store: store_root.display().to_string(),
                details,
            }),
        }
    }
}

/// A file handed to [`Store::read_hashed`]'s reader: buffered, so a byte-at-a-time parser
/// (serde_json's reader) takes it from the buffer.
pub type Stream<'a> = std::io::BufReader<&'a mut dyn std::io::Read>;

/// A reader that hashes what it passes on.
struct Hashing<'a> {
    inner: &'a mut dyn std::io::BufRead,
    seen: super::parsed::Digester,
}

impl std::io::Read for Hashing<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.seen.add(&buf[..n]);
        Ok(n)
    }
}
