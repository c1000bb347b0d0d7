//! The hooks of seed 004 beyond a unit's step ([`super::lifecycle`]: launches and signals):
//!
//! - the main agent's Bash call whose `taskhook cdd next` (or the seed's `next.ts`) answered a
//!   stop halts it the same way; one running the seed's `continue.ts` lifts the halt;
//! - a subagent's Bash call that would move tasks is refused at PreToolUse: "only the
//!   orchestrator manipulates task state" (seed 004).
//!
//! Recognizing the commands ([`calls`]) is pure: it decides, for every Bash call, whether
//! anything beyond process start happens. A command counts when the line would run it
//! ([`crate::shell::programs`]), not when its text only mentions it; a line that cannot be
//! parsed counts what it mentions, on the safe side.

use std::borrow::Cow;

use serde_json::Value;

use super::model::{Next, Workspace, MAX_ORDER_BYTES};
use super::order::{self, Order};
use super::reconcile::sync_halts;
use super::Paths;
use crate::context::Ctx;
use crate::error::Result;
use crate::layouts::fact::Bash;
use crate::layouts::unit::Halt;
use crate::layouts::{Layout, Reaction, StoreRef};
use crate::shell::{self, base, quote, Unparsed};
use crate::store::{parse_json, schema};

/// The seed's reason for refusing a subagent's task command.
pub const OWNERSHIP: &str = "only the orchestrator manipulates task state";

/// One task command a Bash command line would run: `taskhook [--project-dir D] cdd VERB`, or
/// a script of the seed's `.claude/scripts/task/VERB.ts`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    /// The verb (`done`), or `""` when none follows `cdd`.
    pub verb: String,
    /// Whether it is the seed's script rather than taskhook.
    pub script: bool,
    /// The program and its words up to the verb's first operand, shell-quoted.
    pub text: String,
    /// Set when the command line could not be parsed, so this call is only mentioned in it
    /// (and counts, on the safe side): why.
    pub guessed: Option<Unparsed>,
}

impl Call {
    /// Whether running it can change task state (everything but next, list, stats and help).
    pub fn changes_state(&self) -> bool {
        let read_only = ["next", "list", "stats"].contains(&self.verb.as_str())
            || (!self.script && ["", "help", "--help", "-h"].contains(&self.verb.as_str()));
        !read_only
    }
}

/// Programs that run a script file given to them (`bun done.ts`, `npx tsx done.ts` once `npx`
/// is seen through, `deno run done.ts`, a shell given the file).
const RUNNERS: [&str; 16] = [
    "bun",
    "node",
    "nodejs",
    "deno",
    "tsx",
    "ts-node",
    "ts-node-esm",
    "esno",
    "esrun",
    "sucrase-node",
    "vite-node",
    "sh",
    "bash",
    "zsh",
    "dash",
    "ksh",
];

/// The verb of a seed script path (`.claude/scripts/task/done.ts` → `done`).
fn script_verb(word: &str) -> Option<&str> {
    let stem = word.strip_suffix(".ts")?;
    stem.contains("scripts/task/")
        .then(|| stem.rsplit('/').next().unwrap_or(stem))
}

/// A program's words up to `to` (included), shell-quoted.
fn shown(argv: &[String], to: usize) -> String {
    argv.iter()
        .take(to + 1)
        .map(|w| quote(w).into_owned())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The task command one program runs, if it runs one.
fn call_of(argv: &[String]) -> Option<Call> {
    let program = argv.first()?;
    // A program taskhook cannot see (`$TH cdd done x`, `"$(which taskhook)" cdd …`) followed
    // by `cdd` counts as taskhook.
    let dynamic = program.contains('$') && argv.get(1).is_some_and(|w| w == "cdd");
    if base(program) == "taskhook" || dynamic {
        let mut j = 1;
        while let Some(flag) = argv.get(j).filter(|f| f.starts_with('-')) {
            j += if flag.contains('=')
                || ["--help", "-h", "--version", "-V"].contains(&flag.as_str())
            {
                1
            } else {
                2
            };
        }
        if argv.get(j).is_none_or(|w| w != "cdd") {
            return None;
        }
        let k = (j + 1..argv.len()).find(|&k| !["--human", "--json"].contains(&argv[k].as_str()));
        let verb = k.map_or("", |k| argv[k].as_str());
        return Some(Call {
            verb: verb.to_string(),
            script: false,
            text: shown(argv, k.map_or(j, |k| k + 1)),
            guessed: None,
        });
    }
    let at = if script_verb(program).is_some() {
        Some(0)
    } else if RUNNERS.contains(&base(program)) {
        argv.iter().position(|w| script_verb(w).is_some())
    } else {
        None
    }?;
    Some(Call {
        verb: script_verb(&argv[at]).unwrap_or_default().to_string(),
        script: true,
        text: shown(argv, at + 1),
        guessed: None,
    })
}

/// Whether a command line mentions a task command at all (quotes and backslashes aside); the
/// cheap test every Bash call passes through.
fn mentions(command: &str) -> bool {
    let plain: Cow<'_, str> = if command.contains(['\'', '"', '\\']) {
        Cow::Owned(command.replace(['\'', '"', '\\'], ""))
    } else {
        Cow::Borrowed(command)
    };
    plain.contains("cdd") || plain.contains("scripts/task/") || command.contains("$'")
}

/// The task commands a Bash command line would run: each program it runs (seen through
/// operators, wrappers and shells: [`shell::programs`]) that is taskhook running `cdd VERB`,
/// or that runs a script of `.claude/scripts/task/` (the script itself, or `bun`, `node`,
/// `deno`, `tsx`, … given it). Text that only mentions one (a commit message, an `echo`, a
/// `cat` or `grep` of the script) is none. A line that cannot be parsed (an unbalanced quote)
/// falls back to the commands it mentions, each marked `guessed`.
pub fn calls(command: &str) -> Vec<Call> {
    if !mentions(command) {
        return Vec::new();
    }
    match shell::programs(command) {
        Ok(programs) => programs.iter().filter_map(|argv| call_of(argv)).collect(),
        Err(why) => mentioned(command)
            .into_iter()
            .map(|c| Call {
                guessed: Some(why),
                ..c
            })
            .collect(),
    }
}

/// The task commands a command line mentions, found by splitting it on quotes and shell
/// operators (a command that cannot be parsed).
fn mentioned(command: &str) -> Vec<Call> {
    let words: Vec<&str> = command
        .split(|c: char| c.is_whitespace() || "'\"`;&|()<>{}$".contains(c))
        .filter(|w| !w.is_empty())
        .collect();
    let mut out = Vec::new();
    for (i, w) in words.iter().enumerate() {
        if base(w) == "taskhook" {
            let mut j = i + 1;
            while let Some(flag) = words.get(j).filter(|f| f.starts_with("--")) {
                j += if flag.contains('=') { 1 } else { 2 };
            }
            if words.get(j) == Some(&"cdd") {
                let verb = words.get(j + 1).copied().unwrap_or("");
                let end = (j + 3).min(words.len());
                out.push(Call {
                    verb: verb.to_string(),
                    script: false,
                    text: words[i..end].join(" "),
                    guessed: None,
                });
            }
        } else if let Some(verb) = script_verb(w) {
            out.push(Call {
                verb: verb.to_string(),
                script: true,
                text: w.to_string(),
                guessed: None,
            });
        }
    }
    out
}

/// The stop a `next` printed: `{"success":true,"data":{"type":"stop","stop":ID,…}}` on a line
/// of stdout (or as the whole of it).
pub fn answered_stop(stdout: &str) -> Option<String> {
    let stop_of = |v: Value| {
        (v["success"] == true && v["data"]["type"] == "stop")
            .then(|| v["data"]["stop"].as_str().map(str::to_string))
            .flatten()
    };
    serde_json::from_str::<Value>(stdout.trim())
        .ok()
        .and_then(stop_of)
        .or_else(|| {
            stdout
                .lines()
                .filter(|l| l.contains("\"stop\""))
                .filter_map(|l| serde_json::from_str::<Value>(l.trim()).ok())
                .find_map(stop_of)
        })
}

/// The reason a stop is never passed by an agent.
pub const PERSON: &str = "a cdd stop is a checkpoint for a person";

/// Whether a Bash fact concerns this layout (pure): a subagent's task command, or any agent's
/// `continue` (before they run); the main agent's `next` that answered a stop (after).
pub fn wants_bash(b: &Bash<'_>) -> bool {
    match (b.stdout, b.agent_id) {
        (None, Some(_)) => calls(b.command).iter().any(Call::changes_state),
        (None, None) => calls(b.command).iter().any(|c| c.verb == "continue"),
        (Some(out), None) => {
            // It ran: only what it really ran counts.
            let cs: Vec<Call> = calls(b.command)
                .into_iter()
                .filter(|c| c.guessed.is_none())
                .collect();
            cs.iter().any(|c| c.script && c.verb == "continue")
                || (cs.iter().any(|c| c.verb == "next") && answered_stop(out).is_some())
        }
        _ => false,
    }
}

/// The key of the halt at a stop (`cdd:<workspace>:<stop>`).
pub fn halt_key(paths: &Paths, stop: &str) -> String {
    format!("cdd:{}:{stop}", paths.id())
}

/// The halt at a stop: what the person sees, and the command that passes it.
pub fn halt(paths: &Paths, stop: &super::order::Stop) -> Halt {
    let message = stop
        .message
        .as_deref()
        .filter(|m| !m.trim().is_empty())
        .unwrap_or("a manual verification checkpoint");
    Halt {
        key: halt_key(paths, &stop.id),
        message: format!(
            "Stop {} reached (cdd workspace {}): {message}. The orchestrator waits here until a person passes it with: taskhook cdd continue {}",
            stop.id,
            paths.id(),
            quote(&stop.id)
        ),
    }
}

/// A Bash call: a subagent's refused, or the main agent's `next` / `continue.ts` seen after it ran.
pub fn on_bash(cx: &Ctx, store: &StoreRef, b: &Bash<'_>) -> Result<Reaction> {
    if b.stdout.is_none() && b.agent_id.is_none() {
        let unsure = calls(b.command)
            .iter()
            .find(|c| c.verb == "continue")
            .and_then(|c| c.guessed)
            .map(|why| {
                format!(
                    " (This command could not be parsed ({}), and it mentions `taskhook cdd continue`, so it is refused on the safe side.)",
                    why.as_str()
                )
            })
            .unwrap_or_default();
        return Ok(Reaction::refused(format!(
            "{PERSON}: the agent stops here and the person passes it, in their own terminal \
             (`taskhook cdd continue STOP_ID`). Tell the user the stop is waiting and what to \
             check, then end your turn.{unsure}"
        )));
    }
    let Some(stdout) = b.stdout else {
        let found: Vec<Call> = calls(b.command)
            .into_iter()
            .filter(Call::changes_state)
            .collect();
        let shown: Vec<&str> = found.iter().map(|c| c.text.as_str()).collect();
        let unsure = match found.iter().find_map(|c| c.guessed) {
            Some(why) => format!(
                " This command could not be parsed ({}), and it mentions that, so it is refused on the safe side; if it only mentions it (a message, a search), fix its quoting.",
                why.as_str()
            ),
            None => String::new(),
        };
        return Ok(Reaction {
            refused: Some(format!(
                "{OWNERSHIP} (the cdd format): a subagent may not run `{}`.{unsure} Do the task's work, then end your final message with <signal>NAME_DONE</signal> or <signal>NAME_FAILED: why</signal>; the orchestrator moves the task.",
                shown.join("`, `")
            )),
            ..Default::default()
        });
    };
    if store.root.as_os_str().is_empty() {
        return Ok(Reaction::default());
    }
    let paths = Paths::of_store(store);
    let project = store.project.clone();
    let ws = Workspace::load(cx, &paths)?;
    let mut reply = Reaction::default();
    if let Some(id) = answered_stop(stdout) {
        if let Ok(Next::Stop(s, _)) = ws.next() {
            if s.id == id {
                reply.halt = Some(halt(&paths, &s));
            }
        }
    }
    if calls(b.command)
        .iter()
        .any(|c| c.script && c.verb == "continue")
    {
        reply.context.extend(sync_halts(cx, &ws, &project)?);
    }
    Ok(reply)
}

/// A Write/Edit of order.json that still matches its schema but names a task no workspace can
/// take (an unsafe file name, one of the workspace's own names): blocked and logged like a
/// schema failure (which the engine's edit check answers itself).
pub fn on_edit(cx: &Ctx, store: &StoreRef, path: &str) -> Result<Reaction> {
    let paths = Paths::of_store(store);
    let edited = store.project.join(path);
    if edited != paths.order {
        return Ok(Reaction::default());
    }
    let Some(bytes) = cx.store.read_capped(&paths.order, MAX_ORDER_BYTES)? else {
        return Ok(Reaction::default());
    };
    let Ok(doc) = parse_json(&bytes) else {
        return Ok(Reaction::default());
    };
    if schema::check(order::SCHEMA, &doc)?.is_err() {
        return Ok(Reaction::default());
    }
    let Err(f) = Order::parse(doc, &format!("`{}`", paths.order.display())) else {
        return Ok(Reaction::default());
    };
    super::LAYOUT.log_error(
        cx,
        store,
        &format!("an edit left order.json unusable: {}", f.message),
    )?;
    Ok(Reaction {
        block: vec![format!(
            "{}. Every cdd command refuses this order until that entry is renamed (its file too).",
            f.message
        )],
        ..Default::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verbs(cmd: &str) -> Vec<(String, bool)> {
        calls(cmd)
            .into_iter()
            .map(|c| (c.verb.clone(), c.changes_state()))
            .collect()
    }

    #[test]
    fn task_commands_are_found_wherever_they_hide() {
        assert_eq!(verbs("taskhook cdd done foo.md"), [("done".into(), true)]);
        assert_eq!(
            verbs("/usr/local/bin/taskhook --project-dir /p cdd next"),
            [("next".into(), false)]
        );
        assert_eq!(
            verbs("cd x && CDD_DIR=/w taskhook cdd start a.md"),
            [("start".into(), true)]
        );
        assert_eq!(
            verbs("bash -c 'taskhook cdd escalate a.md \"x\"'"),
            [("escalate".into(), true)]
        );
        assert_eq!(
            verbs("bun .claude/scripts/task/done.ts foo.md"),
            [("done".into(), true)]
        );
        assert_eq!(
            verbs(".claude/scripts/task/list.ts pending"),
            [("list".into(), false)]
        );
        assert_eq!(verbs("taskhook cdd"), [("".into(), false)]);
        assert!(verbs("echo cdd; ls scripts/").is_empty());
        assert!(verbs("taskhook status").is_empty());
        // Mentions are not calls.
        for text in [
            "git commit -m 'taskhook cdd done foo.md'",
            "echo 'run taskhook cdd done later'",
            "cat .claude/scripts/task/done.ts",
            "grep x .claude/scripts/task/done.ts",
            "vim .claude/scripts/task/done.ts",
        ] {
            assert!(verbs(text).is_empty(), "{text:?}");
        }
        // Hidden by quoting, still a call.
        assert_eq!(verbs("task'hook' c\"dd\" done x"), [("done".into(), true)]);
        assert_eq!(verbs("taskhook $'\\x63dd' done x"), [("done".into(), true)]);
        // Unparsable: what it mentions, marked.
        let c = calls("echo 'x; taskhook cdd done a");
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].guessed, Some(Unparsed::Quote));
    }

    /// Wrappers that only run the command after them.
    const WRAPPERS: [&str; 10] = [
        "env A=1",
        "command",
        "exec",
        "nohup",
        "timeout 5",
        "nice -n 3",
        "sudo -u me",
        "stdbuf -oL",
        "time",
        "xargs -n 1",
    ];

    proptest::proptest! {
        /// A moving verb behind any chain of wrappers, inside `bash -c` or not, is found.
        #[test]
        fn a_call_is_found_behind_any_wrappers(
            chain in proptest::collection::vec(0..WRAPPERS.len(), 0..5),
            verb in proptest::sample::select(vec!["start", "done", "fail", "escalate", "import", "init"]),
            in_shell in proptest::bool::ANY,
            before in proptest::sample::select(vec!["", "cd x && ", "true; ", "ls | "]),
        ) {
            let mut cmd = format!("taskhook cdd {verb} a.md");
            for i in chain {
                cmd = format!("{} {cmd}", WRAPPERS[i]);
            }
            if in_shell {
                cmd = format!("bash -c {}", quote(&cmd));
            }
            let line = format!("{before}{cmd}");
            let found = calls(&line);
            proptest::prop_assert!(
                found.iter().any(|c| c.verb == verb && c.changes_state() && c.guessed.is_none()),
                "{line:?}: {found:?}"
            );
        }

        /// A task command given as text to a program that only prints, stores or searches it
        /// is never a call, however it is quoted.
        #[test]
        fn a_mention_is_never_a_call(
            program in proptest::sample::select(vec!["echo", "git commit -m", "grep -n", "printf %s", "cat", "rg"]),
            verb in proptest::sample::select(vec!["start", "done", "fail", "continue"]),
            words in "[a-z .]{0,12}",
        ) {
            let text = format!("run taskhook cdd {verb} a.md {words}; bun .claude/scripts/task/{verb}.ts");
            let line = format!("{program} {} .claude/scripts/task/{verb}.ts", quote(&text));
            proptest::prop_assert!(calls(&line).is_empty(), "{line:?}");
        }
    }

    #[test]
    fn a_stop_answer_is_read_from_stdout() {
        let out = r#"{"success":true,"data":{"type":"stop","stop":"verify-core","message":"m"}}"#;
        assert_eq!(answered_stop(out).as_deref(), Some("verify-core"));
        assert_eq!(
            answered_stop(&format!("x\n{out}\n")).as_deref(),
            Some("verify-core")
        );
        assert!(answered_stop(r#"{"success":true,"data":{"type":"task","task":"a"}}"#).is_none());
        assert!(answered_stop("stop").is_none());
    }
}
