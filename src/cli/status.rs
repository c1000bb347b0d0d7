//! `taskhook status [--json]`: every store found for this project.

use serde_json::json;

use crate::context::Ctx;
use crate::engine;
use crate::error::Result;

use super::Io;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn run(cx: &Ctx, args: Args, io: &mut Io<'_>) -> Result<u8> {
    let project = cx.project(None);
    let stores: Vec<_> = engine::ops::status(cx, &project)
        .iter()
        .map(|s| s.status())
        .collect();
    let project = project.root;
    if args.json {
        super::out_json(io, &json!({"project_dir": project, "stores": stores}))?;
        return Ok(0);
    }
    if stores.is_empty() {
        super::out(
            io,
            &format!("No taskhook stores found in {}.", project.display()),
        )?;
        return Ok(0);
    }
    for s in &stores {
        super::out(io, &format!("{}  {}  {}", s.layout, s.id, s.path.display()))?;
        if !s.counts.is_empty() {
            let counts: Vec<String> = s.counts.iter().map(|(k, v)| format!("{k} {v}")).collect();
            super::out(io, &format!("  {}", counts.join(" · ")))?;
        }
        if let Some(c) = &s.current {
            super::out(io, &format!("  current: {c}"))?;
        }
        for (label, list) in [
            ("ready", &s.ready),
            ("stale", &s.stale),
            ("blocked", &s.blocked),
            ("stops waiting", &s.stops_waiting),
            ("problem", &s.problems),
        ] {
            if !list.is_empty() {
                super::out(io, &format!("  {label}: {}", list.join(", ")))?;
            }
        }
        for note in &s.notes {
            super::out(io, &format!("  {note}"))?;
        }
    }
    Ok(0)
}
