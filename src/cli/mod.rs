//! The command line: parse with clap, call the library, print. One file per command, each
//! with its `Args` struct and a `run` function; output goes to injected writers.

mod agent;
mod board;
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
mod paint;
mod projects;
mod reconcile;
mod recover;
mod replay;
mod schema;
mod status;
mod statusline;
mod sync;
mod tasks;
mod teach;
mod validate;

use std::ffi::OsString;
use std::io::{Read, Write};
use std::path::PathBuf;

use clap::{Parser, Subcommand};

pub use teach::command;

use crate::context::Ctx;
use crate::engine::agent::Verb;
use crate::env::Env;
use crate::error::{Error, Result};

/// What the top-level `--help` (and the man page) says after the commands: how to start, and
/// the exit statuses.
const AFTER_HELP: &str = "\
Get started: `cd my-project && taskhook install`, then start a new Claude Code session. Bind a \
subagent to a task with <task>T1</task> in its prompt; it reports with <signal>T1_DONE</signal> \
(or T1_FAILED: why, T1_BLOCKED: why).

Exit status: 0 done (for `hook`: the event was handled, decisions included); 1 refused or \
failed, with one `taskhook: ...` line on stderr (for `doctor`, `validate` and `reconcile`: \
something needs action; for the cdd verbs: {\"success\":false,...} on stdout); 2 a usage \
error, with what is wrong and the usage on stderr (and for `hook`: a refused TaskCompleted, as \
Claude Code's protocol wants).";

/// Keeps coding agents' task state (task lists, progress logs, checkpoints, retry counters)
/// correct, durable and resumable. Run by Claude Code as a hook.
#[derive(Debug, Parser)]
#[command(
    name = "taskhook",
    version,
    about,
    max_term_width = 100,
    arg_required_else_help = true,
    after_help = AFTER_HELP
)]
pub struct Cli {
    /// Project folder (else TASKHOOK_PROJECT_DIR, the payload's cwd walked up to a folder with
    /// .claude/ or .git, CLAUDE_PROJECT_DIR, the current folder).
    #[arg(long, global = true, value_name = "DIR")]
    pub project_dir: Option<PathBuf>,
    /// Home folder (else HOME).
    #[arg(long, global = true, value_name = "DIR")]
    pub home: Option<PathBuf>,
    /// Colour in human output: auto (on a terminal, unless NO_COLOR is set), always, never.
    #[arg(long, global = true, value_name = "WHEN", default_value = "auto", value_parser = ["auto", "always", "never"])]
    pub color: String,
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
    Claim(agent::ClaimArgs),
    /// Renew the lease on a unit you hold (hook events of your session renew it by themselves).
    Heartbeat(agent::UnitArgs),
    /// Finish a unit: exactly what its <signal>ID_DONE</signal> does in its layout.
    Done(agent::DoneArgs),
    /// Fail a unit with a reason: exactly what <signal>ID_FAILED: reason</signal> does.
    Fail(agent::FailArgs),
    /// Give a unit back: ready again, history kept, no attempt or failure counted.
    Release(agent::UnitArgs),
    /// The work at a glance: every store's units in five columns (ready, in progress, waiting
    /// for a person, blocked, done), full screen and live; plain text without a terminal; one
    /// self-contained HTML page with --html.
    Board(board::BoardArgs),
    /// The dependency graph of every store, as Graphviz DOT, a Mermaid flowchart, or JSON.
    Graph(board::GraphArgs),
    /// Team sync over git: an op log on refs/taskhook/ops of the project's remote (init,
    /// status; alone: fetch, apply, push).
    Sync(sync::Args),
}

/// Standard streams, injected so the whole CLI can run in-process.
pub struct Io<'a> {
    pub stdin: &'a mut dyn Read,
    /// Whether stdin is an interactive terminal (no payload will ever arrive).
    pub stdin_is_terminal: bool,
    /// Whether human output may be coloured: at start, whether stdout is a terminal; the
    /// command line's `--color` and `NO_COLOR` then decide (see `paint`).
    pub color: bool,
    pub stdout: &'a mut dyn Write,
    pub stderr: &'a mut dyn Write,
}

/// The process entry point: parse, run, map to an exit code. No panic reaches the user.
pub fn main() -> std::process::ExitCode {
    crate::store::fs::ignore_file_size_signal();
    keep_freed_memory();
    std::panic::set_hook(Box::new(|info| {
        let msg = crate::error::one_line(&info.to_string());
        let _ = writeln!(std::io::stderr(), "taskhook: internal error: {msg}");
    }));
    let env = Env::from_process();
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let code = std::panic::catch_unwind(|| {
        let (mut i, mut o, mut e) = (std::io::stdin(), std::io::stdout(), std::io::stderr());
        let stdin_is_terminal = std::io::IsTerminal::is_terminal(&i);
        let color = std::io::IsTerminal::is_terminal(&o);
        let mut io = Io {
            stdin: &mut i,
            stdin_is_terminal,
            color,
            stdout: &mut o,
            stderr: &mut e,
        };
        run(std::env::args_os(), env, cwd, &mut io)
    })
    .unwrap_or(crate::hook::EXIT_ERROR);
    // The process ends here: what this invocation remembered is left to the system to take
    // back rather than freed piece by piece (tens of thousands of tasks at scale).
    crate::store::parsed::leave();
    std::process::ExitCode::from(code)
}

/// Has the allocator keep what a short-lived process frees for its next allocation: a large
/// buffer (a state file read whole, megabytes at scale) then comes from the heap rather than
/// from pages mapped afresh and given back each time, each page touched again costing a fault.
/// Called once at start.
fn keep_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: sets two documented allocator parameters before any allocation of consequence
    // and before any thread exists; the allocator only reads them on later calls.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 * 1024 * 1024);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 128 * 1024 * 1024);
    }
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
            color: "never".into(),
            command: Command::Hook,
        };
        return finish_run(dispatch(cli, env, cwd, &[], io), io);
    }
    if let Some(shell) = env.get(crate::env::TASKHOOK_COMPLETE) {
        return teach::complete(shell, &args, &cwd, io);
    }
    let parsed = teach::command()
        .try_get_matches_from(&args)
        .and_then(|m| <Cli as clap::FromArgMatches>::from_arg_matches(&m));
    let cli = match parsed {
        Ok(cli) => cli,
        Err(e) => return clap_error(&e, &args, io),
    };
    finish_run(dispatch(cli, env, cwd, &args, io), io)
}

/// Exit status of a usage error (a command line taskhook cannot run), as clap, cargo and gh
/// use it; 1 stays for refusals and failures.
pub const EXIT_USAGE: u8 = 2;

/// A command line clap did not accept: help and version go to stdout with exit 0; anything
/// else is a usage error, clap's whole message on stderr (what is wrong, the tip, the usage),
/// exit 2. Under `taskhook cdd` the orchestrator also gets its one JSON object on stdout.
fn clap_error(e: &clap::Error, args: &[OsString], io: &mut Io<'_>) -> u8 {
    use clap::error::ErrorKind::{
        DisplayHelp, DisplayHelpOnMissingArgumentOrSubcommand, DisplayVersion,
    };
    let text = e.to_string();
    // `taskhook` alone (or `taskhook tasks`) prints the help, exit 0, like `--help`.
    if matches!(
        e.kind(),
        DisplayHelp | DisplayVersion | DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        let _ = writeln!(io.stdout, "{}", text.trim_end());
        return 0;
    }
    if command_word(args).as_deref() == Some("cdd") && !args.iter().any(|a| a == "--human") {
        let _ = out_json(io, &cdd::usage_failure(&usage_error_line(&text)));
    }
    let _ = writeln!(io.stderr, "{}", text.trim_end());
    EXIT_USAGE
}

/// The first word of a command line that is not a global flag or its value: the command.
fn command_word(args: &[OsString]) -> Option<String> {
    let mut words = args.iter().skip(1).map(|a| a.to_string_lossy());
    while let Some(w) = words.next() {
        if ["--project-dir", "--home"].contains(&w.as_ref()) {
            words.next();
        } else if !w.starts_with('-') {
            return Some(w.into_owned());
        }
    }
    None
}

/// clap's error in one line: the error itself, then its tips ("a similar subcommand exists:
/// 'start'"), then where to read more.
fn usage_error_line(text: &str) -> String {
    let mut parts = text
        .lines()
        .map(str::trim)
        .take_while(|l| !l.starts_with("Usage:"))
        .filter(|l| !l.is_empty());
    let first = parts.next().unwrap_or("invalid arguments");
    let mut line = first.strip_prefix("error: ").unwrap_or(first).to_string();
    for more in parts {
        line.push_str(if line.ends_with(':') { " " } else { "; " });
        line.push_str(more.strip_prefix("tip: ").unwrap_or(more));
    }
    line.push_str(" (see taskhook cdd --help)");
    crate::error::one_line(&line)
}

/// Maps a command's result to its exit code, printing an error as one line.
fn finish_run(result: Result<u8>, io: &mut Io<'_>) -> u8 {
    match result {
        Ok(code) => code,
        Err(e) => {
            let _ = writeln!(io.stderr, "taskhook: {}", e.one_line());
            match e {
                Error::Usage(_) => EXIT_USAGE,
                _ => crate::hook::EXIT_ERROR,
            }
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
    io.color = match cli.color.as_str() {
        "always" => true,
        "never" => false,
        _ => io.color && env.get(crate::env::NO_COLOR).is_none(),
    };
    // A layout command that changed its store (exit 0, not a dry run) is also an op for team
    // sync ([`sync::after_layout_command`]).
    let layout_command = matches!(
        &cli.command,
        Command::Projects(_) | Command::Iterative(_) | Command::Cdd(_)
    ) || matches!(&cli.command, Command::Execute(a) if !a.dry_run());
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
        cx.check_project_override()?;
    }
    // The commands that create a project's stores refuse the home folder (its .claude/ is
    // Claude Code's own).
    if matches!(
        cli.command,
        Command::Iterative(_) | Command::Projects(_) | Command::Execute(_)
    ) {
        cx.project_for_writes()?;
    }
    let code = match cli.command {
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
        Command::Board(a) => board::run_board(&cx, a, io),
        Command::Graph(a) => board::run_graph(&cx, a, io),
        Command::Sync(a) => sync::run(&cx, a, io),
    }?;
    if layout_command && code == 0 {
        sync::after_layout_command(&cx, command_words(args), io);
    }
    Ok(code)
}

/// Writes a line to stdout, treating a closed pipe as success. The text may hold what a
/// repository's files hold (titles, ids, reasons), so every control character but newline and
/// tab, and every bidirectional-text control, is shown escaped ([`crate::display::text`]).
pub(crate) fn out(io: &mut Io<'_>, text: &str) -> Result<()> {
    out_styled(io, &crate::display::text(text))
}

/// Writes a line as it is but for taskhook's own styles ([`paint::apply`]): only for a line
/// whose data was made safe field by field ([`crate::display::line`]).
pub(crate) fn out_styled(io: &mut Io<'_>, text: &str) -> Result<()> {
    let text = paint::apply(text);
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
