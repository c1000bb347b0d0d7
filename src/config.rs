//! `.claude/taskhook.json`: the project's own settings, for the stores taskhook cannot find by
//! convention alone (CONTRACT §3). Read at most once per [`crate::project::Project`], and only
//! when a layout asks for it (never on the hot path).
//!
//! ```json
//! {
//!   "execute": ["work/plan/execute-state.json"],
//!   "cdd_dir": "work/cdd"
//! }
//! ```
//!
//! Unknown keys are ignored; a key of the wrong type, or a file that is not JSON, is an error
//! naming the file (the layouts that need it report it; the others keep working).

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::error::{Error, Result};
use crate::store::Store;

/// The project's settings.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct Config {
    /// `execute-state.json` paths (seed 001), relative to the project folder, besides
    /// `docs/tasks/*/execute-state.json`.
    pub execute: Vec<String>,
    /// The cdd workspace (seed 004) when `CDD_DIR` is not set, relative to the project folder.
    pub cdd_dir: Option<String>,
    /// How long a claim on a unit lasts without its owner's activity, in minutes (default 30).
    pub lease_minutes: Option<u64>,
    /// Team sync over git (`taskhook sync init`): present means on.
    pub sync: Option<SyncConfig>,
}

/// `"sync": {"remote": "origin", "timeout_seconds": 10, "compact_every": 200}`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct SyncConfig {
    /// The git remote whose `refs/taskhook/ops` holds the op log.
    pub remote: String,
    /// The longest a verb waits for the remote (fetch and push together), in seconds.
    pub timeout_seconds: u64,
    /// A snapshot of a store is published once the log has grown by this many ops since it.
    pub compact_every: u64,
}

impl Default for SyncConfig {
    fn default() -> Self {
        SyncConfig {
            remote: "origin".into(),
            timeout_seconds: 10,
            compact_every: 200,
        }
    }
}

/// Where the settings live in a project.
pub fn path(project_root: &Path) -> PathBuf {
    project_root.join(".claude").join("taskhook.json")
}

/// Reads the settings of the project at `project_root`; a missing file is the default.
pub fn load(store: &Store, project_root: &Path) -> Result<Config> {
    let path = path(project_root);
    let Some(bytes) = store.read(&path)? else {
        return Ok(Config::default());
    };
    serde_json::from_slice(&bytes).map_err(|e| {
        Error::BadInput(format!(
            "`{}` is not valid taskhook settings: {e} (expected {{\"execute\": [paths], \"cdd_dir\": \"folder\"}})",
            path.display()
        ))
    })
}

/// Largest settings file read for an edit.
const MAX_EDIT_BYTES: usize = 1024 * 1024;

/// Edits the settings as JSON under their lock, on a fresh read (other keys kept; written
/// 2-space pretty, only when `f` changed something): the one way taskhook writes
/// `.claude/taskhook.json` (an execute run registered, sync turned on, a store made findable).
pub fn edit(
    store: &Store,
    project_root: &Path,
    f: impl FnOnce(&mut serde_json::Map<String, serde_json::Value>),
) -> Result<()> {
    use serde_json::Value;
    let path = path(project_root);
    if let Some(dir) = path.parent() {
        store.create_dir_all(dir)?;
    }
    store.with_lock(&crate::store::lock_path_for(&path), || {
        let mut m = match store.read_capped(&path, MAX_EDIT_BYTES)? {
            Some(bytes) => match serde_json::from_slice::<Value>(&bytes) {
                Ok(Value::Object(m)) => m,
                Ok(_) => {
                    return Err(Error::BadInput(format!(
                        "`{}` is not a JSON object; fix it first (taskhook doctor)",
                        path.display()
                    )))
                }
                Err(e) => {
                    return Err(Error::BadInput(format!(
                        "`{}` is not valid JSON: {e}",
                        path.display()
                    )))
                }
            },
            None => serde_json::Map::new(),
        };
        let before = m.clone();
        f(&mut m);
        if m != before {
            store.replace(&path, &crate::store::to_pretty(&Value::Object(m)))?;
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_parse_tolerantly_but_not_loosely() {
        let c: Config =
            serde_json::from_str(r#"{"execute": ["a/execute-state.json"], "other": 1}"#).unwrap();
        assert_eq!(c.execute, ["a/execute-state.json"]);
        assert_eq!(c.cdd_dir, None);
        assert!(serde_json::from_str::<Config>(r#"{"cdd_dir": 5}"#).is_err());
    }
}
