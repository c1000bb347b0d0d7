//! A task's lifecycle under the hooks of seed 004:
//!
//! - a launch of a subagent bound to a task starts it when pending (refused while another
//!   task runs, or while a stop before it has not been passed);
//! - `<signal>NAME_DONE</signal>` runs `done`, `_FAILED: why` runs `escalate` (the main agent
//!   is told the next model and thinking level); when the next entry is then a stop not passed,
//!   the main agent is halted (`continue: false`) until a person runs `taskhook cdd continue`.
//!
//! Each move is the command's own ([`super::commands`]): the hooks and `taskhook cdd` cannot
//! disagree.

use super::commands::{self, Finished};
use super::error::{Code, Failure};
use super::hooks::halt;
use super::model::{unusable, Next, Status, Workspace};
use super::order::taggable;
use super::outcome::Escalated;
use super::summary::untaggable;
use super::{Folder, Paths};
use crate::context::Ctx;
use crate::error::Result;
use crate::layouts::{Input, Reaction, StoreRef};
use crate::shell::quote;
use crate::signals::SignalKind;

fn tell(step: &mut Reaction, paths: &Paths, text: String) {
    step.tell_main.push(format!("cdd {}: {text}", paths.id()));
}

/// After a task finished (done, or failed past the ladder): what comes next; at a stop not
/// passed, `stop_reached` (once) and the halt.
fn after_finish(cx: &Ctx, paths: &Paths, ws: &Workspace, step: &mut Reaction) -> Result<()> {
    match ws.next() {
        Ok(Next::Stop(s, _)) => {
            commands::reach_stop(cx, paths, &s)?;
            let h = halt(paths, &s);
            tell(step, paths, h.message.clone());
            step.halt = Some(h);
        }
        Ok(Next::Task(t, _)) if !taggable(&t.name) => tell(
            step,
            paths,
            format!(
                "next is {} ({}): {}.",
                quote(&t.name),
                t.describe(),
                untaggable(&t.name)
            ),
        ),
        Ok(Next::Task(t, _)) => tell(
            step,
            paths,
            format!(
                "next is {} ({}): launch a subagent whose prompt holds <task>{}</task>.",
                t.name,
                t.describe(),
                t.name
            ),
        ),
        Ok(Next::Done) => tell(step, paths, "every task is finished.".into()),
        Err(f) => tell(step, paths, f.message),
    }
    Ok(())
}

/// One lifecycle step of task `unit`.
pub fn step(cx: &Ctx, store: &StoreRef, unit: &str, input: Input<'_>) -> Result<Reaction> {
    let paths = Paths::of_store(store);
    let status = Workspace::peek(cx, &paths)?.status(unit);
    let mut step = Reaction::default();
    match (input, &status) {
        (Input::Launch, Status::In(Folder::Pending)) => match commands::start(cx, &paths, unit) {
            Ok(_) => step.status = Some("in_progress".into()),
            // Another launch got there first.
            Err(f) if f.code == Code::WrongStatus => {}
            Err(f)
                if matches!(
                    f.code,
                    Code::TaskInProgress
                        | Code::StopNotPassed
                        | Code::NotImported
                        | Code::Inconsistent
                ) =>
            {
                step.refused = Some(refusal(&paths, unit, &f))
            }
            Err(f) => return Err(f.into()),
        },
        (Input::Launch, Status::In(_)) => {}
        (Input::Launch, other) => step.refused = Some(refusal(&paths, unit, &unusable(&paths, unit, other))),
        (Input::Signal(SignalKind::Done, _), Status::In(f)) => {
            match f {
                // From pending/ when the launch was not seen (taskhook installed mid-run, an
                // unbound prompt): started first.
                Folder::Pending | Folder::InProgress => match commands::finish(cx, &paths, unit)? {
                    Finished::NotStarted(e) => {
                        step.refused = Some(format!("{unit} is in pending/ and cannot be started: {}", e.message));
                        tell(
                            &mut step,
                            &paths,
                            format!("{unit} signalled DONE but is in pending/ and cannot be started: {}; nothing changed.", e.message),
                        );
                    }
                    Finished::Done(done) => {
                        let (d, ws) = *done;
                        let secs = d
                            .body
                            .elapsed_seconds
                            .map(|s| format!(", {s} s"))
                            .unwrap_or_default();
                        tell(&mut step, &paths, format!("{unit} is done (moved to completed/{secs})."));
                        step.status = Some("completed".into());
                        after_finish(cx, &paths, &ws.into_peek(cx), &mut step)?;
                    }
                },
                other => {
                    let msg = format!("{unit} signalled DONE but is in {}/; nothing changed.", other.as_str());
                    step.refused = Some(msg.clone());
                    tell(&mut step, &paths, msg)
                }
            }
        }
        (Input::Signal(SignalKind::Failed, reason), Status::In(Folder::Pending | Folder::InProgress)) => {
            let why = reason.unwrap_or("the subagent signalled FAILED");
            match commands::escalate(cx, &paths, unit, why)?.body {
            Escalated::Failed(_) => {
                tell(
                    &mut step,
                    &paths,
                    format!("{unit} failed ({why}) at the top of the escalation ladder: moved to failed/."),
                );
                step.status = Some("failed".into());
                // The look the agent's status after the step shares.
                after_finish(cx, &paths, &*Workspace::peek(cx, &paths)?, &mut step)?;
            }
            Escalated::Up { level, to_model: m, to_thinking: t, .. } => {
                tell(
                    &mut step,
                    &paths,
                    format!(
                        "{unit} failed ({why}); escalated to level {level} and back in pending/. Relaunch it with model {m} and thinking level {t} (<task>{unit}</task>).",
                    ),
                );
                step.status = Some("pending".into());
            }
            }
        }
        (Input::Signal(SignalKind::Blocked, reason), Status::In(f)) => tell(
            &mut step,
            &paths,
            format!(
                "{unit} reported BLOCKED ({}); it stays in {}/. Clear the blocker and relaunch it, or run `taskhook cdd escalate {} \"why\"` or `taskhook cdd fail {}`.",
                reason.unwrap_or("no reason given"),
                f.as_str(),
                quote(unit),
                quote(unit)
            ),
        ),
        (Input::NoSignal, Status::In(Folder::InProgress)) => tell(
            &mut step,
            &paths,
            format!(
                "the subagent working on {unit} stopped without <signal>{unit}_DONE</signal> or <signal>{unit}_FAILED: why</signal>; {unit} stays in in_progress/. Check its work, then run `taskhook cdd done {}`, or relaunch it.",
                quote(unit)
            ),
        ),
        (Input::Signal(kind, _), other) => {
            let msg = match other {
                Status::In(f) => format!("{unit} signalled {} but is in {}/; nothing changed.", kind.word(), f.as_str()),
                other => format!("{unit} signalled {}: {}", kind.word(), unusable(&paths, unit, other).message),
            };
            step.refused = Some(msg.clone());
            tell(&mut step, &paths, msg);
        }
        (Input::NoSignal, _) => {}
    }
    Ok(step)
}

fn refusal(paths: &Paths, unit: &str, f: &Failure) -> String {
    format!(
        "taskhook: cdd {}: not launching a subagent for {unit}: {} [{}]",
        paths.id(),
        f.message,
        f.code.as_str()
    )
}
