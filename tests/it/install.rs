//! `taskhook install`: merges, is idempotent, backs up, uninstalls exactly, and matches the
//! committed `hooks/settings.json` snippet.

use serde_json::{json, Value};

use crate::common::Project;

fn settings(p: &Project) -> Value {
    serde_json::from_slice(&std::fs::read(p.root.join(".claude/settings.json")).unwrap()).unwrap()
}

fn backups(dir: &std::path::Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .map(|rd| {
            rd.map(|e| e.unwrap().file_name().into_string().unwrap())
                .filter(|n| n.contains("taskhook-backup"))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn fresh_install_registers_exec_form_hooks() {
    let p = Project::new();
    let run = p.run(&["install"], "");
    assert_eq!(run.code, 0, "{run:?}");
    let s = settings(&p);
    let hooks = s["hooks"].as_object().unwrap();
    let events: Vec<&String> = hooks.keys().collect();
    assert_eq!(
        events,
        [
            "SessionStart",
            "PreToolUse",
            "PostToolUse",
            "SubagentStop",
            "PreCompact",
            "SessionEnd",
            "TaskCompleted"
        ]
    );
    // CONTRACT §6: PreToolUse only for launches and Bash; every other tool call costs nothing.
    assert_eq!(hooks["PreToolUse"][0]["matcher"], "Agent|Task|Bash");
    assert!(hooks["PostToolUse"][0].get("matcher").is_none());
    for (event, groups) in hooks {
        let h = &groups[0]["hooks"][0];
        assert_eq!(h["type"], "command", "{event}");
        assert_eq!(h["args"], json!(["hook"]), "{event}");
        let cmd = h["command"].as_str().unwrap();
        assert!(
            std::path::Path::new(cmd).is_absolute() && cmd.ends_with("/taskhook"),
            "{cmd}"
        );
        assert!(h["timeout"].as_u64().unwrap() >= 10, "{event}");
    }
    assert!(
        backups(&p.root.join(".claude")).is_empty(),
        "nothing to back up"
    );
}

#[test]
fn merge_keeps_user_hooks_is_idempotent_and_uninstalls_exactly() {
    let p = Project::new();
    let user = json!({
        "permissions": {"allow": ["Bash(ls)"]},
        "hooks": {
            "PostToolUse": [{"matcher": "Write|Edit", "hooks": [{"type": "command", "command": "prettier --write"}]}],
            "Notification": [{"hooks": [{"type": "command", "command": "notify-send hi"}]}]
        },
        "env": {"FOO": "1"}
    });
    let original = serde_json::to_vec(&user).unwrap();
    p.write(".claude/settings.json", &original);
    assert_eq!(p.run(&["install"], "").code, 0);
    let s = settings(&p);
    let keys: Vec<&String> = s.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["permissions", "hooks", "env"]);
    assert_eq!(
        s["hooks"]["PostToolUse"][0],
        user["hooks"]["PostToolUse"][0]
    );
    assert_eq!(
        s["hooks"]["PostToolUse"][1]["hooks"][0]["args"],
        json!(["hook"])
    );
    assert_eq!(s["hooks"]["Notification"], user["hooks"]["Notification"]);
    let b = backups(&p.root.join(".claude"));
    assert_eq!(b.len(), 1);
    assert_eq!(
        std::fs::read(p.root.join(".claude").join(&b[0])).unwrap(),
        original
    );

    let bytes = std::fs::read(p.root.join(".claude/settings.json")).unwrap();
    let again = p.run(&["install"], "");
    assert_eq!(again.code, 0);
    assert!(again.stdout.contains("nothing changed"), "{again:?}");
    assert_eq!(
        std::fs::read(p.root.join(".claude/settings.json")).unwrap(),
        bytes
    );
    assert_eq!(
        backups(&p.root.join(".claude")).len(),
        1,
        "idempotent run made a backup"
    );

    assert_eq!(p.run(&["install", "--uninstall"], "").code, 0);
    assert_eq!(settings(&p), user);
}

#[test]
fn user_scope_and_dry_run() {
    let p = Project::new();
    let run = p.run(&["install", "--user", "--dry-run"], "");
    assert_eq!(run.code, 0, "{run:?}");
    let out = run.json();
    assert_eq!(out["changed"], true);
    assert!(out["path"]
        .as_str()
        .unwrap()
        .ends_with("home/.claude/settings.json"));
    assert!(!p.home.join(".claude").exists(), "dry run wrote");
    assert_eq!(p.run(&["install", "--user"], "").code, 0);
    assert!(p.home.join(".claude/settings.json").exists());
    assert!(!p.root.join(".claude").exists());
}

#[test]
fn broken_settings_are_left_alone() {
    let p = Project::new();
    for bad in [&b"{ not json"[..], b"[1,2]", br#"{"hooks": []}"#] {
        let path = p.write(".claude/settings.json", bad);
        let run = p.run(&["install"], "");
        run.assert_one_line_error();
        assert_eq!(std::fs::read(&path).unwrap(), bad);
    }
}

#[test]
fn committed_snippet_matches_what_install_writes() {
    let p = Project::new();
    let run = p.run(
        &[
            "install",
            "--dry-run",
            "--command",
            "/usr/local/bin/taskhook",
        ],
        "",
    );
    let want = run.json()["settings"].clone();
    let snippet: Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/hooks/settings.json"))
            .unwrap(),
    )
    .unwrap();
    assert_eq!(snippet, want, "regenerate hooks/settings.json");
}
