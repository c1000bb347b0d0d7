//! `taskhook demo [--keep]`: the guided tour on a scratch project (see `crate::demo`).

use crate::error::Result;

use super::Io;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Keep the scratch project afterwards (its path is printed) to look around.
    #[arg(long)]
    pub keep: bool,
}

pub fn run(args: Args, io: &mut Io<'_>) -> Result<u8> {
    crate::demo::run(io.stdout, args.keep)?;
    Ok(0)
}
