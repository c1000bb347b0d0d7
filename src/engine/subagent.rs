//! Subagents and their units (CONTRACT §4): binding a subagent to the units its prompt names,
//! resolving `STORE/ID` and bare names, reading a stopped subagent's transcript, and running
//! each unit's lifecycle step, whose [`crate::layouts::Reaction`] goes through the one reply
//! policy (`engine::reaction`): another pass blocks only a bound subagent, the main agent
//! learns the rest at its next tool call, a halt is kept, a refused launch is denied.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::agents;
use crate::context::Ctx;
use crate::engine::facts::{AgentReturned, Launch, Stopped};
use crate::engine::reaction::{self, OfUnit};
use crate::engine::{agent, Work};
use crate::layouts::{registry, Input, Layout, StoreRef, Turn, Unit};
use crate::project::Project;
use crate::signals::{bound_names, read_transcript, split_name, FinalMessage, UnitName};
use crate::store::fs;

/// How long SubagentStop waits for Claude Code to write a subagent's prompt to its transcript.
const TRANSCRIPT_WAIT: Duration = Duration::from_millis(1500);

/// A store with its layout and units, as a candidate for resolving unit names.
pub(crate) struct Candidate {
    layout: &'static dyn Layout,
    store: StoreRef,
    units: Vec<Unit>,
}

pub(crate) enum Resolved {
    One(usize, String),
    Many(Vec<String>),
    Nothing,
}

/// Resolves `STORE/ID` in that store, or a bare `ID` to the one active unit with that id.
pub(crate) fn resolve(cands: &[Candidate], name: &str) -> Resolved {
    let UnitName { store, id } = split_name(name);
    let hits: Vec<usize> = cands
        .iter()
        .enumerate()
        .filter(|(_, c)| match &store {
            Some(s) => c.store.id == *s && c.units.iter().any(|u| u.id == id),
            None => c.units.iter().any(|u| u.id == id && u.active),
        })
        .map(|(i, _)| i)
        .collect();
    match hits.as_slice() {
        [] => Resolved::Nothing,
        [one] => Resolved::One(*one, id),
        many => Resolved::Many(
            many.iter()
                .map(|&i| format!("{}/{id} ({})", cands[i].store.id, cands[i].layout.name()))
                .collect(),
        ),
    }
}

/// Every store of the project that has units, each with those of its units that `names` (the
/// names the event gives, `STORE/ID` or `ID`) can resolve to: the rest of a store of thousands
/// of tasks is not kept while the steps run.
fn candidates(cx: &Ctx, project: &Project, names: &[&str], work: &mut Work) -> Vec<Candidate> {
    let ids: Vec<String> = names.iter().map(|n| split_name(n).id).collect();
    let mut cands = Vec::new();
    for &layout in registry() {
        match layout.discover(cx, project) {
            Err(e) => work.fail(layout.name(), e),
            Ok(stores) => {
                for store in stores {
                    match layout.units(cx, &store) {
                        Ok(mut units) if !units.is_empty() => {
                            units.retain(|u| ids.contains(&u.id));
                            units.shrink_to_fit();
                            cands.push(Candidate {
                                layout,
                                store,
                                units,
                            });
                        }
                        Ok(_) => {}
                        Err(e) => work.fail(&format!("{} {}", store.layout, store.id), e),
                    }
                }
            }
        }
    }
    cands
}

/// Tells the user that a bare `name` matches several active units `c`, once per event however
/// often the prompt and the final message mention it.
fn ambiguous(name: &str, c: &[String], work: &mut Work) {
    let line = format!(
        "taskhook: {name:?} matches several active units: {}; nothing changed. Name one as STORE/ID, e.g. {}.",
        c.join(", "),
        c[0].split(' ').next().unwrap_or_default()
    );
    if !work.reply.system.contains(&line) {
        work.reply.system.push(line);
    }
}

/// Resolves names to (candidate, unit id), reporting ambiguity; unknown names are dropped.
fn resolve_all(cands: &[Candidate], names: &[String], work: &mut Work) -> Vec<(usize, String)> {
    let mut out: Vec<(usize, String)> = Vec::new();
    for name in names {
        match resolve(cands, name) {
            Resolved::One(i, id) if !out.contains(&(i, id.clone())) => out.push((i, id)),
            Resolved::Many(c) => ambiguous(name, &c, work),
            _ => {}
        }
    }
    out
}

fn run_step(
    cx: &Ctx,
    project: &Project,
    c: &Candidate,
    unit: &str,
    input: Input<'_>,
    turn: &Turn<'_>,
    work: &mut Work,
) -> bool {
    let before = cx.store.write_count();
    match c.layout.step(cx, &c.store, unit, input, turn) {
        Ok(r) => {
            let tells = !r.tell_main.is_empty() || (r.instruction.is_some() && !turn.bound);
            let refused = r.refused.is_some();
            let of = OfUnit {
                layout: c.layout.name(),
                store: &c.store.id,
                unit,
                bound: turn.bound,
                about: tells.then(|| agents::about(cx, c.layout, &c.store, unit)),
            };
            reaction::fold(work, r, Some(&of));
            if !refused && cx.store.write_count() != before {
                if let Err(e) = record(cx, project, &c.store, unit, input, turn) {
                    work.fail("sync", e);
                }
            }
            !refused
        }
        Err(e) => {
            work.fail(&format!("{} {}", c.store.layout, c.store.id), e);
            false
        }
    }
}

/// With team sync on, a step that changed the store is also an op (`launch`, `signal`).
fn record(
    cx: &Ctx,
    project: &Project,
    store: &StoreRef,
    unit: &str,
    input: Input<'_>,
    turn: &Turn<'_>,
) -> crate::error::Result<()> {
    let mut f = serde_json::Map::new();
    if let Some(a) = turn.agent_id {
        f.insert("agent".into(), a.into());
    }
    let kind = match input {
        Input::Launch => "launch",
        Input::Signal(k, reason) => {
            f.insert("signal".into(), k.word().into());
            if let Some(r) = reason {
                f.insert("reason".into(), r.into());
            }
            f.insert("bound".into(), turn.bound.into());
            "signal"
        }
        Input::NoSignal => {
            f.insert("signal".into(), "none".into());
            f.insert("bound".into(), turn.bound.into());
            "signal"
        }
    };
    crate::sync::record(cx, project, store, unit, kind, f, None)
}

/// Reads a subagent transcript's prompt (first user message) and last assistant text. When
/// `wait_for_prompt` is set and a live transcript does not hold the prompt yet, re-reads with a
/// bounded wait: Claude Code writes it asynchronously. Live means a regular file, or a file not
/// written yet in a folder that exists; a transcript that can never hold a prompt (its folder
/// missing, as in a replayed capture; a folder; a device such as `/dev/null`) is not waited for.
fn read_agent_transcript(
    cx: &Ctx,
    path: Option<&str>,
    wait_for_prompt: bool,
) -> (Option<String>, Option<String>) {
    let Some(path) = path.map(Path::new) else {
        return (None, None);
    };
    let read = || {
        cx.store
            .read_transcript(path)
            .ok()
            .flatten()
            .map(|text| read_transcript(&text))
            .unwrap_or_default()
    };
    let mut found = read();
    let live = fs::is_file(path) || (!fs::exists(path) && path.parent().is_some_and(fs::is_dir));
    let start = Instant::now();
    while wait_for_prompt && live && found.0.is_none() && start.elapsed() < TRANSCRIPT_WAIT {
        std::thread::sleep(Duration::from_millis(25));
        found = read();
    }
    found
}

/// SubagentStop: signals in the final message applied wherever they resolve, and another pass
/// for bound units left without one.
pub(crate) fn stopped(cx: &Ctx, project: &Project, ev: &Stopped<'_>, work: &mut Work) {
    // The `/compact` fork's final message is the conversation summary: no signals, no bindings.
    if ev.fork {
        return;
    }
    let remembered = match ev.agent_id {
        Some(a) => agents::binding(cx, &project.root, a).unwrap_or_default(),
        None => Vec::new(),
    };
    // Without a remembered binding the prompt must come from the transcript.
    let (prompt, transcript_last) =
        read_agent_transcript(cx, ev.transcript_path, remembered.is_empty());
    let final_text = ev
        .last_message
        .map(str::to_string)
        .or(transcript_last)
        .unwrap_or_default();
    let message = FinalMessage::parse(&final_text);
    let mut bound: Vec<String> = prompt.as_deref().map(bound_names).unwrap_or_default();
    for name in remembered {
        if !bound.contains(&name) {
            bound.push(name);
        }
    }
    if message.signals.is_empty() && bound.is_empty() {
        return;
    }
    let names: Vec<&str> = bound
        .iter()
        .map(String::as_str)
        .chain(message.signals.iter().map(|s| s.name.as_str()))
        .collect();
    let cands = candidates(cx, project, &names, work);
    let bound_units = resolve_all(&cands, &bound, work);
    let turn = |bound: bool| Turn {
        agent_id: ev.agent_id,
        bound,
        stop_hook_active: ev.stop_hook_active,
        message: &message,
        by_hand: false,
    };
    let mut signalled: Vec<(usize, String)> = Vec::new();
    let mut applied = Vec::new();
    for signal in &message.signals {
        match resolve(&cands, &signal.name) {
            Resolved::One(i, id) => {
                if applied.contains(&(i, id.clone(), signal.kind)) {
                    continue;
                }
                applied.push((i, id.clone(), signal.kind));
                let is_bound = bound_units.contains(&(i, id.clone()));
                let input = Input::Signal(signal.kind, signal.reason.as_deref());
                run_step(cx, project, &cands[i], &id, input, &turn(is_bound), work);
                signalled.push((i, id));
            }
            Resolved::Many(c) => ambiguous(&signal.name, &c, work),
            Resolved::Nothing => {}
        }
    }
    for (i, id) in bound_units.iter().filter(|u| !signalled.contains(u)) {
        run_step(
            cx,
            project,
            &cands[*i],
            id,
            Input::NoSignal,
            &turn(true),
            work,
        );
    }
    // A claim ends when its unit leaves "in progress", whoever moved it.
    for (i, id) in &signalled {
        if let Err(e) = agent::settled(cx, project, &cands[*i].store, id) {
            work.fail("claims", e);
        }
    }
}

/// PreToolUse of `Agent`: each unit the prompt names takes its launch step (a layout may mark
/// it started, or refuse the launch).
pub(crate) fn launch(cx: &Ctx, project: &Project, l: &Launch<'_>, work: &mut Work) {
    let names: Vec<&str> = l.names.iter().map(String::as_str).collect();
    let cands = candidates(cx, project, &names, work);
    let none = FinalMessage::default();
    let turn = Turn {
        agent_id: l.caller,
        bound: true,
        stop_hook_active: false,
        message: &none,
        by_hand: false,
    };
    for (i, id) in resolve_all(&cands, &l.names, work) {
        let c = &cands[i];
        // A launch bound with <task> is a claim by the launching session (CONTRACT §7):
        // refused while another session's lease holds the unit.
        if let Some(session) = l.session {
            match agent::launched(cx, project, session, &c.store, &id, true) {
                Ok(Some(held)) => {
                    work.reply.deny.get_or_insert(format!("taskhook: {held}."));
                    continue;
                }
                Ok(None) => {}
                Err(e) => {
                    work.fail("claims", e);
                    continue;
                }
            }
        }
        // Claimed only when this unit's own step took the launch (an earlier unit's denial
        // says nothing of this one).
        let took = run_step(cx, project, c, &id, Input::Launch, &turn, work);
        if let (Some(session), true) = (l.session, took) {
            if let Err(e) = agent::launched(cx, project, session, &c.store, &id, false) {
                work.fail("claims", e);
            }
        }
    }
}

/// PostToolUse of the main agent's `Agent` call: remember the binding its prompt made, keyed
/// by the agent id (a background agent stops much later).
pub(crate) fn returned(cx: &Ctx, project: &Project, r: &AgentReturned<'_>, work: &mut Work) {
    if let Some(agent_id) = r.agent_id {
        if !r.names.is_empty() {
            if let Err(e) = agents::remember_binding(cx, &project.root, agent_id, &r.names) {
                work.fail("agent bindings", e);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::facts::{Fact, Start};
    use crate::error::Result;
    use crate::layouts::{Reconciled, StateFile, Summary};

    struct Fake;
    impl Layout for Fake {
        fn name(&self) -> &'static str {
            "fake"
        }
        fn wants(&self, _: &Fact<'_>) -> bool {
            false
        }
        fn discover(&self, _: &Ctx, _: &Project) -> Result<Vec<StoreRef>> {
            Ok(Vec::new())
        }
        fn state_files(&self, _: &Ctx, _: &StoreRef) -> Result<Vec<StateFile>> {
            Ok(Vec::new())
        }
        fn summarize(&self, _: &Ctx, _: &StoreRef) -> Result<Summary> {
            Ok(Summary::default())
        }
        fn reconcile(&self, _: &Ctx, _: &StoreRef, _: Option<Start>) -> Result<Reconciled> {
            Ok(Reconciled::default())
        }
    }
    static FAKE: Fake = Fake;

    fn cand(store: &str, units: &[(&str, bool)]) -> Candidate {
        Candidate {
            layout: &FAKE,
            store: StoreRef {
                project: store.into(),
                layout: "fake",
                id: store.into(),
                root: store.into(),
            },
            units: units
                .iter()
                .map(|(id, active)| Unit {
                    id: id.to_string(),
                    active: *active,
                })
                .collect(),
        }
    }

    #[test]
    fn bare_names_resolve_to_the_one_active_unit() {
        let cands = [
            cand("a", &[("T1", true), ("T2", false)]),
            cand("b", &[("T2", true), ("T3", true)]),
        ];
        assert!(matches!(resolve(&cands, "T1"), Resolved::One(0, ref id) if id == "T1"));
        // T2 is done in `a`, active in `b`: the active one wins.
        assert!(matches!(resolve(&cands, "T2"), Resolved::One(1, _)));
        assert!(matches!(resolve(&cands, "T9"), Resolved::Nothing));
        let cands = [cand("a", &[("T1", true)]), cand("b", &[("T1", true)])];
        match resolve(&cands, "T1") {
            Resolved::Many(c) => assert_eq!(c, ["a/T1 (fake)", "b/T1 (fake)"]),
            _ => panic!("expected ambiguity"),
        }
    }

    #[test]
    fn qualified_names_resolve_in_their_store_even_when_inactive() {
        let cands = [cand("a", &[("T1", true)]), cand("b", &[("T1", false)])];
        assert!(matches!(resolve(&cands, "b/T1"), Resolved::One(1, ref id) if id == "T1"));
        assert!(matches!(resolve(&cands, "c/T1"), Resolved::Nothing));
    }
}
