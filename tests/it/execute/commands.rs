//! `taskhook execute …`, resume plans for the seed's three cases, reset-task and reset --all
//! with their backups, a corrupt state rebuilt or refused, where stores are found.

use serde_json::{json, Value};

use super::{assert_recount, silent, Exec};
use crate::common::{Project, NOW};

#[test]
fn init_writes_the_seeds_format_and_status_reads_it() {
    let e = Exec::init(
        "shop",
        &["0-setup=L0-001", "1-core=L1-001,L1-002", "api=X1"],
    );
    let text = std::fs::read_to_string(e.file()).unwrap();
    assert!(
        text.starts_with("{\n  \"schema_version\": \"2.0\",\n  \"prd_slug\": \"shop\","),
        "{text}"
    );
    assert!(text.ends_with("}\n"));
    let s = e.state();
    assert_eq!(
        s["tasks"]["L1-001"],
        json!({"status": "pending", "attempts": 0, "worktree_path": null, "branch": null})
    );
    assert_eq!(
        s["tasks"]["X1"]["layer"], "api",
        "an id that does not name its layer carries it"
    );
    assert_eq!(
        s["layers"]["1-core"],
        json!({"status": "pending", "tasks_total": 2, "tasks_completed": 0, "tasks_failed": 0})
    );
    assert_eq!(s["tasks_path"], e.dir().display().to_string());
    assert_eq!(
        s["worktree_dir"],
        format!("{}/.worktrees", e.p.root.display())
    );
    assert_recount(&s);
    let again = e.cmd(&["init", "docs/tasks/shop", "--layer", "a=L9-001"]);
    again.assert_one_line_error();
    assert!(again.stderr.contains("already exists"), "{again:?}");

    let st = e.cmd(&["status", "--json"]).json();
    let run = &st["stores"][0];
    assert_eq!(run["store"], "shop");
    assert_eq!(run["current_layer"], "0-setup");
    assert_eq!(run["tasks"]["X1"]["layer"], "api");
    assert_eq!(run["plan"]["execute"], json!(["L0-001"]));
    let human = e.cmd(&["status"]).stdout;
    assert!(
        human.contains("layer 1-core") && human.contains("Execute: L0-001."),
        "{human}"
    );
    // The generic status sees it too.
    let all = e.p.run(&["status", "--json"], "").json();
    assert!(
        all["stores"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["layout"] == "execute"),
        "{all}"
    );
}

#[test]
fn lifecycle_by_hand_and_metrics() {
    let e = Exec::init("shop", &["1-core=L1-001,L1-002"]);
    let v = e.cmd(&["start", "L1-001", "--json"]).json();
    assert_eq!(
        (v["status"].as_str(), v["attempts"].as_u64()),
        (Some("in_progress"), Some(1))
    );
    let out = e.cmd(&[
        "fail",
        "shop/L1-001",
        "--message",
        "red",
        "--details",
        "1 failed",
        "--feedback",
        "fix the import",
    ]);
    assert!(out.stdout.contains("Relaunch it with <task>L1-001</task> for attempt 2 and give the subagent this feedback: fix the import"), "{out:?}");
    assert_eq!(e.status("L1-001"), "failed");
    e.cmd(&["start", "L1-001"]);
    assert_eq!(e.task("L1-001")["attempts"], 2);
    let out = e.cmd(&["done", "L1-001"]);
    assert!(
        out.stdout.contains("L1-001: verifying (attempt 2 of 5)"),
        "{out:?}"
    );
    let out = e.cmd(&["done", "L1-001"]);
    assert!(
        out.stdout.contains("queued for merge (priority 1)"),
        "{out:?}"
    );
    let out = e.cmd(&["merged", "L1-001", "--json"]).json();
    assert_eq!(out["status"], "completed");
    let m = e.cmd(&["metrics", "--json"]).json();
    let m = &m["stores"][0]["metrics"];
    assert_eq!(
        (
            m["completed_tasks"].as_u64(),
            m["total_attempts"].as_u64(),
            m["failed_tasks"].as_u64()
        ),
        (Some(1), Some(2), Some(0))
    );
    assert_recount(&e.state());
    let none = e.cmd(&["done", "L9-999"]);
    none.assert_one_line_error();
    let bad = e.cmd(&["start", "../x"]);
    bad.assert_one_line_error();
    assert!(e.cmd(&["reset"]).stderr.contains("needs --all"));
}

fn layer2(tasks: Value) -> Value {
    json!({"schema_version": "2.0", "prd_slug": "p", "status": "in_progress", "current_layer": "2-backend",
        "current_batch": 2, "started_at": "2026-03-01T10:00:00Z", "updated_at": "2026-03-01T11:00:00Z",
        "layers": {"1-foundation": {"status": "completed", "tasks_total": 1, "tasks_completed": 1, "tasks_failed": 0},
                   "2-backend": {"status": "in_progress", "tasks_total": 6, "tasks_completed": 4, "tasks_failed": 0}},
        "tasks": tasks, "merge_queue": []})
}

fn done(n: u64) -> Value {
    json!({"status": "completed", "attempts": n, "worktree_path": null, "branch": null, "merged_at": "2026-03-01T10:30:00Z"})
}

#[test]
fn resume_plans_for_the_seeds_three_cases() {
    let base = |extra: Vec<(&str, Value)>| {
        let mut tasks = json!({"L1-001": done(1), "L2-001": done(1), "L2-002": done(2), "L2-004": done(1), "L2-005": done(1)});
        for (k, v) in extra {
            tasks[k] = v;
        }
        layer2(tasks)
    };
    // After normal interruption: Layer 2: 4/6 completed, continue with the remaining 2.
    let e = Exec::with_state(
        "p",
        &base(vec![
            ("L2-003", json!({"status": "in_progress", "attempts": 1})),
            ("L2-006", json!({"status": "pending", "attempts": 0})),
        ]),
    );
    let before = e.p.snapshot();
    let out = e.cmd(&["resume", "--dry-run"]).stdout;
    assert!(
        out.contains("Layer 2-backend: 4/6 completed.")
            && out.contains("Resume: Continue with remaining 2 tasks."),
        "{out}"
    );
    assert!(
        out.contains("Resume: L2-003 is in_progress (attempt 1 of 5): continue it.")
            && out.contains("Execute: L2-006."),
        "{out}"
    );
    assert_eq!(e.p.snapshot(), before, "--dry-run writes nothing");

    // After task failure: L2-003 failed (attempt 3) → Retry L2-003 (attempt 4), with its feedback.
    let e = Exec::with_state(
        "p",
        &base(vec![
            (
                "L2-003",
                json!({"status": "failed", "attempts": 3,
            "errors": [{"attempt": 3, "message": "red"}],
            "retry_feedback": [{"attempt": 4, "feedback": "mock the clock"}]}),
            ),
            ("L2-006", json!({"status": "pending", "attempts": 0})),
        ]),
    );
    let ctx = e.p.hook(&e.p.payload("SessionStart.resume.json")).context();
    assert!(
        ctx.contains("Resume: Retry L2-003 (attempt 4 of 5; feedback: mock the clock)."),
        "{ctx}"
    );
    assert!(
        ctx.contains("Ready: L2-003 (retry, attempt 4 of 5); L2-006."),
        "{ctx}"
    );
    silent(&e.launch("L2-003"));
    assert_eq!(e.task("L2-003")["attempts"], 4);

    // After an abandoned task: skip it, stop layer 2; nothing to execute.
    let e = Exec::with_state(
        "p",
        &base(vec![
            ("L2-003", json!({"status": "abandoned", "attempts": 5})),
            ("L2-006", json!({"status": "pending", "attempts": 0})),
        ]),
    );
    let v = e.cmd(&["resume", "--dry-run", "--json"]).json();
    let lines: Vec<String> = v["stores"][0]["plan_lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap().to_string())
        .collect();
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("Resume: Skip L2-003, stop layer 2-backend")),
        "{lines:?}"
    );
    assert!(!lines.iter().any(|l| l.starts_with("Execute")), "{lines:?}");
    assert_eq!(v["stores"][0]["plan"]["abandoned"], json!(["L2-003"]));
    let ctx =
        e.p.hook(&e.p.payload("SessionStart.startup.json"))
            .context();
    assert!(
        ctx.contains("Skip L2-003, stop layer 2-backend") && ctx.contains("run abandoned"),
        "{ctx}"
    );
}

#[test]
fn reset_task_backs_up_first_and_keeps_the_tasks_commits() {
    let e = Exec::init("shop", &["1-core=L1-001,L1-002"]);
    silent(&e.launch("L1-001"));
    silent(&e.commit(None, "worktree-L1-001", "abcdef1", "feat: x"));
    for _ in 0..5 {
        e.bound("L1-001", "<signal>L1-001_FAILED: red</signal>");
    }
    assert_eq!(e.status("L1-001"), "abandoned");
    let before = std::fs::read(e.file()).unwrap();
    let v = e.cmd(&["reset-task", "L1-001", "--json"]).json();
    assert_eq!(
        std::fs::read(e.dir().join("execute-state.json.bak")).unwrap(),
        before
    );
    assert_eq!(
        v["backup"],
        e.dir().join("execute-state.json.bak").display().to_string()
    );
    let t = e.task("L1-001");
    assert_eq!(
        (t["status"].as_str(), t["attempts"].as_u64()),
        (Some("pending"), Some(0))
    );
    assert_eq!(
        t["commits"][0]["hash"], "abcdef1",
        "commits are git's history: kept"
    );
    assert_eq!(t["branch"], "worktree-L1-001");
    assert!(t.get("errors").is_none() && t.get("retry_feedback").is_none());
    let r = &t["resets"][0];
    assert_eq!(
        (
            r["reset_at"].as_str(),
            r["status"].as_str(),
            r["attempts"].as_u64()
        ),
        (Some(NOW), Some("abandoned"), Some(5))
    );
    assert_eq!(r["errors"].as_array().unwrap().len(), 5);
    let s = e.state();
    assert_eq!(s["status"], "in_progress");
    assert_recount(&s);
    silent(&e.launch("L1-001"));
    assert_eq!(e.task("L1-001")["attempts"], 1);

    // reset --all: another backup, everything pending.
    let before = std::fs::read(e.file()).unwrap();
    assert_eq!(e.cmd(&["reset", "--all"]).code, 0);
    assert_eq!(
        std::fs::read(e.dir().join("execute-state.json.bak")).unwrap(),
        before
    );
    let s = e.state();
    assert_eq!(s["status"], "pending");
    assert_eq!(s["started_at"], Value::Null);
    assert_eq!(s["merge_queue"], json!([]));
    assert_eq!(
        s["tasks"]["L1-001"],
        json!({"status": "pending", "attempts": 0, "worktree_path": null, "branch": null})
    );
    assert_recount(&s);
}

#[test]
fn stores_listed_in_taskhook_json_are_found_and_hostile_paths_are_not() {
    let p = Project::new();
    let run = p.run(
        &["execute", "init", "work/plan", "--layer", "1-a=L1-001"],
        "",
    );
    assert_eq!(run.code, 0, "{run:?}");
    let cfg: Value = serde_json::from_str(
        &std::fs::read_to_string(p.root.join(".claude/taskhook.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(cfg["execute"], json!(["work/plan/execute-state.json"]));
    let st = p.run(&["execute", "status", "--json"], "").json();
    assert_eq!(st["stores"][0]["store"], "plan");
    // Paths outside the project, or through a symlink, are never stores.
    plant_outside_run(&p);
    p.write(".claude/taskhook.json", r#"{"execute": ["work/plan/execute-state.json", "../outside/execute-state.json", "/etc/execute-state.json", "link/execute-state.json", "work/plan/other.json"]}"#);
    let st = p.run(&["execute", "status", "--json"], "").json();
    assert_eq!(st["stores"].as_array().unwrap().len(), 1, "{st}");
    // The edit rule: a Write that leaves the state invalid is answered with a block.
    std::fs::write(
        p.root.join("work/plan/execute-state.json"),
        r#"{"schema_version": "1.0"}"#,
    )
    .unwrap();
    let mut w = p.payload("PostToolUse.Write.json");
    w["tool_input"]["file_path"] = json!(p.root.join("work/plan/execute-state.json"));
    let v = p.hook(&w).json();
    assert_eq!(v["decision"], "block", "{v}");
    assert!(
        v["reason"].as_str().unwrap().contains("execute-state"),
        "{v}"
    );
}

#[test]
fn events_that_change_nothing_touch_nothing() {
    let e = Exec::init("shop", &["1-core=L1-001"]);
    let before = e.p.snapshot();
    silent(&e.p.hook(&e.p.payload("PostToolUse.Read.json")));
    silent(&e.commit(None, "main", "abcdef1", "chore: nothing to do with a task"));
    silent(&e.merge("feature-x"));
    silent(&e.launch("L9-404"));
    silent(&e.bound("L9-404", "<signal>L9-404_DONE</signal>"));
    assert_eq!(e.p.snapshot(), before);
    // A SessionStart on a consistent, untouched run writes nothing either.
    e.p.hook(&e.p.payload("SessionStart.startup.json"));
    assert_eq!(e.p.snapshot(), before);
}

#[test]
fn special_and_huge_state_files_and_long_reports_are_bounded() {
    // A FIFO in place of the state is never opened (a read would hang).
    let e = Exec::init("shop", &["1-core=L1-001"]);
    std::fs::remove_file(e.file()).unwrap();
    let st = std::process::Command::new("mkfifo")
        .arg(e.file())
        .status()
        .unwrap();
    assert!(st.success());
    let mut c = e.p.cmd();
    c.timeout(std::time::Duration::from_secs(20));
    let run = e.p.run_with(c, &["status"], "");
    assert!(run.stdout.contains("it is not a regular file"), "{run:?}");
    std::fs::remove_file(e.file()).unwrap();
    // A state of 17 MiB (a run of 60,000 tasks is that big) is read; one over 64 MiB is
    // refused, left as it is: never read, rebuilt or moved aside.
    let mut big =
        e.state_bytes_of(&json!({"schema_version": "2.0", "status": "pending", "tasks": {}}));
    big.extend(std::iter::repeat_n(b' ', 17 * 1024 * 1024));
    std::fs::write(e.file(), &big).unwrap();
    let run = e.p.hook(&e.p.payload("SessionStart.startup.json"));
    let ctx = run.context();
    assert!(ctx.contains("execute") && !ctx.contains("cap"), "{run:?}");
    assert!(
        !ctx.contains("refusing") && !ctx.contains("corrupt"),
        "{run:?}"
    );
    big.extend(std::iter::repeat_n(b' ', 48 * 1024 * 1024));
    std::fs::write(e.file(), &big).unwrap();
    let before = e.p.snapshot();
    let refusal = format!(
        "refusing to read `{}`: it is {} bytes, over taskhook's 64 MiB cap for an execute state; taskhook leaves it untouched and skips this run until it is smaller (shrink it, e.g. its long `errors` details, or restore a smaller copy)",
        e.file().display(),
        big.len()
    );
    let run = e.p.hook(&e.p.payload("SessionStart.startup.json"));
    assert_eq!(
        run.context(),
        format!("taskhook: execute shop: {refusal}"),
        "{run:?}"
    );
    let run = e.p.run(&["recover", "docs/tasks/shop"], "");
    assert_eq!(
        (run.code, run.stderr.as_str()),
        (1, format!("taskhook: {refusal}\n").as_str())
    );
    let st = e.p.run(&["status", "--json"], "").json();
    assert_eq!(st["stores"][0]["problems"], json!([refusal]), "{st:#}");
    assert!(silent_launch_refused(&e, &refusal));
    assert_eq!(e.p.snapshot(), before, "untouched, nothing set aside");

    // A whole test log pasted into <details> is kept cut to 4,000 characters.
    let e = Exec::init("shop", &["1-core=L1-001"]);
    silent(&e.launch("L1-001"));
    let log = "é".repeat(50_000);
    e.bound(
        "L1-001",
        &format!("<signal>L1-001_FAILED: red</signal><details>{log}</details>"),
    );
    let d = e.task("L1-001")["errors"][0]["details"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        d.starts_with("éééé") && d.ends_with("[… truncated by taskhook]"),
        "{}",
        d.len()
    );
    assert_eq!(d.chars().filter(|c| *c == 'é').count(), 4000);
}

#[test]
fn a_run_stopped_by_the_user_refuses_starts_until_resumed() {
    let e = Exec::init("shop", &["1-core=L1-001,L1-002"]);
    silent(&e.launch("L1-001"));
    let mut s = e.state();
    s["status"] = json!("stopped");
    std::fs::write(e.file(), serde_json::to_vec_pretty(&s).unwrap()).unwrap();
    let v = e.launch("L1-002").json();
    let why = v["hookSpecificOutput"]["permissionDecisionReason"]
        .as_str()
        .unwrap();
    assert!(
        why.contains("the run is stopped") && why.contains("taskhook execute resume"),
        "{why}"
    );
    // A session start keeps it stopped; the command continues it.
    e.p.hook(&e.p.payload("SessionStart.startup.json"));
    assert_eq!(e.state()["status"], "stopped");
    let out = e.cmd(&["resume"]).stdout;
    assert!(
        out.contains("changed: the run was stopped; it continues"),
        "{out}"
    );
    assert_eq!(e.state()["status"], "in_progress");
    silent(&e.launch("L1-002"));
}

#[test]
fn every_command_answers_json() {
    let p = Project::new();
    let v = p
        .run(
            &[
                "execute",
                "init",
                "docs/tasks/a",
                "--layer",
                "1-a=L1-001",
                "--json",
            ],
            "",
        )
        .json();
    assert_eq!(v["state"]["schema_version"], "2.0");
    let e = Exec {
        p,
        slug: "a".into(),
    };
    for args in [
        vec!["status"],
        vec!["start", "L1-001"],
        vec!["done", "L1-001"],
        vec!["fail", "L1-001", "--message", "red"],
        vec!["start", "L1-001"],
        vec!["merged", "L1-001"],
        vec!["metrics"],
        vec!["resume", "--dry-run"],
        vec!["resume"],
        vec!["reset-task", "L1-001"],
        vec!["reset", "--all"],
    ] {
        let mut a = args.clone();
        a.push("--json");
        let run = e.cmd(&a);
        assert_eq!(run.code, 0, "{args:?}: {run:?}");
        let v = run.json();
        assert!(v.is_object(), "{args:?}: {v}");
    }
    let out = e.cmd(&["start", "L1-001"]);
    assert_eq!(out.code, 0);
    let out = e.cmd(&["done", "L1-001"]).stdout;
    assert!(
        out.contains("then `taskhook execute done L1-001` again"),
        "{out}"
    );
}

/// A launch of L1-001 is answered with exactly `refusal` (as the store's error), nothing else.
fn silent_launch_refused(e: &Exec, refusal: &str) -> bool {
    let run = e.launch("L1-001");
    run.stdout.contains(refusal) || run.stderr.contains(refusal)
}

#[test]
fn refused_run_paths_and_linked_run_folders_are_reported_not_ignored() {
    let p = Project::new();
    let run = p.run(
        &["execute", "init", "work/plan", "--layer", "1-a=L1-001"],
        "",
    );
    assert_eq!(run.code, 0, "{run:?}");
    let outside = plant_outside_run(&p);
    // The seed's own example: an absolute tasks_path outside the project.
    let abs = outside.join("execute-state.json").display().to_string();
    p.write(
        ".claude/taskhook.json",
        serde_json::to_vec(&json!({"execute": ["work/plan/execute-state.json", p.root.join("work/plan/execute-state.json"), abs, "../outside/execute-state.json", "link/execute-state.json", "work/plan/other.json", "work/gone/execute-state.json"]})).unwrap(),
    );
    // A run folder under docs/tasks that is a link to a run elsewhere.
    std::fs::create_dir_all(p.root.join("docs/tasks")).unwrap();
    std::os::unix::fs::symlink(&outside, p.root.join("docs/tasks/linked")).unwrap();
    let listing = || {
        [p.root.join("work/plan"), outside.clone()]
            .iter()
            .map(|d| crate::common::snapshot(d))
            .collect::<Vec<_>>()
    };
    let before = listing();
    let root = p.root.display().to_string();
    let want = [
        format!("`.claude/taskhook.json` lists \"{abs}\" under \"execute\": refused, it is outside the project ({root}); taskhook reads and writes runs only inside the project: move the run into it (e.g. docs/tasks/SLUG/) and list that path"),
        format!("`.claude/taskhook.json` lists \"../outside/execute-state.json\" under \"execute\": refused, it is outside the project ({root}); taskhook reads and writes runs only inside the project: move the run into it (e.g. docs/tasks/SLUG/) and list that path"),
        "`.claude/taskhook.json` lists \"link/execute-state.json\" under \"execute\": refused, link is a symbolic link and taskhook never reads or writes a run through a link (if you did not make it, remove it)".to_string(),
        "`.claude/taskhook.json` lists \"work/plan/other.json\" under \"execute\", which is not a run: the file must be named execute-state.json".to_string(),
        "`.claude/taskhook.json` lists \"work/gone/execute-state.json\" under \"execute\", which does not exist".to_string(),
        "docs/tasks/linked is a symbolic link to a run folder: taskhook never reads or writes a run through a link, so this run is not tracked (if you did not make it, remove it)".to_string(),
    ];
    let st = p.run(&["status", "--json"], "").json();
    let problems: Vec<String> = st["stores"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["layout"] == "execute")
        .flat_map(|s| s["problems"].as_array().unwrap().clone())
        .map(|x| x.as_str().unwrap().to_string())
        .collect();
    assert_eq!(problems, want, "{st:#}");
    // The listed run inside the project (also by its absolute path) is the one run found.
    let ex = p.run(&["execute", "status", "--json"], "").json();
    assert_eq!(ex["stores"].as_array().unwrap().len(), 1, "{ex}");
    let doctor = p.run(&["doctor"], "").stdout;
    for w in &want {
        assert!(doctor.contains(w.as_str()), "missing {w:?} in:\n{doctor}");
    }
    assert_eq!(listing(), before, "reported, nothing written");
}

/// A copy of `work/plan`'s run outside the project, and `link` in the project pointing to it;
/// returns the outside folder.
fn plant_outside_run(p: &Project) -> std::path::PathBuf {
    let outside = p.tmp.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::copy(
        p.root.join("work/plan/execute-state.json"),
        outside.join("execute-state.json"),
    )
    .unwrap();
    std::os::unix::fs::symlink(&outside, p.root.join("link")).unwrap();
    outside
}

#[test]
fn init_refuses_settings_it_cannot_edit_before_writing_anything() {
    let p = Project::new();
    // Settings that are JSON but not an object: an init outside docs/tasks/ must register the
    // run there, and would have replaced them with an object of its own.
    p.write(".claude/taskhook.json", "[\"kept\"]\n");
    let run = p.run(
        &["execute", "init", "work/plan", "--layer", "1-a=L1-001"],
        "",
    );
    assert_eq!(run.code, 1, "{run:?}");
    run.assert_one_line_error();
    assert!(run.stderr.contains("is not a JSON object"), "{run:?}");
    assert_eq!(
        std::fs::read_to_string(p.root.join(".claude/taskhook.json")).unwrap(),
        "[\"kept\"]\n"
    );
    assert!(!p.root.join("work/plan/execute-state.json").exists());
}
