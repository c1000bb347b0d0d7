//! `taskhook status [--json] [--color WHEN]`: every store found for this project, for people:
//! titles beside ids, one line per blocked unit with what it waits for, long lists cut, colour
//! on a terminal (never with `NO_COLOR`). `--json` gives every list as an array of items
//! `{id, title?, detail?, waits_for?}`. The same `Summary` feeds the SessionStart context.

use std::io::IsTerminal;

use serde_json::json;

use crate::context::Ctx;
use crate::display::line;
use crate::engine;
use crate::env::NO_COLOR;
use crate::error::Result;
use crate::layouts::{Item, StoreStatus};

use super::Io;

/// Most items listed per line; the rest are counted.
const LIST_CAP: usize = 10;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
    /// Colour: auto (on a terminal, unless NO_COLOR is set), always, never.
    #[arg(long, value_name = "WHEN", default_value = "auto", value_parser = ["auto", "always", "never"])]
    pub color: String,
}

/// ANSI styles, or none.
struct Paint(bool);

impl Paint {
    fn wrap(&self, code: &str, s: &str) -> String {
        if self.0 {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    }
    fn bold(&self, s: &str) -> String {
        self.wrap("1", s)
    }
    fn dim(&self, s: &str) -> String {
        self.wrap("2", s)
    }
    fn status(&self, status: &str, s: &str) -> String {
        let code = match status {
            "completed" | "done" | "COMPLETE" | "merged" | "verified" => "32",
            "in_progress" | "IN_PROGRESS" | "confirming" | "verifying" | "in progress" => "33",
            "blocked" | "BLOCKED" | "failed" | "abandoned" | "timeout" | "problem" => "31",
            _ => return s.to_string(),
        };
        self.wrap(code, s)
    }
}

/// One item on one line, every part made safe ([`line`]).
fn item_line(i: &Item) -> String {
    let mut s = line(&i.id).into_owned();
    if let Some(t) = &i.title {
        s.push_str(&format!("  {}", line(t)));
    }
    if let Some(d) = &i.detail {
        s.push_str(&format!(" ({})", line(d)));
    }
    if !i.waits_for.is_empty() {
        let waits: Vec<_> = i.waits_for.iter().map(|w| line(w)).collect();
        s.push_str(&format!(" — waits for {}", waits.join(", ")));
    }
    s
}

/// Prints one line built from parts each made safe with [`line`], styled by [`Paint`].
fn styled(io: &mut Io<'_>, text: &str) -> Result<()> {
    super::out_styled(io, text)
}

/// A store's lines. Its data (ids, titles, paths, problems) can come from a repository's files,
/// so each part is made safe on its own ([`line`]) before taskhook's styles go around it.
fn print_store(io: &mut Io<'_>, s: &StoreStatus, paint: &Paint) -> Result<()> {
    styled(
        io,
        &format!(
            "{}  {}",
            paint.bold(&format!("{} · {}", s.layout, line(&s.id))),
            paint.dim(&line(&s.path.display().to_string()))
        ),
    )?;
    if !s.counts.is_empty() {
        let total: usize = s.counts.values().sum();
        let counts: Vec<String> = s
            .counts
            .iter()
            .map(|(k, v)| paint.status(k, &format!("{v} {}", line(k))))
            .collect();
        styled(io, &format!("  {total} in all: {}", counts.join(" · ")))?;
    }
    for (label, items, tone) in [
        ("in progress", &s.current, "in progress"),
        ("ready", &s.ready, ""),
        ("stale", &s.stale, "problem"),
        ("blocked", &s.blocked, "blocked"),
        ("stop waiting", &s.stops_waiting, "blocked"),
    ] {
        for (n, i) in items.iter().enumerate() {
            if n == LIST_CAP {
                styled(
                    io,
                    &format!("  {:<12} … and {} more", "", items.len() - LIST_CAP),
                )?;
                break;
            }
            let head = if n == 0 { label } else { "" };
            styled(
                io,
                &format!(
                    "  {} {}",
                    paint.status(tone, &format!("{head:<12}")),
                    item_line(i)
                ),
            )?;
        }
    }
    for p in &s.problems {
        styled(
            io,
            &format!("  {} {}", paint.status("problem", "problem     "), line(p)),
        )?;
    }
    for note in &s.notes {
        styled(io, &format!("  {}", paint.dim(&line(note))))?;
    }
    Ok(())
}

pub fn run(cx: &Ctx, args: Args, io: &mut Io<'_>) -> Result<u8> {
    let project = cx.project(None);
    let stores: Vec<StoreStatus> = engine::ops::status(cx, &project)
        .iter()
        .map(|s| s.status())
        .collect();
    // With team sync on: the changes this clone has not pushed yet.
    let pending = crate::sync::pending(cx, &project);
    if args.json {
        let mut v = json!({"project_dir": project.root, "stores": stores});
        if let Some((n, remote)) = &pending {
            v["sync"] = json!({"remote": remote, "not_pushed": n});
        }
        super::out_json(io, &v)?;
        return Ok(0);
    }
    if let Some((n, remote)) = pending.filter(|(n, _)| *n > 0) {
        super::out(
            io,
            &format!(
                "sync: {n} change(s) not yet pushed to {remote} (`taskhook sync` pushes them)"
            ),
        )?;
    }
    if stores.is_empty() {
        super::out(
            io,
            &format!(
                "No taskhook stores found in {}. (Create one with `taskhook iterative new`, `taskhook projects new`, `taskhook cdd init`, `taskhook execute init` or `taskhook tasks write`.)",
                project.root.display()
            ),
        )?;
        return Ok(0);
    }
    let colour = match args.color.as_str() {
        "always" => true,
        "never" => false,
        _ => cx.env.get(NO_COLOR).is_none() && std::io::stdout().is_terminal(),
    };
    let paint = Paint(colour);
    for (n, s) in stores.iter().enumerate() {
        if n > 0 {
            super::out(io, "")?;
        }
        print_store(io, s, &paint)?;
    }
    Ok(0)
}
