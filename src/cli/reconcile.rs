//! `taskhook reconcile [--dry-run] [--json]`: SessionStart's work, on demand.

use serde_json::json;

use crate::context::Ctx;
use crate::engine;
use crate::error::Result;

use super::Io;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Write nothing; report what would change.
    #[arg(long)]
    pub dry_run: bool,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn run(cx: &Ctx, args: Args, io: &mut Io<'_>) -> Result<u8> {
    let project = cx.project(None);
    let (reaction, errors) = engine::ops::session_start(cx, &project, None);
    let changed = cx.store.take_changed();
    let errors: Vec<String> = errors
        .iter()
        .map(|(who, e)| format!("{who}: {}", e.one_line()))
        .collect();
    if args.json {
        super::out_json(
            io,
            &json!({
                "dry_run": args.dry_run,
                "changed": changed,
                "summary": reaction.context,
                "messages": reaction.system,
                "errors": errors,
            }),
        )?;
    } else {
        for line in reaction.context.iter().chain(&reaction.system) {
            super::out(io, line)?;
        }
        let verb = if args.dry_run {
            "would change"
        } else {
            "changed"
        };
        if changed.is_empty() {
            super::out(io, "Nothing to reconcile.")?;
        }
        for p in &changed {
            super::out(io, &format!("{verb}: {}", p.display()))?;
        }
        for e in &errors {
            super::out(io, &format!("error: {e}"))?;
        }
    }
    Ok(if errors.is_empty() { 0 } else { 1 })
}
