//! Which settings file `install` edits, and how it is read, backed up and replaced.
//!
//! - Scopes: the project's `.claude/settings.json`, its `.claude/settings.local.json`
//!   (`--local`, the file Claude Code keeps out of git) or the user's `settings.json` in the
//!   Claude config folder (`--user`).
//! - A project whose folder is the home folder is refused: its `.claude/settings.json` is the
//!   user-level file, which only `--user` edits.
//! - A symlinked settings file (a dotfiles link) is written *through*: the new content goes to a
//!   temp file in the resolved target's own folder and is renamed over the target, so the link
//!   stays a link. For a project scope the target must resolve inside the project: a cloned
//!   repository may plant `.claude/settings.json -> ~/.claude/settings.json`, and writing
//!   through that would edit files the project does not own. A dangling link is refused.
//! - Reads are bounded: a regular file of at most [`MAX_SETTINGS_BYTES`].
//! - The backup sits beside the settings path as named, is a new file (never replacing one)
//!   and has the original's permission bits.

use std::path::{Path, PathBuf};

use crate::context::Ctx;
use crate::error::{Error, Result};
use crate::store::fs;
pub use crate::store::fs::real;

/// A settings file larger than this is refused rather than read.
pub const MAX_SETTINGS_BYTES: u64 = 4 * 1024 * 1024;

/// Which settings file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    Project,
    Local,
    User,
}

impl Scope {
    /// The flags that select this scope, for messages.
    pub fn flag(self) -> &'static str {
        match self {
            Scope::Project => "",
            Scope::Local => " --local",
            Scope::User => " --user",
        }
    }
}

/// A settings file located and checked.
#[derive(Debug, Clone)]
pub struct Target {
    pub scope: Scope,
    /// The path as the user knows it (`<project>/.claude/settings.json`).
    pub path: PathBuf,
    /// Where the bytes really are (differs when a link is involved).
    pub real: PathBuf,
}

/// The settings file of a scope, refusing the cases above.
pub fn locate(cx: &Ctx, scope: Scope) -> Result<Target> {
    let project = cx.project(None).root;
    let path = match scope {
        Scope::User => cx.claude_config_dir().join("settings.json"),
        Scope::Project => project.join(".claude").join("settings.json"),
        Scope::Local => project.join(".claude").join("settings.local.json"),
    };
    if scope != Scope::User && cx.is_home(&project) {
        return Err(Error::Rule(format!(
            "the project folder `{}` is your home folder, so `{}` is your user-level \
             settings; run `taskhook install --user` to register taskhook for every project, \
             or run `taskhook install` inside a project folder to register it there",
            project.display(),
            path.display()
        )));
    }
    let resolved = if fs::is_symlink(&path) {
        std::fs::canonicalize(&path).map_err(|_| {
            let to = std::fs::read_link(&path).unwrap_or_default();
            Error::BadInput(format!(
                "`{}` is a symbolic link to `{}`, which does not exist; create that file or \
                 remove the link, then run install again",
                path.display(),
                to.display()
            ))
        })?
    } else {
        real(&path)
    };
    if scope != Scope::User {
        let root = real(&project);
        if !resolved.starts_with(&root) {
            return Err(Error::BadInput(format!(
                "`{}` resolves to `{}`, outside the project `{}`; taskhook does not write \
                 through a link that leaves the project (a cloned repository can plant one): \
                 edit that file yourself, or replace the link with a file",
                path.display(),
                resolved.display(),
                root.display()
            )));
        }
    }
    Ok(Target {
        scope,
        path,
        real: resolved,
    })
}

/// Reads the settings file: `None` when absent; refuses anything but a regular file of at most
/// [`MAX_SETTINGS_BYTES`].
pub fn read(t: &Target) -> Result<Option<Vec<u8>>> {
    read_bounded(&t.real, &t.path)
}

/// Reads a small regular file (`shown` is the name used in messages).
pub fn read_bounded(file: &Path, shown: &Path) -> Result<Option<Vec<u8>>> {
    if !fs::is_file(file) {
        if !fs::exists(file) {
            return Ok(None);
        }
        return Err(Error::BadInput(format!(
            "`{}` is not a regular file; leaving it alone",
            shown.display()
        )));
    }
    let len = fs::file_len(file).unwrap_or(0);
    if len > MAX_SETTINGS_BYTES {
        return Err(Error::BadInput(format!(
            "`{}` is {len} bytes, over the {} MiB taskhook reads; leaving it alone",
            shown.display(),
            MAX_SETTINGS_BYTES / (1024 * 1024)
        )));
    }
    // Bounded again while reading, in case it grew in between.
    fs::read_capped(file, MAX_SETTINGS_BYTES as usize)
}

/// Copies the old bytes to `<name>.taskhook-backup-<UTC time>` beside the settings path (a
/// `-2`, `-3`, … suffix when that name is taken), with the original's permission bits.
pub fn backup(cx: &Ctx, t: &Target, old: &[u8]) -> Result<PathBuf> {
    let dir = real(t.path.parent().unwrap_or(Path::new(".")));
    let name = t
        .path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = format!("{name}.taskhook-backup-{}", cx.store.clock().file_stamp());
    let mut b = dir.join(&stem);
    let mut n = 1;
    while fs::exists(&b) {
        n += 1;
        b = dir.join(format!("{stem}-{n}"));
    }
    fs::create_new_like(&b, old, &t.real)?;
    Ok(b)
}

/// Replaces the settings file's real target atomically (temp file in the target's own folder).
pub fn write(cx: &Ctx, t: &Target, bytes: &[u8]) -> Result<()> {
    if let (Scope::User, Some(dir)) = (t.scope, t.real.parent()) {
        // Where the user's own settings link points is the user's too (the store writes only
        // in folders it trusts: see store::guard).
        cx.store.trust(dir, true);
    }
    cx.store.replace(&t.real, bytes).map(|_| ())
}
