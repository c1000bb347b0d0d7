//! The op log on the remote: commits on `refs/taskhook/ops`, read and written with git's
//! plumbing through the one bounded runner ([`crate::store::git`]), never in the work tree
//! nor on a branch.
//!
//! Each commit's tree holds
//!
//! - `taskhook.json`: the index: `{"format": "taskhook-ops/1", "seq": N, "stores": {NAME:
//!   {"store": {…}, "snapshot": OP_ID, "at": SEQ}}}` (N ops in the log so far; each store's
//!   latest snapshot and its place in the log);
//! - `ops.jsonl`: the ops this commit added, in order (a `publish` op as a stub whose `fields`
//!   name its file: `{"snapshot": "snapshots/NAME.json"}`);
//! - `snapshots/NAME.json`: each store's latest `publish` op in full, carried from commit to
//!   commit (an unchanged snapshot is one shared blob).
//!
//! So a reader needs only the tip's index and snapshots and the commits since the oldest
//! snapshot (compaction keeps that window short), never the whole history; older commits stay
//! reachable for audit. The remote ref is fetched into `refs/taskhook/remote/ops`; a push is a
//! plain (non-forced) push of a commit built on the tip just fetched, so it lands only if the
//! remote ref is still that tip: a compare-and-swap.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::{Deserialize, Serialize};
use serde_json::{json, Map};

use super::op::{Op, StoreKey, MAX_OP_BYTES};
use crate::env::Env;
use crate::store::git::{Git, Limits, Output};

/// The remote's ref.
pub const REF: &str = "refs/taskhook/ops";
/// Where this clone keeps what it last fetched of it.
pub const TRACK: &str = "refs/taskhook/remote/ops";
/// The index's format marker.
pub const FORMAT: &str = "taskhook-ops/1";
/// Most commits one read walks.
const MAX_COMMITS: usize = 200_000;

/// What went wrong talking to git, in one line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    /// The remote could not be reached (or did not answer in time).
    Unreachable(String),
    /// Anything else git refused.
    Failed(String),
}

impl Problem {
    pub fn line(&self) -> &str {
        match self {
            Problem::Unreachable(s) | Problem::Failed(s) => s,
        }
    }
}

/// One store in the index.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    pub store: StoreKey,
    /// The `publish` op the store stands on.
    pub snapshot: String,
    /// Its place in the log (1-based).
    pub at: u64,
}

/// `taskhook.json` of a commit.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Index {
    pub format: String,
    pub seq: u64,
    #[serde(default)]
    pub stores: BTreeMap<String, Entry>,
}

/// The log as read from a tip: the window of ops every store needs, in push order.
#[derive(Debug, Clone, Default)]
pub struct Log {
    /// The remote ref's commit.
    pub tip: Option<String>,
    /// The newest commit that is taskhook's (the tip, unless someone put others on top).
    pub ours: Option<String>,
    pub index: Index,
    /// Ops in push order; each store's latest snapshot in full, older `publish` ops as stubs.
    pub ops: Vec<Op>,
    /// What was skipped, one line each.
    pub skipped: Vec<String>,
}

/// How a push ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pushed {
    Won,
    /// Someone else's push got there first: fetch, re-apply, retry.
    Lost(String),
}

/// The project's remote, for one bounded sync.
pub struct Remote<'a> {
    pub root: &'a Path,
    pub name: &'a str,
    pub deadline: Instant,
    pub env: &'a Env,
}

fn short(sha: &str) -> &str {
    sha.get(..8).unwrap_or(sha)
}

/// A URL with any `user:password@` taken out, for messages.
pub fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let (authority, path) = match rest.split_once('/') {
        Some((a, p)) => (a, format!("/{p}")),
        None => (rest, String::new()),
    };
    match authority.rsplit_once('@') {
        // A password (or a token in its place) goes; a bare user name stays.
        Some((user, host)) if user.contains(':') => format!("{scheme}://{host}{path}"),
        _ => url.to_string(),
    }
}

impl Remote<'_> {
    fn git(&self) -> Git<'_> {
        Git::until(self.root, self.deadline, self.env)
    }

    fn run(&self, args: &[&str], stdin: Option<&[u8]>) -> Result<Output, Problem> {
        self.git()
            .run(args, stdin)
            .map_err(|e| Problem::Failed(e.one_line()))
    }

    fn ok(&self, args: &[&str], stdin: Option<&[u8]>) -> Result<String, Problem> {
        let out = self.run(args, stdin)?;
        if out.ok() {
            Ok(out.text())
        } else {
            Err(Problem::Failed(format!(
                "git {} failed: {}",
                args.first().copied().unwrap_or(""),
                out.reason()
            )))
        }
    }

    /// How messages name the remote: `origin (/srv/repo.git)`.
    pub fn label(&self) -> String {
        match self.run(&["remote", "get-url", self.name], None) {
            Ok(out) if out.ok() => format!("{} ({})", self.name, redact(&out.text())),
            _ => self.name.to_string(),
        }
    }

    /// Whether the remote is configured in this repository.
    pub fn exists(&self) -> bool {
        self.run(&["remote", "get-url", self.name], None)
            .is_ok_and(|o| o.ok())
    }

    /// The commit this clone last fetched.
    pub fn tracked(&self) -> Option<String> {
        let out = self
            .run(
                &[
                    "rev-parse",
                    "-q",
                    "--verify",
                    &format!("{TRACK}^{{commit}}"),
                ],
                None,
            )
            .ok()?;
        out.ok().then(|| out.text())
    }

    /// Fetches the remote's ref into [`TRACK`]; returns its commit (`None`: the remote has no
    /// log yet).
    pub fn fetch(&self) -> Result<Option<String>, Problem> {
        let spec = format!("+{REF}:{TRACK}");
        let out = self.run(
            &[
                "-c",
                "gc.auto=0",
                "fetch",
                "--quiet",
                "--no-tags",
                "--no-write-fetch-head",
                "--no-recurse-submodules",
                self.name,
                &spec,
            ],
            None,
        )?;
        if out.ok() {
            return Ok(self.tracked());
        }
        if out.stderr.contains("couldn't find remote ref") {
            // No log there (yet, or any more): forget what was fetched before.
            if self.tracked().is_some() {
                let _ = self.run(&["update-ref", "-d", TRACK], None);
            }
            return Ok(None);
        }
        Err(Problem::Unreachable(format!(
            "cannot fetch from {}: {}",
            self.label(),
            out.reason()
        )))
    }

    /// Pushes `commit` to the remote's ref, not forced: it lands only if the remote ref is
    /// still the commit it was built on.
    pub fn push(&self, commit: &str) -> Result<Pushed, Problem> {
        let spec = format!("{commit}:{REF}");
        let out = self.run(
            &[
                "push",
                "--porcelain",
                "--no-verify",
                "--no-recurse-submodules",
                self.name,
                &spec,
            ],
            None,
        )?;
        if out.ok() {
            return Ok(Pushed::Won);
        }
        let all = format!("{}\n{}", String::from_utf8_lossy(&out.stdout), out.stderr);
        const RACE: &[&str] = &[
            "non-fast-forward",
            "fetch first",
            "stale info",
            "cannot lock ref",
            "failed to update ref",
            "incorrect old value",
            "[rejected]",
        ];
        if !out.timed_out && RACE.iter().any(|w| all.contains(w)) {
            let why = all
                .lines()
                .find(|l| RACE.iter().any(|w| l.contains(w)))
                .unwrap_or("rejected")
                .trim()
                .to_string();
            return Ok(Pushed::Lost(crate::error::one_line(&why)));
        }
        let reason = if out.timed_out {
            "timed out".to_string()
        } else {
            out.reason()
        };
        Err(Problem::Unreachable(format!(
            "cannot push to {}: {reason}",
            self.label()
        )))
    }

    /// Moves [`TRACK`] to `new` (it was `old`).
    pub fn set_tracked(&self, new: &str) -> Result<(), Problem> {
        self.ok(&["update-ref", TRACK, new], None).map(|_| ())
    }

    /// Whether `a` is `b` or one of its ancestors.
    pub fn is_ancestor(&self, a: &str, b: &str) -> bool {
        self.run(&["merge-base", "--is-ancestor", a, b], None)
            .is_ok_and(|o| o.ok())
    }

    /// Whether this clone has the commit `sha`.
    pub fn has_commit(&self, sha: &str) -> bool {
        self.run(&["cat-file", "-e", &format!("{sha}^{{commit}}")], None)
            .is_ok_and(|o| o.ok())
    }

    /// First-parent commits from `tip` back (newest first), at most `max`, stopping before
    /// `stop` (and its ancestors) when given.
    fn commits(&self, tip: &str, stop: Option<&str>, max: usize) -> Result<Vec<String>, Problem> {
        let count = format!("--max-count={max}");
        let mut args = vec!["rev-list", "--first-parent", &count, tip];
        let not;
        if let Some(s) = stop {
            not = format!("^{s}");
            args.push(&not);
        }
        Ok(self
            .ok(&args, None)?
            .lines()
            .map(str::to_string)
            .filter(|l| !l.is_empty())
            .collect())
    }

    /// Reads objects by name (`<commit>:ops.jsonl`) in one `git cat-file --batch`; `None` for
    /// one that is missing.
    fn cat(&self, specs: &[String]) -> Result<Vec<Option<Vec<u8>>>, Problem> {
        if specs.is_empty() {
            return Ok(Vec::new());
        }
        let input: String = specs.iter().map(|s| format!("{s}\n")).collect();
        let out = self
            .git()
            .limits(Limits {
                stdout: 256 << 20,
                stderr: 64 << 10,
            })
            .run(&["cat-file", "--batch"], Some(input.as_bytes()))
            .map_err(|e| Problem::Failed(e.one_line()))?;
        if !out.ok() || out.truncated {
            return Err(Problem::Failed(format!(
                "git cat-file failed: {}",
                if out.truncated {
                    "the log is too large to read".to_string()
                } else {
                    out.reason()
                }
            )));
        }
        let bytes = &out.stdout;
        let mut pos = 0usize;
        let mut found = Vec::with_capacity(specs.len());
        for _ in specs {
            let Some(nl) = bytes[pos..].iter().position(|b| *b == b'\n') else {
                found.push(None);
                continue;
            };
            let header = String::from_utf8_lossy(&bytes[pos..pos + nl]).into_owned();
            pos += nl + 1;
            let parts: Vec<&str> = header.split(' ').collect();
            match parts[..] {
                [_, kind, size] if kind != "missing" => {
                    let size: usize = size.parse().unwrap_or(0);
                    let end = (pos + size).min(bytes.len());
                    found.push(Some(bytes[pos..end].to_vec()));
                    pos = (end + 1).min(bytes.len());
                }
                _ => found.push(None),
            }
        }
        Ok(found)
    }

    /// Reads the log from `tip`: the newest commit of ours, its index and snapshots, and the
    /// ops of every commit back to the oldest snapshot.
    pub fn read(&self, tip: Option<&str>) -> Result<Log, Problem> {
        let mut log = Log {
            tip: tip.map(str::to_string),
            ..Log::default()
        };
        let Some(tip) = tip else {
            return Ok(log);
        };
        // The first commits, to find the newest of ours and its index.
        let mut max = 64usize;
        let mut commits = self.commits(tip, None, max)?;
        let indexes = self.cat(
            &commits
                .iter()
                .map(|c| format!("{c}:taskhook.json"))
                .collect::<Vec<_>>(),
        )?;
        let mut ours_at = None;
        for (i, raw) in indexes.iter().enumerate() {
            if let Some(ix) = raw.as_deref().and_then(parse_index) {
                ours_at = Some((i, ix));
                break;
            }
        }
        let Some((first, index)) = ours_at else {
            for c in &commits {
                log.skipped.push(format!(
                    "commit {} on {REF} is not taskhook's (no {FORMAT} index): skipped",
                    short(c)
                ));
            }
            return Ok(log);
        };
        for c in &commits[..first] {
            log.skipped.push(format!(
                "commit {} on {REF} is not taskhook's (no {FORMAT} index): skipped",
                short(c)
            ));
        }
        let ours = commits[first].clone();
        // The window: back to the oldest snapshot any store stands on.
        let oldest = index.stores.values().map(|e| e.at).min().unwrap_or(1);
        // Each commit of ours adds one op at least; a little more for commits that are not.
        let need = usize::try_from(index.seq.saturating_sub(oldest) + 1)
            .unwrap_or(MAX_COMMITS)
            .saturating_add(first + 64)
            .min(MAX_COMMITS);
        if need > max {
            max = need;
            commits = self.commits(tip, None, max)?;
        }
        let window: Vec<String> = commits[first..commits.len().min(need)].to_vec();
        let mut specs = Vec::new();
        for c in &window {
            specs.push(format!("{c}:taskhook.json"));
            specs.push(format!("{c}:ops.jsonl"));
        }
        for name in index.stores.keys() {
            specs.push(format!("{ours}:snapshots/{name}.json"));
        }
        let got = self.cat(&specs)?;
        let mut snapshots: BTreeMap<String, Op> = BTreeMap::new();
        for (name, raw) in index.stores.keys().zip(&got[window.len() * 2..]) {
            match raw
                .as_deref()
                .map(|b| Op::parse(&String::from_utf8_lossy(b)))
            {
                Some(Ok(op)) if op.kind == "publish" => {
                    snapshots.insert(op.id.clone(), op);
                }
                Some(Ok(_)) | None => log.skipped.push(format!(
                    "the snapshot of {name} is missing from commit {}: its store cannot be rebuilt",
                    short(&ours)
                )),
                Some(Err(e)) => log.skipped.push(format!("the snapshot of {name}: {e}")),
            }
        }
        // Oldest first.
        let mut batches: Vec<(String, Vec<Op>)> = Vec::new();
        let mut reached = false;
        for (i, c) in window.iter().enumerate() {
            if reached {
                break;
            }
            let ix = got[i * 2].as_deref().and_then(parse_index);
            let Some(ix) = ix else {
                log.skipped.push(format!(
                    "commit {} on {REF} is not taskhook's (no {FORMAT} index): skipped",
                    short(c)
                ));
                continue;
            };
            let text = got[i * 2 + 1]
                .as_deref()
                .map(|b| String::from_utf8_lossy(b).into_owned())
                .unwrap_or_default();
            let (ops, bad) = parse_batch(&text, c);
            log.skipped.extend(bad);
            let start = ix.seq.saturating_sub(ops.len() as u64) + 1;
            reached = start <= oldest;
            batches.push((c.clone(), ops));
        }
        batches.reverse();
        let mut seen = std::collections::HashSet::new();
        for (_, ops) in batches {
            for op in ops {
                if !seen.insert(op.id.clone()) {
                    continue;
                }
                match snapshots.remove(&op.id) {
                    Some(full) => log.ops.push(full),
                    None => log.ops.push(op),
                }
            }
        }
        // A snapshot whose op lies before the window still opens its store.
        for (_, op) in snapshots {
            if seen.insert(op.id.clone()) {
                log.ops.insert(0, op);
            }
        }
        log.ours = Some(ours);
        log.index = index;
        Ok(log)
    }

    /// The ops of the commits `old` has and `new` does not (a remote ref rewound), oldest
    /// first, each `publish` in full when its commit holds it.
    pub fn lost_between(&self, new: Option<&str>, old: &str) -> Result<Vec<Op>, Problem> {
        let commits = self.commits(old, new, MAX_COMMITS)?;
        let mut specs = Vec::new();
        for c in &commits {
            specs.push(format!("{c}:ops.jsonl"));
        }
        let got = self.cat(&specs)?;
        let mut out = Vec::new();
        let mut stubs = Vec::new();
        for (c, raw) in commits.iter().zip(&got).rev() {
            let text = raw
                .as_deref()
                .map(|b| String::from_utf8_lossy(b).into_owned())
                .unwrap_or_default();
            for op in parse_batch(&text, c).0 {
                if op.kind == "publish" {
                    stubs.push((c.clone(), out.len(), op.store.name(), op.id.clone()));
                }
                out.push(op);
            }
        }
        let specs: Vec<String> = stubs
            .iter()
            .map(|(c, _, name, _)| format!("{c}:snapshots/{name}.json"))
            .collect();
        let full = self.cat(&specs)?;
        for ((_, i, _, id), raw) in stubs.iter().zip(full) {
            if let Some(Ok(op)) = raw.map(|b| Op::parse(&String::from_utf8_lossy(&b))) {
                if &op.id == id {
                    out[*i] = op;
                }
            }
        }
        Ok(out)
    }

    /// Writes a commit holding `batch` on top of `parent` (whose newest commit of ours is
    /// `ours`, with index `index`): blobs, trees and the commit with `hash-object`, `mktree`
    /// and `commit-tree`. Touches no ref, no index, no work tree.
    pub fn build(
        &self,
        parent: Option<&str>,
        ours: Option<&str>,
        index: &Index,
        batch: &[Op],
        who: &str,
    ) -> Result<(String, Index), Problem> {
        let mut next = index.clone();
        next.format = FORMAT.into();
        let mut lines = String::new();
        let mut snapshots: BTreeMap<String, &Op> = BTreeMap::new();
        for op in batch {
            next.seq += 1;
            if op.kind == "publish" {
                let name = op.store.name();
                next.stores.insert(
                    name.clone(),
                    Entry {
                        store: op.store.clone(),
                        snapshot: op.id.clone(),
                        at: next.seq,
                    },
                );
                let mut stub = op.clone();
                stub.fields = Map::new();
                stub.fields
                    .insert("snapshot".into(), json!(format!("snapshots/{name}.json")));
                lines.push_str(&stub.line());
                snapshots.insert(name, op);
            } else {
                lines.push_str(&op.line());
            }
            lines.push('\n');
        }
        let index_bytes = serde_json::to_vec_pretty(&next).unwrap_or_default();
        let index_blob = self.blob(&index_bytes)?;
        let ops_blob = self.blob(lines.as_bytes())?;
        // The snapshots tree: the parent's, with this batch's new snapshots.
        let mut entries: BTreeMap<String, String> = BTreeMap::new();
        if let Some(o) = ours {
            let listed = self.run(&["ls-tree", &format!("{o}:snapshots")], None)?;
            if listed.ok() {
                for line in listed.text().lines() {
                    if let Some((meta, name)) = line.split_once('\t') {
                        entries.insert(name.to_string(), meta.to_string());
                    }
                }
            }
        }
        for (name, op) in &snapshots {
            let sha = self.blob(op.line().as_bytes())?;
            entries.insert(format!("{name}.json"), format!("100644 blob {sha}"));
        }
        let mut root =
            format!("100644 blob {index_blob}\ttaskhook.json\n100644 blob {ops_blob}\tops.jsonl\n");
        if !entries.is_empty() {
            let listing: String = entries
                .iter()
                .map(|(name, meta)| format!("{meta}\t{name}\n"))
                .collect();
            let tree = self.ok(&["mktree"], Some(listing.as_bytes()))?;
            root.push_str(&format!("040000 tree {tree}\tsnapshots\n"));
        }
        let tree = self.ok(&["mktree"], Some(root.as_bytes()))?;
        let kinds = summary(batch);
        let message = format!("taskhook: {} op(s) from {who}: {kinds}", batch.len());
        let mut args = vec!["commit-tree", tree.as_str(), "-m", message.as_str()];
        if let Some(p) = parent {
            args.push("-p");
            args.push(p);
        }
        let name = OsStr::new("taskhook");
        let email = OsStr::new("taskhook@localhost");
        let out = self
            .git()
            .env("GIT_AUTHOR_NAME", name)
            .env("GIT_AUTHOR_EMAIL", email)
            .env("GIT_COMMITTER_NAME", name)
            .env("GIT_COMMITTER_EMAIL", email)
            .run(&args, None)
            .map_err(|e| Problem::Failed(e.one_line()))?;
        if !out.ok() {
            return Err(Problem::Failed(format!(
                "git commit-tree failed: {}",
                out.reason()
            )));
        }
        Ok((out.text(), next))
    }

    fn blob(&self, bytes: &[u8]) -> Result<String, Problem> {
        self.ok(&["hash-object", "-w", "--stdin"], Some(bytes))
    }

    /// Whether `dir` is inside a git work tree, and its top folder.
    pub fn toplevel(&self) -> Option<PathBuf> {
        let out = self.run(&["rev-parse", "--show-toplevel"], None).ok()?;
        out.ok().then(|| PathBuf::from(out.text()))
    }

    /// Which of `paths` (relative to the project) git tracks in the work tree.
    pub fn tracked_paths(&self, paths: &[String]) -> Vec<String> {
        if paths.is_empty() {
            return Vec::new();
        }
        let mut args = vec!["ls-files", "-z", "--"];
        args.extend(paths.iter().map(String::as_str));
        match self.run(&args, None) {
            Ok(out) if out.ok() => String::from_utf8_lossy(&out.stdout)
                .split('\0')
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect(),
            _ => Vec::new(),
        }
    }

    /// Whether the remote holds a log, asked without fetching it (`git ls-remote`).
    pub fn has_log(&self) -> Result<Option<String>, Problem> {
        let out = self.run(&["ls-remote", "--refs", self.name, REF], None)?;
        if !out.ok() {
            return Err(Problem::Unreachable(format!(
                "cannot reach {}: {}",
                self.label(),
                out.reason()
            )));
        }
        Ok(out
            .text()
            .lines()
            .find(|l| l.ends_with(REF))
            .and_then(|l| l.split_whitespace().next())
            .map(str::to_string))
    }
}

/// `publish 1, done 3`: what a batch holds, for the commit message.
fn summary(batch: &[Op]) -> String {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for op in batch {
        *counts.entry(op.kind.as_str()).or_default() += 1;
    }
    counts
        .iter()
        .map(|(k, n)| format!("{k} {n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn parse_index(bytes: &[u8]) -> Option<Index> {
    let ix: Index = serde_json::from_slice(bytes).ok()?;
    (ix.format == FORMAT).then_some(ix)
}

/// The ops of one commit's `ops.jsonl`, and a line for each that does not parse.
fn parse_batch(text: &str, commit: &str) -> (Vec<Op>, Vec<String>) {
    let mut ops = Vec::new();
    let mut bad = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        if line.len() > MAX_OP_BYTES {
            bad.push(format!(
                "op line {} of commit {} is too long: skipped",
                n + 1,
                short(commit)
            ));
            continue;
        }
        match Op::parse(line) {
            Ok(op) => ops.push(op),
            Err(e) => bad.push(format!(
                "op line {} of commit {}: {e}: skipped",
                n + 1,
                short(commit)
            )),
        }
    }
    (ops, bad)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_lose_their_credentials() {
        assert_eq!(
            redact("https://me:secret@example.com/r.git"),
            "https://example.com/r.git"
        );
        assert_eq!(redact("/srv/r.git"), "/srv/r.git");
        assert_eq!(redact("ssh://host/r.git"), "ssh://host/r.git");
        assert_eq!(redact("ssh://git@host/r.git"), "ssh://git@host/r.git");
    }
}
