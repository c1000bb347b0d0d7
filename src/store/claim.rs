//! At most once per event: Claude Code may run taskhook twice for one event (the taskhook
//! plugin and a settings registration both enabled, or two settings files registering it), and
//! both runs would apply it. The engine names the event it handles ([`Store::begin_event`]: a
//! key, and the record of recently applied keys, `.claude/taskhook/applied.json`), and the
//! store guards its writes:
//!
//! - before a write (the event not yet claimed), the record is read, without a lock and
//!   creating nothing: the key there means another run applied the event, so this run writes
//!   nothing at all (every write is refused) and the engine answers nothing;
//! - when the first locked operation that wrote commits, the key is added under the record's
//!   lock while the operation's own lock is still held: a second run waiting on that lock finds
//!   the key before it writes. Should the key be there already (a run that wrote another store
//!   first), the operation is undone instead. A write outside any lock claims at once.
//!
//! So an event that changes nothing never reads the record, and an operation that fails
//! leaves no trace of the guard either. A record that cannot be written (a planted link, a
//! lock that timed out) does not stop the change: the event is applied without the guard, and
//! the engine says so.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::error::{Error, Result};
use crate::store::strict::{checked_record, list, non_empty, takes, timestamp};
use crate::store::{lock_path_for, Loaded, Store};

/// The record's schema.
const SCHEMA: &str = "taskhook-applied";
/// Most keys kept (oldest dropped first): far more than the events two runs can overlap on.
pub const MAX_KEYS: usize = 256;

/// Where a claim stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Nothing written yet.
    Open,
    /// Written inside a locked operation: the key is recorded when it commits.
    Pending,
    /// This run recorded the key (or could not, and goes on without it).
    Mine,
    /// Another run had applied the event: nothing may be written.
    Taken,
}

/// The event being handled, when it must change state at most once.
#[derive(Debug)]
pub(super) struct Claim {
    key: String,
    record: PathBuf,
    state: State,
    /// The undo log's length at the first write (a failed operation that undoes it makes the
    /// claim open again).
    undo_mark: usize,
    /// Why the key could not be recorded.
    problem: Option<Error>,
}

/// How an event ended.
#[derive(Debug, Default)]
pub struct EventEnd {
    /// Another run had applied it; this one wrote nothing.
    pub duplicate: bool,
    /// The key could not be recorded (the event was applied without the guard).
    pub problem: Option<Error>,
}

impl Store {
    /// Starts an event that must change state at most once: `key` names it, `record` is the
    /// project's record of applied keys.
    pub fn begin_event(&self, key: String, record: PathBuf) {
        *self.claim.borrow_mut() = Some(Claim {
            key,
            record,
            state: State::Open,
            undo_mark: 0,
            problem: None,
        });
    }

    /// Ends the event begun by [`Store::begin_event`].
    pub fn end_event(&self) -> EventEnd {
        match self.claim.borrow_mut().take() {
            Some(c) => EventEnd {
                duplicate: c.state == State::Taken,
                problem: c.problem,
            },
            None => EventEnd::default(),
        }
    }

    /// Called before every write: refused when another run applied the event.
    pub(super) fn claim_before(&self) -> Result<()> {
        let record = match self.claim.borrow().as_ref() {
            None => return Ok(()),
            Some(c) => match c.state {
                State::Mine | State::Pending => return Ok(()),
                State::Taken => return Err(already_applied(&c.record)),
                State::Open => c.record.clone(),
            },
        };
        let applied = match self.load_json(&record, SCHEMA) {
            Ok(Loaded::Valid(doc)) => self.holds_key(&doc),
            _ => false,
        };
        if applied {
            self.set_claim(State::Taken);
            return Err(already_applied(&record));
        }
        Ok(())
    }

    /// Called after every write that succeeded: the first one claims the event, at the commit
    /// of the locked operation it belongs to, or at once outside any.
    pub(super) fn claim_after(&self) -> Result<()> {
        {
            let mut guard = self.claim.borrow_mut();
            let Some(c) = guard.as_mut() else {
                return Ok(());
            };
            match c.state {
                State::Mine | State::Pending => return Ok(()),
                State::Taken => return Err(already_applied(&c.record)),
                State::Open => {
                    c.state = State::Pending;
                    c.undo_mark = self.undo_log.borrow().len();
                }
            }
        }
        if self.depth.get() == 0 {
            return self.claim_commit();
        }
        Ok(())
    }

    /// When the outermost locked operation commits (its lock still held): records a pending
    /// claim; an error (the event was applied by another run) makes the operation fail, so
    /// it is undone.
    pub(super) fn claim_commit(&self) -> Result<()> {
        let (key, record) = {
            let mut guard = self.claim.borrow_mut();
            let Some(c) = guard.as_mut().filter(|c| c.state == State::Pending) else {
                return Ok(());
            };
            // Set first: the record's own writes come back here.
            c.state = State::Mine;
            (c.key.clone(), c.record.clone())
        };
        match self.record_key(&key, &record) {
            Ok(true) => Ok(()),
            Ok(false) => {
                self.set_claim(State::Taken);
                Err(already_applied(&record))
            }
            Err(e) => {
                if let Some(c) = self.claim.borrow_mut().as_mut() {
                    c.problem = Some(e);
                }
                Ok(())
            }
        }
    }

    fn set_claim(&self, state: State) {
        if let Some(c) = self.claim.borrow_mut().as_mut() {
            c.state = state;
        }
    }

    fn holds_key(&self, doc: &Value) -> bool {
        let claim = self.claim.borrow();
        let Some(c) = claim.as_ref() else {
            return false;
        };
        doc["applied"]
            .as_array()
            .is_some_and(|l| l.iter().any(|e| e["key"] == c.key.as_str()))
    }

    /// After a locked operation that began at undo-log index `start` failed and was undone: a
    /// claim pending on writes it undid is open again.
    pub(super) fn claim_undone(&self, start: usize) {
        if let Some(c) = self.claim.borrow_mut().as_mut() {
            if c.state == State::Pending && c.undo_mark >= start {
                c.state = State::Open;
            }
        }
    }

    /// Adds `key` to the record under its lock; `false` when it was there already.
    fn record_key(&self, key: &str, record: &Path) -> Result<bool> {
        let added = self.with_lock(&lock_path_for(record), || {
            let mut doc = match self.load_json(record, SCHEMA)? {
                Loaded::Valid(v) => v,
                Loaded::Missing => empty(),
                // A record holds nothing authoritative: moved aside, started afresh.
                Loaded::Invalid(_) => {
                    self.quarantine(record)?;
                    empty()
                }
            };
            let list = doc["applied"].as_array().cloned().unwrap_or_default();
            if list.iter().any(|e| e["key"] == key) {
                return Ok(false);
            }
            let mut list: Vec<Value> = list;
            list.push(json!({"key": key, "at": self.clock().stamp()}));
            let excess = list.len().saturating_sub(MAX_KEYS);
            list.drain(..excess);
            doc["applied"] = Value::Array(list);
            self.replace_json(record, SCHEMA, &doc)?;
            Ok(true)
        })?;
        // The record is not a change the event made.
        self.forget_change(record);
        Ok(added)
    }
}

fn empty() -> Value {
    json!({"applied": []})
}

checked_record! {
    /// applied.json (`taskhook-applied`).
    AppliedCheck,
    ["applied"],
    required: ["applied"],
    |m, _name| {
        if list::<KeyCheck, _>(m)?.len() > MAX_KEPT {
            return Err(serde::de::Error::custom("too many keys"));
        }
        Ok(())
    }
}

checked_record! {
    /// One key applied.
    KeyCheck,
    ["key", "at"],
    required: ["key", "at"],
    |m, name| {
        match name {
            "key" => _ = non_empty(m, name)?,
            _ => _ = timestamp(m, name)?,
        }
        Ok(())
    }
}

/// The most keys the schema lets applied.json hold (`maxItems`).
const MAX_KEPT: usize = 256;

/// `taskhook-applied`'s own check ([`crate::store::schema::Native`]).
pub(crate) fn applied_is_valid(doc: &Value) -> bool {
    takes::<AppliedCheck>(doc)
}

fn already_applied(record: &Path) -> Error {
    Error::refused(
        "apply",
        record,
        "this event was already applied by another taskhook run (two registrations ran it)",
    )
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::{json, Value};

    use crate::store::schema::tests::native_is_the_schema;
    use crate::store::strict::tests::{any_value, object, pick, stamp};

    fn doc() -> impl Strategy<Value = Value> {
        let key = object(
            vec![
                ("key", pick(vec![json!("s1:7"), json!(""), json!(3)])),
                ("at", stamp()),
            ],
            vec![
                ("key", json!("s1:8")),
                ("at", json!("2026-01-05T08:00:00Z")),
            ],
            2,
        );
        prop_oneof![
            6 => prop::collection::vec(key, 0..4).prop_map(|k| json!({"applied": k})),
            1 => (0usize..2).prop_map(|extra| {
                let k = json!({"key": "k", "at": "2026-01-05T08:00:00Z"});
                json!({"applied": vec![k; super::MAX_KEPT + extra]})
            }),
            1 => any_value().prop_map(|a| json!({"applied": a, "x": 1})),
            1 => any_value(),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// applied.json's own check is its schema.
        #[test]
        fn the_check_is_the_schema(v in doc()) {
            native_is_the_schema("taskhook-applied", &v)?;
        }
    }
}
