//! Completing tasks: seed 002's SubagentStop `tasks_completed` and a `_DONE` signal, through
//! the one write pipeline ([`super::write::update`]). A task whose dependencies are not
//! completed (nor completed by the same call) is refused, as TaskCompleted and `tasks write`
//! refuse it.

use std::collections::{HashMap, HashSet};

use super::doc::{label, unmet};
use super::list::List;
use super::view::Status;
use super::write::update;
use crate::context::Ctx;
use crate::error::Result;
use crate::layouts::json::set_str;
use crate::layouts::StoreRef;

/// What completing tasks did.
#[derive(Debug, Clone, Default)]
pub struct Completed {
    /// Ids of the list that were completed (or already were), each once.
    pub found: Vec<String>,
    /// Names that are not tasks of the list.
    pub unknown: Vec<String>,
    /// Tasks not completed because a dependency is not: the task's label (`id (description)`)
    /// and its unfinished dependencies (`dep (description) [status]`).
    pub refused: Vec<(String, Vec<String>)>,
    /// Tasks the completion unblocked, as labels (`id (description)`).
    pub ready: Vec<String>,
}

/// Completes the tasks `names` resolve to (seed 002's SubagentStop `tasks_completed`, a `_DONE`
/// signal), under the list's lock. A task whose dependencies are not completed (nor completed
/// by the same call) is refused, like TaskCompleted and `tasks write` refuse it.
pub fn complete(
    cx: &Ctx,
    store: &StoreRef,
    names: &[String],
    resolve: impl Fn(&List<'_>, &str) -> Option<usize>,
) -> Result<Completed> {
    let applied = update(
        cx,
        store,
        |list, _now| {
            let mut done = Completed::default();
            let mut asked: Vec<usize> = Vec::new();
            let mut once = HashSet::new();
            for name in names {
                match resolve(list, name) {
                    Some(i) if once.insert(i) => asked.push(i),
                    Some(_) => {}
                    None => done.unknown.push(name.clone()),
                }
            }
            let allowed = completable(list, &asked);
            for &i in &asked {
                let id = list.view(i).id.to_string();
                if allowed.contains(&i) {
                    if list.view(i).status != Status::Completed {
                        list.edit(i, |t| set_str(t, "status", "completed"));
                    }
                    done.found.push(id);
                } else {
                    done.refused.push((label(list, &id), unmet(list, &id)));
                }
            }
            Ok(done)
        },
        |_, done| done,
    )?;
    let mut done = applied.value;
    done.ready = applied.unblocked_labels;
    Ok(done)
}

/// Of the slots `asked`, those whose every dependency is completed or itself completable in the
/// same call (a chain named together completes together). Linear in the tasks named.
fn completable(list: &List<'_>, asked: &[usize]) -> HashSet<usize> {
    let set: HashSet<usize> = asked.iter().copied().collect();
    let mut memo: HashMap<usize, bool> = HashMap::new();
    fn ok(
        list: &List<'_>,
        i: usize,
        set: &HashSet<usize>,
        memo: &mut HashMap<usize, bool>,
        depth: usize,
    ) -> bool {
        if let Some(&v) = memo.get(&i) {
            return v;
        }
        memo.insert(i, false);
        let deps: Vec<usize> = list
            .view(i)
            .deps
            .iter()
            .map(|d| list.find(d))
            .collect::<Option<Vec<_>>>()
            .unwrap_or_else(|| vec![usize::MAX]);
        let v = depth < 10_000
            && deps.iter().all(|&j| {
                j != usize::MAX
                    && (list.view(j).status == Status::Completed
                        || (set.contains(&j) && ok(list, j, set, memo, depth + 1)))
            });
        memo.insert(i, v);
        v
    }
    asked
        .iter()
        .copied()
        .filter(|&i| ok(list, i, &set, &mut memo, 0))
        .collect()
}
