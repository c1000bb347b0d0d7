//! Temp files of atomic writes that never reached their rename (a killed process): named
//! `.<name>.tmp-<uuid>` beside the file (seed 000: `temp/.write-<uuid>`), removed by the next
//! replace of the same file and by SessionStart.
//!
//! A writer holds its temp file's lock from its creation to its rename, so a temp file no
//! live process holds is abandoned: taskhook's own (`.<name>.tmp-`) go at once
//! ([`OWN_TEMP_AGE`]); a name a seed's own skill also writes (`temp/.write-`) waits until it is
//! [`STALE_TEMP_AGE`] old as well, since that writer takes no lock. Where locks cannot tell
//! (not Unix), the age alone decides.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crate::error::Result;
use crate::store::{fs, Store};

impl Store {
    /// Removes files in `dir` whose names start with `prefix`, that no live process holds
    /// (their lock is free) and that were last modified at least `max_age` ago (by the real
    /// file time): temp files of abandoned atomic writes. Returns those removed.
    pub fn clean_stale_temps(
        &self,
        dir: &Path,
        prefix: &str,
        max_age: Duration,
    ) -> Result<Vec<PathBuf>> {
        let stale = self.stale_temps(dir, prefix, max_age)?;
        if self.is_dry_run() {
            for path in &stale {
                self.remove(path)?;
            }
            return Ok(stale);
        }
        let mut removed = Vec::new();
        for path in stale {
            self.check_write("remove", &path, false)?;
            if fs::remove_if_unused(&path)? {
                self.mark(&path);
                removed.push(path);
            }
        }
        Ok(removed)
    }

    /// Removes the abandoned temp files of [`Store::replace`] writes to `state_file` (beside
    /// it; see [`OWN_TEMP_AGE`]).
    pub fn clean_stale_temps_of(&self, state_file: &Path) -> Result<Vec<PathBuf>> {
        let dir = state_file.parent().unwrap_or(Path::new("."));
        self.clean_stale_temps(dir, &temp_prefix(state_file), OWN_TEMP_AGE)
    }

    /// The files [`Store::clean_stale_temps_of`] would remove, without removing them.
    pub fn stale_temps_of(&self, state_file: &Path) -> Result<Vec<PathBuf>> {
        let dir = state_file.parent().unwrap_or(Path::new("."));
        self.stale_temps(dir, &temp_prefix(state_file), OWN_TEMP_AGE)
    }

    /// The files [`Store::clean_stale_temps`] would remove, without removing them.
    pub fn stale_temps(&self, dir: &Path, prefix: &str, max_age: Duration) -> Result<Vec<PathBuf>> {
        let now = SystemTime::now();
        // A link or special file with a temp file's name is not ours: `fs::modified` has no
        // time for it, so it stays.
        Ok(self
            .list_dir(dir)?
            .into_iter()
            .filter(|e| !e.is_dir && e.name.starts_with(prefix))
            .map(|e| dir.join(&e.name))
            .filter(|path| {
                fs::modified(path)
                    .map(|m| now.duration_since(m).unwrap_or(Duration::ZERO))
                    .is_some_and(|age| age >= max_age)
            })
            .filter(|path| !fs::temp_in_use(path))
            .collect())
    }
}

/// A temp file of a name only taskhook writes is abandoned as soon as no process holds it; it
/// need not be old too (where locks cannot tell, not on Unix: [`STALE_TEMP_AGE`]).
pub const OWN_TEMP_AGE: Duration = if cfg!(unix) {
    Duration::ZERO
} else {
    STALE_TEMP_AGE
};

/// A temp file another writer may also make (seed 000's `temp/.write-`, whose skill takes no
/// lock) is abandoned only once it is this old as well (a write holds its temp file for
/// milliseconds; seed 000 says five minutes).
pub const STALE_TEMP_AGE: Duration = Duration::from_secs(300);

/// The name prefix of [`Store::replace`]'s temp files for `path`: `.<name>.tmp-`.
pub fn temp_prefix(path: &Path) -> String {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    format!(".{name}.tmp-")
}
