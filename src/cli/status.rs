//! `taskhook status [--json]`: every store found for this project, for people: titles beside
//! ids, one line per blocked unit with what it waits for, long lists cut, colour as the global
//! `--color` says (on a terminal, never with `NO_COLOR`). `--json` gives every list as an array of items
//! `{id, title?, detail?, waits_for?}`. The same `Summary` feeds the SessionStart context.

use crate::context::Ctx;
use crate::display::line;
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
        .filter(|s| args.layout.as_deref().is_none_or(|l| s.layout == l))
        .map(|s| s.status())
        .collect();
    // With team sync on: the changes this clone has not pushed yet.
    let pending = crate::sync::pending(cx, &project);
    if args.json {
        /// `status --json`: the sync part only with team sync on.
        #[derive(serde::Serialize)]
        struct Out<'a> {
            project_dir: &'a std::path::Path,
            stores: &'a [StoreStatus],
            #[serde(skip_serializing_if = "Option::is_none")]
            sync: Option<Sync<'a>>,
        }
        #[derive(serde::Serialize)]
        struct Sync<'a> {
            remote: &'a str,
            not_pushed: usize,
        }
        let v = Out {
            project_dir: &project.root,
            stores: &stores,
            sync: pending.as_ref().map(|(n, remote)| Sync {
                remote,
                not_pushed: *n,
            }),
        };
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
    let paint = Paint::of(io);
    for (n, s) in stores.iter().enumerate() {
        if n > 0 {
            super::out(io, "")?;
        }
        print_store(io, s, &paint)?;
    }
    Ok(0)
}
