//! The project one payload or command is about (CONTRACT §1), resolved per payload and passed
//! down as a value: a replay of payloads from two projects touches each project's own stores.
//!
//! The folder is `--project-dir`, else `TASKHOOK_PROJECT_DIR`, else the payload's `cwd` walked
//! up to the nearest folder holding `.claude/` or `.git` (never the home folder, whose `.claude/`
//! is user configuration), else `CLAUDE_PROJECT_DIR`, else the process's folder walked up the
//! same way. A folder inside a linked git worktree (its `.git` is a file pointing into another
//! repository's `.git/worktrees/`) resolves to the main worktree, so a subagent working in
//! `.worktrees/L2-003` sees the same stores as the main agent.

use std::cell::OnceCell;
use std::path::{Component, Path, PathBuf};

use crate::config::{self, Config};
use crate::error::{Error, Result};
use crate::store::{fs, Store};

/// Largest `.git` file read when looking for a linked worktree's main repository.
const GIT_FILE_CAP: usize = 4096;

/// One resolved project.
#[derive(Debug)]
pub struct Project {
    /// The project folder (where its `.claude/` lives).
    pub root: PathBuf,
    /// The home folder (never a project, never a git root).
    home: PathBuf,
    /// The nearest folder at or above `root` holding `.git`, found on first use.
    git_root: OnceCell<Option<PathBuf>>,
    config: OnceCell<std::result::Result<Config, String>>,
}

impl Project {
    /// A project at `root` (`home` is never its git root).
    pub fn new(root: PathBuf, home: PathBuf) -> Self {
        Project {
            root,
            home,
            git_root: OnceCell::new(),
            config: OnceCell::new(),
        }
    }

    /// The nearest folder at or above the project holding `.git` (never the home folder; a
    /// linked worktree's main worktree), looked up on first use: most events never need it.
    pub fn git_root(&self, store: &Store) -> Option<&Path> {
        self.git_root
            .get_or_init(|| git_root(store, &self.root, &self.home))
            .as_deref()
    }

    /// The project's `.claude/taskhook.json`, read once.
    pub fn config(&self, store: &Store) -> Result<&Config> {
        self.config
            .get_or_init(|| config::load(store, &self.root).map_err(|e| e.one_line()))
            .as_ref()
            .map_err(|e| Error::BadInput(e.clone()))
    }

    /// The project's `.claude/` folder.
    pub fn claude_dir(&self) -> PathBuf {
        self.root.join(".claude")
    }
}

/// Walks up from `start` to the nearest folder holding `.claude/` or `.git`, never stopping at
/// `home`; a linked worktree resolves to its main worktree.
pub fn walk_up(store: &Store, start: &Path, home: &Path) -> Option<PathBuf> {
    start
        .ancestors()
        .filter(|dir| *dir != home)
        .find(|dir| fs::is_dir(&dir.join(".claude")) || fs::exists(&dir.join(".git")))
        .map(|dir| main_worktree(store, dir).unwrap_or_else(|| dir.to_path_buf()))
}

/// The nearest folder at or above `root` holding `.git` (never `home`), as its main worktree.
pub fn git_root(store: &Store, root: &Path, home: &Path) -> Option<PathBuf> {
    root.ancestors()
        .filter(|dir| *dir != home)
        .find(|dir| fs::exists(&dir.join(".git")))
        .map(|dir| main_worktree(store, dir).unwrap_or_else(|| dir.to_path_buf()))
}

/// When `dir/.git` is a file `gitdir: <repo>/.git/worktrees/<name>`, the main worktree `<repo>`.
pub fn main_worktree(store: &Store, dir: &Path) -> Option<PathBuf> {
    let git = dir.join(".git");
    if !fs::is_file(&git) {
        return None;
    }
    let bytes = store.read_capped(&git, GIT_FILE_CAP).ok()??;
    let text = String::from_utf8(bytes).ok()?;
    let target = text.lines().find_map(|l| l.strip_prefix("gitdir:"))?.trim();
    let target = dir.join(target);
    let comps: Vec<Component<'_>> = target.components().collect();
    let at = comps
        .windows(2)
        .rposition(|w| w[0].as_os_str() == ".git" && w[1].as_os_str() == "worktrees")?;
    let main: PathBuf = comps[..at].iter().collect();
    fs::is_dir(&main.join(".git")).then_some(main)
}
