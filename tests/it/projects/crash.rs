//! A completion is one transaction across tasks.json and progress/log.md (issue 20, item 1):
//! the real binary killed at every write of a completion (`strace -e inject=…:signal=KILL`,
//! which `.ci/run` installs), and the on-disk shapes such a kill leaves, made by hand. After
//! the next session start tasks.json and the log agree, and velocity counts every task once.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;
use taskhook::store::schema;

use super::Proj;
use crate::common::{Project, NOW};

/// The log entries of `event` for `task`.
fn logged(pr: &Proj, event: &str, task: &str) -> usize {
    let head = format!(" — {event}\n- Task: {task}\n");
    pr.log().matches(&head).count()
}

/// A store in the state right before a completion: E1 (phase build) decomposed into S1,
/// S1 started at 11:18 with a 30-minute estimate. Completing S1 at [`NOW`] completes E1 and
/// phase build, writes velocity.json and a checkpoint: every write a completion makes. T2 is
/// another task, ready.
fn before_completion() -> Proj {
    let pr = Proj::new("web");
    pr.add("E1", &["--phase", "build"]);
    pr.add("S1", &["--parent", "E1", "--estimate", "30"]);
    pr.add("T2", &[]);
    pr.run_at("2026-03-01T11:18:00Z", &["projects", "start", "web", "S1"]);
    pr
}

/// Asserts tasks.json, the log, velocity.json, project.json and the checkpoints agree on
/// whether S1's completion happened; returns whether it did.
fn consistent(pr: &Proj, what: &str) -> bool {
    let doc = pr.tasks();
    assert_eq!(
        schema::check("projects-tasks", &doc).unwrap(),
        Ok(()),
        "{what}"
    );
    let done = pr.status("S1") == "COMPLETE";
    let n = usize::from(done);
    assert_eq!(
        logged(pr, "TASK_COMPLETE", "S1"),
        n,
        "{what}:\n{}",
        pr.log()
    );
    assert_eq!(pr.status("E1") == "COMPLETE", done, "{what}");
    assert_eq!(
        logged(pr, "TASK_COMPLETE", "E1"),
        n,
        "{what}:\n{}",
        pr.log()
    );
    assert_eq!(pr.log().matches("— PHASE_COMPLETE\n").count(), n, "{what}");
    assert!(
        !pr.path("temp/.log-pending.json").exists(),
        "{what}: the record of the change is left"
    );
    if done {
        let s1 = pr.task("S1");
        assert_eq!(s1["completed_at"], NOW, "{what}");
        assert_eq!(s1["actual_minutes"], 42, "{what}");
        let v = pr.json("progress/velocity.json");
        assert_eq!(v["tasks_completed"], 1, "{what}: {v:#}");
        assert_eq!(v["total_actual_minutes"], 42, "{what}: {v:#}");
        let cp = pr.json("checkpoints/checkpoint-001.json");
        let held: Vec<&Value> = ["S1", "E1"]
            .iter()
            .map(|id| {
                &cp["tasks"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|t| t["id"] == *id)
                    .unwrap()["status"]
            })
            .collect();
        assert_eq!(
            held,
            ["COMPLETE", "COMPLETE"],
            "{what}: the phase's checkpoint"
        );
        assert_eq!(
            pr.log().matches("— CHECKPOINT_WRITTEN\n").count(),
            1,
            "{what}"
        );
        assert_ne!(pr.json("project.json")["current_task"], "S1", "{what}");
    }
    done
}

/// Copies a folder tree.
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), &target).unwrap();
        }
    }
}

/// A new project holding a copy of `template`'s `.claude/`.
fn copy_of(template: &Proj) -> Proj {
    let p = Project::new();
    copy_tree(&template.p.root.join(".claude"), &p.root.join(".claude"));
    Proj {
        p,
        id: template.id.clone(),
    }
}

/// The syscalls that change files; a kill on entry to one leaves what the calls before it did
/// (a kill at an fsync leaves what a kill right after the write before it does: the kernel
/// keeps what it accepted).
const WRITES: &str = "openat,write,rename,unlink,ftruncate";

/// One call that changes a file of the store: the syscall, its number among the run's calls
/// of that syscall, and the file.
#[derive(Debug, Clone)]
struct Point {
    syscall: String,
    nth: usize,
    file: String,
}

/// `taskhook ARGS` (reading `stdin`, when given) under strace with `strace_args`, in the
/// binary's test environment.
fn strace(pr: &Proj, strace_args: &[&str], args: &[&str], stdin: Option<&Path>) -> Output {
    let mut c = Command::new("strace");
    c.args(["-f", "-qq"])
        .args(strace_args)
        .arg(assert_cmd::cargo::cargo_bin("taskhook"))
        .args(args)
        .current_dir(&pr.p.root)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &pr.p.home)
        .env("TASKHOOK_NOW", NOW);
    if let Some(f) = stdin {
        c.stdin(std::fs::File::open(f).unwrap());
    }
    c.output()
        .unwrap_or_else(|e| panic!("strace could not run ({e}); .ci/run installs it"))
}

/// Every call of [`WRITES`] that a full run of `args` makes to a file of the store, in order.
fn write_points(pr: &Proj, args: &[&str], stdin: Option<&Path>) -> Vec<Point> {
    let trace = pr.p.tmp.path().join("trace.txt").display().to_string();
    let out = strace(
        pr,
        &["-y", "-o", &trace, "-e", &format!("trace={WRITES}")],
        args,
        stdin,
    );
    assert!(out.status.success(), "traced run failed: {out:?}");
    let store = pr.dir().display().to_string();
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut points = Vec::new();
    for line in std::fs::read_to_string(&trace).unwrap().lines() {
        let Some(name) = line
            .split_whitespace()
            .nth(1)
            .and_then(|c| c.split('(').next())
            .filter(|n| WRITES.split(',').any(|w| w == *n))
        else {
            continue;
        };
        let nth = seen.entry(name.to_string()).or_default();
        *nth += 1;
        if line.contains(&store) && !line.contains("O_RDONLY") {
            let rest = line.rsplit(&store).next().unwrap_or("");
            let file = rest.split(['"', '>']).next().unwrap_or("").to_string();
            // Writing a temp file is not a state of its own: its open was one.
            if name == "write" && (file.starts_with("/temp/.write-") || file.contains(".tmp-")) {
                continue;
            }
            points.push(Point {
                syscall: name.to_string(),
                nth: *nth,
                file,
            });
        }
    }
    assert!(points.len() > 10, "{points:?}");
    points
}

/// Runs `args`, SIGKILLed on entry to the call `at`; true when the kill came.
fn killed_at(pr: &Proj, args: &[&str], stdin: Option<&Path>, at: &Point) -> bool {
    use std::os::unix::process::ExitStatusExt;
    let inject = format!("inject={}:signal=KILL:when={}", at.syscall, at.nth);
    let trace = format!("trace={}", at.syscall);
    let out = strace(
        pr,
        &["-o", "/dev/null", "-e", &trace, "-e", &inject],
        args,
        stdin,
    );
    out.status.signal() == Some(9)
}

#[test]
fn a_completion_killed_at_any_write_is_whole_after_the_next_session_start() {
    let template = before_completion();
    let args = ["projects", "set", "web", "S1", "COMPLETE"];
    let points = write_points(&copy_of(&template), &args, None);
    for at in &points {
        let what = format!("killed at {at:?}");
        let pr = copy_of(&template);
        let log_before = pr.log();
        assert!(killed_at(&pr, &args, None, at), "{what}: not killed");
        let run = pr.session(NOW, "compact");
        assert_eq!(run.code, 0, "{what}: {run:?}");
        assert!(pr.log().starts_with(&log_before), "{what}: log rewritten");
        let done = consistent(&pr, &what);
        // What the agent does next: a task not COMPLETE is done again.
        if !done {
            pr.ok(&args);
            assert!(consistent(&pr, &format!("{what}, then redone")), "{what}");
        }
        let before = pr.p.snapshot();
        assert_eq!(pr.session(NOW, "startup").code, 0);
        assert_eq!(
            pr.p.snapshot(),
            before,
            "{what}: a second start changes nothing"
        );
    }
}

/// A SubagentStop of a subagent bound to S1 that signals done, for `pr`'s project, in a file.
fn s1_done(pr: &Proj) -> PathBuf {
    let stop = pr.p.subagent_stop(
        "a1",
        "Work on <task>S1</task>.",
        "Done.\n<signal>S1_DONE</signal>",
    );
    let file = pr.p.tmp.path().join("stop.json");
    std::fs::write(&file, serde_json::to_vec(&stop).unwrap()).unwrap();
    file
}

#[test]
fn a_signal_killed_between_tasks_json_and_the_log_is_finished_by_the_next_write() {
    let template = before_completion();
    // The named point: the first write to progress/log.md after tasks.json's rename.
    let traced = copy_of(&template);
    let points = write_points(&traced, &["hook"], Some(&s1_done(&traced)));
    let renamed = points
        .iter()
        .position(|p| p.syscall == "rename" && p.file == "/tasks.json")
        .expect("a rename over tasks.json");
    let append = points[renamed..]
        .iter()
        .find(|p| p.file == "/progress/log.md")
        .expect("an append to the log after it");
    let pr = copy_of(&template);
    let events_before = pr.events();
    assert!(killed_at(&pr, &["hook"], Some(&s1_done(&pr)), append));
    assert_eq!(pr.status("S1"), "COMPLETE", "tasks.json is written first");
    assert_eq!(pr.events(), events_before, "the kill came before the log");
    assert!(pr.path("temp/.log-pending.json").exists());
    let st = pr.ok(&["status", "--json"]).json();
    assert_eq!(
        st["stores"][0]["problems"][0],
        "a change was interrupted (temp/.log-pending.json): the next write to the store, or the next session start, finishes it or drops it"
    );
    // The next write to the store finishes it before its own entries.
    let run = pr.ok(&["projects", "start", "web", "T2", "--json"]);
    assert_eq!(
        run.json()["settled"],
        "finished a change interrupted after tasks.json was written: appended its 3 log entries (TASK_COMPLETE S1, TASK_COMPLETE E1, PHASE_COMPLETE)"
    );
    let events = pr.events();
    assert_eq!(
        events[events_before.len()..],
        [
            "TASK_COMPLETE",
            "TASK_COMPLETE",
            "PHASE_COMPLETE",
            "CHECKPOINT_WRITTEN",
            "TASK_STARTED"
        ],
        "{}",
        pr.log()
    );
    assert!(consistent(&pr, "after the next write"));
}

/// The shape a kill between the two writes of a taskhook that appended to the log first left
/// (another writer's too): S1's completion in the log, not in tasks.json. Made by completing
/// S1 for real, then putting back every other file as it was and keeping the log entries the
/// completion wrote before its checkpoint.
fn logged_but_not_written() -> Proj {
    let pr = before_completion();
    let files = ["tasks.json", "project.json", "progress/velocity.json"];
    let kept: Vec<String> = files.iter().map(|f| pr.read(f)).collect();
    let log_before = pr.log();
    pr.ok(&["projects", "set", "web", "S1", "COMPLETE"]);
    let log = pr.log();
    let checkpoint = log
        .rfind("## 2026-03-01T12:00:00Z — CHECKPOINT_WRITTEN")
        .unwrap();
    std::fs::write(pr.path("progress/log.md"), &log[..checkpoint]).unwrap();
    std::fs::remove_file(pr.path("checkpoints/checkpoint-001.json")).unwrap();
    for (f, bytes) in files.iter().zip(kept) {
        std::fs::write(pr.path(f), bytes).unwrap();
    }
    assert_eq!(pr.status("S1"), "IN_PROGRESS");
    assert_eq!(
        log[log_before.len()..checkpoint]
            .matches(" — TASK_COMPLETE\n")
            .count(),
        2
    );
    pr
}

#[test]
fn a_completion_logged_but_not_in_tasks_json_is_finished_at_every_session_start() {
    let template = logged_but_not_written();
    for source in ["compact", "startup", "resume", "clear"] {
        let pr = copy_of(&template);
        let run = pr.session(NOW, source);
        let ctx = run.context();
        assert!(
            consistent(&pr, source),
            "{source}: S1 was reset instead of completed:\n{ctx}"
        );
        for id in ["S1", "E1"] {
            let want = format!("Reconciled: TASK_COMPLETE of {id} was logged at 2026-03-01T12:00:00Z but tasks.json still had it IN_PROGRESS (a write was interrupted between the two): now COMPLETE, from the log.");
            assert!(ctx.contains(&want), "{source}: {want:?} missing in\n{ctx}");
        }
        let log = pr.log();
        assert!(log.contains("— ERROR\n- Task: S1\n- Previous status: IN_PROGRESS\n- New status: COMPLETE\n- Error: reconciled at session start: TASK_COMPLETE of S1 was logged at 2026-03-01T12:00:00Z but tasks.json still had it IN_PROGRESS (a write was interrupted between the two); completed from the log\n"), "{log}");
        let before = pr.p.snapshot();
        pr.session(NOW, "startup");
        assert_eq!(
            pr.p.snapshot(),
            before,
            "{source}: a second start changes nothing"
        );
    }
}

#[test]
fn a_completion_the_log_records_is_not_finished_over_a_later_change() {
    // S1 completed, then reopened by a person: the later entry stands.
    let pr = logged_but_not_written();
    pr.ok(&["projects", "set", "web", "S1", "PENDING"]);
    pr.session(NOW, "startup");
    assert_eq!(pr.status("S1"), "PENDING");
    // tasks.json edited by hand to a status other than the one the completion left.
    let pr = logged_but_not_written();
    let text = pr.read("tasks.json").replace("IN_PROGRESS", "VALIDATING");
    std::fs::write(pr.path("tasks.json"), text).unwrap();
    pr.session(NOW, "compact");
    assert_eq!(pr.status("S1"), "VALIDATING");
}

#[test]
fn velocity_counts_a_task_once_however_often_it_was_completed() {
    let pr = Proj::new("web");
    pr.add("T1", &["--estimate", "10"]);
    pr.add("T2", &["--estimate", "10"]);
    pr.run_at("2026-03-01T11:00:00Z", &["projects", "start", "web", "T1"]);
    pr.run_at(
        "2026-03-01T11:20:00Z",
        &["projects", "set", "web", "T1", "COMPLETE"],
    );
    // Reopened and done again (or redone after a lost write): logged twice.
    pr.ok(&["projects", "set", "web", "T1", "PENDING"]);
    pr.run_at("2026-03-01T11:30:00Z", &["projects", "start", "web", "T1"]);
    pr.run_at(
        "2026-03-01T11:45:00Z",
        &["projects", "set", "web", "T1", "COMPLETE"],
    );
    pr.run_at("2026-03-01T11:50:00Z", &["projects", "start", "web", "T2"]);
    pr.ok(&["projects", "set", "web", "T2", "COMPLETE"]);
    assert_eq!(logged(&pr, "TASK_COMPLETE", "T1"), 2);
    let v = pr.json("progress/velocity.json");
    assert_eq!(v["tasks_completed"], 2, "{v:#}");
    assert_eq!(
        v["total_actual_minutes"], 25,
        "T1's last time, and T2's: {v:#}"
    );
    let ids: Vec<&str> = v["window"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["task_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["T1", "T2"]);
    let run = pr.ok(&["projects", "velocity", "web"]);
    assert!(
        run.stdout.starts_with("web: 2 task(s) completed"),
        "{run:?}"
    );
}

#[test]
fn a_planted_record_of_a_change_is_removed_never_applied() {
    let pr = Proj::new("web");
    pr.add("T1", &[]);
    let record = pr.path("temp/.log-pending.json");
    let entry = "## 2026-03-01T12:00:00Z — TASK_COMPLETE\n- Task: T1\n\n";
    std::fs::write(&record, serde_json::json!({"entries": entry}).to_string()).unwrap();
    let tasks = pr.read("tasks.json");
    let log = pr.log();
    let ctx = pr.session(NOW, "compact").context();
    assert!(
        ctx.contains("Reconciled: removed temp/.log-pending.json, which is not a record taskhook wrote (nothing of it was applied)."),
        "{ctx}"
    );
    assert!(!record.exists());
    assert_eq!(
        (pr.read("tasks.json"), pr.log()),
        (tasks.clone(), log.clone())
    );
    // A record whose tasks.json is not the one on disk: the change never happened.
    let other = serde_json::json!({
        "tasks_json": {"bytes": 2, "fnv1a64": "0000000000000000"},
        "log_len": 0, "entries": entry, "completions": 1, "phases": [], "started": null,
    });
    std::fs::write(&record, other.to_string()).unwrap();
    let run = pr.ok(&["projects", "start", "web", "T1", "--json"]);
    assert_eq!(
        run.json()["settled"],
        "a change interrupted before tasks.json was written took no effect: its 1 log entry (TASK_COMPLETE T1) was not written"
    );
    assert_eq!(pr.status("T1"), "IN_PROGRESS");
    assert_eq!(logged(&pr, "TASK_COMPLETE", "T1"), 0);
    // A link in its place is refused, and nothing is read or written through it.
    let outside = pr.p.tmp.path().join("outside.txt");
    std::fs::write(&outside, "mine").unwrap();
    std::os::unix::fs::symlink(&outside, &record).unwrap();
    let run = pr.p.run(&["projects", "set", "web", "T1", "COMPLETE"], "");
    run.assert_one_line_error();
    assert!(run.stderr.contains("it is a symbolic link"), "{run:?}");
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "mine");
    assert_eq!(pr.status("T1"), "IN_PROGRESS");
}
