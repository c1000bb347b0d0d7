//! Whose task is it (issue 9): Claude Code numbers its tasks per session (`"1"`, `"2"`, … in
//! `<config>/tasks/<session id>/`), so two sessions of one project both have a task `1`. The
//! mirror keeps session B's task 1 apart from session A's by keying it `1@<session>` (the
//! first 8 characters of the session id; the whole id if those collide), unless every session
//! numbers in one sequence: `CLAUDE_CODE_TASK_LIST_ID` names a shared folder, or agent teams
//! (`CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS`) share one list. TaskCompleted, `tasks_completed`
//! and signals resolve a bare number the same way.
//!
//! TodoWrite's todos are recorded with the project and session that wrote them, and a
//! TodoWrite only removes (or claims) todos of its own project, session and agent.
//!
//! Also the seed's switches: `CLAUDE_CODE_ENABLE_TASKS=false` turns the task system (the
//! Task tools and TaskCompleted) off for taskhook too; TodoWrite, the legacy tool Claude Code
//! then offers, is still mirrored.

use super::list::List;
use crate::context::Ctx;
use crate::env::{
    CLAUDE_CODE_ENABLE_TASKS, CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS, CLAUDE_CODE_TASK_LIST_ID,
};

/// Characters of the session id used in a key.
const SHORT_SESSION: usize = 8;

fn word(v: Option<&str>) -> String {
    v.unwrap_or("").trim().to_ascii_lowercase()
}

/// Whether the task system is on (`CLAUDE_CODE_ENABLE_TASKS` is not `0`, `false`, `no`, `off`).
pub fn tasks_enabled(cx: &Ctx) -> bool {
    !matches!(
        word(cx.env.get(CLAUDE_CODE_ENABLE_TASKS)).as_str(),
        "0" | "false" | "no" | "off"
    )
}

/// Whether agent teams are on (`CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS` is `1`, `true`, `yes`, `on`).
pub fn agent_teams(cx: &Ctx) -> bool {
    matches!(
        word(cx.env.get(CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS)).as_str(),
        "1" | "true" | "yes" | "on"
    )
}

/// Whether every session writing to this list numbers its tasks in one sequence.
pub fn shared_numbering(cx: &Ctx) -> bool {
    cx.env.get(CLAUDE_CODE_TASK_LIST_ID).is_some() || agent_teams(cx)
}

/// How Claude Code's task numbers map to mirrored ids for the payload being handled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Keys {
    /// `None`: numbers are ids as they are (a shared list, or no session known).
    pub session: Option<String>,
}

impl Keys {
    /// The keys for the payload being handled.
    pub fn of(cx: &Ctx) -> Keys {
        Keys::for_session(cx, cx.payload().session_id.as_deref())
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
