//! `taskhook install [--user] [--uninstall] [--dry-run]`: registrations in settings.json.

use std::path::PathBuf;

use serde_json::{json, Value};

use crate::context::Ctx;
use crate::error::{Error, Result};
use crate::install;
use crate::store::{parse_json, to_pretty};

use super::Io;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Use ~/.claude/settings.json (or $CLAUDE_CONFIG_DIR/settings.json) instead of the project's.
    #[arg(long)]
    pub user: bool,
    /// Remove taskhook's registrations instead.
    #[arg(long)]
    pub uninstall: bool,
    /// Print the resulting settings; write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
    /// The command to register (default: this taskhook binary's absolute path).
    #[arg(long, value_name = "PATH", hide = true)]
    pub command: Option<PathBuf>,
}

pub fn run(cx: &Ctx, args: Args, io: &mut Io<'_>) -> Result<u8> {
    let settings_path = if args.user {
        cx.claude_config_dir().join("settings.json")
    } else {
        cx.project(None).root.join(".claude").join("settings.json")
    };
    let command = match &args.command {
        Some(c) => cx.absolute(c),
        None => std::env::current_exe()
            .and_then(|p| p.canonicalize())
            .map_err(|e| Error::io("locate", "the taskhook binary", e))?,
    };
    let command = command.to_string_lossy().into_owned();
    let old_bytes = cx.store.read(&settings_path)?;
    let old: Value = match &old_bytes {
        None => json!({}),
        Some(b) if b.iter().all(u8::is_ascii_whitespace) => json!({}),
        Some(b) => parse_json(b).map_err(|e| {
            Error::BadInput(format!(
                "`{}` is {e}; leaving it untouched",
                settings_path.display()
            ))
        })?,
    };
    let new = if args.uninstall {
        install::uninstall(old.clone())?
    } else {
        install::install(old.clone(), &command)?
    };
    let changed = new != old;
    let mut backup = None;
    if changed && !args.dry_run {
        if let Some(bytes) = &old_bytes {
            let b = settings_path.with_file_name(format!(
                "settings.json.taskhook-backup-{}",
                cx.store.clock().file_stamp()
            ));
            cx.store.replace(&b, bytes)?;
            backup = Some(b);
        }
        cx.store.replace(&settings_path, &to_pretty(&new))?;
    }
    if args.json || args.dry_run {
        super::out_json(
            io,
            &json!({
                "path": settings_path,
                "changed": changed,
                "dry_run": args.dry_run,
                "backup": backup,
                "settings": new,
            }),
        )?;
        return Ok(0);
    }
    let what = if args.uninstall {
        "Removed taskhook's hooks from"
    } else {
        "Registered taskhook hooks in"
    };
    let msg = match (changed, &backup) {
        (false, _) => format!(
            "{} is already up to date; nothing changed.",
            settings_path.display()
        ),
        (true, Some(b)) => format!(
            "{what} {} (backup: {}).",
            settings_path.display(),
            b.display()
        ),
        (true, None) => format!("{what} {}.", settings_path.display()),
    };
    super::out(io, &msg)?;
    Ok(0)
}
