//! The engine's seams (issue 8), through the real binary: the project resolved per payload, the
//! one edit rule for every layout, linked worktrees, and persistent halts of the main agent.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};

use crate::common::{reference_payload, Project};

fn todo_write(cwd: &Path, content: &str) -> Value {
    let mut v = reference_payload("PostToolUse.TodoWrite.json");
    v["cwd"] = json!(cwd);
    v["tool_input"] =
        json!({"todos": [{"content": content, "status": "pending", "activeForm": content}]});
    v
}

fn list(home: &Path, name: &str) -> Value {
    let path = home.join(".claude/tasks").join(name).join("tasks.json");
    serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap()
}

fn descriptions(doc: &Value) -> Vec<String> {
    doc["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["description"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_replay_across_two_projects_keeps_each_projects_list() {
    let p = Project::new();
    let a = p.tmp.path().join("alpha");
    let b = p.tmp.path().join("beta");
    for dir in [&a, &b] {
        std::fs::create_dir_all(dir.join(".git")).unwrap();
    }
    let capture = [
        todo_write(&a, "alpha's todo"),
        todo_write(&b, "beta's todo"),
    ];
    p.write("capture.json", serde_json::to_vec(&capture).unwrap());
    let run = p.run(&["replay", "capture.json"], "");
    assert_eq!(run.code, 0, "{run:?}");
    // Each payload reached its own project's list (named after the folder); beta's mirror did
    // not remove alpha's todo from a shared list.
    assert_eq!(descriptions(&list(&p.home, "alpha")), ["alpha's todo"]);
    assert_eq!(descriptions(&list(&p.home, "beta")), ["beta's todo"]);
    let changed: Vec<Value> = run
        .json_lines()
        .iter()
        .map(|l| l["changed"].clone())
        .collect();
    assert!(changed[0].to_string().contains("alpha"), "{changed:?}");
    assert!(changed[1].to_string().contains("beta"), "{changed:?}");
}

#[test]
fn a_write_that_breaks_a_task_list_is_blocked_naming_the_schema_error() {
    let p = Project::new();
    assert_eq!(
        p.run(&["tasks", "write", "--id", "a", "--description", "A"], "")
            .code,
        0
    );
    let path = p.home.join(".claude/tasks/proj/tasks.json");
    let mut doc: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    doc["tasks"][0]["status"] = json!("finished");
    std::fs::write(&path, serde_json::to_vec_pretty(&doc).unwrap()).unwrap();
    let mut write = p.payload("PostToolUse.Write.json");
    write["tool_input"]["file_path"] = json!(path);
    let before = p.snapshot();
    let run = p.hook(&write);
    assert_eq!(run.code, 0, "{run:?}");
    let v = run.json();
    assert_eq!(v["decision"], "block", "{v}");
    let reason = v["reason"].as_str().unwrap();
    assert!(
        reason.contains("claude-tasks") && reason.contains("/tasks/0/status"),
        "{reason}"
    );
    assert!(reason.contains("taskhook recover"), "{reason}");
    // The list has no log: nothing was written.
    assert_eq!(p.snapshot(), before);
    // A valid edit says nothing.
    doc["tasks"][0]["status"] = json!("completed");
    std::fs::write(&path, serde_json::to_vec_pretty(&doc).unwrap()).unwrap();
    assert!(p.hook(&write).stdout.is_empty());
}

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@t")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@t")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
}

#[test]
fn a_cwd_in_a_linked_worktree_reaches_the_main_projects_stores() {
    let p = Project::new();
    let repo: PathBuf = p.tmp.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    std::fs::write(repo.join("README"), "x").unwrap();
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-q", "-m", "init"]);
    git(
        &repo,
        &[
            "worktree",
            "add",
            "-q",
            ".worktrees/L2-003",
            "-b",
            "worktree-L2-003",
        ],
    );
    let run = p.run(
        &[
            "--project-dir",
            repo.to_str().unwrap(),
            "iterative",
            "new",
            "s",
            "--task",
            "T1",
        ],
        "",
    );
    assert_eq!(run.code, 0, "{run:?}");
    // A subagent working inside the worktree signals; the main project's store moves.
    let mut stop = p.payload("SubagentStop.json");
    stop["cwd"] = json!(repo.join(".worktrees/L2-003/src"));
    stop["last_assistant_message"] = json!("Done. <signal>T1_DONE</signal>");
    let run = p.hook(&stop);
    assert_eq!(run.code, 0, "{run:?}");
    let state: Value = serde_json::from_slice(
        &std::fs::read(repo.join(".claude/iterative/s/state.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(state["tasks"]["T1"]["status"], "confirming");
    assert!(!repo.join(".worktrees/L2-003/.claude").exists());
}

#[test]
fn a_halt_stops_every_main_agent_tool_call_until_lifted() {
    let p = Project::new();
    p.write(
        ".claude/taskhook/agents.json",
        serde_json::to_vec_pretty(&json!({
            "bindings": {},
            "notices": [{"agent_id": "a1", "text": "foo.md is done.", "at": "2026-03-01T11:00:00Z"}],
            "halts": [{"key": "cdd:x:verify-core", "message": "Stop verify-core: check the core by hand, then run `taskhook cdd continue verify-core`.", "at": "2026-03-01T11:00:00Z"}]
        }))
        .unwrap(),
    );
    for _ in 0..2 {
        let v = p.hook(&p.payload("PostToolUse.Read.json")).json();
        assert_eq!(v["continue"], false, "{v}");
        assert!(
            v["stopReason"]
                .as_str()
                .unwrap()
                .contains("taskhook cdd continue verify-core"),
            "{v}"
        );
    }
    let agents: Value = serde_json::from_slice(
        &std::fs::read(p.root.join(".claude/taskhook/agents.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(agents["notices"], json!([]), "notices are delivered once");
    assert_eq!(agents["halts"].as_array().unwrap().len(), 1, "halts stay");
    assert_eq!(p.run(&["validate"], "").code, 0);
    // A subagent's tool call is never halted by the main agent's stop.
    let mut sub = p.payload("PostToolUse.Read.json");
    sub["agent_id"] = json!("a1");
    assert!(p.hook(&sub).stdout.is_empty());
}

/// Holds the locks at `paths` on a thread until the returned sender is dropped or sent to.
fn hold_locks(paths: Vec<PathBuf>) -> (std::sync::mpsc::Sender<()>, std::thread::JoinHandle<()>) {
    use taskhook::store::{Clock, Store};
    let (held_tx, held_rx) = std::sync::mpsc::channel();
    let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
    let holder = std::thread::spawn(move || {
        let s = Store::new(Clock::system(), std::time::Duration::from_secs(5));
        s.trust(&std::env::temp_dir(), false);
        fn nest(s: &Store, paths: &[PathBuf], f: &mut dyn FnMut()) {
            match paths.split_first() {
                None => f(),
                Some((first, rest)) => s
                    .with_lock(first, || {
                        nest(s, rest, f);
                        Ok(())
                    })
                    .unwrap(),
            }
        }
        nest(&s, &paths, &mut || {
            held_tx.send(()).unwrap();
            let _ = done_rx.recv();
        });
    });
    held_rx.recv().unwrap();
    (done_tx, holder)
}

#[test]
fn lock_timeouts_exit_one_however_many_stores_timed_out() {
    // Issue 9 item 6: the exit code is decided by the kind of error, not by how many.
    let p = Project::new();
    for slug in ["a", "b"] {
        assert_eq!(
            p.run(
                &["iterative", "new", slug, "--task", &format!("{slug}1")],
                ""
            )
            .code,
            0
        );
    }
    let locks = ["a", "b"]
        .iter()
        .map(|s| {
            p.root
                .join(".claude/iterative")
                .join(s)
                .join(".taskhook.lock")
        })
        .collect();
    let (done, holder) = hold_locks(locks);
    let before = p.snapshot();
    let mut stop = p.payload("SubagentStop.json");
    stop["last_assistant_message"] = json!("<signal>a1_DONE</signal> <signal>b1_DONE</signal>");
    let mut cmd = p.cmd();
    cmd.env("TASKHOOK_LOCK_TIMEOUT", "0.3");
    let run = p.run_with(cmd, &["hook"], serde_json::to_vec(&stop).unwrap());
    done.send(()).unwrap();
    holder.join().unwrap();
    run.assert_one_line_error();
    assert!(
        run.stderr.contains(".taskhook.lock") && run.stderr.contains("also:"),
        "{run:?}"
    );
    assert_eq!(p.snapshot(), before);
}

#[test]
fn a_notice_that_cannot_be_saved_after_the_store_moved_is_shown_with_exit_zero() {
    // Issue 9 item 4: the store moved; a failure to keep the main agent's notice afterwards
    // must not report exit 1 (which would hide that the store changed), and the notice's text
    // still reaches the user.
    let p = Project::new();
    assert_eq!(
        p.run(&["iterative", "new", "s", "--task", "T1"], "").code,
        0
    );
    std::fs::create_dir_all(p.root.join(".claude/taskhook")).unwrap();
    let (done, holder) = hold_locks(vec![p.root.join(".claude/taskhook/.agents.json.lock")]);
    let mut stop = p.payload("SubagentStop.json");
    stop["last_assistant_message"] = json!("<signal>T1_BLOCKED: needs an API key</signal>");
    let mut cmd = p.cmd();
    cmd.env("TASKHOOK_LOCK_TIMEOUT", "0.3");
    let run = p.run_with(cmd, &["hook"], serde_json::to_vec(&stop).unwrap());
    done.send(()).unwrap();
    holder.join().unwrap();
    assert_eq!(run.code, 0, "{run:?}");
    let system = run.json()["systemMessage"].as_str().unwrap().to_string();
    assert!(
        system.contains("T1 is blocked: needs an API key"),
        "{system}"
    );
    assert!(system.contains("agents.json.lock"), "{system}");
    let state: Value = serde_json::from_slice(
        &std::fs::read(p.root.join(".claude/iterative/s/state.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(state["tasks"]["T1"]["status"], "blocked");
}
