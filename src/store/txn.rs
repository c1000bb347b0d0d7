//! The one read → decide → lock → re-read → write transaction every layout uses.
//!
//! A change is first decided on an unlocked read ([`Pass::Peek`]): when it changes nothing,
//! that answer stands and no lock is taken, no lock file created, nothing opened for writing
//! (the hot path). Otherwise the sidecar lock is taken and the same decision runs again on a
//! fresh read ([`Pass::Commit`]), which is the pass allowed to write: another process may have
//! changed the state in between (jj's `resolve_op_heads` re-reads under its lock the same way).

use std::path::Path;

use crate::error::{Error, Result};
use crate::store::Store;

/// Which pass of a transaction is running.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pass {
    /// Unlocked: decide only, never write.
    Peek,
    /// Under the lock, on a fresh read: decide and write.
    Commit,
}

impl Pass {
    /// Whether this pass may write.
    pub fn writes(self) -> bool {
        self == Pass::Commit
    }
}

impl Store {
    /// Runs `pass` unlocked; when it returns `(value, false)` (nothing to write), returns
    /// `value`. Otherwise runs it again under the lock `lock`, where it writes, and returns that
    /// pass's value.
    ///
    /// A peek that fails with [`Error::Corrupt`] is final (only `taskhook recover` changes a
    /// corrupt file), and so is any peek failure before the store was ever locked (no lock file
    /// yet: a refused first write creates nothing, not even the folder or the lock file). Other
    /// peek failures are decided again under the lock, on a fresh read.
    pub fn transact<T>(
        &self,
        lock: &Path,
        mut pass: impl FnMut(Pass) -> Result<(T, bool)>,
    ) -> Result<T> {
        match pass(Pass::Peek) {
            Ok((value, false)) => return Ok(value),
            Ok((_, true)) => {}
            Err(e @ Error::Corrupt { .. }) => return Err(e),
            Err(e) if !self.exists(lock) => return Err(e),
            Err(_) => {}
        }
        self.with_lock(lock, || pass(Pass::Commit).map(|(value, _)| value))
    }

    /// [`Store::transact`] for a decision that is a function of what it read (and the time):
    /// `decide` reads and decides; a decision that `changes` something is made again under the
    /// lock, where `decide` is handed the peek's own decision to take over when the state still
    /// holds what the peek read (its to check), or to drop and decide afresh. `finish` answers
    /// from the decision, and writes it when its pass [`Pass::writes`]. Failures are treated as
    /// [`Store::transact`] treats them.
    pub fn transact_decided<D, T>(
        &self,
        lock: &Path,
        mut decide: impl FnMut(Option<D>) -> Result<D>,
        changes: impl Fn(&D) -> bool,
        mut finish: impl FnMut(Pass, D) -> Result<T>,
    ) -> Result<T> {
        let handed = match decide(None) {
            Ok(d) if !changes(&d) => return finish(Pass::Peek, d),
            Ok(d) => Some(d),
            Err(e @ Error::Corrupt { .. }) => return Err(e),
            Err(e) if !self.exists(lock) => return Err(e),
            Err(_) => None,
        };
        self.with_lock(lock, || {
            let d = decide(handed)?;
            finish(Pass::Commit, d)
        })
    }
}
