//! `taskhook completions SHELL`: the shell's completion script. It asks the binary at each
//! TAB (`TASKHOOK_COMPLETE=SHELL taskhook -- WORDS`, clap_complete's dynamic completion), so it
//! never drifts from the real flags and completes values too: store names, layouts, schemas.

use crate::error::{Error, Result};

use super::Io;

#[derive(Debug, clap::Args)]
#[command(after_help = "Install, for example: \
    bash: taskhook completions bash > ~/.local/share/bash-completion/completions/taskhook; \
    zsh: taskhook completions zsh > ~/.zfunc/_taskhook (with ~/.zfunc on fpath); \
    fish: taskhook completions fish > ~/.config/fish/completions/taskhook.fish; \
    PowerShell: taskhook completions powershell >> $PROFILE. The script runs `taskhook` from \
    PATH at each TAB: store names come from the project of the current folder.")]
pub struct Args {
    /// The shell.
    pub shell: clap_complete::Shell,
}

pub fn run(args: Args, io: &mut Io<'_>) -> Result<u8> {
    let script = super::teach::registration(&args.shell.to_string())
        .ok_or_else(|| Error::BadInput(format!("no completion script for {}", args.shell)))?;
    super::out(io, String::from_utf8_lossy(&script).trim_end())?;
    Ok(0)
}
