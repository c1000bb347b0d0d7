//! Git on real scratch repositories: a launch records the task's worktree and branch, a commit
//! made inside the worktree is attributed by its branch, a real merge completes the task; and
//! recovery at SessionStart (worktree gone, commits and merges the hooks never saw, a branch of
//! no task), `resume --dry-run` first, `reset --all` naming what git keeps.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use super::{assert_recount, reason, silent, Exec};
use crate::common::{Project, Run};

/// Git commits in these tests are dated after the fixed clock's start of the run.
const GIT_DATE: &str = "2026-03-01T12:30:00Z";

fn git(dir: &Path, home: &Path, args: &[&str]) -> String {
    git_dated(dir, home, GIT_DATE, args)
}

/// Git with its commits dated `date`.
fn git_dated(dir: &Path, home: &Path, date: &str, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("HOME", home)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_DATE", date)
        .env("GIT_COMMITTER_DATE", date)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A project that is a real git repository on `main` with one commit.
fn repo() -> Project {
    let p = Project::new();
    std::fs::remove_dir_all(p.root.join(".git")).unwrap();
    let g = |a: &[&str]| git(&p.root, &p.home, a);
    g(&["init", "-q", "--initial-branch=main"]);
    g(&["config", "user.name", "T"]);
    g(&["config", "user.email", "t@example.invalid"]);
    std::fs::write(p.root.join("README.md"), "x\n").unwrap();
    g(&["add", "README.md"]);
    g(&["commit", "-q", "-m", "initial"]);
    p
}

fn canonical(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap()
}

fn commit_in(e: &Exec, dir: &Path, file: &str, message: &str) -> String {
    std::fs::write(dir.join(file), message).unwrap();
    git(dir, &e.p.home, &["add", file]);
    git(dir, &e.p.home, &["commit", "-m", message])
}

/// The short hash `git commit` printed (`[branch hash] message`).
fn short(out: &str) -> String {
    out.split(']')
        .next()
        .unwrap()
        .rsplit(' ')
        .next()
        .unwrap()
        .to_string()
}

/// PostToolUse of a subagent's Bash in `cwd`, with the real output.
fn bash_in(e: &Exec, cwd: &Path, agent: &str, command: &str, stdout: &str) -> Run {
    let mut payload = e.p.payload("PostToolUse.Bash.subagent.json");
    payload["cwd"] = json!(cwd);
    payload["agent_id"] = json!(agent);
    payload["tool_input"]["command"] = json!(command);
    payload["tool_response"]["stdout"] = json!(stdout);
    e.p.hook(&payload)
}

#[test]
fn a_task_in_its_worktree_from_launch_to_merge() {
    let e = Exec::init_in(repo(), "app", &["1-core=L1-001,L1-002"]);
    git(
        &e.p.root,
        &e.p.home,
        &[
            "worktree",
            "add",
            "-q",
            ".worktrees/L1-001",
            "-b",
            "worktree-L1-001",
        ],
    );
    silent(&e.launch("L1-001"));
    let wt = canonical(&e.p.root.join(".worktrees/L1-001"));
    let t = e.task("L1-001");
    assert_eq!(t["worktree_path"], wt.display().to_string());
    assert_eq!(t["branch"], "worktree-L1-001");
    // No worktree for L1-002: nothing recorded.
    silent(&e.launch("L1-002"));
    assert_eq!(e.task("L1-002")["worktree_path"], Value::Null);

    let out = commit_in(&e, &wt, "parser.txt", "feat: parser");
    assert!(out.starts_with("[worktree-L1-001 "), "{out}");
    let hash = short(&out);
    silent(&bash_in(
        &e,
        &wt,
        "sub1",
        "git add parser.txt && git commit -m 'feat: parser'",
        &out,
    ));
    assert_eq!(
        e.task("L1-001")["commits"][0]["hash"],
        hash,
        "a cwd inside the worktree reaches the main project's run"
    );

    let mut stop = e.stop_payload(
        "sub1",
        "Implement <task>L1-001</task>.",
        "<signal>L1-001_DONE</signal>",
    );
    stop["cwd"] = json!(wt);
    let r = reason(&e.p.hook(&stop));
    assert!(
        r.contains(&format!(
            "in its worktree {} (branch worktree-L1-001)",
            wt.display()
        )),
        "{r}"
    );
    e.p.hook(&stop);
    assert_eq!(e.status("L1-001"), "verified");

    git(
        &e.p.root,
        &e.p.home,
        &[
            "merge",
            "-q",
            "--no-ff",
            "-m",
            "Merge L1-001",
            "worktree-L1-001",
        ],
    );
    let ctx = e.merge("worktree-L1-001").context();
    assert!(ctx.contains("L1-001 is merged and completed."), "{ctx}");
    let t = e.task("L1-001");
    assert_eq!(
        (t["status"].as_str(), t["branch"].clone()),
        (Some("completed"), Value::Null)
    );
    assert_recount(&e.state());
    // A SessionStart afterwards agrees with git: nothing to change.
    let before = std::fs::read(e.file()).unwrap();
    e.p.hook(&e.p.payload("SessionStart.startup.json"));
    assert_eq!(std::fs::read(e.file()).unwrap(), before);
}

#[test]
fn git_recovery_at_session_start() {
    let e = Exec::init_in(repo(), "app", &["1-core=L1-001,L1-002,L1-003,L1-004"]);
    let g = |a: &[&str]| git(&e.p.root, &e.p.home, a);
    for id in ["L1-001", "L1-002", "L1-003"] {
        g(&[
            "worktree",
            "add",
            "-q",
            &format!(".worktrees/{id}"),
            "-b",
            &format!("worktree-{id}"),
        ]);
        silent(&e.launch(id));
    }
    silent(&e.launch("L1-004"));
    let wt = |id: &str| canonical(&e.p.root.join(".worktrees").join(id));
    // L1-001: verified through hooks, then fast-forwarded into main without any hook seeing it.
    let c1 = commit_in(&e, &wt("L1-001"), "a.txt", "feat: a");
    reason(&e.bound("L1-001", "<signal>L1-001_DONE</signal>"));
    silent(&e.bound("L1-001", "<signal>L1-001_DONE</signal>"));
    g(&["merge", "-q", "--ff-only", "worktree-L1-001"]);
    // L1-002: its worktree is removed while it is in progress.
    g(&["worktree", "remove", "--force", ".worktrees/L1-002"]);
    // L1-003: a commit in its worktree that no hook saw.
    let c3 = commit_in(&e, &wt("L1-003"), "c.txt", "wip: c");
    // L1-004: a commit on main naming it.
    let c4 = commit_in(&e, &e.p.root, "d.txt", "feat(L1-004): d");
    // A branch of no task.
    g(&["branch", "worktree-L9-009"]);

    let before = e.p.snapshot();
    let dry = e.cmd(&["resume", "--dry-run"]).stdout;
    assert!(dry.contains("would change: L1-001 completed: git shows it merged (worktree-L1-001 is merged into HEAD)"), "{dry}");
    assert_eq!(e.p.snapshot(), before, "--dry-run writes nothing");

    let ctx =
        e.p.hook(&e.p.payload("SessionStart.startup.json"))
            .context();
    for want in [
        "Reconciled: L1-001 completed: git shows it merged".to_string(),
        format!("Reconciled: L1-002 is now failed: worktree {} is gone (git worktree list does not show it).", wt("L1-003").with_file_name("L1-002").display()),
        format!("Reconciled: L1-003: added 1 commit(s) git has ({}).", short(&c3)),
        format!("Reconciled: L1-004: added 1 commit(s) git has ({}).", short(&c4)),
        "git has branch worktree-L9-009 for a task the state does not list".to_string(),
        "Resume: Retry L1-002 (attempt 2 of 5".to_string(),
    ] {
        assert!(ctx.contains(&want), "missing {want:?} in:\n{ctx}");
    }
    let s = e.state();
    assert_eq!(s["tasks"]["L1-001"]["status"], "completed");
    assert_eq!(s["tasks"]["L1-001"]["commits"][0]["hash"], short(&c1));
    assert_eq!(s["merge_queue"][0]["status"], "merged");
    let t2 = &s["tasks"]["L1-002"];
    assert_eq!(
        (t2["status"].as_str(), t2["worktree_path"].clone()),
        (Some("failed"), Value::Null)
    );
    assert!(t2["errors"][0]["message"]
        .as_str()
        .unwrap()
        .contains("is gone"));
    assert_eq!(s["tasks"]["L1-003"]["commits"][0]["created_at"], GIT_DATE);
    assert_eq!(s["tasks"]["L1-003"]["commits"][0]["type"], "implementation");
    assert_recount(&s);
    // Recovery is settled: the next SessionStart writes nothing.
    let settled = std::fs::read(e.file()).unwrap();
    e.p.hook(&e.p.payload("SessionStart.resume.json"));
    assert_eq!(std::fs::read(e.file()).unwrap(), settled);

    // reset --all leaves worktrees and branches to git, and names them.
    let out = e.cmd(&["reset", "--all"]).stdout;
    assert!(
        out.contains(&format!("git keeps worktree {}", wt("L1-003").display())),
        "{out}"
    );
    assert!(
        out.contains(
            "git keeps branch worktree-L9-009 (delete it with `git branch -D worktree-L9-009`)"
        ),
        "{out}"
    );
    assert!(e.p.root.join(".worktrees/L1-003").is_dir());
    // An old merge does not complete a task of the run started over (an hour later).
    let later = |payload: &Value| {
        let mut c = e.p.cmd();
        c.env("TASKHOOK_NOW", "2026-03-01T13:00:00Z");
        e.p.run_with(c, &["hook"], serde_json::to_vec(payload).unwrap())
    };
    let mut launch = e.p.payload("PreToolUse.Agent.json");
    launch["tool_input"]["prompt"] = json!("Implement <task>L1-001</task>.");
    silent(&later(&launch));
    later(&e.p.payload("SessionStart.startup.json"));
    assert_eq!(e.status("L1-001"), "in_progress");
}

#[test]
fn a_verified_task_whose_branch_is_gone_is_not_proposed_for_merge() {
    let e = Exec::init_in(repo(), "app", &["1-core=L1-001,L1-002"]);
    let g = |a: &[&str]| git(&e.p.root, &e.p.home, a);
    for id in ["L1-001", "L1-002"] {
        g(&["branch", &format!("worktree-{id}")]);
        silent(&e.launch(id));
        reason(&e.bound(id, &format!("<signal>{id}_DONE</signal>")));
        silent(&e.bound(id, &format!("<signal>{id}_DONE</signal>")));
    }
    g(&["branch", "-D", "worktree-L1-001"]);
    let gone = "Cannot merge L1-001 (priority 1): it is verified, but git has no branch worktree-L1-001. If its work was merged another way (a squash merge, say): `taskhook execute merged L1-001`; if the work is lost: `taskhook execute reset-task L1-001`.";
    // `execute status` (read-only) checks the branches git has.
    let v = e.cmd(&["status", "--json"]).json();
    let lines: Vec<&str> = v["stores"][0]["plan_lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    assert!(
        lines.contains(&"Merge in priority order: L1-002 (priority 2, ready)."),
        "{lines:#?}"
    );
    assert!(lines.contains(&gone), "{lines:#?}");
    // SessionStart says the same, after clearing the branch git lacks.
    let ctx =
        e.p.hook(&e.p.payload("SessionStart.startup.json"))
            .context();
    assert!(ctx.contains(gone), "{ctx}");
    assert!(!ctx.contains("L1-001 (priority 1, ready)"), "{ctx}");
    assert!(
        ctx.contains("Reconciled: L1-001: branch worktree-L1-001 is gone (git has no such branch); cleared branch."),
        "{ctx}"
    );
    assert_eq!(e.task("L1-001")["branch"], Value::Null);
    let dry = e.cmd(&["resume", "--dry-run"]).stdout;
    assert!(dry.contains(gone), "{dry}");
}

#[test]
fn recovery_dates_merges_by_git_and_places_commits_in_their_attempts_window() {
    let e = Exec::init_in(repo(), "app", &["1-core=L1-001,L1-002,L1-003"]);
    let at = |date: &str, dir: &Path, a: &[&str]| git_dated(dir, &e.p.home, date, a);
    let root = e.p.root.clone();
    for id in ["L1-001", "L1-002", "L1-003"] {
        at(
            "2026-03-01T11:30:00Z",
            &root,
            &["branch", &format!("worktree-{id}")],
        );
    }
    // L1-001 ran twice before a reset at 12:30 (failures at 12:10 and 12:20) and once since
    // (failed at 12:40); its attempt 2 of the new run is under way.
    let mut s = e.state();
    s["status"] = json!("in_progress");
    s["started_at"] = json!("2026-03-01T11:00:00Z");
    s["tasks"]["L1-001"] = json!({
        "status": "in_progress", "attempts": 2, "worktree_path": null, "branch": "worktree-L1-001",
        "errors": [{"attempt": 1, "message": "red", "timestamp": "2026-03-01T12:40:00Z"}],
        "resets": [{"reset_at": "2026-03-01T12:30:00Z", "status": "failed", "attempts": 2, "errors": [
            {"attempt": 1, "message": "red", "timestamp": "2026-03-01T12:10:00Z"},
            {"attempt": 2, "message": "red", "timestamp": "2026-03-01T12:20:00Z"}]}]
    });
    for id in ["L1-002", "L1-003"] {
        s["tasks"][id] = json!({"status": "verified", "attempts": 1, "worktree_path": null,
            "branch": format!("worktree-{id}")});
    }
    std::fs::write(e.file(), serde_json::to_vec_pretty(&s).unwrap()).unwrap();
    let wt = e.p.root.join(".wt1");
    at(
        "2026-03-01T11:30:00Z",
        &root,
        &["worktree", "add", "-q", ".wt1", "worktree-L1-001"],
    );
    let mut hashes = Vec::new();
    for (n, date) in ["12:05", "12:25", "12:35", "12:45"].iter().enumerate() {
        let date = format!("2026-03-01T{date}:00Z");
        std::fs::write(wt.join(format!("f{n}.txt")), "x").unwrap();
        at(&date, &wt, &["add", "."]);
        hashes.push(short(&at(
            &date,
            &wt,
            &["commit", "-m", &format!("work {n}")],
        )));
    }
    // L1-002: merged with a merge commit at 12:50; L1-003: fast-forwarded, its tip made at 12:55.
    let commit_on = |branch: &str, file: &str, date: &str| {
        at("2026-03-01T11:40:00Z", &root, &["checkout", "-q", branch]);
        std::fs::write(root.join(file), file).unwrap();
        at(date, &root, &["add", file]);
        at(date, &root, &["commit", "-q", "-m", file]);
        at("2026-03-01T11:40:00Z", &root, &["checkout", "-q", "main"]);
    };
    commit_on("worktree-L1-002", "b.txt", "2026-03-01T12:15:00Z");
    let merge = "Merge branch 'worktree-L1-002'";
    let no_ff = ["merge", "-q", "--no-ff", "-m", merge, "worktree-L1-002"];
    at("2026-03-01T12:50:00Z", &root, &no_ff);
    let reset = ["branch", "-f", "worktree-L1-003", "main"];
    at("2026-03-01T11:40:00Z", &root, &reset);
    commit_on("worktree-L1-003", "c.txt", "2026-03-01T12:55:00Z");
    let ff = ["merge", "-q", "--ff-only", "worktree-L1-003"];
    at("2026-03-01T13:10:00Z", &root, &ff);

    let ctx =
        e.p.hook(&e.p.payload("SessionStart.startup.json"))
            .context();
    assert!(ctx.contains("Reconciled: L1-002 completed: git shows it merged (merge commit \"Merge branch 'worktree-L1-002'\")."), "{ctx}");
    let s = e.state();
    assert_eq!(s["tasks"]["L1-002"]["merged_at"], "2026-03-01T12:50:00Z");
    assert_eq!(s["tasks"]["L1-003"]["merged_at"], "2026-03-01T12:55:00Z");
    let got: Vec<(String, u64, String)> = s["tasks"]["L1-001"]["commits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["hash"].as_str().unwrap().to_string(),
                c["attempt"].as_u64().unwrap(),
                c["type"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let want: Vec<(String, u64, String)> = [
        (1, "implementation"),
        (2, "fix"),
        (1, "implementation"),
        (2, "fix"),
    ]
    .iter()
    .zip(&hashes)
    .map(|((a, t), h)| (h.clone(), *a, t.to_string()))
    .collect();
    assert_eq!(
        got, want,
        "12:05 and 12:25 are the first run's attempts 1 and 2; 12:35 and 12:45 this run's 1 and 2"
    );
}
