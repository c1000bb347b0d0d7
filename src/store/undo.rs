//! A locked operation is a transaction: what it wrote is recorded, and when it fails, undone
//! (newest first) while the lock is still held, so an exit 1 leaves every file as it was.
//!
//! - an append is cut back to the file's old length (or the file removed, if it created it);
//! - a replace puts the old bytes back atomically (or removes a file it created); the old file
//!   of a replace that did not read it ([`Store::replace_filled_kept`]) is kept under a second
//!   name until the operation ends, and renamed back;
//! - a move is moved back.
//!
//! Undo is best effort: when the disk refuses even that, what stays is what a crash at that
//! point would leave, which the layouts already recover from (progress.md is the authority for
//! `iterative`). Removals (stale temp files, pruned checkpoints) are not undone. Dry runs
//! record nothing.

use std::path::PathBuf;

use crate::error::Result;
use crate::store::Bytes;
use crate::store::{fs, temp_prefix, Store};

/// One write to undo.
#[derive(Debug)]
pub enum Undo {
    Appended {
        path: PathBuf,
        done: fs::Appended,
    },
    Replaced {
        path: PathBuf,
        /// The bytes before, or `None` when the replace created the file.
        old: Option<Bytes>,
    },
    Renamed {
        from: PathBuf,
        to: PathBuf,
    },
    /// A replace whose old file is kept as `link` (a hard link made before the rename): renamed
    /// back to undo it, removed once the operation ends.
    Kept {
        path: PathBuf,
        link: PathBuf,
    },
}

impl Undo {
    /// What a write that stays leaves behind: the old file kept for its undo goes.
    pub(super) fn settle(self) {
        if let Undo::Kept { link, .. } = self {
            let _ = fs::remove_file(&link);
        }
    }
}

impl Store {
    /// Records a write, to undo, when a transaction is open (inside [`Store::with_lock`]).
    pub(super) fn record(&self, undo: Undo) {
        if self.depth() > 0 {
            self.undo_log.borrow_mut().push(undo);
        }
    }

    /// Runs `f`, whose writes outlive a failure of the enclosing locked operation: the record of
    /// a refusal (the ERROR entry a layout logs when a write's schema refuses it, CONTRACT §3)
    /// must stay when the refused operation is undone.
    pub fn keep_through_failure<R>(&self, f: impl FnOnce() -> Result<R>) -> Result<R> {
        let mark = self.undo_log.borrow().len();
        let out = f();
        let kept: Vec<Undo> = self.undo_log.borrow_mut().drain(mark..).collect();
        kept.into_iter().for_each(Undo::settle);
        out
    }

    fn depth(&self) -> usize {
        self.depth.get()
    }

    /// Runs `f`; when it fails, undoes the writes it made and forgets that they changed.
    pub(super) fn transaction<R>(&self, f: impl FnOnce() -> Result<R>) -> Result<R> {
        let start = self.undo_log.borrow().len();
        let marked = self.changed.borrow().len();
        self.depth.set(self.depth() + 1);
        let mut out = f();
        self.depth.set(self.depth() - 1);
        let undo: Vec<Undo> = self.undo_log.borrow_mut().drain(start..).collect();
        if out.is_ok() && self.depth() == 0 {
            // The event this run applies is claimed while the lock is still held (claim.rs).
            if let Err(e) = self.claim_commit() {
                out = Err(e);
            }
            if out.is_ok() {
                undo.into_iter().for_each(Undo::settle);
                return out;
            }
        }
        if out.is_err() {
            for u in undo.into_iter().rev() {
                undo_one(u);
            }
            self.changed.borrow_mut().truncate(marked);
            self.claim_undone(start);
        } else if self.depth() > 0 {
            // An inner transaction that succeeded is still undone if the outer one fails.
            self.undo_log.borrow_mut().extend(undo);
        }
        out
    }
}

fn undo_one(u: Undo) {
    let _ = match u {
        Undo::Appended { path, done } if done.created => fs::remove_file(&path),
        Undo::Appended { path, done } => fs::truncate(&path, done.old_len),
        Undo::Replaced { path, old: None } => fs::remove_file(&path),
        Undo::Replaced {
            path,
            old: Some(bytes),
        } => {
            let dir = path.parent().map(PathBuf::from).unwrap_or_default();
            let name = format!("{}{}", temp_prefix(&path), uuid::Uuid::new_v4());
            fs::write_atomic(&path, &bytes, &dir, &name)
        }
        Undo::Renamed { from, to } => fs::rename_durable(&to, &from),
        Undo::Kept { path, link } => fs::rename_durable(&link, &path),
    };
}
