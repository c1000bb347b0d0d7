//! `taskhook reconcile [--dry-run] [--json]`: SessionStart's work, on demand. One line per
//! change, per problem it could not fix and per store that failed (each said once); "Nothing
//! to reconcile." only when there was nothing of the kind; exit 1 when a store could not be
//! reconciled.

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
    let (reaction, errors, stores) = engine::ops::reconcile(cx, &project, None);
    let changed = cx.store.take_changed();
    let errors: Vec<String> = errors
        .iter()
        .map(|(who, e)| format!("{who}: {}", e.one_line()))
        .collect();
    let mut problems: Vec<String> = Vec::new();
    for s in &stores {
        for p in s.problems() {
            let line = format!("{}: {p}", s.store);
            if !problems.contains(&line) {
                problems.push(line);
            }
        }
    }
    let failed = !errors.is_empty() || !problems.is_empty();
    if args.json {
        super::out_json(
            io,
            &json!({
                "dry_run": args.dry_run,
                "changed": changed,
                "summary": stores.iter().flat_map(|s| s.context()).collect::<Vec<_>>(),
                "messages": reaction.system,
                "problems": problems,
                "errors": errors,
            }),
        )?;
        return Ok(u8::from(failed));
    }
    let verb = if args.dry_run {
        "would change"
    } else {
        "changed"
    };
    for s in &stores {
        for c in &s.changes {
            super::out(io, &format!("{}: {c}", s.store))?;
        }
    }
    for p in &changed {
        super::out(io, &format!("{verb}: {}", p.display()))?;
    }
    for p in &problems {
        super::out(io, &format!("problem: {p}"))?;
    }
    for e in &errors {
        super::out(io, &format!("error: {e}"))?;
    }
    if changed.is_empty() && !failed {
        super::out(io, "Nothing to reconcile.")?;
    }
    Ok(u8::from(failed))
}
