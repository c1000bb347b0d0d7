//! The command line: parse with clap, call the library, print. One file per command, each
//! with its `Args` struct and a `run` function; output goes to injected writers.

mod hook;
mod install;
mod iterative;
mod reconcile;
mod recover;
mod replay;
mod schema;
mod status;
mod tasks;
mod validate;

use std::ffi::OsString;
use std::io::{Read, Write};
use std::path::PathBuf;

use clap::{Parser, Subcommand};

use crate::context::Ctx;
use crate::env::Env;
use crate::error::{Error, Result};

/// Keeps coding agents' task state (task lists, progress logs, checkpoints, retry counters)
/// correct, durable and resumable. Run by Claude Code as a hook.
#[derive(Debug, Parser)]
#[command(name = "taskhook", version, about, max_term_width = 100)]
pub struct Cli {
    /// Project folder (else TASKHOOK_PROJECT_DIR, the payload's cwd walked up to a folder with
    /// .claude/ or .git, CLAUDE_PROJECT_DIR, the current folder).
    #[arg(long, global = true, value_name = "DIR")]
    pub project_dir: Option<PathBuf>,
    /// Home folder (else HOME).
    #[arg(long, global = true, value_name = "DIR")]
    pub home: Option<PathBuf>,
    #[command(subcommand)]
    pub command: Command,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Read one Claude Code hook payload on stdin, act, print the decision (what settings.json runs).
    Hook,
    /// Feed captured payloads through the same code as `hook`; one JSON result line each.
    Replay(replay::Args),
    /// Show every store found for this project.
    Status(status::Args),
    /// Do what SessionStart does (reconcile, stale detection, clean-up), on demand.
    Reconcile(reconcile::Args),
    /// Check every state file against its schema; exit 1 if any is invalid.
    Validate(validate::Args),
    /// Restore a store from what its layout keeps (checkpoints; a task list keeps every task
    /// that validates); --dry-run shows what would be kept and dropped.
    Recover(recover::Args),
    /// Add (or remove) taskhook's registrations in .claude/settings.json.
    Install(install::Args),
    /// Print the embedded JSON Schemas.
    Schema(schema::Args),
    /// Seed 003's iterative stores: new, status, signal, guardrail, archive.
    Iterative(iterative::Args),
    /// Seed 002's task list: `tasks write` (TodoWrite) and `tasks read` (TodoRead).
    Tasks(tasks::Args),
}

/// Standard streams, injected so the whole CLI can run in-process.
pub struct Io<'a> {
    pub stdin: &'a mut dyn Read,
    /// Whether stdin is an interactive terminal (no payload will ever arrive).
    pub stdin_is_terminal: bool,
    pub stdout: &'a mut dyn Write,
    pub stderr: &'a mut dyn Write,
}

/// The process entry point: parse, run, map to an exit code. No panic reaches the user.
pub fn main() -> std::process::ExitCode {
    std::panic::set_hook(Box::new(|info| {
        let msg = crate::error::one_line(&info.to_string());
        let _ = writeln!(std::io::stderr(), "taskhook: internal error: {msg}");
    }));
    let env = Env::from_process();
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let code = std::panic::catch_unwind(|| {
        let (mut i, mut o, mut e) = (std::io::stdin(), std::io::stdout(), std::io::stderr());
        let stdin_is_terminal = std::io::IsTerminal::is_terminal(&i);
        let mut io = Io {
            stdin: &mut i,
            stdin_is_terminal,
            stdout: &mut o,
            stderr: &mut e,
        };
        run(std::env::args_os(), env, cwd, &mut io)
    })
    .unwrap_or(crate::hook::EXIT_ERROR);
    std::process::ExitCode::from(code)
}

/// Runs the CLI with explicit arguments, environment, folder and streams; returns the exit code.
pub fn run(
    args: impl IntoIterator<Item = OsString>,
    env: Env,
    cwd: PathBuf,
    io: &mut Io<'_>,
) -> u8 {
    let args: Vec<OsString> = args.into_iter().collect();
    // The hot path: `taskhook hook` exactly as settings.json runs it (exec form, no flags)
    // skips building clap's command tree, which costs more than the rest of a no-op event.
    if args.len() == 2 && args[1] == "hook" {
        let cli = Cli {
            project_dir: None,
            home: None,
            command: Command::Hook,
        };
        return finish_run(dispatch(cli, env, cwd, io), io);
    }
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            use clap::error::ErrorKind::{DisplayHelp, DisplayVersion};
            if matches!(e.kind(), DisplayHelp | DisplayVersion) {
                let text = e.to_string();
                let _ = write!(io.stdout, "{}", text.trim_end());
                let _ = writeln!(io.stdout);
                return 0;
            }
            let text = e.to_string();
            let first = text.lines().next().unwrap_or("invalid arguments");
            let first = first.strip_prefix("error: ").unwrap_or(first);
            let _ = writeln!(
                io.stderr,
                "taskhook: {} (see taskhook --help)",
                crate::error::one_line(first)
            );
            return crate::hook::EXIT_ERROR;
        }
    };
    finish_run(dispatch(cli, env, cwd, io), io)
}

/// Maps a command's result to its exit code, printing an error as one line.
fn finish_run(result: Result<u8>, io: &mut Io<'_>) -> u8 {
    match result {
        Ok(code) => code,
        Err(e) => {
            let _ = writeln!(io.stderr, "taskhook: {}", e.one_line());
            crate::hook::EXIT_ERROR
        }
    }
}

fn dispatch(cli: Cli, env: Env, cwd: PathBuf, io: &mut Io<'_>) -> Result<u8> {
    let dry_run = match &cli.command {
        Command::Replay(a) => a.dry_run,
        Command::Reconcile(a) => a.dry_run,
        Command::Install(a) => a.dry_run,
        Command::Recover(a) => a.dry_run,
        _ => false,
    };
    let cx = Ctx::new(env, cli.project_dir, cli.home, cwd, dry_run)?;
    match cli.command {
        Command::Hook if io.stdin_is_terminal => Err(Error::Usage(
            "`taskhook hook` reads one hook payload on stdin; pipe one in (taskhook hook < payload.json)".into(),
        )),
        Command::Hook => hook::run(&cx, io),
        Command::Replay(a) => replay::run(&cx, a, io),
        Command::Status(a) => status::run(&cx, a, io),
        Command::Reconcile(a) => reconcile::run(&cx, a, io),
        Command::Validate(a) => validate::run(&cx, a, io),
        Command::Recover(a) => recover::run(&cx, a, io),
        Command::Install(a) => install::run(&cx, a, io),
        Command::Schema(a) => schema::run(a, io),
        Command::Iterative(a) => iterative::run(&cx, a, io),
        Command::Tasks(a) => tasks::run(&cx, a, io),
    }
}

/// Writes a line to stdout, treating a closed pipe as success.
pub(crate) fn out(io: &mut Io<'_>, text: &str) -> Result<()> {
    match writeln!(io.stdout, "{text}") {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(Error::io("write", "stdout", e)),
    }
}

/// Writes a value as one line of JSON.
pub(crate) fn out_json(io: &mut Io<'_>, v: &impl serde::Serialize) -> Result<()> {
    let text = serde_json::to_string(v).unwrap_or_else(|_| "null".into());
    out(io, &text)
}
