//! Tests of the execute lifecycle step (`lifecycle.rs`).

use super::*;
use crate::layouts::json::{typed, write_back};
use serde_json::{json, Value};

/// [`super::step`] over a state given as JSON: typed, stepped, written back.
fn step(state: &mut Value, id: &str, ev: Event<'_>, who: Who<'_>, now: &str) -> Outcome {
    let mut s: State = typed(state).unwrap();
    let out = super::step(&mut s, id, ev, who, now);
    write_back(state, &s).unwrap();
    out
}

fn one(status: &str, attempts: u64) -> Value {
    json!({"status": "in_progress", "current_layer": "1-a",
        "layers": {"1-a": {"status": "in_progress"}},
        "tasks": {"L1-001": {"status": status, "attempts": attempts}}, "merge_queue": []})
}

const NOW: &str = "2026-01-01T00:00:00Z";
const LAUNCH: Event<'static> = Event::Launch {
    worktree: None,
    branch: None,
    bound_before: &[],
};
const BOUND: Who<'static> = Who {
    bound: true,
    agent: Some("a1"),
    by_hand: false,
};

fn fail(msg: &str) -> Event<'_> {
    Event::Failed(Failure {
        message: msg,
        details: None,
        feedback: Some("do better"),
    })
}

#[test]
fn done_twice_verifies_and_queues() {
    let mut s = one("pending", 0);
    let o = step(&mut s, "L1-001", LAUNCH, Who::default(), NOW);
    assert_eq!(
        o.effect,
        Effect::Started {
            attempt: 1,
            resumed: false
        }
    );
    assert_eq!(s["tasks"]["L1-001"]["batch"], 1);
    let o = step(&mut s, "L1-001", Event::Done, BOUND, NOW);
    assert!(o.block);
    assert_eq!(s["tasks"]["L1-001"]["status"], "verifying");
    let o = step(&mut s, "L1-001", Event::Done, BOUND, NOW);
    assert_eq!(o.effect, Effect::Verified { priority: 1 });
    assert!(!o.block);
    assert_eq!(s["merge_queue"][0]["status"], "ready");
}

#[test]
fn the_fifth_failure_abandons() {
    let mut s = one("in_progress", 1);
    for n in 1..5 {
        let o = step(&mut s, "L1-001", fail("red"), BOUND, NOW);
        assert!(o.block, "attempt {n}");
        assert_eq!(s["tasks"]["L1-001"]["attempts"], n + 1);
    }
    let o = step(&mut s, "L1-001", fail("still red"), BOUND, NOW);
    assert_eq!(
        o.effect,
        Effect::Abandoned {
            message: "still red".into()
        }
    );
    assert_eq!(s["tasks"]["L1-001"]["errors"].as_array().unwrap().len(), 5);
    assert_eq!(
        s["tasks"]["L1-001"]["retry_feedback"]
            .as_array()
            .unwrap()
            .len(),
        4
    );
}

#[test]
fn the_ninth_block_is_never_sent() {
    let mut s = one("in_progress", 1);
    for _ in 0..MAX_BLOCKS {
        assert!(step(&mut s, "L1-001", Event::NoSignal, BOUND, NOW).block);
    }
    let o = step(&mut s, "L1-001", fail("red"), BOUND, NOW);
    assert!(!o.block && o.limit);
    assert_eq!(s["tasks"]["L1-001"]["status"], "failed");
    assert_eq!(s["tasks"]["L1-001"]["attempts"], 1);
    // A new subagent continues the count: attempt 2.
    let o = step(&mut s, "L1-001", LAUNCH, Who::default(), NOW);
    assert_eq!(
        o.effect,
        Effect::Started {
            attempt: 2,
            resumed: false
        }
    );
    let fresh = Who {
        bound: true,
        agent: Some("a2"),
        by_hand: false,
    };
    assert!(step(&mut s, "L1-001", Event::NoSignal, fresh, NOW).block);
}
