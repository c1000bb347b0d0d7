//! One op: a change a verb, a hook or a layout command made to a synced store, as it travels
//! in the log: `{id, store: {layout, path, id}, task, kind, fields, actor, machine, time}`,
//! one JSON line each.

use chrono::{DateTime, Duration, SecondsFormat, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::layouts::{registry, StoreRef};
use crate::store::clock::parse_time;

/// Every kind of op, and what applying it does:
///
/// - `publish`: the store's files as they are (its snapshot, with its claims): the store is
///   made exactly that;
/// - `add`, `command`: a layout command by hand (`projects add web T3 …`, `cdd start foo.md`),
///   run again as it was given;
/// - `claim`, `heartbeat`, `release`, `done`, `fail`: the agent's verbs, by their actor;
/// - `launch`, `signal`: what a hook did (a bound launch; a subagent's DONE / FAILED /
///   BLOCKED, or its stop without a signal).
pub const KINDS: &[&str] = &[
    "publish",
    "add",
    "command",
    "claim",
    "heartbeat",
    "release",
    "done",
    "fail",
    "launch",
    "signal",
];

/// Longest op line read from the log or the queue (a snapshot holds a store's files).
pub const MAX_OP_BYTES: usize = 64 << 20;
/// An op whose time is this far past the clock is held back (skipped) until its time comes.
pub const FUTURE_SLACK_SECONDS: i64 = 300;

/// Which store an op is about: its layout, its folder relative to the project, its name.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct StoreKey {
    pub layout: String,
    pub path: String,
    pub id: String,
}

impl StoreKey {
    /// The key of a store found in the project; `None` for a store outside it (not synced).
    pub fn of(store: &StoreRef, project_root: &std::path::Path) -> Option<StoreKey> {
        let rel = store.root.strip_prefix(project_root).ok()?;
        let path = rel.to_str()?.to_string();
        let key = StoreKey {
            layout: store.layout.to_string(),
            path,
            id: store.id.clone(),
        };
        key.check().ok()?;
        Some(key)
    }

    /// The name of the store's entry in the log's tree (`snapshots/<name>.json`): the layout
    /// and the path, `%`-escaped (`projects--.claude%2Fprojects%2Fweb`).
    pub fn name(&self) -> String {
        let mut out = format!("{}--", self.layout);
        for b in self.path.bytes() {
            match b {
                b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'_' | b'.' => {
                    out.push(char::from(b))
                }
                _ => out.push_str(&format!("%{b:02X}")),
            }
        }
        out
    }

    /// Checks a key that came from the log: a known layout, a path inside the project.
    pub fn check(&self) -> Result<(), String> {
        if !registry().iter().any(|l| l.name() == self.layout) || self.layout == "claude-tasks" {
            return Err(format!("layout {:?} is not synced", self.layout));
        }
        check_rel_path(&self.path)?;
        if self.id.is_empty() || self.id.len() > 255 || self.id.chars().any(char::is_control) {
            return Err(format!("store name {:?} is not valid", self.id));
        }
        Ok(())
    }

    /// How messages name the store: `projects web (.claude/projects/web)`.
    pub fn label(&self) -> String {
        format!("{} {}", self.layout, self.id)
    }
}

/// A path relative to the project, as the log may hold it: no `..`, no absolute path, no
/// empty or hidden part, no control character.
pub fn check_rel_path(p: &str) -> Result<(), String> {
    let bad = p.is_empty()
        || p.len() > 4096
        || p.starts_with('/')
        || p.contains('\\')
        || p.chars().any(char::is_control)
        || p.split('/')
            .any(|c| c.is_empty() || c == "." || c == ".." || c == ".git");
    if bad {
        Err(format!("path {p:?} is not a safe path inside the project"))
    } else {
        Ok(())
    }
}

/// One op.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Op {
    pub id: String,
    pub store: StoreKey,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub task: String,
    pub kind: String,
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub fields: Map<String, Value>,
    pub actor: String,
    pub machine: String,
    pub time: String,
}

impl Op {
    /// A new op with a fresh id.
    pub fn new(
        kind: &str,
        store: StoreKey,
        task: &str,
        fields: Map<String, Value>,
        actor: &str,
        machine: &str,
        at: DateTime<Utc>,
    ) -> Op {
        Op {
            id: uuid::Uuid::new_v4().to_string(),
            store,
            task: task.to_string(),
            kind: kind.to_string(),
            fields,
            actor: actor.to_string(),
            machine: machine.to_string(),
            time: stamp_us(at),
        }
    }

    /// Parses and checks one line; the problem in one line otherwise.
    pub fn parse(line: &str) -> Result<Op, String> {
        let op: Op = serde_json::from_str(line).map_err(|e| format!("not an op ({e})"))?;
        op.check()?;
        Ok(op)
    }

    /// Checks an op read from the log or the queue.
    pub fn check(&self) -> Result<(), String> {
        if uuid::Uuid::parse_str(&self.id).is_err() {
            return Err(format!("op id {:?} is not a uuid", self.id));
        }
        if !KINDS.contains(&self.kind.as_str()) {
            return Err(format!(
                "op {} has an unknown kind {:?}",
                self.id, self.kind
            ));
        }
        self.store
            .check()
            .map_err(|e| format!("op {}: {e}", self.id))?;
        if parse_time(&self.time).is_none() {
            return Err(format!(
                "op {} has no valid time ({:?})",
                self.id, self.time
            ));
        }
        let needs_task = !matches!(self.kind.as_str(), "publish" | "add" | "command");
        if needs_task && (self.task.is_empty() || self.task.chars().any(char::is_control)) {
            return Err(format!("op {} names no valid task", self.id));
        }
        if self.actor.is_empty()
            || self.actor.len() > 200
            || self.actor.chars().any(char::is_control)
        {
            return Err(format!("op {} names no valid actor", self.id));
        }
        Ok(())
    }

    /// The op's time.
    pub fn at(&self) -> DateTime<Utc> {
        parse_time(&self.time).unwrap_or(DateTime::<Utc>::MIN_UTC)
    }

    /// Whether the op's time is past `now` by more than the allowed skew.
    pub fn in_future(&self, now: DateTime<Utc>) -> bool {
        self.at() > now + Duration::seconds(FUTURE_SLACK_SECONDS)
    }

    /// One JSON line (no newline).
    pub fn line(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// A field as text.
    pub fn text(&self, field: &str) -> Option<&str> {
        self.fields.get(field).and_then(Value::as_str)
    }

    /// Who made it, for messages: `session 1a2b3c4d` or `alice@laptop`, and where.
    pub fn who(&self) -> String {
        format!("{} on {}", crate::claims::label(&self.actor), self.machine)
    }

    /// `claim of web/T1 by session 1a2b3c4d on laptop`.
    pub fn describe(&self) -> String {
        let what = if self.task.is_empty() {
            format!("{} of {}", self.kind, self.store.label())
        } else {
            format!("{} of {}/{}", self.kind, self.store.id, self.task)
        };
        format!("{what} by {}", self.who())
    }
}

/// A time with microseconds, as ops carry it: `2026-03-01T12:00:00.000001Z`.
pub fn stamp_us(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Micros, true)
}

/// The time for a new op: now, or just after the latest op this machine knows of when the
/// clock is behind it (a fixed clock, skew), so an op always sorts after what it saw.
pub fn next_time(now: DateTime<Utc>, latest: Option<DateTime<Utc>>) -> DateTime<Utc> {
    match latest {
        Some(l) if l >= now => l + Duration::microseconds(1),
        _ => now,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key() -> StoreKey {
        StoreKey {
            layout: "projects".into(),
            path: ".claude/projects/web".into(),
            id: "web".into(),
        }
    }

    #[test]
    fn an_op_round_trips_and_is_checked() {
        let at = parse_time("2026-03-01T12:00:00Z").unwrap();
        let op = Op::new("done", key(), "T1", Map::new(), "alice@lap", "lap", at);
        assert_eq!(op.time, "2026-03-01T12:00:00.000000Z");
        let back = Op::parse(&op.line()).unwrap();
        assert_eq!(back, op);
        let mut bad = op.clone();
        bad.kind = "explode".into();
        assert!(Op::parse(&bad.line()).is_err());
        let mut bad = op.clone();
        bad.store.path = "../etc".into();
        assert!(Op::parse(&bad.line()).is_err());
        let mut bad = op;
        bad.task = String::new();
        assert!(Op::parse(&bad.line()).is_err());
        assert!(Op::parse("{").is_err());
    }

    #[test]
    fn names_are_tree_safe_and_distinct() {
        assert_eq!(key().name(), "projects--.claude%2Fprojects%2Fweb");
        let mut other = key();
        other.path = ".claude/projects/w%2Feb".into();
        assert_ne!(other.name(), key().name());
    }

    #[test]
    fn new_times_sort_after_what_was_seen() {
        let now = parse_time("2026-03-01T12:00:00Z").unwrap();
        assert_eq!(next_time(now, None), now);
        let t = next_time(now, Some(now));
        assert!(t > now);
        assert_eq!(next_time(t, Some(now)), t);
    }

    #[test]
    fn unsafe_paths_are_refused() {
        for p in ["", "/abs", "a/../b", "a//b", "a/.git/x", "a\\b", "./a"] {
            assert!(check_rel_path(p).is_err(), "{p}");
        }
        assert!(check_rel_path(".claude/projects/web").is_ok());
    }
}
