//! `taskhook doctor`: one finding per line with its fix, exit 1 when something needs action.

use serde_json::{json, Value};

use crate::common::Project;

/// `doctor --json` with the real clock (the harness fixes it, which doctor warns about).
fn doctor(p: &Project) -> (i32, Value) {
    let mut c = p.cmd();
    c.env_remove("TASKHOOK_NOW");
    let run = p.run_with(c, &["doctor", "--json"], "");
    (run.code, run.json())
}

fn has(v: &Value, level: &str, text: &str) -> bool {
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f["level"] == level && f["message"].as_str().unwrap().contains(text))
}

#[test]
fn a_fresh_project_is_told_to_install_and_then_is_fine() {
    let p = Project::new();
    let before = p.snapshot();
    let (code, v) = doctor(&p);
    assert_eq!(code, 1, "{v}");
    assert!(has(&v, "error", "not registered"), "{v}");
    assert_eq!(p.snapshot(), before, "doctor writes nothing");
    let mut c = p.cmd();
    c.env_remove("TASKHOOK_NOW");
    let human = p.run_with(c, &["doctor"], "");
    assert!(
        human.stdout.contains("ERROR registrations")
            && human.stdout.contains("→ `taskhook install`"),
        "{human:?}"
    );
    assert_eq!(p.run(&["install"], "").code, 0);
    let (code, v) = doctor(&p);
    assert_eq!(code, 0, "{v}");
    assert!(has(&v, "ok", "all 7 events registered"), "{v}");
    assert_eq!(v["ok"], true);
    // The test build is cargo's, dynamically linked: a note where install.sh links statically.
    let (level, text) = if cfg!(all(
        target_arch = "x86_64",
        target_os = "linux",
        target_env = "gnu"
    )) && !cfg!(target_feature = "crt-static")
    {
        (
            "note",
            "this taskhook is dynamically linked: every hook pays",
        )
    } else if cfg!(target_feature = "crt-static") {
        ("ok", "this taskhook is linked statically")
    } else {
        ("ok", "this taskhook is dynamically linked")
    };
    assert!(has(&v, level, text), "{v}");
}

#[test]
fn duplicates_missing_binaries_planted_links_and_bad_stores_are_found() {
    let p = Project::new();
    assert_eq!(p.run(&["install"], "").code, 0);
    assert_eq!(p.run(&["install", "--local"], "").code, 0);
    let (code, v) = doctor(&p);
    assert_eq!(code, 1);
    assert!(has(&v, "warn", "registered 2 times"), "{v}");
    assert_eq!(p.run(&["install", "--local", "--uninstall"], "").code, 0);
    // A registration pointing at a binary that is gone.
    let path = p.root.join(".claude/settings.json");
    let text = std::fs::read_to_string(&path).unwrap();
    let bin = assert_cmd::cargo::cargo_bin("taskhook");
    std::fs::write(
        &path,
        text.replace(bin.to_str().unwrap(), "/nowhere/taskhook"),
    )
    .unwrap();
    let (_, v) = doctor(&p);
    assert!(has(&v, "error", "/nowhere/taskhook"), "{v}");
    // A planted store folder and a state file that fails its schema.
    let outside = p.tmp.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::create_dir_all(p.root.join(".claude")).unwrap();
    std::os::unix::fs::symlink(&outside, p.root.join(".claude/iterative")).unwrap();
    p.write(
        ".claude/projects/web/tasks.json",
        serde_json::to_vec(&json!({"tasks": 5})).unwrap(),
    );
    let (code, v) = doctor(&p);
    assert_eq!(code, 1);
    assert!(has(&v, "error", "is a symbolic link"), "{v}");
    let mut c = p.cmd();
    c.env("TASKHOOK_NOW", "2026-03-01T12:00:00Z");
    let run = p.run_with(c, &["doctor", "--json"], "");
    assert!(has(&run.json(), "warn", "TASKHOOK_NOW"), "{run:?}");
}
