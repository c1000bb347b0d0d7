//! The checkpoint ring: numbered snapshots `<prefix><n><suffix>` in one folder, zero-padded
//! (`checkpoint-001.json`) so lexicographic order is age order; the newest `keep` are kept.
//!
//! Numbers grow monotonically from 1. Ordering uses the parsed number, so it stays right past
//! the padding width. A new checkpoint is written before the oldest is pruned, and pruning never
//! removes the newest checkpoint, so a crash leaves extra snapshots, never none.

use std::path::{Path, PathBuf};

use crate::error::Result;
use crate::store::Store;

/// Where and how a layout keeps its checkpoints.
#[derive(Debug, Clone)]
pub struct Ring {
    pub dir: PathBuf,
    pub prefix: &'static str,
    pub suffix: &'static str,
    pub width: usize,
    pub keep: usize,
}

/// One checkpoint file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checkpoint {
    pub number: u64,
    pub path: PathBuf,
}

impl Ring {
    /// Seed 000's ring: `checkpoints/checkpoint-NNN.json`, last 10 kept.
    pub fn seed000(dir: impl Into<PathBuf>) -> Self {
        Ring {
            dir: dir.into(),
            prefix: "checkpoint-",
            suffix: ".json",
            width: 3,
            keep: 10,
        }
    }

    fn number_of(&self, name: &str) -> Option<u64> {
        let digits = name.strip_prefix(self.prefix)?.strip_suffix(self.suffix)?;
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        digits.parse().ok()
    }

    /// Lists the checkpoints, oldest first.
    pub fn list(&self, store: &Store) -> Result<Vec<Checkpoint>> {
        let mut out: Vec<Checkpoint> = store
            .list_dir(&self.dir)?
            .into_iter()
            .filter(|e| !e.is_dir)
            .filter_map(|e| {
                self.number_of(&e.name).map(|n| Checkpoint {
                    number: n,
                    path: self.dir.join(&e.name),
                })
            })
            .collect();
        out.sort_by_key(|c| c.number);
        Ok(out)
    }

    /// Returns the path checkpoint `n` has.
    pub fn path_of(&self, n: u64) -> PathBuf {
        self.dir.join(format!(
            "{}{:0width$}{}",
            self.prefix,
            n,
            self.suffix,
            width = self.width
        ))
    }

    /// Writes `bytes` as the next checkpoint, then prunes the oldest beyond `keep`.
    pub fn write(&self, store: &Store, bytes: &[u8]) -> Result<Checkpoint> {
        self.write_filled(store, &mut |w| w.write_all(bytes))
    }

    /// [`Ring::write`] with the content written by `fill` (a large file never held whole).
    pub fn write_filled(
        &self,
        store: &Store,
        fill: &mut dyn FnMut(&mut dyn std::io::Write) -> std::io::Result<()>,
    ) -> Result<Checkpoint> {
        let existing = self.list(store)?;
        let n = existing.last().map_or(1, |c| c.number + 1);
        let path = self.path_of(n);
        store.create_dir_all(&self.dir)?;
        let prefix = crate::store::temp_prefix(&path);
        store.replace_filled(&path, &self.dir, &prefix, None, fill, &mut || Ok(()))?;
        let total = existing.len() + 1;
        if total > self.keep {
            for old in existing.iter().take(total - self.keep.max(1)) {
                store.remove(&old.path)?;
            }
        }
        Ok(Checkpoint { number: n, path })
    }

    /// Returns the newest checkpoint whose bytes `is_valid` accepts, with its bytes; a corrupt
    /// newest checkpoint falls back to the one before it.
    pub fn newest_valid(
        &self,
        store: &Store,
        is_valid: impl Fn(&[u8]) -> bool,
    ) -> Result<Option<(Checkpoint, Vec<u8>)>> {
        for cp in self.list(store)?.into_iter().rev() {
            if let Some(bytes) = store.read(&cp.path)? {
                if is_valid(&bytes) {
                    return Ok(Some((cp, bytes)));
                }
            }
        }
        Ok(None)
    }

    /// Returns the folder the ring lives in.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}
