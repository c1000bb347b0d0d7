//! state.json as a typed model (seed 003, `schemas/iterative-state.schema.json`): the slug's
//! mode, workflow phase, current pointer and units, each unit's status as an enum and its
//! `reason` classified once ([`Reason`]), so decisions match on types, not on strings.
//!
//! Read with [`crate::layouts::json::typed`] from the checked document and written back with
//! [`crate::layouts::json::write_back`]: every object level taskhook touches keeps its unknown
//! fields in `rest`, a field absent from the file stays absent, and one that is `null` (a
//! current pointer, `started_at`, `completed_at`) stays `null`. Units keep the file's order.
//!
//! **Held, derived.** The seed has no field for "held until a person acts": a unit is held when
//! it timed out, or when it is blocked by the failed-confirmation cap, which the file records
//! only as that block's `reason` text. [`Reason`] reads that text once (and writes it back
//! unchanged); [`hold`] is the one place that says whether a unit is held and why.

use std::fmt;

use crate::layouts::rest::Rest;
use serde::{Deserialize, Serialize};

use crate::layouts::json::{lenient, present};
use crate::layouts::keyed::Keyed;

/// The prefix of a blocked unit's reason when it waits on its dependencies (seed 003's T5).
pub const WAITING_PREFIX: &str = "Waiting on ";
/// The reason the failed-confirmation cap writes: the unit is held for review by a person.
pub const CONFIRMATION_CAP_REASON: &str = "failed confirmation 3 times: needs review";

/// `mode`: development (tasks, tasks.md) or knowledge (phases, plan.md).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    #[default]
    Development,
    Knowledge,
}

impl Mode {
    /// The word state.json uses.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Development => "development",
            Mode::Knowledge => "knowledge",
        }
    }

    /// The field holding the mode's units.
    pub fn units_key(self) -> &'static str {
        match self {
            Mode::Development => "tasks",
            Mode::Knowledge => "phases",
        }
    }

    /// The plan file of the mode.
    pub fn plan_file(self) -> &'static str {
        match self {
            Mode::Development => "tasks.md",
            Mode::Knowledge => "plan.md",
        }
    }
}

/// The workflow `phase` (seed 003's "Phase Values").
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    Discover,
    Plan,
    #[default]
    Execute,
    Verify,
    Deliver,
    Complete,
}

impl Stage {
    /// The word state.json uses.
    pub fn as_str(self) -> &'static str {
        match self {
            Stage::Discover => "discover",
            Stage::Plan => "plan",
            Stage::Execute => "execute",
            Stage::Verify => "verify",
            Stage::Deliver => "deliver",
            Stage::Complete => "complete",
        }
    }
}

/// A unit's `status` (seed 003's "Status Values").
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    #[default]
    Pending,
    InProgress,
    Confirming,
    Verifying,
    Done,
    Blocked,
    Timeout,
}

impl Status {
    /// The word state.json uses.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pending => "pending",
            Status::InProgress => "in_progress",
            Status::Confirming => "confirming",
            Status::Verifying => "verifying",
            Status::Done => "done",
            Status::Blocked => "blocked",
            Status::Timeout => "timeout",
        }
    }

    /// In a work, confirmation or verification pass.
    pub fn in_work(self) -> bool {
        matches!(
            self,
            Status::InProgress | Status::Confirming | Status::Verifying
        )
    }

    /// In a confirmation or verification pass.
    pub fn checking(self) -> bool {
        matches!(self, Status::Confirming | Status::Verifying)
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A unit's `reason`, classified once from the text the file holds (and written back as that
/// same text).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(from = "String", into = "String")]
pub enum Reason {
    /// `Waiting on T3, T4`: blocked only until its dependencies are done.
    Waiting(String),
    /// The failed-confirmation cap ([`CONFIRMATION_CAP_REASON`]): held for a person.
    NeedsReview,
    /// Anything else: a subagent's BLOCKED reason, a timeout's `hit max iterations (5)`.
    Said(String),
}

impl Reason {
    /// The reason for a unit waiting on `deps`: `Waiting on T3, T4`.
    pub fn waiting(deps: &[String]) -> Reason {
        Reason::Waiting(format!("{WAITING_PREFIX}{}", deps.join(", ")))
    }

    /// The text as the file holds it.
    pub fn text(&self) -> &str {
        match self {
            Reason::Waiting(t) | Reason::Said(t) => t,
            Reason::NeedsReview => CONFIRMATION_CAP_REASON,
        }
    }

    /// The units a `Waiting on X, Y` reason names (none for other reasons).
    pub fn waits_on(&self) -> impl Iterator<Item = &str> {
        let list = match self {
            Reason::Waiting(t) => t.strip_prefix(WAITING_PREFIX).unwrap_or(""),
            _ => "",
        };
        list.split([',', ' '])
            .map(str::trim)
            .filter(|d| !d.is_empty() && *d != "and")
    }
}

impl From<String> for Reason {
    fn from(s: String) -> Self {
        if s.starts_with(WAITING_PREFIX) {
            Reason::Waiting(s)
        } else if s == CONFIRMATION_CAP_REASON {
            Reason::NeedsReview
        } else {
            Reason::Said(s)
        }
    }
}

impl From<&str> for Reason {
    fn from(s: &str) -> Self {
        Reason::from(s.to_string())
    }
}

impl From<Reason> for String {
    fn from(r: Reason) -> Self {
        match r {
            Reason::Waiting(t) | Reason::Said(t) => t,
            Reason::NeedsReview => CONFIRMATION_CAP_REASON.to_string(),
        }
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.text())
    }
}

/// Why a unit is held until a person's command (`set-max`, `unblock`, `reset`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hold {
    /// It hit `max_iterations`.
    TimedOut,
    /// It hit the failed-confirmation cap.
    NeedsReview,
}

/// Whether a unit with this status and reason is held, and why: the one place that says so.
pub fn hold(status: Status, reason: Option<&Reason>) -> Option<Hold> {
    match (status, reason) {
        (Status::Timeout, _) => Some(Hold::TimedOut),
        (Status::Blocked, Some(Reason::NeedsReview)) => Some(Hold::NeedsReview),
        _ => None,
    }
}

/// Whether a unit with this status and reason is blocked only on its dependencies.
pub fn waiting(status: Status, reason: Option<&Reason>) -> bool {
    status == Status::Blocked && matches!(reason, Some(Reason::Waiting(_)))
}

/// A counter, which the schema asks to be a non-negative integer: JSON Schema counts `2.0` as
/// one too, so a float without a fraction is read as that integer (and written back as one),
/// a larger one than fits as the largest count.
pub(super) mod count {
    use serde::{Deserialize, Deserializer};
    use serde_json::Number;

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
        of(&Number::deserialize(d)?).map(Some)
    }

    /// The count a number is.
    pub fn of<E: serde::de::Error>(n: &Number) -> Result<u64, E> {
        if let Some(n) = n.as_u64() {
            return Ok(n);
        }
        match n.as_f64() {
            // Saturates: the schema already refused a negative or fractional count.
            Some(f) if f >= 0.0 && f.fract() == 0.0 => Ok(f as u64),
            _ => Err(E::custom(format!(
                "{n} is not a count (a non-negative integer)"
            ))),
        }
    }

    pub use crate::layouts::json::as_is as serialize;
}

/// One task (development) or phase (knowledge). Fields in the order taskhook adds them to a
/// unit that lacks them.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
pub struct Unit {
    #[serde(default)]
    pub status: Status,
    #[serde(default, with = "count", skip_serializing_if = "Option::is_none")]
    pub iterations_used: Option<u64>,
    #[serde(default, with = "count", skip_serializing_if = "Option::is_none")]
    pub confirmations_used: Option<u64>,
    #[serde(default, with = "count", skip_serializing_if = "Option::is_none")]
    pub failed_confirmations: Option<u64>,
    #[serde(default, with = "count", skip_serializing_if = "Option::is_none")]
    pub max_iterations: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<Reason>,
    #[serde(default, with = "present", skip_serializing_if = "Option::is_none")]
    pub started_at: Option<Option<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_signal: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verification_passed: Option<bool>,
    #[serde(default, with = "present", skip_serializing_if = "Option::is_none")]
    pub completed_at: Option<Option<String>>,
    #[serde(flatten)]
    pub rest: Rest,
}

impl Unit {
    /// Whether it is held for a person ([`hold`]).
    pub fn hold(&self) -> Option<Hold> {
        hold(self.status, self.reason.as_ref())
    }

    /// Whether it is blocked only on its dependencies.
    pub fn waiting(&self) -> bool {
        waiting(self.status, self.reason.as_ref())
    }

    /// Whether it has not started: pending, or blocked only on its dependencies.
    pub fn not_started(&self) -> bool {
        self.status == Status::Pending || self.waiting()
    }

    /// `completed_at`, when it holds a time.
    pub fn completed_at(&self) -> Option<&str> {
        self.completed_at.as_ref()?.as_deref()
    }

    /// Sets `started_at` unless the unit has one (even `null`).
    pub fn start_at(&mut self, at: &str) {
        self.started_at.get_or_insert_with(|| Some(at.to_string()));
    }
}

/// The units of a slug keyed by id, in the file's order, with an index by id.
pub type Units = Keyed<Unit>;

/// The names [`super::state`] asks by.
impl Units {
    pub fn contains(&self, id: &str) -> bool {
        self.contains_key(id)
    }

    pub fn ids(&self) -> impl Iterator<Item = &str> {
        self.keys()
    }
}

/// taskhook's cursor in state.json (`taskhook`): how much of progress.md the state reflects
/// ([`super::state`]).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
pub struct Cursor {
    pub progress_bytes: u64,
    pub commits_logged: u64,
    pub checksum: String,
}

/// state.json. Fields in the order a state taskhook builds (`iterative new`, a rebuild) has
/// them.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
pub struct State {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<String>,
    pub slug: String,
    pub mode: Mode,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated: Option<String>,
    pub phase: Stage,
    #[serde(default, with = "present", skip_serializing_if = "Option::is_none")]
    pub current_task: Option<Option<String>>,
    #[serde(default, with = "present", skip_serializing_if = "Option::is_none")]
    pub current_phase: Option<Option<String>>,
    #[serde(default, with = "count", skip_serializing_if = "Option::is_none")]
    pub current_iteration: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tasks: Option<Units>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phases: Option<Units>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub domain: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commits: Option<Vec<String>>,
    /// A cursor of another shape is no cursor (the next load checks the whole log); the write
    /// after it sets a fresh one or none.
    #[serde(default, with = "lenient", skip_serializing_if = "Option::is_none")]
    pub taskhook: Option<Cursor>,
    #[serde(flatten)]
    pub rest: Rest,
}

thread_local! {
    /// No units, for a state that has none (one per thread: units share their values within
    /// a thread only).
    static NO_UNITS: &'static Units = Box::leak(Box::default());
}

impl State {
    /// A fresh state of `mode` with `units` and no current unit.
    pub fn new(slug: &str, mode: Mode, units: Units) -> State {
        let mut s = State {
            slug: slug.to_string(),
            mode,
            ..Default::default()
        };
        *s.units_mut() = units;
        s.set_current(None);
        s
    }

    /// `tasks` or `phases`, by mode.
    pub fn units_key(&self) -> &'static str {
        self.mode.units_key()
    }

    /// The units of the mode (none when the field is missing).
    pub fn units(&self) -> &Units {
        self.units_present()
            .unwrap_or_else(|| NO_UNITS.with(|none| *none))
    }

    /// The units of the mode when the field is there.
    pub fn units_present(&self) -> Option<&Units> {
        match self.mode {
            Mode::Development => self.tasks.as_ref(),
            Mode::Knowledge => self.phases.as_ref(),
        }
    }

    /// The field of the mode's units, as it is (missing or not).
    pub fn units_field(&mut self) -> &mut Option<Units> {
        match self.mode {
            Mode::Development => &mut self.tasks,
            Mode::Knowledge => &mut self.phases,
        }
    }

    /// The units of the mode, the field created when missing.
    pub fn units_mut(&mut self) -> &mut Units {
        match self.mode {
            Mode::Development => self.tasks.get_or_insert_with(Units::default),
            Mode::Knowledge => self.phases.get_or_insert_with(Units::default),
        }
    }

    pub fn unit(&self, id: &str) -> Option<&Unit> {
        self.units().get(id)
    }

    /// The unit in work (`current_task` / `current_phase`), if any.
    pub fn current(&self) -> Option<&str> {
        match self.mode {
            Mode::Development => &self.current_task,
            Mode::Knowledge => &self.current_phase,
        }
        .as_ref()?
        .as_deref()
    }

    /// Sets the current pointer (`null` for none).
    pub fn set_current(&mut self, id: Option<String>) {
        match self.mode {
            Mode::Development => self.current_task = Some(id),
            Mode::Knowledge => self.current_phase = Some(id),
        }
    }

    /// The status of a unit (`pending` for one state.json lacks).
    pub fn status_of(&self, id: &str) -> Status {
        self.unit(id).map_or(Status::Pending, |u| u.status)
    }

    /// The recorded commits (none when the field is missing).
    pub fn commits(&self) -> &[String] {
        self.commits.as_deref().unwrap_or(&[])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layouts::json::{typed, write_back};
    use serde_json::Value;

    #[test]
    fn nulls_stay_null_and_absent_fields_stay_absent() {
        let text = r#"{"slug":"s","mode":"development","phase":"execute","current_task":null,"tasks":{"T1":{"status":"pending","started_at":null,"x":1},"T2":{"status":"blocked","reason":"Waiting on T1"}}}"#;
        let mut doc: Value = serde_json::from_str(text).unwrap();
        let s: State = typed(&doc).unwrap();
        assert_eq!(s.current_task, Some(None));
        assert_eq!(s.unit("T1").unwrap().started_at, Some(None));
        assert!(s.unit("T2").unwrap().waiting());
        write_back(&mut doc, &s).unwrap();
        assert_eq!(serde_json::to_string(&doc).unwrap(), text);
    }

    #[test]
    fn held_is_derived_from_status_and_reason() {
        let u = |status, reason: Option<&str>| Unit {
            status,
            reason: reason.map(Reason::from),
            ..Default::default()
        };
        assert_eq!(
            u(Status::Blocked, Some(CONFIRMATION_CAP_REASON)).hold(),
            Some(Hold::NeedsReview)
        );
        assert_eq!(u(Status::Timeout, None).hold(), Some(Hold::TimedOut));
        assert_eq!(u(Status::Blocked, Some("needs a key")).hold(), None);
        let w = u(Status::Blocked, Some("Waiting on T1, T2 and T3"));
        assert!(w.waiting() && w.not_started() && w.hold().is_none());
        let deps: Vec<&str> = w.reason.as_ref().unwrap().waits_on().collect();
        assert_eq!(deps, ["T1", "T2", "T3"]);
        assert_eq!(
            serde_json::to_value(&w).unwrap()["reason"],
            "Waiting on T1, T2 and T3"
        );
    }

    #[test]
    fn counts_are_integers_as_the_schema_counts_them() {
        let u: Unit = typed(
            &serde_json::json!({"status": "pending", "iterations_used": 2.0, "max_iterations": 7}),
        )
        .unwrap();
        assert_eq!((u.iterations_used, u.max_iterations), (Some(2), Some(7)));
        assert!(
            typed::<Unit>(&serde_json::json!({"status": "pending", "iterations_used": 1.5}))
                .is_err()
        );
    }
}
