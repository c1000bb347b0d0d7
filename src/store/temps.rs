//! Temp files of atomic writes that never reached their rename (a killed process): named
//! `.<name>.tmp-<uuid>` beside the file (seed 000: `temp/.write-<uuid>`), removed once they are
//! [`STALE_TEMP_AGE`] old, by the next replace of the same file and by SessionStart.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crate::error::Result;
use crate::store::{fs, Store};

impl Store {
    /// Removes files in `dir` whose names start with `prefix` and that were last modified more
    /// than `max_age` ago (by the real file time): temp files of abandoned atomic writes.
    pub fn clean_stale_temps(
        &self,
        dir: &Path,
        prefix: &str,
        max_age: Duration,
    ) -> Result<Vec<PathBuf>> {
        let stale = self.stale_temps(dir, prefix, max_age)?;
        for path in &stale {
            self.remove(path)?;
        }
        Ok(stale)
    }

    /// Removes the abandoned temp files of [`Store::replace`] writes to `state_file` (beside
    /// it, older than [`STALE_TEMP_AGE`]).
    pub fn clean_stale_temps_of(&self, state_file: &Path) -> Result<Vec<PathBuf>> {
        let dir = state_file.parent().unwrap_or(Path::new("."));
        self.clean_stale_temps(dir, &temp_prefix(state_file), STALE_TEMP_AGE)
    }

    /// The files [`Store::clean_stale_temps_of`] would remove, without removing them.
    pub fn stale_temps_of(&self, state_file: &Path) -> Result<Vec<PathBuf>> {
        let dir = state_file.parent().unwrap_or(Path::new("."));
        self.stale_temps(dir, &temp_prefix(state_file), STALE_TEMP_AGE)
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
                    .and_then(|m| now.duration_since(m).ok())
                    .is_some_and(|age| age > max_age)
            })
            .collect())
    }
}

/// Temp files older than this are abandoned writes (a write holds its temp file for
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
