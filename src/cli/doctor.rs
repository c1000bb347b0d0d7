//! `taskhook doctor [--json]`: every check a user would otherwise do by hand (see
//! `crate::doctor`); one line per finding with its fix; exit 1 when something needs action.

use serde_json::json;

use crate::context::Ctx;
use crate::doctor::{self, Level};
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
    let findings = doctor::check(cx);
    let code = u8::from(doctor::needs_action(&findings));
    if args.json {
        super::out_json(io, &json!({"ok": code == 0, "findings": findings}))?;
        return Ok(code);
    }
    let paint = Paint::of(io);
    for x in &findings {
        let mark = match x.level {
            Level::Ok => paint.green("ok   "),
            Level::Note => paint.dim("note "),
            Level::Warn => paint.yellow("warn "),
            Level::Error => paint.red(&paint.bold("ERROR")),
        };
        let fix = x
            .fix
            .as_deref()
            .map(|f| format!(" {} {f}", paint.bold("→")))
            .unwrap_or_default();
        let topic = paint.dim(&format!("{:<13}", x.topic));
        super::out(io, &format!("{mark} {topic} {}{fix}", x.message))?;
    }
    if code == 0 {
        super::out(io, &paint.green("Nothing needs action."))?;
    }
    Ok(code)
}
