//! The state's tasks found by what git calls them (issue 23): the names a text mentions, the
//! task a branch belongs to, and the commits already recorded, each answered from an index built
//! once per look at git instead of a scan of every task per commit. Git recovery reads up to
//! 5,000 commits and 2,000 merges; with a scan per commit a SessionStart at 10,000 tasks took
//! 9 s. Every answer is the one the scans give ([`super::state::mentions`],
//! [`super::lifecycle::has_commit`]); `tests` holds them to it.

use std::collections::{BTreeSet, HashMap};
use std::ops::Bound;
use std::rc::Rc;

use super::model::State;
use super::state::mentions;

/// The prefix every `worktree-ID` branch has.
pub const WORKTREE_PREFIX: &str = "worktree-";

/// The tasks by the names they answer to: their ids, `worktree-ID`, and their `branch`.
pub struct Names {
    /// Task ids by their `branch` field, in the file's order.
    by_branch: HashMap<String, Vec<Rc<str>>>,
    /// The lengths ids have, in bytes, each once.
    id_lengths: Vec<usize>,
    /// The lengths names of any kind have, in bytes, each once.
    lengths: Vec<usize>,
}

impl Names {
    pub fn of(state: &State) -> Names {
        let mut by_branch: HashMap<String, Vec<Rc<str>>> = HashMap::new();
        let (mut id_lengths, mut lengths) = (BTreeSet::new(), BTreeSet::new());
        for i in 0..state.tasks.len() {
            let Some((id, t)) = state.tasks.at(i) else {
                break;
            };
            id_lengths.insert(id.len());
            lengths.insert(id.len());
            lengths.insert(id.len() + WORKTREE_PREFIX.len());
            if let Some(b) = t.branch.non_empty() {
                lengths.insert(b.len());
                match by_branch.get_mut(b) {
                    Some(ids) => ids.push(Rc::clone(id)),
                    None => {
                        by_branch.insert(b.to_string(), vec![Rc::clone(id)]);
                    }
                }
            }
        }
        Names {
            by_branch,
            id_lengths: id_lengths.into_iter().collect(),
            lengths: lengths.into_iter().collect(),
        }
    }

    /// The task a branch belongs to: the first whose `branch` it is, else the task `ID` of a
    /// `worktree-ID` branch.
    pub fn task_of_branch(&self, state: &State, branch: &str) -> Option<Rc<str>> {
        if let Some(ids) = self.by_branch.get(branch) {
            return ids.first().cloned();
        }
        state.tasks.key_of(branch.strip_prefix(WORKTREE_PREFIX)?)
    }

    /// The tasks a branch named `name` is a name of (`worktree-ID`, or their `branch`).
    pub fn tasks_of_branch(&self, state: &State, name: &str) -> Vec<Rc<str>> {
        let mut out: Vec<Rc<str>> = self.by_branch.get(name).cloned().unwrap_or_default();
        if let Some(id) = name
            .strip_prefix(WORKTREE_PREFIX)
            .and_then(|id| state.tasks.key_of(id))
        {
            if !out.contains(&id) {
                out.push(id);
            }
        }
        out
    }

    /// The one task id `text` mentions, if exactly one.
    pub fn named_task(&self, state: &State, text: &str) -> Option<Rc<str>> {
        let mut named: Vec<Rc<str>> = Vec::new();
        for span in spans(text, &self.id_lengths) {
            if let Some(id) = state.tasks.key_of(span) {
                if !named.contains(&id) && mentions(text, &id) {
                    named.push(id);
                    if named.len() > 1 {
                        return None;
                    }
                }
            }
        }
        named.pop()
    }

    /// The tasks `text` mentions by any of their names (id, `worktree-ID`, `branch`), each
    /// once.
    pub fn tasks_in(&self, state: &State, text: &str) -> Vec<Rc<str>> {
        let mut out: Vec<Rc<str>> = Vec::new();
        let mut add = |id: Rc<str>| {
            if !out.contains(&id) {
                out.push(id);
            }
        };
        for span in spans(text, &self.lengths) {
            let by_id = state.tasks.key_of(span);
            let by_worktree = span
                .strip_prefix(WORKTREE_PREFIX)
                .and_then(|id| state.tasks.key_of(id));
            let by_branch = self.by_branch.get(span);
            if (by_id.is_some() || by_worktree.is_some() || by_branch.is_some())
                && mentions(text, span)
            {
                by_id.into_iter().chain(by_worktree).for_each(&mut add);
                by_branch.into_iter().flatten().cloned().for_each(&mut add);
            }
        }
        out
    }
}

/// The parts of `text` that could be a name [`mentions`] finds there, of one of the `lengths`
/// names have: each from a start (the text's, or after a character that is not a word's) to an
/// end (the text's, or before a character that neither continues a word nor starts a `-digit`
/// id suffix). Every name `mentions` finds in `text` is one of them. At most the text's starts
/// times the lengths, however the text was written (a scan of every name would be the names
/// times the text).
fn spans<'t>(text: &'t str, lengths: &[usize]) -> Vec<&'t str> {
    let word = |c: char| c.is_alphanumeric() || c == '_';
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let mut starts = Vec::new();
    // Whether a name may end at each byte offset.
    let mut ends = vec![false; text.len() + 1];
    for (k, &(i, c)) in chars.iter().enumerate() {
        if k == 0 || !word(chars[k - 1].1) {
            starts.push(i);
        }
        // An end before `c`: not a word's character, nor a '-' before a digit.
        let id_goes_on = c == '-' && chars.get(k + 1).is_some_and(|(_, d)| d.is_ascii_digit());
        if k > 0 && !word(c) && !id_goes_on {
            ends[i] = true;
        }
    }
    if let Some(last) = ends.last_mut() {
        *last = !text.is_empty();
    }
    let mut out = Vec::new();
    for s in starts {
        for &len in lengths {
            let e = s + len;
            if len > 0 && ends.get(e).copied().unwrap_or(false) {
                out.push(&text[s..e]);
            }
        }
    }
    out
}

/// The commits the tasks record, to ask whether one is recorded: hashes match by prefix either
/// way (a short hash and its full form), as [`super::lifecycle::has_commit`] matches them.
pub struct Hashes(BTreeSet<String>);

impl Hashes {
    pub fn of(state: &State) -> Hashes {
        let mut set = BTreeSet::new();
        for t in state.tasks.values() {
            for c in t.commits() {
                if !c.hash.is_empty() && !set.contains(c.hash.as_str()) {
                    set.insert(c.hash.clone());
                }
            }
        }
        Hashes(set)
    }

    /// Whether a task records `hash`: a recorded hash it begins, or one that begins it.
    pub fn has(&self, hash: &str) -> bool {
        let longer = self
            .0
            .range::<str, _>((Bound::Included(hash), Bound::Unbounded))
            .next()
            .is_some_and(|a| a.starts_with(hash));
        longer
            || hash
                .char_indices()
                .map(|(i, _)| &hash[..i])
                .skip(1)
                .chain(std::iter::once(hash))
                .any(|p| self.0.contains(p))
    }

    /// Counts `hash` as recorded.
    pub fn add(&mut self, hash: &str) {
        if !hash.is_empty() {
            self.0.insert(hash.to_string());
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::layouts::execute::lifecycle::has_commit;
    use crate::layouts::execute::model::{CommitRecord, Slot, Task};

    const IDS: &[&str] = &[
        "L2-003", "L2-0031", "L2", "003", "a_b", "1-1", "1-1-1", "x.y", "ü1", "T1",
    ];
    const BRANCHES: &[&str] = &["", "b", "worktree-L2-003", "L2-003", "feature/x", "1-1"];
    const HASHES: &[&str] = &["abc1234", "abc12", "abc1234ff", "", "def", "de", "a"];
    const BITS: &[&str] = &[
        " ",
        "-",
        "(",
        "): ",
        "'",
        "_",
        "-1",
        "ü",
        "x",
        "worktree-",
        "Merge branch '",
        "/",
    ];

    fn state() -> impl Strategy<Value = State> {
        let task = (
            prop::sample::select(IDS),
            prop::sample::select(BRANCHES),
            prop::collection::vec(prop::sample::select(HASHES), 0..3),
        );
        prop::collection::vec(task, 0..8).prop_map(|tasks| {
            let mut s = State::default();
            for (id, branch, hashes) in tasks {
                let t = Task {
                    branch: Slot::Is(branch.to_string()),
                    commits: Some(
                        hashes
                            .iter()
                            .map(|h| CommitRecord {
                                hash: h.to_string(),
                                ..Default::default()
                            })
                            .collect(),
                    ),
                    ..Default::default()
                };
                s.tasks.insert(id.to_string(), t);
            }
            s
        })
    }

    /// Texts made of ids, branch names and the characters around them in commit subjects.
    fn text() -> impl Strategy<Value = String> {
        let all: Vec<&'static str> = IDS.iter().chain(BRANCHES).chain(BITS).copied().collect();
        prop::collection::vec(prop::sample::select(all), 0..7).prop_map(|parts| parts.concat())
    }

    /// The scans the index answers for.
    fn task_of_branch_scan(state: &State, branch: &str) -> Option<String> {
        state
            .tasks
            .iter()
            .find(|(_, t)| t.branch.non_empty() == Some(branch))
            .map(|(id, _)| id)
            .or_else(|| {
                let id = branch.strip_prefix("worktree-")?;
                state.tasks.keys().find(|x| *x == id)
            })
            .map(str::to_string)
    }

    fn named_task_scan(state: &State, text: &str) -> Option<String> {
        let named: Vec<&str> = state.tasks.keys().filter(|id| mentions(text, id)).collect();
        match named.as_slice() {
            [one] => Some(one.to_string()),
            _ => None,
        }
    }

    fn tasks_in_scan(state: &State, text: &str) -> Vec<String> {
        state
            .tasks
            .iter()
            .filter(|(id, t)| {
                let worktree = format!("worktree-{id}");
                let found = [Some(*id), Some(worktree.as_str()), t.branch.non_empty()]
                    .into_iter()
                    .flatten()
                    .any(|n| mentions(text, n));
                found
            })
            .map(|(id, _)| id.to_string())
            .collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]

        #[test]
        fn the_names_answer_as_the_scans(state in state(), texts in prop::collection::vec(text(), 1..4)) {
            let names = Names::of(&state);
            for b in BRANCHES.iter().chain(IDS).map(|s| s.to_string()).chain(texts.iter().cloned()) {
                prop_assert_eq!(
                    names.task_of_branch(&state, &b).map(|id| id.to_string()),
                    task_of_branch_scan(&state, &b),
                    "branch {:?}", b
                );
            }
            for t in &texts {
                prop_assert_eq!(
                    names.named_task(&state, t).map(|id| id.to_string()),
                    named_task_scan(&state, t),
                    "text {:?}", t
                );
                let mut got: Vec<String> = names.tasks_in(&state, t).iter().map(|id| id.to_string()).collect();
                got.sort();
                let mut want = tasks_in_scan(&state, t);
                want.sort();
                prop_assert_eq!(got, want, "text {:?}", t);
            }
        }

        #[test]
        fn the_hashes_answer_as_the_scan(state in state(), extra in prop::collection::vec(prop::sample::select(HASHES), 0..3)) {
            let mut hashes = Hashes::of(&state);
            let mut state = state;
            for h in HASHES.iter().chain(["a", "abc1234ffe", "ab", "x"].iter()) {
                prop_assert_eq!(hashes.has(h), has_commit(&state, h), "hash {:?}", h);
            }
            // Added as git recovery adds them.
            let first = state.tasks.keys().next().map(str::to_string);
            if let Some(id) = first {
                for h in extra {
                    if let Some(t) = state.tasks.get_mut(&id) {
                        t.commits.get_or_insert_with(Vec::new).push(CommitRecord { hash: h.to_string(), ..Default::default() });
                    }
                    hashes.add(h);
                }
            }
            for h in HASHES.iter().chain(["a", "abc1234ffe", "ab", "x"].iter()) {
                prop_assert_eq!(hashes.has(h), has_commit(&state, h), "hash {:?}", h);
            }
        }
    }
}
