//! `taskhook man [COMMAND]`: the roff man page, generated from the command tree on demand
//! (clap_mangen), so it always matches the binary.

use crate::error::{Error, Result};

use super::Io;

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Install: taskhook man > ~/.local/share/man/man1/taskhook.1 \
    (and taskhook man install > ~/.local/share/man/man1/taskhook-install.1, …)"
)]
pub struct Args {
    /// A command (e.g. install); without it, the page of taskhook itself.
    pub command: Option<String>,
}

pub fn run(args: Args, io: &mut Io<'_>) -> Result<u8> {
    let mut cmd = super::command();
    cmd.build();
    let page = match &args.command {
        None => cmd,
        Some(name) => {
            let names: Vec<String> = cmd
                .get_subcommands()
                .map(|c| c.get_name().to_string())
                .collect();
            // After build() a subcommand's display name is `taskhook-NAME`, the page's title.
            cmd.find_subcommand(name)
                .cloned()
                .ok_or_else(|| {
                    Error::NotFound(format!(
                        "no command named {name:?}; known: {}",
                        names.join(", ")
                    ))
                })?
                .version(env!("CARGO_PKG_VERSION"))
        }
    };
    let mut buf = Vec::new();
    clap_mangen::Man::new(page)
        .render(&mut buf)
        .map_err(|e| Error::io("render", "the man page", e))?;
    super::out(io, String::from_utf8_lossy(&buf).trim_end())?;
    Ok(0)
}
