//! The verbs that change a unit: `claim`, `heartbeat`, `done`, `fail`, `release`.

use serde::Serialize;

use super::resolve::resolve;
use super::{claim_view, reference, shell_quote, stores, then, ClaimView, Then};
use crate::context::Ctx;
use crate::engine::claims::{self, Claim, Owner};
use crate::error::{Error, Result};
use crate::layouts::{Input, Phase, Step, Turn};
use crate::project::Project;
use crate::signals::SignalKind;

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

/// The step's refusal, or its messages.
fn said_of(step: &Step) -> Result<Vec<String>> {
    if let Some(d) = step.deny.as_ref().or(step.refused.as_ref()) {
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

/// `claim`, `heartbeat`, `done`, `fail` and `release` of one unit by `owner`. `force` lets a
/// person act on a unit another owner holds (logged in the store's log).
pub fn act(
    cx: &Ctx,
    project: &Project,
    owner: &Owner,
    name: &str,
    verb: Verb<'_>,
    force: bool,
) -> Result<Acted> {
    let lease = claims::lease_seconds(cx, &project.root);
    claims::update(cx, &project.root, |held| {
        let (found, broken) = stores(cx, project);
        let at = resolve(&found, &broken, name)?;
        let f = &found[at.store];
        let u = f.units[at.unit].clone();
        let key = (f.layout.name(), f.store.id.as_str(), u.id.as_str());
        let r = reference(&f.store.id, &u.id);
        let mut said = Vec::new();
        let current = held.of(key.0, key.1, key.2).cloned();
        let mine = current.as_ref().is_some_and(|c| c.owner == owner.id);
        let live_other = current
            .as_ref()
            .filter(|c| c.owner != owner.id && claims::is_live(cx, c));
        if let Some(c) = live_other {
            let lease_end = claims::lease_end(cx, c);
            if !force || verb == Verb::Claim {
                return Err(refused(format!(
                    "{r} is held by {} (claimed {}, lease ends {}); nothing changed{}",
                    claims::label(&c.owner),
                    c.since,
                    claims::relative(cx, lease_end),
                    if verb == Verb::Claim {
                        ""
                    } else {
                        "; only its owner can do this (a person may pass --force)"
                    }
                )));
            }
            let line = format!(
                "{} forced by {} on a unit held by {}",
                verb.word(),
                owner.label(),
                claims::label(&c.owner)
            );
            f.layout.note(cx, &f.store, &u.id, &line)?;
            said.push(line);
        }
        let expired_other = current
            .as_ref()
            .filter(|c| c.owner != owner.id && !claims::is_live(cx, c));
        let takeover = expired_other.map(|c| {
            format!(
                "took over {r} from {}, whose lease expired {}",
                claims::label(&c.owner),
                claims::relative(cx, claims::lease_end(cx, c))
            )
        });
        let turn = Turn {
            agent_id: None,
            bound: true,
            stop_hook_active: false,
            final_text: "",
        };
        // Takes the unit for `owner` (the layout's start when it is ready).
        let take = |said: &mut Vec<String>, via: &str| -> Result<Option<Claim>> {
            match u.phase {
                Phase::Ready => {
                    let step = f.layout.claim(cx, &f.store, &u.id, &turn)?;
                    said.extend(said_of(&step)?);
                }
                Phase::InProgress => {}
                Phase::Done => {
                    return Err(refused(format!("{r} is already finished ({})", u.status)))
                }
                Phase::Blocked | Phase::Person => {
                    return Err(refused(format!(
                        "{r} is not ready ({}{}); nothing changed",
                        u.status,
                        u.why
                            .as_deref()
                            .map(|w| format!(": {w}"))
                            .unwrap_or_default()
                    )))
                }
            }
            if let Some(t) = &takeover {
                f.layout.note(cx, &f.store, &u.id, t)?;
                said.push(t.clone());
            }
            claims::keep_alive(cx, owner)?;
            Ok(Some(claims::new_claim(
                cx,
                lease,
                owner,
                key,
                if takeover.is_some() { "takeover" } else { via },
            )))
        };
        let mut claim_after = current.clone();
        let mut pass = None;
        let mut ready = Vec::new();
        let mut halts: Vec<(String, String)> = Vec::new();
        match verb {
            Verb::Claim => {
                if mine {
                    if u.phase == Phase::Done {
                        return Err(refused(format!("{r} is already finished ({})", u.status)));
                    }
                    said.push(format!("{r} is already yours; lease renewed"));
                    claim_after = current.clone().map(|mut c| {
                        c.renewed = claims::now_stamp(cx);
                        c
                    });
                    claims::keep_alive(cx, owner)?;
                } else {
                    claim_after = take(&mut said, "claim")?;
                    said.push(format!("claimed {r} for {}", owner.label()));
                }
            }
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
                claim_after = current.clone().map(|mut c| {
                    c.renewed = claims::now_stamp(cx);
                    c
                });
                claims::keep_alive(cx, owner)?;
                said.push(format!("lease of {r} renewed"));
            }
            Verb::Done(_) | Verb::Fail(_) => {
                if !mine && (current.is_none() || expired_other.is_some()) {
                    if matches!(verb, Verb::Fail(_)) && u.phase == Phase::Ready {
                        return Err(refused(format!(
                            "{r} is not in progress; nothing to fail (claim it first)"
                        )));
                    }
                    claim_after = take(&mut said, "done")?;
                }
                let (kind, reason) = match verb {
                    Verb::Done(note) => (SignalKind::Done, note),
                    Verb::Fail(why) => (SignalKind::Failed, Some(why)),
                    _ => (SignalKind::Done, None),
                };
                let text = match reason {
                    Some(r) => format!("<signal>{}_{}: {r}</signal>", u.id, kind.word()),
                    None => format!("<signal>{}_{}</signal>", u.id, kind.word()),
                };
                let turn = Turn {
                    final_text: &text,
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
                if u.phase != Phase::InProgress {
                    if current.is_none() {
                        return Err(refused(format!(
                            "{r} is not in progress ({}); nothing to release",
                            u.status
                        )));
                    }
                } else {
                    let step = f.layout.release(cx, &f.store, &u.id)?;
                    said.extend(said_of(&step)?);
                }
                if let Some(t) = &takeover {
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
            crate::engine::notices::keep(cx, &project.root, "", &[], &halts)?;
        }
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
