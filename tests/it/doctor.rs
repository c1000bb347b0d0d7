//! `taskhook doctor`: one finding per line with its fix, exit 1 when something needs action.

use serde_json::{json, Value};

use crate::common::Project;

/// `doctor --json` with the real clock (the harness fixes it, which doctor warns about) and
/// the built binary on PATH (as after `./install.sh`).
fn doctor(p: &Project) -> (i32, Value) {
    doctor_with_path(p, &crate::common::path_with_bin())
}

/// `doctor --json` with this PATH.
fn doctor_with_path(p: &Project, path: &std::ffi::OsStr) -> (i32, Value) {
    let mut c = p.cmd();
    c.env_remove("TASKHOOK_NOW").env("PATH", path);
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
    c.env_remove("TASKHOOK_NOW")
        .env("PATH", crate::common::path_with_bin());
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
    std::fs::write(
        &path,
        text.replace(
            "\"command\": \"taskhook\"",
            "\"command\": \"/nowhere/taskhook\"",
        ),
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

/// The repository's plugin installed as `claude plugin install` does: its files under the
/// user's plugin cache, `installed_plugins.json` pointing there, and enabled in the user's
/// settings. `command` replaces every hook's command.
fn install_plugin(p: &Project, command: &str) -> std::path::PathBuf {
    let claude = p.home.join(".claude");
    let root = claude.join("plugins/cache/taskhook/taskhook/0.1.0");
    std::fs::create_dir_all(root.join("hooks")).unwrap();
    let hooks = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/hooks/hooks.json"))
        .unwrap()
        .replace(
            "\"command\": \"taskhook\"",
            &format!("\"command\": {command:?}"),
        );
    std::fs::write(root.join("hooks/hooks.json"), hooks).unwrap();
    std::fs::write(
        claude.join("plugins/installed_plugins.json"),
        serde_json::to_vec(&json!({"version": 2, "plugins": {"taskhook@taskhook": [
            {"scope": "user", "installPath": root, "version": "0.1.0"}]}}))
        .unwrap(),
    )
    .unwrap();
    std::fs::write(
        claude.join("settings.json"),
        r#"{"enabledPlugins": {"taskhook@taskhook": true}}"#,
    )
    .unwrap();
    root
}

/// Issue 26 item 2: registered only through the plugin, with `taskhook` not on the PATH the
/// hooks see, every hook would fail: doctor says so and exits 1 (never "Nothing needs action").
#[test]
fn a_plugin_whose_command_does_not_resolve_is_an_error() {
    let p = Project::new();
    install_plugin(&p, "taskhook");
    let (code, v) = doctor_with_path(&p, &crate::common::path_without_bin());
    assert_eq!(code, 1, "{v}");
    assert!(
        has(
            &v,
            "error",
            "the plugin taskhook@taskhook runs `taskhook` from PATH"
        ),
        "{v}"
    );
    let mut c = p.cmd();
    c.env_remove("TASKHOOK_NOW");
    let human = p.run_with(c, &["doctor"], "");
    assert!(!human.stdout.contains("Nothing needs action"), "{human:?}");
    // On PATH: fine.
    let (code, v) = doctor(&p);
    assert_eq!(code, 0, "{v}");
    assert!(has(&v, "ok", "its hooks' commands resolve"), "{v}");
    // PATH as Claude Code will see it: a settings file's env.PATH wins over the shell's.
    let bin = assert_cmd::cargo::cargo_bin("taskhook");
    p.write(
        ".claude/settings.local.json",
        serde_json::to_vec(&json!({"env": {"PATH": bin.parent().unwrap()}})).unwrap(),
    );
    let (code, v) = doctor_with_path(&p, &crate::common::path_without_bin());
    assert_eq!(code, 0, "{v}");
    // ${CLAUDE_PLUGIN_ROOT} is the plugin's folder.
    std::fs::remove_file(p.root.join(".claude/settings.local.json")).unwrap();
    let root = install_plugin(&p, "${CLAUDE_PLUGIN_ROOT}/bin/taskhook");
    let (code, v) = doctor(&p);
    assert_eq!(code, 1, "{v}");
    let want = format!(
        "runs `{}/bin/taskhook`, which is not an executable",
        root.display()
    );
    assert!(has(&v, "error", &want), "{v}");
    std::fs::create_dir_all(root.join("bin")).unwrap();
    std::os::unix::fs::symlink(&bin, root.join("bin/taskhook")).unwrap();
    let (code, v) = doctor(&p);
    assert_eq!(code, 0, "{v}");
    // Enabled but never installed.
    std::fs::remove_file(p.home.join(".claude/plugins/installed_plugins.json")).unwrap();
    let (code, v) = doctor(&p);
    assert_eq!(code, 1, "{v}");
    assert!(has(&v, "warn", "is enabled in"), "{v}");
}

/// Issue 26 item 4: the shared settings run `taskhook` from PATH; doctor checks it resolves.
#[test]
fn the_shared_registrations_command_must_resolve() {
    let p = Project::new();
    assert_eq!(p.run(&["install"], "").code, 0);
    let (code, v) = doctor_with_path(&p, &crate::common::path_without_bin());
    assert_eq!(code, 1, "{v}");
    let findings = v["findings"].as_array().unwrap();
    let errors: Vec<&Value> = findings
        .iter()
        .filter(|f| {
            f["message"]
                .as_str()
                .unwrap()
                .contains("runs `taskhook` from PATH")
        })
        .collect();
    assert_eq!(
        errors.len(),
        1,
        "one finding for the file, naming its events: {v}"
    );
    assert!(errors[0]["message"]
        .as_str()
        .unwrap()
        .starts_with("every hook in"));
    let (code, v) = doctor(&p);
    assert_eq!(code, 0, "{v}");
    assert!(has(&v, "ok", "every registered command resolves"), "{v}");
    // Some events only: they are named.
    let path = p.root.join(".claude/settings.json");
    let mut s: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    s["hooks"]["SessionStart"][0]["hooks"][0]["command"] = json!("/usr/local/bin/taskhook");
    std::fs::write(&path, serde_json::to_vec(&s).unwrap()).unwrap();
    let (_, v) = doctor_with_path(&p, &crate::common::path_without_bin());
    assert!(
        has(
            &v,
            "error",
            "PreToolUse, PostToolUse, SubagentStop, PreCompact, SessionEnd, TaskCompleted in"
        ),
        "{v}"
    );
    assert!(has(&v, "error", "SessionStart in"), "{v}");
}

/// Issue 26 item 3: Claude Code's task tools are off unless CLAUDE_CODE_ENABLE_TODO_TOOLS is
/// set (in the environment or any settings file's env); doctor says which, and what follows.
#[test]
fn doctor_says_whether_claude_codes_task_tools_are_on() {
    let p = Project::new();
    assert_eq!(p.run(&["install"], "").code, 0);
    let (code, v) = doctor(&p);
    assert_eq!(code, 0, "a note, not an action: {v}");
    assert!(
        has(
            &v,
            "note",
            "task tools (TaskCreate, TaskUpdate, TodoWrite) are off"
        ),
        "{v}"
    );
    assert!(
        has(&v, "note", "the claude-tasks mirror stays empty"),
        "{v}"
    );
    assert!(has(&v, "note", "projects/iterative/execute/cdd"), "{v}");
    for (file, env) in [
        (
            ".claude/settings.json",
            json!({"CLAUDE_CODE_ENABLE_TODO_TOOLS": "1"}),
        ),
        (
            ".claude/settings.local.json",
            json!({"CLAUDE_CODE_ENABLE_TODO_TOOLS": "true", "CLAUDE_CODE_ENABLE_TASKS": "0"}),
        ),
    ] {
        let mut s: Value = serde_json::from_str(
            &std::fs::read_to_string(p.root.join(".claude/settings.json")).unwrap(),
        )
        .unwrap();
        s["env"] = env;
        p.write(file, serde_json::to_vec(&s).unwrap());
        let (_, v) = doctor(&p);
        assert!(has(&v, "ok", "task tools are on"), "{file}: {v}");
    }
    assert!(has(&v_last(&p), "ok", "TodoWrite calls are mirrored"));
    // The process environment counts too.
    let q = Project::new();
    let mut c = q.cmd();
    c.env_remove("TASKHOOK_NOW")
        .env("CLAUDE_CODE_ENABLE_TODO_TOOLS", "1");
    let run = q.run_with(c, &["doctor", "--json"], "");
    assert!(has(&run.json(), "ok", "in the environment"), "{run:?}");
}

fn v_last(p: &Project) -> Value {
    doctor(p).1
}

/// Issue 26 item 5, the reverse of install's refusal: the plugin enabled and a settings file
/// registering taskhook too is one warning, naming both and how to keep one.
#[test]
fn the_plugin_beside_a_settings_registration_is_a_warning() {
    let p = Project::new();
    assert_eq!(p.run(&["install"], "").code, 0);
    install_plugin(&p, "taskhook");
    let (code, v) = doctor(&p);
    assert_eq!(code, 1, "{v}");
    let warns: Vec<&Value> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| {
            f["message"]
                .as_str()
                .unwrap()
                .contains("registered 2 times")
        })
        .collect();
    assert_eq!(warns.len(), 1, "{v}");
    let msg = warns[0]["message"].as_str().unwrap();
    assert!(
        msg.starts_with("every event is registered 2 times"),
        "{msg}"
    );
    assert!(msg.contains("the plugin taskhook@taskhook"), "{msg}");
    assert!(
        warns[0]["fix"]
            .as_str()
            .unwrap()
            .contains("claude plugin disable taskhook@taskhook"),
        "{v}"
    );
}
