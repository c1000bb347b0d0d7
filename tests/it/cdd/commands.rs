//! The ten commands: the seed's example from init to the end, the history's exact lines, the
//! escalation ladder into failed/, imports, and every failure's JSON reply and code.

use serde_json::{json, Value};

use super::{code, ok, Ws, SEED_ORDER};

fn at(h: &str) -> String {
    format!("2025-12-24T{h}Z")
}

#[test]
fn the_seeds_example_from_init_to_the_end() {
    let w = Ws::new();
    let init = ok(&w.cdd(&["init"]));
    assert_eq!(init["created"].as_array().unwrap().len(), 7, "{init}");
    for f in ["pending", "in_progress", "completed", "failed"] {
        assert!(w.path(&format!("tasks/{f}")).is_dir());
    }
    assert!(w.path("tmp").is_dir());
    assert_eq!(std::fs::read(w.path("tasks/history.jsonl")).unwrap(), b"");
    // Idempotent: nothing created, nothing rewritten.
    assert_eq!(ok(&w.cdd(&["init"]))["created"], json!([]));

    w.write_tasks(SEED_ORDER, &["foo.md", "bar.md", "baz.md"]);
    std::fs::create_dir_all(w.path("research")).unwrap();
    let run = |h: &str, args: &[&str]| ok(&w.cdd_at(&at(h), args));
    let imported = run("10:30:00", &["import"]);
    assert_eq!(imported["imported"], json!(["foo.md", "bar.md", "baz.md"]));
    assert_eq!(w.folders_of("foo.md"), ["pending"]);
    assert!(!w.path("tasks/foo.md").exists());
    // The order is the seed's file, untouched.
    assert_eq!(
        std::fs::read_to_string(w.path("tasks/order.json")).unwrap(),
        SEED_ORDER
    );
    // Importing again adds nothing.
    let again = run("10:30:30", &["import"]);
    assert_eq!(again["imported"], json!([]));
    assert_eq!(
        again["already_imported"],
        json!(["foo.md", "bar.md", "baz.md"])
    );

    assert_eq!(
        run("10:30:40", &["next"]),
        json!({"type": "task", "task": "foo.md", "group": "Core", "model": "sonnet", "thinking": "none", "status": "pending"})
    );
    run("10:31:00", &["start", "foo.md"]);
    // The task in progress comes first.
    assert_eq!(run("10:32:00", &["next"])["status"], "in_progress");
    let done = run("10:45:00", &["done", "foo.md"]);
    assert_eq!(done["elapsed_seconds"], 840);
    assert_eq!(run("10:46:00", &["next"])["task"], "bar.md");
    run("10:50:00", &["start", "bar.md"]);
    let esc = run("11:00:00", &["escalate", "bar.md", "tests flaky"]);
    assert_eq!(esc["level"], 2);
    assert_eq!(w.folders_of("bar.md"), ["pending"]);
    assert_eq!(w.order()["tasks"][1]["thinking"], "extended");
    let next = run("11:01:00", &["next"]);
    assert_eq!(
        (next["task"].clone(), next["thinking"].clone()),
        (json!("bar.md"), json!("extended"))
    );
    run("11:05:00", &["start", "bar.md"]);
    run("11:20:00", &["done", "bar.md"]);
    let stop = json!({"type": "stop", "stop": "verify-core", "message": "Verify core features work before proceeding"});
    assert_eq!(run("11:30:00", &["next"]), stop);
    // Asked again: the same stop, logged once.
    assert_eq!(run("11:31:00", &["next"]), stop);
    assert_eq!(code(&w.cdd(&["start", "baz.md"])), "STOP_NOT_PASSED");
    let passed = run("12:00:00", &["continue", "verify-core"]);
    assert_eq!(passed["already_passed"], false);
    assert_eq!(
        run("12:00:30", &["continue", "verify-core"])["already_passed"],
        true
    );
    assert_eq!(run("12:01:00", &["next"])["task"], "baz.md");
    run("12:02:00", &["start", "baz.md"]);
    run("12:12:00", &["done", "baz.md"]);
    assert_eq!(run("12:13:00", &["next"]), json!({"type": "done"}));

    // The history: exactly the seed's lines, fields and spacing (the escalation adds its reason).
    let expected = [
        r#"{"timestamp": "2025-12-24T10:30:00Z", "action": "import", "task": "foo.md", "to": "pending"}"#,
        r#"{"timestamp": "2025-12-24T10:30:00Z", "action": "import", "task": "bar.md", "to": "pending"}"#,
        r#"{"timestamp": "2025-12-24T10:30:00Z", "action": "import", "task": "baz.md", "to": "pending"}"#,
        r#"{"timestamp": "2025-12-24T10:31:00Z", "action": "start", "task": "foo.md", "from": "pending", "to": "in_progress"}"#,
        r#"{"timestamp": "2025-12-24T10:45:00Z", "action": "done", "task": "foo.md", "from": "in_progress", "to": "completed", "elapsed_seconds": 840}"#,
        r#"{"timestamp": "2025-12-24T10:50:00Z", "action": "start", "task": "bar.md", "from": "pending", "to": "in_progress"}"#,
        r#"{"timestamp": "2025-12-24T11:00:00Z", "action": "escalate", "task": "bar.md", "from_model": "sonnet", "from_thinking": "thinking", "to_model": "sonnet", "to_thinking": "extended", "reason": "tests flaky"}"#,
        r#"{"timestamp": "2025-12-24T11:05:00Z", "action": "start", "task": "bar.md", "from": "pending", "to": "in_progress"}"#,
        r#"{"timestamp": "2025-12-24T11:20:00Z", "action": "done", "task": "bar.md", "from": "in_progress", "to": "completed", "elapsed_seconds": 900}"#,
        r#"{"timestamp": "2025-12-24T11:30:00Z", "action": "stop_reached", "task": "verify-core", "stop": "verify-core", "message": "Verify core features work before proceeding"}"#,
        r#"{"timestamp": "2025-12-24T12:00:00Z", "action": "stop_continue", "task": "verify-core", "stop": "verify-core"}"#,
        r#"{"timestamp": "2025-12-24T12:02:00Z", "action": "start", "task": "baz.md", "from": "pending", "to": "in_progress"}"#,
        r#"{"timestamp": "2025-12-24T12:12:00Z", "action": "done", "task": "baz.md", "from": "in_progress", "to": "completed", "elapsed_seconds": 600}"#,
    ];
    assert_eq!(w.history_lines(), expected);
    // Each line validates, and the seed's own example lines parse to the same shapes.
    let mut c = w.p.cmd();
    c.env("CDD_DIR", &w.dir);
    let v = w.p.run_with(c, &["validate", "--json"], "");
    assert_eq!(v.code, 0, "{v:?}");
    assert!(v.stdout.contains("history.jsonl"), "{v:?}");

    let list = ok(&w.cdd(&["list"]));
    assert_eq!(list["count"], 3);
    assert_eq!(
        list["stops"],
        json!([{"stop": "verify-core", "message": "Verify core features work before proceeding", "status": "passed"}])
    );
    assert_eq!(ok(&w.cdd(&["list", "completed"]))["count"], 3);
    assert_eq!(ok(&w.cdd(&["list", "pending"]))["tasks"], json!([]));
    let stats = ok(&w.cdd(&["stats"]));
    assert_eq!(
        stats["counts"],
        json!({"pending": 0, "in_progress": 0, "completed": 3, "failed": 0})
    );
    assert_eq!(stats["elapsed_seconds"]["total"], 2340);
    assert_eq!(stats["elapsed_seconds"]["per_task"]["bar.md"], 900);
    assert_eq!(
        stats["escalations"]["by_level"],
        json!({"1": 0, "2": 1, "3": 0, "4": 0})
    );
    assert_eq!(stats["stops"]["passed"], json!(["verify-core"]));
}

#[test]
fn escalation_climbs_all_four_levels_into_failed() {
    let w = Ws::new();
    w.ok(&["init"]);
    w.write_tasks(
        r#"{"tasks": [{"task": "hard.md", "group": "Core", "model": "sonnet", "thinking": "none"}, {"task": "next.md"}]}"#,
        &["hard.md", "next.md"],
    );
    w.ok(&["import"]);
    let pairs = [
        ("sonnet", "thinking"),
        ("sonnet", "extended"),
        ("opus", "extended"),
        ("opus", "ultrathink"),
    ];
    for (i, (m, t)) in pairs.iter().enumerate() {
        w.ok(&["start", "hard.md"]);
        let d = w.ok(&["escalate", "hard.md", &format!("attempt {}", i + 1)]);
        assert_eq!(d["level"], i + 1, "{d}");
        assert_eq!(
            (
                d["to_model"].as_str().unwrap(),
                d["to_thinking"].as_str().unwrap()
            ),
            (*m, *t)
        );
        assert_eq!(w.folders_of("hard.md"), ["pending"]);
        let entry = &w.order()["tasks"][0];
        assert_eq!(
            (
                entry["model"].as_str().unwrap(),
                entry["thinking"].as_str().unwrap()
            ),
            (*m, *t)
        );
        assert_eq!(entry["group"], "Core", "other fields kept");
    }
    w.ok(&["start", "hard.md"]);
    let d = w.ok(&["escalate", "hard.md", "still failing"]);
    assert_eq!(
        (d["to"].clone(), d["level"].clone()),
        (json!("failed"), Value::Null)
    );
    assert_eq!(w.folders_of("hard.md"), ["failed"]);
    let h = w.history();
    let last = h.last().unwrap();
    assert_eq!(last["action"], "fail");
    assert_eq!(last["from"], "in_progress");
    assert_eq!(last["to"], "failed");
    assert_eq!(
        last["reason"],
        "max escalation level reached: still failing"
    );
    let escalations: Vec<&Value> = h.iter().filter(|l| l["action"] == "escalate").collect();
    assert_eq!(escalations.len(), 4);
    assert_eq!(escalations[0]["from_thinking"], "none");
    assert_eq!(escalations[3]["to_thinking"], "ultrathink");
    // A failed task is finished: next goes on; it cannot be escalated again.
    assert_eq!(w.ok(&["next"])["task"], "next.md");
    assert_eq!(
        code(&w.cdd(&["escalate", "hard.md", "again"])),
        "WRONG_STATUS"
    );
    let stats = w.ok(&["stats"]);
    assert_eq!(
        stats["escalations"]["by_level"],
        json!({"1": 1, "2": 1, "3": 1, "4": 1})
    );
    assert_eq!(stats["escalations"]["failed_at_max_level"], 1);
    assert_eq!(stats["counts"]["failed"], 1);
    // `fail` by hand, from pending.
    let f = w.ok(&["fail", "next.md", "not needed"]);
    assert_eq!(
        (f["from"].clone(), f["reason"].clone()),
        (json!("pending"), json!("not needed"))
    );
    assert_eq!(w.ok(&["next"]), json!({"type": "done"}));
}

#[test]
fn a_second_import_from_a_path_adds_only_what_is_new() {
    let w = Ws::seeded();
    w.ok(&["start", "foo.md"]);
    w.ok(&["escalate", "bar.md", "too hard"]);
    let src = w.p.tmp.path().join("plan2");
    std::fs::create_dir_all(&src).unwrap();
    let order2 = r#"{"tasks": [
        {"task": "foo.md", "model": "haiku"}, {"task": "new.md", "group": "Extra"},
        {"task": "bar.md"}, {"stop": "verify-core"}, {"stop": "verify-all", "message": "All good?"},
        {"task": "baz.md"}]}"#;
    std::fs::write(src.join("order.json"), order2).unwrap();
    std::fs::write(src.join("new.md"), "# new\n").unwrap();
    std::fs::write(src.join("foo.md"), "# a stale copy\n").unwrap();
    let d = w.ok(&["import", src.to_str().unwrap()]);
    assert_eq!(d["imported"], json!(["new.md"]));
    assert_eq!(d["already_imported"], json!(["foo.md", "bar.md", "baz.md"]));
    // The started task stays where it is; the stale copy is left beside the order.
    assert_eq!(w.folders_of("foo.md"), ["in_progress"]);
    assert!(src.join("foo.md").exists() && !src.join("new.md").exists());
    let order = w.order();
    let ids: Vec<&str> = order["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["task"].as_str().or(t["stop"].as_str()).unwrap())
        .collect();
    assert_eq!(
        ids,
        [
            "foo.md",
            "new.md",
            "bar.md",
            "verify-core",
            "verify-all",
            "baz.md"
        ]
    );
    assert_eq!(
        order["tasks"][0]["model"], "sonnet",
        "entries already there are kept"
    );
    assert_eq!(order["tasks"][2]["thinking"], "extended", "escalation kept");
    let imports = w
        .history()
        .iter()
        .filter(|l| l["action"] == "import")
        .count();
    assert_eq!(imports, 4);
    // A file the order names but nobody has: nothing changes at all.
    std::fs::write(
        src.join("order.json"),
        r#"{"tasks": [{"task": "ghost.md"}]}"#,
    )
    .unwrap();
    let before = crate::common::snapshot(&w.dir);
    assert_eq!(
        code(&w.cdd(&["import", src.to_str().unwrap()])),
        "TASK_FILE_MISSING"
    );
    assert_eq!(crate::common::snapshot(&w.dir), before);
}

#[test]
fn failures_are_one_json_object_with_a_stable_code() {
    let w = Ws::new();
    // Without CDD_DIR (and no cdd_dir setting) every command says so.
    let verbs: [&[&str]; 10] = [
        &["init"],
        &["import"],
        &["next"],
        &["start", "a.md"],
        &["done", "a.md"],
        &["fail", "a.md"],
        &["escalate", "a.md", "why"],
        &["continue", "s"],
        &["list"],
        &["stats"],
    ];
    for v in verbs {
        let mut args = vec!["cdd"];
        args.extend_from_slice(v);
        assert_eq!(code(&w.p.run(&args, "")), "CDD_DIR_NOT_SET", "{v:?}");
    }
    assert!(!w.dir.exists());
    assert_eq!(code(&w.cdd(&["next"])), "NOT_INITIALIZED");
    assert!(!w.dir.exists(), "a refused command creates nothing");
    w.ok(&["init"]);
    assert_eq!(code(&w.cdd(&["next"])), "NO_ORDER");
    assert_eq!(code(&w.cdd(&["import"])), "NO_ORDER");
    std::fs::write(
        w.path("tasks/order.json"),
        r#"{"tasks": [{"task": "a.md", "thinking": "max"}]}"#,
    )
    .unwrap();
    assert_eq!(code(&w.cdd(&["next"])), "INVALID_ORDER");
    std::fs::write(
        w.path("tasks/order.json"),
        r#"{"tasks": [{"task": "../a.md"}]}"#,
    )
    .unwrap();
    assert_eq!(code(&w.cdd(&["import"])), "INVALID_ORDER");
    std::fs::write(w.path("tasks/order.json"), "{not json").unwrap();
    assert_eq!(code(&w.cdd(&["list"])), "INVALID_ORDER");
    w.write_tasks(SEED_ORDER, &["foo.md", "bar.md"]);
    assert_eq!(code(&w.cdd(&["next"])), "NOT_IMPORTED");
    assert_eq!(code(&w.cdd(&["import"])), "TASK_FILE_MISSING");
    std::fs::write(w.path("tasks/baz.md"), "# baz\n").unwrap();
    w.ok(&["import"]);
    let cases: [(&[&str], &str); 15] = [
        (&["start", "nope.md"], "NOT_FOUND"),
        (&["continue", "nope"], "NOT_FOUND"),
        (&["import", "/nonexistent/order.json"], "NOT_FOUND"),
        (&["done", "foo.md"], "WRONG_STATUS"),
        (&["start", "baz.md"], "STOP_NOT_PASSED"),
        (&["start", "../etc/passwd"], "INVALID_NAME"),
        (&["done", ".hidden"], "INVALID_NAME"),
        (&["list", "finished"], "INVALID_STATUS"),
        (&["frobnicate"], "USAGE"),
        (&["start"], "USAGE"),
        (&["escalate", "foo.md"], "USAGE"),
        (&["next", "extra"], "USAGE"),
        (&["next", "--verbose"], "USAGE"),
        (&["stats", "a", "b"], "USAGE"),
        (&["continue"], "USAGE"),
    ];
    for (args, expected) in cases {
        assert_eq!(code(&w.cdd(args)), expected, "{args:?}");
    }
    // `taskhook cdd` alone prints its help, like every group of commands.
    let help = w.cdd(&[]);
    assert_eq!(help.code, 0, "{help:?}");
    assert!(help.stdout.contains("Usage: taskhook cdd"), "{help:?}");
    w.ok(&["start", "foo.md"]);
    assert_eq!(code(&w.cdd(&["start", "bar.md"])), "TASK_IN_PROGRESS");
    assert_eq!(code(&w.cdd(&["start", "foo.md"])), "WRONG_STATUS");
    std::fs::copy(
        w.path("tasks/in_progress/foo.md"),
        w.path("tasks/completed/foo.md"),
    )
    .unwrap();
    assert_eq!(code(&w.cdd(&["done", "foo.md"])), "INCONSISTENT");
    // --human: text on stdout, or the error and its code on stderr.
    let h = w.cdd(&["next", "--human"]);
    assert_eq!(h.code, 1);
    assert!(
        h.stdout.is_empty() && h.stderr.contains("[INCONSISTENT]"),
        "{h:?}"
    );
    let h = w.cdd(&["list", "--human"]);
    assert_eq!(h.code, 0, "{h:?}");
    assert!(
        h.stdout.contains("bar.md [pending]")
            && h.stdout.contains("stop verify-core [not_reached]"),
        "{h:?}"
    );
}

#[test]
fn refusals_change_nothing() {
    let w = Ws::seeded();
    w.ok(&["start", "foo.md"]);
    let before = crate::common::snapshot(&w.dir);
    for args in [
        &["start", "bar.md"][..],
        &["done", "bar.md"],
        &["start", "baz.md"],
        &["continue", "nope"],
        &["fail", "nope.md"],
        &["list", "x"],
    ] {
        assert_eq!(w.cdd(args).code, 1, "{args:?}");
    }
    // next and list read only; a stop not reached is not logged by list or stats.
    w.ok(&["next"]);
    w.ok(&["list"]);
    w.ok(&["stats"]);
    assert_eq!(crate::common::snapshot(&w.dir), before);
}

#[test]
fn the_workspace_can_come_from_the_projects_settings() {
    let w = Ws::new();
    w.p.write(".claude/taskhook.json", r#"{"cdd_dir": "work/cdd"}"#);
    let run = w.p.run(&["cdd", "init"], "");
    let d = super::ok(&run);
    assert_eq!(d["workspace"], json!(w.p.root.join("work/cdd")));
    assert!(w.p.root.join("work/cdd/tasks/pending").is_dir());
    // CDD_DIR wins over the setting.
    assert!(w.cdd(&["init"]).code == 0 && w.dir.join("tasks").is_dir());
    w.p.write(".claude/taskhook.json", r#"{"cdd_dir": 5}"#);
    assert_eq!(code(&w.p.run(&["cdd", "next"], "")), "CONFIG_INVALID");
}

#[test]
fn an_import_from_a_path_initializes_the_workspace_only_when_it_succeeds() {
    let w = Ws::new();
    let src = w.p.tmp.path().join("plan");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::write(src.join("order.json"), SEED_ORDER).unwrap();
    std::fs::write(src.join("foo.md"), "# foo\n").unwrap();
    let path = src.join("order.json");
    assert_eq!(
        code(&w.cdd(&["import", path.to_str().unwrap()])),
        "TASK_FILE_MISSING"
    );
    assert!(!w.dir.exists(), "a refused import creates nothing");
    for f in ["bar.md", "baz.md"] {
        std::fs::write(src.join(f), format!("# {f}\n")).unwrap();
    }
    let d = ok(&w.cdd(&["import", path.to_str().unwrap()]));
    assert_eq!(d["imported"], json!(["foo.md", "bar.md", "baz.md"]));
    assert_eq!(w.folders_of("baz.md"), ["pending"]);
    assert!(w.path("tmp").is_dir() && w.path("tasks/failed").is_dir());
    // The order is validated and rewritten 2-space; the source order stays where it was.
    assert_eq!(w.order()["tasks"][2]["stop"], "verify-core");
    assert!(path.exists() && !src.join("foo.md").exists());
}
