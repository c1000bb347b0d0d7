//! Payload → facts → the one reply policy.
//!
//! [`run`] is the single code path behind `taskhook hook` and `taskhook replay`: it parses a
//! payload ([`crate::hook::input`]), turns it into typed facts ([`facts::of`], pure), resolves
//! the project the payload is about (only when some fact needs it), hands each fact to what
//! owns it — subagent binding and lifecycle steps ([`subagent`]), the edit check (`edits`),
//! notices and halts for the main agent ([`crate::agents`]), the layouts that want the rest —
//! turns what the layouts answer into the event's reply (`reaction`, the one place) and renders
//! the merged [`Reply`] as the event accepts it ([`crate::hook::output::render`]).
//!
//! A payload whose facts no layout wants does no I/O at all (not even finding the project),
//! except the one read of `agents.json` on a main-agent PostToolUse.
//!
//! Exit policy (CONTRACT §2): a store that fails is reported beside the others' results
//! (`systemMessage`, and the context at SessionStart). The exit is 1 with the error when
//! nothing else could be said, or when a lock timed out; never once a file has changed (a
//! failure after the store moved is reported with exit 0, so the change is not hidden).

pub mod agent;
pub mod dedup;
mod edits;
pub mod facts;
pub mod index;
pub mod journal;
pub mod ops;
mod reaction;
pub mod subagent;

#[cfg(test)]
mod sixth_layout;

use std::cell::OnceCell;

use crate::agents;
use crate::claims;
use crate::context::Ctx;
use crate::error::{Error, Result};
use crate::hook::input::Payload;
use crate::hook::output::{render, Reply};
use crate::hook::Outcome;
use crate::layouts::registry;
use crate::project::Project;
use facts::Fact;

/// What handling one payload has gathered so far.
#[derive(Debug, Default)]
pub struct Work {
    /// The event being answered (`hook_event_name`): what its reply may say.
    pub event: String,
    pub reply: Reply,
    /// Stores (or parts) that failed, with their error.
    pub errors: Vec<(String, Error)>,
    /// For the main agent at its next PostToolUse.
    pub notices: Vec<agents::Notice>,
    /// Halts to keep until a person lifts them: (key, message).
    pub halts: Vec<(String, String)>,
}

impl Work {
    /// Records a failure of `who`.
    pub fn fail(&mut self, who: &str, e: Error) {
        self.errors.push((who.to_string(), e));
    }
}

/// Parses and handles one payload as Claude Code sent it (what `taskhook hook` runs): an event
/// run twice at once (two registrations) is applied once ([`dedup`]). Returns the event name
/// (when the payload had one) and the outcome. Files changed are in the outcome's `changed`.
pub fn run(cx: &Ctx, bytes: &[u8]) -> (Option<String>, Result<Outcome>) {
    match Payload::parse(bytes) {
        Err(e) => (None, Err(e)),
        Ok(p) => run_with(cx, p, true),
    }
}

/// Handles an already parsed payload (what `taskhook replay` runs: every payload of a capture
/// is applied, a repeated one too), then records it in the project's journal when it changed
/// a file (never for an event that changed nothing, never in a dry run: see [`journal`]).
pub fn run_payload(cx: &Ctx, payload: Payload) -> (Option<String>, Result<Outcome>) {
    run_with(cx, payload, false)
}

fn run_with(cx: &Ctx, payload: Payload, once: bool) -> (Option<String>, Result<Outcome>) {
    // Everything below acts for the payload's session, a value of its own context.
    let cx = &cx.for_session(payload.common.session_id.as_deref());
    cx.store.begin_invocation();
    let capture_error = journal::capture(cx, &payload).err();
    // The capture file is the user's, not a change the event made.
    let _ = cx.store.take_changed();
    // A handler that read a clock TASKHOOK_NOW could not set fails (it wrote nothing: every
    // write checks the environment first).
    let result = handle(cx, &payload, once).and_then(|out| match cx.store.clock_error() {
        Some(e) => Err(e),
        None => Ok(out),
    });
    let changed = cx.store.take_changed();
    let mut result = result.map(|mut out| {
        out.changed = changed;
        out
    });
    if let (Ok(out), Some(e)) = (&mut result, capture_error) {
        add_system(out, format!("taskhook: capture: {}", e.one_line()));
    }
    if !cx.store.is_dry_run() {
        if let Some(line) = journal::entry(cx, &payload, &result) {
            let project = cx.project(payload.common.cwd.as_deref());
            // A journal that cannot be written never fails the event it records.
            let _ = journal::record(cx, &project.root, &line);
        }
        // The journal's own append is not a change the event made.
        let _ = cx.store.take_changed();
    }
    (Some(payload.name), result)
}

/// Adds a `systemMessage` line to an outcome.
fn add_system(out: &mut Outcome, line: String) {
    let o = out.output.get_or_insert_with(Default::default);
    o.system_message = Some(match o.system_message.take() {
        Some(s) => format!("{s}\n{line}"),
        None => line,
    });
}

fn handle(cx: &Ctx, payload: &Payload, once: bool) -> Result<Outcome> {
    // Every event of a session renews the leases it holds (one system call; none without).
    if let Some(session) = payload.common.session_id.as_deref() {
        claims::renew_by_event(cx, session);
    }
    let facts = facts::of(payload);
    if facts.is_empty() {
        return Ok(Outcome::default());
    }
    let project = OnceCell::new();
    let project = || project.get_or_init(|| cx.project(payload.common.cwd.as_deref()));
    let key = if once && !cx.store.is_dry_run() {
        dedup::key(payload, &facts)
    } else {
        None
    };
    let Some(key) = key else {
        return handle_facts(cx, payload, &facts, project);
    };
    cx.store.begin_event(key, dedup::record(&project().root));
    let result = handle_facts(cx, payload, &facts, project);
    let end = cx.store.end_event();
    if end.duplicate {
        // Another run applied this event and answered it; this one wrote nothing.
        return Ok(Outcome::default());
    }
    result.map(|mut out| {
        if let Some(e) = end.problem {
            add_system(
                &mut out,
                format!(
                    "taskhook: applied without the duplicate guard: {}",
                    e.one_line()
                ),
            );
        }
        out
    })
}

fn handle_facts<'a>(
    cx: &Ctx,
    payload: &Payload,
    facts: &[Fact<'_>],
    project: impl Fn() -> &'a Project + Copy,
) -> Result<Outcome> {
    let mut work = Work {
        event: payload.name.clone(),
        ..Default::default()
    };
    let mut main_tool_use = false;
    for fact in facts {
        match fact {
            Fact::MainToolUse => main_tool_use = true,
            Fact::Stopped(s) => subagent::stopped(cx, project(), s, &mut work),
            Fact::Launch(l) => {
                layouts_on(cx, project, fact, &mut work);
                subagent::launch(cx, project(), l, &mut work);
            }
            Fact::AgentReturned(r) => {
                layouts_on(cx, project, fact, &mut work);
                subagent::returned(cx, project(), r, &mut work);
            }
            Fact::Edit(path) => {
                if registry().iter().any(|l| l.wants(fact)) {
                    edits::check(cx, project(), path, &mut work);
                    layouts_on(cx, project, fact, &mut work);
                }
            }
            Fact::SessionEnded => {
                if let Some(session) = payload.common.session_id.as_deref() {
                    match agent::session_ended(cx, project(), session) {
                        Ok(lines) => work
                            .reply
                            .system
                            .extend(lines.into_iter().map(|l| format!("taskhook: {l}"))),
                        Err(e) => work.fail("claims", e),
                    }
                    if let Err(e) = claims::forget_session(cx, session) {
                        work.fail("claims", e);
                    }
                }
            }
            Fact::SessionStart(start) => {
                let (reply, errors) = ops::session_start(cx, project(), Some(*start));
                work.reply.merge(reply);
                work.errors.extend(errors);
            }
            _ => layouts_on(cx, project, fact, &mut work),
        }
    }
    if !work.notices.is_empty() || !work.halts.is_empty() {
        let agent = payload.common.agent_id.as_deref().unwrap_or("");
        if let Err(e) = agents::keep(cx, &project().root, agent, &work.notices, &work.halts) {
            // The notices are not lost: the user sees them.
            let kept = std::mem::take(&mut work.notices);
            work.reply
                .system
                .extend(kept.into_iter().map(|n| format!("taskhook: {}", n.text)));
            work.fail("agent notices", e);
        }
    }
    if main_tool_use {
        match agents::deliver(cx, &project().root) {
            Ok(d) => {
                work.reply.context.extend(d.notices);
                if let Some(first) = d.halts.into_iter().next() {
                    work.reply.halt.get_or_insert(first);
                }
            }
            Err(e) => work.fail("agent notices", e),
        }
    }
    finish(cx, &payload.name, work)
}

/// Runs every layout that wants `fact` on each store it reaches. No layout wanting it costs no
/// I/O at all.
fn layouts_on<'a>(cx: &Ctx, project: impl Fn() -> &'a Project, fact: &Fact<'_>, work: &mut Work) {
    for &layout in registry().iter().filter(|l| l.wants(fact)) {
        match layout.discover_for(cx, project(), fact) {
            Err(e) => work.fail(layout.name(), e),
            Ok(stores) => {
                for store in stores {
                    match layout.on_fact(cx, &store, fact) {
                        Ok(r) => reaction::fold(work, r, None),
                        Err(e) => work.fail(&format!("{} {}", store.layout, store.id), e),
                    }
                }
            }
        }
    }
}

/// Turns the gathered work into the outcome, by the exit policy in the module doc.
fn finish(cx: &Ctx, event: &str, work: Work) -> Result<Outcome> {
    let Work {
        mut reply,
        mut errors,
        ..
    } = work;
    let changed = cx.store.has_changed();
    let timeout = errors
        .iter()
        .position(|(_, e)| matches!(e, Error::LockTimeout { .. }));
    let at_start = event == "SessionStart";
    if !errors.is_empty() && !changed {
        let fatal = match timeout {
            Some(i) => Some(i),
            None if reply.is_empty() && !at_start => Some(0),
            None => None,
        };
        if let Some(i) = fatal {
            let (_, e) = errors.remove(i);
            if errors.is_empty() {
                return Err(e);
            }
            let others: Vec<String> = errors
                .iter()
                .map(|(who, e)| format!("{who}: {}", e.one_line()))
                .collect();
            return Err(Error::BadInput(format!(
                "{} (also: {})",
                e.one_line(),
                others.join("; ")
            )));
        }
    }
    for (who, e) in &errors {
        let line = format!("taskhook: {who}: {}", e.one_line());
        if at_start {
            reply.context.push(line.clone());
        }
        reply.system.push(line);
    }
    let (output, refusal) = render(event, reply);
    Ok(Outcome {
        output,
        refusal,
        changed: Vec::new(),
    })
}
