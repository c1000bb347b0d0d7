//! The one place a layout's [`Reaction`] becomes what an event's reply says (CONTRACT §4–§5).
//! A layout says what happened in its own words; who hears what is decided here, by the event
//! being answered and, for a lifecycle step, by whether the subagent is bound to the unit:
//!
//! - another pass (`instruction`) becomes `decision: block` only for a subagent bound to the
//!   unit; an unbound subagent is never blocked, and the main agent is told to relaunch;
//! - what the main agent should learn is kept as a notice (never `additionalContext` on
//!   SubagentStop, which would give the subagent another turn) and handed over at its next
//!   PostToolUse;
//! - a refusal is answered as the event allows: PreToolUse denies the tool call
//!   (`permissionDecision: "deny"`), TaskCompleted refuses with exit 2, any other event only
//!   through the messages (the agent's verbs turn it into their one-line error themselves);
//! - a halt is kept until a person lifts it, and halts the agent now where the event allows.

use serde_json::{Map, Value};

use super::Work;
use crate::agents;
use crate::hook::output::{accepts, Reply};
use crate::layouts::{Reaction, TaskUpdate};

/// A lifecycle step of one unit, which the reaction answers.
#[derive(Debug, Clone)]
pub(crate) struct OfUnit<'a> {
    pub layout: &'a str,
    pub store: &'a str,
    pub unit: &'a str,
    /// Whether the subagent whose event this is was bound to the unit.
    pub bound: bool,
    /// What the notices for the main agent are about (a later notice about the same unit
    /// supersedes them).
    pub about: Option<agents::About>,
}

/// Folds `r` into the reply of the event `work` answers (`work.event`); `step` when it answers
/// a lifecycle step of a unit.
pub(crate) fn fold(work: &mut Work, r: Reaction, step: Option<&OfUnit<'_>>) {
    let takes = accepts(&work.event);
    let about = step.and_then(|s| s.about.clone());
    let notice = |text: String| agents::Notice {
        text,
        about: about.clone(),
    };
    if let Some(again) = r.instruction {
        match step {
            Some(s) if s.bound => work.reply.block.push(again),
            Some(s) => work.notices.push(notice(format!(
                "{} {}: {} is now {} (signalled by a subagent not bound to it); launch a subagent with <task>{}</task> to continue.",
                s.layout,
                s.store,
                s.unit,
                r.status.as_deref().unwrap_or("in progress"),
                s.unit
            ))),
            None => work.notices.push(notice(again)),
        }
    }
    work.notices.extend(r.tell_main.into_iter().map(notice));
    work.reply.system.extend(r.tell_user);
    work.reply.context.extend(r.context);
    work.reply.block.extend(r.block);
    if !r.tasks_to_update.is_empty() {
        work.reply.merge(Reply {
            extra: tasks_to_update(&r.tasks_to_update),
            ..Default::default()
        });
    }
    if let Some(why) = r.refused {
        if takes.deny {
            work.reply.deny.get_or_insert(why);
        } else if takes.exit2 {
            work.reply.refuse.get_or_insert(why);
        }
    }
    if let Some(h) = r.halt {
        if takes.halt {
            work.reply.halt.get_or_insert_with(|| h.message.clone());
        }
        work.halts.push((h.key, h.message));
    }
}

/// Seed 002's `tasks_to_update`, as the extra `hookSpecificOutput` field it is on the wire.
fn tasks_to_update(list: &[TaskUpdate]) -> Map<String, Value> {
    let list = list
        .iter()
        .map(|t| serde_json::to_value(t).unwrap_or(Value::Null))
        .collect();
    Map::from_iter([("tasks_to_update".to_string(), Value::Array(list))])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layouts::Halt;

    fn work(event: &str) -> Work {
        Work {
            event: event.into(),
            ..Default::default()
        }
    }

    fn unit(bound: bool) -> OfUnit<'static> {
        OfUnit {
            layout: "fake",
            store: "s",
            unit: "T1",
            bound,
            about: None,
        }
    }

    #[test]
    fn only_a_bound_subagent_is_blocked() {
        let r = || Reaction {
            status: Some("confirming".into()),
            instruction: Some("again".into()),
            ..Default::default()
        };
        let mut w = work("SubagentStop");
        fold(&mut w, r(), Some(&unit(true)));
        assert_eq!(w.reply.block, ["again"]);
        assert!(w.notices.is_empty());
        let mut w = work("SubagentStop");
        fold(&mut w, r(), Some(&unit(false)));
        assert!(w.reply.block.is_empty());
        assert_eq!(
            w.notices,
            [agents::Notice::plain("fake s: T1 is now confirming (signalled by a subagent not bound to it); launch a subagent with <task>T1</task> to continue.".into())]
        );
    }

    #[test]
    fn a_refusal_is_what_the_event_honours() {
        let refused = || Reaction::refused("no");
        let mut w = work("PreToolUse");
        fold(&mut w, refused(), Some(&unit(true)));
        assert_eq!(
            (w.reply.deny.as_deref(), w.reply.refuse.as_deref()),
            (Some("no"), None)
        );
        let mut w = work("TaskCompleted");
        fold(&mut w, refused(), None);
        assert_eq!(
            (w.reply.deny.as_deref(), w.reply.refuse.as_deref()),
            (None, Some("no"))
        );
        for event in ["SubagentStop", "PostToolUse"] {
            let mut w = work(event);
            fold(&mut w, refused(), Some(&unit(true)));
            assert!(w.reply.is_empty(), "{event}");
        }
    }

    #[test]
    fn a_halt_is_kept_and_shown_where_the_event_takes_it() {
        let r = || Reaction {
            halt: Some(Halt {
                key: "cdd:ws:stop".into(),
                message: "wait".into(),
            }),
            ..Default::default()
        };
        let mut w = work("PostToolUse");
        fold(&mut w, r(), None);
        assert_eq!(w.reply.halt.as_deref(), Some("wait"));
        assert_eq!(w.halts, [("cdd:ws:stop".to_string(), "wait".to_string())]);
        let mut w = work("SubagentStop");
        fold(&mut w, r(), Some(&unit(true)));
        assert_eq!(w.reply.halt, None);
        assert_eq!(w.halts.len(), 1);
    }

    #[test]
    fn tasks_to_update_keep_the_wire_shape() {
        let mut w = work("SubagentStop");
        let r = || Reaction {
            tasks_to_update: vec![TaskUpdate {
                task_id: "1".into(),
                status: "completed".into(),
            }],
            ..Default::default()
        };
        fold(&mut w, r(), None);
        fold(&mut w, r(), None);
        assert_eq!(
            Value::Object(w.reply.extra),
            serde_json::json!({"tasks_to_update": [
                {"task_id": "1", "status": "completed"},
                {"task_id": "1", "status": "completed"}
            ]})
        );
    }
}
