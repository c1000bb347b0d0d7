//! Layout `iterative` (seed 003): `.claude/iterative/{slug}/` with `state.json`, `progress.md`
//! (append-only iteration log, the authority on recovery), `guardrails.md`, `context.md`,
//! `tasks.md` (development) or `plan.md` (knowledge). `archive/` beside the slugs is skipped.
//!
//! SubagentStop drives each unit through work → confirm → verify → done ([`lifecycle`]), one
//! progress entry per stop, with `decision: block` for the confirmation and verification
//! passes and for bound units that stopped without a signal, always bounded by
//! `max_iterations` and a cap on failed confirmations. SessionStart rebuilds a missing,
//! corrupt or lagging state.json by replaying progress.md through the same lifecycle, and
//! tells the model the context, the guardrails, the current unit and what remains.

pub mod lifecycle;
pub mod markdown;

use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

use crate::context::Ctx;
use crate::error::{Error, Result};
use crate::hook::input::{Event, Payload};
use crate::layouts::{Layout, Reaction, StateFile, StoreRef, StoreStatus, Turn, Unit};
use crate::signals::{parse_signals, Signal, SignalKind};
use crate::store::{check_id, folder_lock_path, Loaded};

use lifecycle::{step, Counters, Effect, Input, DEFAULT_MAX_ITERATIONS};
use markdown::{parse_plan, parse_progress, render_entry, Entry, PlanUnit};

/// The schema of state.json.
pub const SCHEMA: &str = "iterative-state";
/// Per-file cap for context.md / guardrails.md in the SessionStart summary.
const FILE_CAP: usize = 4000;

/// The layout.
pub struct Iterative;

/// The registered instance.
pub static LAYOUT: Iterative = Iterative;

/// The files of one slug.
pub struct Paths {
    pub root: PathBuf,
    pub state: PathBuf,
    pub progress: PathBuf,
    pub guardrails: PathBuf,
    pub context: PathBuf,
    pub tasks_md: PathBuf,
    pub plan_md: PathBuf,
}

impl Paths {
    pub fn of(root: &Path) -> Self {
        Paths {
            root: root.to_path_buf(),
            state: root.join("state.json"),
            progress: root.join("progress.md"),
            guardrails: root.join("guardrails.md"),
            context: root.join("context.md"),
            tasks_md: root.join("tasks.md"),
            plan_md: root.join("plan.md"),
        }
    }
}

/// The folder holding the slugs.
pub fn base(project: &Path) -> PathBuf {
    project.join(".claude").join("iterative")
}

fn units_key(state: &Value) -> &'static str {
    if state["mode"] == "knowledge" {
        "phases"
    } else {
        "tasks"
    }
}

fn current_key(state: &Value) -> &'static str {
    if state["mode"] == "knowledge" {
        "current_phase"
    } else {
        "current_task"
    }
}

/// Everything loaded for one operation on a slug.
pub struct Loaded3 {
    pub state: Value,
    pub plan: Vec<PlanUnit>,
    pub entries: Vec<Entry>,
    pub progress_text: String,
    /// What reconciliation changed and why (one line each), for the summary.
    pub notes: Vec<String>,
    /// Whether `state` differs from the file on disk.
    pub dirty: bool,
}

fn read_plan(cx: &Ctx, p: &Paths) -> Result<Vec<PlanUnit>> {
    let text = match cx.store.read_text(&p.tasks_md)? {
        Some(t) => t,
        None => cx.store.read_text(&p.plan_md)?.unwrap_or_default(),
    };
    Ok(parse_plan(&text))
}

fn counters_of(unit: &Value, plan_max: Option<u64>) -> Counters {
    let n = |k: &str| unit.get(k).and_then(Value::as_u64).unwrap_or(0);
    Counters {
        status: unit["status"].as_str().unwrap_or("pending").to_string(),
        iterations_used: n("iterations_used"),
        confirmations_used: n("confirmations_used"),
        failed_confirmations: n("failed_confirmations"),
        max_iterations: unit
            .get("max_iterations")
            .and_then(Value::as_u64)
            .or(plan_max)
            .unwrap_or(DEFAULT_MAX_ITERATIONS)
            .max(1),
        reason: unit
            .get("reason")
            .and_then(Value::as_str)
            .map(str::to_string),
    }
}

fn write_counters(unit: &mut Map<String, Value>, c: &Counters) {
    unit.insert("status".into(), json!(c.status));
    unit.insert("iterations_used".into(), json!(c.iterations_used));
    unit.insert("confirmations_used".into(), json!(c.confirmations_used));
    if c.failed_confirmations > 0 {
        unit.insert("failed_confirmations".into(), json!(c.failed_confirmations));
    }
    unit.insert("max_iterations".into(), json!(c.max_iterations));
    match &c.reason {
        Some(r) => unit.insert("reason".into(), json!(r)),
        None => unit.remove("reason"),
    };
}

/// Replays progress entries through the lifecycle, per unit, from a fresh start.
fn replay(entries: &[Entry], unit: &str, max: u64) -> Counters {
    let mut c = Counters::pending(max);
    for e in entries.iter().filter(|e| e.unit == unit) {
        let signal = e.signal.as_deref().and_then(|s| {
            parse_signals(&format!("<signal>{s}</signal>"))
                .into_iter()
                .next()
        });
        let input = match &signal {
            Some(s) => Input::Signal(s.kind, s.reason.as_deref()),
            None => Input::NoSignal,
        };
        step(&mut c, input);
    }
    c
}

/// The dependencies of a unit: the plan's, plus `Waiting on X, Y` in a blocked unit's reason.
fn deps_of(state: &Value, plan: &[PlanUnit], unit: &str) -> Vec<String> {
    let mut deps: Vec<String> = plan
        .iter()
        .find(|p| p.id == unit)
        .map(|p| p.depends.clone())
        .unwrap_or_default();
    if let Some(r) = state[units_key(state)][unit]["reason"].as_str() {
        if let Some(list) = r.strip_prefix("Waiting on ") {
            for d in list
                .split([',', ' '])
                .map(|d| d.trim())
                .filter(|d| !d.is_empty() && *d != "and")
            {
                if !deps.contains(&d.to_string()) {
                    deps.push(d.to_string());
                }
            }
        }
    }
    deps
}

fn unit_ids(state: &Value) -> Vec<String> {
    state[units_key(state)]
        .as_object()
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default()
}

fn status_of<'a>(state: &'a Value, unit: &str) -> &'a str {
    state[units_key(state)][unit]["status"]
        .as_str()
        .unwrap_or("pending")
}

/// Units that can start now: pending (or blocked only on dependencies) with every dependency done.
pub fn ready_units(state: &Value, plan: &[PlanUnit]) -> Vec<String> {
    unit_ids(state)
        .into_iter()
        .filter(|u| {
            let st = status_of(state, u);
            let waiting = st == "blocked"
                && state[units_key(state)][u.as_str()]["reason"]
                    .as_str()
                    .is_some_and(|r| r.starts_with("Waiting on "));
            (st == "pending" || waiting)
                && deps_of(state, plan, u)
                    .iter()
                    .all(|d| status_of(state, d) == "done")
        })
        .collect()
}

/// After a unit finished: waiting units whose dependencies are all done become pending, the
/// current pointer moves to the next unit, and the phase becomes `verify` when all are done.
fn advance(state: &mut Value, plan: &[PlanUnit]) -> Vec<String> {
    let ready = ready_units(state, plan);
    let key = units_key(state);
    for u in &ready {
        if let Some(unit) = state[key][u.as_str()].as_object_mut() {
            if unit.get("status") == Some(&json!("blocked")) {
                unit.insert("status".into(), json!("pending"));
                unit.remove("reason");
            }
        }
    }
    let ids = unit_ids(state);
    let working = ids
        .iter()
        .find(|u| {
            matches!(
                status_of(state, u),
                "in_progress" | "confirming" | "verifying"
            )
        })
        .cloned();
    let next = working.or_else(|| ready.first().cloned());
    let ck = current_key(state);
    state[ck] = next.map_or(Value::Null, Value::String);
    if !ids.is_empty() && ids.iter().all(|u| status_of(state, u) == "done") {
        state["phase"] = json!("verify");
    }
    ready
}

impl Iterative {
    /// Loads a slug, rebuilding state.json from progress.md when it is missing (but progress
    /// exists), corrupt, or lags progress.md. Rebuilds move the bad bytes aside and log the
    /// discrepancy in progress.md. Call under the folder lock when `write` is true.
    pub fn load(&self, cx: &Ctx, store: &StoreRef, write: bool) -> Result<Loaded3> {
        let p = Paths::of(&store.root);
        let plan = read_plan(cx, &p)?;
        let progress_text = cx.store.read_text(&p.progress)?.unwrap_or_default();
        let entries = parse_progress(&progress_text);
        let mut notes = Vec::new();
        let mut dirty = false;
        let now = cx.store.clock().stamp();
        let mut state = match cx.store.load_json(&p.state, SCHEMA)? {
            Loaded::Valid(v) => v,
            Loaded::Missing if entries.is_empty() => {
                return Err(Error::NotFound(format!(
                    "`{}` has no state.json and no progress.md entries to rebuild it from",
                    store.root.display()
                )))
            }
            other => {
                let why = match other {
                    Loaded::Invalid(why) => why,
                    _ => "it is missing".to_string(),
                };
                if write && cx.store.exists(&p.state) {
                    let aside = cx.store.quarantine(&p.state)?;
                    notes.push(format!(
                        "state.json was unusable ({why}); moved it to {} and rebuilt it from progress.md",
                        aside.file_name().unwrap_or_default().to_string_lossy()
                    ));
                } else {
                    notes.push(format!("state.json {why}; rebuilt it from progress.md"));
                }
                dirty = true;
                self.rebuild(store, &plan, &entries, &now)
            }
        };
        // A state.json that lags progress.md (fewer iterations than logged) is rebuilt unit
        // by unit from the log.
        let key = units_key(&state);
        let mut ids = unit_ids(&state);
        for e in &entries {
            if !ids.contains(&e.unit) {
                ids.push(e.unit.clone());
            }
        }
        for id in ids {
            let logged = entries.iter().filter(|e| e.unit == id).count() as u64;
            let unit = state[key]
                .get(id.as_str())
                .cloned()
                .unwrap_or_else(|| json!({}));
            let plan_max = plan
                .iter()
                .find(|u| u.id == id)
                .and_then(|u| u.max_iterations);
            let have = counters_of(&unit, plan_max);
            if logged > have.iterations_used {
                let replayed = replay(&entries, &id, have.max_iterations);
                notes.push(format!(
                    "state.json had {id} {} after {} iteration(s); progress.md logs {logged}: {id} is now {}",
                    have.status, have.iterations_used, replayed.status
                ));
                if !state[key].is_object() {
                    state[key] = json!({});
                }
                let obj = state[key]
                    .as_object_mut()
                    .expect("units are an object")
                    .entry(id.clone())
                    .or_insert_with(|| json!({}));
                if let Some(m) = obj.as_object_mut() {
                    write_counters(m, &replayed);
                    if replayed.status == "done" {
                        m.insert("verification_passed".into(), json!(true));
                        let at = entries
                            .iter()
                            .rev()
                            .find(|e| e.unit == id)
                            .map_or(now.clone(), |e| e.timestamp.clone());
                        if crate::store::clock::parse_time(&at).is_some() {
                            m.entry("completed_at").or_insert(json!(at));
                        }
                    }
                }
                dirty = true;
            }
        }
        if dirty {
            advance(&mut state, &plan);
            state["updated"] = json!(now);
        }
        Ok(Loaded3 {
            state,
            plan,
            entries,
            progress_text,
            notes,
            dirty,
        })
    }

    /// A state.json rebuilt from the plan and progress.md alone.
    fn rebuild(&self, store: &StoreRef, plan: &[PlanUnit], entries: &[Entry], now: &str) -> Value {
        let knowledge =
            store.root.join("plan.md").exists() && !store.root.join("tasks.md").exists();
        let mut units = Map::new();
        let mut ids: Vec<String> = plan.iter().map(|u| u.id.clone()).collect();
        for e in entries {
            if !ids.contains(&e.unit) {
                ids.push(e.unit.clone());
            }
        }
        for id in &ids {
            let max = plan
                .iter()
                .find(|u| &u.id == id)
                .and_then(|u| u.max_iterations)
                .unwrap_or(DEFAULT_MAX_ITERATIONS);
            let c = replay(entries, id, max);
            let mut m = Map::new();
            write_counters(&mut m, &c);
            if c.status == "done" {
                m.insert("verification_passed".into(), json!(true));
            }
            units.insert(id.clone(), Value::Object(m));
        }
        let created = entries
            .iter()
            .map(|e| e.timestamp.as_str())
            .find(|t| crate::store::clock::parse_time(t).is_some())
            .unwrap_or(now)
            .to_string();
        let (ukey, ckey) = if knowledge {
            ("phases", "current_phase")
        } else {
            ("tasks", "current_task")
        };
        let mut state = json!({
            "task": store.id,
            "slug": store.id,
            "mode": if knowledge { "knowledge" } else { "development" },
            "created": created,
            "updated": now,
            "phase": "execute",
            ckey: null,
            "current_iteration": 0,
            ukey: Value::Object(units),
        });
        advance(&mut state, plan);
        if let Some(cur) = state[ckey].as_str().map(str::to_string) {
            state["current_iteration"] = state[ukey][cur.as_str()]["iterations_used"].clone();
        }
        state
    }

    /// Writes a loaded slug back: reconciliation notes to progress.md, then state.json.
    fn save(&self, cx: &Ctx, store: &StoreRef, l: &Loaded3) -> Result<()> {
        let p = Paths::of(&store.root);
        self.log_notes(cx, &p, &l.notes)?;
        if l.dirty {
            cx.store.replace_json(&p.state, SCHEMA, &l.state)?;
        }
        Ok(())
    }

    /// Logs reconciliation notes as one `## Reconciled` block (not an iteration entry).
    fn log_notes(&self, cx: &Ctx, p: &Paths, notes: &[String]) -> Result<()> {
        if notes.is_empty() {
            return Ok(());
        }
        let mut note = format!("## Reconciled - {}\n", cx.store.clock().stamp());
        for n in notes {
            note.push_str(&format!("**Discrepancy:** {n}\n"));
        }
        note.push('\n');
        self.append_progress(cx, p, &note)
    }

    fn append_progress(&self, cx: &Ctx, p: &Paths, text: &str) -> Result<()> {
        if !cx.store.exists(&p.progress) {
            cx.store.append(&p.progress, b"# Progress Log\n\n")?;
        }
        cx.store.append(&p.progress, text.as_bytes())
    }

    /// One stop of a unit (a signal, or none): counts the iteration, steps the lifecycle,
    /// logs the entry, writes state.json, and says what the subagent and main agent hear.
    pub fn stop(
        &self,
        cx: &Ctx,
        store: &StoreRef,
        unit: &str,
        signal: Option<&Signal>,
        turn: &Turn<'_>,
    ) -> Result<Reaction> {
        let p = Paths::of(&store.root);
        cx.store.with_lock(&folder_lock_path(&store.root), || {
            let mut l = self.load(cx, store, true)?;
            let key = units_key(&l.state);
            let ck = current_key(&l.state);
            let plan_unit = l.plan.iter().find(|u| u.id == unit).cloned();
            if l.state[key].get(unit).is_none() {
                return Ok(Reaction::default());
            }
            let mut c = counters_of(
                &l.state[key][unit],
                plan_unit.as_ref().and_then(|u| u.max_iterations),
            );
            let prev_status = c.status.clone();
            let input = match signal {
                Some(s) => Input::Signal(s.kind, s.reason.as_deref()),
                None => Input::NoSignal,
            };
            let effect = step(&mut c, input);
            if effect == Effect::AlreadyDone {
                self.save(cx, store, &l)?;
                return Ok(Reaction::default());
            }
            let now = cx.store.clock().stamp();
            {
                let m = l.state[key][unit].as_object_mut().expect("unit object");
                write_counters(m, &c);
                if prev_status == "pending" {
                    m.entry("started_at").or_insert(json!(now));
                }
                if let Some(s) = signal {
                    m.insert("last_signal".into(), json!(s.text()));
                }
                if effect == Effect::Completed {
                    m.insert("verification_passed".into(), json!(true));
                    m.insert("completed_at".into(), json!(now));
                }
            }
            l.state[ck] = json!(unit);
            l.state["current_iteration"] = json!(c.iterations_used);
            l.state["updated"] = json!(now);
            if l.state["phase"] == "plan" || l.state["phase"] == "discover" {
                l.state["phase"] = json!("execute");
            }
            let ready = if c.status == "done" || c.status == "blocked" || c.status == "timeout" {
                advance(&mut l.state, &l.plan)
            } else {
                Vec::new()
            };
            // The entry: what the subagent did, what remains, blockers, signal, commits.
            let said_remaining = markdown::message_field(turn.final_text, "Remaining");
            let said_blockers = markdown::message_field(turn.final_text, "Blockers");
            let last_remaining = l
                .entries
                .iter()
                .rev()
                .find(|e| e.unit == unit)
                .and_then(|e| e.remaining.clone());
            let remaining = match &effect {
                Effect::Confirm => "Confirmation pass: re-check every criterion".to_string(),
                Effect::Verify => "Verification pass: quality and code review".to_string(),
                Effect::Completed => "None".to_string(),
                Effect::Returned(r) => format!(
                    "Fix what the check found{}",
                    r.as_ref().map(|r| format!(": {r}")).unwrap_or_default()
                ),
                _ => said_remaining
                    .clone()
                    .or(last_remaining.clone())
                    .unwrap_or_else(|| "Not stated by the subagent".into()),
            };
            let blockers = match &effect {
                Effect::Blocked(r) => r.clone(),
                Effect::Timeout => {
                    format!("Hit max iterations ({}): status timeout", c.max_iterations)
                }
                Effect::Returned(Some(r)) | Effect::KeepGoing(Some(r)) => r.clone(),
                _ => said_blockers.unwrap_or_else(|| "None".into()),
            };
            let commits = unlogged_commits(&l.state, &l.progress_text);
            let entry = Entry {
                unit: unit.to_string(),
                iteration: c.iterations_used,
                timestamp: now.clone(),
                did: Some(did_text(turn.final_text)),
                remaining: Some(remaining.clone()),
                blockers: Some(blockers.clone()),
                signal: signal.map(|s| match &s.reason {
                    Some(r) => format!("{}: {r}", s.text()),
                    None => s.text(),
                }),
                commit: Some(if commits.is_empty() {
                    "none".into()
                } else {
                    commits.join(", ")
                }),
            };
            // The log first: if the state write is lost, SessionStart replays the log.
            self.log_notes(cx, &p, &l.notes)?;
            self.append_progress(cx, &p, &render_entry(&entry))?;
            cx.store.replace_json(&p.state, SCHEMA, &l.state)?;
            Ok(self.reply(
                store,
                unit,
                &c,
                &effect,
                plan_unit.as_ref(),
                &remaining,
                &ready,
                turn,
            ))
        })
    }

    #[allow(clippy::too_many_arguments)]
    fn reply(
        &self,
        store: &StoreRef,
        unit: &str,
        c: &Counters,
        effect: &Effect,
        plan: Option<&PlanUnit>,
        remaining: &str,
        ready: &[String],
        turn: &Turn<'_>,
    ) -> Reaction {
        let mut r = Reaction::default();
        let sig = format!("<signal>{unit}_DONE</signal>");
        let fail = format!("<signal>{unit}_FAILED: what is wrong</signal>");
        let plan_file =
            if store.root.join("plan.md").exists() && !store.root.join("tasks.md").exists() {
                "plan.md"
            } else {
                "tasks.md"
            };
        let criteria = plan
            .and_then(|p| p.criteria.clone())
            .map(|c| format!(" ({c})"))
            .unwrap_or_default();
        let budget = format!("iteration {} of {}", c.iterations_used, c.max_iterations);
        let where_ = format!(".claude/iterative/{}/{plan_file}", store.id);
        let block = match effect {
            Effect::Confirm => Some(format!(
                "{unit}: confirmation pass ({budget}). You declared {unit} done. Re-check every criterion of {unit} in {where_}{criteria}: run the checks again, fix anything that does not hold, and emit {sig} again only if all of it holds. If something cannot be fixed now, emit {fail}."
            )),
            Effect::Verify => Some(format!(
                "{unit}: verification pass ({budget}). Confirmation held. Now review the work for quality against {unit}'s criteria in {where_}{criteria}: read the diff as a reviewer, run the tests and linters, look for missed edge cases and leftovers. Emit {sig} again only if it passes review; otherwise emit {fail}."
            )),
            Effect::Returned(reason) => Some(format!(
                "{unit}: the check found problems{}; {unit} is back in progress ({budget}). Fix them, then emit {sig} when every criterion holds.",
                reason.as_ref().map(|r| format!(" ({r})")).unwrap_or_default()
            )),
            Effect::KeepGoing(_) => Some(format!(
                "{unit} is not done yet ({budget}). Remaining: {remaining}. Keep working; read .claude/iterative/{}/guardrails.md if you have not; when every criterion holds, emit {sig}.",
                store.id
            )),
            _ => None,
        };
        match block {
            Some(b) if turn.bound => r.block.push(b),
            Some(_) => r.context.push(format!(
                "iterative {}: {unit} is now {} (signalled by a subagent not bound to it); launch a subagent with <task>{unit}</task> to continue.",
                store.id, c.status
            )),
            None => {}
        }
        match effect {
            Effect::Completed => {
                let ready_txt = if ready.is_empty() {
                    String::new()
                } else {
                    format!(" Ready now: {}.", ready.join(", "))
                };
                r.context.push(format!(
                    "iterative {}: {unit} is done (confirmed and verified after {} iterations).{ready_txt}",
                    store.id, c.iterations_used
                ));
            }
            Effect::Blocked(reason) => {
                let msg = format!("iterative {}: {unit} is blocked: {reason}.", store.id);
                r.system.push(format!("taskhook: {msg}"));
                r.context.push(format!(
                    "{msg} Ask the user for input, or move on to another ready unit."
                ));
            }
            Effect::Timeout => {
                let msg = format!(
                    "iterative {}: {unit} timed out after {} iterations (max_iterations {}).",
                    store.id, c.iterations_used, c.max_iterations
                );
                r.system.push(format!("taskhook: {msg}"));
                r.context.push(format!(
                    "{msg} Ask the user whether to raise max_iterations, simplify the criteria, or step in."
                ));
            }
            _ => {}
        }
        r
    }

    /// Records a commit (`hash: message`) in a slug whose current unit is not done yet (a
    /// subagent commits during its first iteration, while the unit is still `pending`).
    /// Decided read-only first; only a commit to record takes the lock (re-checked under it).
    fn record_commit(
        &self,
        cx: &Ctx,
        store: &StoreRef,
        hash: &str,
        message: &str,
    ) -> Result<Reaction> {
        let wants = |l: &Loaded3| {
            let Some(cur) = l.state[current_key(&l.state)].as_str() else {
                return false;
            };
            let in_work = matches!(
                status_of(&l.state, cur),
                "pending" | "in_progress" | "confirming" | "verifying"
            );
            let known = l.state["commits"].as_array().is_some_and(|a| {
                a.iter()
                    .any(|c| c.as_str().is_some_and(|c| c.starts_with(hash)))
            });
            in_work && !known
        };
        match self.load(cx, store, false) {
            Ok(l) if wants(&l) => {}
            Ok(_) | Err(Error::NotFound(_)) => return Ok(Reaction::default()),
            Err(e) => return Err(e),
        }
        cx.store.with_lock(&folder_lock_path(&store.root), || {
            let mut l = self.load(cx, store, true)?;
            if wants(&l) {
                let mut commits = l.state["commits"].as_array().cloned().unwrap_or_default();
                commits.push(json!(format!("{hash}: {message}")));
                l.state["commits"] = Value::Array(commits);
                l.state["updated"] = json!(cx.store.clock().stamp());
                l.dirty = true;
            }
            self.save(cx, store, &l)?;
            Ok(Reaction::default())
        })
    }

    /// SessionStart's writes for one slug, under its lock: stale temp files removed, state.json
    /// rebuilt or caught up from progress.md, discrepancies logged.
    fn reconcile_locked(&self, cx: &Ctx, store: &StoreRef) -> Result<Option<Loaded3>> {
        cx.store.with_lock(&folder_lock_path(&store.root), || {
            let removed = cx
                .store
                .clean_stale_temps_of(&Paths::of(&store.root).state)?;
            let mut l = match self.load(cx, store, true) {
                Ok(l) => l,
                Err(Error::NotFound(_)) => return Ok(None),
                Err(e) => return Err(e),
            };
            if !removed.is_empty() {
                l.notes
                    .push(format!("removed {} abandoned temp file(s)", removed.len()));
            }
            self.save(cx, store, &l)?;
            Ok(Some(l))
        })
    }

    /// The SessionStart summary of one slug.
    fn summary(&self, cx: &Ctx, store: &StoreRef, l: &Loaded3) -> Result<String> {
        let p = Paths::of(&store.root);
        let s = &l.state;
        let key = units_key(s);
        let ck = current_key(s);
        let mut out = format!(
            "taskhook · iterative \"{}\" ({} mode, phase {}), .claude/iterative/{}/",
            store.id,
            s["mode"].as_str().unwrap_or("development"),
            s["phase"].as_str().unwrap_or("execute"),
            store.id
        );
        let last = markdown::last_entries(&l.entries);
        match s[ck].as_str() {
            Some(cur) => {
                let u = &s[key][cur];
                let c = counters_of(u, None);
                out.push_str(&format!(
                    "\nCurrent: {cur} ({}, iteration {} of {}).",
                    c.status, c.iterations_used, c.max_iterations
                ));
                if let Some(rem) = last.get(cur).and_then(|e| e.remaining.as_deref()) {
                    out.push_str(&format!(" Last remaining: {rem}"));
                }
                out.push_str(&format!(" Completion signal: <signal>{cur}_DONE</signal>."));
            }
            None => out.push_str("\nNo current unit."),
        }
        let ready = ready_units(s, &l.plan);
        if !ready.is_empty() {
            out.push_str(&format!("\nReady: {}.", ready.join(", ")));
        }
        let ids = unit_ids(s);
        let with = |st: &str| -> Vec<String> {
            ids.iter()
                .filter(|u| status_of(s, u) == st)
                .map(|u| match s[key][u.as_str()]["reason"].as_str() {
                    Some(r) => format!("{u} ({r})"),
                    None => u.clone(),
                })
                .collect()
        };
        for (label, st) in [
            ("Blocked", "blocked"),
            ("Timed out", "timeout"),
            ("Done", "done"),
        ] {
            let list = with(st);
            if !list.is_empty() {
                out.push_str(&format!("\n{label}: {}.", list.join(", ")));
            }
        }
        for n in &l.notes {
            out.push_str(&format!("\nReconciled: {n}."));
        }
        for (name, path) in [
            ("context.md", &p.context),
            ("guardrails.md (read before every iteration)", &p.guardrails),
        ] {
            if let Some(text) = cx.store.read_text(path)? {
                let text = text.trim();
                if !text.is_empty() {
                    let shown: String = text.chars().take(FILE_CAP).collect();
                    let cut = if text.chars().count() > FILE_CAP {
                        "\n[…]"
                    } else {
                        ""
                    };
                    out.push_str(&format!("\n\n--- {name} ---\n{shown}{cut}"));
                }
            }
        }
        Ok(out)
    }

    fn status_of_store(&self, cx: &Ctx, store: &StoreRef) -> Result<StoreStatus> {
        let l = self.load(cx, store, false)?;
        let s = &l.state;
        let key = units_key(s);
        let mut st = StoreStatus {
            layout: self.name(),
            id: store.id.clone(),
            path: store.root.clone(),
            ..Default::default()
        };
        for u in unit_ids(s) {
            let status = status_of(s, &u).to_string();
            *st.counts.entry(status.clone()).or_default() += 1;
            if status == "blocked" || status == "timeout" {
                let why = s[key][u.as_str()]["reason"].as_str().unwrap_or(&status);
                st.blocked.push(format!("{u} ({why})"));
            }
        }
        st.current = s[current_key(s)].as_str().map(str::to_string);
        st.ready = ready_units(s, &l.plan);
        st.problems = l.notes.clone();
        Ok(st)
    }
}

/// The final message without its signal tags, as the entry's **Did**.
fn did_text(message: &str) -> String {
    let mut out = message.to_string();
    while let Some(i) = out.find("<signal>") {
        match out[i..].find("</signal>") {
            Some(j) => out.replace_range(i..i + j + "</signal>".len(), ""),
            None => break,
        }
    }
    // The subagent's own "Remaining:" / "Blockers:" lines go to their fields, not into Did.
    let kept: Vec<&str> = out
        .lines()
        .filter(|l| {
            !["Remaining", "Blockers", "Signal", "Commit"]
                .iter()
                .any(|f| markdown::message_field(l, f).is_some())
        })
        .collect();
    let out = markdown::one_paragraph(kept.join("\n").trim());
    if out.is_empty() {
        "(no final message)".into()
    } else {
        out
    }
}

/// Commit hashes in state.json not yet named in progress.md.
fn unlogged_commits(state: &Value, progress: &str) -> Vec<String> {
    state["commits"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .filter_map(|c| c.split(':').next())
                .map(str::trim)
                .filter(|h| !h.is_empty() && !progress.contains(h))
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// The commit a successful `git commit` printed: `[branch abc1234] message`.
pub fn parse_commit(stdout: &str) -> Option<(String, String)> {
    stdout.lines().find_map(|l| {
        let l = l.trim();
        let inner = l.strip_prefix('[')?;
        let (head, msg) = inner.split_once("] ")?;
        let hash = head.split_whitespace().last()?;
        (hash.len() >= 7 && hash.chars().all(|c| c.is_ascii_hexdigit()))
            .then(|| (hash.to_string(), msg.trim().to_string()))
    })
}

fn is_git_commit(payload: &Payload) -> bool {
    match &payload.event {
        Event::PostToolUse(t) if t.tool_name == "Bash" => t
            .tool_input
            .get("command")
            .and_then(Value::as_str)
            .is_some_and(|c| c.contains("git") && c.contains("commit")),
        _ => false,
    }
}

/// The state.json a Write/Edit touched, if it is one of ours.
fn written_state_file(payload: &Payload) -> Option<PathBuf> {
    let Event::PostToolUse(t) = &payload.event else {
        return None;
    };
    if !matches!(t.tool_name.as_str(), "Write" | "Edit" | "MultiEdit") {
        return None;
    }
    let path = t.tool_input.get("file_path").and_then(Value::as_str)?;
    let p = Path::new(path);
    (p.file_name()? == "state.json"
        && p.parent()?.parent()?.file_name()? == "iterative"
        && p.parent()?.parent()?.parent()?.file_name()? == ".claude")
        .then(|| p.to_path_buf())
}

impl Layout for Iterative {
    fn name(&self) -> &'static str {
        "iterative"
    }

    fn wants(&self, payload: &Payload) -> bool {
        matches!(payload.event, Event::SessionStart(_))
            || is_git_commit(payload)
            || written_state_file(payload).is_some()
    }

    fn discover(&self, cx: &Ctx, project: &Path) -> Result<Vec<StoreRef>> {
        let base = base(project);
        Ok(cx
            .store
            .list_dir(&base)?
            .into_iter()
            .filter(|e| e.is_dir && e.name != "archive" && check_id("slug", &e.name).is_ok())
            .map(|e| StoreRef {
                layout: "iterative",
                root: base.join(&e.name),
                id: e.name,
            })
            .collect())
    }

    fn state_files(&self, _cx: &Ctx, store: &StoreRef) -> Result<Vec<StateFile>> {
        Ok(vec![StateFile {
            path: Paths::of(&store.root).state,
            schema: SCHEMA,
            json_lines: false,
        }])
    }

    fn status(&self, cx: &Ctx, store: &StoreRef) -> Result<StoreStatus> {
        self.status_of_store(cx, store)
    }

    fn session_start(&self, cx: &Ctx, store: &StoreRef) -> Result<Reaction> {
        let mut r = Reaction::default();
        // Decide read-only first: a slug with nothing to reconcile is neither locked nor written.
        let peek = match self.load(cx, store, false) {
            Ok(l) => Some(l),
            Err(Error::NotFound(_)) => None,
            Err(e) => return Err(e),
        };
        let temps = cx.store.stale_temps_of(&Paths::of(&store.root).state)?;
        let l = match peek {
            Some(l) if !l.dirty && temps.is_empty() => Some(l),
            _ => self.reconcile_locked(cx, store)?,
        };
        let Some(l) = l else { return Ok(r) };
        if l.state["phase"] == "complete" {
            return Ok(r);
        }
        r.context.push(self.summary(cx, store, &l)?);
        Ok(r)
    }

    fn on_event(&self, cx: &Ctx, store: &StoreRef, payload: &Payload) -> Result<Reaction> {
        if let Some(path) = written_state_file(payload) {
            if path != Paths::of(&store.root).state {
                return Ok(Reaction::default());
            }
            let issues = crate::engine::check_document(cx, &path, SCHEMA)?;
            if issues.is_empty() {
                return Ok(Reaction::default());
            }
            let details = crate::store::schema::summarize(&issues);
            let note = format!(
                "## Invalid state.json - {}\n**Problem:** an edit left state.json invalid: {details}\n\n",
                cx.store.clock().stamp()
            );
            cx.store.with_lock(&folder_lock_path(&store.root), || {
                self.append_progress(cx, &Paths::of(&store.root), &note)
            })?;
            let mut r = Reaction::default();
            r.block.push(format!(
                "{} no longer matches its schema ({SCHEMA}): {details}. Restore the fields named (run `taskhook schema {SCHEMA}` for the format), or run `taskhook recover {}` to rebuild it from progress.md. taskhook updates this file itself; prefer signals (<signal>ID_DONE</signal>) over editing it.",
                path.display(),
                store.root.display()
            ));
            return Ok(r);
        }
        if is_git_commit(payload) {
            if let Event::PostToolUse(t) = &payload.event {
                let stdout = t
                    .tool_response
                    .get("stdout")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                if let Some((hash, msg)) = parse_commit(stdout) {
                    return self.record_commit(cx, store, &hash, &msg);
                }
            }
        }
        Ok(Reaction::default())
    }

    fn units(&self, cx: &Ctx, store: &StoreRef) -> Result<Vec<Unit>> {
        let l = match self.load(cx, store, false) {
            Ok(l) => l,
            Err(Error::NotFound(_)) => return Ok(Vec::new()),
            Err(e) => return Err(e),
        };
        let archived = l.state["phase"] == "complete";
        Ok(unit_ids(&l.state)
            .into_iter()
            .map(|id| Unit {
                active: !archived && status_of(&l.state, &id) != "done",
                id,
            })
            .collect())
    }

    fn apply_signal(
        &self,
        cx: &Ctx,
        store: &StoreRef,
        unit: &str,
        signal: &Signal,
        turn: &Turn<'_>,
    ) -> Result<Reaction> {
        self.stop(cx, store, unit, Some(signal), turn)
    }

    fn unsignalled_stop(
        &self,
        cx: &Ctx,
        store: &StoreRef,
        unit: &str,
        turn: &Turn<'_>,
    ) -> Result<Reaction> {
        self.stop(cx, store, unit, None, turn)
    }

    fn recover(&self, cx: &Ctx, store: &StoreRef) -> Result<String> {
        let p = Paths::of(&store.root);
        cx.store.with_lock(&folder_lock_path(&store.root), || {
            let plan = read_plan(cx, &p)?;
            let text = cx.store.read_text(&p.progress)?.unwrap_or_default();
            let entries = parse_progress(&text);
            if entries.is_empty() {
                return Err(Error::NotFound(format!(
                    "`{}` has no progress.md entries to rebuild state.json from",
                    p.progress.display()
                )));
            }
            let now = cx.store.clock().stamp();
            let mut state = self.rebuild(store, &plan, &entries, &now);
            // Keep what the log cannot know: creation time, task name, commits, domain.
            if let Loaded::Valid(old) = cx.store.load_json(&p.state, SCHEMA)? {
                for k in ["task", "created", "commits", "domain"] {
                    if let Some(v) = old.get(k) {
                        state[k] = v.clone();
                    }
                }
            } else if cx.store.exists(&p.state) {
                cx.store.quarantine(&p.state)?;
            }
            cx.store.replace_json(&p.state, SCHEMA, &state)?;
            let note = format!(
                "## Reconciled - {now}\n**Discrepancy:** `taskhook recover` rebuilt state.json from {} progress entries\n\n",
                entries.len()
            );
            self.append_progress(cx, &p, &note)?;
            Ok(format!(
                "Rebuilt {} from {} progress.md entries.",
                p.state.display(),
                entries.len()
            ))
        })
    }
}

/// Signal kinds by name, for the CLI.
pub fn kind_from_str(s: &str) -> Option<SignalKind> {
    match s.to_ascii_uppercase().as_str() {
        "DONE" => Some(SignalKind::Done),
        "FAILED" => Some(SignalKind::Failed),
        "BLOCKED" => Some(SignalKind::Blocked),
        _ => None,
    }
}
