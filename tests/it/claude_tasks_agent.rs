//! The agent's verbs on a claude-tasks list (issue 22), through the real binary: the verb flow
//! on a list anyone may work on, Claude Code's own list kept one truth with its on-disk task
//! files (the main agent is told the `TaskUpdate` to make, in Claude Code's ids), sessions that
//! never hand each other work (issue 26 item 10), and readable ids in SessionStart and every
//! reply (issue 26 item 9).

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::agent::{ok, refused, verb, A, B};
use crate::claude_tasks::{doc, task, write, SESSION};
use crate::claude_tasks_sessions::{create, post, update};
use crate::common::{Project, Run, NOW};

/// A hook payload run at `at`.
fn hook_at(p: &Project, payload: &Value, at: &str) -> Run {
    let mut c = p.cmd();
    c.env("TASKHOOK_NOW", at);
    let r = p.run_with(c, &["hook"], serde_json::to_vec(payload).unwrap());
    assert_eq!(r.code, 0, "{r:?}");
    r
}

/// SessionStart of `session` at `at`: its context.
fn session_start(p: &Project, session: &str, at: &str) -> String {
    let mut start = p.payload("SessionStart.startup.json");
    start["session_id"] = json!(session);
    hook_at(p, &start, at).context()
}

/// What the main agent of `session` reads at its next tool call.
fn main_context(p: &Project, session: &str) -> String {
    let mut read = p.payload("PostToolUse.Read.json");
    read["session_id"] = json!(session);
    let r = hook_at(p, &read, NOW);
    if r.stdout.is_empty() {
        return String::new();
    }
    r.context()
}

fn said(v: &Value) -> String {
    v["said"].to_string()
}

#[test]
fn the_verb_flow_on_a_list_anyone_may_work_on() {
    let p = Project::new();
    for args in [
        vec!["--id", "a", "--description", "Write the parser"],
        vec![
            "--id",
            "b",
            "--description",
            "Test the parser",
            "--dependency",
            "a",
        ],
    ] {
        assert_eq!(write(&p, &args).code, 0);
    }
    // next names a, with the commands to act on it.
    let n = ok(&verb(&p, Some(A), NOW, &["next", "--json"]));
    assert_eq!(n["unit"], "proj/a", "{n}");
    assert_eq!(n["layout"], "claude-tasks");
    assert_eq!(n["title"], "Write the parser");
    assert_eq!(n["then"]["claim"], "taskhook claim proj/a");
    // A claims it: in_progress, assigned to A's session.
    let c = ok(&verb(&p, Some(A), NOW, &["claim", "a", "--json"]));
    assert_eq!(c["phase"], "in_progress", "{c}");
    assert_eq!(c["claim"]["owner"], A);
    let d = doc(&p);
    assert_eq!(task(&d, "a")["status"], "in_progress");
    assert_eq!(task(&d, "a")["assignee"], "session aaaaaaaa");
    // B is refused, naming A; it cannot finish it either.
    refused(
        &verb(&p, Some(B), NOW, &["claim", "proj/a"]),
        &["held by session aaaaaaaa", "lease ends"],
    );
    refused(
        &verb(&p, Some(B), NOW, &["done", "a"]),
        &["held by session aaaaaaaa", "only its owner"],
    );
    // B's next: nothing ready, and why says what blocks.
    let nb = ok(&verb(&p, Some(B), NOW, &["next", "--json"]));
    assert_eq!(nb["unit"], Value::Null, "{nb}");
    let why = nb["why"].as_str().unwrap();
    assert!(
        why.contains("held or in progress elsewhere: proj/a (session aaaaaaaa)")
            && why.contains(
                "waiting on other units: proj/b (waits for a (Write the parser) [in_progress])"
            ),
        "{why}"
    );
    // B cannot claim b before a is done: refused with what it waits for, nothing changed.
    let before = p.snapshot();
    refused(
        &verb(&p, Some(B), NOW, &["claim", "b"]),
        &["not ready", "waits for a (Write the parser) [in_progress]"],
    );
    assert_eq!(p.snapshot(), before);
    // A renews by hand, then finishes.
    let h = ok(&verb(
        &p,
        Some(A),
        "2026-03-01T12:10:00Z",
        &["heartbeat", "a", "--json"],
    ));
    assert_eq!(h["claim"]["lease_ends"], "2026-03-01T12:40:00Z", "{h}");
    let done = ok(&verb(
        &p,
        Some(A),
        NOW,
        &["done", "a", "--note", "in src/parse.rs", "--json"],
    ));
    assert_eq!(done["phase"], "done", "{done}");
    assert!(done["claim"].is_null(), "{done}");
    assert_eq!(done["ready"], json!(["b (Test the parser)"]), "{done}");
    let d = doc(&p);
    assert_eq!(task(&d, "a")["status"], "completed");
    assert_eq!(
        task(&d, "a")["metadata"]["custom_fields"]["done_note"],
        "in src/parse.rs"
    );
    assert_eq!(task(&d, "b")["status"], "pending");
    // next names the following one.
    let n = ok(&verb(&p, Some(A), NOW, &["next", "--json"]));
    assert_eq!(n["unit"], "proj/b", "{n}");
    // fail keeps the reason (in the task's metadata: seed 002 has no log), back to pending.
    ok(&verb(&p, Some(A), NOW, &["claim", "b"]));
    let f = ok(&verb(
        &p,
        Some(A),
        NOW,
        &["fail", "b", "--reason", "the fixture is missing", "--json"],
    ));
    assert_eq!(f["status"], "pending", "{f}");
    assert!(f["claim"].is_null(), "{f}");
    let d = doc(&p);
    assert_eq!(
        task(&d, "b")["metadata"]["custom_fields"]["last_failure"],
        json!({"at": NOW, "reason": "the fixture is missing"})
    );
    assert_eq!(task(&d, "b")["assignee"], Value::Null);
    let s = ok(&verb(&p, Some(A), NOW, &["show", "b", "--json"]));
    assert!(
        s["sections"].to_string().contains("the fixture is missing"),
        "{s}"
    );
    assert_eq!(s["deps"], json!([{"task": "a", "status": "completed"}]));
    // release gives it back: pending, assignee cleared.
    ok(&verb(&p, Some(A), NOW, &["claim", "b"]));
    let r = ok(&verb(&p, Some(A), NOW, &["release", "b", "--json"]));
    assert_eq!(r["status"], "pending", "{r}");
    assert_eq!(task(&doc(&p), "b")["assignee"], Value::Null);
    refused(
        &verb(&p, Some(A), NOW, &["release", "b"]),
        &["not in progress"],
    );
    // done on a unit nobody holds: an implicit claim, then done.
    ok(&verb(&p, Some(B), NOW, &["done", "b"]));
    let n = ok(&verb(&p, Some(A), NOW, &["next", "--json"]));
    assert_eq!(n["unit"], Value::Null, "{n}");
    assert_eq!(n["why"], "all 2 units are done", "{n}");
}

/// Claude Code's own task files of `session` as they were at `step` of the captured timeline
/// (tests/fixtures/claude-code-2.1.330/tasks_ondisk), written where Claude Code keeps them.
fn claude_files_at(p: &Project, session: &str, step: usize) -> PathBuf {
    let timeline: Value = serde_json::from_slice(
        &std::fs::read(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/claude-code-2.1.330/tasks_ondisk/timeline.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let dir = p.home.join(".claude/tasks").join(session);
    std::fs::create_dir_all(&dir).unwrap();
    for (name, text) in timeline["steps"][step]["files_at_hook_time"]
        .as_object()
        .unwrap()
    {
        let file = Path::new(name).file_name().unwrap();
        std::fs::write(dir.join(file), text.as_str().unwrap()).unwrap();
    }
    dir
}

/// The captured timeline's task tool calls (TaskCreate 1, TaskCreate 2, TaskUpdate 2
/// addBlockedBy 1) mirrored for `session`.
fn mirror_timeline(p: &Project, session: &str) {
    hook_at(
        p,
        &post(
            &p.root,
            session,
            "TaskCreate",
            json!({"subject": "Write parser", "description": "Implement the parser module",
                   "activeForm": "Writing parser"}),
            json!({"task": {"id": "1", "subject": "Write parser"}}),
        ),
        NOW,
    );
    hook_at(
        p,
        &post(
            &p.root,
            session,
            "TaskCreate",
            json!({"subject": "Test parser", "description": "Write tests for the parser",
                   "activeForm": "Testing parser", "metadata": {"phase": "T2", "prio": 1}}),
            json!({"task": {"id": "2", "subject": "Test parser"}}),
        ),
        NOW,
    );
    hook_at(
        p,
        &update(
            &p.root,
            session,
            json!({"taskId": "2", "addBlockedBy": ["1"]}),
        ),
        NOW,
    );
}

/// Every file of a folder with its bytes.
fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect();
    out.sort();
    out
}

#[test]
fn claude_codes_own_list_stays_one_truth() {
    let p = Project::new();
    let own = claude_files_at(&p, SESSION, 4);
    mirror_timeline(&p, SESSION);
    let me = Some(SESSION);
    // The session names its tasks by Claude Code's numbers.
    let n = ok(&verb(&p, me, NOW, &["next", "--json"]));
    assert_eq!(n["unit"], "proj/1", "{n}");
    assert_eq!(n["title"], "Write parser");
    let s = ok(&verb(&p, me, NOW, &["show", "2", "--json"]));
    assert_eq!(
        s["deps"],
        json!([{"task": "1", "status": "pending"}]),
        "{s}"
    );
    let sections = s["sections"].to_string();
    assert!(
        sections.contains("Write tests for the parser")
            && sections.contains("Testing parser")
            && sections.contains("Claude Code's task: #2")
            && sections.contains("2.json [pending]"),
        "{sections}"
    );
    // done by the verb: the mirror completes it, and says which TaskUpdate makes Claude Code's
    // own list agree, in Claude Code's id; Claude Code's files are read, never written.
    let before = files(&own);
    let d = ok(&verb(&p, me, NOW, &["done", "1", "--json"]));
    assert_eq!(d["unit"], "proj/1", "{d}");
    assert_eq!(d["status"], "completed", "{d}");
    let words = said(&d);
    assert!(
        words.contains("still shows task #1 (Write parser) as pending")
            && words
                .contains(r#"call TaskUpdate with {\"taskId\":\"1\",\"status\":\"completed\"}"#),
        "{words}"
    );
    assert!(!words.contains("@defa37fe"), "{words}");
    assert_eq!(files(&own), before);
    assert_eq!(task(&doc(&p), "1@defa37fe")["status"], "completed");
    // The model made that TaskUpdate (Claude Code's files as captured after it). Claiming 2
    // asks for the matching in_progress, and nothing about 1.
    claude_files_at(&p, SESSION, 9);
    let c = ok(&verb(&p, me, NOW, &["claim", "2", "--json"]));
    let words = said(&c);
    assert!(
        words.contains(r#"{\"taskId\":\"2\",\"status\":\"in_progress\"}"#) && !words.contains("#1"),
        "{words}"
    );
    // A subagent's signal completes 2: the reply's tasks_to_update (which Claude Code 2.1.330
    // ignores) names Claude Code's id, and the main agent's next tool call is told the
    // TaskUpdate.
    claude_files_at(&p, SESSION, 13);
    let mut stop = p.subagent_stop(
        "ag-1",
        "<task>2</task> test it",
        "done <signal>2_DONE</signal>",
    );
    stop["session_id"] = json!(SESSION);
    let out = hook_at(&p, &stop, NOW).json();
    assert_eq!(
        out["hookSpecificOutput"]["tasks_to_update"],
        json!([{"task_id": "2", "status": "completed"}]),
        "{out}"
    );
    let ctx = main_context(&p, SESSION);
    assert!(
        ctx.contains("a subagent completed task 2 (Test parser")
            && ctx.contains(r#"call TaskUpdate with {"taskId":"2","status":"completed"}"#),
        "{ctx}"
    );
    assert!(!ctx.contains('@'), "{ctx}");
    assert_eq!(task(&doc(&p), "2@defa37fe")["status"], "completed");
}

#[test]
fn a_failure_of_a_claude_code_task_asks_for_pending_again() {
    let p = Project::new();
    claude_files_at(&p, SESSION, 13);
    mirror_timeline(&p, SESSION);
    let me = Some(SESSION);
    ok(&verb(&p, me, NOW, &["done", "1"]));
    ok(&verb(&p, me, NOW, &["claim", "2"]));
    let f = ok(&verb(
        &p,
        me,
        NOW,
        &["fail", "2", "--reason", "tests red", "--json"],
    ));
    assert_eq!(f["status"], "pending", "{f}");
    let words = said(&f);
    assert!(
        words.contains("task 2 (Test parser")
            && words.contains("FAILED: tests red")
            && words.contains(r#"{\"taskId\":\"2\",\"status\":\"pending\"}"#),
        "{words}"
    );
    let t = &doc(&p)["tasks"][1];
    assert_eq!(
        t["metadata"]["custom_fields"]["last_failure"]["reason"],
        "tests red"
    );
}

#[test]
fn sessions_do_not_hand_each_other_work() {
    let p = Project::new();
    // A mirrors two tasks; B, later, one of its own. Both are Claude Code's task 1.
    hook_at(&p, &create(&p.root, A, "1", "Migrate database"), NOW);
    hook_at(&p, &create(&p.root, A, "2", "Seed data"), NOW);
    let at = "2026-03-01T12:05:00Z";
    hook_at(&p, &create(&p.root, B, "1", "Write docs"), at);
    // B's SessionStart: its own task by Claude Code's number; A's are A's, with A's session
    // and age, never offered as B's own ready or in-progress work; no `N@hex` anywhere.
    let ctx = session_start(&p, B, at);
    assert!(ctx.contains("next ready: proj/1 (Write docs)"), "{ctx}");
    assert!(
        ctx.contains(
            "Tasks of another live session (session aaaaaaaa, last active 5 min ago), not \
             yours to work on: #1 (Migrate database) [pending], #2 (Seed data) [pending]."
        ),
        "{ctx}"
    );
    assert!(
        !ctx.contains("@aaaaaaaa") && !ctx.contains("@bbbbbbbb"),
        "{ctx}"
    );
    let ready_line = ctx.lines().find(|l| l.starts_with("Ready:")).unwrap_or("");
    assert_eq!(ready_line, "Ready: 1 (Write docs).", "{ctx}");
    // B's next offers its own task; A's are not B's to claim.
    let n = ok(&verb(&p, Some(B), at, &["next", "--json"]));
    assert_eq!(n["unit"], "proj/1", "{n}");
    assert_eq!(n["title"], "Write docs");
    refused(
        &verb(&p, Some(B), at, &["claim", "proj/1@aaaaaaaa"]),
        &[
            "not ready",
            "session aaaaaaaa's task",
            "not yours to work on",
        ],
    );
    // Both claim their own task 1: the claims never mix (they are recorded under the
    // mirror's ids), and each session names its own by Claude Code's number.
    ok(&verb(&p, Some(B), at, &["claim", "1"]));
    let a = ok(&verb(&p, Some(A), at, &["claim", "1", "--json"]));
    assert_eq!(a["unit"], "proj/1", "{a}");
    // A subagent launched for `<task>1</task>` is each session's own task 1: B's launch is
    // not denied for A's claim, and a launch for A's task from B is.
    let launch = |session: &str, prompt: &str| {
        let mut l = p.payload("PreToolUse.Agent.json");
        l["session_id"] = json!(session);
        l["tool_input"]["prompt"] = json!(prompt);
        hook_at(&p, &l, at)
    };
    let r = launch(B, "<task>1</task> write the docs");
    assert!(!r.stdout.contains("deny"), "{r:?}");
    let r = launch(B, "<task>proj/1@aaaaaaaa</task> migrate");
    assert!(
        r.stdout.contains("deny") && r.stdout.contains("held by session aaaaaaaa"),
        "{r:?}"
    );
    let r = launch(A, "<task>1</task> migrate");
    assert!(!r.stdout.contains("deny"), "{r:?}");
    // A's task 2, which nobody claimed, is still A's: B's launch for it is denied.
    let r = launch(B, "<task>proj/2@aaaaaaaa</task> seed");
    assert!(
        r.stdout.contains("deny")
            && r.stdout
                .contains("task 2@aaaaaaaa of list proj is session aaaaaaaa's task"),
        "{r:?}"
    );
    // Each launch met its session's claim in one record (the mirror's id).
    let claims: Value = serde_json::from_slice(
        &std::fs::read(p.root.join(".claude/taskhook/claims.json")).unwrap(),
    )
    .unwrap();
    let keys: Vec<&str> = claims["claims"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["task"].as_str().unwrap())
        .collect();
    assert_eq!(keys, ["1@bbbbbbbb", "1@aaaaaaaa"]);
    let ctx = session_start(&p, A, at);
    assert!(
        ctx.contains("Your claims (this session holds them; finish or release them): proj/1."),
        "{ctx}"
    );
    assert!(!ctx.contains("@aaaaaaaa"), "{ctx}");
    // With nothing of its own left, B's next is null and says whose the rest is.
    ok(&verb(&p, Some(B), at, &["done", "1"]));
    let n = ok(&verb(&p, Some(B), at, &["next", "--json"]));
    assert_eq!(n["unit"], Value::Null, "{n}");
    let why = n["why"].as_str().unwrap();
    assert!(
        why.contains(
            "waiting on other units: proj/1@aaaaaaaa (session aaaaaaaa's task, not yours to \
             work on; that session was last active 0 s ago), proj/2@aaaaaaaa (session \
             aaaaaaaa's task"
        ),
        "{why}"
    );
    // Two hours without an event from A: its claim has expired and its pending task is left
    // over; both are offered to B, saying whose they were.
    let late = "2026-03-01T14:05:00Z";
    let n = ok(&verb(&p, Some(B), late, &["next", "--json"]));
    assert_eq!(n["unit"], "proj/1@aaaaaaaa", "{n}");
    assert!(
        n["why"]
            .as_str()
            .unwrap()
            .contains("session aaaaaaaa left it in_progress"),
        "{n}"
    );
    let s = ok(&verb(&p, Some(B), late, &["show", "2@aaaaaaaa", "--json"]));
    assert_eq!(s["phase"], "ready", "{s}");
    assert_eq!(
        s["why"], "left by session aaaaaaaa, last active 2 h ago",
        "{s}"
    );
}

#[test]
fn a_session_that_ended_leaves_its_tasks_over() {
    let p = Project::new();
    hook_at(&p, &create(&p.root, A, "1", "Migrate database"), NOW);
    ok(&verb(&p, Some(A), NOW, &["claim", "1"]));
    assert_eq!(task(&doc(&p), "1@aaaaaaaa")["status"], "in_progress");
    let n = ok(&verb(&p, Some(B), NOW, &["next", "--json"]));
    assert_eq!(n["unit"], Value::Null, "{n}");
    // SessionEnd gives A's claimed task back (named as A knows it) and ends A's liveness.
    let mut end = p.payload("SessionEnd.other.json");
    end["session_id"] = json!(A);
    let r = hook_at(&p, &end, NOW);
    assert!(
        r.stdout.contains("proj/1 released: its session ended"),
        "{r:?}"
    );
    let d = doc(&p);
    assert_eq!(task(&d, "1@aaaaaaaa")["status"], "pending");
    assert_eq!(task(&d, "1@aaaaaaaa")["assignee"], Value::Null);
    let n = ok(&verb(&p, Some(B), NOW, &["next", "--json"]));
    assert_eq!(n["unit"], "proj/1@aaaaaaaa", "{n}");
    assert_eq!(n["why"], "ready: left by session aaaaaaaa", "{n}");
    // A person at a terminal sees the same.
    let n = ok(&verb(&p, None, NOW, &["next", "--json"]));
    assert_eq!(n["unit"], "proj/1@aaaaaaaa", "{n}");
}

#[test]
fn a_list_shared_on_purpose_is_everyones_work() {
    let p = Project::new();
    let shared = |session: &str, args: &[&str]| {
        let mut c = p.cmd();
        c.env("CLAUDE_CODE_TASK_LIST_ID", "team")
            .env("CLAUDE_CODE_SESSION_ID", session);
        p.run_with(c, args, "")
    };
    let mut c = p.cmd();
    c.env("CLAUDE_CODE_TASK_LIST_ID", "team");
    let payload = create(&p.root, A, "1", "Migrate database");
    let r = p.run_with(c, &["hook"], serde_json::to_vec(&payload).unwrap());
    assert_eq!(r.code, 0, "{r:?}");
    let n = ok(&shared(B, &["next", "--json"]));
    assert_eq!(n["unit"], "team/1", "{n}");
    assert!(
        n.get("why")
            .is_some_and(|w| !w.to_string().contains("session")),
        "{n}"
    );
}

#[test]
fn the_board_shows_a_sessions_claim_on_its_own_task() {
    let p = Project::new();
    hook_at(&p, &create(&p.root, A, "1", "Migrate database"), NOW);
    ok(&verb(&p, Some(A), NOW, &["claim", "1"]));
    // The claim is recorded under the mirror's id (`1@…`); the board, which names the task
    // as the session reads it (`1`), still finds it.
    let r = verb(&p, Some(A), NOW, &["board"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        r.stdout.contains("session aaaaaaaa, lease ends in 30 min"),
        "{}",
        r.stdout
    );
}
