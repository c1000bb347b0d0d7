//! SessionStart's check of the folders against order.json and history.jsonl: each kind of
//! inconsistency repaired from the history (and logged, and reported), a workspace written by
//! the seed's own scripts taken as it is, and real kills of the binary between a rename and its
//! history line, repaired.

use std::process::Stdio;
use std::time::Duration;

use serde_json::{json, Value};

use super::{ok, payload, Ws};

fn session_start(w: &Ws) -> crate::common::Run {
    w.hook(&payload(w, "SessionStart.startup.json"))
}

fn mv(w: &Ws, from: &str, to: &str) {
    std::fs::rename(w.path(from), w.path(to)).unwrap();
}

#[test]
fn a_kill_between_the_rename_and_the_history_line_is_recorded_at_session_start() {
    let w = Ws::seeded();
    // What `start foo.md` killed after its rename leaves: the file moved, no line.
    mv(&w, "tasks/pending/foo.md", "tasks/in_progress/foo.md");
    let lines = w.history_lines().len();
    let run = session_start(&w);
    let ctx = run.context();
    assert!(
        ctx.contains(
            "Reconciled: foo.md is in in_progress/ but its last history event put it in pending/"
        ),
        "{ctx}"
    );
    assert!(
        run.json()["systemMessage"]
            .as_str()
            .unwrap()
            .contains("repaired: foo.md"),
        "{run:?}"
    );
    let h = w.history();
    assert_eq!(h.len(), lines + 1);
    let last = h.last().unwrap();
    assert_eq!(last["action"], "repair");
    assert_eq!(
        (
            last["task"].clone(),
            last["from"].clone(),
            last["to"].clone()
        ),
        (json!("foo.md"), json!("pending"), json!("in_progress"))
    );
    assert!(last["reason"]
        .as_str()
        .unwrap()
        .starts_with("repair at session start: "));
    // Consistent now: the next session changes nothing, and the work goes on.
    let before = crate::common::snapshot(&w.dir);
    let again = session_start(&w).context();
    assert!(!again.contains("Reconciled"), "{again}");
    assert!(again.contains("In progress: foo.md"), "{again}");
    assert_eq!(crate::common::snapshot(&w.dir), before);
    ok(&w.cdd(&["done", "foo.md"]));
}

#[test]
fn duplicates_strays_and_interrupted_imports_are_repaired_from_the_history() {
    let w = Ws::seeded();
    ok(&w.cdd(&["start", "foo.md"]));
    ok(&w.cdd(&["done", "foo.md"]));
    // foo.md copied back into pending/ by hand: the history says completed.
    std::fs::copy(
        w.path("tasks/completed/foo.md"),
        w.path("tasks/pending/foo.md"),
    )
    .unwrap();
    // bar.md and baz.md both in in_progress/: the history started neither.
    mv(&w, "tasks/pending/bar.md", "tasks/in_progress/bar.md");
    mv(&w, "tasks/pending/baz.md", "tasks/in_progress/baz.md");
    let ctx = session_start(&w).context();
    assert!(
        ctx.contains("foo.md was in both completed/ and pending/"),
        "{ctx}"
    );
    assert!(
        ctx.contains("bar.md moved from in_progress/ to pending/"),
        "{ctx}"
    );
    assert!(
        ctx.contains("baz.md moved from in_progress/ to pending/"),
        "{ctx}"
    );
    assert_eq!(w.folders_of("foo.md"), ["completed"]);
    assert_eq!(w.folders_of("bar.md"), ["pending"]);
    assert_eq!(w.folders_of("baz.md"), ["pending"]);
    let strays: Vec<_> = std::fs::read_dir(w.path("tmp"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        strays.len(),
        1,
        "the second copy is kept in tmp/: {strays:?}"
    );
    let repairs = w
        .history()
        .into_iter()
        .filter(|l| l["action"] == "repair")
        .count();
    assert_eq!(repairs, 3);

    // An import killed after its line: the file still in tasks/, the history says pending.
    std::fs::write(w.path("tasks/order.json"), r#"{"tasks": [{"task": "foo.md"}, {"task": "bar.md"}, {"task": "baz.md"}, {"task": "qux.md"}]}"#).unwrap();
    std::fs::write(w.path("tasks/qux.md"), "# qux\n").unwrap();
    let mut h = std::fs::read_to_string(w.path("tasks/history.jsonl")).unwrap();
    h.push_str("{\"timestamp\": \"2026-03-01T12:00:00Z\", \"action\": \"import\", \"task\": \"qux.md\", \"to\": \"pending\"}\n");
    std::fs::write(w.path("tasks/history.jsonl"), h).unwrap();
    let ctx = session_start(&w).context();
    assert!(
        ctx.contains("qux.md moved from tasks/ to pending/"),
        "{ctx}"
    );
    assert_eq!(w.folders_of("qux.md"), ["pending"]);

    // A file gone from every folder cannot be repaired: it is reported, nothing moves.
    std::fs::remove_file(w.path("tasks/pending/qux.md")).unwrap();
    let before = crate::common::snapshot(&w.dir);
    let ctx = session_start(&w).context();
    assert!(
        ctx.contains("qux.md: the history puts it in pending/, but its file is in no folder"),
        "{ctx}"
    );
    assert_eq!(crate::common::snapshot(&w.dir), before);
}

#[test]
fn a_workspace_made_by_the_seeds_scripts_is_read_and_advanced_as_it_is() {
    let w = Ws::new();
    let t = w.path("tasks");
    for f in ["pending", "in_progress", "completed", "failed"] {
        std::fs::create_dir_all(t.join(f)).unwrap();
    }
    for d in ["tmp", "research", "plan", "user-stories"] {
        std::fs::create_dir_all(w.path(d)).unwrap();
    }
    std::fs::write(w.path("research/notes.md"), "ignored").unwrap();
    // 4-space JSON, compact history lines with milliseconds, as a JavaScript script writes them.
    let order = json!({"tasks": [
        {"task": "foo.md", "group": "Core", "model": "sonnet", "thinking": "none"},
        {"task": "bar.md", "group": "Tests", "model": "sonnet", "thinking": "thinking", "notes": "keep me"},
        {"stop": "verify-core", "message": "Verify core features work before proceeding"},
        {"task": "baz.md", "group": "Integration", "model": "sonnet", "thinking": "none"}
    ], "version": 1});
    let mut text = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(
        &mut text,
        serde_json::ser::PrettyFormatter::with_indent(b"    "),
    );
    serde::Serialize::serialize(&order, &mut ser).unwrap();
    std::fs::write(t.join("order.json"), &text).unwrap();
    let history = [
        r#"{"timestamp":"2026-03-01T11:00:00.000Z","action":"import","task":"foo.md","to":"pending"}"#,
        r#"{"timestamp":"2026-03-01T11:00:00.001Z","action":"import","task":"bar.md","to":"pending"}"#,
        r#"{"timestamp":"2026-03-01T11:00:00.002Z","action":"import","task":"baz.md","to":"pending"}"#,
        r#"{"timestamp":"2026-03-01T11:01:00.500Z","action":"start","task":"foo.md","from":"pending","to":"in_progress"}"#,
        r#"{"timestamp":"2026-03-01T11:20:00.000Z","action":"done","task":"foo.md","from":"in_progress","to":"completed","elapsed_seconds":1139.5}"#,
        r#"{"timestamp":"2026-03-01T11:21:00.000Z","action":"escalate","task":"bar.md","from_model":"sonnet","from_thinking":"thinking","to_model":"sonnet","to_thinking":"extended"}"#,
        r#"{"timestamp":"2026-03-01T11:40:00.250Z","action":"start","task":"bar.md","from":"pending","to":"in_progress"}"#,
    ];
    std::fs::write(t.join("history.jsonl"), history.join("\n") + "\n").unwrap();
    std::fs::write(t.join("completed/foo.md"), "# foo").unwrap();
    std::fs::write(t.join("in_progress/bar.md"), "# bar").unwrap();
    std::fs::write(t.join("pending/baz.md"), "# baz").unwrap();
    let before = crate::common::snapshot(&w.dir);
    let ctx = session_start(&w).context();
    assert!(!ctx.contains("Reconciled"), "{ctx}");
    assert!(!ctx.contains("Problems"), "{ctx}");
    assert!(ctx.contains("In progress: bar.md"), "{ctx}");
    assert_eq!(
        crate::common::snapshot(&w.dir),
        before,
        "a consistent workspace is not written"
    );
    assert_eq!(ok(&w.cdd(&["next"]))["task"], "bar.md");
    // Advanced: elapsed from the script's millisecond start, unknown fields kept.
    let d = ok(&w.cdd(&["done", "bar.md"]));
    assert_eq!(d["elapsed_seconds"], 1199);
    let d = ok(&w.cdd(&["escalate", "baz.md", "needs more"]));
    assert_eq!(d["level"], 1);
    let o = w.order();
    assert_eq!(o["tasks"][1]["notes"], "keep me");
    assert_eq!(o["version"], 1);
    assert_eq!(ok(&w.cdd(&["next"]))["type"], "stop");
    let stats = ok(&w.cdd(&["stats"]));
    assert_eq!(
        stats["elapsed_seconds"]["per_task"]["foo.md"],
        json!(1139.5)
    );
    assert_eq!(stats["stops"]["waiting"], json!(["verify-core"]));
    assert!(w.path("research/notes.md").exists());
}

/// The folder a task is in by the history's last event that says one.
fn history_folder(h: &[Value], task: &str) -> Option<String> {
    h.iter()
        .rev()
        .filter(|l| l["task"] == task)
        .find_map(|l| match l["action"].as_str() {
            Some("escalate") => Some("pending".to_string()),
            _ => l["to"].as_str().map(str::to_string),
        })
}

fn reconcile(w: &Ws) {
    let mut c = w.p.cmd();
    c.env("CDD_DIR", &w.dir);
    let run = w.p.run_with(c, &["reconcile"], "");
    assert_eq!(run.code, 0, "{run:?}");
}

/// After SessionStart's repair, every task of the order is in exactly one folder, and it is
/// the folder its history says.
fn assert_consistent(w: &Ws, tasks: &[String]) {
    let h = w.history();
    for t in tasks {
        let f = w.folders_of(t);
        assert_eq!(f.len(), 1, "{t} in {f:?}");
        assert_eq!(history_folder(&h, t).as_deref(), Some(f[0]), "{t}: {h:#?}");
    }
}

#[test]
fn real_kills_of_moves_are_always_repaired() {
    let w = Ws::new();
    w.ok(&["init"]);
    let tasks: Vec<String> = (0..25).map(|i| format!("t{i:02}.md")).collect();
    let order = json!({"tasks": tasks.iter().map(|t| json!({"task": t})).collect::<Vec<_>>()});
    let names: Vec<&str> = tasks.iter().map(String::as_str).collect();
    w.write_tasks(&order.to_string(), &names);
    w.ok(&["import"]);
    let bin = assert_cmd::cargo::cargo_bin("taskhook");
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut killed = 0;
    for t in &tasks {
        for verb in ["start", "done"] {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let delay = Duration::from_micros((seed >> 33) % 40_000);
            let mut child = std::process::Command::new(&bin)
                .args(["cdd", verb, t])
                .env_clear()
                .env("PATH", std::env::var_os("PATH").unwrap_or_default())
                .env("HOME", &w.p.home)
                .env("CDD_DIR", &w.dir)
                .current_dir(&w.p.root)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap();
            std::thread::sleep(delay);
            if child.try_wait().unwrap().is_none() {
                let _ = child.kill();
                killed += 1;
            }
            let _ = child.wait();
            reconcile(&w);
            assert_consistent(&w, &tasks);
        }
        // Whatever the kills left, finish the task so the next one may start.
        if w.folders_of(t) == ["in_progress"] {
            w.ok(&["done", t]);
        }
    }
    eprintln!(
        "cdd kill test: {killed} of {} runs killed before they finished; {} repaired",
        tasks.len() * 2,
        w.history()
            .iter()
            .filter(|l| l["action"] == "repair")
            .count()
    );
    assert!(w.history().iter().all(|l| l.is_object()));
}
