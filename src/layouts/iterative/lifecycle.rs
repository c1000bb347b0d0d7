//! Seed 003's unit lifecycle as one pure step: work → confirm → verify → done, with the loop
//! bounded by `max_iterations` and by a cap on failed confirmation rounds. The same function
//! drives live SubagentStops and the replay of `progress.md` when state.json must be rebuilt,
//! so both always agree.
//!
//! Every SubagentStop of a unit is one iteration, confirmation and verification passes
//! included: seed 003's own example (T1: 3 iterations, 1 confirmation; T2: 5 iterations, 2
//! confirmations) is exactly the shortest path and the path with one failed confirmation.

use crate::signals::SignalKind;

pub use crate::layouts::unit::Input;

/// The cap on confirmation/verification rounds that send a unit back to work.
pub const MAX_FAILED_CONFIRMATIONS: u64 = 3;
/// `max_iterations` when neither state.json nor the plan gives one.
pub const DEFAULT_MAX_ITERATIONS: u64 = 5;
/// Reason set when the confirmation cap is hit.
pub const CONFIRMATION_CAP_REASON: &str = "failed confirmation 3 times: needs review";

/// The counters of one unit that the lifecycle reads and writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Counters {
    pub status: String,
    pub iterations_used: u64,
    pub confirmations_used: u64,
    pub failed_confirmations: u64,
    pub max_iterations: u64,
    pub reason: Option<String>,
}

impl Counters {
    /// A fresh pending unit.
    pub fn pending(max_iterations: u64) -> Self {
        Counters {
            status: "pending".into(),
            iterations_used: 0,
            confirmations_used: 0,
            failed_confirmations: 0,
            max_iterations,
            reason: None,
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
    /// `max_iterations` reached before done.
    Timeout,
    /// The unit was already done, or the input was a launch: nothing changed (a stop, not a
    /// launch, counts an iteration).
    AlreadyDone,
}

impl Effect {
    /// Whether the effect asks the subagent for another pass.
    pub fn wants_another_pass(&self) -> bool {
        matches!(
            self,
            Effect::Confirm | Effect::Verify | Effect::Returned(_) | Effect::KeepGoing(_)
        )
    }
}

/// Applies one stop to a unit.
pub fn step(c: &mut Counters, input: Input<'_>) -> Effect {
    if c.status == "done" || input == Input::Launch {
        return Effect::AlreadyDone;
    }
    c.iterations_used = c.iterations_used.saturating_add(1);
    let checking = matches!(c.status.as_str(), "confirming" | "verifying");
    let effect = match input {
        Input::Signal(SignalKind::Done, _) => match c.status.as_str() {
            "confirming" => {
                c.status = "verifying".into();
                Effect::Verify
            }
            "verifying" => {
                c.status = "done".into();
                c.reason = None;
                Effect::Completed
            }
            _ => {
                c.status = "confirming".into();
                c.confirmations_used = c.confirmations_used.saturating_add(1);
                c.reason = None;
                Effect::Confirm
            }
        },
        Input::Signal(SignalKind::Blocked, reason) => {
            let r = reason.unwrap_or("blocked by the subagent").to_string();
            c.status = "blocked".into();
            c.reason = Some(r.clone());
            Effect::Blocked(r)
        }
        Input::Signal(SignalKind::Failed, _) | Input::NoSignal if checking => {
            let reason = match input {
                Input::Signal(_, r) => r.map(str::to_string),
                _ => Some("the check ended without confirming the signal".into()),
            };
            c.failed_confirmations = c.failed_confirmations.saturating_add(1);
            if c.failed_confirmations >= MAX_FAILED_CONFIRMATIONS {
                c.status = "blocked".into();
                c.reason = Some(CONFIRMATION_CAP_REASON.into());
                Effect::Blocked(CONFIRMATION_CAP_REASON.into())
            } else {
                c.status = "in_progress".into();
                Effect::Returned(reason)
            }
        }
        Input::Signal(SignalKind::Failed, reason) => {
            c.status = "in_progress".into();
            Effect::KeepGoing(reason.map(str::to_string))
        }
        Input::NoSignal | Input::Launch => {
            c.status = "in_progress".into();
            Effect::KeepGoing(None)
        }
    };
    if effect.wants_another_pass() && c.iterations_used >= c.max_iterations {
        c.status = "timeout".into();
        c.reason = Some(format!("hit max iterations ({})", c.max_iterations));
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
            (c.status.as_str(), c.iterations_used, c.confirmations_used),
            ("done", 3, 1)
        );
        assert_eq!(step(&mut c, DONE), Effect::AlreadyDone);
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
        assert_eq!(c.status, "in_progress");
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
        assert_eq!(c.reason.as_deref(), Some(CONFIRMATION_CAP_REASON));
    }

    #[test]
    fn timeout_at_max_iterations() {
        let mut c = Counters::pending(2);
        assert_eq!(step(&mut c, Input::NoSignal), Effect::KeepGoing(None));
        assert_eq!(step(&mut c, Input::NoSignal), Effect::Timeout);
        assert_eq!(c.status, "timeout");
        // Done on the last allowed iteration is still done.
        let mut c = Counters {
            status: "verifying".into(),
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
        assert_eq!(c.status, "blocked");
    }

    fn input() -> impl Strategy<Value = Input<'static>> {
        prop_oneof![
            Just(Input::NoSignal),
            Just(DONE),
            Just(Input::Signal(SignalKind::Failed, None)),
            Just(Input::Signal(SignalKind::Blocked, None)),
        ]
    }

    proptest! {
        /// No input sequence keeps a unit asking for passes beyond its budget: once
        /// `max_iterations` stops have counted, the unit is done, blocked or timed out.
        #[test]
        fn every_loop_is_bounded(max in 1u64..12, inputs in proptest::collection::vec(input(), 0..60)) {
            let mut c = Counters::pending(max);
            let mut passes_asked = 0u64;
            for i in inputs {
                if step(&mut c, i).wants_another_pass() {
                    passes_asked += 1;
                }
                prop_assert!(c.iterations_used <= max);
                if c.iterations_used >= max {
                    prop_assert!(matches!(c.status.as_str(), "done" | "blocked" | "timeout"), "{:?}", c);
                }
                if c.status == "blocked" || c.status == "timeout" {
                    break;
                }
            }
            prop_assert!(passes_asked < max);
        }
    }
}
