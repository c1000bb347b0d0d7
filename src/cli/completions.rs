//! `taskhook completions SHELL`: a completion script generated from the command tree, so it
//! never drifts from the real flags (clap_complete).

use clap::CommandFactory;

use crate::error::Result;

use super::{Cli, Io};

#[derive(Debug, clap::Args)]
#[command(after_help = "Install, for example: \
    bash: taskhook completions bash > ~/.local/share/bash-completion/completions/taskhook; \
    zsh: taskhook completions zsh > ~/.zfunc/_taskhook (with ~/.zfunc on fpath); \
    fish: taskhook completions fish > ~/.config/fish/completions/taskhook.fish; \
    PowerShell: taskhook completions powershell >> $PROFILE")]
pub struct Args {
    /// The shell.
    pub shell: clap_complete::Shell,
}

pub fn run(args: Args, io: &mut Io<'_>) -> Result<u8> {
    // Rendered into memory first: the generator panics on a write error (a closed pipe).
    let mut buf = Vec::new();
    clap_complete::generate(args.shell, &mut Cli::command(), "taskhook", &mut buf);
    super::out(io, String::from_utf8_lossy(&buf).trim_end())?;
    Ok(0)
}
