//! `taskhook statusline`: Claude Code's status line. Reads the status-line JSON Claude Code
//! sends on stdin (`workspace.project_dir`, `cwd`, …) and prints one short line about the
//! project's task state: what is in progress, done/total, a stop waiting for a person, stale
//! units. Read-only and quick (it runs on every refresh, at most every 300 ms); nothing to say,
//! nothing printed. Register it in settings.json:
//! `"statusLine": {"type": "command", "command": "taskhook statusline"}`.

use std::io::Read;

use serde::Deserialize;
use serde_json::Value;

use crate::context::Ctx;
use crate::engine;
use crate::error::{Error, Result};
use crate::layouts::Summary;

use super::Io;

/// Largest status-line input read.
const INPUT_CAP: u64 = 1024 * 1024;
/// Statuses that count as finished.
const DONE: &[&str] = &["completed", "done", "COMPLETE", "merged", "archived"];

#[derive(Debug, clap::Args)]
pub struct Args {}

/// The one line for these summaries, or nothing.
pub fn line(stores: &[Summary]) -> Option<String> {
    let mut parts = Vec::new();
    if let Some((s, stop)) = stores
        .iter()
        .find_map(|s| s.stops_waiting.first().map(|i| (s, i)))
    {
        parts.push(format!("⏸ {} waiting ({} {})", stop.id, s.layout, s.id));
    }
    if let Some(cur) = stores.iter().find_map(|s| s.current.first()) {
        let title = cur
            .title
            .as_deref()
            .map(|t| format!(" {}", t.chars().take(40).collect::<String>()))
            .unwrap_or_default();
        parts.push(format!("▶ {}{title}", cur.id));
    }
    let total: usize = stores.iter().flat_map(|s| s.counts.values()).sum();
    if total > 0 {
        let done: usize = stores
            .iter()
            .flat_map(|s| s.counts.iter())
            .filter(|(k, _)| DONE.contains(&k.as_str()))
            .map(|(_, v)| v)
            .sum();
        parts.push(format!("{done}/{total} done"));
    }
    let stale: usize = stores.iter().map(|s| s.stale.len()).sum();
    if stale > 0 {
        parts.push(format!("⚠ {stale} stale"));
    }
    let problems: usize = stores.iter().map(|s| s.problems.len()).sum();
    if problems > 0 {
        parts.push(format!("⚠ {problems} problem(s): taskhook status"));
    }
    (!parts.is_empty()).then(|| format!("taskhook · {}", parts.join(" · ")))
}

pub fn run(cx: &Ctx, _args: Args, io: &mut Io<'_>) -> Result<u8> {
    let mut buf = Vec::new();
    if !io.stdin_is_terminal {
        io.stdin
            .take(INPUT_CAP)
            .read_to_end(&mut buf)
            .map_err(|e| Error::io("read", "stdin", e))?;
    }
    /// What Claude Code sends a status line: where the session works.
    #[derive(Default, serde::Deserialize)]
    #[serde(default)]
    struct Input {
        workspace: Workspace,
        cwd: Option<String>,
    }
    #[derive(Default, serde::Deserialize)]
    #[serde(default)]
    struct Workspace {
        project_dir: Option<String>,
        current_dir: Option<String>,
    }
    // Any JSON is taken; one of another shape names no folder.
    let input: Input = if buf.iter().all(u8::is_ascii_whitespace) {
        Input::default()
    } else {
        let v: Value = serde_json::from_slice(&buf)
            .map_err(|e| Error::BadInput(format!("status-line input is not JSON: {e}")))?;
        Input::deserialize(&v).unwrap_or_default()
    };
    let dir = input
        .workspace
        .project_dir
        .or(input.workspace.current_dir)
        .or(input.cwd);
    let project = cx.project(dir.as_deref());
    let stores = engine::ops::status(cx, &project);
    if let Some(l) = line(&stores) {
        // One line, whatever the ids and titles hold.
        super::out(io, &crate::display::line(&l))?;
    }
    Ok(0)
}
