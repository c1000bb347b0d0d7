//! Task names that enter a workspace from a plan or a person: the workspace's own file and
//! folder names are refused wherever a name comes in (import, a hand-written order.json read by
//! any verb or by SessionStart), with nothing moved.

use serde_json::{json, Value};

use super::{code, payload, Ws, SEED_ORDER};
use crate::common::{snapshot, Run};

fn session_start(w: &Ws) -> Run {
    w.hook(&payload(w, "SessionStart.startup.json"))
}

fn error(run: &Run) -> String {
    run.json()["error"].as_str().unwrap().to_string()
}

/// The seed's order with one more task, `name`, after foo.md.
fn order_with(name: &str) -> String {
    let mut v: Value = serde_json::from_str(SEED_ORDER).unwrap();
    v["tasks"]
        .as_array_mut()
        .unwrap()
        .insert(1, json!({"task": name, "group": "Core"}));
    serde_json::to_string_pretty(&v).unwrap()
}

const OWN: &str = "it is a name the workspace uses itself (order.json, history.jsonl and their copies order.json.* and history.jsonl.*, the folders pending, in_progress, completed, failed, tmp and tasks)";

#[test]
fn an_import_naming_the_workspaces_own_files_is_refused_and_moves_nothing() {
    let w = Ws::seeded();
    ok_start(&w);
    let plan = w.p.tmp.path().join("plan");
    std::fs::create_dir_all(&plan).unwrap();
    for name in [
        "history.jsonl",
        "order.json",
        "History.JSONL",
        "order.json.tmp",
        "history.jsonl.bak",
        "pending",
        "in_progress",
        "completed",
        "failed",
        "tmp",
        "tasks",
    ] {
        // For `order.json`, the entry's file beside the order is the order itself.
        if name != "order.json" {
            std::fs::write(plan.join(name), "hostile\n").unwrap();
        }
        std::fs::write(plan.join("order.json"), order_with(name)).unwrap();
        for f in ["foo.md", "bar.md", "baz.md"] {
            std::fs::write(plan.join(f), "x\n").unwrap();
        }
        let before = snapshot(&w.dir);
        let path = plan.join("order.json");
        let run = w.cdd(&["import", path.to_str().unwrap()]);
        assert_eq!(code(&run), "INVALID_ORDER", "{name}: {run:?}");
        assert_eq!(
            error(&run),
            format!(
                "`{}` tasks[1]: invalid task name {name:?}: {OWN}; fix it (`taskhook schema cdd-order` shows the format) or import the order again",
                path.display()
            ),
            "{name}"
        );
        assert_eq!(snapshot(&w.dir), before, "{name}: nothing moved");
        assert!(plan.join(name).exists());
        if name != "order.json" {
            std::fs::remove_file(plan.join(name)).unwrap();
        }
    }
    // The audit log and the order are where they were, and the work goes on.
    assert!(w.path("tasks/history.jsonl").is_file());
    assert!(w.path("tasks/order.json").is_file());
    super::ok(&w.cdd(&["done", "foo.md"]));
}

fn ok_start(w: &Ws) {
    super::ok(&w.cdd(&["start", "foo.md"]));
}

#[test]
fn a_hand_written_order_naming_the_history_is_refused_by_import_and_every_verb() {
    let w = Ws::seeded();
    for name in ["history.jsonl", "order.json"] {
        let order = w.path("tasks/order.json");
        std::fs::write(&order, order_with(name)).unwrap();
        let before = snapshot(&w.dir);
        for args in [
            &["import"][..],
            &["next"],
            &["start", "foo.md"],
            &["list"],
            &["stats"],
        ] {
            let run = w.cdd(args);
            assert_eq!(code(&run), "INVALID_ORDER", "{name} {args:?}: {run:?}");
            assert!(
                error(&run).starts_with(&format!(
                    "`{}` tasks[1]: invalid task name {name:?}: it is a name the workspace uses itself",
                    order.display()
                )),
                "{run:?}"
            );
        }
        assert_eq!(snapshot(&w.dir), before, "{name}: nothing moved");
    }
}

#[test]
fn session_start_never_moves_the_history_for_an_entry_named_after_it() {
    let w = Ws::seeded();
    // A plan written by hand names the history as a task, and its log says it was imported:
    // the repair of "an import killed before its rename" would move the log into pending/.
    std::fs::write(w.path("tasks/order.json"), order_with("history.jsonl")).unwrap();
    let mut log = std::fs::read_to_string(w.path("tasks/history.jsonl")).unwrap();
    log.push_str(
        "{\"timestamp\": \"2026-03-01T11:00:00Z\", \"action\": \"import\", \"task\": \"history.jsonl\", \"to\": \"pending\"}\n",
    );
    std::fs::write(w.path("tasks/history.jsonl"), &log).unwrap();
    let before = snapshot(&w.dir);
    let ctx = session_start(&w).context();
    assert_eq!(snapshot(&w.dir), before, "nothing moved");
    assert!(!w.path("tasks/pending/history.jsonl").exists());
    assert!(
        ctx.contains("invalid task name \"history.jsonl\": it is a name the workspace uses itself"),
        "{ctx}"
    );
}

#[test]
fn the_workspaces_own_files_are_never_task_files() {
    // A workspace whose order.json names no such task: order.json and history.jsonl in tasks/
    // are not "files waiting for import", and a status folder's own-named file is no task.
    let w = Ws::seeded();
    std::fs::write(w.path("tasks/pending/order.json"), "{}\n").unwrap();
    let mut c = w.p.cmd();
    c.env("CDD_DIR", &w.dir);
    let st = w.p.run_with(c, &["status", "--json"], "").json();
    let text = st.to_string();
    assert!(!text.contains("not in order.json"), "{text}");
    let stats = super::ok(&w.cdd(&["stats"]));
    assert_eq!(stats["problems"], json!([]), "{stats}");
}

#[test]
fn an_edit_of_order_json_naming_the_history_is_blocked_and_logged() {
    let w = Ws::seeded();
    let order = w.path("tasks/order.json");
    std::fs::write(&order, order_with("history.jsonl")).unwrap();
    let mut edit = payload(&w, "PostToolUse.Write.json");
    edit["tool_input"]["file_path"] = json!(order);
    let v = w.hook(&edit).json();
    assert_eq!(v["decision"], "block", "{v}");
    assert_eq!(
        v["reason"].as_str().unwrap(),
        format!(
            "`{}` tasks[1]: invalid task name \"history.jsonl\": {OWN}. Every cdd command refuses this order until that entry is renamed (its file too).",
            order.display()
        )
    );
    let last = w.history().into_iter().last().unwrap();
    assert_eq!(last["action"], "error");
    assert!(
        last["message"]
            .as_str()
            .unwrap()
            .starts_with("an edit left order.json unusable: `"),
        "{last}"
    );
    // A valid edit is not answered.
    std::fs::write(&order, SEED_ORDER).unwrap();
    let run = w.hook(&edit);
    assert_eq!((run.code, run.stdout.as_str()), (0, ""), "{run:?}");
}

const WS: &str =
    "it contains whitespace, which <task> and <signal> tags and printed commands cannot carry";

#[test]
fn an_import_naming_a_task_or_stop_with_whitespace_is_refused_and_moves_nothing() {
    let w = Ws::new();
    super::ok(&w.cdd(&["init"]));
    for (name, entry, what) in [
        ("my task.md", json!({"task": "my task.md"}), "task name"),
        (" lead.md", json!({"task": " lead.md"}), "task name"),
        (
            "nbsp\u{a0}.md",
            json!({"task": "nbsp\u{a0}.md"}),
            "task name",
        ),
        ("verify core", json!({"stop": "verify core"}), "stop id"),
    ] {
        let mut order: Value = serde_json::from_str(SEED_ORDER).unwrap();
        order["tasks"].as_array_mut().unwrap().insert(1, entry);
        w.write_tasks(
            &serde_json::to_string(&order).unwrap(),
            &["foo.md", "bar.md", "baz.md"],
        );
        if what == "task name" {
            std::fs::write(w.path(&format!("tasks/{name}")), "x\n").unwrap();
        }
        let before = snapshot(&w.dir);
        let run = w.cdd(&["import"]);
        assert_eq!(code(&run), "INVALID_ORDER", "{name:?}: {run:?}");
        assert_eq!(
            error(&run),
            format!(
                "`{}` tasks[1]: invalid {what} {name:?}: {WS}; rename it (in the order, and its file for a task) and import again",
                w.path("tasks/order.json").display()
            )
        );
        assert_eq!(snapshot(&w.dir), before, "{name:?}: nothing moved");
        if what == "task name" {
            std::fs::remove_file(w.path(&format!("tasks/{name}"))).unwrap();
        }
    }
}

#[test]
fn a_hand_written_id_with_whitespace_is_reported_and_its_commands_quoted() {
    let w = Ws::seeded();
    // Written by hand (or by the seed's scripts): a task and a stop whose names hold a space.
    let mut order: Value = serde_json::from_str(SEED_ORDER).unwrap();
    let tasks = order["tasks"].as_array_mut().unwrap();
    tasks.insert(0, json!({"task": "my task.md", "group": "Core"}));
    tasks.insert(1, json!({"stop": "check it", "message": "Look at it"}));
    std::fs::write(
        w.path("tasks/order.json"),
        serde_json::to_string(&order).unwrap(),
    )
    .unwrap();
    std::fs::write(w.path("tasks/pending/my task.md"), "x\n").unwrap();
    let invalid_task = format!(
        "task name \"my task.md\" is not a valid id ({WS}); rename it (its order.json entry and its file)"
    );
    let invalid_stop =
        format!("stop id \"check it\" is not a valid id ({WS}); rename it in order.json");
    let ctx = session_start(&w).context();
    assert!(ctx.contains(&invalid_task), "{ctx}");
    assert!(ctx.contains(&invalid_stop), "{ctx}");
    assert!(
        ctx.contains("Next: 'my task.md' (Core, default model/none): no <task> tag can bind a subagent to it and no signal can finish it (its name is not a valid id); rename it, or move it yourself: `taskhook cdd start 'my task.md'`, then `taskhook cdd done 'my task.md'`."),
        "{ctx}"
    );
    assert!(!ctx.contains("<task>my task.md</task>"), "{ctx}");
    // The verbs still work on it, so nothing already there is stranded.
    super::ok(&w.cdd(&["start", "my task.md"]));
    let ctx = session_start(&w).context();
    assert!(
        ctx.contains("Next: 'my task.md' is in progress; no signal can finish it (its name is not a valid id): run `taskhook cdd done 'my task.md'` when its work is done."),
        "{ctx}"
    );
    super::ok(&w.cdd(&["done", "my task.md"]));
    let ctx = session_start(&w).context();
    assert!(
        ctx.contains("a person passes it with `taskhook cdd continue 'check it'`"),
        "{ctx}"
    );
    assert!(
        ctx.contains("until a person runs `taskhook cdd continue 'check it'`"),
        "{ctx}"
    );
    let refused = w.cdd(&["start", "foo.md"]);
    assert!(
        error(&refused).contains("a person runs `taskhook cdd continue 'check it'` first"),
        "{refused:?}"
    );
    // `status` reports both ids.
    let mut c = w.p.cmd();
    c.env("CDD_DIR", &w.dir);
    let st = w.p.run_with(c, &["status", "--json"], "").json();
    let problems = st["stores"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["layout"] == "cdd")
        .unwrap()["problems"]
        .clone();
    assert_eq!(problems, json!([invalid_task, invalid_stop]), "{st}");
}

#[test]
fn a_signal_before_a_task_no_tag_can_name_says_how_to_move_it() {
    let w = Ws::seeded();
    let mut order: Value = serde_json::from_str(SEED_ORDER).unwrap();
    order["tasks"]
        .as_array_mut()
        .unwrap()
        .insert(1, json!({"task": "my task.md"}));
    std::fs::write(
        w.path("tasks/order.json"),
        serde_json::to_string(&order).unwrap(),
    )
    .unwrap();
    std::fs::write(w.path("tasks/pending/my task.md"), "x\n").unwrap();
    let mut stop = payload(&w, "SubagentStop.json");
    stop["agent_id"] = json!("a1");
    stop["last_assistant_message"] = json!("<signal>foo.md_DONE</signal>");
    let run = w.hook(&stop);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(w.folders_of("foo.md"), ["completed"]);
    let ctx = w.hook(&payload(&w, "PostToolUse.Read.json")).context();
    assert!(
        ctx.contains("next is 'my task.md' (group -, model (default), thinking none): no <task> tag can bind a subagent to it and no signal can finish it (its name is not a valid id); rename it, or move it yourself: `taskhook cdd start 'my task.md'`, then `taskhook cdd done 'my task.md'`."),
        "{ctx}"
    );
}
