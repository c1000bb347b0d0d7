//! `taskhook recover PATH`: restore a store from its newest valid checkpoint.

use std::path::PathBuf;

use crate::context::Ctx;
use crate::engine;
use crate::error::Result;

use super::Io;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The store's folder, or a file inside it.
    pub path: PathBuf,
}

pub fn run(cx: &Ctx, args: Args, io: &mut Io<'_>) -> Result<u8> {
    let target = cx.absolute(&args.path);
    let msg = engine::ops::recover(cx, &cx.project(None), &target)?;
    super::out(io, &msg)?;
    Ok(0)
}
