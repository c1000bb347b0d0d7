//! What git knows about a run (the seed's recovery steps 1–2: `git worktree list`, `git branch
//! | grep worktree-`, `git log --all --oneline | grep "L2-"`), read by running git itself.
//!
//! Every call goes through the one git runner ([`crate::store::git`]), bounded: at most
//! [`GIT_TIMEOUT`] (the process group is killed after that), at most [`GIT_OUTPUT_CAP`] bytes of
//! output kept, read-only commands only, with optional locks off (`GIT_OPTIONAL_LOCKS=0`), no
//! prompts, no pager and no fsmonitor hook. A git that is missing
//! or fails gives nothing, never an error: recovery then reports what it could not check.

use std::path::{Path, PathBuf};
use std::time::Duration;

/// Longest a git call may take.
pub const GIT_TIMEOUT: Duration = Duration::from_secs(10);
/// Most output kept from one git call.
pub const GIT_OUTPUT_CAP: usize = 8 * 1024 * 1024;
/// Most commits read from the log.
const LOG_LIMIT: &str = "5000";
/// Most task branches whose own commits are read (one `git log` each).
const MAX_BRANCH_LOGS: usize = 200;

/// Runs `git -C root ARGS` ([`crate::store::git::read_only`]); the output when it succeeded.
pub fn run(root: &Path, args: &[&str]) -> Option<String> {
    crate::store::git::read_only(root, GIT_TIMEOUT, GIT_OUTPUT_CAP, args, None)
        .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
}

/// One worktree git lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Worktree {
    pub path: String,
    pub branch: Option<String>,
}

/// One commit from the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Commit {
    /// Abbreviated, as the seed writes them.
    pub hash: Box<str>,
    /// Committer time, RFC 3339.
    pub time: Box<str>,
    pub subject: Box<str>,
    /// The `worktree-*` (or task) branch it was found on, for commits not on HEAD yet.
    pub branch: Option<Box<str>>,
}

/// One local branch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Branch {
    pub name: String,
    /// Committer time of its tip, RFC 3339.
    pub tip_time: String,
    /// Whether its tip is in HEAD's history and it has moved since it was created (its reflog
    /// shows more than its creation), i.e. it was merged (a fast-forward included).
    pub merged: bool,
    /// When it was merged, for a merged branch of an unfinished task: the time of the merge
    /// commit on HEAD's first-parent line that brought its tip in, or for a fast-forward (no
    /// merge commit) its tip's own time. RFC 3339.
    pub merged_at: Option<String>,
}

/// A merge commit on HEAD's first-parent line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Merge {
    pub time: String,
    pub subject: String,
}

/// What git shows about a run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct View {
    /// The repository's main worktree (its top level).
    pub root: PathBuf,
    pub worktrees: Vec<Worktree>,
    pub branches: Vec<Branch>,
    /// Every commit (no merges), newest first.
    pub commits: Vec<Commit>,
    pub merges: Vec<Merge>,
    /// What could not be read (git missing, a command that failed).
    pub problems: Vec<String>,
}

impl View {
    /// The branch named `name`, when git has it.
    pub fn branch(&self, name: &str) -> Option<&Branch> {
        self.branches.iter().find(|b| b.name == name)
    }

    /// The worktree at `path` (exactly, or ending in the same two components, so a state
    /// written on another machine still matches `.worktrees/L2-003`).
    pub fn worktree_at(&self, path: &str) -> Option<&Worktree> {
        fn tail(p: &str) -> Vec<&str> {
            p.trim_end_matches('/').rsplit('/').take(2).collect()
        }
        self.worktrees
            .iter()
            .find(|w| w.path == path || (tail(&w.path) == tail(path) && tail(path).len() == 2))
    }
}

/// `git worktree list --porcelain`, parsed (the main worktree first).
pub fn worktrees(root: &Path) -> Option<Vec<Worktree>> {
    let text = run(root, &["worktree", "list", "--porcelain"])?;
    let mut out: Vec<Worktree> = Vec::new();
    for line in text.lines() {
        if let Some(p) = line.strip_prefix("worktree ") {
            out.push(Worktree {
                path: p.to_string(),
                branch: None,
            });
        } else if let Some(b) = line.strip_prefix("branch refs/heads/") {
            if let Some(w) = out.last_mut() {
                w.branch = Some(b.to_string());
            }
        }
    }
    Some(out)
}

/// Whether `refs/heads/NAME` exists.
pub fn has_branch(root: &Path, name: &str) -> bool {
    run(
        root,
        &["rev-parse", "--verify", "-q", &format!("refs/heads/{name}")],
    )
    .is_some()
}

/// The names of the local branches (`refs/heads/`); `None` when git cannot say.
pub fn branch_names(root: &Path) -> Option<Vec<String>> {
    let text = run(
        root,
        &["for-each-ref", "--format=%(refname:short)", "refs/heads/"],
    )?;
    Some(text.lines().map(str::to_string).collect())
}

fn split(line: &str, n: usize) -> Option<Vec<&str>> {
    let parts: Vec<&str> = line.splitn(n, '\u{1f}').collect();
    (parts.len() == n).then_some(parts)
}

/// When the branch whose tip is `tip` was merged into HEAD (see [`Branch::merged_at`]): the
/// oldest commit on HEAD's first-parent line that descends from the tip is the merge commit,
/// unless its first parent is the tip itself (a fast-forward: the tip's time).
fn merge_time(root: &Path, tip: &str, tip_time: &str) -> Option<String> {
    let text = run(
        root,
        &[
            "log",
            "--first-parent",
            "--ancestry-path",
            "--format=%H%x1f%P%x1f%cI",
            &format!("{tip}..HEAD"),
        ],
    )?;
    let Some(oldest) = text.lines().rev().find_map(|l| split(l, 3)) else {
        return Some(tip_time.to_string());
    };
    let first_parent = oldest[1].split(' ').next().unwrap_or("");
    Some(if first_parent == tip {
        tip_time.to_string()
    } else {
        oldest[2].to_string()
    })
}

/// Reads everything recovery needs. `recorded` tells the branches the state names, which may
/// not follow the `worktree-*` pattern; `unfinished` the branches of tasks not completed, whose
/// merge time is read when git shows them merged (asked of the state as needed, not listed:
/// issue 23).
pub fn view(
    root: &Path,
    recorded: &dyn Fn(&str) -> bool,
    unfinished: &dyn Fn(&str) -> bool,
) -> View {
    let mut v = View {
        root: root.to_path_buf(),
        ..Default::default()
    };
    match worktrees(root) {
        Some(w) => v.worktrees = w,
        None => {
            v.problems
                .push("git is not available here (`git worktree list` failed)".into());
            return v;
        }
    }
    let heads = run(
        root,
        &[
            "for-each-ref",
            "--format=%(refname:short)%1f%(objectname)%1f%(committerdate:iso-strict)",
            "refs/heads/",
        ],
    )
    .unwrap_or_default();
    let relevant = |name: &str| name.starts_with("worktree-") || recorded(name);
    let mut tips: Vec<(String, String, String)> = Vec::new();
    for line in heads.lines().take(10_000) {
        if let Some(p) = split(line, 3) {
            tips.push((p[0].to_string(), p[1].to_string(), p[2].to_string()));
        }
    }
    let ours: Vec<&(String, String, String)> = tips.iter().filter(|t| relevant(&t.0)).collect();
    let created = creations(root, &ours);
    let merged: Vec<String> = if ours.is_empty() {
        Vec::new()
    } else {
        run(
            root,
            &["branch", "--merged", "HEAD", "--format=%(refname:short)"],
        )
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
    };
    for (name, tip, time) in &tips {
        let moved = created.iter().any(|(b, c)| b == name && c != tip);
        let is_merged = relevant(name) && moved && merged.contains(name);
        v.branches.push(Branch {
            name: name.clone(),
            tip_time: time.clone(),
            merged: is_merged,
            merged_at: (is_merged && unfinished(name))
                .then(|| merge_time(root, tip, time))
                .flatten(),
        });
    }
    match run(
        root,
        &[
            "log",
            "--all",
            "--no-merges",
            "-n",
            LOG_LIMIT,
            "--format=%h%x1f%cI%x1f%s",
        ],
    ) {
        Some(text) => v.commits = parse_log(&text, false),
        None => v
            .problems
            .push("`git log --all` failed (no commits yet?)".into()),
    }
    // The commits of each task branch since it was created (merged or not), with the branch
    // they are on; branches whose creation git no longer knows: what HEAD lacks.
    let fmt = "--format=%h%x1f%cI%x1f%S%x1f%s";
    let with: Vec<&str> = ours
        .iter()
        .filter(|t| created.iter().any(|(b, _)| *b == t.0))
        .map(|t| t.0.as_str())
        .collect();
    let without: Vec<&str> = ours
        .iter()
        .filter(|t| !with.contains(&t.0.as_str()))
        .map(|t| t.0.as_str())
        .collect();
    // One log per branch: excluding every creation point at once would hide the commits of a
    // branch merged before another branch was created.
    let mut batches: Vec<Vec<String>> = created
        .iter()
        .filter(|(b, _)| with.contains(&b.as_str()))
        .take(MAX_BRANCH_LOGS)
        .map(|(b, c)| vec![format!("refs/heads/{b}"), "--not".into(), c.clone()])
        .collect();
    if !without.is_empty() {
        let mut a: Vec<String> = without.iter().map(|b| format!("refs/heads/{b}")).collect();
        a.extend(["--not".into(), "HEAD".into()]);
        batches.push(a);
    }
    for refs in batches {
        let mut args: Vec<&str> = vec!["log", "--no-merges", "-n", LOG_LIMIT, fmt];
        args.extend(refs.iter().map(String::as_str));
        for c in run(root, &args)
            .map(|t| parse_log(&t, true))
            .unwrap_or_default()
        {
            match v.commits.iter_mut().find(|x| x.hash == c.hash) {
                Some(x) => x.branch = c.branch,
                None => v.commits.push(c),
            }
        }
    }
    if let Some(text) = run(
        root,
        &[
            "log",
            "--merges",
            "--first-parent",
            "-n",
            "2000",
            "--format=%cI%x1f%s",
            "HEAD",
        ],
    ) {
        v.merges = text
            .lines()
            .filter_map(|l| split(l, 2))
            .map(|p| Merge {
                time: p[0].to_string(),
                subject: p[1].to_string(),
            })
            .collect();
    }
    v
}

/// Where each branch was created (the oldest entry of its reflog), in one `git log -g`.
fn creations(root: &Path, branches: &[&(String, String, String)]) -> Vec<(String, String)> {
    if branches.is_empty() {
        return Vec::new();
    }
    let mut args: Vec<String> = vec!["log".into(), "-g".into(), "--format=%H%x1f%gD".into()];
    args.extend(branches.iter().map(|b| format!("refs/heads/{}", b.0)));
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut out: Vec<(String, String, u64)> = Vec::new();
    for line in run(root, &refs).unwrap_or_default().lines() {
        let Some(p) = split(line, 2) else { continue };
        let Some((name, n)) = p[1].rsplit_once("@{") else {
            continue;
        };
        let name = name.strip_prefix("refs/heads/").unwrap_or(name).to_string();
        let Ok(n) = n.trim_end_matches('}').parse::<u64>() else {
            continue;
        };
        match out.iter_mut().find(|(b, _, _)| *b == name) {
            Some(e) if e.2 < n => {
                e.1 = p[0].to_string();
                e.2 = n;
            }
            Some(_) => {}
            None => out.push((name, p[0].to_string(), n)),
        }
    }
    out.into_iter().map(|(b, c, _)| (b, c)).collect()
}

/// `hash␟time␟subject` lines, or with `source` `hash␟time␟ref␟subject`.
fn parse_log(text: &str, source: bool) -> Vec<Commit> {
    let n = if source { 4 } else { 3 };
    text.lines()
        .filter_map(|l| split(l, n))
        .map(|p| {
            let (branch, subject) = if n == 4 {
                let r = p[2];
                let name = r.strip_prefix("refs/heads/").unwrap_or(r);
                (Some(name.into()), p[3])
            } else {
                (None, p[2])
            };
            Commit {
                hash: p[0].into(),
                time: p[1].into(),
                subject: subject.into(),
                branch,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worktrees_match_by_their_last_two_components() {
        let v = View {
            worktrees: vec![Worktree {
                path: "/tmp/x/proj/.worktrees/L2-003".into(),
                branch: Some("worktree-L2-003".into()),
            }],
            ..Default::default()
        };
        assert!(v
            .worktree_at("/home/user/projects/p/.worktrees/L2-003")
            .is_some());
        assert!(v.worktree_at("/home/user/.worktrees/L2-004").is_none());
        assert!(v.worktree_at("L2-003").is_none());
    }

    #[test]
    fn log_lines_parse() {
        let c = parse_log(
            "abc1234\u{1f}2026-01-01T10:00:00+01:00\u{1f}feat: L2-003 parser\n",
            false,
        );
        assert_eq!(&*c[0].hash, "abc1234");
        assert_eq!(&*c[0].subject, "feat: L2-003 parser");
        let c = parse_log(
            "def5678\u{1f}2026-01-01T10:00:00Z\u{1f}refs/heads/worktree-L2-003\u{1f}wip\n",
            true,
        );
        assert_eq!(c[0].branch.as_deref(), Some("worktree-L2-003"));
    }
}
