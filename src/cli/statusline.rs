//! `taskhook statusline`: Claude Code's status line. Reads the status-line JSON Claude Code
//! sends on stdin (`workspace.project_dir`, `cwd`, …) and prints one short line about the
//! project's task state: what is in progress, done/total, a stop waiting for a person, stale
//! units. Read-only and quick (it runs on every refresh, at most every 300 ms); nothing to say,
//! nothing printed. Register it in settings.json:
//! `"statusLine": {"type": "command", "command": "taskhook statusline"}`.

use std::io::Read;

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
    let input: Value = if buf.iter().all(u8::is_ascii_whitespace) {
        Value::Null
    } else {
        serde_json::from_slice(&buf)
            .map_err(|e| Error::BadInput(format!("status-line input is not JSON: {e}")))?
    };
    let dir = input
        .pointer("/workspace/project_dir")
        .or_else(|| input.pointer("/workspace/current_dir"))
        .or_else(|| input.get("cwd"))
        .and_then(Value::as_str);
    let project = cx.project(dir);
    let stores = engine::ops::status(cx, &project);
    if let Some(l) = line(&stores) {
        // One line, whatever the ids and titles hold.
        super::out(io, &crate::display::line(&l))?;
    }
    Ok(0)
}
