//! `taskhook demo [--keep]`: a guided tour on an embedded default. It creates a scratch project
//! (and a scratch home) in a temporary folder, sends real-shaped Claude Code payloads through
//! the real hook path (`engine::run`, exactly what `taskhook hook` runs) and runs the real
//! commands in-process, and prints for a person what each step changed and what taskhook
//! answered; one chapter per layout ([`tour`] is the stage, [`chapters`] and [`more`] the
//! story). Nothing outside the scratch folder is read or written, and the folder is removed at
//! the end (unless kept).

mod chapters;
mod more;
mod tour;

use crate::error::Result;

use super::Io;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Keep the scratch project afterwards (its path is printed) to look around.
    #[arg(long)]
    pub keep: bool,
}

pub fn run(args: Args, io: &mut Io<'_>) -> Result<u8> {
    tour::run(io.stdout, args.keep)?;
    Ok(0)
}
