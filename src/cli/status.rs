//! `taskhook status [--json]`: every store found for this project, for people: titles beside
//! ids, one line per blocked unit with what it waits for, long lists cut, colour as the global
//! `--color` says (on a terminal, never with `NO_COLOR`). `--json` gives every list as an array of items
//! `{id, title?, detail?, waits_for?}`. The same `Summary` feeds the SessionStart context.

use serde_json::json;

use crate::context::Ctx;
use crate::engine;
use crate::error::Result;
use crate::layouts::{Item, StoreStatus};

use super::paint::Paint;
use super::Io;

/// Most items listed per line; the rest are counted.
const LIST_CAP: usize = 10;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
    /// Only the stores of this layout (iterative, claude-tasks, projects, execute, cdd).
    #[arg(long, value_name = "LAYOUT", value_parser = crate::layouts::registry().iter().map(|l| l.name()).collect::<Vec<_>>())]
    pub layout: Option<String>,
}

fn item_line(i: &Item) -> String {
    let mut s = i.id.clone();
    if let Some(t) = &i.title {
        s.push_str(&format!("  {t}"));
    }
    if let Some(d) = &i.detail {
        s.push_str(&format!(" ({d})"));
    }
    if !i.waits_for.is_empty() {
        s.push_str(&format!(" — waits for {}", i.waits_for.join(", ")));
    }
    s
}

fn print_store(io: &mut Io<'_>, s: &StoreStatus, paint: &Paint) -> Result<()> {
    super::out(
        io,
        &format!(
            "{}  {}",
            paint.bold(&format!("{} · {}", s.layout, s.id)),
            paint.dim(&s.path.display().to_string())
        ),
    )?;
    if !s.counts.is_empty() {
        let total: usize = s.counts.values().sum();
        let counts: Vec<String> = s
            .counts
            .iter()
            .map(|(k, v)| paint.status(k, &format!("{v} {k}")))
            .collect();
        super::out(io, &format!("  {total} in all: {}", counts.join(" · ")))?;
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
                super::out(
                    io,
                    &format!("  {:<12} … and {} more", "", items.len() - LIST_CAP),
                )?;
                break;
            }
            let head = if n == 0 { label } else { "" };
            super::out(
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
        super::out(
            io,
            &format!("  {} {p}", paint.status("problem", "problem     ")),
        )?;
    }
    for note in &s.notes {
        super::out(io, &format!("  {}", paint.dim(note)))?;
    }
    Ok(())
}

pub fn run(cx: &Ctx, args: Args, io: &mut Io<'_>) -> Result<u8> {
    let project = cx.project(None);
    let stores: Vec<StoreStatus> = engine::ops::status(cx, &project)
        .iter()
        .filter(|s| args.layout.as_deref().is_none_or(|l| s.layout == l))
        .map(|s| s.status())
        .collect();
    if args.json {
        super::out_json(io, &json!({"project_dir": project.root, "stores": stores}))?;
        return Ok(0);
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
    let paint = Paint::of(io);
    for (n, s) in stores.iter().enumerate() {
        if n > 0 {
            super::out(io, "")?;
        }
        print_store(io, s, &paint)?;
    }
    Ok(0)
}
