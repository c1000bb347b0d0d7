//! Everything one invocation knows about its surroundings: the environment snapshot, the home
//! folder, how to resolve a project ([`Ctx::project`], per payload, only when something needs
//! it) and the [`Store`].

use std::cell::RefCell;
use std::path::{Path, PathBuf};

use crate::env::{self, Env};
use crate::error::{Error, Result};
use crate::project::{self, Project};
use crate::store::{fs, lock, Clock, Store};

/// The context every command and handler receives.
#[derive(Debug)]
pub struct Ctx {
    pub env: Env,
    /// `--home`, else `HOME`.
    pub home: PathBuf,
    /// `--project-dir`, else `TASKHOOK_PROJECT_DIR`.
    project_override: Option<PathBuf>,
    /// Which of the two named it (for messages).
    project_override_from: &'static str,
    /// The process's working folder.
    process_cwd: PathBuf,
    pub store: Store,
    /// The hook payload being handled, set per payload by the engine; empty for commands.
    payload: RefCell<PayloadInfo>,
}

/// What identifies the hook payload being handled: its session (a layout that keys state by
/// session, such as claude-tasks' mirror and its signals, reads it here).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PayloadInfo {
    pub session_id: Option<String>,
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
        let project_override_from = if project_flag.is_some() {
            "--project-dir"
        } else {
            env::TASKHOOK_PROJECT_DIR
        };
        let project_override = project_flag
            .or_else(|| env.get_os(env::TASKHOOK_PROJECT_DIR).map(PathBuf::from))
            .map(|p| absolute(&process_cwd, &p));
        let store = Store::configured(clock, timeout, dry_run);
        let cx = Ctx {
            home: absolute(&process_cwd, &home),
            env,
            project_override,
            project_override_from,
            process_cwd,
            store,
            payload: RefCell::default(),
        };
        // Claude Code's folder is the user's own: a linked folder there is a dotfiles setup.
        cx.store.trust(&cx.claude_config_dir(), true);
        // What the environment names is the user's choice too: the capture file, and a cdd
        // workspace (a relative CDD_DIR is the project's, trusted where it is located; one named
        // by the repository's own `.claude/taskhook.json` must lie inside the project). No link
        // below them is followed.
        for var in [env::CDD_DIR, env::TASKHOOK_CAPTURE] {
            if let Some(p) = cx.env.get_os(var) {
                if var == env::TASKHOOK_CAPTURE || Path::new(p).is_absolute() {
                    cx.store
                        .trust(&absolute(&cx.process_cwd, Path::new(p)), false);
                }
            }
        }
        Ok(cx)
    }

    /// Records the payload being handled (the engine does, for each payload).
    pub fn set_payload(&self, info: PayloadInfo) {
        *self.payload.borrow_mut() = info;
    }

    /// The payload being handled (empty for commands).
    pub fn payload(&self) -> PayloadInfo {
        self.payload.borrow().clone()
    }

    /// The project a payload (or, without a `cwd`, a command) is about (CONTRACT §1):
    /// `--project-dir`, `TASKHOOK_PROJECT_DIR`, the payload's `cwd` walked up to the nearest
    /// folder holding `.claude/` or `.git` (never the home folder; a linked worktree resolves
    /// to its main worktree), `CLAUDE_PROJECT_DIR`, else the process's folder walked up the
    /// same way. Resolved afresh on every call: each payload of a replay has its own. Its folder
    /// is trusted for writes, never through a link below it (see [`crate::store::guard`]).
    pub fn project(&self, payload_cwd: Option<&str>) -> Project {
        let root = self.project_root(payload_cwd);
        self.store.trust(&root, false);
        Project::new(root, self.home.clone())
    }

    fn project_root(&self, payload_cwd: Option<&str>) -> PathBuf {
        if let Some(p) = &self.project_override {
            return p.clone();
        }
        if let Some(cwd) = payload_cwd.filter(|c| !c.is_empty()) {
            let cwd = absolute(&self.process_cwd, Path::new(cwd));
            if let Some(found) = project::walk_up(&self.store, &cwd, &self.home) {
                return found;
            }
        }
        if let Some(p) = self.env.get_os(env::CLAUDE_PROJECT_DIR) {
            return absolute(&self.process_cwd, Path::new(p));
        }
        project::walk_up(&self.store, &self.process_cwd, &self.home)
            .unwrap_or_else(|| self.process_cwd.clone())
    }

    /// A project folder named by `--project-dir` or `TASKHOOK_PROJECT_DIR` must be a folder
    /// that exists: a mistyped one is a usage error, never a new folder.
    pub fn check_project_override(&self) -> Result<()> {
        match &self.project_override {
            Some(p) if !fs::is_dir(p) => Err(Error::Usage(format!(
                "{} `{}` does not exist or is not a folder; name the project's folder (taskhook \
                 creates no project folder)",
                self.project_override_from,
                p.display()
            ))),
            _ => Ok(()),
        }
    }

    /// Whether `root` as a project would be the home folder: the folder itself, or one whose
    /// `.claude/` is Claude Code's user folder (`CLAUDE_CONFIG_DIR`). Its `.claude/` holds the
    /// user's settings and Claude Code's own `projects/`, never a project's stores.
    pub fn is_home(&self, root: &Path) -> bool {
        fs::real(root) == fs::real(&self.home)
            || fs::real(&root.join(".claude")) == fs::real(&self.claude_config_dir())
    }

    /// The project of a command that creates or changes a project's stores: refused, with what
    /// to do, when it is the home folder (see [`Ctx::is_home`]).
    pub fn project_for_writes(&self) -> Result<Project> {
        let project = self.project(None);
        if self.is_home(&project.root) {
            return Err(Error::Rule(format!(
                "the project folder `{}` is your home folder, not a project: taskhook will not \
                 put stores in `{}` beside Claude Code's own files; `cd` into a project (a \
                 folder with .git or .claude/) and run it there, or name one with --project-dir",
                project.root.display(),
                project.claude_dir().display()
            )));
        }
        Ok(project)
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
