//! The agent's verbs (CONTRACT §7): `taskhook next | show | claim | heartbeat | done | fail |
//! release`. Thin: parse, act through `engine::agent`, print readable text or (with `--json`)
//! one JSON object. Exit 0 on success, 1 on a refusal or an error (one line why).

use crate::claims::Owner;
use crate::context::Ctx;
use crate::engine::agent::{self, Acted, Next, ShowOut, Verb};
use crate::error::Result;

use super::{out, out_json, Io};

/// `taskhook next`.
#[derive(Debug, clap::Args)]
pub struct NextArgs {
    /// Only this store (its name as `taskhook status` shows it).
    #[arg(long, value_name = "STORE")]
    pub store: Option<String>,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
}

/// `taskhook show`.
#[derive(Debug, clap::Args)]
pub struct ShowArgs {
    /// The unit: STORE/TASK, or TASK when it is unique in the project.
    pub unit: String,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
}

/// `taskhook claim`, `heartbeat`, `release`.
#[derive(Debug, clap::Args)]
pub struct UnitArgs {
    /// The unit: STORE/TASK, or TASK when it is unique in the project.
    pub unit: String,
    /// Act on a unit another owner holds (a person's override; logged in the store's log).
    #[arg(long)]
    pub force: bool,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
}

/// `taskhook claim`.
#[derive(Debug, clap::Args)]
pub struct ClaimArgs {
    /// The unit: STORE/TASK, or TASK when it is unique in the project.
    pub unit: String,
    /// Act on a unit another owner holds (a person's override; logged in the store's log).
    #[arg(long)]
    pub force: bool,
    /// With team sync on: claim on this machine only, without proving it on the remote (the
    /// claim is pushed by the next sync, and may lose to one made meanwhile).
    #[arg(long)]
    pub offline: bool,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
}

/// `taskhook done`.
#[derive(Debug, clap::Args)]
pub struct DoneArgs {
    /// The unit: STORE/TASK, or TASK when it is unique in the project.
    pub unit: String,
    /// What was done, kept with the completion where the layout keeps such text.
    #[arg(long, value_name = "TEXT")]
    pub note: Option<String>,
    /// Act on a unit another owner holds (a person's override; logged in the store's log).
    #[arg(long)]
    pub force: bool,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
}

/// `taskhook fail`.
#[derive(Debug, clap::Args)]
pub struct FailArgs {
    /// The unit: STORE/TASK, or TASK when it is unique in the project.
    pub unit: String,
    /// Why it failed: kept in the layout's log (the retry feedback where the layout has one).
    #[arg(long, value_name = "TEXT", required = true)]
    pub reason: String,
    /// Act on a unit another owner holds (a person's override; logged in the store's log).
    #[arg(long)]
    pub force: bool,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
}

fn owner(cx: &Ctx) -> Result<Owner> {
    Owner::of_command(cx)
}

/// `taskhook next`.
pub fn next(cx: &Ctx, a: NextArgs, io: &mut Io<'_>) -> Result<u8> {
    let project = cx.project(None);
    let who = owner(cx)?;
    let n = agent::next(cx, &project, &who, a.store.as_deref())?;
    if a.json {
        out_json(io, &n)?;
    } else {
        out(io, &next_text(&n))?;
    }
    Ok(0)
}

fn next_text(n: &Next) -> String {
    let mut lines = Vec::new();
    match (&n.unit, &n.then) {
        (Some(unit), Some(then)) => {
            let title = n
                .title
                .as_deref()
                .map(|t| format!(" — {t}"))
                .unwrap_or_default();
            lines.push(format!(
                "next: {unit}{title} ({} {}, {})",
                n.layout.unwrap_or(""),
                n.store.as_deref().unwrap_or(""),
                n.status.as_deref().unwrap_or("")
            ));
            lines.push(format!("  why:   {}", n.why));
            if let Some(c) = &then.claim {
                lines.push(format!("  claim: {c}"));
            }
            lines.push(format!("  show:  {}", then.show));
            lines.push(format!("  done:  {}", then.done));
            lines.push(format!("  fail:  {}", then.fail));
            if let Some(r) = &then.release {
                lines.push(format!("  release: {r}"));
            }
        }
        _ => lines.push(format!("next: nothing — {}", n.why)),
    }
    for e in &n.expired {
        lines.push(format!("  expired claim: {e}"));
    }
    for b in &n.broken {
        lines.push(format!(
            "  cannot read {} {}: {}",
            b.layout, b.store, b.problem
        ));
    }
    lines.join("\n")
}

/// `taskhook show`.
pub fn show(cx: &Ctx, a: ShowArgs, io: &mut Io<'_>) -> Result<u8> {
    let project = cx.project(None);
    let s = agent::show(cx, &project, &a.unit)?;
    if a.json {
        out_json(io, &s)?;
    } else {
        out(io, &show_text(&s))?;
    }
    Ok(0)
}

pub(super) fn show_text(s: &ShowOut) -> String {
    let mut lines = Vec::new();
    let title = s
        .title
        .as_deref()
        .map(|t| format!(" — {t}"))
        .unwrap_or_default();
    lines.push(format!("{}{title}", s.unit));
    lines.push(format!(
        "  {} {} · {} ({})",
        s.layout,
        s.store,
        s.status,
        s.phase.label()
    ));
    if let Some(w) = &s.why {
        lines.push(format!("  {w}"));
    }
    if let Some(p) = &s.pass {
        lines.push(format!("  owes: {p}"));
    }
    if !s.deps.is_empty() {
        let d: Vec<String> = s
            .deps
            .iter()
            .map(|d| format!("{} ({})", d.task, d.status))
            .collect();
        lines.push(format!("  depends on: {}", d.join(", ")));
    }
    match &s.claim {
        Some(c) => lines.push(format!(
            "  claimed by {} since {}; lease {} {}",
            c.owner_label,
            c.since,
            if c.live { "ends" } else { "ended" },
            c.lease_ends
        )),
        None => lines.push("  nobody holds it".into()),
    }
    for sec in &s.sections {
        lines.push(String::new());
        lines.push(format!("{}:", sec.label));
        for l in sec.text.lines() {
            lines.push(format!("  {l}"));
        }
    }
    lines.join("\n")
}

/// `taskhook claim | heartbeat | done | fail | release`. With team sync on, the verb applies
/// here at once, its op is queued, and one bounded push is tried (the answer says whether it
/// reached the remote).
pub fn act(
    cx: &Ctx,
    unit: &str,
    verb: Verb<'_>,
    force: bool,
    json: bool,
    io: &mut Io<'_>,
) -> Result<u8> {
    let project = cx.project(None);
    let who = owner(cx)?;
    let (a, synced) = match crate::sync::config(cx, &project) {
        None => (agent::act(cx, &project, &who, unit, verb, force)?, None),
        Some(cfg) => {
            let run = super::sync::run_command;
            let push = verb != Verb::Claim;
            let (a, r) = crate::sync::verb(
                cx,
                &project,
                &cfg,
                crate::sync::VerbReq {
                    owner: &who,
                    unit,
                    verb,
                    force,
                    push,
                },
                &run,
            )?;
            let line = match &r {
                Some(r) => super::sync::verb_line(r),
                None => "claimed on this machine only (--offline): not proven on the remote; `taskhook sync` pushes it".into(),
            };
            (a, Some(line))
        }
    };
    print_acted(io, &a, synced, json)?;
    Ok(0)
}

fn print_acted(io: &mut Io<'_>, a: &Acted, synced: Option<String>, json: bool) -> Result<()> {
    if json {
        let mut v = serde_json::to_value(a).unwrap_or(serde_json::Value::Null);
        if let (Some(line), serde_json::Value::Object(m)) = (&synced, &mut v) {
            m.insert("sync".into(), line.clone().into());
        }
        out_json(io, &v)
    } else {
        let mut text = acted_text(a);
        if let Some(line) = synced {
            text.push('\n');
            text.push_str(&line);
        }
        out(io, &text)
    }
}

/// `taskhook claim`: with team sync on, true only once the remote holds it (unless
/// `--offline`).
pub fn claim(cx: &Ctx, a: &ClaimArgs, io: &mut Io<'_>) -> Result<u8> {
    let project = cx.project(None);
    let Some(cfg) = crate::sync::config(cx, &project) else {
        return act(cx, &a.unit, Verb::Claim, a.force, a.json, io);
    };
    if a.offline {
        return act(cx, &a.unit, Verb::Claim, a.force, a.json, io);
    }
    let who = owner(cx)?;
    let run = super::sync::run_command;
    let r = crate::sync::claim(cx, &project, &cfg, &who, &a.unit, a.force, &run)?;
    match r.claimed {
        Some(crate::sync::Claimed::Won(acted)) => {
            let line = if r.local_only {
                "claimed on this machine: its store is not synced".to_string()
            } else {
                format!("proven on {}", r.remote)
            };
            print_acted(io, &acted, Some(line), a.json)?;
            Ok(0)
        }
        Some(crate::sync::Claimed::Refused(why)) => Err(crate::error::Error::Rule(why)),
        Some(crate::sync::Claimed::Lost(why)) => Err(crate::error::Error::Rule(format!(
            "lost the race for {}: {why}",
            a.unit
        ))),
        None => Err(crate::error::Error::Rule(format!(
            "the claim of {} could not be proven on {}",
            a.unit, r.remote
        ))),
    }
}

fn acted_text(a: &Acted) -> String {
    let mut lines: Vec<String> = a.said.clone();
    lines.push(format!(
        "{} is now {} ({})",
        a.unit,
        a.status,
        a.phase.label()
    ));
    if let Some(p) = &a.pass {
        lines.push(format!("next pass: {p}"));
    }
    if let Some(t) = &a.then {
        lines.push(format!("when it is done: {}", t.done));
        lines.push(format!("if it cannot be done: {}", t.fail));
    }
    if let Some(c) = &a.claim {
        lines.push(format!(
            "held by {}; lease ends {}",
            c.owner_label, c.lease_ends
        ));
    }
    if !a.ready.is_empty() {
        lines.push(format!("now ready: {}", a.ready.join(", ")));
    }
    lines.join("\n")
}
