//! Team sync when things go wrong: the remote away (an ssh remote that hangs), many pushes
//! at once, a sync killed at its worst moments, a remote ref rewound by a force-push, and a
//! log holding what taskhook did not write.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::common::reference_payload;
use crate::sync_team::{git, git_in, session, Team};

/// A script at `path` with `body`, executable.
fn script(path: &Path, body: &str) -> PathBuf {
    std::fs::write(path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path.to_path_buf()
}

/// Points clone `i`'s origin at `url`.
fn set_origin(team: &Team, i: usize, url: &str) {
    git(&team.clones[i], &["remote", "set-url", "origin", url]);
}

const AWAY: &str = "ssh://git@remote.invalid/repo.git";

/// A team of `n` clones sharing a plan of `tasks` tasks, clone 0 having published it.
fn synced(n: usize, tasks: usize) -> Team {
    let team = Team::new(n);
    team.plan(0, tasks);
    team.ok(0, &["sync", "init"]);
    for i in 1..n {
        team.ok(i, &["sync"]);
    }
    team
}

#[test]
fn with_the_remote_away_hooks_never_wait_done_queues_and_the_next_sync_pushes() {
    let team = synced(2, 4);
    let tmp = team.tmp.path();
    let mark = tmp.join("ssh-was-run");
    let ssh = script(
        &tmp.join("hanging-ssh"),
        &format!("touch '{}'\nexec sleep 120", mark.display()),
    );
    set_origin(&team, 0, AWAY);
    team.set_sync(0, "timeout_seconds", json!(2));
    let away = |args: &[&str]| {
        let mut c = team.cmd(0);
        c.env("GIT_SSH_COMMAND", &ssh);
        team.run_with(c, args, "")
    };
    // A hook event that changes a synced store: applied and queued, the network untouched.
    let mut launch = reference_payload("PreToolUse.Agent.json");
    launch["cwd"] = json!(team.clones[0].display().to_string());
    launch["session_id"] = json!(session(0));
    launch["tool_input"]["prompt"] = json!("<task>plan/T3</task> do it");
    let mut c = team.cmd(0);
    c.env("GIT_SSH_COMMAND", &ssh);
    let hook = team.run_with(c, &["hook"], serde_json::to_vec(&launch).unwrap());
    assert_eq!(hook.code, 0, "{hook:?}");
    assert!(!mark.exists(), "a hook ran ssh");
    assert_eq!(team.status_of(0, "T3"), "IN_PROGRESS");
    assert_eq!(team.queued(0), 1);
    // done applies at once and queues; its one push is cut at the timeout.
    let done = away(&["done", "plan/T3"]);
    assert_eq!(done.code, 0, "{done:?}");
    assert!(mark.exists(), "done did not try the remote");
    assert!(done.stdout.contains("not yet pushed"), "{done:?}");
    assert_eq!(team.status_of(0, "T3"), "COMPLETE");
    assert_eq!(team.queued(0), 2);
    let st = away(&["status"]);
    assert!(
        st.stdout
            .contains("sync: 2 change(s) not yet pushed to origin"),
        "{st:?}"
    );
    let ss = away(&["sync", "status"]);
    assert!(ss.stdout.contains("2 change(s) not yet pushed"), "{ss:?}");
    // sync fails with one line naming the remote.
    let s = away(&["sync"]);
    s.assert_one_line_error();
    assert!(s.stderr.contains("origin"), "{s:?}");
    assert!(s.stderr.contains("stay queued"), "{s:?}");
    // The remote is back: the queue goes out, the other clone sees the completion.
    set_origin(&team, 0, team.remote.to_str().unwrap());
    let back = team.ok(0, &["sync", "--json"]).json();
    assert_eq!(back["ops_out"], 2, "{back}");
    assert_eq!(team.queued(0), 0);
    team.ok(1, &["sync"]);
    assert_eq!(team.status_of(1, "T3"), "COMPLETE");
    // A claim cannot be proven without the remote: refused, nothing changed, unless
    // --offline, which says so.
    set_origin(&team, 0, AWAY);
    let before = team.tasks(0);
    let c = away(&["claim", "plan/T4"]);
    c.assert_one_line_error();
    assert!(c.stderr.contains("--offline"), "{c:?}");
    assert_eq!(team.tasks(0), before);
    let off = away(&["claim", "plan/T4", "--offline"]);
    assert_eq!(off.code, 0, "{off:?}");
    assert!(off.stdout.contains("this machine only"), "{off:?}");
}

#[test]
fn eight_processes_pushing_at_once_lose_nothing_and_double_nothing() {
    let mut team = synced(1, 8);
    for _ in 1..8 {
        let i = team.add_clone();
        team.ok(i, &["sync"]);
    }
    // Each clone queues a claim of its own unit without pushing it …
    for i in 0..8 {
        let unit = format!("plan/T{}", i + 1);
        team.ok(i, &["claim", &unit, "--offline"]);
    }
    // … then all eight push at once.
    let children: Vec<_> = (0..8)
        .map(|i| {
            let mut c = std::process::Command::new(assert_cmd::cargo::cargo_bin("taskhook"));
            c.current_dir(&team.clones[i])
                .env_clear()
                .env("PATH", std::env::var_os("PATH").unwrap_or_default())
                .env("HOME", team.home(i))
                .env("CLAUDE_CODE_SESSION_ID", session(i))
                .arg("sync")
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped());
            c.spawn().unwrap()
        })
        .collect();
    for (i, ch) in children.into_iter().enumerate() {
        let out = ch.wait_with_output().unwrap();
        assert!(out.status.success(), "clone {i}: {out:?}");
    }
    let claims: Vec<Value> = team
        .remote_ops()
        .into_iter()
        .filter(|o| o["kind"] == "claim")
        .collect();
    assert_eq!(claims.len(), 8, "{claims:?}");
    let ids: std::collections::BTreeSet<_> = claims.iter().map(|c| c["id"].to_string()).collect();
    assert_eq!(ids.len(), 8);
    // A new clone sees eight units held by eight sessions.
    let k = team.add_clone();
    team.ok(k, &["sync"]);
    let held: Value = serde_json::from_slice(
        &std::fs::read(team.clones[k].join(".claude/taskhook/claims.json")).unwrap(),
    )
    .unwrap();
    let owners: std::collections::BTreeSet<_> = held["claims"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["owner"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(owners.len(), 8, "{held}");
    assert!(team
        .statuses(k)
        .iter()
        .take(8)
        .all(|(_, s)| s == "IN_PROGRESS"));
}

/// A `git` first on PATH that runs the real one but kills its caller (the taskhook process)
/// with SIGKILL just before (`before`) or just after (`after`) a push.
fn killing_git(dir: &Path, when: &str) -> PathBuf {
    let real = String::from_utf8(
        std::process::Command::new("sh")
            .args(["-c", "command -v git"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let bin = dir.join(format!("bin-{when}"));
    std::fs::create_dir_all(&bin).unwrap();
    let body = match when {
        "before" => format!(
            "for a in \"$@\"; do [ \"$a\" = push ] && {{ kill -9 $PPID; exit 1; }}; done\nexec '{}' \"$@\"",
            real.trim()
        ),
        _ => format!(
            "for a in \"$@\"; do if [ \"$a\" = push ]; then '{0}' \"$@\"; rc=$?; kill -9 $PPID; exit $rc; fi; done\nexec '{0}' \"$@\"",
            real.trim()
        ),
    };
    script(&bin.join("git"), &body);
    bin
}

fn path_with(bin: &Path) -> std::ffi::OsString {
    let mut p = bin.as_os_str().to_owned();
    p.push(":");
    p.push(std::env::var_os("PATH").unwrap_or_default());
    p
}

#[test]
fn a_sync_killed_before_or_after_its_push_loses_nothing_and_applies_nothing_twice() {
    let team = synced(2, 6);
    for (when, task) in [("before", "T5"), ("after", "T6")] {
        let bin = killing_git(team.tmp.path(), when);
        let mut c = team.cmd(0);
        c.env("PATH", path_with(&bin));
        let killed = team.run_with(c, &["done", &format!("plan/{task}")], "");
        assert_eq!(killed.code, -1, "{when}: not killed: {killed:?}");
        // Applied here, and still queued: the kill came before the queue was settled.
        assert_eq!(team.status_of(0, task), "COMPLETE", "{when}");
        assert_eq!(team.queued(0), 1, "{when}");
        let pushed = |t: &str| {
            team.remote_ops()
                .iter()
                .filter(|o| o["kind"] == "done" && o["task"] == t)
                .count()
        };
        assert_eq!(pushed(task), usize::from(when == "after"), "{when}");
        // The next sync heals: pushed exactly once, queue empty.
        team.ok(0, &["sync"]);
        assert_eq!(pushed(task), 1, "{when}");
        assert_eq!(team.queued(0), 0, "{when}");
        team.ok(1, &["sync"]);
        assert_eq!(team.status_of(1, task), "COMPLETE", "{when}");
    }
    // Each completion is in each clone's log once.
    for i in [0, 1] {
        let log =
            std::fs::read_to_string(team.clones[i].join(".claude/projects/plan/progress/log.md"))
                .unwrap();
        for task in ["T5", "T6"] {
            let n = log
                .split("\n## ")
                .filter(|e| e.contains("TASK_COMPLETE") && e.contains(&format!("Task: {task}\n")))
                .count();
            assert_eq!(n, 1, "clone {i}, {task}:\n{log}");
        }
    }
}

#[test]
fn a_rewound_remote_ref_is_reported_and_the_lost_ops_are_pushed_again() {
    let mut team = synced(1, 4);
    let before = team.remote_tip();
    team.ok(0, &["done", "plan/T1"]);
    team.ok(0, &["done", "plan/T2"]);
    // Someone force-pushes the older commit.
    git(&team.remote, &["update-ref", "refs/taskhook/ops", &before]);
    let r = team.ok(0, &["sync"]);
    assert!(r.stdout.contains("rewound:"), "{r:?}");
    assert!(
        r.stdout.contains("2 op(s) it lost are pushed again"),
        "{r:?}"
    );
    let k = team.add_clone();
    team.ok(k, &["sync"]);
    assert_eq!(team.status_of(k, "T1"), "COMPLETE");
    assert_eq!(team.status_of(k, "T2"), "COMPLETE");
    // Nothing twice.
    let dones = team
        .remote_ops()
        .iter()
        .filter(|o| o["kind"] == "done")
        .count();
    assert_eq!(dones, 2);
}

/// A commit on the remote's ref built by hand: `files` (name → bytes) at the root, and the
/// snapshots of `like` (a commit of ours) when given.
fn commit_by_hand(
    remote: &Path,
    parent: &str,
    files: &[(&str, Vec<u8>)],
    like: Option<&str>,
) -> String {
    let mut listing = String::new();
    for (name, bytes) in files {
        let sha = git_in(remote, &["hash-object", "-w", "--stdin"], bytes);
        listing.push_str(&format!("100644 blob {sha}\t{name}\n"));
    }
    if let Some(c) = like {
        let snaps = git(remote, &["rev-parse", &format!("{c}:snapshots")]);
        listing.push_str(&format!("040000 tree {snaps}\tsnapshots\n"));
    }
    let tree = git_in(remote, &["mktree"], listing.as_bytes());
    git(
        remote,
        &["commit-tree", &tree, "-p", parent, "-m", "by hand"],
    )
}

#[test]
fn a_log_holding_what_taskhook_did_not_write_is_skipped_line_by_line_and_the_rest_applies() {
    let team = synced(2, 10);
    let remote = &team.remote;
    let tip = team.remote_tip();
    // A commit that is not taskhook's at all.
    let foreign = commit_by_hand(remote, &tip, &[("notes.txt", b"hello\n".to_vec())], None);
    // Then one of ours holding bad ops and one good one.
    let mut index: Value = serde_json::from_str(&git(
        remote,
        &["cat-file", "-p", &format!("{tip}:taskhook.json")],
    ))
    .unwrap();
    let store = json!({"layout": "projects", "path": ".claude/projects/plan", "id": "plan"});
    let op = |task: &str, time: &str, store: &Value| {
        json!({"id": uuid(), "store": store, "task": task, "kind": "done",
               "actor": "eve@elsewhere", "machine": "elsewhere", "time": time})
        .to_string()
    };
    let lines = [
        "{ this is not json".to_string(),
        op("T2", "2026-01-01T00:00:00.000000Z", &store).replacen(
            "\"id\":\"",
            "\"id\":\"not-a-uuid-",
            1,
        ),
        op(
            "T1",
            "2026-01-01T00:00:00.000000Z",
            &json!({"layout": "projects", "path": ".claude/projects/gone", "id": "gone"}),
        ),
        op("T99", "2026-01-01T00:00:01.000000Z", &store),
        op("T9", "2099-01-01T00:00:00.000000Z", &store),
        op("T10", "2026-01-01T00:00:02.000000Z", &store),
    ];
    index["seq"] = json!(index["seq"].as_u64().unwrap() + lines.len() as u64);
    let ours = commit_by_hand(
        remote,
        &foreign,
        &[
            ("taskhook.json", serde_json::to_vec_pretty(&index).unwrap()),
            ("ops.jsonl", lines.join("\n").into_bytes()),
        ],
        Some(&tip),
    );
    git(remote, &["update-ref", "refs/taskhook/ops", &ours]);
    let r = team.ok(1, &["sync"]);
    let skipped: Vec<&str> = r
        .stdout
        .lines()
        .filter(|l| l.starts_with("skipped:"))
        .collect();
    assert!(
        skipped.iter().any(|l| l.contains("not taskhook's")),
        "{r:?}"
    );
    assert!(skipped.iter().any(|l| l.contains("not an op")), "{r:?}");
    assert!(skipped.iter().any(|l| l.contains("not a uuid")), "{r:?}");
    assert!(
        skipped.iter().any(|l| l.contains("never published")),
        "{r:?}"
    );
    assert!(skipped.iter().any(|l| l.contains("no unit T99")), "{r:?}");
    assert!(skipped.iter().any(|l| l.contains("in the future")), "{r:?}");
    assert_eq!(skipped.len(), 6, "{r:?}");
    // The good op applied; the future one did not.
    assert_eq!(team.status_of(1, "T10"), "COMPLETE");
    assert_eq!(team.status_of(1, "T9"), "PENDING");
    // Clone 0 builds on it: its next push lands on top, nothing of the foreign commit lost.
    team.ok(0, &["done", "plan/T2"]);
    assert!(crate::sync_team::git(
        remote,
        &["merge-base", "--is-ancestor", &foreign, "refs/taskhook/ops"]
    )
    .is_empty());
    team.ok(1, &["sync"]);
    assert_eq!(team.status_of(1, "T2"), "COMPLETE");
}

fn uuid() -> String {
    let n: u128 = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let h = format!("{:032x}", n ^ 0x5a5a_5a5a_5a5a_5a5a_5a5a_5a5a_5a5a_5a5a);
    format!(
        "{}-{}-4{}-8{}-{}",
        &h[0..8],
        &h[8..12],
        &h[13..16],
        &h[17..20],
        &h[20..32]
    )
}
