//! Layout `iterative` (seed 003) through the real binary: SubagentStop sequences drive the
//! work / confirm / verify loop; state.json, progress.md and stdout are checked at each step.

use std::path::PathBuf;

use serde_json::{json, Value};

use crate::common::{Project, Run, NOW};

/// A project with one development slug and helpers to stop subagents in it.
pub(crate) struct Loop {
    pub p: Project,
    pub slug: String,
}

impl Loop {
    pub fn new(slug: &str, units: &[&str], max: u64) -> Self {
        let p = Project::new();
        let mut args = vec!["iterative", "new", slug, "--max-iterations"];
        let max_s = max.to_string();
        args.push(&max_s);
        for u in units {
            args.push("--task");
            args.push(u);
        }
        let run = p.run(&args, "");
        assert_eq!(run.code, 0, "{run:?}");
        Loop {
            p,
            slug: slug.into(),
        }
    }

    pub fn dir(&self) -> PathBuf {
        self.p.root.join(".claude/iterative").join(&self.slug)
    }

    pub fn state(&self) -> Value {
        serde_json::from_slice(&std::fs::read(self.dir().join("state.json")).unwrap()).unwrap()
    }

    pub fn unit(&self, id: &str) -> Value {
        let s = self.state();
        let key = if s["mode"] == "knowledge" {
            "phases"
        } else {
            "tasks"
        };
        s[key][id].clone()
    }

    /// A unit's (status, iterations_used, confirmations_used).
    pub fn counters(&self, id: &str) -> (String, u64, u64) {
        let u = self.unit(id);
        let n = |k: &str| u[k].as_u64().unwrap_or(0);
        (
            u["status"].as_str().unwrap_or("").to_string(),
            n("iterations_used"),
            n("confirmations_used"),
        )
    }

    pub fn progress(&self) -> String {
        std::fs::read_to_string(self.dir().join("progress.md")).unwrap()
    }

    /// A SubagentStop whose transcript's first prompt is `prompt` and final message `message`.
    pub fn stop(&self, agent: &str, prompt: &str, message: &str) -> Run {
        self.p.hook(&self.p.subagent_stop(agent, prompt, message))
    }

    /// Adds the guardrail "Migrate first" (when touching models) by `iterative guardrail`.
    pub fn migrate_first_guardrail(&self) {
        let g = self.p.run(
            &[
                "iterative",
                "guardrail",
                &self.slug,
                "--when",
                "touching models",
                "--problem",
                "migrations forgotten",
                "--solution",
                "run migrate first",
                "--name",
                "Migrate first",
            ],
            "",
        );
        assert_eq!(g.code, 0, "{g:?}");
    }

    pub fn bound(&self, unit: &str, message: &str) -> Run {
        self.stop("a1", &format!("Work on <task>{unit}</task>."), message)
    }
}

pub(crate) fn reason(run: &Run) -> String {
    assert_eq!(run.code, 0, "{run:?}");
    let v = run.json();
    assert_eq!(v["decision"], "block", "{run:?}");
    assert!(
        v.get("hookSpecificOutput").is_none(),
        "never additionalContext on SubagentStop"
    );
    v["reason"].as_str().unwrap().to_string()
}

pub(crate) fn silent(run: &Run) {
    assert_eq!(
        (run.code, run.stdout.as_str(), run.stderr.as_str()),
        (0, "", ""),
        "{run:?}"
    );
}

#[test]
fn full_path_confirm_verify_done_with_two_blocks() {
    let l = Loop::new("user-auth", &["T1", "T2"], 5);
    l.p.write(".claude/iterative/user-auth/tasks.md", "## Tasks\n\n- [ ] **T1**: Model\n  - Criteria: user tests pass\n  - Depends: none\n- [ ] **T2**: Routes\n  - Depends: T1\n");
    let r = reason(&l.bound("T1", "Wrote the model.\n<signal>T1_DONE</signal>"));
    assert!(
        r.contains("confirmation pass")
            && r.contains("user tests pass")
            && r.contains("<signal>T1_DONE</signal>"),
        "{r}"
    );
    assert_eq!(l.counters("T1"), ("confirming".into(), 1, 1));
    assert_eq!(l.state()["current_task"], "T1");

    let r = reason(&l.bound("T1", "All criteria hold.\n<signal>T1_DONE</signal>"));
    assert!(r.contains("verification pass"), "{r}");
    assert_eq!(l.unit("T1")["status"], "verifying");

    silent(&l.bound("T1", "Review clean.\n<signal>T1_DONE</signal>"));
    let u = l.unit("T1");
    assert_eq!(u["status"], "done");
    assert_eq!(u["verification_passed"], true);
    assert_eq!(u["completed_at"], NOW);
    assert_eq!(
        (
            u["iterations_used"].as_u64(),
            u["confirmations_used"].as_u64()
        ),
        (Some(3), Some(1))
    );
    let s = l.state();
    assert_eq!(s["current_task"], "T2");
    assert_eq!(s["phase"], "execute");

    let progress = l.progress();
    for n in 1..=3 {
        assert!(
            progress.contains(&format!("## T1 - Iteration {n} - {NOW}")),
            "{progress}"
        );
    }
    assert_eq!(progress.matches("**Signal:** T1_DONE").count(), 3);
    assert!(progress.contains("**Did:** Wrote the model."));

    // The main agent hears about it on its next PostToolUse, once.
    let run = l.p.hook(&l.p.payload("PostToolUse.Read.json"));
    let ctx = run.context();
    assert!(
        ctx.contains("T1 is done") && ctx.contains("Ready now: T2"),
        "{ctx}"
    );
    silent(&l.p.hook(&l.p.payload("PostToolUse.Read.json")));

    // T2 through the loop too; then every unit is done and the phase is verify.
    for _ in 0..3 {
        l.bound("T2", "<signal>T2_DONE</signal>");
    }
    assert_eq!(l.state()["phase"], "verify");
    assert_eq!(l.state()["current_task"], Value::Null);
    assert_eq!(l.p.run(&["validate"], "").code, 0);
}

#[test]
fn failed_in_confirming_goes_back_to_work_and_third_failure_blocks() {
    let l = Loop::new("s", &["T1"], 20);
    reason(&l.bound("T1", "<signal>T1_DONE</signal>"));
    let r = reason(&l.bound(
        "T1",
        "Found a bug.\n<signal>T1_FAILED: login test red</signal>",
    ));
    assert!(
        r.contains("login test red") && r.contains("back in progress"),
        "{r}"
    );
    assert_eq!(l.unit("T1")["status"], "in_progress");
    assert!(l
        .progress()
        .contains("**Signal:** T1_FAILED: login test red"));
    // Issue 14 item 13: a signal entry carries **Signal**, not **Blockers** (seed format).
    assert!(l
        .progress()
        .contains("**Remaining:** Fix what the check found: login test red"));
    // Second and third failed rounds (a verification pass ending without the signal counts).
    reason(&l.bound("T1", "<signal>T1_DONE</signal>"));
    reason(&l.bound("T1", "<signal>T1_DONE</signal>"));
    reason(&l.bound("T1", "Verification found issues, fixing."));
    reason(&l.bound("T1", "<signal>T1_DONE</signal>"));
    let run = l.bound("T1", "<signal>T1_FAILED</signal>");
    assert_eq!(run.code, 0);
    let v = run.json();
    assert!(v.get("decision").is_none(), "{v}");
    assert!(v["systemMessage"]
        .as_str()
        .unwrap()
        .contains("failed confirmation 3 times: needs review"));
    let u = l.unit("T1");
    assert_eq!(u["status"], "blocked");
    assert_eq!(u["reason"], "failed confirmation 3 times: needs review");
    assert_eq!(u["confirmations_used"], 3);
}

#[test]
fn timeout_at_max_iterations_stops_blocking() {
    let l = Loop::new("s", &["T1"], 3);
    let r = reason(&l.bound("T1", "Started.\nRemaining: the parser"));
    assert!(
        r.contains("Remaining: the parser") && r.contains("iteration 1 of 3"),
        "{r}"
    );
    let progress = l.progress();
    assert!(
        progress.contains("**Did:** Started.\n**Remaining:** the parser\n"),
        "{progress}"
    );
    // The last Remaining carries over when the subagent does not restate it.
    let r = reason(&l.bound("T1", "Still going."));
    assert!(r.contains("Remaining: the parser"), "{r}");
    let run = l.bound("T1", "Still going.");
    let v = run.json();
    assert!(v.get("decision").is_none(), "{v}");
    assert!(
        v["systemMessage"]
            .as_str()
            .unwrap()
            .contains("timed out after 3 iterations"),
        "{v}"
    );
    let u = l.unit("T1");
    assert_eq!(
        (u["status"].as_str(), u["iterations_used"].as_u64()),
        (Some("timeout"), Some(3))
    );
    assert!(l
        .progress()
        .contains("**Blockers:** Hit max iterations (3): status timeout"));
    // Whatever stop_hook_active says, a timed-out unit is not blocked again.
    let run = l.bound("T1", "More.");
    assert!(
        run.stdout.is_empty() || run.json().get("decision").is_none(),
        "{run:?}"
    );
}

#[test]
fn blocked_signal_and_unbound_subagents() {
    let l = Loop::new("s", &["T1", "T2"], 5);
    // A subagent bound to nothing, without a signal: nothing changes, never blocked.
    let before = l.p.snapshot();
    silent(&l.stop("x9", "Explore the repo", "Found 3 files."));
    assert_eq!(l.p.snapshot(), before);
    // Unbound but its message carries a resolvable signal: it applies, still no block.
    let run = l.stop(
        "x9",
        "Explore the repo",
        "Also did T2. <signal>T2_DONE</signal>",
    );
    assert!(
        run.stdout.is_empty() || run.json().get("decision").is_none(),
        "{run:?}"
    );
    assert_eq!(l.unit("T2")["status"], "confirming");
    // BLOCKED with a reason.
    let run = l.bound("T1", "<signal>T1_BLOCKED: needs the API key</signal>");
    assert!(run.json()["systemMessage"]
        .as_str()
        .unwrap()
        .contains("needs the API key"));
    assert_eq!(l.unit("T1")["status"], "blocked");
    assert_eq!(l.unit("T1")["reason"], "needs the API key");
}

#[test]
fn background_agent_binding_comes_from_post_tool_use_agent() {
    let l = Loop::new("s", &["T1"], 5);
    let mut launch = l.p.payload("PostToolUse.Agent.background.json");
    launch["tool_input"]["prompt"] = json!("Please do <task>T1</task>");
    let agent = launch["tool_response"]["agentId"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(l.p.hook(&launch).code, 0);
    // Its SubagentStop has no transcript to read: the remembered binding still applies.
    let mut stop = l.p.payload("SubagentStop.background.json");
    stop["agent_id"] = json!(agent);
    stop["agent_transcript_path"] = json!("/nonexistent/transcript.jsonl");
    stop["last_assistant_message"] = json!("Halfway there.");
    let r = reason(&l.p.hook(&stop));
    assert!(r.contains("T1 is not done yet"), "{r}");
}

#[test]
fn state_lagging_progress_is_rebuilt_from_the_log() {
    let l = Loop::new("s", &["T1", "T2"], 5);
    let good = l.dir().join("state.json");
    let stale = std::fs::read(&good).unwrap();
    for _ in 0..3 {
        l.bound("T1", "<signal>T1_DONE</signal>\n**Commit:** abc1234");
    }
    assert_eq!(l.unit("T1")["status"], "done");
    // Simulate a crash that lost the state writes: state.json is back to its first version.
    std::fs::write(&good, &stale).unwrap();
    assert_eq!(l.unit("T1")["status"], "pending");
    let run = l.p.hook(&l.p.payload("SessionStart.resume.json"));
    let ctx = run.context();
    assert!(
        ctx.contains("Reconciled") && ctx.contains("T1 is now done"),
        "{ctx}"
    );
    assert_eq!(l.counters("T1"), ("done".into(), 3, 1));
    assert_eq!(l.state()["current_task"], "T2");
    // Issue 14 item 13: the discrepancy is a note the seed's readers skip.
    assert!(l.progress().contains(&format!(
        "<!-- taskhook {NOW} reconciled: state.json had T1 pending after 0 iteration(s); progress.md logs 3"
    )));
    // A second SessionStart finds nothing to fix and writes nothing.
    let before = l.p.snapshot();
    l.p.hook(&l.p.payload("SessionStart.resume.json"));
    assert_eq!(l.p.snapshot(), before);
}

#[test]
fn corrupt_state_is_moved_aside_and_rebuilt() {
    let l = Loop::new("s", &["T1"], 5);
    reason(&l.bound("T1", "<signal>T1_DONE</signal>"));
    std::fs::write(l.dir().join("state.json"), b"{\"tasks\": ").unwrap();
    let run = l.p.hook(&l.p.payload("SessionStart.startup.json"));
    let ctx = run.context();
    assert!(ctx.contains("state.json was unusable"), "{ctx}");
    assert_eq!(l.unit("T1")["status"], "confirming");
    let aside: Vec<_> = std::fs::read_dir(l.dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with("state.json.corrupt-"))
        .collect();
    assert_eq!(aside.len(), 1);
    assert_eq!(
        std::fs::read(l.dir().join(&aside[0])).unwrap(),
        b"{\"tasks\": "
    );
    assert_eq!(l.p.run(&["validate"], "").code, 0);
    // A schema-invalid state.json found at a SubagentStop is rebuilt the same way.
    std::fs::write(
        l.dir().join("state.json"),
        br#"{"slug": "s", "mode": "development", "phase": "nope", "tasks": {}}"#,
    )
    .unwrap();
    reason(&l.bound("T1", "<signal>T1_DONE</signal>"));
    assert_eq!(l.unit("T1")["status"], "verifying");
}

#[test]
fn knowledge_mode_with_phases() {
    let p = Project::new();
    let run = p.run(
        &[
            "iterative",
            "new",
            "future-work",
            "--mode",
            "knowledge",
            "--task",
            "R1",
            "--task",
            "R2",
        ],
        "",
    );
    assert_eq!(run.code, 0, "{run:?}");
    let dir = p.root.join(".claude/iterative/future-work");
    assert!(
        dir.join("plan.md").exists()
            && dir.join("sources").is_dir()
            && dir.join("outputs").is_dir()
    );
    p.write(".claude/iterative/future-work/plan.md", "## Phases\n\n- [ ] **R1**: Gather\n  - Criteria: 10 sources\n- [ ] **R2**: Synthesize\n\n## Dependencies\n\nR1 → R2\n");
    let l = Loop {
        p,
        slug: "future-work".into(),
    };
    let r = reason(&l.bound("R1", "<signal>R1_DONE</signal>"));
    assert!(r.contains("plan.md") && r.contains("10 sources"), "{r}");
    reason(&l.bound("R1", "<signal>R1_DONE</signal>"));
    silent(&l.bound("R1", "<signal>R1_DONE</signal>"));
    let s = l.state();
    assert_eq!(s["phases"]["R1"]["status"], "done");
    assert_eq!(s["current_phase"], "R2");
    assert!(s.get("tasks").is_none());
}

#[test]
fn waiting_units_unblock_when_dependencies_finish() {
    let l = Loop::new("s", &["T3", "T5"], 5);
    let mut s = l.state();
    s["tasks"]["T5"] = json!({"status": "blocked", "reason": "Waiting on T3", "max_iterations": 5});
    std::fs::write(
        l.dir().join("state.json"),
        serde_json::to_vec_pretty(&s).unwrap(),
    )
    .unwrap();
    for _ in 0..3 {
        l.bound("T3", "<signal>T3_DONE</signal>");
    }
    let u = l.unit("T5");
    assert_eq!(u["status"], "pending");
    assert!(u.get("reason").is_none());
    assert_eq!(l.state()["current_task"], "T5");
}

#[test]
fn session_start_shows_guardrails_context_and_remaining() {
    let l = Loop::new("s", &["T1"], 5);
    l.p.write(
        ".claude/iterative/s/context.md",
        "# s Context\n\n**Goal:** Ship login.\n",
    );
    l.migrate_first_guardrail();
    reason(&l.bound("T1", "Started.\nRemaining: wire the session store"));
    let run = l.p.hook(&l.p.payload("SessionStart.compact.json"));
    let ctx = run.context();
    for want in [
        "Goal:** Ship login.",
        "## Migrate first",
        "- **When**: touching models",
        "- **Learned**: T1 iteration 0",
        "Current: T1 (in_progress, iteration 1 of 5)",
        "Last remaining: wire the session store",
        "<signal>T1_DONE</signal>",
    ] {
        assert!(ctx.contains(want), "missing {want:?} in {ctx}");
    }
    assert!(ctx.chars().count() <= 10_000);
}

#[test]
fn huge_guardrails_stay_within_the_cap() {
    let l = Loop::new("s", &["T1"], 5);
    l.p.write(
        ".claude/iterative/s/guardrails.md",
        "# Guardrails\n".to_string() + &"é lesson\n".repeat(5000),
    );
    l.p.write(".claude/iterative/s/context.md", "ctx ".repeat(5000));
    let run = l.p.hook(&l.p.payload("SessionStart.startup.json"));
    let ctx = run.context();
    assert!(ctx.chars().count() <= 10_000, "{}", ctx.chars().count());
}

#[test]
fn commits_are_recorded_against_the_current_unit() {
    let l = Loop::new("s", &["T1"], 5);
    reason(&l.bound("T1", "Started."));
    let mut bash = l.p.payload("PostToolUse.Bash.json");
    bash["tool_input"]["command"] = json!("git commit -m 'feat(s): add model'");
    bash["tool_response"]["stdout"] =
        json!("[main 1a2b3c4] feat(s): add model\n 1 file changed, 3 insertions(+)");
    assert_eq!(l.p.hook(&bash).code, 0);
    assert_eq!(l.state()["commits"], json!(["1a2b3c4: feat(s): add model"]));
    // The same commit twice is recorded once; a failed commit (no hash line) not at all.
    l.p.hook(&bash);
    bash["tool_response"]["stdout"] = json!("nothing to commit, working tree clean");
    l.p.hook(&bash);
    assert_eq!(l.state()["commits"].as_array().unwrap().len(), 1);
    reason(&l.bound("T1", "<signal>T1_DONE</signal>"));
    assert!(
        l.progress().contains("**Commit:** 1a2b3c4"),
        "{}",
        l.progress()
    );
}

#[test]
fn an_edit_that_breaks_state_json_is_blocked_and_logged() {
    let l = Loop::new("s", &["T1"], 5);
    let path = l.dir().join("state.json");
    std::fs::write(&path, br#"{"slug": "s", "mode": "development", "phase": "execute", "tasks": {"T1": {"status": "finished"}}}"#).unwrap();
    let mut edit = l.p.payload("PostToolUse.Edit.json");
    edit["tool_input"]["file_path"] = json!(path);
    let run = l.p.hook(&edit);
    let v = run.json();
    assert_eq!(v["decision"], "block", "{v}");
    let r = v["reason"].as_str().unwrap();
    assert!(
        r.contains("/tasks/T1/status") && r.contains("taskhook recover"),
        "{r}"
    );
    // Issue 14 item 13: taskhook's notes are comment lines the seed's readers skip.
    assert!(l
        .progress()
        .contains(&format!("<!-- taskhook {NOW} invalid: state.json")));
    // An edit of an unrelated file is a no-op.
    let before = l.p.snapshot();
    silent(&l.p.hook(&l.p.payload("PostToolUse.Edit.json")));
    assert_eq!(l.p.snapshot(), before);
}

#[test]
fn ambiguous_bare_ids_change_nothing_and_name_the_candidates() {
    let p = Project::new();
    for slug in ["alpha", "beta"] {
        assert_eq!(
            p.run(&["iterative", "new", slug, "--task", "T1"], "").code,
            0
        );
    }
    let l = Loop {
        p,
        slug: "alpha".into(),
    };
    let before = l.p.snapshot();
    let run = l.stop("z", "Do it", "<signal>T1_DONE</signal>");
    let msg = run.json()["systemMessage"].as_str().unwrap().to_string();
    assert!(
        msg.contains("alpha/T1") && msg.contains("beta/T1") && msg.contains("STORE/ID"),
        "{msg}"
    );
    assert_eq!(l.p.snapshot(), before);
    // The qualified form resolves.
    let run = l.stop(
        "z",
        "Do <task>beta/T1</task>",
        "<signal>beta/T1_DONE</signal>",
    );
    assert!(reason(&run).contains("confirmation pass"));
    let beta: Value = serde_json::from_slice(
        &std::fs::read(l.p.root.join(".claude/iterative/beta/state.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(beta["tasks"]["T1"]["status"], "confirming");
}

#[test]
fn hand_commands_signal_status_archive() {
    let l = Loop::new("s", &["T1"], 5);
    let run =
        l.p.run(&["iterative", "signal", "s", "T1", "DONE", "--json"], "");
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.json()["state"]["status"], "confirming");
    assert!(run.json()["instruction"]
        .as_str()
        .unwrap()
        .contains("confirmation pass"));
    let st = l.p.run(&["iterative", "status", "--json"], "");
    assert_eq!(
        st.json()["stores"][0]["state"]["tasks"]["T1"]["status"],
        "confirming"
    );
    l.p.run(&["iterative", "signal", "s", "T1", "nonsense"], "")
        .assert_one_line_usage_error();
    l.p.run(&["iterative", "signal", "s", "T9", "DONE"], "")
        .assert_one_line_error();
    // Issue 14 item 15: unfinished work is archived only with --force.
    let a = l.p.run(&["iterative", "archive", "s", "--force"], "");
    assert_eq!(a.code, 0, "{a:?}");
    let archived = l.p.root.join(".claude/iterative/archive/s-20260301");
    let s: Value =
        serde_json::from_slice(&std::fs::read(archived.join("state.json")).unwrap()).unwrap();
    assert_eq!(s["phase"], "complete");
    assert!(!l.dir().exists());
    // Archived stores are not discovered any more.
    let st = l.p.run(&["status", "--json"], "");
    assert_eq!(st.json()["stores"], json!([]));
}

#[test]
fn hostile_slugs_and_ids_are_refused() {
    let p = Project::new();
    let before = p.snapshot();
    for args in [
        &["iterative", "new", "../../etc/x", "--task", "T1"][..],
        &["iterative", "new", "ok", "--task", "../T1"],
        &["iterative", "new", ".hidden"],
        &["iterative", "signal", "../x", "T1", "DONE"],
    ] {
        p.run(args, "").assert_one_line_error();
    }
    assert_eq!(p.snapshot(), before);
}

#[test]
fn lock_timeout_exits_one_naming_the_lock_and_changes_nothing() {
    use std::time::Duration;
    use taskhook::store::{folder_lock_path, Clock, Store};
    let l = Loop::new("s", &["T1"], 5);
    let lock = folder_lock_path(&l.dir());
    let (held_tx, held_rx) = std::sync::mpsc::channel();
    let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
    let holder = std::thread::spawn(move || {
        let s = Store::new(Clock::system(), Duration::from_secs(5));
        s.trust(&std::env::temp_dir(), false);
        s.with_lock(&lock, || {
            held_tx.send(()).unwrap();
            done_rx.recv().unwrap();
            Ok(())
        })
        .unwrap();
    });
    held_rx.recv().unwrap();
    let before = l.p.snapshot();
    let transcript = l.p.tmp.path().join("t.jsonl");
    std::fs::write(
        &transcript,
        "{\"type\":\"user\",\"message\":{\"content\":\"<task>T1</task>\"}}\n",
    )
    .unwrap();
    let mut payload = l.p.payload("SubagentStop.json");
    payload["agent_transcript_path"] = json!(transcript);
    let mut cmd = l.p.cmd();
    cmd.env("TASKHOOK_LOCK_TIMEOUT", "0.3");
    let start = std::time::Instant::now();
    let run =
        l.p.run_with(cmd, &["hook"], serde_json::to_vec(&payload).unwrap());
    let waited = start.elapsed();
    done_tx.send(()).unwrap();
    holder.join().unwrap();
    run.assert_one_line_error();
    assert!(
        run.stderr.contains(".taskhook.lock") && run.stderr.contains("TASKHOOK_LOCK_TIMEOUT"),
        "{run:?}"
    );
    assert!(waited < Duration::from_secs(5), "{waited:?}");
    assert_eq!(l.p.snapshot(), before);
}

#[test]
fn nothing_to_reconcile_takes_no_lock_and_writes_nothing() {
    let l = Loop::new("s", &["T1"], 5);
    std::fs::remove_file(l.dir().join(".taskhook.lock")).unwrap();
    let before = l.p.snapshot();
    let run = l.p.hook(&l.p.payload("SessionStart.startup.json"));
    assert!(run.context().contains("Current: T1"));
    assert_eq!(l.p.snapshot(), before, "SessionStart took a lock or wrote");
    // A commit while no unit is current records nothing.
    let mut st = l.state();
    st["current_task"] = Value::Null;
    std::fs::write(
        l.dir().join("state.json"),
        serde_json::to_vec_pretty(&st).unwrap(),
    )
    .unwrap();
    let before = l.p.snapshot();
    let mut bash = l.p.payload("PostToolUse.Bash.json");
    bash["tool_input"]["command"] = json!("git commit -m x");
    bash["tool_response"]["stdout"] = json!("[main 1a2b3c4] x");
    silent(&l.p.hook(&bash));
    assert_eq!(l.p.snapshot(), before, "no lock file, no write");
}

#[test]
fn reconcile_dry_run_reports_then_reconcile_writes_and_recover_rebuilds() {
    let l = Loop::new("s", &["T1"], 5);
    let state = l.dir().join("state.json");
    let first = std::fs::read(&state).unwrap();
    reason(&l.bound("T1", "<signal>T1_DONE</signal>"));
    std::fs::write(&state, &first).unwrap();
    let before = l.p.snapshot();
    let dry = l.p.run(&["reconcile", "--dry-run", "--json"], "");
    assert_eq!(dry.code, 0, "{dry:?}");
    let v = dry.json();
    assert_eq!(v["dry_run"], true);
    let changed: Vec<String> = v["changed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap().to_string())
        .collect();
    assert!(
        changed.iter().any(|p| p.ends_with("s/state.json"))
            && changed.iter().any(|p| p.ends_with("s/progress.md")),
        "{changed:?}"
    );
    assert_eq!(l.p.snapshot(), before, "dry run wrote");
    let real = l.p.run(&["reconcile"], "");
    assert_eq!(real.code, 0, "{real:?}");
    assert!(
        real.stdout.contains("changed: ") && real.stdout.contains("T1 is now confirming"),
        "{real:?}"
    );
    assert_eq!(l.unit("T1")["status"], "confirming");
    assert_eq!(
        l.p.run(&["reconcile"], "").stdout.trim_end().lines().last(),
        Some("Nothing to reconcile.")
    );

    // recover: rebuild state.json from progress.md, keeping the bad file aside.
    std::fs::write(&state, b"garbage").unwrap();
    assert_eq!(l.p.run(&["validate"], "").code, 1);
    let rec = l.p.run(&["recover", ".claude/iterative/s"], "");
    assert_eq!(rec.code, 0, "{rec:?}");
    assert!(rec.stdout.contains("Rebuilt"), "{rec:?}");
    assert_eq!(l.unit("T1")["status"], "confirming");
    assert_eq!(l.p.run(&["validate"], "").code, 0);
    l.p.run(&["recover", ".claude/nowhere"], "")
        .assert_one_line_error();
}

#[test]
fn a_failing_store_at_session_start_is_told_to_the_model() {
    let l = Loop::new("s", &["T1"], 5);
    std::fs::remove_file(l.dir().join("state.json")).unwrap();
    std::fs::create_dir(l.dir().join("state.json")).unwrap();
    let run = l.p.hook(&l.p.payload("SessionStart.startup.json"));
    assert_eq!(run.code, 0, "{run:?}");
    let v = run.json();
    let ctx = v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert!(
        ctx.contains("taskhook: iterative s: refusing to read") && ctx.contains("a folder"),
        "{ctx}"
    );
    assert!(
        v["systemMessage"].as_str().unwrap().contains("state.json"),
        "{v}"
    );
}

#[test]
fn a_commit_in_the_first_iteration_is_recorded() {
    let l = Loop::new("s", &["T1"], 5);
    assert_eq!(l.unit("T1")["status"], "pending");
    let mut bash = l.p.payload("PostToolUse.Bash.subagent.json");
    bash["tool_input"]["command"] = json!("git add . && git commit -m 'feat: parser'");
    bash["tool_response"]["stdout"] =
        json!("[master (root-commit) 1a2b3c4] feat: parser\n 1 file changed");
    assert_eq!(l.p.hook(&bash).code, 0);
    assert_eq!(l.state()["commits"], json!(["1a2b3c4: feat: parser"]));
    reason(&l.bound("T1", "Committed.\n<signal>T1_DONE</signal>"));
    assert!(
        l.progress().contains("**Commit:** 1a2b3c4"),
        "{}",
        l.progress()
    );
}

#[test]
fn the_compaction_fork_is_no_subagent() {
    let l = Loop::new("s", &["T1"], 5);
    let before = l.p.snapshot();
    let mut stop = l.p.payload("SubagentStop.compact_fork.json");
    stop["last_assistant_message"] = json!(
        "<summary>Work on <task>T1</task>; its completion signal is <signal>T1_DONE</signal>.</summary>"
    );
    silent(&l.p.hook(&stop));
    assert_eq!(l.p.snapshot(), before);
}

#[test]
fn a_transcript_written_late_still_binds_the_subagent() {
    let l = Loop::new("s", &["T1"], 5);
    // Claude Code writes the subagent transcript asynchronously; here it appears 200 ms after
    // SubagentStop fired.
    let dir = l.p.tmp.path().join("subagents");
    std::fs::create_dir_all(&dir).unwrap();
    let transcript = dir.join("agent-late.jsonl");
    let mut payload = l.p.payload("SubagentStop.json");
    payload["agent_transcript_path"] = json!(transcript);
    payload["last_assistant_message"] = json!("Not finished yet.");
    let child = l.p.spawn_hook(&payload);
    std::thread::sleep(std::time::Duration::from_millis(200));
    let line =
        json!({"type": "user", "message": {"role": "user", "content": "Do <task>T1</task>"}});
    std::fs::write(&transcript, format!("{line}\n")).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    assert_eq!(v["decision"], "block", "treated as unbound: {v}");
    assert_eq!(l.unit("T1")["iterations_used"], 1);
}

#[test]
fn a_plan_of_many_megabytes_is_read() {
    // 100,000 units make a tasks.md of about 13 MB (issue 23): more than the 4 MiB a small
    // file may have, within the 64 MiB of a state file.
    let l = Loop::new("s", &["T1"], 5);
    let plan = l.dir().join("tasks.md");
    let mut text = std::fs::read_to_string(&plan).unwrap();
    text.push_str("\n## Notes\n\n");
    while text.len() < 5 * 1024 * 1024 {
        text.push_str("- the parser keeps its error messages short and names the file.\n");
    }
    std::fs::write(&plan, text).unwrap();
    let run = l.bound("T1", "Done.\n<signal>T1_DONE</signal>");
    assert!(reason(&run).contains("confirmation pass"), "{run:?}");
    assert_eq!(l.unit("T1")["iterations_used"], 1);
}

/// A DONE at SubagentStop reads progress.md once (the log's catch-up under the lock): the unit's
/// last entry is read only when the new entry needs its **Remaining** (issue 21). Traced with
/// strace, which `.ci/run` installs.
#[test]
fn a_done_stop_reads_progress_md_once() {
    let l = Loop::new("auth", &["T1", "T2"], 5);
    // An earlier entry of T1, so that the unit has a last entry to read.
    let first = l.bound("T1", "Started the model.\nRemaining: the tests");
    assert!(reason(&first).contains("not done yet"), "{first:?}");
    let payload = l.p.subagent_stop(
        "a1",
        "Work on <task>T1</task>.",
        "Wrote the model.\n<signal>T1_DONE</signal>",
    );
    let stdin = l.p.tmp.path().join("stop.json");
    std::fs::write(&stdin, serde_json::to_vec(&payload).unwrap()).unwrap();
    let trace = l.p.tmp.path().join("trace.txt");
    let out = std::process::Command::new("strace")
        .args(["-f", "-qq", "-e", "trace=openat", "-o"])
        .arg(&trace)
        .arg(assert_cmd::cargo::cargo_bin("taskhook"))
        .arg("hook")
        .current_dir(&l.p.root)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &l.p.home)
        .env("TASKHOOK_NOW", crate::common::NOW)
        .stdin(std::fs::File::open(&stdin).unwrap())
        .output()
        .unwrap_or_else(|e| panic!("strace could not run ({e}); .ci/run installs it"));
    assert!(out.status.success(), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("confirmation pass"),
        "{out:?}"
    );
    let trace = std::fs::read_to_string(&trace).unwrap();
    let reads = trace
        .lines()
        .filter(|l| l.contains("/progress.md\"") && l.contains("O_RDONLY"))
        .count();
    assert_eq!(reads, 1, "{trace}");
    assert!(
        l.progress().contains("**Remaining:** None"),
        "{}",
        l.progress()
    );
}
