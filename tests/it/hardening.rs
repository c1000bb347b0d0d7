//! The smaller hardening items of issue 9, through the real binary: format drift, one lock
//! deadline per invocation, stale temp files cleaned at the next write, ids Windows cannot
//! name, long derived ids, saturating counters, and the output cap in UTF-16 units.

use std::time::{Duration, Instant, SystemTime};

use serde_json::{json, Value};
use taskhook::store::{folder_lock_path, Clock, Store};

use crate::common::Project;

fn iterative(p: &Project, slug: &str, unit: &str) -> std::path::PathBuf {
    p.new_slug(slug, &[unit], 5)
}

#[test]
fn fields_no_handler_reads_and_lone_surrogates_never_fail_a_payload() {
    let p = Project::new();
    let drift = |mut v: Value| {
        v["duration_ms"] = json!(43.5);
        v["permission_mode"] = json!({"mode": "plan"});
        v["tool_use_id"] = json!(7);
        v["transcript_path"] = json!(["moved"]);
        v
    };
    let run = p.hook(&drift(p.payload("PostToolUse.Read.json")));
    assert_eq!(
        (run.code, run.stdout.as_str(), run.stderr.as_str()),
        (0, "", "")
    );
    let run = p.hook(&drift(p.payload("PostToolUse.TodoWrite.json")));
    assert_eq!(run.code, 0, "{run:?}");
    assert!(p.home.join(".claude/tasks/proj/tasks.json").exists());
    let run = p.hook(&json!({"hook_event_name": "Teleport", "cwd": 5, "session_id": []}));
    assert_eq!(
        (run.code, run.stdout.as_str(), run.stderr.as_str()),
        (0, "", "")
    );
    // A subagent's final message cut in the middle of an emoji still signals.
    let dir = iterative(&p, "x", "T1");
    let mut stop = p.payload("SubagentStop.json");
    stop["last_assistant_message"] = json!("Done <CUT> <signal>T1_DONE</signal>");
    let text = serde_json::to_string(&stop)
        .unwrap()
        .replace("<CUT>", "\\ud83d");
    let run = p.run(&["hook"], text);
    assert_eq!(run.code, 0, "{run:?}");
    let state: Value =
        serde_json::from_slice(&std::fs::read(dir.join("state.json")).unwrap()).unwrap();
    assert_eq!(state["tasks"]["T1"]["status"], "confirming");
}

#[test]
fn every_lock_of_one_invocation_shares_one_deadline() {
    let p = Project::new();
    let locks: Vec<_> = [("a", "A1"), ("b", "B1"), ("c", "C1")]
        .iter()
        .map(|(slug, unit)| folder_lock_path(&iterative(&p, slug, unit)))
        .collect();
    let (held_tx, held_rx) = std::sync::mpsc::channel();
    let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
    let holder = std::thread::spawn(move || {
        let s = Store::new(Clock::system(), Duration::from_secs(5));
        s.trust(&std::env::temp_dir(), false);
        s.with_lock(&locks[0], || {
            s.with_lock(&locks[1], || {
                s.with_lock(&locks[2], || {
                    held_tx.send(()).unwrap();
                    done_rx.recv().unwrap();
                    Ok(())
                })
            })
        })
        .unwrap();
    });
    held_rx.recv().unwrap();
    let before = p.snapshot();
    let mut stop = p.payload("SubagentStop.json");
    stop["last_assistant_message"] =
        json!("<signal>A1_DONE</signal> <signal>B1_DONE</signal> <signal>C1_DONE</signal>");
    let mut cmd = p.cmd();
    cmd.env("TASKHOOK_LOCK_TIMEOUT", "1.5");
    let start = Instant::now();
    let run = p.run_with(cmd, &["hook"], serde_json::to_vec(&stop).unwrap());
    let waited = start.elapsed();
    done_tx.send(()).unwrap();
    holder.join().unwrap();
    // Three contended stores wait 1.5 s in all, not 3 × 1.5 s.
    assert!(waited < Duration::from_secs(3), "{waited:?}: {run:?}");
    assert!(waited >= Duration::from_millis(1500), "{waited:?}");
    assert!(run.stdout.contains(".taskhook.lock") || run.stderr.contains(".taskhook.lock"));
    assert_eq!(p.snapshot(), before);
}

#[test]
fn a_write_removes_its_files_stale_temps() {
    let p = Project::new();
    let write = |id: &str| {
        let run = p.run(&["tasks", "write", "--id", id, "--description", id], "");
        assert_eq!(run.code, 0, "{run:?}");
    };
    write("a");
    let list = p.home.join(".claude/tasks/proj");
    let plant = |name: &str, age: u64| {
        let f = std::fs::File::create(list.join(name)).unwrap();
        f.set_modified(SystemTime::now() - Duration::from_secs(age))
            .unwrap();
    };
    plant(".tasks.json.tmp-killed", 600);
    plant(".tasks.json.tmp-killed-just-now", 0);
    plant(".tasks.json.tmp-in-flight", 600);
    plant(".other.json.tmp-killed", 600);
    // A write under way holds its temp file's lock, however old the file.
    let mut in_flight =
        fd_lock::RwLock::new(std::fs::File::open(list.join(".tasks.json.tmp-in-flight")).unwrap());
    let held = in_flight.try_write().unwrap();
    write("b");
    drop(held);
    let mut names: Vec<String> = std::fs::read_dir(&list)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            ".other.json.tmp-killed",
            ".tasks.json.lock",
            ".tasks.json.tmp-in-flight",
            "tasks.json"
        ]
    );
}

#[test]
fn ids_windows_cannot_name_are_refused_and_long_derived_ids_fit() {
    let p = Project::new();
    let before = p.snapshot();
    for slug in ["CON", "nul.md", "a:b", "x\u{202E}y", "dot.", "COM1"] {
        p.run(&["iterative", "new", slug, "--task", "T1"], "")
            .assert_one_line_error();
    }
    let mut c = p.cmd();
    c.env("CLAUDE_CODE_TASK_LIST_ID", "LPT1");
    p.run_with(c, &["tasks", "write", "--description", "x"], "")
        .assert_one_line_error();
    assert_eq!(p.snapshot(), before);
    // A package name of 128 "é" (256 bytes) becomes a list id of at most 200 bytes.
    p.write("package.json", json!({"name": "é".repeat(128)}).to_string());
    let run = p.run(&["tasks", "write", "--description", "x"], "");
    assert_eq!(run.code, 0, "{run:?}");
    let lists: Vec<String> = std::fs::read_dir(p.home.join(".claude/tasks"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(lists.len(), 1);
    assert!(
        lists[0].len() <= 200 && lists[0].starts_with('é'),
        "{lists:?}"
    );
}

#[test]
fn counters_saturate_instead_of_reopening_a_timed_out_unit() {
    let p = Project::new();
    let dir = iterative(&p, "x", "T1");
    let path = dir.join("state.json");
    let mut state: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let t1 = &mut state["tasks"]["T1"];
    t1["status"] = json!("timeout");
    t1["iterations_used"] = json!(u64::MAX);
    t1["reason"] = json!("hit max iterations (5)");
    std::fs::write(&path, serde_json::to_vec_pretty(&state).unwrap()).unwrap();
    let mut stop = p.payload("SubagentStop.json");
    stop["last_assistant_message"] = json!("<signal>T1_DONE</signal>");
    let run = p.hook(&stop);
    assert_eq!(run.code, 0, "{run:?}");
    let state: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    assert_eq!(state["tasks"]["T1"]["status"], "timeout", "{state}");
    assert_eq!(state["tasks"]["T1"]["iterations_used"], json!(u64::MAX));
}

#[test]
fn output_is_capped_in_utf16_units_as_claude_code_counts() {
    let p = Project::new();
    let dir = iterative(&p, "x", "T1");
    std::fs::write(dir.join("context.md"), "😀".repeat(4000)).unwrap();
    std::fs::write(dir.join("guardrails.md"), "😀".repeat(4000)).unwrap();
    let run = p.hook(&p.payload("SessionStart.startup.json"));
    assert_eq!(run.code, 0, "{run:?}");
    let ctx = run.context();
    let units = ctx.encode_utf16().count();
    // The SessionStart context keeps to its own budget (8,000 units), well inside Claude
    // Code's cap, and says where it was cut.
    assert!(units <= 8_000, "{units} UTF-16 units");
    assert!(
        ctx.ends_with("[… cut: `taskhook status` shows the rest]"),
        "{}",
        &ctx[ctx.len() - 60..]
    );
    assert!(
        ctx.starts_with("taskhook · 1 store(s) in this project:"),
        "{ctx}"
    );
}
