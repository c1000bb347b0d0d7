//! Team sync (CONTRACT §8) through the real binary and real git: a plan published by one
//! clone reaches the others, claims race through the remote and each unit is won once,
//! changes made after `sync init` travel, the log is compacted.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::json;

use crate::sync_team::Team;

#[test]
fn a_plan_published_by_one_clone_reaches_the_others_on_their_first_sync() {
    let team = Team::new(3);
    team.plan(0, 14);
    let init = team.ok(0, &["sync", "init"]);
    assert!(init.stdout.contains("published: projects plan"), "{init:?}");
    // The log lives on refs/taskhook/ops of the remote, on no branch.
    assert!(!team.remote_tip().is_empty());
    let branches = crate::sync_team::git(&team.remote, &["branch", "--list"]);
    assert_eq!(branches.lines().count(), 1, "{branches}");
    for i in [1, 2] {
        // Fresh clones: no .claude/ at all until their first sync.
        assert!(!team.clones[i].join(".claude").exists());
        let r = team.ok(i, &["sync"]);
        assert!(r.stdout.contains("sync turned on"), "{r:?}");
        assert!(
            r.stdout.contains("made from the log: projects plan"),
            "{r:?}"
        );
        assert_eq!(team.statuses(i).len(), 14);
        assert_eq!(team.statuses(i), team.statuses(0));
        let n = team.ok(i, &["next", "--json"]);
        assert_eq!(n.json()["unit"], "plan/T1", "{n:?}");
    }
    // The files are the same bytes everywhere.
    let bytes =
        |i: usize| std::fs::read(team.clones[i].join(".claude/projects/plan/tasks.json")).unwrap();
    assert_eq!(bytes(0), bytes(1));
    assert_eq!(bytes(1), bytes(2));
    // A second sync has nothing to do.
    let again = team.ok(1, &["sync", "--json"]).json();
    assert_eq!(again["ops_in"], 0, "{again}");
    assert_eq!(again["ops_out"], 0, "{again}");
}

#[test]
fn a_claim_is_proven_on_the_remote_and_a_second_clone_is_refused_naming_the_winner() {
    let team = Team::new(2);
    team.plan(0, 2);
    team.ok(0, &["sync", "init"]);
    team.ok(1, &["sync"]);
    let won = team.ok(0, &["claim", "plan/T1", "--json"]).json();
    assert_eq!(won["claim"]["owner"], crate::sync_team::session(0), "{won}");
    assert!(
        won["sync"].as_str().unwrap().contains("proven on origin"),
        "{won}"
    );
    // Clone 1 has not synced since: its claim fetches first and is refused.
    let lost = team.run(1, &["claim", "plan/T1"]);
    lost.assert_one_line_error();
    assert!(lost.stderr.contains("held by session 00000000"), "{lost:?}");
    // Nothing of clone 1's reached the remote.
    let claims: Vec<_> = team
        .remote_ops()
        .into_iter()
        .filter(|o| o["kind"] == "claim")
        .collect();
    assert_eq!(claims.len(), 1, "{claims:?}");
    // done by the winner travels; the other clone sees it.
    team.ok(0, &["done", "plan/T1"]);
    team.ok(1, &["sync"]);
    assert_eq!(team.status_of(1, "T1"), "COMPLETE");
}

#[test]
fn three_clones_racing_next_claim_done_win_each_task_once_and_end_with_everything_done() {
    let team = Team::new(3);
    team.plan(0, 14);
    team.ok(0, &["sync", "init"]);
    team.ok(1, &["sync"]);
    team.ok(2, &["sync"]);
    // The three loops start together (no head start for the clone spawned first).
    let start = std::sync::Barrier::new(3);
    let lost = std::sync::atomic::AtomicUsize::new(0);
    let wins: Vec<Vec<String>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..3)
            .map(|i| {
                let team = &team;
                let start = &start;
                let lost = &lost;
                s.spawn(move || {
                    let mut won = Vec::new();
                    start.wait();
                    for _ in 0..80 {
                        let n = team.ok(i, &["next", "--json"]).json();
                        let Some(unit) = n["unit"].as_str().map(String::from) else {
                            break;
                        };
                        let c = team.run(i, &["claim", &unit]);
                        if c.code != 0 {
                            assert!(
                                c.stderr.contains("held by")
                                    || c.stderr.contains("lost the race")
                                    || c.stderr.contains("COMPLETE")
                                    || c.stderr.contains("not ready")
                                    || c.stderr.contains("already finished")
                                    || c.stderr.contains("could not win"),
                                "clone {i}: {c:?}"
                            );
                            lost.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                            continue;
                        }
                        team.ok(i, &["done", &unit]);
                        won.push(unit);
                    }
                    won
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    eprintln!("wins per clone: {wins:?}");
    let mut owner: BTreeMap<String, usize> = BTreeMap::new();
    for (i, w) in wins.iter().enumerate() {
        for u in w {
            assert!(
                owner.insert(u.clone(), i).is_none(),
                "{u} won twice: {wins:?}"
            );
        }
    }
    // The clones really raced: more than one won, or the others lost claims to the one that
    // won everything (which clone's push lands first is the scheduler's to say).
    let winners: BTreeSet<usize> = owner.values().copied().collect();
    let lost = lost.into_inner();
    assert!(winners.len() >= 2 || lost > 0, "no race happened: {wins:?}");
    // The remote holds one successful claim per task: every claim op for a task but the
    // first is lost, and the claims that count name the clone that won it.
    for _ in 0..2 {
        for i in 0..3 {
            team.ok(i, &["sync"]);
        }
    }
    // Every clone computed the same store, to the byte: files, logs, claims.
    let files = |i: usize| crate::sync_team::files(&team.clones[i].join(".claude/projects/plan"));
    assert_eq!(files(0), files(1));
    assert_eq!(files(1), files(2));
    for i in 0..3 {
        let s = team.statuses(i);
        assert_eq!(s.len(), 14);
        assert!(s.iter().all(|(_, st)| st == "COMPLETE"), "clone {i}: {s:?}");
    }
    assert_eq!(owner.len(), 14, "{wins:?}");
    let dones: Vec<_> = team
        .remote_ops()
        .into_iter()
        .filter(|o| o["kind"] == "done")
        .collect();
    assert_eq!(dones.len(), 14, "{dones:?}");
    for d in &dones {
        let task = format!("plan/{}", d["task"].as_str().unwrap());
        let i = owner[&task];
        assert_eq!(d["actor"], crate::sync_team::session(i), "{d}");
    }
}

#[test]
fn a_task_added_after_sync_init_reaches_the_other_clones() {
    let team = Team::new(2);
    team.plan(0, 2);
    team.ok(0, &["sync", "init"]);
    team.ok(1, &["sync"]);
    team.ok(
        0,
        &[
            "projects",
            "add",
            "plan",
            "T3",
            "--title",
            "Late",
            "--depends",
            "T1",
        ],
    );
    let ops = team.remote_ops();
    let add = ops.iter().find(|o| o["kind"] == "add").expect("an add op");
    assert_eq!(add["fields"]["args"][0], "projects", "{add}");
    team.ok(1, &["sync"]);
    let t3 = team.tasks(1)["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == "T3")
        .cloned()
        .expect("T3 in clone 1");
    assert_eq!(t3["title"], "Late");
    assert_eq!(t3["dependencies"], json!(["T1"]), "{t3}");
    // A store made after sync init is published too.
    team.ok(1, &["iterative", "new", "auth", "--task", "A1"]);
    team.ok(0, &["sync"]);
    assert!(team.clones[0]
        .join(".claude/iterative/auth/state.json")
        .exists());
}

/// Runs `args` in clone `i` with the clock at `at`.
fn at(team: &Team, i: usize, when: &str, args: &[&str]) -> crate::common::Run {
    let mut c = team.cmd(i);
    c.env("TASKHOOK_NOW", when);
    team.run_with(c, args, "")
}

#[test]
fn leases_travel_as_heartbeats_and_an_expired_claim_is_taken_over_across_clones() {
    let team = Team::new(2);
    let t0 = "2030-01-01T00:00:00Z";
    for args in [
        vec!["projects", "new", "plan"],
        vec!["projects", "add", "plan", "T1", "--title", "One"],
        vec!["sync", "init"],
    ] {
        let r = at(&team, 0, t0, &args);
        assert_eq!(r.code, 0, "{r:?}");
    }
    assert_eq!(at(&team, 1, t0, &["sync"]).code, 0);
    let c = at(&team, 0, t0, &["claim", "plan/T1"]);
    assert_eq!(c.code, 0, "{c:?}");
    // Clone 0's session keeps working: a hook event renews its lease here …
    let mut ev = crate::common::reference_payload("PostToolUse.Read.json");
    ev["cwd"] = json!(team.clones[0].display().to_string());
    ev["session_id"] = json!(crate::sync_team::session(0));
    let mut hook = team.cmd(0);
    hook.env("TASKHOOK_NOW", "2030-01-01T00:20:00Z");
    let r = team.run_with(hook, &["hook"], serde_json::to_vec(&ev).unwrap());
    assert_eq!(r.code, 0, "{r:?}");
    // … and its next sync sends that as one heartbeat op.
    let s = at(&team, 0, "2030-01-01T00:20:00Z", &["sync"]);
    assert_eq!(s.code, 0, "{s:?}");
    let beats = team
        .remote_ops()
        .into_iter()
        .filter(|o| o["kind"] == "heartbeat")
        .count();
    assert_eq!(beats, 1);
    // A second sync right after sends none (at most one every few minutes).
    at(&team, 0, "2030-01-01T00:21:00Z", &["sync"]);
    assert_eq!(
        team.remote_ops()
            .iter()
            .filter(|o| o["kind"] == "heartbeat")
            .count(),
        1
    );
    // So at 00:40 the lease (renewed at 00:20) still holds on clone 1.
    let early = at(&team, 1, "2030-01-01T00:40:00Z", &["claim", "plan/T1"]);
    early.assert_one_line_error();
    assert!(
        early.stderr.contains("held by session 00000000"),
        "{early:?}"
    );
    // Two hours later it has expired: clone 1 takes it over, and says so.
    let late = at(&team, 1, "2030-01-01T02:00:00Z", &["claim", "plan/T1"]);
    assert_eq!(late.code, 0, "{late:?}");
    assert!(
        late.stdout
            .contains("took over plan/T1 from session 00000000"),
        "{late:?}"
    );
    // Clone 0's done, made before it heard of that, loses once merged and says who holds it.
    let done = at(&team, 0, "2030-01-01T02:01:00Z", &["done", "plan/T1"]);
    done.assert_one_line_error();
    assert!(done.stderr.contains("held by session 00000001"), "{done:?}");
    assert_eq!(team.status_of(0, "T1"), "IN_PROGRESS");
    let s = at(&team, 0, "2030-01-01T02:02:00Z", &["sync", "--json"]);
    assert_eq!(s.code, 0, "{s:?}");
}

#[test]
fn the_log_is_compacted_and_a_fresh_clone_reads_a_snapshot_and_a_tail() {
    let mut team = Team::new(1);
    team.plan(0, 10);
    team.ok(0, &["sync", "init"]);
    team.set_sync(0, "compact_every", json!(6));
    for t in 1..=8 {
        team.ok(0, &["done", &format!("plan/T{t}")]);
    }
    let ops = team.remote_ops();
    let snapshots: Vec<_> = ops.iter().filter(|o| o["kind"] == "publish").collect();
    assert_eq!(snapshots.len(), 2, "{snapshots:?}");
    let k = team.add_clone();
    let r = team.ok(k, &["sync", "--json"]).json();
    // The fresh clone read the newest snapshot and the ops after it, not the whole log.
    assert!(r["ops_in"].as_u64().unwrap() < 8, "{r}");
    for t in 1..=8 {
        assert_eq!(team.status_of(k, &format!("T{t}")), "COMPLETE");
    }
    assert_eq!(team.status_of(k, "T9"), "PENDING");
    let bytes =
        |i: usize| std::fs::read(team.clones[i].join(".claude/projects/plan/tasks.json")).unwrap();
    assert_eq!(bytes(0), bytes(k));
}

#[test]
fn stores_outside_the_project_or_tracked_by_git_are_not_synced_and_status_and_doctor_say_so() {
    let team = Team::new(1);
    let ws = team.tmp.path().join("elsewhere");
    let mut c = team.cmd(0);
    c.env("CDD_DIR", &ws);
    let r = team.run_with(c, &["cdd", "init"], "");
    assert_eq!(r.code, 0, "{r:?}");
    team.plan(0, 1);
    team.ok(0, &["projects", "new", "tracked"]);
    team.ok(0, &["projects", "add", "tracked", "X1", "--title", "x"]);
    crate::sync_team::git(&team.clones[0], &["add", "-f", ".claude/projects/tracked"]);
    crate::sync_team::git(&team.clones[0], &["commit", "-q", "-m", "track it"]);
    let mut c = team.cmd(0);
    c.env("CDD_DIR", &ws);
    let init = team.run_with(c, &["sync", "init"], "");
    assert_eq!(init.code, 0, "{init:?}");
    assert!(
        init.stdout.contains("published: projects plan\n"),
        "{init:?}"
    );
    assert!(
        init.stdout
            .contains("not synced: it lies outside the project"),
        "{init:?}"
    );
    assert!(
        init.stdout
            .contains("projects tracked: left out: git tracks its files"),
        "{init:?}"
    );
    let mut c = team.cmd(0);
    c.env("CDD_DIR", &ws);
    let st = team.run_with(c, &["sync", "status", "--json"], "").json();
    let states: Vec<(String, String)> = st["stores"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["id"].as_str().unwrap().to_string(),
                s["state"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert!(
        states.contains(&("plan".into(), "synced".into())),
        "{states:?}"
    );
    assert!(
        states
            .iter()
            .any(|(id, s)| id == "tracked" && s.starts_with("left out")),
        "{states:?}"
    );
    assert!(
        states
            .iter()
            .any(|(_, s)| s.contains("outside the project")),
        "{states:?}"
    );
    let doc = team.run(0, &["doctor"]);
    assert!(doc.stdout.contains("holds refs/taskhook/ops at"), "{doc:?}");
    // A unit of a store sync does not hold is claimed here, as without sync.
    let c = team.ok(0, &["claim", "tracked/X1"]);
    assert!(c.stdout.contains("its store is not synced"), "{c:?}");
    assert_eq!(team.queued(0), 0);
    // A remote that is not there is an error doctor names.
    team.set_sync(0, "remote", json!("upstream"));
    let doc = team.run(0, &["doctor"]);
    assert!(doc.stdout.contains("does not have"), "{doc:?}");
}

#[test]
fn a_subagent_signal_in_one_clone_reaches_the_others() {
    let team = Team::new(2);
    team.plan(0, 2);
    team.ok(0, &["sync", "init"]);
    team.ok(1, &["sync"]);
    team.ok(0, &["claim", "plan/T1"]);
    let transcript = team.tmp.path().join("agent.jsonl");
    std::fs::write(
        &transcript,
        format!(
            "{}\n{}\n",
            json!({"type": "user", "message": {"role": "user", "content": "<task>plan/T1</task>"}}),
            json!({"type": "assistant", "message": {"content": [{"type": "text", "text": "<signal>plan/T1_DONE</signal>"}]}})
        ),
    )
    .unwrap();
    let mut stop = crate::common::reference_payload("SubagentStop.json");
    stop["cwd"] = json!(team.clones[0].display().to_string());
    stop["session_id"] = json!(crate::sync_team::session(0));
    stop["agent_transcript_path"] = json!(transcript.display().to_string());
    stop["last_assistant_message"] = json!("<signal>plan/T1_DONE</signal>");
    let r = team.run_with(team.cmd(0), &["hook"], serde_json::to_vec(&stop).unwrap());
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(team.status_of(0, "T1"), "COMPLETE");
    assert_eq!(team.queued(0), 1);
    team.ok(0, &["sync"]);
    team.ok(1, &["sync"]);
    assert_eq!(team.status_of(1, "T1"), "COMPLETE");
    let signal = team
        .remote_ops()
        .into_iter()
        .find(|o| o["kind"] == "signal")
        .expect("a signal op");
    assert_eq!(signal["fields"]["signal"], "DONE", "{signal}");
}

#[test]
fn a_cdd_workspace_inside_the_project_travels_and_a_fresh_clone_finds_it() {
    let team = Team::new(2);
    let root = &team.clones[0];
    std::fs::create_dir_all(root.join(".claude")).unwrap();
    std::fs::write(
        root.join(".claude/taskhook.json"),
        r#"{"cdd_dir": "work/cdd"}"#,
    )
    .unwrap();
    team.ok(0, &["cdd", "init"]);
    std::fs::write(
        root.join("work/cdd/order.json"),
        r#"{"tasks": [{"task": "foo.md"}, {"task": "bar.md"}]}"#,
    )
    .unwrap();
    std::fs::write(root.join("work/cdd/foo.md"), "# Foo\n").unwrap();
    std::fs::write(root.join("work/cdd/bar.md"), "# Bar\n").unwrap();
    team.ok(0, &["cdd", "import", "work/cdd"]);
    team.ok(0, &["sync", "init"]);
    team.ok(0, &["claim", "cdd/foo.md"]);
    team.ok(0, &["done", "cdd/foo.md"]);
    // The fresh clone has no .claude/taskhook.json: the first sync names the workspace there
    // before it replays the claim and the done.
    let r = team.ok(1, &["sync"]);
    assert!(r.stdout.contains("cdd workspace work/cdd named"), "{r:?}");
    let done = team.clones[1].join("work/cdd/tasks/completed/foo.md");
    assert!(done.exists(), "{r:?}");
    assert!(team.clones[1]
        .join("work/cdd/tasks/pending/bar.md")
        .exists());
    let n = team.ok(1, &["next", "--json"]).json();
    assert_eq!(n["unit"], "cdd/bar.md", "{n}");
}
