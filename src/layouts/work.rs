//! The unit interface every layout offers the agent's verbs (`taskhook next | show | claim |
//! heartbeat | done | fail | release`, CONTRACT §7) and the board: a store's units in the
//! layout's own order of work, each with its place among five phases, and what a person or the
//! model needs to do one of them.
//!
//! The verbs themselves are written once, in `engine::agent`; a layout only says what its units
//! are ([`WorkUnit`]), what one holds ([`Shown`]), and carries out its own transitions (the
//! launch step for a claim, its `_DONE` / `_FAILED` signal steps, a release).

use serde::Serialize;

use super::summary::{Item, Summary};

/// Where a unit stands, in the words every layout shares (the board's columns).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// Can be started now.
    #[default]
    Ready,
    /// Being worked on (started, or owing a follow-up pass such as a verification).
    InProgress,
    /// Waits for a person: a stop to pass, a unit held for review, a run abandoned.
    Person,
    /// Waits for other units (dependencies, an earlier layer, an order entry before it).
    Blocked,
    /// Finished (done, completed, merged, cancelled, archived).
    Done,
}

impl Phase {
    /// Every phase, in the board's column order.
    pub const ALL: [Phase; 5] = [
        Phase::Ready,
        Phase::InProgress,
        Phase::Person,
        Phase::Blocked,
        Phase::Done,
    ];

    /// How a person reads it.
    pub fn label(self) -> &'static str {
        match self {
            Phase::Ready => "ready",
            Phase::InProgress => "in progress",
            Phase::Person => "waiting for a person",
            Phase::Blocked => "blocked",
            Phase::Done => "done",
        }
    }
}

/// One unit of a store, as the agent's verbs and the board see it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct WorkUnit {
    /// The layout's own id (`T1`, `L0-001`, `foo.md`, `R1`, `1`).
    pub id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The layout's own status word (`PENDING`, `verifying`, `pending/`, …).
    pub status: String,
    pub phase: Phase,
    /// Why it is not ready, or the state worth showing beside it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    /// The units of the same store it depends on (edges of the dependency graph).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub deps: Vec<String>,
    /// A follow-up pass the unit owes before it is finished (a verification, a confirmation).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pass: Option<String>,
    /// When the unit entered its status (RFC 3339), where the layout records it: the board's
    /// age of a card.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub since: Option<String>,
    /// The group the unit belongs to (an execute layer): a cluster of the dependency graph.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// The unit it is part of (a projects parent task): a "part of" edge of the graph.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
}

impl WorkUnit {
    fn from_item(item: &Item, phase: Phase, status: &str) -> Self {
        WorkUnit {
            id: item.id.clone(),
            title: item.title.clone(),
            status: status.to_string(),
            phase,
            why: item.detail.clone(),
            deps: item.waits_for.clone(),
            ..Default::default()
        }
    }
}

/// A unit's title from its text: `None` when empty, cut at 80 characters (with `…`).
pub fn title_of(text: &str) -> Option<String> {
    if text.is_empty() {
        return None;
    }
    let mut short: String = text.chars().take(80).collect();
    if short.len() < text.len() {
        short.push('…');
    }
    Some(short)
}

/// Everything needed to do one unit (`taskhook show`): labelled sections in the layout's order
/// (description, files, dependencies, attempts and the last failure, guardrails, history).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Shown {
    pub sections: Vec<(String, String)>,
}

/// A JSON value as text for [`Shown`]: strings as they are, lists one item a line.
pub fn text_of(v: &serde_json::Value) -> String {
    use serde_json::Value;
    match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        Value::Array(a) => a
            .iter()
            .map(|x| format!("- {}", text_of(x)))
            .collect::<Vec<_>>()
            .join("\n"),
        other => other.to_string(),
    }
}

impl Shown {
    /// Adds a section when its text is not empty.
    pub fn add(&mut self, label: &str, text: impl Into<String>) {
        let text = text.into();
        if !text.trim().is_empty() {
            self.sections.push((label.to_string(), text));
        }
    }
}

/// A store's units read off its summary, for a layout that gives no better account: its
/// current units in progress, its ready units in order, blocked units waiting, stops and held
/// units waiting for a person. Units the summary does not list are not returned.
pub fn from_summary(s: &Summary) -> Vec<WorkUnit> {
    let mut out: Vec<WorkUnit> = Vec::new();
    let mut push = |items: &[Item], phase: Phase, status: &str| {
        for i in items {
            if !out.iter().any(|u| u.id == i.id) {
                out.push(WorkUnit::from_item(i, phase, status));
            }
        }
    };
    push(&s.current, Phase::InProgress, "in progress");
    push(&s.ready, Phase::Ready, "ready");
    push(&s.stops_waiting, Phase::Person, "stop");
    for (label, items, needs_person) in &s.more {
        let phase = if *needs_person {
            Phase::Person
        } else {
            Phase::Done
        };
        push(items, phase, label);
    }
    push(&s.blocked, Phase::Blocked, "blocked");
    out
}
