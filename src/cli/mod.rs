//! The command line: parse with clap, call the library, print. One file per command, each
//! with its `Args` struct and a `run` function; output goes to injected writers.

mod agent;
mod cdd;
mod completions;
mod demo;
mod doctor;
mod execute;
mod hook;
mod install;
mod iterative;
mod log;
mod man;
mod projects;
mod reconcile;
mod recover;
mod replay;
mod schema;
mod status;
mod statusline;
mod sync;
mod tasks;
mod validate;

use std::ffi::OsString;
use std::io::{Read, Write};
use std::path::PathBuf;

use clap::{Parser, Subcommand};

use crate::context::Ctx;
use crate::engine::agent::Verb;
use crate::env::Env;
use crate::error::{Error, Result};

/// Keeps coding agents' task state (task lists, progress logs, checkpoints, retry counters)
/// correct, durable and resumable. Run by Claude Code as a hook.
#[derive(Debug, Parser)]
#[command(
    name = "taskhook",
    version,
    about,
    max_term_width = 100,
    arg_required_else_help = true,
    after_help = "Get started: `cd my-project && taskhook install`, then start a new Claude Code \
                  session. Bind a subagent to a task with <task>T1</task> in its prompt; it \
                  reports with <signal>T1_DONE</signal> (or T1_FAILED: why, T1_BLOCKED: why)."
)]
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
    /// Read one Claude Code hook payload on stdin, act, print the decision (what Claude Code runs).
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
    /// Register taskhook's hooks in Claude Code's settings, or remove them.
    ///
    /// Edits this project's .claude/settings.json (--local: .claude/settings.local.json;
    /// --user: your user settings), keeping everything of yours and its formatting.
    Install(install::Args),
    /// Print the embedded JSON Schemas of the state files.
    Schema(schema::Args),
    /// Iterative loops: a task worked in passes until a subagent signals it done.
    ///
    /// Each loop lives in .claude/iterative/SLUG/ with a progress log and guardrails that every
    /// pass reads first.
    Iterative(iterative::Args),
    /// Claude Code's task list, kept durable with dependencies: write and read it.
    ///
    /// The list is ~/.claude/tasks/LIST/tasks.json; taskhook mirrors Claude Code's own task
    /// tools into it and refuses a completion whose dependencies are not done.
    Tasks(tasks::Args),
    /// Projects: a tree of tasks run by subagents, with a progress log, velocity and checkpoints.
    ///
    /// Each project lives in .claude/projects/ID/ (project.json, tasks.json, progress/log.md,
    /// checkpoints/); hooks start and finish its tasks as subagents launch and signal.
    Projects(projects::Args),
    /// Show the journal of what taskhook changed and replied, event by event.
    Log(log::Args),
    /// Print one line for Claude Code's status line (reads its status-line JSON on stdin).
    Statusline(statusline::Args),
    /// A 30-second tour on a scratch project: every layout, real payloads, what changed.
    Demo(demo::Args),
    /// Check the set-up: registrations, the binary on PATH, every store, the environment.
    Doctor(doctor::Args),
    /// Print a shell completion script (bash, zsh, fish, powershell, elvish).
    Completions(completions::Args),
    /// Print the man page (of taskhook, or of one command).
    Man(man::Args),
    /// The cdd workspace (ordered task files moved between status folders): init, import,
    /// next, start, done, fail, escalate, continue, list, stats.
    Cdd(cdd::Args),
    /// Runs of tasks in layers by parallel subagents, with retries, verification and a merge
    /// queue: init, status, start, done, fail, merged, resume, reset-task, reset, metrics.
    Execute(execute::Args),
    /// The next unit to work on, across every store of the project (what it is, why, and the
    /// commands to claim, finish or fail it).
    Next(agent::NextArgs),
    /// Everything needed to do one unit: description, files, dependencies, attempts, claim.
    Show(agent::ShowArgs),
    /// Take a unit for this session (the layout's own start); refused when it is not ready or
    /// another session holds it.
    #[command(
        after_help = "Example:\n  taskhook claim web/T1\n  taskhook claim web/T1 --offline   # with sync on: this machine only, pushed later"
    )]
    Claim(agent::ClaimArgs),
    /// Renew the lease on a unit you hold (hook events of your session renew it by themselves).
    #[command(after_help = "Example:\n  taskhook heartbeat web/T1")]
    Heartbeat(agent::UnitArgs),
    /// Finish a unit: exactly what its <signal>ID_DONE</signal> does in its layout.
    Done(agent::DoneArgs),
    /// Fail a unit with a reason: exactly what <signal>ID_FAILED: reason</signal> does.
    Fail(agent::FailArgs),
    /// Give a unit back: ready again, history kept, no attempt or failure counted.
    #[command(after_help = "Example:\n  taskhook release web/T1")]
    Release(agent::UnitArgs),
    /// Team sync over git: an op log on refs/taskhook/ops of the project's remote (init,
    /// status; alone: fetch, apply, push).
    Sync(sync::Args),
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
    crate::store::fs::ignore_file_size_signal();
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
        return finish_run(dispatch(cli, env, cwd, &[], io), io);
    }
    let cli = match Cli::try_parse_from(args.iter()) {
        Ok(cli) => cli,
        Err(e) => {
            use clap::error::ErrorKind::{
                DisplayHelp, DisplayHelpOnMissingArgumentOrSubcommand, DisplayVersion,
            };
            // `taskhook` alone (or `taskhook tasks`) prints the help, exit 0, like `--help`.
            if matches!(
                e.kind(),
                DisplayHelp | DisplayVersion | DisplayHelpOnMissingArgumentOrSubcommand
            ) {
                let text = e.to_string();
                let _ = write!(io.stdout, "{}", text.trim_end());
                let _ = writeln!(io.stdout);
                return 0;
            }
            let _ = writeln!(io.stderr, "taskhook: {}", usage_error_line(&e.to_string()));
            return crate::hook::EXIT_ERROR;
        }
    };
    finish_run(dispatch(cli, env, cwd, &args, io), io)
}

/// clap's error in one line: the error itself, then its tips ("a similar subcommand exists:
/// 'status'"), then where to read more.
fn usage_error_line(text: &str) -> String {
    let first = text.lines().next().unwrap_or("invalid arguments");
    let mut line = first.strip_prefix("error: ").unwrap_or(first).to_string();
    for tip in text.lines().filter_map(|l| l.trim().strip_prefix("tip: ")) {
        line.push_str("; ");
        line.push_str(tip);
    }
    line.push_str(" (see taskhook --help)");
    crate::error::one_line(&line)
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

/// The words of a layout command as an op records them: the command line without the program
/// and the global flags; `None` when one is not UTF-8.
fn command_words(args: &[OsString]) -> Option<Vec<String>> {
    let mut out = Vec::new();
    let mut skip = false;
    for a in args.iter().skip(1) {
        let a = a.to_str()?;
        if skip {
            skip = false;
            continue;
        }
        if a == "--project-dir" || a == "--home" {
            skip = true;
            continue;
        }
        if a.starts_with("--project-dir=") || a.starts_with("--home=") {
            continue;
        }
        out.push(a.to_string());
    }
    Some(out)
}

fn dispatch(cli: Cli, env: Env, cwd: PathBuf, args: &[OsString], io: &mut Io<'_>) -> Result<u8> {
    let layout_command = matches!(
        &cli.command,
        Command::Projects(_) | Command::Iterative(_) | Command::Cdd(_)
    ) || matches!(&cli.command, Command::Execute(a) if !a.dry_run());
    if layout_command {
        let cx = Ctx::new(env, cli.project_dir, cli.home, cwd, false)?;
        cx.store.check_env()?;
        let code = run_command(&cx, cli.command, io)?;
        if code == 0 {
            sync::after_layout_command(&cx, command_words(args), io);
        }
        return Ok(code);
    }
    dispatch_plain(cli, env, cwd, io)
}

fn run_command(cx: &Ctx, command: Command, io: &mut Io<'_>) -> Result<u8> {
    match command {
        Command::Iterative(a) => iterative::run(cx, a, io),
        Command::Cdd(a) => cdd::run(cx, a, io),
        Command::Projects(a) => projects::run(cx, a, io),
        Command::Execute(a) => execute::run(cx, a, io),
        _ => Ok(0),
    }
}

fn dispatch_plain(cli: Cli, env: Env, cwd: PathBuf, io: &mut Io<'_>) -> Result<u8> {
    let dry_run = match &cli.command {
        Command::Replay(a) => a.dry_run,
        Command::Reconcile(a) => a.dry_run,
        Command::Recover(a) => a.dry_run,
        Command::Install(a) => a.dry_run,
        Command::Execute(a) => a.dry_run(),
        _ => false,
    };
    let cx = Ctx::new(env, cli.project_dir, cli.home, cwd, dry_run)?;
    // `hook`, `replay` and `statusline` (which Claude Code runs) report a bad TASKHOOK_NOW /
    // TASKHOOK_LOCK_TIMEOUT only where it is used (an event that touches nothing never fails
    // on it); the other commands, at once.
    if !matches!(
        cli.command,
        Command::Hook
            | Command::Replay(_)
            | Command::Statusline(_)
            | Command::Schema(_)
            | Command::Demo(_)
    ) {
        cx.store.check_env()?;
    }
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
        Command::Log(a) => log::run(&cx, a, io),
        Command::Statusline(a) => statusline::run(&cx, a, io),
        Command::Demo(a) => demo::run(a, io),
        Command::Doctor(a) => doctor::run(&cx, a, io),
        Command::Completions(a) => completions::run(a, io),
        Command::Man(a) => man::run(a, io),
        Command::Cdd(a) => cdd::run(&cx, a, io),
        Command::Projects(a) => projects::run(&cx, a, io),
        Command::Execute(a) => execute::run(&cx, a, io),
        Command::Next(a) => agent::next(&cx, a, io),
        Command::Show(a) => agent::show(&cx, a, io),
        Command::Claim(a) => agent::claim(&cx, &a, io),
        Command::Heartbeat(a) => agent::act(&cx, &a.unit, Verb::Heartbeat, a.force, a.json, io),
        Command::Done(a) => agent::act(
            &cx,
            &a.unit,
            Verb::Done(a.note.as_deref()),
            a.force,
            a.json,
            io,
        ),
        Command::Fail(a) => agent::act(&cx, &a.unit, Verb::Fail(&a.reason), a.force, a.json, io),
        Command::Release(a) => agent::act(&cx, &a.unit, Verb::Release, a.force, a.json, io),
        Command::Sync(a) => sync::run(&cx, a, io),
    }
}

/// Writes a line to stdout, treating a closed pipe as success. The text may hold what a
/// repository's files hold (titles, ids, reasons), so every control character but newline and
/// tab, and every bidirectional-text control, is shown escaped ([`crate::display::text`]).
pub(crate) fn out(io: &mut Io<'_>, text: &str) -> Result<()> {
    out_styled(io, &crate::display::text(text))
}

/// Writes a line as it is: only for a line whose data was made safe field by field
/// ([`crate::display::line`]) and which carries taskhook's own styles (`status` in colour).
pub(crate) fn out_styled(io: &mut Io<'_>, text: &str) -> Result<()> {
    match writeln!(io.stdout, "{text}") {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(Error::io("write", "stdout", e)),
    }
}

/// Writes a value as one line of JSON (the characters serde_json leaves raw in strings
/// escaped: [`crate::display::json_text`]).
pub(crate) fn out_json(io: &mut Io<'_>, v: &impl serde::Serialize) -> Result<()> {
    let text = serde_json::to_string(v).unwrap_or_else(|_| "null".into());
    out_json_text(io, &text)
}

/// Writes one line of JSON text (`log --json`), made safe the same way.
pub(crate) fn out_json_text(io: &mut Io<'_>, text: &str) -> Result<()> {
    out_styled(io, &crate::display::json_text(text))
}

/// Writes one line to stderr, folded and escaped ([`crate::error::one_line`]).
pub(crate) fn err(io: &mut Io<'_>, text: &str) {
    let _ = writeln!(io.stderr, "{}", crate::error::one_line(text));
}
