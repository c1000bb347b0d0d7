//! `taskhook validate [--json]`: every state file against its schema; exit 1 if any is invalid.

use serde_json::json;

use crate::context::Ctx;
use crate::engine;
use crate::error::Result;

use super::paint::Paint;
use super::Io;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn run(cx: &Ctx, args: Args, io: &mut Io<'_>) -> Result<u8> {
    let reports = engine::ops::validate(cx, &cx.project(None))?;
    let all_valid = reports.iter().all(|r| r.valid);
    if args.json {
        super::out_json(io, &json!({"valid": all_valid, "files": reports}))?;
    } else if reports.is_empty() {
        super::out(io, "No state files found.")?;
    } else {
        let paint = Paint::of(io);
        for r in &reports {
            let mark = if r.valid {
                paint.green("ok     ")
            } else {
                paint.red("INVALID")
            };
            super::out(io, &format!("{mark} {} ({})", r.path.display(), r.schema))?;
            for e in &r.errors {
                let at = if e.path.is_empty() { "(root)" } else { &e.path };
                super::out(
                    io,
                    &format!("  {at}: {}", crate::error::one_line(&e.message)),
                )?;
            }
        }
    }
    Ok(if all_valid { 0 } else { 1 })
}
