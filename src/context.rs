//! Everything one invocation knows about its surroundings: the environment snapshot, the home
//! folder, how to resolve a project ([`Ctx::project`], per payload, only when something needs
//! it), the [`Store`], and the session it acts for ([`Ctx::session`]: a value set when the
//! context is made, never changed behind a handler's back; the engine makes one context per
//! payload with [`Ctx::for_session`]).

use std::path::{Path, PathBuf};
use std::rc::Rc;

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
    /// The disk, shared by every context of one invocation (a replay's payloads write through
    /// one store, and see each other's dry-run writes).
    pub store: Rc<Store>,
    /// The session this context acts for: the hook payload's `session_id` (never empty);
    /// `None` for a command (which, run by the model in Claude Code's Bash tool, names its
    /// session in `CLAUDE_CODE_SESSION_ID` instead). A layout that keys state by session
    /// (claude-tasks' mirror, its task names and owners) reads it here.
    pub session: Option<String>,
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
            store: Rc::new(store),
            session: None,
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

    /// This context acting for `session` (an empty id counts as none): the engine makes one
    /// per hook payload; everything else, the store included, is shared.
    pub fn for_session(&self, session: Option<&str>) -> Ctx {
        Ctx {
            env: self.env.clone(),
            home: self.home.clone(),
            project_override: self.project_override.clone(),
            project_override_from: self.project_override_from,
            process_cwd: self.process_cwd.clone(),
            store: Rc::clone(&self.store),
            session: session.filter(|s| !s.is_empty()).map(str::to_string),
        }
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

/// For unit tests: a context for the project `proj` (its files trusted), with `tmp/home` as
/// home.
#[cfg(test)]
pub fn testing(tmp: &Path, proj: &Path) -> Ctx {
    let cx = Ctx::new(
        Env::default(),
        None,
        Some(tmp.join("home")),
        proj.to_path_buf(),
        false,
    )
    .unwrap();
    cx.store.trust(proj, false);
    cx
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_payload_context_has_its_session_and_shares_the_store() {
        let cx = Ctx::new(
            Env::default(),
            None,
            Some(PathBuf::from("/nonexistent-home")),
            PathBuf::from("/nonexistent-cwd"),
            true,
        )
        .unwrap();
        assert_eq!(cx.session, None);
        let a = cx.for_session(Some("aaaa"));
        assert_eq!(a.session.as_deref(), Some("aaaa"));
        assert!(Rc::ptr_eq(&a.store, &cx.store));
        assert_eq!(cx.for_session(Some("")).session, None);
        // The parent keeps none: the next payload's context starts from it, not from `a`.
        assert_eq!(cx.session, None);
    }
}
