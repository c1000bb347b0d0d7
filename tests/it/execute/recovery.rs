//! A corrupt execute-state.json is rebuilt only from a copy known to be the latest: the copy
//! taskhook keeps of every state it writes or sees valid (`.execute-state.json.last-good`),
//! never from `execute-state.json.bak` (the state before the last reset). `recover --dry-run`
//! says what would be kept and dropped.

use serde_json::json;

use super::{silent, Exec};
use crate::common::NOW;

const LAST_GOOD: &str = ".execute-state.json.last-good";

fn text(p: &std::path::Path) -> String {
    String::from_utf8(std::fs::read(p).unwrap()).unwrap()
}

/// A run whose L0-002 was abandoned, reset (the `.bak` holds the abandoned run) and then
/// completed.
fn reset_then_completed() -> Exec {
    let e = Exec::init("shop", &["0-setup=L0-001,L0-002"]);
    silent(&e.launch("L0-002"));
    for _ in 0..5 {
        e.bound("L0-002", "<signal>L0-002_FAILED: red</signal>");
    }
    assert_eq!(e.state()["status"], "abandoned");
    assert_eq!(e.cmd(&["reset-task", "L0-002"]).code, 0);
    silent(&e.launch("L0-002"));
    for verb in ["done", "done", "merged"] {
        assert_eq!(e.cmd(&[verb, "L0-002"]).code, 0);
    }
    assert_eq!(e.status("L0-002"), "completed");
    e
}

#[test]
fn a_corrupt_state_is_rebuilt_from_the_latest_copy_not_the_backup() {
    let e = reset_then_completed();
    let good = text(&e.file());
    assert_eq!(text(&e.dir().join(LAST_GOOD)), good);
    let bad = b"{\"schema_version\": \"2.0\", \"tasks\": {\"L0-0";
    std::fs::write(e.file(), bad).unwrap();

    // Hooks refuse it, untouched.
    let run = e.launch("L0-001");
    assert!(run.stderr.contains("is corrupt"), "{run:?}");
    assert_eq!(std::fs::read(e.file()).unwrap(), bad);

    // `status` says where the rebuild comes from.
    let st = e.p.run(&["status", "--json"], "").json();
    let problem = st["stores"][0]["problems"][0].as_str().unwrap().to_string();
    assert!(problem.ends_with("; the next session start (or `taskhook execute resume`) rebuilds it from the last valid state taskhook saw (.execute-state.json.last-good, updated 2026-03-01T12:00:00Z) and git"), "{problem}");

    // recover --dry-run: what would be kept and dropped; nothing written.
    let before = e.p.snapshot();
    let run = e.p.run(&["recover", "docs/tasks/shop", "--dry-run"], "");
    assert_eq!(run.code, 0, "{run:?}");
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert!(
        lines[0].starts_with(&format!(
            "Would rebuild {}: execute-state.json is unusable (not valid JSON: ",
            e.file().display()
        )),
        "{}",
        run.stdout
    );
    assert_eq!(
        &lines[1..],
        [
            "  keep: the last valid state taskhook saw (.execute-state.json.last-good, updated 2026-03-01T12:00:00Z): run in_progress, 2 task(s): L0-001 pending, L0-002 completed.",
            "  drop: the unusable file (41 bytes), set aside as execute-state.json.corrupt-20260301T120000Z, not deleted; anything it held that this copy lacks is not in the rebuild.",
            "  not used: execute-state.json.bak, the state before the last reset (updated 2026-03-01T12:00:00Z).",
        ],
        "{}",
        run.stdout
    );
    assert_eq!(e.p.snapshot(), before, "--dry-run writes nothing");

    // SessionStart rebuilds it: the reset and the completion since are kept.
    let run = e.p.hook(&e.p.payload("SessionStart.startup.json"));
    let ctx = run.context();
    assert!(
        ctx.contains("; moved it to execute-state.json.corrupt-20260301T120000Z and rebuilt it from the last valid state taskhook saw (.execute-state.json.last-good, updated 2026-03-01T12:00:00Z) and git."),
        "{ctx}"
    );
    assert!(
        run.json()["systemMessage"]
            .as_str()
            .unwrap()
            .starts_with("taskhook: execute shop: execute-state.json was unusable (not valid JSON"),
        "{run:?}"
    );
    assert_eq!(text(&e.file()), good);
    let s = e.state();
    assert_eq!(s["status"], "in_progress");
    assert_eq!(s["tasks"]["L0-002"]["status"], "completed");
    assert_eq!(
        std::fs::read(e.dir().join("execute-state.json.corrupt-20260301T120000Z")).unwrap(),
        bad
    );
}

#[test]
fn without_a_copy_of_the_latest_state_a_corrupt_one_stays_refused() {
    let e = reset_then_completed();
    std::fs::remove_file(e.dir().join(LAST_GOOD)).unwrap();
    std::fs::write(e.file(), b"[]").unwrap();
    let before = e.p.snapshot();
    let why = "there is no valid copy of its latest state to rebuild it from (.execute-state.json.last-good): restore it from git or a copy, or fix it by hand; execute-state.json.bak is older, the state before the last reset (updated 2026-03-01T12:00:00Z): copy it over only to go back to then";
    let ctx =
        e.p.hook(&e.p.payload("SessionStart.startup.json"))
            .context();
    assert!(ctx.contains(why), "{ctx}");
    let st = e.p.run(&["status", "--json"], "").json();
    assert!(
        st["stores"][0]["problems"][0]
            .as_str()
            .unwrap()
            .ends_with(why),
        "{st:#}"
    );
    let run = e.p.run(&["recover", "docs/tasks/shop"], "");
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stderr.contains(why), "{run:?}");
    assert_eq!(e.cmd(&["resume"]).code, 1);
    assert_eq!(e.p.snapshot(), before, "nothing written");
}

#[test]
fn the_copy_follows_a_state_written_by_someone_else() {
    // A state the seed's own skill wrote: the first session start keeps a copy of it.
    let e = reset_then_completed();
    let mut s = e.state();
    s["tasks"]["L0-001"]["status"] = json!("in_progress");
    s["tasks"]["L0-001"]["attempts"] = json!(1);
    std::fs::write(e.file(), serde_json::to_vec_pretty(&s).unwrap()).unwrap();
    e.p.hook(&e.p.payload("SessionStart.startup.json"));
    assert_eq!(text(&e.dir().join(LAST_GOOD)), text(&e.file()));
    // An edit by Claude's Write tool is copied at its PostToolUse.
    s["tasks"]["L0-001"]["attempts"] = json!(2);
    let edited = serde_json::to_vec_pretty(&s).unwrap();
    std::fs::write(e.file(), &edited).unwrap();
    let mut w = e.p.payload("PostToolUse.Write.json");
    w["tool_input"]["file_path"] = json!(e.file());
    // (Silent: the notice that L0-002 was abandoned is false since its reset and completion.)
    silent(&e.p.hook(&w));
    assert_eq!(
        text(&e.dir().join(LAST_GOOD)),
        String::from_utf8(edited).unwrap()
    );
    // Then broken: the rebuild keeps the edit.
    std::fs::write(e.file(), b"{").unwrap();
    let out = e.cmd(&["resume"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(e.task("L0-001")["attempts"], 2);
    assert_eq!(e.state()["updated_at"], NOW);
}

/// A file beside the state, last modified `secs_ago` seconds ago.
fn left_file(e: &Exec, name: &str, bytes: &[u8], secs_ago: u64) -> std::path::PathBuf {
    let path = e.dir().join(name);
    std::fs::write(&path, bytes).unwrap();
    let f = std::fs::File::options().write(true).open(&path).unwrap();
    f.set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(secs_ago))
        .unwrap();
    path
}

#[test]
fn temp_files_of_a_killed_write_go_at_the_next_session_start_unless_a_live_process_holds_them() {
    let e = Exec::init("shop", &["1-core=L1-001"]);
    // A write killed a moment ago (no process holds its temp file): removed now, not in 5
    // minutes.
    let killed = left_file(&e, ".execute-state.json.tmp-0b6c", b"{\"half", 0);
    // A write still running (its process holds the temp file's lock), even an old one: kept.
    let live = left_file(&e, ".execute-state.json.tmp-77aa", b"{\"busy", 600);
    let mut held = fd_lock::RwLock::new(std::fs::File::open(&live).unwrap());
    let guard = held.try_write().unwrap();
    let ctx =
        e.p.hook(&e.p.payload("SessionStart.startup.json"))
            .context();
    assert!(
        ctx.contains("Reconciled: removed 1 abandoned temp file(s)."),
        "{ctx}"
    );
    assert!(!killed.exists());
    assert!(live.exists());
    drop(guard);
    // Once its process is gone, it goes too.
    e.p.hook(&e.p.payload("SessionStart.startup.json"));
    assert!(!live.exists());
}

#[test]
fn the_seeds_own_temp_file_is_reported_never_removed() {
    let e = Exec::init("shop", &["1-core=L1-001"]);
    let mut newer = e.state();
    newer["updated_at"] = json!("2026-03-01T12:05:00Z");
    let bytes = serde_json::to_vec_pretty(&newer).unwrap();
    let tmp = left_file(&e, "execute-state.json.tmp", &bytes, 600);
    let note = format!("execute-state.json.tmp is left beside the state ({} bytes, a valid state updated 2026-03-01T12:05:00Z; the state's is 2026-03-01T12:00:00Z): the seed's own write that never reached its rename. taskhook leaves it: if it is the state you want, `mv` it over execute-state.json; otherwise remove it", bytes.len());
    let ctx =
        e.p.hook(&e.p.payload("SessionStart.startup.json"))
            .context();
    assert!(ctx.contains(&note), "{ctx}");
    let st = e.p.run(&["status", "--json"], "").json();
    assert_eq!(st["stores"][0]["problems"], json!([note]), "{st:#}");
    assert_eq!(std::fs::read(&tmp).unwrap(), bytes);
    std::fs::write(&tmp, b"{\"tas").unwrap();
    let ctx =
        e.p.hook(&e.p.payload("SessionStart.startup.json"))
            .context();
    assert!(
        ctx.contains("execute-state.json.tmp is left beside the state (5 bytes, not a valid state: not valid JSON: "),
        "{ctx}"
    );
}
