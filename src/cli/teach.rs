//! The command tree as a person meets it: [`Cli`]'s, with an example under every command's
//! `--help` (and so in its man page), and value completion of store names, layouts, schemas and
//! commands for the shells (clap_complete's dynamic completion: the shell asks the binary).
//!
//! Kept in one table here rather than on each command's attributes, so the commands' files
//! stay about what they do; a test walks the tree and fails on a command without an example,
//! and runs every example through the parser.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{Command, CommandFactory};
use clap_complete::engine::{ArgValueCandidates, CompletionCandidate};
use clap_complete::env::Shells;

use super::{Cli, Io};
use crate::context::Ctx;
use crate::env::Env;
use crate::layouts::registry;

/// The variable the shell scripts set when they ask the binary for completions.
pub const COMPLETE_VAR: &str = crate::env::TASKHOOK_COMPLETE;

/// Examples per command (by its path below `taskhook`), one command line each, `#` comments
/// after two spaces.
const EXAMPLES: &[(&str, &[&str])] = &[
    (
        "hook",
        &["taskhook hook < payload.json  # what Claude Code runs, one payload on stdin"],
    ),
    (
        "replay",
        &[
            "taskhook replay captured.jsonl --dry-run  # what it would change",
            "TASKHOOK_CAPTURE=/tmp/cap.jsonl claude  # record a session's payloads first",
        ],
    ),
    (
        "status",
        &[
            "taskhook status",
            "taskhook status --layout iterative --json",
        ],
    ),
    (
        "reconcile",
        &["taskhook reconcile --dry-run  # what the next session start would fix"],
    ),
    (
        "validate",
        &["taskhook validate", "taskhook validate --json"],
    ),
    (
        "recover",
        &["taskhook recover .claude/iterative/auth --dry-run  # what would be kept and dropped"],
    ),
    (
        "install",
        &[
            "cd my-project && taskhook install  # .claude/settings.json, shared through git",
            "taskhook install --local  # this machine only",
            "taskhook install --dry-run",
            "taskhook install --uninstall",
        ],
    ),
    (
        "schema",
        &[
            "taskhook schema iterative-state",
            "taskhook schema > schemas.json",
        ],
    ),
    (
        "iterative",
        &[
            "taskhook iterative new auth --task T1 --task T2",
            "taskhook iterative status",
        ],
    ),
    (
        "iterative new",
        &[
            "taskhook iterative new auth --task T1 --task T2 --goal 'Users can log in'",
            "taskhook iterative new survey --mode knowledge --task R1 --max-iterations 3",
        ],
    ),
    (
        "iterative status",
        &[
            "taskhook iterative status",
            "taskhook iterative status auth --json",
        ],
    ),
    (
        "iterative signal",
        &[
            "taskhook iterative signal auth T1 DONE",
            "taskhook iterative signal auth T2 BLOCKED 'needs the API key'",
        ],
    ),
    (
        "iterative guardrail",
        &[
            "taskhook iterative guardrail auth --when 'touching models' --problem 'migration \
           forgotten' --solution 'run the migration first'",
        ],
    ),
    (
        "iterative archive",
        &[
            "taskhook iterative archive auth",
            "taskhook iterative archive auth --force",
        ],
    ),
    (
        "iterative add",
        &["taskhook iterative add auth T3 --title 'Password reset' --depends T1"],
    ),
    (
        "iterative set-max",
        &["taskhook iterative set-max auth T2 8"],
    ),
    ("iterative reset", &["taskhook iterative reset auth T2"]),
    ("iterative unblock", &["taskhook iterative unblock auth T2"]),
    (
        "tasks",
        &[
            "taskhook tasks write --description 'Write the parser'",
            "taskhook tasks read",
        ],
    ),
    (
        "tasks write",
        &[
            "taskhook tasks write --id parse --description 'Write the parser'",
            "taskhook tasks write --id test --description 'Test it' --dependency parse",
            "taskhook tasks write --id parse --status completed",
        ],
    ),
    (
        "tasks read",
        &[
            "taskhook tasks read",
            "taskhook tasks read --status pending --include-completed",
        ],
    ),
    (
        "projects",
        &[
            "taskhook projects new web",
            "taskhook projects add web T1 --title 'Login page'",
        ],
    ),
    (
        "projects new",
        &["taskhook projects new web --name 'Web app' --phase design"],
    ),
    (
        "projects add",
        &[
            "taskhook projects add web T1 --title 'Login page' --estimate 90 --priority high",
            "taskhook projects add web T1.1 --title 'Form' --parent T1",
        ],
    ),
    ("projects start", &["taskhook projects start web T1"]),
    (
        "projects set",
        &[
            "taskhook projects set web T1 COMPLETE",
            "taskhook projects set web T2 BLOCKED --reason 'waits for design'",
        ],
    ),
    ("projects next", &["taskhook projects next web"]),
    (
        "projects log",
        &[
            "taskhook projects log web SYNC_TO_JIRA --task T1 --detail WEB-42",
            "taskhook projects log web ERROR --detail 'CI is down'",
        ],
    ),
    (
        "projects velocity",
        &["taskhook projects velocity web --json"],
    ),
    (
        "log",
        &[
            "taskhook log",
            "taskhook log --session 200ff393 --follow",
            "taskhook log --json",
        ],
    ),
    (
        "statusline",
        &["echo '{\"cwd\": \".\"}' | taskhook statusline  # what Claude Code's status line runs"],
    ),
    (
        "demo",
        &[
            "taskhook demo",
            "taskhook demo --keep  # look around afterwards",
        ],
    ),
    ("doctor", &["taskhook doctor", "taskhook doctor --json"]),
    (
        "completions",
        &[
            "taskhook completions bash > ~/.local/share/bash-completion/completions/taskhook",
            "taskhook completions zsh > ~/.zfunc/_taskhook",
        ],
    ),
    (
        "man",
        &[
            "taskhook man > taskhook.1",
            "taskhook man install > taskhook-install.1",
        ],
    ),
    (
        "cdd",
        &[
            "CDD_DIR=work taskhook cdd init",
            "taskhook cdd next --human",
        ],
    ),
    ("cdd init", &["CDD_DIR=work taskhook cdd init"]),
    (
        "cdd import",
        &[
            "taskhook cdd import",
            "taskhook cdd import plans/sprint-1/order.json",
        ],
    ),
    (
        "cdd next",
        &["taskhook cdd next", "taskhook cdd next --human"],
    ),
    ("cdd start", &["taskhook cdd start foo.md"]),
    ("cdd done", &["taskhook cdd done foo.md"]),
    (
        "cdd fail",
        &["taskhook cdd fail foo.md 'tests do not build'"],
    ),
    (
        "cdd escalate",
        &["taskhook cdd escalate bar.md 'needs deeper reasoning'"],
    ),
    ("cdd continue", &["taskhook cdd continue verify-core"]),
    (
        "cdd list",
        &["taskhook cdd list", "taskhook cdd list pending --human"],
    ),
    ("cdd stats", &["taskhook cdd stats --human"]),
    (
        "execute",
        &[
            "taskhook execute init docs/tasks/auth --layer 0-setup=L0-001,L0-002",
            "taskhook execute status",
        ],
    ),
    (
        "execute init",
        &[
            "taskhook execute init docs/tasks/auth --layer 0-setup=L0-001 --layer 1-core=L1-001",
            "taskhook execute init docs/tasks/auth --plan plan.json",
        ],
    ),
    (
        "execute status",
        &[
            "taskhook execute status",
            "taskhook execute status --store auth --json",
        ],
    ),
    ("execute start", &["taskhook execute start L0-001"]),
    (
        "execute stop",
        &["taskhook execute stop --reason \"the API is down\"  # launches refused until resume"],
    ),
    (
        "next",
        &[
            "taskhook next --json  # the unit to work on now, with the commands for it",
            "taskhook next --store web",
        ],
    ),
    ("show", &["taskhook show web/T1", "taskhook show T1 --json"]),
    (
        "claim",
        &[
            "taskhook claim web/T1",
            "taskhook claim web/T1 --offline  # with sync on: this machine only, pushed later",
        ],
    ),
    (
        "heartbeat",
        &["taskhook heartbeat web/T1  # hook events renew it by themselves"],
    ),
    (
        "done",
        &["taskhook done web/T1 --note \"parser and tests in src/parse.rs\""],
    ),
    (
        "fail",
        &["taskhook fail web/T1 --reason \"the API returns 500 on login\""],
    ),
    ("release", &["taskhook release web/T1"]),
    (
        "sync",
        &[
            "taskhook sync  # fetch, apply, push; say what changed",
            "taskhook sync --json",
        ],
    ),
    (
        "sync init",
        &[
            "taskhook sync init  # turn sync on, publish every store to origin",
            "taskhook sync init --remote upstream",
        ],
    ),
    (
        "sync status",
        &["taskhook sync status  # what is synced, what is not pushed yet (no network)"],
    ),
    ("execute done", &["taskhook execute done L0-001"]),
    (
        "execute fail",
        &["taskhook execute fail L0-001 --message 'tests red' --feedback 'fix the fixture'"],
    ),
    ("execute merged", &["taskhook execute merged L0-001"]),
    (
        "execute resume",
        &[
            "taskhook execute resume --dry-run",
            "taskhook execute resume",
        ],
    ),
    (
        "execute reset-task",
        &["taskhook execute reset-task L1-002"],
    ),
    ("execute reset", &["taskhook execute reset --all"]),
    ("execute metrics", &["taskhook execute metrics --json"]),
];

/// What the values of an argument are completed from.
#[derive(Debug, Clone, Copy)]
enum Values {
    /// The ids of this layout's stores in the project.
    Stores(&'static str),
    /// Every store's folder.
    StorePaths,
    /// The layouts' names.
    Layouts,
    /// The embedded schemas' names.
    Schemas,
    /// The commands' names.
    Commands,
    /// The units of every store, as `STORE/TASK`.
    Units,
}

/// Arguments completed with values (command path, argument id, values); a path ending in
/// `*` covers every subcommand below it.
const COMPLETED: &[(&str, &str, Values)] = &[
    ("iterative *", "slug", Values::Stores("iterative")),
    (
        "iterative new",
        "guardrails_from",
        Values::Stores("iterative"),
    ),
    ("projects *", "id", Values::Stores("projects")),
    ("execute", "store", Values::Stores("execute")),
    ("recover", "path", Values::StorePaths),
    ("status", "layout", Values::Layouts),
    ("schema", "name", Values::Schemas),
    ("man", "command", Values::Commands),
    ("show", "unit", Values::Units),
    ("claim", "unit", Values::Units),
    ("heartbeat", "unit", Values::Units),
    ("done", "unit", Values::Units),
    ("fail", "unit", Values::Units),
    ("release", "unit", Values::Units),
    ("next", "store", Values::Stores("")),
];

/// The command tree with examples and completers.
pub fn command() -> Command {
    let mut cmd = Cli::command();
    cmd = cmd.mut_subcommands(|c| decorate(c, ""));
    cmd
}

/// Adds the examples and completers of the command at `parent` + its name, and its children's.
fn decorate(c: Command, parent: &str) -> Command {
    let path = if parent.is_empty() {
        c.get_name().to_string()
    } else {
        format!("{parent} {}", c.get_name())
    };
    let mut c = c;
    if let Some((_, lines)) = EXAMPLES.iter().find(|(p, _)| *p == path) {
        let mut text = c
            .get_after_help()
            .map(|h| format!("{h}\n\n"))
            .unwrap_or_default();
        text.push_str("Examples:");
        for l in *lines {
            text.push_str("\n  ");
            text.push_str(l);
        }
        c = c.after_help(text);
    }
    for (at, id, values) in COMPLETED {
        let here = match at.strip_suffix(" *") {
            Some(group) => parent == group,
            None => path == *at,
        };
        if here {
            // In place: `mut_arg` would move the argument last, changing positional order.
            let values = *values;
            c = c.mut_args(|a| {
                if a.get_id() == *id {
                    a.add(ArgValueCandidates::new(move || candidates(values)))
                } else {
                    a
                }
            });
        }
    }
    let path_for_children = path.clone();
    c.mut_subcommands(move |s| decorate(s, &path_for_children))
}

/// The values of an argument, from the project in the current folder (or
/// `TASKHOOK_PROJECT_DIR`), read-only.
fn candidates(values: Values) -> Vec<CompletionCandidate> {
    match values {
        Values::Layouts => registry()
            .iter()
            .map(|l| CompletionCandidate::new(l.name()))
            .collect(),
        Values::Schemas => crate::store::schema::SCHEMAS
            .iter()
            .map(|s| CompletionCandidate::new(s.name).help(Some(s.describes.into())))
            .collect(),
        Values::Commands => Cli::command()
            .get_subcommands()
            .map(|c| CompletionCandidate::new(c.get_name()))
            .collect(),
        Values::Units => units()
            .into_iter()
            .map(|(r, help)| CompletionCandidate::new(r).help(Some(help.into())))
            .collect(),
        Values::Stores(layout) => stores(Some(layout).filter(|l| !l.is_empty()))
            .into_iter()
            .map(|(id, root)| {
                CompletionCandidate::new(id).help(Some(root.display().to_string().into()))
            })
            .collect(),
        Values::StorePaths => {
            let cwd = std::env::current_dir().unwrap_or_default();
            stores(None)
                .into_iter()
                .map(|(_, root)| {
                    let shown = root.strip_prefix(&cwd).unwrap_or(&root).to_path_buf();
                    CompletionCandidate::new(shown.into_os_string())
                })
                .collect()
        }
    }
}

/// Every unit of the project's stores as `STORE/TASK`, with its status and title.
fn units() -> Vec<(String, String)> {
    let cwd = std::env::current_dir().unwrap_or_default();
    let Ok(cx) = Ctx::new(Env::from_process(), None, None, cwd, true) else {
        return Vec::new();
    };
    let project = cx.project(None);
    let (found, _) = crate::engine::agent::stores(&cx, &project);
    found
        .iter()
        .flat_map(|f| {
            f.units.iter().map(move |u| {
                let help = match &u.title {
                    Some(t) => format!("{} {}", u.status, crate::display::line(t)),
                    None => u.status.clone(),
                };
                (crate::engine::agent::reference(&f.store.id, &u.id), help)
            })
        })
        .collect()
}

/// (id, folder) of the stores of `layout` (or of every layout) in the project.
fn stores(layout: Option<&str>) -> Vec<(String, PathBuf)> {
    let cwd = std::env::current_dir().unwrap_or_default();
    let Ok(cx) = Ctx::new(Env::from_process(), None, None, cwd, true) else {
        return Vec::new();
    };
    let project = cx.project(None);
    registry()
        .iter()
        .filter(|l| layout.is_none_or(|name| l.name() == name))
        .filter_map(|l| l.discover(&cx, &project).ok())
        .flatten()
        .map(|s| (s.id, s.root))
        .collect()
}

/// The registration script of a shell: it asks `taskhook` (found on PATH) for completions,
/// through [`COMPLETE_VAR`].
pub fn registration(shell: &str) -> Option<Vec<u8>> {
    let shells = Shells::builtins();
    let completer = shells.completer(shell)?;
    let mut buf = Vec::new();
    completer
        .write_registration(COMPLETE_VAR, "taskhook", "taskhook", "taskhook", &mut buf)
        .ok()?;
    Some(buf)
}

/// Answers a shell's completion request (`TASKHOOK_COMPLETE=SHELL taskhook -- WORDS…`).
pub fn complete(shell: &str, args: &[OsString], cwd: &std::path::Path, io: &mut Io<'_>) -> u8 {
    let shells = Shells::builtins();
    let Some(completer) = shells.completer(shell) else {
        let _ = writeln!(
            io.stderr,
            "taskhook: {COMPLETE_VAR}={shell:?} names no shell"
        );
        return super::EXIT_USAGE;
    };
    let words: Vec<OsString> = match args.iter().position(|a| a == "--") {
        Some(i) => args[i + 1..].to_vec(),
        None => Vec::new(),
    };
    let mut buf = Vec::new();
    let done = if words.is_empty() {
        completer.write_registration(COMPLETE_VAR, "taskhook", "taskhook", "taskhook", &mut buf)
    } else {
        completer.write_complete(&mut command(), words, Some(cwd), &mut buf)
    };
    if done.is_err() {
        return crate::hook::EXIT_ERROR;
    }
    let _ = io.stdout.write_all(&buf);
    0
}
