//! The `.gitignore` recipe `install` offers: files taskhook (or `install`) creates that belong
//! to one machine or one moment, never to the repository. `install` prints the lines the
//! project's `.gitignore` lacks; `install --gitignore` appends them (append only: nothing of
//! the user's is rewritten). Lines are compared literally, after trimming.

use std::path::{Path, PathBuf};

use crate::context::Ctx;
use crate::error::Result;

/// The comment that heads the appended block.
pub const HEADER: &str =
    "# taskhook: lock files, quarantined bytes, settings backups, machine-local state";

/// The recipe, one pattern a line.
pub const LINES: &[&str] = &[
    // Sidecar lock files: `.tasks.json.lock`, `.state.json.lock`, `.taskhook.lock`, …
    ".*.lock",
    // Bad bytes moved aside by the corrupt-file policy.
    "*.corrupt-*",
    // Backups `install` writes before changing a settings file.
    ".claude/*.taskhook-backup-*",
    // `install --local`'s file; Claude Code keeps it out of git too.
    ".claude/settings.local.json",
    // Subagent bindings and notices of this machine's sessions.
    ".claude/taskhook/agents.json",
    // The journal of decisions and its rotations.
    ".claude/taskhook/journal.jsonl*",
    // The events this machine's runs applied (each once).
    ".claude/taskhook/applied.json",
    // Claims and leases of this machine's sessions (teams share them through `taskhook sync`).
    ".claude/taskhook/claims.json",
    // The execute layout's copy of its latest valid state (rebuilt from on corruption).
    ".execute-state.json.last-good",
];

/// The project's `.gitignore` and the recipe lines it lacks.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Status {
    pub path: PathBuf,
    pub missing: Vec<&'static str>,
    /// Whether the file has content (the appended block then starts after a blank line).
    #[serde(skip)]
    non_empty: bool,
}

/// Checks the project's `.gitignore` (a missing file lacks every line).
pub fn status(project: &Path) -> Result<Status> {
    let path = project.join(".gitignore");
    let text = super::target::read_bounded(&path, &path)?
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default();
    let have: Vec<&str> = text.lines().map(str::trim).collect();
    let missing = LINES
        .iter()
        .copied()
        .filter(|l| !have.contains(l))
        .collect();
    Ok(Status {
        path,
        missing,
        non_empty: !text.trim().is_empty(),
    })
}

/// The text `--gitignore` appends for the missing lines (empty when none are missing).
pub fn block(st: &Status) -> String {
    if st.missing.is_empty() {
        return String::new();
    }
    let gap = if st.non_empty { "\n" } else { "" };
    let mut out = format!("{gap}{HEADER}\n");
    for l in &st.missing {
        out.push_str(l);
        out.push('\n');
    }
    out
}

/// Appends the missing lines to the project's `.gitignore` (creating it when absent).
pub fn append(cx: &Ctx, st: &Status) -> Result<()> {
    cx.store.append(&st.path, block(st).as_bytes())
}
