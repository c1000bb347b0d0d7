//! Whose task is it (issue 9): Claude Code numbers its tasks per session (`"1"`, `"2"`, … in
//! `<config>/tasks/<session id>/`), so two sessions of one project both have a task `1`. The
//! mirror keeps session B's task 1 apart from session A's by keying it `1@<session>` (the
//! first 8 characters of the session id; the whole id if those collide), unless every session
//! numbers in one sequence: `CLAUDE_CODE_TASK_LIST_ID` names a shared folder, or agent teams
//! (`CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS`) share one list. TaskCompleted, `tasks_completed`
//! and signals resolve a bare number the same way.
//!
//! How a session names them (issue 26 item 9): the session asking (the payload's, else the
//! `CLAUDE_CODE_SESSION_ID` a command runs in) reads its own tasks by Claude Code's numbers,
//! `1`, in every message and unit reference ([`Keys::shown`], [`Keys::find_shown`]); other
//! sessions' tasks keep the mirror's `1@aaaaaaaa`. And whose work they are (issue 26 item 10):
//! another live session's unfinished tasks are that session's ([`Owners`], [`Whose`]).
//!
//! TodoWrite's todos are recorded with the project and session that wrote them, and a
//! TodoWrite only removes (or claims) todos of its own project, session and agent.
//!
//! Also the seed's switches: `CLAUDE_CODE_ENABLE_TASKS=false` turns the task system (the
//! Task tools and TaskCompleted) off for taskhook too; TodoWrite, the legacy tool Claude Code
//! then offers, is still mirrored.

use std::collections::HashMap;
use std::path::PathBuf;

use chrono::{DateTime, Duration, Utc};

use super::list::List;
use super::model::View;
use crate::claims;
use crate::context::Ctx;
use crate::env::{
    CLAUDE_CODE_ENABLE_TASKS, CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS, CLAUDE_CODE_SESSION_ID,
    CLAUDE_CODE_TASK_LIST_ID,
};
use crate::layouts::StoreRef;

/// Characters of the session id used in a key.
const SHORT_SESSION: usize = 8;

/// Whether the task system is on (`CLAUDE_CODE_ENABLE_TASKS` is not `0`, `false`, `no`, `off`).
pub fn tasks_enabled(cx: &Ctx) -> bool {
    !crate::env::is_off(cx.env.get(CLAUDE_CODE_ENABLE_TASKS))
}

/// Whether agent teams are on (`CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS` is `1`, `true`, `yes`, `on`).
pub fn agent_teams(cx: &Ctx) -> bool {
    crate::env::is_on(cx.env.get(CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS))
}

/// Whether every session writing to this list numbers its tasks in one sequence.
pub fn shared_numbering(cx: &Ctx) -> bool {
    cx.env.get(CLAUDE_CODE_TASK_LIST_ID).is_some() || agent_teams(cx)
}

/// The session asking: the payload's, else `CLAUDE_CODE_SESSION_ID` (a command the model runs
/// in Claude Code's Bash tool has it); `None` for a person at a terminal.
pub fn asking_session(cx: &Ctx) -> Option<String> {
    cx.session.clone().filter(|s| !s.is_empty()).or_else(|| {
        cx.env
            .get(CLAUDE_CODE_SESSION_ID)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    })
}

/// Claude Code's own number of a mirrored TaskCreate task: `1` for `1@defa37fe`, or the bare
/// `1` of a shared list (and of a task mirrored before keying).
pub fn claude_number<'v>(v: &'v View<'_>) -> Option<&'v str> {
    if v.origin() != Some("TaskCreate") {
        return None;
    }
    let n = v.id.split_once('@').map_or(&*v.id, |(n, _)| n);
    (!n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())).then_some(n)
}

/// How Claude Code's task numbers map to mirrored ids for the payload being handled.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Keys {
    /// `None`: numbers are ids as they are (a shared list, or no session known).
    pub session: Option<String>,
}

impl Keys {
    /// The keys for the session asking ([`asking_session`]: the payload's, else the one a
    /// command runs in).
    pub fn of(cx: &Ctx) -> Keys {
        Keys::for_session(cx, asking_session(cx).as_deref())
    }

    /// The keys for `session` in this environment.
    pub fn for_session(cx: &Ctx, session: Option<&str>) -> Keys {
        Keys {
            session: session
                .filter(|s| !s.is_empty() && !shared_numbering(cx))
                .map(str::to_string),
        }
    }

    /// `1@defa37fe`: Claude Code's task `n` of this session.
    fn short_key(n: &str, session: &str) -> String {
        let short: String = session.chars().take(SHORT_SESSION).collect();
        format!("{n}@{short}")
    }

    /// The mirrored task for Claude Code's task `n`, if the mirror has it. A task mirrored
    /// before keying (bare `n`, from TaskCreate in this same session) is found too.
    pub fn find(&self, list: &List<'_>, n: &str) -> Option<usize> {
        let Some(s) = &self.session else {
            return list.find(n);
        };
        let mine = |i: &usize| list.view(*i).session() == Some(s.as_str());
        if let Some(i) = list.find(&Self::short_key(n, s)).filter(mine) {
            return Some(i);
        }
        if let Some(i) = list.find(&format!("{n}@{s}")).filter(mine) {
            return Some(i);
        }
        list.find(n)
            .filter(|i| mine(i) && list.view(*i).origin() == Some("TaskCreate"))
    }

    /// The id for Claude Code's new task `n`.
    pub fn new_id(&self, list: &List<'_>, n: &str) -> String {
        let Some(s) = &self.session else {
            return n.to_string();
        };
        let short = Self::short_key(n, s);
        match list.find(&short) {
            Some(i) if list.view(i).session() != Some(s.as_str()) => {
                format!("{n}@{s}")
            }
            _ => short,
        }
    }

    /// Resolves a name from TaskCompleted, `tasks_completed` or a signal: Claude Code's task of
    /// this session with that number first, else the task with that very id.
    pub fn resolve(&self, list: &List<'_>, name: &str) -> Option<usize> {
        self.find(list, name).or_else(|| list.find(name))
    }

    /// How the asking session reads task `i` (issue 26 item 9): its own Claude Code task by
    /// Claude Code's number (`1` for `1@defa37fe`) when no task of the list has that very id;
    /// every other task by its id.
    pub fn shown<'l>(&self, list: &'l List<'_>, i: usize) -> &'l str {
        let id: &'l str = &list.view(i).id;
        match self.number_of(list, i, id) {
            Some(n) if list.find(n).is_none() => n,
            _ => id,
        }
    }

    /// The task a name the asking session was shown resolves to (the inverse of
    /// [`Keys::shown`]), else the task with that very id.
    pub fn find_shown(&self, list: &List<'_>, name: &str) -> Option<usize> {
        if let Some(j) = list.find(name).filter(|&j| self.shown(list, j) == name) {
            return Some(j);
        }
        if let Some(i) = self
            .find(list, name)
            .filter(|&i| self.shown(list, i) == name)
        {
            return Some(i);
        }
        list.find(name)
    }

    /// The bare number of a task keyed to this session (`1@defa37fe` → `1`), for names.
    pub fn number_of<'v>(&self, list: &List<'_>, i: usize, id: &'v str) -> Option<&'v str> {
        let s = self.session.as_deref()?;
        let (n, _) = id.split_once('@')?;
        let v = list.view(i);
        (v.session() == Some(s)
            && v.origin() == Some("TaskCreate")
            && self.find(list, n) == Some(i))
        .then_some(n)
    }
}

/// Whose a mirrored task is, for the session asking (issue 26 item 10: sessions do not hand
/// each other work).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Whose {
    /// Anyone's: the list is shared on purpose (`CLAUDE_CODE_TASK_LIST_ID`, agent teams), or no
    /// session wrote the task (`tasks write`, a person).
    Anyone,
    /// The asking session's own.
    Own,
    /// Another session's while that session is live (an event of it within the lease): its
    /// work, never offered to anyone else.
    Theirs(Other),
    /// Another session's that ended (SessionEnd) or has been quiet longer than the lease: left
    /// over, offered like an expired claim.
    Left(Other),
}

/// Another session, as messages name it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Other {
    pub session: String,
    /// Its last hook event, when taskhook has seen one.
    pub seen: Option<DateTime<Utc>>,
}

impl Other {
    /// `session aaaaaaaa, last active 5 min ago` (the age when known).
    pub fn describe(&self, cx: &Ctx) -> String {
        match self.seen {
            Some(t) => format!(
                "{}, last active {}",
                claims::label(&self.session),
                claims::relative(cx, t)
            ),
            None => claims::label(&self.session),
        }
    }
}

/// Decides [`Whose`] for the tasks of one list, looking at each other session once.
#[derive(Debug)]
pub struct Owners {
    asking: Option<String>,
    shared: bool,
    project: PathBuf,
    /// The project's lease, read when another session's task first needs it.
    lease: Option<Duration>,
    seen: HashMap<String, Option<DateTime<Utc>>>,
}

impl Owners {
    /// For the session asking ([`asking_session`]) about `store`, whose project sets the lease.
    pub fn of(cx: &Ctx, store: &StoreRef) -> Owners {
        Owners {
            asking: asking_session(cx),
            shared: shared_numbering(cx),
            project: store.project.clone(),
            lease: None,
            seen: HashMap::new(),
        }
    }

    /// Whose task `v` is. Another session is live while its liveness mark (set by each of its
    /// hook events once it mirrored a task, removed by its SessionEnd) is younger than the
    /// lease.
    pub fn whose(&mut self, cx: &Ctx, v: &View<'_>) -> Whose {
        if self.shared {
            return Whose::Anyone;
        }
        let Some(s) = v.session() else {
            return Whose::Anyone;
        };
        if Some(s) == self.asking.as_deref() {
            return Whose::Own;
        }
        let seen = *self
            .seen
            .entry(s.to_string())
            .or_insert_with(|| claims::last_seen(cx, s));
        let other = Other {
            session: s.to_string(),
            seen,
        };
        let project = &self.project;
        let lease = *self.lease.get_or_insert_with(|| {
            let secs = claims::lease_seconds(cx, project);
            Duration::seconds(i64::try_from(secs).unwrap_or(i64::MAX / 2))
        });
        if seen.is_some_and(|t| t + lease > cx.store.clock().now()) {
            Whose::Theirs(other)
        } else {
            Whose::Left(other)
        }
    }
}

/// Who wrote a todo: the project folder, the session and the agent (main agent: `None`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TodoScope {
    pub project: Option<String>,
    pub session: Option<String>,
    pub agent: Option<String>,
}

impl TodoScope {
    /// Whether a mirrored todo with these recorded fields is this writer's. A todo mirrored
    /// before taskhook recorded project and session (neither field) counts as the writer's
    /// when the agent matches, as it did then.
    pub fn owns(&self, project: Option<&str>, session: Option<&str>, agent: Option<&str>) -> bool {
        let legacy = project.is_none() && session.is_none();
        agent == self.agent.as_deref()
            && (legacy
                || (project == self.project.as_deref() && session == self.session.as_deref()))
    }
}
