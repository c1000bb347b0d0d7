//! Resuming a run (SessionStart, `taskhook execute resume`, `taskhook recover`): a corrupt
//! state rebuilt from `execute-state.json.bak` (bad bytes moved aside), git recovery
//! ([`super::recovery`]), the seed's resume rules that need no git, stale temp files removed,
//! everything derived again. Decided on an unlocked read; only a store with something to fix is
//! locked and written.

use serde_json::{json, Value};

use super::derive::derive;
use super::git;
use super::recovery;
use super::state::{self, bak_path, corrupt, differs, state_path, task_ids, Read};
use crate::context::Ctx;
use crate::error::Result;
use crate::layouts::StoreRef;

/// What resuming found and did.
#[derive(Debug, Clone, Default)]
pub struct Resumed {
    /// The state after (what is, or in a dry run would be, on disk).
    pub state: Value,
    /// What changed and why, one line each.
    pub changes: Vec<String>,
    /// What git shows that changes nothing (reported only).
    pub notes: Vec<String>,
    /// Whether the state was rebuilt from the backup.
    pub rebuilt: bool,
    /// Why git recovery did not run, when it did not.
    pub git_skipped: Option<String>,
    /// The branches git has, when git recovery ran.
    pub branches: Option<Vec<String>>,
}

impl Resumed {
    /// The resume plan of the state after, its merge queue checked against git's branches.
    pub fn plan(&self) -> super::plan::Plan {
        let mut p = super::plan::plan(&self.state);
        if let Some(names) = &self.branches {
            p.check_branches(&self.state, names);
        }
        p
    }
}

/// The state, or the backup in its place when the state is unusable (moving the bad bytes
/// aside when `write`); `None` when there is no state file.
fn load_or_rebuild(
    cx: &Ctx,
    store: &StoreRef,
    write: bool,
) -> Result<Option<(Value, Vec<String>, bool)>> {
    let path = state_path(&store.root);
    let why = match state::read(cx, &path)? {
        Read::Valid(v) => return Ok(Some((v, Vec::new(), false))),
        Read::Missing => return Ok(None),
        Read::Invalid(why) => why,
    };
    let Read::Valid(bak) = state::read(cx, &bak_path(&store.root))? else {
        return Err(corrupt(
            store,
            format!(
                "{why}; there is no valid {} to rebuild it from: restore it from git or a copy, or fix it by hand",
                state::BAK
            ),
        ));
    };
    let line = if write {
        let aside = cx.store.quarantine(&path)?;
        format!(
            "{} was unusable ({why}); moved it to {} and rebuilt it from {} and git",
            state::FILE,
            aside.file_name().unwrap_or_default().to_string_lossy(),
            state::BAK
        )
    } else {
        format!(
            "{} is unusable ({why}); it is rebuilt from {} and git",
            state::FILE,
            state::BAK
        )
    };
    Ok(Some((bak, vec![line], true)))
}

/// Branch names the state records (for git's log of unmerged work).
fn recorded_branches(state: &Value) -> Vec<String> {
    task_ids(state)
        .iter()
        .filter_map(|id| state["tasks"][id]["branch"].as_str())
        .filter(|b| !b.is_empty())
        .map(str::to_string)
        .collect()
}

/// The branches of tasks not completed (`worktree-ID` and the branch the task records).
fn unfinished_branches(state: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for id in task_ids(state) {
        let t = &state["tasks"][&id];
        if state::status(t) == "completed" {
            continue;
        }
        out.push(format!("worktree-{id}"));
        if let Some(b) = t["branch"].as_str().filter(|b| !b.is_empty()) {
            out.push(b.to_string());
        }
    }
    out
}

/// Resumes the store; `lift_stop` continues a run the user stopped (`taskhook execute
/// resume`). `None` when the store has no state file.
pub fn resume(cx: &Ctx, store: &StoreRef, lift_stop: bool) -> Result<Option<Resumed>> {
    let path = state_path(&store.root);
    let peek = match state::read(cx, &path)? {
        Read::Valid(v) => v,
        _ => match state::read(cx, &bak_path(&store.root))? {
            Read::Valid(v) => v,
            _ => Value::Null,
        },
    };
    let view = super::git_root(cx, store).map(|root| {
        git::view(
            &root,
            &recorded_branches(&peek),
            &unfinished_branches(&peek),
        )
    });
    let now = cx.store.clock().stamp();
    cx.store.transact(&state::lock_path(&store.root), |pass| {
        let Some((mut s, mut changes, rebuilt)) = load_or_rebuild(cx, store, pass.writes())? else {
            return Ok((None, false));
        };
        let temps = if pass.writes() {
            cx.store.clean_stale_temps_of(&path)?
        } else {
            cx.store.stale_temps_of(&path)?
        };
        if !temps.is_empty() {
            changes.push(format!("removed {} abandoned temp file(s)", temps.len()));
        }
        let before = s.clone();
        if lift_stop && super::policy::stop_of(&s).is_some() {
            s["status"] = json!("in_progress");
            if let Some(m) = s.as_object_mut() {
                m.shift_remove("stop");
            }
            changes.push("the run was stopped; it continues".into());
        }
        let mut notes = Vec::new();
        let git_skipped = match &view {
            Some(v) if v.problems.is_empty() || !v.worktrees.is_empty() => {
                let found = recovery::apply(&mut s, v, &now);
                changes.extend(found.changes);
                notes.extend(found.notes);
                None
            }
            Some(v) => Some(v.problems.join("; ")),
            None => Some("the project is not in a git repository".to_string()),
        };
        changes.extend(recovery::settle(&mut s));
        derive(&before, &mut s, &now);
        let dirty = rebuilt || !temps.is_empty() || differs(&before, &s);
        if pass.writes() && (rebuilt || differs(&before, &s)) {
            state::save(cx, store, &s)?;
        }
        Ok((
            Some(Resumed {
                state: s,
                changes,
                notes,
                rebuilt,
                branches: view
                    .as_ref()
                    .filter(|_| git_skipped.is_none())
                    .map(|v| v.branches.iter().map(|b| b.name.clone()).collect()),
                git_skipped: git_skipped.clone(),
            }),
            dirty,
        ))
    })
}
