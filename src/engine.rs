//! Events to layouts: decides which layouts an event concerns (without I/O when none does),
//! finds their stores, runs each store's handler, and merges the reactions into the one reply
//! Claude Code accepts for that event. Also the store-wide work behind `status`, `validate` and
//! `reconcile`.

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use crate::agents;
use crate::context::Ctx;
use crate::error::{Error, Result};
use crate::hook::input::{Event, Payload, SubagentStop, ToolUse};
use crate::hook::output::{Decision, HookOutput, HookSpecific};
use crate::hook::Outcome;
use crate::layouts::{registry, Layout, Reaction, StoreRef, StoreStatus, Turn, Unit};
use crate::signals::{
    bound_names, parse_signals, read_transcript, split_name, SignalKind, UnitName,
};
use crate::store::{parse_json, schema};

/// Handles one payload across every layout that wants it.
pub fn handle(cx: &Ctx, payload: &Payload) -> Result<Outcome> {
    match &payload.event {
        Event::Unknown => Ok(Outcome::default()),
        Event::SubagentStop(ev) => subagent_stop(cx, payload, ev),
        Event::PostToolUse(tool) if !payload.in_subagent() => main_post_tool_use(cx, payload, tool),
        _ => {
            let (reaction, errors) = layouts_reaction(cx, payload);
            finish(&payload.name, reaction, errors)
        }
    }
}

/// Runs the layouts that want `payload` on each of their stores. No layout wanting it costs no
/// I/O at all (not even finding the project).
fn layouts_reaction(cx: &Ctx, payload: &Payload) -> (Reaction, Vec<(String, Error)>) {
    let layouts: Vec<&dyn Layout> = registry()
        .iter()
        .copied()
        .filter(|l| l.wants(payload))
        .collect();
    if layouts.is_empty() {
        return (Reaction::default(), Vec::new());
    }
    let project = cx.project_dir(payload.common.cwd.as_deref()).to_path_buf();
    let is_start = matches!(payload.event, Event::SessionStart(_));
    let event = (!is_start).then_some(payload);
    for_each_store(cx, &project, &layouts, event, |layout, store| {
        if is_start {
            layout.session_start(cx, store)
        } else {
            layout.on_event(cx, store, payload)
        }
    })
}

/// A PostToolUse of the main agent: the layouts' own handling, then (CONTRACT §4–§5) the
/// binding an `Agent` call's prompt makes, and the notices subagents left for the main agent.
fn main_post_tool_use(cx: &Ctx, payload: &Payload, tool: &ToolUse) -> Result<Outcome> {
    let (mut reaction, mut errors) = layouts_reaction(cx, payload);
    let project = cx.project_dir(payload.common.cwd.as_deref()).to_path_buf();
    if matches!(tool.tool_name.as_str(), "Agent" | "Task") {
        let agent_id = tool.tool_response.get("agentId").and_then(Value::as_str);
        let prompt = tool.tool_input.get("prompt").and_then(Value::as_str);
        if let (Some(agent_id), Some(prompt)) = (agent_id, prompt) {
            let names = bound_names(prompt);
            if !names.is_empty() {
                if let Err(e) = agents::remember_binding(cx, &project, agent_id, &names) {
                    errors.push(("agent bindings".into(), e));
                }
            }
        }
    }
    match agents::take_notices(cx, &project, None) {
        Ok(notices) => reaction.context.extend(notices),
        Err(e) => errors.push(("agent notices".into(), e)),
    }
    finish(&payload.name, reaction, errors)
}

/// A store with its layout and units, as a candidate for resolving unit names.
struct Candidate {
    layout: &'static dyn Layout,
    store: StoreRef,
    units: Vec<Unit>,
}

enum Resolved {
    One(usize, String),
    Many(Vec<String>),
    Nothing,
}

/// Resolves `STORE/ID` in that store, or a bare `ID` to the one active unit with that id.
fn resolve(cands: &[Candidate], name: &str) -> Resolved {
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

/// How long SubagentStop waits for Claude Code to write a subagent's prompt to its transcript.
const TRANSCRIPT_WAIT: std::time::Duration = std::time::Duration::from_millis(1500);

/// Reads a subagent transcript's prompt (first user message) and last assistant text. When
/// `wait_for_prompt` is set and the transcript does not hold the prompt yet, but its folder
/// exists (Claude Code is live and writing it), re-reads with a bounded wait; a transcript
/// path from another machine (a replayed capture) is never waited for.
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
            .as_deref()
            .map(read_transcript)
            .unwrap_or_default()
    };
    let mut found = read();
    let live = path.parent().is_some_and(|d| cx.store.is_dir(d));
    let start = std::time::Instant::now();
    while wait_for_prompt && live && found.0.is_none() && start.elapsed() < TRANSCRIPT_WAIT {
        std::thread::sleep(std::time::Duration::from_millis(25));
        found = read();
    }
    found
}

/// SubagentStop: the layouts' own handling (seed 002's `tasks_completed`), then signals in the
/// final message applied wherever they resolve, and "keep going" for bound units left without
/// one. What the main agent should learn is kept as a notice, never sent here.
fn subagent_stop(cx: &Ctx, payload: &Payload, ev: &SubagentStop) -> Result<Outcome> {
    let (mut reaction, mut errors) = layouts_reaction(cx, payload);
    // Claude Code runs `/compact` as a forked "subagent" with an empty `agent_type`; its final
    // message is the conversation summary, which may quote signals and task tags. It is no
    // worker: nothing in it is a signal or a binding. (Orphan stops with an empty type, seen
    // after a main-agent Stop, get the same treatment.)
    if payload.common.agent_type.as_deref() == Some("") {
        return finish(&payload.name, reaction, errors);
    }
    let agent_id = payload.common.agent_id.as_deref().filter(|a| !a.is_empty());
    let project = cx.project_dir(payload.common.cwd.as_deref()).to_path_buf();
    let remembered = match agent_id {
        Some(a) => agents::binding(cx, &project, a).unwrap_or_default(),
        None => Vec::new(),
    };
    let transcript_path = ev
        .agent_transcript_path
        .as_deref()
        .filter(|p| !p.is_empty());
    // Without a remembered binding, the prompt must come from the transcript, which Claude
    // Code writes asynchronously: it can still lack the prompt when SubagentStop fires.
    let (prompt, transcript_last) =
        read_agent_transcript(cx, transcript_path, remembered.is_empty());
    let final_text = ev
        .last_assistant_message
        .clone()
        .or(transcript_last)
        .unwrap_or_default();
    let signals = parse_signals(&final_text);
    let mut bound: Vec<String> = prompt.as_deref().map(bound_names).unwrap_or_default();
    for name in remembered {
        if !bound.contains(&name) {
            bound.push(name);
        }
    }
    if !signals.is_empty() || !bound.is_empty() {
        let mut cands = Vec::new();
        for &layout in registry() {
            match layout.discover(cx, &project) {
                Err(e) => errors.push((layout.name().to_string(), e)),
                Ok(stores) => {
                    for store in stores {
                        match layout.units(cx, &store) {
                            Ok(units) if !units.is_empty() => cands.push(Candidate {
                                layout,
                                store,
                                units,
                            }),
                            Ok(_) => {}
                            Err(e) => errors.push((format!("{} {}", store.layout, store.id), e)),
                        }
                    }
                }
            }
        }
        let ambiguous = |name: &str, c: &[String]| {
            format!(
                "taskhook: {name:?} matches several active units: {}; nothing changed. Name one as STORE/ID, e.g. {}.",
                c.join(", "),
                c[0].split(' ').next().unwrap_or_default()
            )
        };
        let mut bound_units: Vec<(usize, String)> = Vec::new();
        for name in &bound {
            match resolve(&cands, name) {
                Resolved::One(i, id) if !bound_units.contains(&(i, id.clone())) => {
                    bound_units.push((i, id))
                }
                Resolved::Many(c) => reaction.system.push(ambiguous(name, &c)),
                _ => {}
            }
        }
        let turn = |bound: bool| Turn {
            agent_id,
            bound,
            stop_hook_active: ev.stop_hook_active.unwrap_or(false),
            final_text: &final_text,
        };
        let mut signalled: Vec<(usize, String)> = Vec::new();
        let mut applied: Vec<(usize, String, SignalKind)> = Vec::new();
        for signal in &signals {
            match resolve(&cands, &signal.name) {
                Resolved::One(i, id) => {
                    if applied.contains(&(i, id.clone(), signal.kind)) {
                        continue;
                    }
                    applied.push((i, id.clone(), signal.kind));
                    let c = &cands[i];
                    let is_bound = bound_units.contains(&(i, id.clone()));
                    match c
                        .layout
                        .apply_signal(cx, &c.store, &id, signal, &turn(is_bound))
                    {
                        Ok(r) => reaction.merge(r),
                        Err(e) => errors.push((format!("{} {}", c.store.layout, c.store.id), e)),
                    }
                    signalled.push((i, id));
                }
                Resolved::Many(c) => reaction.system.push(ambiguous(&signal.name, &c)),
                Resolved::Nothing => {}
            }
        }
        for (i, id) in bound_units.iter().filter(|u| !signalled.contains(u)) {
            let c = &cands[*i];
            match c.layout.unsignalled_stop(cx, &c.store, id, &turn(true)) {
                Ok(r) => reaction.merge(r),
                Err(e) => errors.push((format!("{} {}", c.store.layout, c.store.id), e)),
            }
        }
    }
    if !reaction.context.is_empty() {
        let text = std::mem::take(&mut reaction.context).join("\n");
        if let Err(e) = agents::push_notice(cx, &project, agent_id.unwrap_or(""), &text) {
            errors.push(("agent notices".into(), e));
        }
    }
    finish(&payload.name, reaction, errors)
}

/// Runs SessionStart's work for every store of the project (`taskhook reconcile`).
pub fn reconcile(cx: &Ctx) -> Result<(Reaction, Vec<(String, Error)>)> {
    let project = cx.project_dir(None).to_path_buf();
    let layouts: Vec<&dyn Layout> = registry().to_vec();
    Ok(for_each_store(cx, &project, &layouts, None, |l, s| {
        l.session_start(cx, s)
    }))
}

/// Runs `f` on every store of `layouts`: the stores `event` may reach (which can include one it
/// will create, see [`Layout::discover_for_event`]), or, without an event, those that exist.
fn for_each_store(
    cx: &Ctx,
    project: &Path,
    layouts: &[&dyn Layout],
    event: Option<&Payload>,
    mut f: impl FnMut(&dyn Layout, &StoreRef) -> Result<Reaction>,
) -> (Reaction, Vec<(String, Error)>) {
    let mut total = Reaction::default();
    let mut errors = Vec::new();
    for &layout in layouts {
        let found = match event {
            Some(payload) => layout.discover_for_event(cx, project, payload),
            None => layout.discover(cx, project),
        };
        let stores = match found {
            Ok(s) => s,
            Err(e) => {
                errors.push((layout.name().to_string(), e));
                continue;
            }
        };
        for store in stores {
            match f(layout, &store) {
                Ok(r) => total.merge(r),
                Err(e) => errors.push((format!("{} {}", store.layout, store.id), e)),
            }
        }
    }
    (total, errors)
}

/// Merges reactions into the reply `event` accepts. A store that failed is reported beside the
/// others' results; when nothing else has anything to say, its error becomes the exit-1 error.
fn finish(event: &str, mut r: Reaction, mut errors: Vec<(String, Error)>) -> Result<Outcome> {
    // At SessionStart a store's problem goes to the model in the context (exit 1 would reach
    // only the user); a lock timeout stays an exit-1 error everywhere (CONTRACT §2).
    let report_in_context =
        event == "SessionStart" && !matches!(errors.first(), Some((_, Error::LockTimeout { .. })));
    if errors.len() == 1 && r.is_empty() && !report_in_context {
        return Err(errors.remove(0).1);
    }
    for (who, e) in &errors {
        let line = format!("taskhook: {who}: {}", e.one_line());
        if event == "SessionStart" {
            r.context.push(line.clone());
        }
        r.system.push(line);
    }
    let mut out = HookOutput::default();
    let context_allowed = matches!(
        event,
        "SessionStart"
            | "PostToolUse"
            | "PostToolUseFailure"
            | "UserPromptSubmit"
            | "SubagentStart"
    );
    let block_allowed = matches!(event, "PostToolUse" | "SubagentStop" | "Stop");
    if !r.system.is_empty() {
        out.system_message = Some(r.system.join("\n"));
    }
    if block_allowed && !r.block.is_empty() {
        out.decision = Some(Decision::Block);
        out.reason = Some(r.block.join("\n\n"));
    }
    if let Some(reason) = r.halt.filter(|_| event != "SubagentStop") {
        out.continue_ = Some(false);
        out.stop_reason = Some(reason);
    }
    let context = (context_allowed && !r.context.is_empty()).then(|| r.context.join("\n\n"));
    if context.is_some() || !r.extra.is_empty() {
        out.hook_specific_output = Some(HookSpecific {
            hook_event_name: event.to_string(),
            additional_context: context,
            extra: r.extra,
        });
    }
    let refusal = r.refuse.filter(|_| event == "TaskCompleted");
    Ok(Outcome {
        output: (!out.is_empty()).then_some(out),
        refusal,
        changed: Vec::new(),
    })
}

/// Every store of the project with its status; a store that cannot be read reports its problem.
pub fn status(cx: &Ctx) -> Vec<StoreStatus> {
    let project = cx.project_dir(None).to_path_buf();
    let mut out = Vec::new();
    for &layout in registry() {
        match layout.discover(cx, &project) {
            Err(e) => out.push(StoreStatus {
                layout: layout.name(),
                id: String::new(),
                path: project.clone(),
                problems: vec![e.one_line()],
                ..Default::default()
            }),
            Ok(stores) => {
                for store in stores {
                    out.push(layout.status(cx, &store).unwrap_or_else(|e| StoreStatus {
                        layout: store.layout,
                        id: store.id.clone(),
                        path: store.root.clone(),
                        problems: vec![e.one_line()],
                        ..Default::default()
                    }));
                }
            }
        }
    }
    out
}

/// The result of checking one state file.
#[derive(Debug, Clone, Serialize)]
pub struct FileReport {
    pub layout: &'static str,
    pub store: String,
    pub path: PathBuf,
    pub schema: &'static str,
    pub valid: bool,
    /// `(JSON path, message)` per problem; JSONL problems start with `line N`.
    pub errors: Vec<schema::Issue>,
}

/// Checks every state file of every store against its schema.
pub fn validate(cx: &Ctx) -> Result<Vec<FileReport>> {
    let project = cx.project_dir(None).to_path_buf();
    let mut out = Vec::new();
    for &layout in registry() {
        for store in layout.discover(cx, &project)? {
            for file in layout.state_files(cx, &store)? {
                let errors = if file.json_lines {
                    check_json_lines(cx, &file.path, file.schema)?
                } else {
                    check_document(cx, &file.path, file.schema)?
                };
                out.push(FileReport {
                    layout: layout.name(),
                    store: store.id.clone(),
                    path: file.path,
                    schema: file.schema,
                    valid: errors.is_empty(),
                    errors,
                });
            }
        }
    }
    let own = agents::path(&project);
    if cx.store.exists(&own) {
        let errors = check_document(cx, &own, "taskhook-agents")?;
        out.push(FileReport {
            layout: "taskhook",
            store: "agents".into(),
            path: own,
            schema: "taskhook-agents",
            valid: errors.is_empty(),
            errors,
        });
    }
    Ok(out)
}

/// Checks one JSON document file; a missing file has no errors.
pub fn check_document(cx: &Ctx, path: &Path, schema_name: &str) -> Result<Vec<schema::Issue>> {
    let Some(bytes) = cx.store.read(path)? else {
        return Ok(Vec::new());
    };
    Ok(match parse_json(&bytes) {
        Err(msg) => vec![schema::Issue {
            path: String::new(),
            message: msg,
        }],
        Ok(v) => schema::check(schema_name, &v)?.err().unwrap_or_default(),
    })
}

fn check_json_lines(cx: &Ctx, path: &Path, schema_name: &str) -> Result<Vec<schema::Issue>> {
    let Some(text) = cx.store.read_text(path)? else {
        return Ok(Vec::new());
    };
    let mut issues = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let at = |p: &str| {
            format!(
                "line {}{}{}",
                i + 1,
                if p.is_empty() { "" } else { ": " },
                p
            )
        };
        match serde_json::from_str::<Value>(line) {
            Err(e) => issues.push(schema::Issue {
                path: at(""),
                message: format!("not valid JSON: {e}"),
            }),
            Ok(v) => {
                if let Err(errs) = schema::check(schema_name, &v)? {
                    issues.extend(errs.into_iter().map(|e| schema::Issue {
                        path: at(&e.path),
                        message: e.message,
                    }));
                }
            }
        }
    }
    Ok(issues)
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Fake;
    impl Layout for Fake {
        fn name(&self) -> &'static str {
            "fake"
        }
        fn wants(&self, _: &Payload) -> bool {
            false
        }
        fn discover(&self, _: &Ctx, _: &Path) -> Result<Vec<StoreRef>> {
            Ok(Vec::new())
        }
        fn state_files(&self, _: &Ctx, _: &StoreRef) -> Result<Vec<crate::layouts::StateFile>> {
            Ok(Vec::new())
        }
        fn status(&self, _: &Ctx, _: &StoreRef) -> Result<StoreStatus> {
            Ok(StoreStatus::default())
        }
        fn session_start(&self, _: &Ctx, _: &StoreRef) -> Result<Reaction> {
            Ok(Reaction::default())
        }
        fn on_event(&self, _: &Ctx, _: &StoreRef, _: &Payload) -> Result<Reaction> {
            Ok(Reaction::default())
        }
    }
    static FAKE: Fake = Fake;

    fn cand(store: &str, units: &[(&str, bool)]) -> Candidate {
        Candidate {
            layout: &FAKE,
            store: StoreRef {
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
