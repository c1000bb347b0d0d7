//! Claims and leases (CONTRACT §7): which Claude Code session, or which person at a terminal,
//! holds which unit of the project's stores, and until when.
//!
//! - **The record** is taskhook's own file, `<project>/.claude/taskhook/claims.json` (locked by
//!   `.claims.json.lock` beside it), never fields added to a seed's files or log lines. One
//!   entry per claimed unit: layout, store, task, owner, since, renewed, the lease's length,
//!   and how it was made (`claim`, `launch`, `done`, `takeover`).
//! - **The owner** is the session: `CLAUDE_CODE_SESSION_ID` in a command's environment (Claude
//!   Code sets it for its hooks and for the Bash tool's commands alike), the payload's
//!   `session_id` in a hook; else `user@host` for a person at a terminal.
//! - **Leases** last [`DEFAULT_LEASE_MINUTES`] (`lease_minutes` in `.claude/taskhook.json`).
//!   Every hook event of the owning session renews them at the cost of one system call: a
//!   session that holds a claim has a liveness mark, `<claude config>/taskhook/sessions/<id>`,
//!   whose modification time each of its events sets to now (no file opened; a subagent's
//!   tool calls carry the main session's id, so a long subagent keeps the lease alive). A
//!   lease ends at the later of `renewed` and that mark, plus its length. `taskhook heartbeat`
//!   renews by hand (what a person does).
//! - **Expired claims** stay recorded until someone takes the unit over (the takeover is said,
//!   and logged), the owner releases or finishes it, or the owner's next event renews it.

use std::path::{Path, PathBuf};

use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::context::Ctx;
use crate::env;
use crate::error::{Error, Result};
use crate::store::clock::{parse_time, stamp};
use crate::store::strict::{checked_record, integer, list, non_empty, string, takes, timestamp};
use crate::store::{lock_path_for, parse_json, schema, to_pretty};

/// The schema of `claims.json`.
pub const SCHEMA: &str = "taskhook-claims";
/// A lease's length when `.claude/taskhook.json` names none.
pub const DEFAULT_LEASE_MINUTES: u64 = 30;
/// Longest session id or `user@host` accepted as an owner, in bytes.
const MAX_OWNER_LEN: usize = 200;

/// One claimed unit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Claim {
    pub layout: String,
    pub store: String,
    pub task: String,
    /// A session id, or `user@host`.
    pub owner: String,
    pub since: String,
    pub renewed: String,
    pub lease_seconds: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub via: Option<String>,
    /// Fields written by a later taskhook, kept.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

impl Claim {
    /// Whether this claim is of `layout`'s unit `task` in `store`.
    pub fn is_of(&self, layout: &str, store: &str, task: &str) -> bool {
        self.layout == layout && self.store == store && self.task == task
    }
}

/// The whole file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Claims {
    pub claims: Vec<Claim>,
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

impl Claims {
    /// The claim on a unit, when there is one.
    pub fn of(&self, layout: &str, store: &str, task: &str) -> Option<&Claim> {
        self.claims.iter().find(|c| c.is_of(layout, store, task))
    }

    /// Removes the claim on a unit; returns it.
    pub fn remove(&mut self, layout: &str, store: &str, task: &str) -> Option<Claim> {
        let i = self
            .claims
            .iter()
            .position(|c| c.is_of(layout, store, task))?;
        Some(self.claims.remove(i))
    }

    /// Sets the claim on a unit (replacing any).
    pub fn put(&mut self, claim: Claim) {
        match self
            .claims
            .iter_mut()
            .find(|c| c.is_of(&claim.layout, &claim.store, &claim.task))
        {
            Some(slot) => *slot = claim,
            None => self.claims.push(claim),
        }
    }
}

/// Who acts: a Claude Code session, or a person at a terminal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owner {
    pub id: String,
    /// A Claude Code session (its hook events renew its leases), not a person.
    pub session: bool,
}

impl Owner {
    /// A session, by the id a payload or `CLAUDE_CODE_SESSION_ID` gave; an id that is empty,
    /// too long or not printable is refused.
    pub fn session(id: &str) -> Result<Owner> {
        check_owner(id, "session id")?;
        Ok(Owner {
            id: id.to_string(),
            session: true,
        })
    }

    /// The owner a command acts as: the Claude Code session it runs in
    /// (`CLAUDE_CODE_SESSION_ID`), else `user@host`.
    pub fn of_command(cx: &Ctx) -> Result<Owner> {
        if let Some(raw) = cx.env.get_os(env::CLAUDE_CODE_SESSION_ID) {
            let id = raw.to_str().ok_or_else(|| {
                Error::BadInput(format!(
                    "{} is not valid UTF-8; taskhook cannot name this session",
                    env::CLAUDE_CODE_SESSION_ID
                ))
            })?;
            if !id.is_empty() {
                return Owner::session(id)
                    .map_err(|e| Error::BadInput(format!("{}: {e}", env::CLAUDE_CODE_SESSION_ID)));
            }
        }
        let user = cx
            .env
            .get(env::USER)
            .or_else(|| cx.env.get(env::LOGNAME))
            .filter(|u| !u.is_empty())
            .unwrap_or("someone");
        let host = crate::env::hostname().unwrap_or_else(|| "localhost".into());
        let id = format!("{user}@{host}");
        check_owner(&id, "user@host")?;
        Ok(Owner { id, session: false })
    }

    /// How messages name it: `session 1a2b3c4d` (a session's first 8 characters) or
    /// `alice@laptop`.
    pub fn label(&self) -> String {
        label(&self.id)
    }
}

/// How messages name an owner id: sessions by their first 8 characters, people as they are.
pub fn label(owner: &str) -> String {
    if owner.contains('@') {
        owner.to_string()
    } else {
        let short: String = owner.chars().take(8).collect();
        format!("session {short}")
    }
}

fn check_owner(id: &str, what: &str) -> Result<()> {
    let why = if id.is_empty() {
        Some("it is empty")
    } else if id.len() > MAX_OWNER_LEN {
        Some("it is longer than 200 bytes")
    } else if id.chars().any(|c| c.is_control() || c.is_whitespace()) {
        Some("it holds a control character or whitespace")
    } else if id.contains('/') || id.contains('\\') || id.starts_with('.') {
        Some("it holds a path separator or starts with `.`")
    } else {
        None
    };
    match why {
        Some(why) => Err(Error::BadInput(format!("invalid {what} {id:?}: {why}"))),
        None => Ok(()),
    }
}

checked_record! {
    /// claims.json (`taskhook-claims`).
    FileCheck,
    ["claims"],
    required: ["claims"],
    |m, _name| list::<ClaimCheck, _>(m).map(drop)
}

checked_record! {
    /// One claim and its lease.
    ClaimCheck,
    ["layout", "store", "task", "owner", "since", "renewed", "lease_seconds", "via"],
    required: ["layout", "store", "task", "owner", "since", "renewed", "lease_seconds"],
    |m, name| {
        match name {
            "since" | "renewed" => _ = timestamp(m, name)?,
            "lease_seconds" => _ = integer(m, 1, name)?,
            "via" => _ = string(m)?,
            _ => _ = non_empty(m, name)?,
        }
        Ok(())
    }
}

/// `taskhook-claims`' own check ([`crate::store::schema::Native`]).
pub fn is_valid(doc: &Value) -> bool {
    takes::<FileCheck>(doc)
}

/// The file's path for a project.
pub fn path(project: &Path) -> PathBuf {
    project.join(".claude").join("taskhook").join("claims.json")
}

/// The liveness mark of a session (see the module docs).
fn mark_path(cx: &Ctx, session: &str) -> PathBuf {
    cx.claude_config_dir()
        .join("taskhook")
        .join("sessions")
        .join(session)
}

/// Reads the claims, read-only; a missing file holds none. A file that does not parse or fails
/// its schema is an error naming it and the fix.
pub fn load(cx: &Ctx, project: &Path) -> Result<Claims> {
    let path = path(project);
    let Some(bytes) = cx.store.read(&path)? else {
        return Ok(Claims::default());
    };
    let corrupt = |details: String| Error::Corrupt {
        path: path.clone(),
        store: path.display().to_string(),
        details,
    };
    let value = parse_json(&bytes).map_err(corrupt)?;
    if let Err(issues) = schema::check(SCHEMA, &value)? {
        return Err(corrupt(format!(
            "does not match schema {SCHEMA}: {}",
            schema::summarize(&issues)
        )));
    }
    serde_json::from_value(value).map_err(|e| corrupt(e.to_string()))
}

/// Changes the claims under their lock (re-read under it); writes only when `f` changed them.
/// Other locks (a store's) may be taken inside `f`, never the other way round.
pub fn update<R>(cx: &Ctx, project: &Path, f: impl FnOnce(&mut Claims) -> Result<R>) -> Result<R> {
    let path = path(project);
    cx.store.create_dir_all(path.parent().unwrap_or(project))?;
    cx.store.with_lock(&lock_path_for(&path), || {
        let mut claims = load(cx, project)?;
        let before = claims.clone();
        let out = f(&mut claims)?;
        if claims != before {
            let value = serde_json::to_value(&claims)
                .map_err(|e| Error::BadInput(format!("claims: {e}")))?;
            let bytes = to_pretty(&value);
            if let Err(issues) = schema::check(SCHEMA, &value)? {
                return Err(Error::SchemaInvalid {
                    path: path.clone(),
                    schema: SCHEMA,
                    details: schema::summarize(&issues),
                });
            }
            cx.store.replace(&path, &bytes)?;
        }
        Ok(out)
    })
}

/// The project's lease length (`lease_minutes` in `.claude/taskhook.json`).
pub fn lease_seconds(cx: &Ctx, project: &Path) -> u64 {
    crate::config::load(&cx.store, project)
        .ok()
        .and_then(|c| c.lease_minutes)
        .unwrap_or(DEFAULT_LEASE_MINUTES)
        .saturating_mul(60)
        .max(1)
}

/// A new claim by `owner` on a unit, now.
pub fn new_claim(
    cx: &Ctx,
    lease_seconds: u64,
    owner: &Owner,
    (layout, store, task): (&str, &str, &str),
    via: &str,
) -> Claim {
    let now = cx.store.clock().stamp();
    Claim {
        layout: layout.to_string(),
        store: store.to_string(),
        task: task.to_string(),
        owner: owner.id.clone(),
        since: now.clone(),
        renewed: now,
        lease_seconds,
        via: Some(via.to_string()),
        other: Map::new(),
    }
}

/// When a claim's lease ends: the later of its `renewed` and its owner's last hook event, plus
/// its length.
pub fn lease_end(cx: &Ctx, c: &Claim) -> DateTime<Utc> {
    let renewed = parse_time(&c.renewed).unwrap_or(DateTime::<Utc>::MIN_UTC);
    let seen = if c.owner.contains('@') {
        None
    } else {
        cx.store.modified(&mark_path(cx, &c.owner))
    };
    let last = seen.map_or(renewed, |s| s.max(renewed));
    last + Duration::seconds(i64::try_from(c.lease_seconds).unwrap_or(i64::MAX / 2))
}

/// When `session` was last seen: its liveness mark's time (every hook event of a session that
/// has one sets it; SessionEnd removes it). `None` for a session without a mark.
pub fn last_seen(cx: &Ctx, session: &str) -> Option<DateTime<Utc>> {
    check_owner(session, "session id").ok()?;
    cx.store.modified(&mark_path(cx, session))
}

/// Whether a claim's lease still runs.
pub fn is_live(cx: &Ctx, c: &Claim) -> bool {
    lease_end(cx, c) > cx.store.clock().now()
}

/// How long ago, or in how long, a time is, for messages: `2 h ago`, `in 25 min`.
pub fn relative(cx: &Ctx, t: DateTime<Utc>) -> String {
    relative_to(cx.store.clock().now(), t)
}

/// [`relative`] from a given now (pure).
pub fn relative_to(now: DateTime<Utc>, t: DateTime<Utc>) -> String {
    let (d, past) = if t <= now {
        (now - t, true)
    } else {
        (t - now, false)
    };
    let text = if d.num_days() >= 2 {
        format!("{} days", d.num_days())
    } else if d.num_hours() >= 1 {
        format!("{} h", d.num_hours())
    } else if d.num_minutes() >= 1 {
        format!("{} min", d.num_minutes())
    } else {
        format!("{} s", d.num_seconds().max(0))
    };
    if past {
        format!("{text} ago")
    } else {
        format!("in {text}")
    }
}

/// A hook event of `session`: renews every lease it holds, in every project, by setting its
/// liveness mark to now. One system call; nothing when it holds no claim (no mark).
pub fn renew_by_event(cx: &Ctx, session: &str) {
    if check_owner(session, "session id").is_ok() {
        cx.store.touch_existing(&mark_path(cx, session));
    }
}

/// Makes sure a session that takes a claim has its liveness mark, set to now.
pub fn keep_alive(cx: &Ctx, owner: &Owner) -> Result<()> {
    if !owner.session {
        return Ok(());
    }
    let mark = mark_path(cx, &owner.id);
    if !cx.store.touch_existing(&mark) {
        if let Some(dir) = mark.parent() {
            cx.store.create_dir_all(dir)?;
        }
        cx.store.replace(&mark, b"")?;
        cx.store.touch_existing(&mark);
    }
    Ok(())
}

/// The claims' times as they are written.
pub fn now_stamp(cx: &Ctx) -> String {
    stamp(cx.store.clock().now())
}

/// SessionEnd: the session's liveness mark goes (its claims were given back).
pub fn forget_session(cx: &Ctx, session: &str) -> Result<()> {
    if check_owner(session, "session id").is_err() {
        return Ok(());
    }
    let mark = mark_path(cx, session);
    if cx.store.modified(&mark).is_some() {
        cx.store.remove(&mark)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::{json, Value};

    use crate::store::schema::tests::native_is_the_schema;
    use crate::store::strict::tests::{any_value, object, pick, stamp};

    fn doc() -> impl Strategy<Value = Value> {
        let name = || pick(vec![json!("execute"), json!(""), json!(1)]);
        let claim = object(
            vec![
                ("layout", name()),
                ("store", name()),
                ("task", name()),
                ("owner", name()),
                ("since", stamp()),
                ("renewed", stamp()),
                (
                    "lease_seconds",
                    pick(vec![json!(1800), json!(0), json!(2.0), json!(1.5)]),
                ),
                ("via", pick(vec![json!("claim"), json!(""), Value::Null])),
            ],
            vec![
                ("layout", json!("execute")),
                ("store", json!("docs/tasks/shop")),
                ("task", json!("L1-001")),
                ("owner", json!("s1")),
                ("since", json!("2026-01-05T08:00:00Z")),
                ("renewed", json!("2026-01-05T08:10:00Z")),
                ("lease_seconds", json!(1800)),
            ],
            3,
        );
        prop_oneof![
            6 => prop::collection::vec(claim, 0..3).prop_map(|c| json!({"claims": c})),
            1 => any_value().prop_map(|c| json!({"claims": c})),
            1 => any_value(),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]

        /// claims.json's own check is its schema.
        #[test]
        fn the_check_is_the_schema(v in doc()) {
            native_is_the_schema("taskhook-claims", &v)?;
        }
    }
}
