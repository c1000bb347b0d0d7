//! The verbs that change a unit: `claim`, `heartbeat`, `done`, `fail`, `release`.

use serde::Serialize;

use super::resolve::resolve;
use super::{claim_view, reference, shell_quote, stores, then, Broken, ClaimView, Found, Then};
use crate::claims::{self, Claim, Claims, Owner};
use crate::context::Ctx;
use crate::error::{Error, Result};
use crate::layouts::{Input, Phase, Reaction, Turn, WorkUnit};
use crate::project::Project;
use crate::signals::{FinalMessage, SignalKind};

/// What a verb that changes a unit answers.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Acted {
    pub unit: String,
    pub layout: &'static str,
    pub store: String,
    pub task: String,
    /// The unit's status after the verb.
    pub status: String,
    pub phase: Phase,
    /// What happened, one line each (the layout's messages included).
    pub said: Vec<String>,
    /// Another pass the layout asks for before the unit is finished (the owner keeps it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pass: Option<String>,
    /// The claim after the verb (`None`: nobody holds the unit).
    pub claim: Option<ClaimView>,
    /// Units the verb made ready.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ready: Vec<String>,
    /// The commands for what comes next while the unit is held (finish, fail, release).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub then: Option<Then>,
}

/// Which verb.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verb<'a> {
    Claim,
    Heartbeat,
    Done(Option<&'a str>),
    Fail(&'a str),
    Release,
}

impl Verb<'_> {
    fn word(self) -> &'static str {
        match self {
            Verb::Claim => "claim",
            Verb::Heartbeat => "heartbeat",
            Verb::Done(_) => "done",
            Verb::Fail(_) => "fail",
            Verb::Release => "release",
        }
    }
}

fn refused(why: String) -> Error {
    Error::Rule(why)
}

/// The layout's refusal as the verb's one-line error (without the `taskhook: ` its hook
/// wording may carry, and without the final period), or its messages.
fn said_of(step: &Reaction) -> Result<Vec<String>> {
    if let Some(d) = &step.refused {
        return Err(refused(
            d.trim_start_matches("taskhook: ")
                .trim_end_matches('.')
                .to_string(),
        ));
    }
    let mut said: Vec<String> = step.tell_main.clone();
    said.extend(step.tell_user.iter().cloned());
    Ok(said
        .into_iter()
        .map(|s| s.trim_start_matches("taskhook: ").to_string())
        .collect())
}

/// What a verb will do, decided before anything is written: every refusal is found here, so
/// a refused verb leaves every file as it was (no lock file, no folder).
struct Plan {
    store: usize,
    unit: usize,
    r: String,
    current: Option<Claim>,
    /// The owner holds the unit now.
    mine: bool,
    /// Said (and logged) when the unit is taken from an owner whose lease ended.
    takeover: Option<String>,
    /// Said and logged when a person forces a verb on a unit another owner holds.
    forced: Option<String>,
    /// The unit must be taken first (the layout's start when it is ready).
    take: bool,
}

fn not_ready(r: &str, u: &WorkUnit) -> Error {
    refused(format!(
        "{r} is not ready ({}{}); nothing changed",
        u.status,
        u.why
            .as_deref()
            .map(|w| format!(": {w}"))
            .unwrap_or_default()
    ))
}

#[allow(clippy::too_many_arguments)]
fn plan(
    cx: &Ctx,
    found: &[Found],
    broken: &[Broken],
    held: &Claims,
    owner: &Owner,
    name: &str,
    verb: Verb<'_>,
    force: bool,
) -> Result<Plan> {
    let at = resolve(found, broken, name)?;
    let f = &found[at.store];
    let u = &f.units[at.unit];
    let r = reference(&f.store.id, &u.id);
    let current = held
        .of(f.layout.name(), &f.store.id, f.key(at.unit))
        .cloned();
    let mine = current.as_ref().is_some_and(|c| c.owner == owner.id);
    let other = current.as_ref().filter(|c| c.owner != owner.id);
    let live_other = other.filter(|c| claims::is_live(cx, c));
    let mut forced = None;
    if let Some(c) = live_other {
        if !force || verb == Verb::Claim {
            return Err(refused(format!(
                "{r} is held by {} (claimed {}, lease ends {}); nothing changed{}",
                claims::label(&c.owner),
                c.since,
                claims::relative(cx, claims::lease_end(cx, c)),
                if verb == Verb::Claim {
                    ""
                } else {
                    "; only its owner can do this (a person may pass --force)"
                }
            )));
        }
        forced = Some(format!(
            "{} forced by {} on a unit held by {}",
            verb.word(),
            owner.label(),
            claims::label(&c.owner)
        ));
    }
    let takeover = other.filter(|_| live_other.is_none()).map(|c| {
        format!(
            "took over {r} from {}, whose lease expired {}",
            claims::label(&c.owner),
            claims::relative(cx, claims::lease_end(cx, c))
        )
    });
    let finished = || refused(format!("{r} is already finished ({})", u.status));
    let take = match verb {
        Verb::Claim if mine => {
            if u.phase == Phase::Done {
                return Err(finished());
            }
            false
        }
        Verb::Claim => true,
        Verb::Heartbeat => {
            if !mine {
                return Err(refused(match &current {
                    Some(c) => format!(
                        "{r} is held by {}, not by {}; nothing changed",
                        claims::label(&c.owner),
                        owner.label()
                    ),
                    None => format!(
                        "nobody holds {r}; claim it first (taskhook claim {})",
                        shell_quote(&r)
                    ),
                }));
            }
            false
        }
        Verb::Done(_) | Verb::Fail(_) => {
            let take = !mine && live_other.is_none();
            if take && matches!(verb, Verb::Fail(_)) && u.phase == Phase::Ready {
                return Err(refused(format!(
                    "{r} is not in progress; nothing to fail (claim it first)"
                )));
            }
            take
        }
        Verb::Release => {
            if u.phase != Phase::InProgress && current.is_none() {
                return Err(refused(format!(
                    "{r} is not in progress ({}); nothing to release",
                    u.status
                )));
            }
            false
        }
    };
    if take {
        match u.phase {
            Phase::Ready | Phase::InProgress => {}
            Phase::Done => return Err(finished()),
            Phase::Blocked | Phase::Person => return Err(not_ready(&r, u)),
        }
    }
    Ok(Plan {
        store: at.store,
        unit: at.unit,
        r,
        current,
        mine,
        takeover: takeover.filter(|_| take || verb == Verb::Release),
        forced,
        take,
    })
}

/// `claim`, `heartbeat`, `done`, `fail` and `release` of one unit by `owner`. `force` lets a
/// person act on a unit another owner holds (logged in the store's log). A refusal changes
/// nothing at all.
pub fn act(
    cx: &Ctx,
    project: &Project,
    owner: &Owner,
    name: &str,
    verb: Verb<'_>,
    force: bool,
) -> Result<Acted> {
    {
        let (found, broken) = stores(cx, project);
        let held = claims::load(cx, &project.root)?;
        plan(cx, &found, &broken, &held, owner, name, verb, force)?;
    }
    let lease = claims::lease_seconds(cx, &project.root);
    claims::update(cx, &project.root, |held| {
        let (found, broken) = stores(cx, project);
        let p = plan(cx, &found, &broken, held, owner, name, verb, force)?;
        let f = &found[p.store];
        let u = f.units[p.unit].clone();
        let r = p.r.clone();
        let key = (f.layout.name(), f.store.id.as_str(), f.key(p.unit));
        let mut said = Vec::new();
        if let Some(line) = &p.forced {
            f.layout.note(cx, &f.store, &u.id, line)?;
            said.push(line.clone());
        }
        let none = FinalMessage::default();
        let turn = Turn {
            agent_id: None,
            bound: true,
            stop_hook_active: false,
            message: &none,
            by_hand: true,
        };
        let renewed = |c: &Claim| {
            let mut c = c.clone();
            c.renewed = claims::now_stamp(cx);
            c
        };
        let mut claim_after = p.current.clone();
        if p.take {
            if u.phase == Phase::Ready {
                let step = f.layout.claim(cx, &f.store, &u.id, &turn)?;
                said.extend(said_of(&step)?);
            }
            if let Some(t) = &p.takeover {
                f.layout.note(cx, &f.store, &u.id, t)?;
                said.push(t.clone());
            }
            claims::keep_alive(cx, owner)?;
            let via = match (&p.takeover, verb) {
                (Some(_), _) => "takeover",
                (None, Verb::Claim) => "claim",
                _ => "done",
            };
            claim_after = Some(claims::new_claim(cx, lease, owner, key, via));
        }
        let mut pass = None;
        let mut ready = Vec::new();
        let mut halts: Vec<(String, String)> = Vec::new();
        match verb {
            Verb::Claim if p.mine => {
                said.push(format!("{r} is already yours; lease renewed"));
                claim_after = p.current.as_ref().map(renewed);
                claims::keep_alive(cx, owner)?;
            }
            Verb::Claim => said.push(format!("claimed {r} for {}", owner.label())),
            Verb::Heartbeat => {
                claim_after = p.current.as_ref().map(renewed);
                claims::keep_alive(cx, owner)?;
                said.push(format!("lease of {r} renewed"));
            }
            Verb::Done(_) | Verb::Fail(_) => {
                let (kind, reason) = match verb {
                    Verb::Fail(why) => (SignalKind::Failed, Some(why)),
                    Verb::Done(note) => (SignalKind::Done, note),
                    _ => (SignalKind::Done, None),
                };
                let text = match reason {
                    Some(r) => format!("<signal>{}_{}: {r}</signal>", u.id, kind.word()),
                    None => format!("<signal>{}_{}</signal>", u.id, kind.word()),
                };
                let message = FinalMessage::parse(&text);
                let turn = Turn {
                    message: &message,
                    ..turn
                };
                let step =
                    f.layout
                        .step(cx, &f.store, &u.id, Input::Signal(kind, reason), &turn)?;
                said.extend(said_of(&step)?);
                pass = step.instruction.clone();
                ready = step.ready.clone();
                halts.extend(step.halt.map(|h| (h.key, h.message)));
            }
            Verb::Release => {
                if u.phase == Phase::InProgress {
                    let step = f.layout.release(cx, &f.store, &u.id)?;
                    said.extend(said_of(&step)?);
                }
                if let Some(t) = &p.takeover {
                    said.push(t.replace("took over", "released the expired claim on"));
                }
                said.push(format!("released {r}"));
                claim_after = None;
            }
        }
        // Where the unit stands now: a claim ends when it leaves "in progress".
        let after = f
            .layout
            .work(cx, &f.store)?
            .into_iter()
            .find(|x| x.id == u.id);
        let (status, phase, pass_after) = match &after {
            Some(x) => (x.status.clone(), x.phase, x.pass.clone()),
            None => (u.status.clone(), Phase::Done, None),
        };
        if phase != Phase::InProgress {
            claim_after = None;
        }
        match &claim_after {
            Some(c) => held.put(c.clone()),
            None => {
                held.remove(key.0, key.1, key.2);
            }
        }
        // A stop the step reached halts the main agent until a person passes it, as it does
        // when a subagent's signal reaches it.
        if !halts.is_empty() {
            crate::agents::keep(cx, &project.root, "", &[], &halts)?;
        }
        // With team sync on, the change is also an op, queued in the same transaction (a
        // failure to queue it undoes the verb).
        let mut fields = serde_json::Map::new();
        match verb {
            Verb::Done(Some(note)) => {
                fields.insert("note".into(), note.into());
            }
            Verb::Fail(reason) => {
                fields.insert("reason".into(), reason.into());
            }
            _ => {}
        }
        if force {
            fields.insert("force".into(), true.into());
        }
        crate::sync::record(
            cx,
            project,
            &f.store,
            &u.id,
            verb.word(),
            fields,
            Some(&owner.id),
        )?;
        Ok(Acted {
            then: claim_after.as_ref().map(|_| then(&r, true)),
            unit: r,
            layout: f.layout.name(),
            store: f.store.id.clone(),
            task: u.id.clone(),
            status,
            phase,
            said,
            pass: pass.or(pass_after),
            claim: claim_after.as_ref().map(|c| claim_view(cx, c)),
            ready,
        })
    })
}
