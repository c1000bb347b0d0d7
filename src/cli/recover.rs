//! `taskhook recover PATH [--dry-run]`: restore a store from what its layout keeps (its newest
//! valid checkpoint, its log), salvaging what still validates; `--dry-run` says what would be
//! kept and dropped, writing nothing.

use std::path::PathBuf;

use crate::context::Ctx;
use crate::engine;
use crate::error::{Error, Result};

use super::Io;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The store's folder, or a file inside it.
    pub path: PathBuf,
    /// Print JSON: {"store", "layout", "message"}.
    #[arg(long)]
    pub json: bool,
    /// Write nothing; say what would be kept and dropped.
    #[arg(long)]
    pub dry_run: bool,
}

pub fn run(cx: &Ctx, args: Args, io: &mut Io<'_>) -> Result<u8> {
    let target = cx.absolute(&args.path);
    let (layout, store) = engine::ops::store_at(cx, &cx.project(None), &target)?;
    let msg = layout.recover(cx, &store).map_err(|e| match e {
        // A recovery that cannot rebuild the file must not advise running recovery.
        Error::Corrupt { path, details, .. } => Error::Rule(format!(
            "`{}` is corrupt ({details}); `taskhook recover` cannot rebuild it from what the store keeps, and left every file as it was",
            path.display()
        )),
        other => other,
    })?;
    if args.json {
        let v = serde_json::json!({"store": store.root, "layout": layout.name(), "message": msg});
        super::out_json(io, &v)?;
    } else {
        super::out(io, &msg)?;
    }
    Ok(0)
}
