//! Claude Code's own list stays one truth (issue 22). Claude Code keeps the tasks its Task
//! tools made in `<config>/tasks/<session or CLAUDE_CODE_TASK_LIST_ID>/<N>.json`, which taskhook
//! reads and never writes, and it ignores seed 002's `tasks_to_update` (checked on 2.1.330). So
//! when a signal or a verb changes the status of such a task in the mirror, the main agent is
//! told to make the same change with `TaskUpdate`, in Claude Code's own id (`1`, never
//! `1@defa37fe`), and only while Claude Code's file says otherwise.

use super::list::List;
use super::mirror::{claude_own_dir_of, claude_own_task};
use super::scope::{asking_session, claude_number, shared_numbering};
use crate::claims;
use crate::context::Ctx;
use crate::layouts::json::str_field;

/// A mirrored task Claude Code keeps a file of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kept {
    /// Claude Code's own id (`1`).
    pub number: String,
    /// The session whose task it is (`None` in a shared list).
    pub session: Option<String>,
}

/// Slot `i` as Claude Code keeps it, when it is a task of Claude Code's Task tools.
pub fn kept(list: &List<'_>, i: usize) -> Option<Kept> {
    let v = list.view(i);
    Some(Kept {
        number: claude_number(v)?.to_string(),
        session: v.session().map(str::to_string),
    })
}

/// Claude Code's status word for a mirrored status (it has no `blocked`).
fn claude_status(status: &str) -> &str {
    if status == "blocked" {
        "pending"
    } else {
        status
    }
}

/// What to say so that Claude Code's own file of each task in `tasks` says `status` too: for
/// the main agent (a `TaskUpdate` to call, when the task is its own session's or the list is
/// shared) and for the user (another session's list, which only that session can update). A
/// task whose file is missing (Claude Code does not keep it) or already agrees needs nothing.
pub fn tell(cx: &Ctx, tasks: &[Kept], status: &str) -> (Vec<String>, Vec<String>) {
    let want = claude_status(status);
    let asking = asking_session(cx);
    let shared = shared_numbering(cx);
    let (mut main, mut user) = (Vec::new(), Vec::new());
    for k in tasks {
        let dir = claude_own_dir_of(cx, k.session.as_deref());
        let Some(own) = claude_own_task(cx, dir.as_deref(), &k.number) else {
            continue;
        };
        let has = str_field(&own, "status");
        if has == want {
            continue;
        }
        let subject = str_field(&own, "subject");
        let name = if subject.trim().is_empty() {
            format!("#{}", k.number)
        } else {
            format!("#{} ({})", k.number, crate::display::line(subject))
        };
        let mine = shared || k.session.is_none() || k.session == asking;
        if mine {
            main.push(format!(
                "taskhook: Claude Code's own task list still shows task {name} as {has}: call \
                 TaskUpdate with {} so that it says {want} too (taskhook never writes Claude \
                 Code's files).",
                serde_json::json!({"taskId": k.number, "status": want})
            ));
        } else {
            user.push(format!(
                "taskhook: Claude Code's own task list of {} still shows its task {name} as \
                 {has}; only that session can set it to {want}.",
                claims::label(k.session.as_deref().unwrap_or_default())
            ));
        }
    }
    (main, user)
}
