//! The stores of `cargo bench --bench scale`: each layout in its own seed's format at `n` tasks,
//! shaped like a run in progress (about 40% done, a batch of tasks in progress, the rest
//! pending; dependencies, parents, layers, stops and escalations; history proportional to the
//! tasks done; for execute, the git history of its done tasks too: their commits and merges,
//! which its SessionStart reads). Deterministic: the same `n` gives the same bytes.
//!
//! Every store is written under a place `{place}/proj` (the project, a git repository) and
//! `{place}/home` (its `HOME`). The bench runs this in a child process of its own (the
//! harness stays small: a spawned child's peak memory starts at its parent's).

use std::fmt::Write as _;
use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::Path;
use std::process::Command;

use serde_json::{json, Map, Value};

/// The five layouts, in the order the bench runs them.
pub const LAYOUTS: [&str; 5] = ["projects", "execute", "cdd", "iterative", "claude-tasks"];

/// Share of the tasks done, in percent.
const DONE_PCT: usize = 40;

/// A generated store.
pub struct Gen {
    /// The store's folder, relative to the place (what the Python peer is given).
    pub root: String,
    /// Ids a subagent's DONE can complete, in the order the runs use them.
    pub done_ids: Vec<String>,
    /// Bytes of the files an event reads (state files and logs; not checkpoints or the
    /// seed 004 task files, which no event reads).
    pub bytes: u64,
}

struct Rng(u64);

impl Rng {
    fn new(n: usize) -> Self {
        Rng(0x9e37_79b9_7f4a_7c15 ^ (n as u64).wrapping_mul(0x2545_f491_4f6c_dd1d))
    }
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    /// True with `pct` percent.
    fn chance(&mut self, pct: u64) -> bool {
        self.next() % 100 < pct
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// A UTC time `minutes` after 2026-01-05T08:00:00Z.
fn ts(minutes: u64) -> String {
    let secs = 1_767_600_000 + minutes as i64 * 60;
    chrono::DateTime::from_timestamp(secs, 0)
        .unwrap()
        .format("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

fn hash7(rng: &mut Rng) -> String {
    format!("{:07x}", rng.next() & 0xfff_ffff)
}

/// A file written through a buffer, counting its bytes.
struct Out {
    w: BufWriter<File>,
    bytes: u64,
}

impl Out {
    fn create(path: &Path) -> Out {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        Out {
            w: BufWriter::with_capacity(1 << 16, File::create(path).unwrap()),
            bytes: 0,
        }
    }
    fn put(&mut self, b: &[u8]) {
        self.w.write_all(b).unwrap();
        self.bytes += b.len() as u64;
    }
    fn str(&mut self, s: &str) {
        self.put(s.as_bytes());
    }
    /// `v` pretty-printed (2 spaces) and indented by `indent` spaces after each newline.
    fn pretty(&mut self, v: &Value, indent: usize) {
        let pad = " ".repeat(indent);
        let text = serde_json::to_string_pretty(v).unwrap();
        let mut first = true;
        for line in text.split('\n') {
            if !first {
                self.str("\n");
                self.str(&pad);
            }
            first = false;
            self.str(line);
        }
    }
    fn done(mut self) -> u64 {
        self.w.flush().unwrap();
        self.bytes
    }
}

fn write(path: &Path, bytes: &[u8]) -> u64 {
    let mut o = Out::create(path);
    o.put(bytes);
    o.done()
}

/// Writes the store of `layout` with `n` tasks and `k` DONE candidates under `place`.
pub fn generate(layout: &str, n: usize, k: usize, place: &Path) -> Gen {
    let proj = place.join("proj");
    fs::create_dir_all(proj.join("src")).unwrap();
    fs::create_dir_all(place.join("home")).unwrap();
    fs::write(proj.join("src/main.rs"), "fn main() {}\n").unwrap();
    // A real repository (execute's recovery asks git); execute's commits its history.
    let git = Command::new("git")
        .args(["init", "-q", "-b", "main"])
        .current_dir(&proj)
        .status();
    if !git.is_ok_and(|s| s.success()) {
        fs::create_dir_all(proj.join(".git")).unwrap();
    }
    let mut rng = Rng::new(n);
    match layout {
        "projects" => projects(&proj, n, k, &mut rng),
        "execute" => execute(&proj, n, k, &mut rng),
        "cdd" => cdd(&proj, n, k, &mut rng),
        "iterative" => iterative(&proj, n, k, &mut rng),
        "claude-tasks" => claude_tasks(place, n, k, &mut rng),
        other => panic!("unknown layout {other}"),
    }
}

// ---- projects (seed 000) -------------------------------------------------------------------

const PRIORITIES: [&str; 4] = ["high", "medium", "low", "medium"];

struct PTask {
    id: String,
    level: &'static str,
    parent: Option<usize>,
    children: Vec<usize>,
    deps: Vec<usize>,
    status: &'static str,
    /// For leaves: the order of completion / start.
    leaf: Option<usize>,
    phase: String,
}

/// Epics of 100 tasks: the epic, 9 stories, 10 leaf tasks per story (the last story of a
/// truncated epic takes what is left). The first 40% of the leaves are COMPLETE (1 in 100
/// CANCELLED), the next `k` IN_PROGRESS, the rest PENDING (2 in 100 BLOCKED); a parent is
/// COMPLETE when its children are, IN_PROGRESS once one started.
fn projects(proj: &Path, n: usize, k: usize, rng: &mut Rng) -> Gen {
    let root = proj.join(".claude/projects/web");
    let mut t: Vec<PTask> = Vec::with_capacity(n);
    let mut leaves = 0;
    let mut e = 0;
    while t.len() < n {
        e += 1;
        let epic = t.len();
        let phase = format!("phase-{}", (e - 1) / 10 + 1);
        t.push(PTask {
            id: format!("E{e}"),
            level: "epic",
            parent: None,
            children: vec![],
            deps: vec![],
            status: "PENDING",
            leaf: None,
            phase: phase.clone(),
        });
        let mut prev_story: Option<usize> = None;
        for s in 1..=9 {
            if t.len() >= n {
                break;
            }
            let story = t.len();
            t[epic].children.push(story);
            let deps = match prev_story {
                Some(p) if rng.chance(30) => vec![p],
                _ => vec![],
            };
            t.push(PTask {
                id: format!("S{e}-{s}"),
                level: "story",
                parent: Some(epic),
                children: vec![],
                deps,
                status: "PENDING",
                leaf: None,
                phase: phase.clone(),
            });
            prev_story = Some(story);
            let mut prev: Option<usize> = None;
            for j in 1..=10 {
                if t.len() >= n {
                    break;
                }
                let i = t.len();
                t[story].children.push(i);
                let deps = match prev {
                    Some(p) if rng.chance(50) => vec![p],
                    _ => vec![],
                };
                t.push(PTask {
                    id: format!("T{e}-{s}-{j}"),
                    level: "task",
                    parent: Some(story),
                    children: vec![],
                    deps,
                    status: "PENDING",
                    leaf: Some(leaves),
                    phase: phase.clone(),
                });
                leaves += 1;
                prev = Some(i);
            }
        }
        // Some epics wait for the one before.
        if e > 1 && rng.chance(20) {
            let before = t[..epic].iter().rposition(|x| x.level == "epic").unwrap();
            t[epic].deps.push(before);
        }
    }
    // A story with no leaf (a truncated epic) is a leaf itself.
    for x in t.iter_mut() {
        if x.level == "story" && x.children.is_empty() {
            x.leaf = Some(leaves);
            leaves += 1;
        }
    }
    let done = leaves * DONE_PCT / 100;
    let mut done_ids = Vec::new();
    for x in t.iter_mut() {
        let Some(l) = x.leaf else { continue };
        x.status = if l < done {
            if l % 100 == 42 {
                "CANCELLED"
            } else {
                "COMPLETE"
            }
        } else if l < done + k {
            done_ids.push(x.id.clone());
            "IN_PROGRESS"
        } else if l % 50 == 7 {
            "BLOCKED"
        } else {
            "PENDING"
        };
    }
    // Parents, deepest first (stories before epics: they come after their epic).
    for i in (0..t.len()).rev() {
        if t[i].children.is_empty() {
            continue;
        }
        let st: Vec<&str> = t[i].children.iter().map(|&c| t[c].status).collect();
        t[i].status = if st.iter().all(|s| matches!(*s, "COMPLETE" | "CANCELLED"))
            && st.contains(&"COMPLETE")
        {
            "COMPLETE"
        } else if st.iter().any(|s| *s != "PENDING" && *s != "BLOCKED") {
            "IN_PROGRESS"
        } else {
            "PENDING"
        };
    }
    // Times: leaf l starts at 40 l minutes and takes 25–45.
    let start_of = |l: usize| 40 * l as u64;
    let took = |l: usize| 25 + (l as u64 * 7) % 21;
    let mut bytes = 0;
    // tasks.json
    let mut o = Out::create(&root.join("tasks.json"));
    o.str("{\n  \"tasks\": [");
    for (i, x) in t.iter().enumerate() {
        let started = match (x.leaf, x.status) {
            (Some(l), "COMPLETE" | "IN_PROGRESS") => json!(ts(start_of(l))),
            _ => Value::Null,
        };
        let finished = match (x.leaf, x.status) {
            (Some(l), "COMPLETE") => json!(ts(start_of(l) + took(l))),
            _ => Value::Null,
        };
        let actual = match (x.leaf, x.status) {
            (Some(l), "COMPLETE") => json!(took(l)),
            _ => Value::Null,
        };
        let task = json!({
            "id": x.id,
            "title": format!("{} {} of the web app", x.level, x.id),
            "description": format!("Implement {} and its tests; keep the public API stable.", x.id),
            "level": x.level,
            "status": x.status,
            "priority": PRIORITIES[i % 4],
            "phase": x.phase,
            "parent_id": x.parent.map(|p| t[p].id.clone()),
            "subtasks": x.children.iter().map(|&c| t[c].id.clone()).collect::<Vec<_>>(),
            "dependencies": x.deps.iter().map(|&d| t[d].id.clone()).collect::<Vec<_>>(),
            "estimate_minutes": 30,
            "actual_minutes": actual,
            "created_at": ts(i as u64 / 10),
            "started_at": started,
            "completed_at": finished,
            "blocked_reason": if x.status == "BLOCKED" { json!("waits for the vendor's API keys") } else { Value::Null },
        });
        o.str(if i == 0 { "\n    " } else { ",\n    " });
        o.pretty(&task, 4);
    }
    o.str("\n  ]\n}\n");
    let tasks_bytes = o.done();
    bytes += tasks_bytes;
    // progress/log.md: started and completed entries, parents' completions, a checkpoint
    // every 10 completions; then the starts of the tasks in progress.
    let mut log = Out::create(&root.join("progress/log.md"));
    log.str("# Progress log: web\n\n");
    let mut by_leaf: Vec<usize> = (0..t.len()).filter(|&i| t[i].leaf.is_some()).collect();
    by_leaf.sort_by_key(|&i| t[i].leaf);
    let mut completions = 0;
    let mut checkpoints = 0usize;
    let mut window: Vec<Value> = Vec::new();
    let (mut est_total, mut act_total) = (0u64, 0u64);
    let entry = |log: &mut Out,
                 at: String,
                 event: &str,
                 id: &str,
                 from: &str,
                 to: &str,
                 more: &[(&str, String)]| {
        let mut s = format!(
            "## {at} — {event}\n- Task: {id}\n- Previous status: {from}\n- New status: {to}\n"
        );
        for (k, v) in more {
            let _ = writeln!(s, "- {k}: {v}");
        }
        s.push('\n');
        log.str(&s);
    };
    for &i in &by_leaf {
        let l = t[i].leaf.unwrap();
        let x = &t[i];
        match x.status {
            "COMPLETE" => {
                entry(
                    &mut log,
                    ts(start_of(l)),
                    "TASK_STARTED",
                    &x.id,
                    "PENDING",
                    "IN_PROGRESS",
                    &[],
                );
                let end = ts(start_of(l) + took(l));
                entry(
                    &mut log,
                    end.clone(),
                    "TASK_COMPLETE",
                    &x.id,
                    "IN_PROGRESS",
                    "COMPLETE",
                    &[
                        ("actual_minutes", took(l).to_string()),
                        ("estimate_minutes", "30".into()),
                    ],
                );
                completions += 1;
                est_total += 30;
                act_total += took(l);
                window.push(json!({"task_id": x.id, "estimate_minutes": 30, "actual_minutes": took(l), "completed_at": end}));
                if window.len() > 10 {
                    window.remove(0);
                }
                // Parents completed by this one.
                let mut p = x.parent;
                let mut child = i;
                while let Some(pi) = p {
                    if t[pi].status != "COMPLETE" || *t[pi].children.last().unwrap() != child {
                        break;
                    }
                    entry(
                        &mut log,
                        end.clone(),
                        "TASK_COMPLETE",
                        &t[pi].id,
                        "IN_PROGRESS",
                        "COMPLETE",
                        &[("Detail", "all subtasks are COMPLETE".into())],
                    );
                    child = pi;
                    p = t[pi].parent;
                }
                if completions % 10 == 0 {
                    checkpoints += 1;
                    log.str(&format!(
                        "## {end} — CHECKPOINT_WRITTEN\n- Checkpoint: checkpoints/checkpoint-{checkpoints:03}.json\n- Reason: 10 task completions\n\n"
                    ));
                }
            }
            "CANCELLED" => {
                log.str(&format!(
                    "## {} — STATUS_CHANGED\n- Task: {}\n- Previous status: PENDING\n- New status: CANCELLED\n- Detail: set by hand\n\n",
                    ts(start_of(l)),
                    x.id
                ));
            }
            "IN_PROGRESS" => {
                entry(
                    &mut log,
                    ts(start_of(l)),
                    "TASK_STARTED",
                    &x.id,
                    "PENDING",
                    "IN_PROGRESS",
                    &[],
                );
            }
            _ => {}
        }
    }
    bytes += log.done();
    let ratio = |a: u64, e: u64| {
        if e == 0 {
            Value::Null
        } else {
            json!(a as f64 / e as f64)
        }
    };
    let (we, wa) = window.iter().fold((0, 0), |(e, a), w| {
        (
            e + w["estimate_minutes"].as_u64().unwrap(),
            a + w["actual_minutes"].as_u64().unwrap(),
        )
    });
    let velocity = json!({
        "tasks_completed": completions, "total_estimate_minutes": est_total,
        "total_actual_minutes": act_total, "ratio": ratio(act_total, est_total),
        "window_size": 10, "window_ratio": ratio(wa, we), "window": window,
        "updated_at": ts(40 * done as u64),
    });
    bytes += write(
        &root.join("progress/velocity.json"),
        &serde_json::to_vec_pretty(&velocity).unwrap(),
    );
    let first_phase = t
        .iter()
        .find(|x| x.status != "COMPLETE" && x.status != "CANCELLED")
        .map(|x| x.phase.clone());
    let project = json!({
        "id": "web", "name": "Web app", "description": "The bench's project",
        "status": "active", "phase": first_phase, "created_at": ts(0),
        "updated_at": ts(40 * done as u64), "current_task": done_ids.first(),
    });
    bytes += write(
        &root.join("project.json"),
        &serde_json::to_vec_pretty(&project).unwrap(),
    );
    // The newest two checkpoints (the ring's older ones hold the same number of tasks).
    fs::create_dir_all(root.join("checkpoints")).unwrap();
    for c in checkpoints.saturating_sub(1).max(1)..=checkpoints {
        fs::copy(
            root.join("tasks.json"),
            root.join(format!("checkpoints/checkpoint-{c:03}.json")),
        )
        .unwrap();
    }
    fs::create_dir_all(root.join("research")).unwrap();
    fs::create_dir_all(root.join("temp")).unwrap();
    Gen {
        root: "proj/.claude/projects/web".into(),
        done_ids,
        bytes,
    }
}

// ---- execute (seed 001) --------------------------------------------------------------------

const LAYERS: [&str; 5] = [
    "0-setup",
    "1-foundation",
    "2-backend",
    "3-frontend",
    "4-integration",
];

/// Five layers of n/5 tasks (`L2-0042`): layers 0 and 1 merged (1 in 7 on the second attempt,
/// with its error and feedback), layer 2 running with `k` tasks in progress, the rest pending;
/// the merge queue holds every merged task.
fn execute(proj: &Path, n: usize, k: usize, rng: &mut Rng) -> Gen {
    let dir = proj.join("docs/tasks/shop");
    let per = n / LAYERS.len();
    let width = (per.to_string().len()).max(3);
    let mut o = Out::create(&dir.join("execute-state.json"));
    let mut done_ids = Vec::new();
    let mut minute = 0u64;
    let (mut attempts_total, mut commits_total, mut completed) = (0u64, 0u64, 0u64);
    let mut queue: Vec<String> = Vec::new();
    let mut layer_times: Vec<(Option<String>, Option<String>)> = Vec::new();
    o.str("{\n  \"schema_version\": \"2.0\",\n  \"prd_slug\": \"shop\",\n");
    o.str(&format!(
        "  \"project_path\": {},\n  \"worktree_dir\": {},\n  \"tasks_path\": {},\n",
        json!(proj.display().to_string()),
        json!(proj.join(".worktrees").display().to_string()),
        json!(dir.display().to_string())
    ));
    o.str("  \"status\": \"in_progress\",\n  \"current_layer\": \"2-backend\",\n  \"current_batch\": 1,\n");
    o.str(&format!(
        "  \"started_at\": \"{}\",\n  \"updated_at\": \"{}\",\n  \"completed_at\": null,\n",
        ts(0),
        ts(per as u64 * 2 * 12)
    ));
    // The tasks first, kept as text: the layers before them need their times.
    let mut hashes = history(proj, per, width).into_iter();
    let mut hash = |rng: &mut Rng| hashes.next().unwrap_or_else(|| hash7(rng));
    let mut tasks = String::new();
    for (li, _) in LAYERS.iter().enumerate() {
        let first = minute;
        for i in 1..=per {
            let id = format!("L{li}-{i:0width$}");
            let task = if li < 2 {
                let retried = i % 7 == 3;
                let attempts = if retried { 2 } else { 1 };
                let mut commits = vec![
                    json!({"hash": hash(rng), "type": "implementation", "attempt": 1, "created_at": ts(minute + 5)}),
                ];
                let mut t = json!({"status": "completed", "attempts": attempts,
                    "worktree_path": null, "branch": null, "batch": (i - 1) / 4 + 1});
                if retried {
                    commits.push(json!({"hash": hash(rng), "type": "fix", "attempt": 2, "created_at": ts(minute + 9)}));
                    t["errors"] = json!([{"attempt": 1, "message": format!("test_{i} failed: expected 201 got 422"),
                        "details": "AssertionError in tests/api/test_tasks.py", "timestamp": ts(minute + 6)}]);
                    t["retry_feedback"] = json!([{"attempt": 2, "feedback": "Add min_length=1 to TaskCreateRequest.title"}]);
                }
                attempts_total += attempts;
                commits_total += commits.len() as u64;
                completed += 1;
                t["commits"] = json!(commits);
                t["merged_at"] = json!(ts(minute + 11));
                queue.push(id.clone());
                minute += 12;
                t
            } else if li == 2 && i <= k {
                done_ids.push(id.clone());
                attempts_total += 1;
                json!({"status": "in_progress", "attempts": 1, "worktree_path": null, "branch": null, "batch": 1})
            } else {
                json!({"status": "pending", "attempts": 0, "worktree_path": null, "branch": null})
            };
            let _ = write!(
                tasks,
                "{}    {}: ",
                if tasks.is_empty() { "\n" } else { ",\n" },
                json!(id)
            );
            let text = serde_json::to_string_pretty(&task)
                .unwrap()
                .replace('\n', "\n    ");
            tasks.push_str(&text);
        }
        layer_times.push(if li < 2 {
            (Some(ts(first)), Some(ts(minute)))
        } else if li == 2 {
            (Some(ts(minute)), None)
        } else {
            (None, None)
        });
    }
    o.str("  \"layers\": {");
    for (li, name) in LAYERS.iter().enumerate() {
        let (status, done) = match li {
            0 | 1 => ("completed", per),
            2 => ("in_progress", 0),
            _ => ("pending", 0),
        };
        let layer = json!({"status": status, "tasks_total": per, "tasks_completed": done,
            "tasks_failed": 0, "started_at": layer_times[li].0, "completed_at": layer_times[li].1});
        o.str(&format!(
            "{}    {}: ",
            if li == 0 { "\n" } else { ",\n" },
            json!(name)
        ));
        o.pretty(&layer, 4);
    }
    o.str("\n  },\n  \"tasks\": {");
    o.str(&tasks);
    drop(tasks);
    o.str("\n  },\n  \"merge_queue\": [");
    for (p, id) in queue.iter().enumerate() {
        o.str(&format!(
            "{}    {{\n      \"task_id\": {},\n      \"priority\": {},\n      \"status\": \"merged\"\n    }}",
            if p == 0 { "\n" } else { ",\n" },
            json!(id),
            p + 1
        ));
    }
    o.str("\n  ],\n");
    let metrics = json!({"total_tasks": per * LAYERS.len(), "completed_tasks": completed, "failed_tasks": 0,
        "total_attempts": attempts_total, "total_commits": commits_total, "elapsed_time_seconds": minute * 60});
    o.str("  \"metrics\": ");
    o.pretty(&metrics, 2);
    o.str("\n}\n");
    let bytes = o.done();
    Gen {
        root: "proj/docs/tasks/shop".into(),
        done_ids,
        bytes,
    }
}

/// The git history of the run's done layers, as the `/execute` skill leaves it: per task its
/// commits (`feat(ID)`, and `fix(ID)` for a retried one) and the merge of its branch
/// (`Merge branch 'worktree-ID'`), dated as the state dates them, made with `git fast-import`.
/// Returns the commits' short hashes in the order the state records them (none when git
/// cannot make them: the state then records made-up ones).
fn history(proj: &Path, per: usize, width: usize) -> Vec<String> {
    let mut stream = String::new();
    let mut mark = 0usize;
    let mut main: Option<usize> = None;
    let mut minute = 0u64;
    let mut ours = Vec::new();
    let mut commit = |stream: &mut String, msg: &str, at: u64, parents: &[usize]| {
        mark += 1;
        let secs = 1_767_600_000 + at as i64 * 60;
        let _ = write!(
            stream,
            "commit refs/heads/main\nmark :{mark}\ncommitter Bench <bench@example.com> {secs} +0000\ndata {}\n{msg}\n",
            msg.len()
        );
        for (n, p) in parents.iter().enumerate() {
            let _ = writeln!(stream, "{} :{p}", if n == 0 { "from" } else { "merge" });
        }
        mark
    };
    for li in 0..2 {
        for i in 1..=per {
            let id = format!("L{li}-{i:0width$}");
            let base: Vec<usize> = main.into_iter().collect();
            let feat = commit(
                &mut stream,
                &format!("feat({id}): implement"),
                minute + 5,
                &base,
            );
            ours.push(feat);
            let mut tip = feat;
            if i % 7 == 3 {
                tip = commit(
                    &mut stream,
                    &format!("fix({id}): address review"),
                    minute + 9,
                    &[feat],
                );
                ours.push(tip);
            }
            let mut parents = base.clone();
            parents.push(tip);
            if parents.len() == 1 {
                // The first task: its branch is main itself.
                main = Some(tip);
            } else {
                main = Some(commit(
                    &mut stream,
                    &format!("Merge branch 'worktree-{id}'"),
                    minute + 11,
                    &parents,
                ));
            }
            minute += 12;
        }
    }
    let marks = proj.join(".git/bench-marks");
    let made = Command::new("git")
        .args(["fast-import", "--quiet"])
        .arg(format!("--export-marks={}", marks.display()))
        .current_dir(proj)
        .stdin(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            child.stdin.take().unwrap().write_all(stream.as_bytes())?;
            child.wait()
        });
    if !made.is_ok_and(|s| s.success()) {
        return Vec::new();
    }
    // What `git gc` (run by git itself as commits pile up) leaves for a history this long: a
    // commit-graph, which `git log` walks instead of reading every commit object.
    let _ = Command::new("git")
        .args(["commit-graph", "write", "--reachable"])
        .current_dir(proj)
        .status();
    let text = fs::read_to_string(&marks).unwrap_or_default();
    let _ = fs::remove_file(&marks);
    let by_mark: std::collections::HashMap<usize, String> = text
        .lines()
        .filter_map(|l| {
            let (m, sha) = l.strip_prefix(':')?.split_once(' ')?;
            Some((m.parse().ok()?, sha.get(..7)?.to_string()))
        })
        .collect();
    ours.iter()
        .filter_map(|m| by_mark.get(m).cloned())
        .collect()
}

// ---- cdd (seed 004) ------------------------------------------------------------------------

fn hist(o: &mut Out, fields: &[(&str, Value)]) {
    let mut m = Map::new();
    for (k, v) in fields {
        m.insert((*k).into(), v.clone());
    }
    // The seed's spacing: `{"a": 1, "b": 2}`.
    let parts: Vec<String> = m
        .iter()
        .map(|(k, v)| format!("{}: {}", json!(k), v))
        .collect();
    o.str(&format!("{{{}}}\n", parts.join(", ")));
}

/// order.json with a stop after every 50 tasks (passed up to the last DONE candidate, the
/// later ones not reached); the first 40% of the tasks done (1 in 50 failed, 1 in 40 escalated
/// once first), one in progress, the rest pending. history.jsonl: the import of every task,
/// then each start, done, fail, escalation and stop in order.
fn cdd(proj: &Path, n: usize, k: usize, rng: &mut Rng) -> Gen {
    write(
        &proj.join(".claude/taskhook.json"),
        b"{\n  \"cdd_dir\": \"cdd\"\n}\n",
    );
    let tasks = proj.join("cdd/tasks");
    for d in ["pending", "in_progress", "completed", "failed"] {
        fs::create_dir_all(tasks.join(d)).unwrap();
    }
    fs::create_dir_all(proj.join("cdd/tmp")).unwrap();
    let name = |i: usize| format!("task-{i:06}.md");
    let done = n * DONE_PCT / 100;
    let mut order = Out::create(&tasks.join("order.json"));
    order.str("{\n  \"tasks\": [");
    let mut first = true;
    let mut sep = |o: &mut Out| {
        o.str(if first { "\n    " } else { ",\n    " });
        first = false;
    };
    let escalated = |i: usize| i % 40 == 17;
    for i in 0..n {
        if i > 0 && i % 50 == 0 {
            sep(&mut order);
            order.str(&format!(
                "{{\"stop\": \"verify-{}\", \"message\": \"Verify part {} before proceeding\"}}",
                i / 50,
                i / 50
            ));
        }
        let (model, thinking) = if escalated(i) && i < done + k {
            ("sonnet", "extended")
        } else if i % 20 == 3 {
            ("sonnet", "thinking")
        } else {
            ("sonnet", "none")
        };
        sep(&mut order);
        order.str(&format!(
            "{{\"task\": \"{}\", \"group\": \"Group {}\", \"model\": \"{model}\", \"thinking\": \"{thinking}\"}}",
            name(i),
            i / 50
        ));
    }
    order.str("\n  ]\n}\n");
    let mut bytes = order.done();
    let mut h = Out::create(&tasks.join("history.jsonl"));
    let s = |v: &str| json!(v);
    for i in 0..n {
        hist(
            &mut h,
            &[
                ("timestamp", s(&ts(0))),
                ("action", s("import")),
                ("task", s(&name(i))),
                ("to", s("pending")),
            ],
        );
    }
    let mut done_ids = Vec::new();
    let mut minute = 10u64;
    for i in 0..n {
        let nm = name(i);
        let folder = if i < done {
            if escalated(i) {
                hist(
                    &mut h,
                    &[
                        ("timestamp", s(&ts(minute))),
                        ("action", s("start")),
                        ("task", s(&nm)),
                        ("from", s("pending")),
                        ("to", s("in_progress")),
                    ],
                );
                hist(
                    &mut h,
                    &[
                        ("timestamp", s(&ts(minute + 20))),
                        ("action", s("escalate")),
                        ("task", s(&nm)),
                        ("from_model", s("sonnet")),
                        ("from_thinking", s("thinking")),
                        ("to_model", s("sonnet")),
                        ("to_thinking", s("extended")),
                        ("reason", s("tests flaky")),
                    ],
                );
                minute += 21;
            }
            hist(
                &mut h,
                &[
                    ("timestamp", s(&ts(minute))),
                    ("action", s("start")),
                    ("task", s(&nm)),
                    ("from", s("pending")),
                    ("to", s("in_progress")),
                ],
            );
            minute += 14;
            if i % 50 == 31 {
                hist(
                    &mut h,
                    &[
                        ("timestamp", s(&ts(minute))),
                        ("action", s("fail")),
                        ("task", s(&nm)),
                        ("from", s("in_progress")),
                        ("to", s("failed")),
                        ("elapsed_seconds", json!(840)),
                        (
                            "reason",
                            s("max escalation level reached: the API is missing"),
                        ),
                    ],
                );
                "failed"
            } else {
                hist(
                    &mut h,
                    &[
                        ("timestamp", s(&ts(minute))),
                        ("action", s("done")),
                        ("task", s(&nm)),
                        ("from", s("in_progress")),
                        ("to", s("completed")),
                        ("elapsed_seconds", json!(840)),
                    ],
                );
                "completed"
            }
        } else if i == done {
            hist(
                &mut h,
                &[
                    ("timestamp", s(&ts(minute))),
                    ("action", s("start")),
                    ("task", s(&nm)),
                    ("from", s("pending")),
                    ("to", s("in_progress")),
                ],
            );
            done_ids.push(nm.clone());
            "in_progress"
        } else {
            if i < done + k {
                done_ids.push(nm.clone());
            }
            "pending"
        };
        // The stop after this task: reached and passed while the work got here, passed in
        // advance up to the candidates' end.
        if (i + 1) % 50 == 0 && i + 1 < n {
            let stop = format!("verify-{}", (i + 1) / 50);
            if i < done {
                hist(
                    &mut h,
                    &[
                        ("timestamp", s(&ts(minute))),
                        ("action", s("stop_reached")),
                        ("task", s(&stop)),
                        ("stop", s(&stop)),
                        (
                            "message",
                            s(&format!("Verify part {} before proceeding", (i + 1) / 50)),
                        ),
                    ],
                );
            }
            if i <= done + k {
                hist(
                    &mut h,
                    &[
                        ("timestamp", s(&ts(minute + 1))),
                        ("action", s("stop_continue")),
                        ("task", s(&stop)),
                        ("stop", s(&stop)),
                    ],
                );
            }
        }
        let body = format!(
            "# Task {i}\n\nImplement part {i} of the service ({}).\n\n- [ ] code\n- [ ] tests\n",
            hash7(rng)
        );
        fs::write(tasks.join(folder).join(&nm), body).unwrap();
    }
    bytes += h.done();
    Gen {
        root: "proj/cdd/tasks".into(),
        done_ids,
        bytes,
    }
}

// ---- iterative (seed 003) ------------------------------------------------------------------

/// Units T1..Tn (3 in 10 depending on an earlier one): the first 40% done after 7 stops (4 of
/// work, the signal, the confirmation, the verification), the next `k` in progress after 3,
/// the rest pending. progress.md holds every entry.
fn iterative(proj: &Path, n: usize, k: usize, rng: &mut Rng) -> Gen {
    let dir = proj.join(".claude/iterative/big");
    let done = n * DONE_PCT / 100;
    let mut tasks = Out::create(&dir.join("tasks.md"));
    tasks.str("# big - Tasks\n\n## Tasks\n\n");
    let mut progress = Out::create(&dir.join("progress.md"));
    progress.str("# Progress Log\n\n");
    let mut units = Map::new();
    let mut done_ids = Vec::new();
    let mut minute = 0u64;
    for i in 1..=n {
        let id = format!("T{i}");
        let dep = if i > 1 && rng.chance(30) {
            let d = 1 + rng.below(i - 1);
            // Units in progress or done depend only on done units.
            let d = if i <= done + k { d.min(done.max(1)) } else { d };
            if d < i {
                format!("T{d}")
            } else {
                "none".into()
            }
        } else {
            "none".into()
        };
        let mark = if i <= done { "x" } else { " " };
        tasks.str(&format!(
            "- [{mark}] **{id}**: part {i} of the parser\n  - Completion: `<signal>{id}_DONE</signal>`\n  - Max iterations: 10\n  - Depends: {dep}\n\n"
        ));
        let stops = if i <= done {
            7
        } else if i <= done + k {
            done_ids.push(id.clone());
            3
        } else {
            0
        };
        for it in 1..=stops {
            let at = ts(minute);
            minute += 6;
            progress.str(&format!(
                "## {id} - Iteration {it} - {at}\n**Did:** worked on the parser, its error messages and their tests\n"
            ));
            if i <= done && it > 4 {
                progress.str(&format!("**Remaining:** None\n**Signal:** {id}_DONE\n"));
            } else {
                progress.str("**Remaining:** the edge cases\n**Blockers:** None\n");
            }
            progress.str("**Commit:** none\n\n");
        }
        let unit = if i <= done {
            json!({"status": "done", "iterations_used": 7, "confirmations_used": 1,
                   "verification_passed": true, "max_iterations": 10,
                   "started_at": ts(minute.saturating_sub(42)), "completed_at": ts(minute)})
        } else if i <= done + k {
            json!({"status": "in_progress", "iterations_used": 3, "confirmations_used": 0,
                   "max_iterations": 10, "started_at": ts(minute.saturating_sub(18))})
        } else {
            json!({"status": "pending", "iterations_used": 0, "confirmations_used": 0,
                   "max_iterations": 10})
        };
        units.insert(id, unit);
    }
    let mut bytes = tasks.done() + progress.done();
    let state = json!({
        "task": "big", "slug": "big", "mode": "development", "created": ts(0), "updated": ts(minute),
        "phase": "execute", "current_task": done_ids.first(), "current_iteration": 3,
        "tasks": Value::Object(units), "commits": [],
    });
    bytes += write(
        &dir.join("state.json"),
        &serde_json::to_vec_pretty(&state).unwrap(),
    );
    bytes += write(
        &dir.join("guardrails.md"),
        b"# Guardrails\n\n- Run the tests before signalling.\n",
    );
    Gen {
        root: "proj/.claude/iterative/big".into(),
        done_ids,
        bytes,
    }
}

// ---- claude-tasks (seed 002) ---------------------------------------------------------------

/// A seed-002 list (the shape of `cargo bench --bench tasks`): 3 in 10 tasks depend on an
/// earlier one; the first 40% completed where ready, then `k` in progress whose dependencies
/// are completed, the rest pending or blocked.
fn claude_tasks(place: &Path, n: usize, k: usize, rng: &mut Rng) -> Gen {
    let file = place.join("home/.claude/tasks/proj/tasks.json");
    let mut o = Out::create(&file);
    o.str("{\n  \"tasks\": [");
    let done_n = n * DONE_PCT / 100;
    let mut done = vec![false; n];
    let mut done_ids = Vec::new();
    for i in 0..n {
        let mut deps = Vec::new();
        if i > 0 && rng.chance(30) {
            let d = rng.below(i);
            // Candidates depend only on completed tasks.
            if i < done_n || i >= done_n + k || done[d] {
                deps.push(d);
            }
        }
        let ready = deps.iter().all(|&d| done[d]);
        let status = if i < done_n && ready {
            done[i] = true;
            "completed"
        } else if i >= done_n && i < done_n + k {
            done_ids.push(format!("task-{i:06}"));
            "in_progress"
        } else if !ready {
            "blocked"
        } else {
            "pending"
        };
        let task = json!({
            "id": format!("task-{i:06}"),
            "description": format!("Implement part {i} of the parser module"),
            "status": status,
            "created_at": ts(i as u64 / 10),
            "updated_at": ts(i as u64 / 10 + 30),
            "assignee": if i % 3 == 0 { json!("agent-123") } else { Value::Null },
            "dependencies": deps.iter().map(|d| format!("task-{d:06}")).collect::<Vec<_>>(),
            "metadata": {"priority": "high", "tags": ["backend"], "source": "user",
                         "custom_fields": {"estimate_minutes": 30}}
        });
        o.str(if i == 0 { "\n    " } else { ",\n    " });
        o.pretty(&task, 4);
    }
    o.str(if n == 0 { "]" } else { "\n  ]" });
    o.str(&format!(
        ",\n  \"version\": 2,\n  \"last_updated\": \"{}\"\n}}\n",
        ts(n as u64 / 10 + 30)
    ));
    Gen {
        root: "home/.claude/tasks/proj".into(),
        done_ids,
        bytes: o.done(),
    }
}
