//! `taskhook board [--html FILE|-] [--watch] [--color WHEN]` and `taskhook graph [--store S]
//! [--format dot|mermaid|json]`: see the work. Thin: the model and every renderer live in
//! [`crate::board`].

use std::io::IsTerminal;
use std::path::PathBuf;

use crate::board::{self, graph, html, text, tui};
use crate::context::Ctx;
use crate::engine::agent;
use crate::env::NO_COLOR;
use crate::error::{Error, Result};

use super::{out, out_json, out_styled, Io};

/// `taskhook board`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  taskhook board                         # full screen; q quits\n  \
                        taskhook board | less                  # plain text, once\n  \
                        taskhook board --html board.html       # one self-contained page\n  \
                        taskhook board --html board.html --watch\n  \
                        taskhook board --html - > board.html"
)]
pub struct BoardArgs {
    /// Write one self-contained HTML page to FILE (`-`: standard output) instead.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// With --html FILE: keep running, rewrite the page when the state changes (the page
    /// reloads itself).
    #[arg(long, requires = "html")]
    pub watch: bool,
    /// Colour: auto (on a terminal, unless NO_COLOR is set), always, never.
    #[arg(long, value_name = "WHEN", default_value = "auto", value_parser = ["auto", "always", "never"])]
    pub color: String,
}

/// `taskhook graph`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  taskhook graph | dot -Tsvg > graph.svg\n  \
                        taskhook graph --store web --format mermaid\n  \
                        taskhook graph --format json")]
pub struct GraphArgs {
    /// Only this store (its name as `taskhook status` shows it).
    #[arg(long, value_name = "STORE")]
    pub store: Option<String>,
    /// dot (Graphviz), mermaid (a flowchart), or json (nodes and edges).
    #[arg(long, value_name = "FORMAT", default_value = "dot", value_parser = ["dot", "mermaid", "json"])]
    pub format: String,
}

/// `taskhook board`.
pub fn run_board(cx: &Ctx, a: BoardArgs, io: &mut Io<'_>) -> Result<u8> {
    let project = cx.project(None);
    let tty = std::io::stdout().is_terminal();
    let colour = match a.color.as_str() {
        "always" => true,
        "never" => false,
        _ => cx.env.get(NO_COLOR).is_none() && tty,
    };
    match a.html {
        Some(p) if p.as_os_str() == "-" => {
            if a.watch {
                return Err(Error::Usage(
                    "--watch rewrites a file: give --html FILE, not -".into(),
                ));
            }
            out(
                io,
                html::render(&board::load(cx, &project), false).trim_end(),
            )?;
            Ok(0)
        }
        Some(p) => {
            let path = cx.absolute(&p);
            let dir = path.parent().unwrap_or(&path).to_path_buf();
            if !cx.store.is_dir(&dir) {
                return Err(Error::BadInput(format!(
                    "cannot write {}: there is no folder {}",
                    crate::display::text(&path.display().to_string()),
                    crate::display::text(&dir.display().to_string())
                )));
            }
            // The page goes where the user said, and only there: its folder is trusted for
            // this one write (a link or special file at the path is still refused).
            cx.store.trust(&dir, false);
            let code = board::write_html(cx, &project, &path, a.watch, &mut |l: &str| {
                // Said at once: with --watch the command runs until it is stopped.
                let _ = out(io, l);
                let _ = io.stdout.flush();
            })?;
            Ok(code)
        }
        None if tty => tui::run(
            cx,
            &project,
            colour,
            &|r: &str| match agent::show(cx, &project, r) {
                Ok(s) => super::agent::show_text(&s),
                Err(e) => e.one_line(),
            },
        ),
        None => {
            // Every field was made safe on its own (text::safe); the colours are taskhook's.
            out_styled(io, &text::render(&board::load(cx, &project), colour))?;
            Ok(0)
        }
    }
}

/// `taskhook graph`.
pub fn run_graph(cx: &Ctx, a: GraphArgs, io: &mut Io<'_>) -> Result<u8> {
    let project = cx.project(None);
    let mut b = board::load(cx, &project);
    if let Some(s) = &a.store {
        if !b.only_store(s) {
            return Err(Error::NotFound(format!(
                "no store {:?} (see `taskhook status`)",
                crate::display::text(s)
            )));
        }
    }
    let g = b.graph();
    match a.format.as_str() {
        "json" => out_json(io, &graph::json(&b, &g))?,
        "mermaid" => out(io, graph::mermaid(&b, &g).trim_end())?,
        _ => out(io, graph::dot(&b, &g).trim_end())?,
    }
    Ok(0)
}
