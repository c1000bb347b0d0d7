//! One invocation's use of the environment: the clock (`TASKHOOK_NOW`) and the lock wait
//! (`TASKHOOK_LOCK_TIMEOUT`). A bad value fails only what uses it: the clock's a handler that
//! read the clock (checked when the payload is done), the lock wait's the first lock, and
//! either any write (checked before it). An event that touches nothing never sees them.

use std::path::Path;
use std::time::Duration;

use crate::error::{Error, Result};
use crate::store::{lock, Clock, Store};

impl Store {
    /// A store configured from the environment; a bad value is kept as an error for the paths
    /// that use it (see the module docs).
    pub fn configured(clock: Result<Clock>, lock_timeout: Result<Duration>, dry_run: bool) -> Self {
        let mut s = Store::new(
            clock.as_ref().copied().unwrap_or_default(),
            *lock_timeout.as_ref().unwrap_or(&lock::DEFAULT_TIMEOUT),
        );
        s.clock_problem = clock.err().map(|e| e.one_line());
        s.timeout_problem = lock_timeout.err().map(|e| e.one_line());
        s.dry_run = dry_run;
        s
    }

    /// The clock every timestamp comes from.
    pub fn clock(&self) -> &Clock {
        if self.clock_problem.is_some() {
            self.clock_used.set(true);
        }
        &self.clock
    }

    /// Renews a liveness mark: sets the modification time of `path`, a file that must already
    /// exist, to now (one system call; a link is not followed). Not a change of state: it is
    /// not recorded or journaled, and it never fails the event (a bad `TASKHOOK_NOW`, a dry
    /// run or a missing file do nothing). Returns whether the mark was set.
    pub fn touch_existing(&self, path: &Path) -> bool {
        // Only below Claude Code's own folder (the one base that follows links); the call does
        // not follow a link itself, so this needs no lstat.
        if self.dry_run || self.clock_problem.is_some() || !self.bases.follows(path) {
            return false;
        }
        crate::store::fs::set_modified(path, self.clock.now().timestamp()).unwrap_or(false)
    }

    /// The modification time of a regular file (a link is not followed), for liveness marks.
    pub fn modified(&self, path: &Path) -> Option<chrono::DateTime<chrono::Utc>> {
        crate::store::fs::modified(path).map(chrono::DateTime::<chrono::Utc>::from)
    }

    /// Starts one invocation (one payload of a replay): a fresh lock deadline. A store kept
    /// for many operations calls it between them; otherwise their locks share one deadline.
    pub fn begin_invocation(&self) {
        self.lock_window.set(None);
        self.clock_used.set(false);
    }

    /// The bad `TASKHOOK_NOW`, when this invocation read the clock.
    pub fn clock_error(&self) -> Option<Error> {
        self.clock_problem
            .as_ref()
            .filter(|_| self.clock_used.get())
            .map(|p| Error::BadInput(p.clone()))
    }

    /// Fails when the environment gave a bad clock or lock wait.
    pub fn check_env(&self) -> Result<()> {
        match self
            .clock_problem
            .as_ref()
            .or(self.timeout_problem.as_ref())
        {
            Some(p) => Err(Error::BadInput(p.clone())),
            None => Ok(()),
        }
    }
}
