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
    let wins: Vec<Vec<String>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..3)
            .map(|i| {
                let team = &team;
                s.spawn(move || {
                    let mut won = Vec::new();
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
    let winners: BTreeSet<usize> = owner.values().copied().collect();
    assert!(winners.len() >= 2, "one clone won everything: {wins:?}");
    // The remote holds one successful claim per task: every claim op for a task but the
    // first is lost, and the claims that count name the clone that won it.
    for i in 0..3 {
        team.ok(i, &["sync"]);
    }
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
