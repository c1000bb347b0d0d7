//! Seed 003's unit lifecycle as one pure step: work → confirm → verify → done, with the loop
//! bounded by `max_iterations` and by a cap on failed confirmations. The same function drives
//! live SubagentStops, launches, and the replay of `progress.md` when state.json must be
//! rebuilt, so both always agree.
//!
//! **How the budget counts.** Every SubagentStop of a unit is one iteration
//! (`iterations_used`), confirmation and verification passes included: seed 003's own example
//! (T1: 3 iterations, 1 confirmation; T2: 5 iterations, 2 confirmations) is exactly the
//! shortest path and the path with one failed confirmation. `max_iterations` bounds the *work*
//! loop: a stop that would need another work pass once `iterations_used` has reached
//! `max_iterations` times the unit out. A DONE declared within the budget always gets its
//! confirmation and verification passes (the seed's "mandatory N+1 confirmation"), even past
//! the budget, so every budget of 1 or more can finish. Work past the budget (after a check failed there, or a unit
//! relaunched after a BLOCKED on its last iteration) times the unit out, so a unit asks for
//! at most `max_iterations + 1` passes and stops for good after `max_iterations + 3` stops.
//!
//! **Held units.** A unit that timed out, or that hit the failed-confirmation cap ("needs
//! review"), changes only by a person's command (`taskhook iterative set-max`, `reset`,
//! `unblock`): later stops, signals and launches change nothing ([`Effect::Held`]).

use super::model::{hold, Hold, Reason, Status};
use crate::signals::SignalKind;

pub use super::model::CONFIRMATION_CAP_REASON;
pub use crate::layouts::unit::Input;

/// The cap on confirmation/verification rounds that send a unit back to work.
pub const MAX_FAILED_CONFIRMATIONS: u64 = 3;
/// `max_iterations` when neither state.json nor the plan gives one.
pub const DEFAULT_MAX_ITERATIONS: u64 = 5;

/// The counters of one unit that the lifecycle reads and writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Counters {
    pub status: Status,
    pub iterations_used: u64,
    pub confirmations_used: u64,
    pub failed_confirmations: u64,
    pub max_iterations: u64,
    pub reason: Option<Reason>,
}

impl Counters {
    /// A fresh pending unit.
    pub fn pending(max_iterations: u64) -> Self {
        Counters {
            status: Status::Pending,
            iterations_used: 0,
            confirmations_used: 0,
            failed_confirmations: 0,
            max_iterations,
            reason: None,
        }
    }

    /// Why the unit is held until a person's command, if it is: timed out, or blocked by the
    /// failed-confirmation cap.
    pub fn held(&self) -> Option<String> {
        Some(match self.hold()? {
            Hold::TimedOut => format!(
                "it timed out after {} iterations (max_iterations {})",
                self.iterations_used, self.max_iterations
            ),
            Hold::NeedsReview => format!("it is blocked: {CONFIRMATION_CAP_REASON}"),
        })
    }

    /// Whether the unit is held ([`super::model::hold`]).
    pub fn hold(&self) -> Option<Hold> {
        hold(self.status, self.reason.as_ref())
    }

    /// The budget as the instructions say it: `iteration 2 of 5`, or past the budget (a check
    /// pass), `iteration 4 (a check past max_iterations 3; checks are not charged)`.
    pub fn budget_text(&self) -> String {
        if self.iterations_used <= self.max_iterations {
            format!(
                "iteration {} of {}",
                self.iterations_used, self.max_iterations
            )
        } else {
            format!(
                "iteration {} (a check past max_iterations {}; checks are not charged)",
                self.iterations_used, self.max_iterations
            )
        }
    }
}

/// What the step decided; the layout turns it into a reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    /// Work declared done: run the confirmation pass.
    Confirm,
    /// Confirmation held: run the verification pass.
    Verify,
    /// Verification held: the unit is done.
    Completed,
    /// Confirmation or verification found problems: back to work.
    Returned(Option<String>),
    /// Still working (no signal, or FAILED while working): keep going.
    KeepGoing(Option<String>),
    /// The unit is blocked (BLOCKED signal, or the confirmation cap).
    Blocked(String),
    /// `max_iterations` reached when another work pass was needed.
    Timeout,
    /// A launch started the unit (pending, or blocked by a subagent, → in_progress).
    Started,
    /// Held until a person's command (timed out, or the confirmation cap): nothing changed.
    Held(String),
    /// Nothing changed: the unit was done, or a launch found it already in work.
    Unchanged,
}

impl Effect {
    /// Whether the effect asks the subagent for another pass (what the bound-loop test checks).
    #[cfg(test)]
    pub fn wants_another_pass(&self) -> bool {
        matches!(
            self,
            Effect::Confirm | Effect::Verify | Effect::Returned(_) | Effect::KeepGoing(_)
        )
    }

    /// Whether the pass asked for is a work pass (charged against `max_iterations`).
    fn is_work_pass(&self) -> bool {
        matches!(self, Effect::Returned(_) | Effect::KeepGoing(_))
    }
}

/// Applies one stop or launch to a unit.
pub fn step(c: &mut Counters, input: Input<'_>) -> Effect {
    if c.status == Status::Done {
        return Effect::Unchanged;
    }
    if let Some(why) = c.held() {
        return Effect::Held(why);
    }
    if input == Input::Launch {
        return match c.status {
            Status::Pending | Status::Blocked => {
                c.status = Status::InProgress;
                c.reason = None;
                Effect::Started
            }
            _ => Effect::Unchanged,
        };
    }
    let checking = c.status.checking();
    // Work on a unit whose budget is already used up (a unit relaunched after a BLOCKED at its
    // last iteration, or whose budget a person lowered) times it out, whatever the stop says.
    let spent = !checking && c.iterations_used >= c.max_iterations;
    c.iterations_used = c.iterations_used.saturating_add(1);
    let effect = match input {
        Input::Signal(SignalKind::Done, _) => match c.status {
            Status::Confirming => {
                c.status = Status::Verifying;
                Effect::Verify
            }
            Status::Verifying => {
                c.status = Status::Done;
                c.reason = None;
                Effect::Completed
            }
            _ => {
                c.status = Status::Confirming;
                c.confirmations_used = c.confirmations_used.saturating_add(1);
                c.reason = None;
                Effect::Confirm
            }
        },
        Input::Signal(SignalKind::Blocked, reason) => {
            let r = reason.unwrap_or("blocked by the subagent").to_string();
            c.status = Status::Blocked;
            c.reason = Some(Reason::from(r.as_str()));
            Effect::Blocked(r)
        }
        Input::Signal(SignalKind::Failed, _) | Input::NoSignal if checking => {
            let reason = match input {
                Input::Signal(_, r) => r.map(str::to_string),
                _ => Some("the check ended without confirming the signal".into()),
            };
            c.failed_confirmations = c.failed_confirmations.saturating_add(1);
            if c.failed_confirmations >= MAX_FAILED_CONFIRMATIONS {
                c.status = Status::Blocked;
                c.reason = Some(Reason::NeedsReview);
                Effect::Blocked(CONFIRMATION_CAP_REASON.into())
            } else {
                c.status = Status::InProgress;
                c.reason = None;
                Effect::Returned(reason)
            }
        }
        Input::Signal(SignalKind::Failed, reason) => {
            c.status = Status::InProgress;
            c.reason = None;
            Effect::KeepGoing(reason.map(str::to_string))
        }
        Input::NoSignal | Input::Launch => {
            c.status = Status::InProgress;
            c.reason = None;
            Effect::KeepGoing(None)
        }
    };
    // A work pass asked for once the budget is used up times the unit out.
    if spent || (effect.is_work_pass() && c.iterations_used >= c.max_iterations) {
        c.status = Status::Timeout;
        c.reason = Some(Reason::Said(format!(
            "hit max iterations ({})",
            c.max_iterations
        )));
        return Effect::Timeout;
    }
    effect
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const DONE: Input<'static> = Input::Signal(SignalKind::Done, None);

    #[test]
    fn shortest_path_matches_seed_t1() {
        let mut c = Counters::pending(5);
        assert_eq!(step(&mut c, DONE), Effect::Confirm);
        assert_eq!(step(&mut c, DONE), Effect::Verify);
        assert_eq!(step(&mut c, DONE), Effect::Completed);
        assert_eq!(
            (c.status, c.iterations_used, c.confirmations_used),
            (Status::Done, 3, 1)
        );
        assert_eq!(step(&mut c, DONE), Effect::Unchanged);
        assert_eq!(c.iterations_used, 3);
    }

    #[test]
    fn one_failed_confirmation_matches_seed_t2() {
        let mut c = Counters::pending(8);
        step(&mut c, DONE);
        assert_eq!(
            step(&mut c, Input::Signal(SignalKind::Failed, Some("tests red"))),
            Effect::Returned(Some("tests red".into()))
        );
        assert_eq!(c.status, Status::InProgress);
        step(&mut c, DONE);
        step(&mut c, DONE);
        assert_eq!(step(&mut c, DONE), Effect::Completed);
        assert_eq!((c.iterations_used, c.confirmations_used), (5, 2));
    }

    #[test]
    fn third_failed_confirmation_blocks() {
        let mut c = Counters::pending(50);
        for _ in 0..2 {
            step(&mut c, DONE);
            assert!(matches!(step(&mut c, Input::NoSignal), Effect::Returned(_)));
        }
        step(&mut c, DONE);
        assert_eq!(
            step(&mut c, Input::Signal(SignalKind::Failed, None)),
            Effect::Blocked(CONFIRMATION_CAP_REASON.into())
        );
        assert_eq!(c.reason, Some(Reason::NeedsReview));
    }

    #[test]
    fn timeout_at_max_iterations() {
        let mut c = Counters::pending(2);
        assert_eq!(step(&mut c, Input::NoSignal), Effect::KeepGoing(None));
        assert_eq!(step(&mut c, Input::NoSignal), Effect::Timeout);
        assert_eq!(c.status, Status::Timeout);
        // Done on the last allowed iteration is still done.
        let mut c = Counters {
            status: Status::Verifying,
            iterations_used: 4,
            ..Counters::pending(5)
        };
        assert_eq!(step(&mut c, DONE), Effect::Completed);
    }

    #[test]
    fn blocked_signal() {
        let mut c = Counters::pending(5);
        assert_eq!(
            step(
                &mut c,
                Input::Signal(SignalKind::Blocked, Some("needs API key"))
            ),
            Effect::Blocked("needs API key".into())
        );
        assert_eq!(c.status, Status::Blocked);
    }

    #[test]
    fn every_budget_of_one_or_more_can_finish() {
        for max in 1..=3 {
            let mut c = Counters::pending(max);
            assert_eq!(step(&mut c, DONE), Effect::Confirm, "max {max}");
            assert_eq!(step(&mut c, DONE), Effect::Verify, "max {max}");
            assert_eq!(step(&mut c, DONE), Effect::Completed, "max {max}");
            assert_eq!((c.iterations_used, c.confirmations_used), (3, 1));
        }
        // Past the budget, a failed check is a work pass: timeout.
        let mut c = Counters::pending(1);
        step(&mut c, DONE);
        assert_eq!(
            step(&mut c, Input::Signal(SignalKind::Failed, None)),
            Effect::Timeout
        );
    }

    #[test]
    fn held_units_change_only_by_a_person() {
        let mut c = Counters::pending(1);
        assert_eq!(step(&mut c, Input::NoSignal), Effect::Timeout);
        let before = c.clone();
        for input in [DONE, Input::NoSignal, Input::Launch] {
            assert!(matches!(step(&mut c, input), Effect::Held(_)));
            assert_eq!(c, before);
        }
        let mut c = Counters {
            status: Status::Blocked,
            reason: Some(Reason::from(CONFIRMATION_CAP_REASON)),
            ..Counters::pending(9)
        };
        assert!(matches!(step(&mut c, DONE), Effect::Held(_)));
        assert_eq!(c.status, Status::Blocked);
    }

    #[test]
    fn a_launch_starts_pending_and_subagent_blocked_units() {
        let mut c = Counters::pending(5);
        assert_eq!(step(&mut c, Input::Launch), Effect::Started);
        assert_eq!((c.status, c.iterations_used), (Status::InProgress, 0));
        assert_eq!(step(&mut c, Input::Launch), Effect::Unchanged);
        step(&mut c, Input::Signal(SignalKind::Blocked, Some("key")));
        assert_eq!(step(&mut c, Input::Launch), Effect::Started);
        assert_eq!(c.reason, None);
    }

    fn input() -> impl Strategy<Value = Input<'static>> {
        prop_oneof![
            Just(Input::NoSignal),
            Just(DONE),
            Just(Input::Signal(SignalKind::Failed, None)),
            Just(Input::Signal(SignalKind::Blocked, None)),
            Just(Input::Launch),
        ]
    }

    proptest! {
        /// No input sequence keeps a unit asking for passes beyond its budget: work passes stop
        /// at `max_iterations`, the check passes a DONE earns add at most two more, and a stop
        /// past that times the unit out; a held unit never moves again.
        #[test]
        fn every_loop_is_bounded(max in 1u64..12, inputs in proptest::collection::vec(input(), 0..60)) {
            let mut c = Counters::pending(max);
            let mut passes_asked = 0u64;
            for i in inputs {
                let held = c.held().is_some();
                let before = c.clone();
                if step(&mut c, i).wants_another_pass() {
                    passes_asked += 1;
                }
                if held {
                    prop_assert_eq!(&c, &before);
                }
                prop_assert!(c.iterations_used <= max + 3, "{:?}", c);
                if c.iterations_used >= max + 3 {
                    prop_assert!(matches!(c.status, Status::Done | Status::Blocked | Status::Timeout), "{:?}", c);
                }
            }
            prop_assert!(passes_asked < max + 2);
        }
    }
}
