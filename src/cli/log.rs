//! `taskhook log [--session S] [--follow] [--json]`: the journal of what taskhook changed and
//! what it replied, for a person (`.claude/taskhook/journal.jsonl`, see `engine::journal`).

use std::path::Path;
use std::time::Duration;

use crate::context::Ctx;
use crate::display;
use crate::engine::journal::{self, Entry};
use crate::error::Result;

use super::Io;

/// Largest journal file read (the journal rotates at 1 MiB).
const READ_CAP: usize = 8 * 1024 * 1024;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Only this session's events (a prefix of the session id is enough).
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,
    /// Keep printing new entries as they are written (Ctrl-C to stop).
    #[arg(long)]
    pub follow: bool,
    /// Print the journal's JSON lines as they are.
    #[arg(long)]
    pub json: bool,
}

fn read_lines(cx: &Ctx, path: &Path) -> Result<Vec<String>> {
    Ok(cx
        .store
        .read_capped(path, READ_CAP)?
        .map(|b| {
            String::from_utf8_lossy(&b)
                .lines()
                .filter(|l| !l.trim().is_empty())
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default())
}

/// The first line of `s`, cut at `max` characters, made safe ([`display::line`]).
fn first_line(s: &str, max: usize) -> String {
    let first = s.lines().next().unwrap_or("").trim();
    let first = if first.chars().count() > max {
        format!("{}…", first.chars().take(max).collect::<String>())
    } else {
        first.to_string()
    };
    display::line(&first).into_owned()
}

/// One journal entry as a person reads it. The journal is a file in the project, which a
/// repository may have planted: every field is shown on one line, made safe
/// ([`display::line`]).
fn human(e: &Entry, project: &Path) -> String {
    let s = |v: &Option<String>| display::line(v.as_deref().unwrap_or("")).into_owned();
    let mut event = s(&e.event);
    if !s(&e.tool).is_empty() {
        event = format!("{event}:{}", s(&e.tool));
    }
    let session: String = e.session.as_deref().unwrap_or("").chars().take(8).collect();
    let session = display::line(&session);
    let who = if s(&e.agent_id).is_empty() {
        String::new()
    } else {
        format!(" (subagent {})", s(&e.agent_id))
    };
    let changed: Vec<String> = e
        .changed
        .iter()
        .flatten()
        .map(|p| {
            let shown = Path::new(p)
                .strip_prefix(project)
                .map(|r| r.display().to_string())
                .unwrap_or_else(|_| p.to_string());
            display::line(&shown).into_owned()
        })
        .collect();
    let mut out = format!("{}  {event:<24} {session}{who}", s(&e.at));
    if !changed.is_empty() {
        out.push_str(&format!("\n    changed: {}", changed.join(", ")));
    }
    let said = e.said();
    if said.decision.as_deref() == Some("block") {
        out.push_str(&format!(
            "\n    told the agent to go on: {}",
            first_line(said.reason.as_deref().unwrap_or(""), 100)
        ));
    }
    if said.go_on == Some(false) {
        out.push_str(&format!(
            "\n    halted the agent: {}",
            first_line(said.stop_reason.as_deref().unwrap_or(""), 100)
        ));
    }
    if let Some(c) = said.specific.and_then(|h| h.additional_context) {
        out.push_str(&format!("\n    told the model: {}", first_line(&c, 100)));
    }
    if let Some(m) = &said.system_message {
        out.push_str(&format!("\n    told the user: {}", first_line(m, 100)));
    }
    if !s(&e.stderr).is_empty() {
        out.push_str(&format!(
            "\n    exit {}: {}",
            e.exit.map_or("null".to_string(), |x| x.to_string()),
            first_line(e.stderr.as_deref().unwrap_or(""), 100)
        ));
    }
    out
}

pub fn run(cx: &Ctx, args: Args, io: &mut Io<'_>) -> Result<u8> {
    let project = cx.project(None);
    let current = journal::path(&project.root);
    let wanted = |e: &Entry| {
        args.session
            .as_deref()
            .is_none_or(|want| e.session.as_deref().is_some_and(|s| s.starts_with(want)))
    };
    let print = |io: &mut Io<'_>, line: &str| -> Result<()> {
        let Ok(v) = serde_json::from_str::<Entry>(line) else {
            return Ok(());
        };
        if !wanted(&v) {
            return Ok(());
        }
        if args.json {
            super::out_json_text(io, line)
        } else {
            super::out(io, &human(&v, &project.root))
        }
    };
    let mut seen = 0;
    let mut lines = read_lines(cx, &journal::previous(&project.root))?;
    let now = read_lines(cx, &current)?;
    lines.extend(now.iter().cloned());
    if lines.is_empty() && !args.follow && !args.json {
        super::out(
            io,
            &format!(
                "No journal yet at {} (taskhook records an event there once it changes a file).",
                current.display()
            ),
        )?;
    }
    for l in &lines {
        print(io, l)?;
    }
    seen += now.len();
    if !args.follow {
        return Ok(0);
    }
    loop {
        std::thread::sleep(Duration::from_millis(500));
        let now = read_lines(cx, &current)?;
        if now.len() < seen {
            // Rotated: the current file started again.
            seen = 0;
        }
        for l in &now[seen..] {
            print(io, l)?;
        }
        seen = now.len();
        let _ = io.stdout.flush();
    }
}
