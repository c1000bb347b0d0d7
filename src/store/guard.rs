//! Where taskhook may write, and Git's rule: nothing is read or written "beyond a symbolic
//! link" inside the project.
//!
//! A cloned repository is untrusted: anything under `.claude/` may be a link planted by its
//! author (`progress.md → ~/.bashrc`, `.claude/iterative → /somewhere`). Whoever resolves a
//! folder taskhook keeps stores in registers it as a trusted base ([`Bases::trust`]): the
//! project (links below it refused) and Claude Code's own folder, `~/.claude`, where a linked
//! folder is a legitimate dotfiles setup (links followed). Then:
//!
//! - a write (append, replace, rename, folder or lock-file creation, removal) must land under
//!   a base; under the project, no component between the base and the file may be a link, and
//!   the file itself may not be one either;
//! - a read of a file or folder that exists under the project is refused the same way (so a
//!   planted link is reported where the store is read: `status`, SessionStart's context).
//!
//! The checks are `lstat`s, like Git's: they stop a planted repository, not a concurrent
//! process that can already write to the project.

use std::cell::RefCell;
use std::path::{Component, Path, PathBuf};

use crate::error::{Error, Result};
use crate::store::fs;

/// One trusted folder.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Base {
    root: PathBuf,
    follow_links: bool,
}

/// The trusted bases of one [`crate::store::Store`].
#[derive(Debug, Default)]
pub struct Bases(RefCell<Vec<Base>>);

impl Bases {
    /// Trusts `root` (a folder, or a single file): writes may land at or below it. With
    /// `follow_links`, links below it are the user's own and followed (`~/.claude`); without,
    /// any link below it is refused. Trusting a folder twice keeps the stricter choice.
    pub fn trust(&self, root: &Path, follow_links: bool) {
        let root: PathBuf = root.components().collect();
        let mut bases = self.0.borrow_mut();
        match bases.iter_mut().find(|b| b.root == root) {
            Some(b) => b.follow_links &= follow_links,
            None => bases.push(Base { root, follow_links }),
        }
    }

    /// The innermost base holding `path`.
    fn base_of(&self, path: &Path) -> Option<Base> {
        self.0
            .borrow()
            .iter()
            .filter(|b| path.starts_with(&b.root))
            .max_by_key(|b| b.root.components().count())
            .cloned()
    }

    /// Whether a read of `path` may follow a link in its last component (only below a base
    /// that follows links).
    pub fn follows(&self, path: &Path) -> bool {
        self.base_of(path).is_some_and(|b| b.follow_links)
    }

    /// Checks a path about to be written. `link_ok`: below a base that follows links, the last
    /// component may be a link (a linked folder, or a file renamed over, never written
    /// through); below a base that does not, no component may be one.
    pub fn check_write(&self, op: &'static str, path: &Path, link_ok: bool) -> Result<()> {
        let Some(base) = self.base_of(path) else {
            return Err(Error::refused(
                op,
                path,
                "it is outside the project folder and Claude Code's folder, the only places \
                 taskhook writes",
            ));
        };
        let rest = relative(op, path, &base)?;
        if base.follow_links {
            if !link_ok && is_link(path) {
                return Err(Error::refused(op, path, fs::LINK_REASON));
            }
            return Ok(());
        }
        walk(op, path, &base, &rest)
    }

    /// Checks a file or folder that exists, before what was read from it is used: under a
    /// base that does not follow links, no component below the base may be a link.
    pub fn check_read(&self, path: &Path) -> Result<()> {
        match self.base_of(path) {
            Some(base) if !base.follow_links => {
                let rest = relative("read", path, &base)?;
                walk("read", path, &base, &rest)
            }
            _ => Ok(()),
        }
    }
}

/// `path` below `base`, refusing `..` and other non-name components.
fn relative(op: &'static str, path: &Path, base: &Base) -> Result<Vec<PathBuf>> {
    let rest = path.strip_prefix(&base.root).unwrap_or(path);
    rest.components()
        .map(|c| match c {
            Component::Normal(n) => Ok(PathBuf::from(n)),
            _ => Err(Error::refused(
                op,
                path,
                "it leaves its folder (`..` or an absolute part)",
            )),
        })
        .collect()
}

/// Walks `rest` down from `base`, refusing the first link, the last component included. Stops
/// at the first component that does not exist: nothing below it can.
fn walk(op: &'static str, path: &Path, base: &Base, rest: &[PathBuf]) -> Result<()> {
    let mut cur = base.root.clone();
    for name in rest {
        cur.push(name);
        let Ok(Some(meta)) = fs::lstat(&cur) else {
            return Ok(());
        };
        if meta.file_type().is_symlink() {
            return Err(if cur == path {
                Error::refused(op, path, fs::LINK_REASON)
            } else {
                let to = fs::link_target(&cur)
                    .map(|t| format!(" (to `{}`)", t.display()))
                    .unwrap_or_default();
                Error::refused(
                    op,
                    path,
                    format!(
                        "`{}` is a symbolic link{to}, and taskhook reads and writes nothing \
                         beyond a link inside the project (make it a real folder, or remove it)",
                        cur.display()
                    ),
                )
            });
        }
    }
    Ok(())
}

fn is_link(path: &Path) -> bool {
    matches!(fs::lstat(path), Ok(Some(m)) if m.file_type().is_symlink())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn innermost_base_decides() {
        let b = Bases::default();
        b.trust(Path::new("/p"), false);
        b.trust(Path::new("/p/home/.claude"), true);
        assert!(!b.follows(Path::new("/p/.claude/x")));
        assert!(b.follows(Path::new("/p/home/.claude/tasks/x")));
        assert!(b
            .check_write("write", Path::new("/elsewhere/x"), false)
            .is_err());
        assert!(b
            .check_write("write", Path::new("/p/../etc/x"), false)
            .is_err());
        assert!(b
            .check_write("write", Path::new("/p/new/dir/x"), false)
            .is_ok());
    }
}
