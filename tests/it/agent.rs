//! The agent's verbs (`taskhook next | show | claim | heartbeat | done | fail | release`) over
//! every layout, driven through the real binary: claims and their owners, leases renewed by
//! hook events and taken over once expired, SessionEnd giving work back, and the SessionStart
//! index within its budget.

use std::path::PathBuf;

use serde_json::{json, Value};

use crate::common::{Project, Run, NOW};

pub(crate) const A: &str = "aaaaaaaa-1111-4111-8111-111111111111";
pub(crate) const B: &str = "bbbbbbbb-2222-4222-8222-222222222222";

/// Runs a verb as session `session` (or a person, with `None`) at time `at`.
pub(crate) fn verb(p: &Project, session: Option<&str>, at: &str, args: &[&str]) -> Run {
    let mut c = p.cmd();
    c.env("TASKHOOK_NOW", at).env("USER", "alice");
    if let Some(s) = session {
        c.env("CLAUDE_CODE_SESSION_ID", s);
    }
    p.run_with(c, args, "")
}

pub(crate) fn ok(r: &Run) -> Value {
    assert_eq!(r.code, 0, "{r:?}");
    serde_json::from_str(&r.stdout).unwrap_or(Value::Null)
}

pub(crate) fn refused(r: &Run, words: &[&str]) {
    assert_eq!(r.code, 1, "{r:?}");
    r.assert_one_line_error();
    for w in words {
        assert!(r.stderr.contains(w), "{w:?} not in {:?}", r.stderr);
    }
}

pub fn projects_store(p: &Project) -> PathBuf {
    for args in [
        vec!["projects", "new", "web"],
        vec![
            "projects",
            "add",
            "web",
            "T1",
            "--title",
            "Write the parser",
        ],
        vec![
            "projects",
            "add",
            "web",
            "T2",
            "--title",
            "Test it",
            "--depends",
            "T1",
        ],
    ] {
        let r = p.run(&args, "");
        assert_eq!(r.code, 0, "{r:?}");
    }
    p.root.join(".claude/projects/web")
}

/// An execute run `docs/tasks/auth` with these `--layer` arguments (`0-setup=L0-001`).
fn execute_run(p: &Project, layers: &[&str]) {
    let mut args = vec!["execute", "init", "docs/tasks/auth"];
    for l in layers {
        args.extend(["--layer", l]);
    }
    let r = p.run(&args, "");
    assert_eq!(r.code, 0, "{r:?}");
}

/// The SessionEnd of `session` at `at`, through the hook.
fn session_end(p: &Project, session: &str, at: &str) -> Run {
    let mut end = p.payload("SessionEnd.other.json");
    end["session_id"] = json!(session);
    let mut c = p.cmd();
    c.env("TASKHOOK_NOW", at);
    let r = p.run_with(c, &["hook"], serde_json::to_vec(&end).unwrap());
    assert_eq!(r.code, 0, "{r:?}");
    r
}

/// The flow every layout must support, on a store whose first two units are `first` then
/// `second` (the second made ready by the first's completion, or next in order).
fn flow(p: &Project, first: &str, second: &str) {
    // next names the first unit, with the commands to act on it.
    let n = ok(&verb(p, Some(A), NOW, &["next", "--json"]));
    assert_eq!(n["unit"], first, "{n}");
    assert_eq!(n["then"]["claim"], format!("taskhook claim {first}"));
    // A claims it; B is refused, naming A; B cannot finish it either.
    let c = ok(&verb(p, Some(A), NOW, &["claim", first, "--json"]));
    assert_eq!(c["phase"], "in_progress", "{c}");
    assert_eq!(c["claim"]["owner"], A);
    refused(
        &verb(p, Some(B), NOW, &["claim", first]),
        &["held by session aaaaaaaa", "lease ends"],
    );
    refused(
        &verb(p, Some(B), NOW, &["done", first]),
        &["held by session aaaaaaaa", "only its owner"],
    );
    // B's next skips it.
    let nb = ok(&verb(p, Some(B), NOW, &["next", "--json"]));
    assert_ne!(nb["unit"], first, "{nb}");
    // A renews by hand.
    let h = ok(&verb(
        p,
        Some(A),
        "2026-03-01T12:10:00Z",
        &["heartbeat", first, "--json"],
    ));
    assert_eq!(h["claim"]["lease_ends"], "2026-03-01T12:40:00Z", "{h}");
    // done: as many times as the layout's passes need, then the next unit.
    let mut last = Value::Null;
    for _ in 0..4 {
        last = ok(&verb(p, Some(A), NOW, &["done", first, "--json"]));
        if last["phase"] == "done" {
            break;
        }
        assert!(last["pass"].is_string(), "{last}");
    }
    assert_eq!(last["phase"], "done", "{last}");
    assert!(last["claim"].is_null(), "{last}");
    let n = ok(&verb(p, Some(A), NOW, &["next", "--json"]));
    assert_eq!(n["unit"], second, "{n}");
}

#[test]
fn projects_flow() {
    let p = Project::new();
    let root = projects_store(&p);
    flow(&p, "web/T1", "web/T2");
    let tasks: Value =
        serde_json::from_slice(&std::fs::read(root.join("tasks.json")).unwrap()).unwrap();
    assert_eq!(tasks["tasks"][0]["status"], "COMPLETE");
    let log = std::fs::read_to_string(root.join("progress/log.md")).unwrap();
    assert!(log.contains("TASK_COMPLETE"), "{log}");
    // fail keeps the reason in the layout's log and the task goes back to PENDING.
    ok(&verb(&p, Some(A), NOW, &["claim", "T2"]));
    let f = ok(&verb(
        &p,
        Some(A),
        NOW,
        &["fail", "T2", "--reason", "the fixture is missing", "--json"],
    ));
    assert_eq!(f["status"], "PENDING", "{f}");
    let log = std::fs::read_to_string(root.join("progress/log.md")).unwrap();
    assert!(log.contains("- Error: the fixture is missing"), "{log}");
    // done with nobody holding it: an implicit claim, then done.
    ok(&verb(&p, Some(B), NOW, &["done", "T2"]));
    let n = ok(&verb(&p, Some(A), NOW, &["next", "--json"]));
    assert_eq!(n["unit"], Value::Null, "{n}");
    assert_eq!(n["why"], "all 2 units are done", "{n}");
}

#[test]
fn iterative_flow_keeps_the_claim_through_its_passes() {
    let p = Project::new();
    p.new_slug("auth", &["T1", "T2"], 5);
    flow(&p, "auth/T1", "auth/T2");
    let progress =
        std::fs::read_to_string(p.root.join(".claude/iterative/auth/progress.md")).unwrap();
    assert!(progress.matches("## T1").count() >= 3, "{progress}");
}

#[test]
fn cdd_flow_and_release() {
    let p = Project::new();
    let ws = p.root.join("work");
    let cdd = |args: &[&str]| {
        let mut c = p.cmd();
        c.env("CDD_DIR", &ws);
        p.run_with(c, args, "")
    };
    assert_eq!(cdd(&["cdd", "init"]).code, 0);
    p.write(
        "work/tasks/order.json",
        r#"{"tasks": [{"task": "a.md"}, {"task": "b.md"}, {"stop": "look", "message": "Look"}, {"task": "c.md"}]}"#,
    );
    for t in ["a.md", "b.md", "c.md"] {
        p.write(&format!("work/tasks/{t}"), t);
    }
    assert_eq!(cdd(&["cdd", "import"]).code, 0);
    let v = |session: &str, args: &[&str]| {
        let mut c = p.cmd();
        c.env("CDD_DIR", &ws).env("CLAUDE_CODE_SESSION_ID", session);
        p.run_with(c, args, "")
    };
    let n = ok(&v(A, &["next", "--json"]));
    assert_eq!(n["unit"], "work/a.md", "{n}");
    ok(&v(A, &["claim", "a.md"]));
    assert!(ws.join("tasks/in_progress/a.md").exists());
    // release: back to pending/, a release line, nothing escalated.
    let r = ok(&v(A, &["release", "a.md", "--json"]));
    assert_eq!(r["status"], "pending", "{r}");
    assert!(ws.join("tasks/pending/a.md").exists());
    let history = std::fs::read_to_string(ws.join("tasks/history.jsonl")).unwrap();
    assert!(history.contains(r#""action": "release""#), "{history}");
    ok(&v(A, &["claim", "a.md"]));
    ok(&v(A, &["done", "a.md"]));
    assert!(ws.join("tasks/completed/a.md").exists());
    ok(&v(A, &["claim", "b.md"]));
    let f = ok(&v(A, &["fail", "b.md", "--reason", "too hard", "--json"]));
    assert_eq!(f["status"], "pending", "{f}");
    let history = std::fs::read_to_string(ws.join("tasks/history.jsonl")).unwrap();
    assert!(history.contains(r#""reason": "too hard""#), "{history}");
    ok(&v(A, &["done", "b.md"]));
    // The stop waits for a person: nothing is ready, and why says so.
    let n = ok(&v(A, &["next", "--json"]));
    assert_eq!(n["unit"], Value::Null, "{n}");
    let why = n["why"].as_str().unwrap();
    assert!(why.contains("waiting for a person: work/look"), "{why}");
    refused(&v(A, &["claim", "c.md"]), &["not ready", "after stop look"]);
}

/// SessionEnd gives back only what the layout agrees to give back, and says so truthfully: an
/// execute task being verified finishes its pass (`release` refuses it), so the session's end
/// reports it was not released instead of claiming it was.
#[test]
fn session_end_reports_a_refused_release_as_not_released() {
    let p = Project::new();
    execute_run(&p, &["0-setup=L0-001"]);
    ok(&verb(&p, Some(A), NOW, &["claim", "L0-001"]));
    let d = ok(&verb(&p, Some(A), NOW, &["done", "L0-001", "--json"]));
    assert_eq!(d["status"], "verifying", "{d}");
    let r = session_end(&p, A, NOW);
    assert!(
        r.stdout.contains(
            "auth/L0-001: its session ended; not released (L0-001 is verifying, not in_progress; nothing to release)"
        ),
        "{r:?}"
    );
    assert!(!r.stdout.contains("released: its session ended"), "{r:?}");
    let state = p.root.join("docs/tasks/auth/execute-state.json");
    let s: Value = serde_json::from_slice(&std::fs::read(&state).unwrap()).unwrap();
    assert_eq!(s["tasks"]["L0-001"]["status"], "verifying", "{s}");
}

#[test]
fn execute_flow_verifies_then_waits_for_the_merge() {
    let p = Project::new();
    execute_run(&p, &["0-setup=L0-001", "1-core=L1-001"]);
    ok(&verb(&p, Some(A), NOW, &["claim", "L0-001"]));
    // A later layer's task is not ready.
    refused(
        &verb(&p, Some(A), NOW, &["claim", "L1-001"]),
        &["not ready", "layer 1-core waits for layer 0-setup"],
    );
    let d = ok(&verb(&p, Some(A), NOW, &["done", "L0-001", "--json"]));
    assert_eq!(d["status"], "verifying", "{d}");
    assert!(d["pass"].as_str().unwrap().contains("verif"), "{d}");
    let n = ok(&verb(&p, Some(A), NOW, &["next", "--json"]));
    assert_eq!(n["unit"], "auth/L0-001", "{n}");
    assert!(n["why"].as_str().unwrap().contains("verification"), "{n}");
    let d = ok(&verb(&p, Some(A), NOW, &["done", "L0-001", "--json"]));
    assert_eq!(d["status"], "verified", "{d}");
    // fail keeps the reason as the retry's feedback.
    let state = p.root.join("docs/tasks/auth/execute-state.json");
    let s: Value = serde_json::from_slice(&std::fs::read(&state).unwrap()).unwrap();
    assert_eq!(s["tasks"]["L0-001"]["status"], "verified", "{s}");
}

#[test]
fn leases_renew_expire_and_are_taken_over() {
    let p = Project::new();
    projects_store(&p);
    ok(&verb(&p, Some(A), NOW, &["claim", "T1"]));
    // A hook event of A's session twenty minutes later renews the lease.
    let mut read = p.payload("PostToolUse.Read.json");
    read["session_id"] = json!(A);
    let mut c = p.cmd();
    c.env("TASKHOOK_NOW", "2026-03-01T12:20:00Z");
    let r = p.run_with(c, &["hook"], serde_json::to_vec(&read).unwrap());
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stdout.is_empty(), "{r:?}");
    // At 12:45 the lease (12:20 + 30 min) still holds.
    refused(
        &verb(&p, Some(B), "2026-03-01T12:45:00Z", &["claim", "T1"]),
        &["held by session aaaaaaaa"],
    );
    let s = ok(&verb(
        &p,
        Some(B),
        "2026-03-01T12:45:00Z",
        &["show", "T1", "--json"],
    ));
    assert_eq!(s["claim"]["lease_ends"], "2026-03-01T12:50:00Z", "{s}");
    // Two hours later it has expired: B takes it over, and says so.
    let late = "2026-03-01T14:50:00Z";
    let n = ok(&verb(&p, Some(B), late, &["next", "--json"]));
    assert_eq!(n["unit"], "web/T1", "{n}");
    assert!(
        n["why"].as_str().unwrap().contains("lease ended 2 h ago"),
        "{n}"
    );
    let t = ok(&verb(&p, Some(B), late, &["claim", "T1", "--json"]));
    let said = t["said"].to_string();
    assert!(
        said.contains("took over web/T1 from session aaaaaaaa, whose lease expired 2 h ago"),
        "{said}"
    );
    assert_eq!(t["claim"]["owner"], B);
    let log = std::fs::read_to_string(p.root.join(".claude/projects/web/progress/log.md")).unwrap();
    assert!(
        log.contains("took over web/T1 from session aaaaaaaa"),
        "{log}"
    );
    // A's later event does not win it back.
    refused(
        &verb(&p, Some(A), late, &["done", "T1"]),
        &["held by session bbbbbbbb"],
    );
    // SessionEnd of B gives it back.
    let r = session_end(&p, B, late);
    assert!(
        r.stdout.contains("web/T1 released: its session ended"),
        "{r:?}"
    );
    let s = ok(&verb(&p, Some(A), late, &["show", "T1", "--json"]));
    assert_eq!(s["status"], "PENDING", "{s}");
    assert!(s["claim"].is_null(), "{s}");
}

#[test]
fn a_bound_launch_is_a_claim_and_is_refused_while_another_session_holds_the_unit() {
    let p = Project::new();
    projects_store(&p);
    ok(&verb(&p, Some(A), NOW, &["claim", "T1"]));
    let mut launch = p.payload("PreToolUse.Agent.json");
    launch["session_id"] = json!(B);
    launch["tool_input"]["prompt"] = json!("<task>web/T1</task> write it");
    let r = p.hook(&launch);
    assert_eq!(r.code, 0, "{r:?}");
    let out = r.json();
    assert_eq!(
        out["hookSpecificOutput"]["permissionDecision"], "deny",
        "{out}"
    );
    let reason = out["hookSpecificOutput"]["permissionDecisionReason"]
        .as_str()
        .unwrap();
    assert!(
        reason.contains("web/T1 is held by session aaaaaaaa"),
        "{reason}"
    );
    // A launch by A's own session is fine; one for a free unit records B's claim.
    ok(&verb(&p, Some(A), NOW, &["done", "T1"]));
    launch["tool_input"]["prompt"] = json!("<task>web/T2</task> test it");
    let r = p.hook(&launch);
    assert_eq!(r.code, 0, "{r:?}");
    let s = ok(&verb(&p, Some(A), NOW, &["show", "T2", "--json"]));
    assert_eq!(s["status"], "IN_PROGRESS", "{s}");
    assert_eq!(s["claim"]["owner"], B, "{s}");
}

#[test]
fn bad_input_is_one_line_and_changes_nothing() {
    let p = Project::new();
    projects_store(&p);
    p.new_slug("web2", &["T1"], 5);
    let before = p.snapshot();
    refused(
        &verb(&p, Some(A), NOW, &["claim", "nope/T1"]),
        &["no store \"nope\""],
    );
    refused(
        &verb(&p, Some(A), NOW, &["show", "T9"]),
        &["no unit \"T9\""],
    );
    // T1 is in two stores: the error lists both.
    refused(
        &verb(&p, Some(A), NOW, &["claim", "T1"]),
        &["names several units", "web/T1", "web2/T1"],
    );
    refused(
        &verb(&p, Some("bad\u{1b}id"), NOW, &["next"]),
        &["CLAUDE_CODE_SESSION_ID", "control character"],
    );
    // fail without --reason is a usage error.
    let r = verb(&p, Some(A), NOW, &["fail", "web/T1"]);
    assert_ne!(r.code, 0, "{r:?}");
    assert_eq!(p.snapshot(), before);
    // A finished unit cannot be claimed.
    ok(&verb(&p, Some(A), NOW, &["done", "web/T1"]));
    refused(
        &verb(&p, Some(A), NOW, &["claim", "web/T1"]),
        &["already finished"],
    );
}

#[test]
fn a_corrupt_store_is_named_and_nothing_changes() {
    let p = Project::new();
    let root = projects_store(&p);
    std::fs::write(root.join("tasks.json"), "{not json").unwrap();
    std::fs::remove_dir_all(root.join("checkpoints")).ok();
    let before = p.snapshot();
    let r = verb(&p, Some(A), NOW, &["claim", "web/T1"]);
    assert_eq!(r.code, 1, "{r:?}");
    r.assert_one_line_error();
    assert_eq!(p.snapshot(), before);
}

#[test]
fn session_start_opens_with_an_index_of_every_store_within_budget() {
    let p = Project::new();
    for i in 0..30 {
        let dir = p.new_slug(&format!("loop-{i:02}"), &["T1", "T2"], 5);
        std::fs::write(dir.join("guardrails.md"), "- never do that\n".repeat(300)).unwrap();
    }
    projects_store(&p);
    let ws = p.root.join("work");
    let mut c = p.cmd();
    c.env("CDD_DIR", &ws);
    assert_eq!(p.run_with(c, &["cdd", "init"], "").code, 0);
    p.write("work/tasks/order.json", r#"{"tasks": [{"task": "a.md"}]}"#);
    p.write("work/tasks/a.md", "a");
    let mut c = p.cmd();
    c.env("CDD_DIR", &ws);
    assert_eq!(p.run_with(c, &["cdd", "import"], "").code, 0);
    let mut c = p.cmd();
    c.env("CDD_DIR", &ws);
    let r = p.run_with(
        c,
        &["hook"],
        serde_json::to_vec(&p.payload("SessionStart.startup.json")).unwrap(),
    );
    assert_eq!(r.code, 0, "{r:?}");
    let ctx = r.context();
    assert!(ctx.encode_utf16().count() <= 8000, "{}", ctx.len());
    for i in 0..30 {
        assert!(
            ctx.contains(&format!("- iterative loop-{i:02}:")),
            "loop-{i:02} missing"
        );
    }
    assert!(ctx.contains("- projects web:"), "{ctx}");
    assert!(ctx.contains("- cdd work:"), "{ctx}");
    assert!(ctx.contains("`taskhook next`"), "{ctx}");
    assert!(
        ctx.contains("more store detail(s): `taskhook status`"),
        "{ctx}"
    );
}

#[test]
fn a_subagents_done_ends_the_claim_on_its_unit() {
    let p = Project::new();
    projects_store(&p);
    ok(&verb(&p, Some(A), NOW, &["claim", "T1"]));
    let mut stop = p.subagent_stop(
        "agent-1",
        "<task>web/T1</task> write it",
        "Written.\n<signal>T1_DONE</signal>",
    );
    stop["session_id"] = json!(A);
    let r = p.hook(&stop);
    assert_eq!(r.code, 0, "{r:?}");
    let claims: Value = serde_json::from_slice(
        &std::fs::read(p.root.join(".claude/taskhook/claims.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(claims["claims"], json!([]), "{claims}");
    // A signal on a unit nobody claimed touches no claims file.
    let before = std::fs::read(p.root.join(".claude/taskhook/claims.json")).unwrap();
    let stop = p.subagent_stop(
        "agent-2",
        "<task>web/T2</task> test it",
        "<signal>T2_DONE</signal>",
    );
    assert_eq!(p.hook(&stop).code, 0);
    assert_eq!(
        std::fs::read(p.root.join(".claude/taskhook/claims.json")).unwrap(),
        before
    );
}
