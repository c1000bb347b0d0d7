//! Ids a person or a plan gives a new unit are one word (issue 20 item 13): `<task>` and
//! `<signal>` tags ignore a name with whitespace, and a printed command would split it. Every
//! layout that creates units from such ids refuses one with whitespace, with one clear line and
//! nothing written. (cdd's import: tests/it/cdd/names.rs.)

use crate::common::Project;

const WS: &str =
    "it contains whitespace, which <task> and <signal> tags and printed commands cannot carry";

fn refused(p: &Project, args: &[&str], kind: &str, id: &str) {
    let before = p.snapshot();
    let run = p.run(args, "");
    run.assert_one_line_error();
    assert_eq!(
        run.stderr,
        format!("taskhook: invalid {kind} {id:?}: {WS}\n"),
        "{args:?}"
    );
    assert_eq!(p.snapshot(), before, "{args:?}: nothing written");
}

#[test]
fn projects_refuse_project_and_task_ids_with_whitespace() {
    let p = Project::new();
    refused(&p, &["projects", "new", "a b"], "project id", "a b");
    refused(&p, &["projects", "new", " web"], "project id", " web");
    assert_eq!(p.run(&["projects", "new", "web"], "").code, 0);
    refused(
        &p,
        &["projects", "add", "web", "T 1", "--title", "x"],
        "task id",
        "T 1",
    );
    refused(
        &p,
        &["projects", "add", "web", "T\u{a0}1", "--title", "x"],
        "task id",
        "T\u{a0}1",
    );
}

#[test]
fn iterative_refuses_slugs_and_unit_ids_with_whitespace() {
    let p = Project::new();
    refused(
        &p,
        &["iterative", "new", "my loop", "--task", "T1"],
        "slug",
        "my loop",
    );
    refused(
        &p,
        &["iterative", "new", "s", "--task", "T 1"],
        "unit id",
        "T 1",
    );
    assert_eq!(
        p.run(&["iterative", "new", "s", "--task", "T1"], "").code,
        0
    );
    refused(&p, &["iterative", "add", "s", "T 2"], "unit id", "T 2");
}

#[test]
fn execute_init_refuses_task_ids_with_whitespace() {
    let p = Project::new();
    refused(
        &p,
        &[
            "execute",
            "init",
            "docs/tasks/shop",
            "--layer",
            "0-setup=L0-001,L0 002",
        ],
        "task id",
        "L0 002",
    );
    let plan = p.tmp.path().join("plan.json");
    std::fs::write(&plan, r#"{"layers": {"0-setup": [" L0-001"]}}"#).unwrap();
    refused(
        &p,
        &[
            "execute",
            "init",
            "docs/tasks/shop",
            "--plan",
            plan.to_str().unwrap(),
        ],
        "task id",
        " L0-001",
    );
}

#[test]
fn stores_written_by_hand_with_such_ids_are_reported_and_their_commands_quoted() {
    let p = Project::new();
    assert_eq!(p.run(&["projects", "new", "web"], "").code, 0);
    let add = p.run(&["projects", "add", "web", "T1", "--title", "x"], "");
    assert_eq!(add.code, 0, "{add:?}");
    // A person renames the project's folder; another writes a task id with a space.
    std::fs::rename(
        p.root.join(".claude/projects/web"),
        p.root.join(".claude/projects/my app"),
    )
    .unwrap();
    let init = p.run(
        &[
            "execute",
            "init",
            "docs/tasks/shop",
            "--layer",
            "0-setup=L0-001",
        ],
        "",
    );
    assert_eq!(init.code, 0, "{init:?}");
    let state = p.root.join("docs/tasks/shop/execute-state.json");
    let text = std::fs::read_to_string(&state).unwrap();
    std::fs::write(&state, text.replace("L0-001", "L0 001")).unwrap();

    let ctx = p.hook(&p.payload("SessionStart.startup.json")).context();
    assert!(
        ctx.contains("`taskhook projects next 'my app'` names the next task."),
        "{ctx}"
    );
    let store = format!("store id \"my app\" is not a valid id ({WS}); rename it");
    let task = format!("id \"L0 001\" is not a valid id ({WS}); rename it");
    assert!(ctx.contains(&store), "{ctx}");
    assert!(ctx.contains(&task), "{ctx}");
    let st = p.run(&["status", "--json"], "").json();
    let problems: Vec<String> = st["stores"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["problems"].as_array().unwrap().clone())
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    assert!(problems.contains(&store), "{problems:?}");
    assert!(problems.contains(&task), "{problems:?}");
}
