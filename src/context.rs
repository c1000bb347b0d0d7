//! Everything one invocation knows about its surroundings: the environment snapshot, the home
//! folder, the project folder (resolved lazily, only when a layout needs it) and the [`Store`].

use std::cell::OnceCell;
use std::path::{Path, PathBuf};

use crate::env::{self, Env};
use crate::error::Result;
use crate::store::{fs, lock, Clock, Store};

/// The context every command and handler receives.
#[derive(Debug)]
pub struct Ctx {
    pub env: Env,
    /// `--home`, else `HOME`.
    pub home: PathBuf,
    /// `--project-dir`, else `TASKHOOK_PROJECT_DIR`.
    project_override: Option<PathBuf>,
    /// The process's working folder.
    process_cwd: PathBuf,
    project: OnceCell<PathBuf>,
    pub store: Store,
}

impl Ctx {
    /// Builds the context from the CLI's global flags and the environment.
    pub fn new(
        env: Env,
        project_flag: Option<PathBuf>,
        home_flag: Option<PathBuf>,
        process_cwd: PathBuf,
        dry_run: bool,
    ) -> Result<Self> {
        let clock = Clock::from_env(&env);
        let timeout = lock::timeout_from_env(&env);
        let home = home_flag
            .or_else(|| env.get_os(env::HOME).map(PathBuf::from))
            .unwrap_or_else(|| PathBuf::from("/"));
        let project_override = project_flag
            .or_else(|| env.get_os(env::TASKHOOK_PROJECT_DIR).map(PathBuf::from))
            .map(|p| absolute(&process_cwd, &p));
        let store = Store::configured(clock, timeout, dry_run);
        let cx = Ctx {
            home: absolute(&process_cwd, &home),
            env,
            project_override,
            process_cwd,
            project: OnceCell::new(),
            store,
        };
        // Claude Code's folder is the user's own: a linked folder there is a dotfiles setup.
        cx.store.trust(&cx.claude_config_dir(), true);
        Ok(cx)
    }

    /// The project folder (CONTRACT §1): `--project-dir`, `TASKHOOK_PROJECT_DIR`, the payload's
    /// `cwd` walked up to the nearest folder holding `.claude/` or `.git` (never the home
    /// folder), `CLAUDE_PROJECT_DIR`, else the process's folder (walked up the same way).
    /// Resolved once per context, and trusted for writes (never through a link below it).
    pub fn project_dir(&self, payload_cwd: Option<&str>) -> &Path {
        let dir = self.project.get_or_init(|| {
            if let Some(p) = &self.project_override {
                return p.clone();
            }
            if let Some(cwd) = payload_cwd.filter(|c| !c.is_empty()) {
                let cwd = absolute(&self.process_cwd, Path::new(cwd));
                if let Some(found) = self.walk_up(&cwd) {
                    return found;
                }
            }
            if let Some(p) = self.env.get_os(env::CLAUDE_PROJECT_DIR) {
                return absolute(&self.process_cwd, Path::new(p));
            }
            self.walk_up(&self.process_cwd)
                .unwrap_or_else(|| self.process_cwd.clone())
        });
        self.store.trust(dir, false);
        dir
    }

    fn walk_up(&self, start: &Path) -> Option<PathBuf> {
        start
            .ancestors()
            .filter(|dir| *dir != self.home)
            .find(|dir| fs::is_dir(&dir.join(".claude")) || fs::exists(&dir.join(".git")))
            .map(Path::to_path_buf)
    }

    /// Claude Code's user folder: `CLAUDE_CONFIG_DIR`, else `<home>/.claude`.
    pub fn claude_config_dir(&self) -> PathBuf {
        match self.env.get_os(env::CLAUDE_CONFIG_DIR) {
            Some(p) => absolute(&self.process_cwd, Path::new(p)),
            None => self.home.join(".claude"),
        }
    }

    /// Joins a relative path onto the process's folder.
    pub fn absolute(&self, p: &Path) -> PathBuf {
        absolute(&self.process_cwd, p)
    }
}

fn absolute(base: &Path, p: &Path) -> PathBuf {
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        base.join(p)
    }
}
