//! `taskhook install`: merges, is idempotent, keeps the user's formatting, uninstalls exactly,
//! recognises PATH and shell-form registrations, `--local`, the dry-run summary, notes, and
//! matches the committed `hooks/settings.json` snippet. (Files around the settings:
//! install_files.rs.)

use std::path::Path;

use serde_json::{json, Value};

use crate::common::Project;

pub const EVENTS: [&str; 7] = [
    "SessionStart",
    "PreToolUse",
    "PostToolUse",
    "SubagentStop",
    "PreCompact",
    "SessionEnd",
    "TaskCompleted",
];

fn settings(p: &Project) -> Value {
    read_json(&p.root.join(".claude/settings.json"))
}

pub fn read_json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// The backups `install` left in a folder (none when the folder does not exist).
pub fn backups(dir: &Path) -> Vec<String> {
    if !dir.exists() {
        return Vec::new();
    }
    names(dir)
        .into_iter()
        .filter(|n| n.contains("taskhook-backup"))
        .collect()
}

/// Every file name in a folder (temp files included).
pub fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    v.sort();
    v
}

#[test]
fn fresh_install_registers_exec_form_hooks() {
    let p = Project::new();
    let run = p.run(&["install"], "");
    assert_eq!(run.code, 0, "{run:?}");
    let s = settings(&p);
    let hooks = s["hooks"].as_object().unwrap();
    let events: Vec<&String> = hooks.keys().collect();
    assert_eq!(events, EVENTS);
    for (event, groups) in hooks {
        let h = &groups[0]["hooks"][0];
        assert_eq!(h["type"], "command", "{event}");
        assert_eq!(h["args"], json!(["hook"]), "{event}");
        // The shared file runs `taskhook` from PATH: the same bytes on every machine.
        assert_eq!(h["command"], "taskhook", "{event}");
        assert!(h["timeout"].as_u64().unwrap() >= 10, "{event}");
    }
    // CONTRACT §6: PreToolUse only for the tools it acts on, timeout 15 s.
    assert_eq!(s["hooks"]["PreToolUse"][0]["matcher"], "Agent|Task|Bash");
    assert_eq!(s["hooks"]["PreToolUse"][0]["hooks"][0]["timeout"], 15);
    assert!(s["hooks"]["PostToolUse"][0].get("matcher").is_none());
    assert!(run.stdout.contains("+ PreToolUse"), "{run:?}");
    assert!(
        run.stdout.contains("start a new one"),
        "says when hooks load: {run:?}"
    );
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

    let un = p.run(&["install", "--uninstall"], "");
    assert_eq!(un.code, 0, "{un:?}");
    assert_eq!(
        std::fs::read(p.root.join(".claude/settings.json")).unwrap(),
        original,
        "uninstall gives back the very bytes"
    );
    // Same second, same clock: the second backup gets its own name, the first is kept.
    let b = backups(&p.root.join(".claude"));
    assert_eq!(b.len(), 2, "{b:?}");
    assert_eq!(
        std::fs::read(p.root.join(".claude").join(&b[0])).unwrap(),
        original
    );
}

/// A hand-formatted file: 4-space indent, non-ASCII text, inline arrays. The install's diff
/// is only added lines; uninstall gives back the same bytes.
#[test]
fn formatting_is_kept_and_the_diff_is_only_the_handlers() {
    let p = Project::new();
    let original = "{\n    \"model\": \"opus\",\n    \"statusLine\": {\"type\": \"command\", \"command\": \"echo Grüße ✓\"},\n    \"permissions\": {\n        \"allow\": [\"Bash(ls)\", \"Read(~/über/**)\"]\n    },\n    \"hooks\": {\n        \"PostToolUse\": [{\"matcher\": \"Write\", \"hooks\": [{\"type\": \"command\", \"command\": \"fmt\"}]}]\n    }\n}\n";
    p.write(".claude/settings.json", original);
    let run = p.run(&["install", "--command", "/opt/bin/taskhook"], "");
    assert_eq!(run.code, 0, "{run:?}");
    let text = std::fs::read_to_string(p.root.join(".claude/settings.json")).unwrap();
    assert!(text.contains("Grüße ✓") && text.contains("über"), "{text}");
    let h = |t: u64| {
        format!("{{\"type\": \"command\", \"command\": \"/opt/bin/taskhook\", \"args\": [\"hook\"], \"timeout\": {t}}}")
    };
    let event = |e: &str, t: u64| format!(",\n        \"{e}\": [{{\"hooks\": [{}]}}]", h(t));
    // The original text with only the handlers inserted: the inline array gets its group
    // inline, the new events follow their 4-space, inline neighbour.
    let pre = format!(
        ",\n        \"PreToolUse\": [{{\"matcher\": \"Agent|Task|Bash\", \"hooks\": [{}]}}]",
        h(15)
    );
    let added = [
        event("SessionStart", 30),
        pre,
        event("SubagentStop", 30),
        event("PreCompact", 30),
        event("SessionEnd", 15),
        event("TaskCompleted", 15),
    ]
    .concat();
    let want = original
        .replace(
            "\"fmt\"}]}]",
            &format!("\"fmt\"}}]}}, {{\"hooks\": [{}]}}]", h(15)),
        )
        .replace("}]}]\n    }\n}", &format!("}}]}}]{added}\n    }}\n}}"));
    assert_eq!(text, want);
    let json = p.run(
        &[
            "install",
            "--command",
            "/opt/bin/taskhook",
            "--dry-run",
            "--json",
        ],
        "",
    );
    assert_eq!(json.json()["changed"], false, "{json:?}");
    assert_eq!(p.run(&["install", "--uninstall"], "").code, 0);
    assert_eq!(
        std::fs::read_to_string(p.root.join(".claude/settings.json")).unwrap(),
        original
    );
}

#[test]
fn path_and_shell_form_registrations_are_never_doubled() {
    for command in ["taskhook hook", "/usr/local/bin/taskhook hook"] {
        let p = Project::new();
        let mut hooks = serde_json::Map::new();
        for e in EVENTS {
            hooks.insert(
                e.into(),
                json!([{"hooks": [{"type": "command", "command": command}]}]),
            );
        }
        let user = json!({ "hooks": hooks });
        let text = serde_json::to_string_pretty(&user).unwrap();
        p.write(".claude/settings.json", &text);
        let run = p.run(&["install"], "");
        assert_eq!(run.code, 0, "{run:?}");
        assert!(run.stdout.contains("nothing changed"), "{run:?}");
        assert_eq!(
            std::fs::read_to_string(p.root.join(".claude/settings.json")).unwrap(),
            text
        );
        // Half of them exec form from PATH (the plugin's form): still one each.
        let mut mixed = user.clone();
        mixed["hooks"]["SessionStart"][0]["hooks"][0] =
            json!({"type": "command", "command": "taskhook", "args": ["hook"]});
        p.write(
            ".claude/settings.json",
            serde_json::to_string(&mixed).unwrap(),
        );
        assert_eq!(p.run(&["install"], "").code, 0);
        assert_eq!(settings(&p), mixed);
        assert_eq!(p.run(&["install", "--uninstall"], "").code, 0);
        assert_eq!(settings(&p), json!({}));
    }
}

/// Issue 26 item 4: the project's shared settings.json runs `taskhook` from PATH (the file
/// does not flip in git between teammates); `--local` and `--user` keep this machine's
/// absolute path; an old absolute path in the shared file becomes `taskhook`.
#[test]
fn the_shared_file_gets_a_path_command_local_and_user_an_absolute_one() {
    let p = Project::new();
    let bin = assert_cmd::cargo::cargo_bin("taskhook");
    let bin = bin.canonicalize().unwrap();
    let commands = |s: &Value| -> Vec<String> {
        s["hooks"]
            .as_object()
            .unwrap()
            .values()
            .map(|g| g[0]["hooks"][0]["command"].as_str().unwrap().to_string())
            .collect()
    };
    // taskhook on PATH, as after ./install.sh: nothing to say about PATH.
    let mut c = p.cmd();
    c.env("PATH", crate::common::path_with_bin());
    let run = p.run_with(c, &["install"], "");
    assert_eq!(run.code, 0, "{run:?}");
    assert!(!run.stdout.contains("not on PATH"), "{run:?}");
    assert_eq!(commands(&settings(&p)), vec!["taskhook"; 7]);
    for (flag, file) in [
        ("--local", p.root.join(".claude/settings.local.json")),
        ("--user", p.home.join(".claude/settings.json")),
    ] {
        let run = p.run(&["install", flag], "");
        assert_eq!(run.code, 0, "{run:?}");
        assert_eq!(
            commands(&read_json(&file)),
            vec![bin.display().to_string(); 7],
            "{flag}"
        );
    }
    // A shared file written by an older taskhook (an absolute path) is moved to `taskhook`.
    let q = Project::new();
    assert_eq!(
        q.run(
            &["install", "--command", "/home/alice/.cargo/bin/taskhook"],
            ""
        )
        .code,
        0
    );
    let run = q.run(&["install"], "");
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains("~ SessionStart"), "{run:?}");
    assert_eq!(commands(&settings(&q)), vec!["taskhook"; 7]);
    // Without taskhook on PATH, install says the hooks would not find it, and what to do.
    assert!(
        run.stdout.contains("note: `taskhook` is not on PATH"),
        "{run:?}"
    );
    assert!(run.stdout.contains("--local"), "{run:?}");
}

#[test]
fn local_scope_writes_settings_local_json_and_notes_a_double_registration() {
    let p = Project::new();
    let run = p.run(&["install", "--local"], "");
    assert_eq!(run.code, 0, "{run:?}");
    assert!(!p.root.join(".claude/settings.json").exists());
    let s = read_json(&p.root.join(".claude/settings.local.json"));
    assert_eq!(s["hooks"].as_object().unwrap().len(), EVENTS.len());
    let both = p.run(&["install"], "");
    assert_eq!(both.code, 0, "{both:?}");
    assert!(
        both.stdout
            .contains("settings.local.json registers taskhook too"),
        "{both:?}"
    );
    assert!(
        both.stdout.contains("taskhook install --local --uninstall"),
        "{both:?}"
    );
}

#[test]
fn dry_run_prints_a_summary_and_json_the_whole_object() {
    let p = Project::new();
    let run = p.run(&["install", "--user", "--dry-run"], "");
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout.starts_with("Would register taskhook in "),
        "{run:?}"
    );
    assert!(run.stdout.contains("dry run: nothing written"), "{run:?}");
    for e in EVENTS {
        assert!(run.stdout.contains(&format!("+ {e}")), "{e}: {run:?}");
    }
    let run = p.run(&["install", "--user", "--dry-run", "--json"], "");
    let out = run.json();
    assert_eq!(out["changed"], true);
    assert_eq!(out["dry_run"], true);
    assert_eq!(out["scope"], "user");
    assert_eq!(out["changes"].as_array().unwrap().len(), EVENTS.len());
    assert_eq!(
        out["changes"][0],
        json!({"event": "SessionStart", "action": "added", "detail": "taskhook hook (timeout 30 s)"})
    );
    assert!(out["settings"]["hooks"]["PreToolUse"].is_array());
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
    for bad in [
        &b"{ not json"[..],
        b"[1,2]",
        br#"{"hooks": []}"#,
        b"{\"a\": \"\xff\"}",
    ] {
        let path = p.write(".claude/settings.json", bad);
        let run = p.run(&["install"], "");
        run.assert_one_line_error();
        assert_eq!(std::fs::read(&path).unwrap(), bad);
    }
    assert_eq!(names(&p.root.join(".claude")), ["settings.json"]);
}

#[test]
fn committed_snippet_matches_what_install_writes() {
    let p = Project::new();
    let run = p.run(&["install", "--dry-run", "--json"], "");
    let want = run.json()["settings"].clone();
    let snippet: Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/hooks/settings.json"))
            .unwrap(),
    )
    .unwrap();
    assert_eq!(snippet, want, "regenerate hooks/settings.json");
}

#[test]
fn a_moved_binary_is_updated_in_place_and_only_its_path_changes() {
    let p = Project::new();
    p.write(".claude/settings.json", "{\n  \"model\": \"opus\"\n}\n");
    assert_eq!(
        p.run(&["install", "--command", "/old/taskhook"], "").code,
        0
    );
    let first = std::fs::read_to_string(p.root.join(".claude/settings.json")).unwrap();
    assert!(
        first.starts_with("{\n  \"model\": \"opus\",\n  \"hooks\": {\n    \"SessionStart\": [\n      {\n        \"hooks\": [\n          {\n            \"type\": \"command\",\n"),
        "2-space JSON as Claude Code writes it:\n{first}"
    );
    let run = p.run(&["install", "--command", "/new/taskhook"], "");
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains("~ SessionStart"), "{run:?}");
    let second = std::fs::read_to_string(p.root.join(".claude/settings.json")).unwrap();
    assert_eq!(second, first.replace("/old/taskhook", "/new/taskhook"));
}

/// Issue 26 item 5: with the taskhook plugin enabled, its hooks already run taskhook for every
/// event; registering them in settings too would apply every event twice. `install` refuses,
/// saying how to proceed, and writes nothing; `--uninstall` still works.
#[test]
fn install_refuses_while_the_plugin_is_enabled() {
    let p = Project::new();
    std::fs::create_dir_all(p.home.join(".claude")).unwrap();
    let user = p.home.join(".claude/settings.json");
    std::fs::write(
        &user,
        r#"{"enabledPlugins": {"taskhook@taskhook": true, "other@x": true}}"#,
    )
    .unwrap();
    let before = p.snapshot();
    for args in [
        &["install"][..],
        &["install", "--local"],
        &["install", "--user"],
        &["install", "--dry-run", "--json"],
    ] {
        let run = p.run(args, "");
        run.assert_one_line_error();
        assert!(
            run.stderr.contains("the taskhook plugin is enabled in")
                && run.stderr.contains("home/.claude/settings.json"),
            "{run:?}"
        );
        assert!(run.stderr.contains("claude plugin disable"), "{run:?}");
        assert_eq!(p.snapshot(), before, "{args:?} wrote something");
    }
    // A project that turns the plugin off for itself (local over user) may install.
    p.write(
        ".claude/settings.local.json",
        r#"{"enabledPlugins": {"taskhook@taskhook": false}}"#,
    );
    assert_eq!(p.run(&["install"], "").code, 0);
    // Uninstalling is always possible.
    std::fs::remove_file(p.root.join(".claude/settings.local.json")).unwrap();
    let run = p.run(&["install", "--uninstall"], "");
    assert_eq!(run.code, 0, "{run:?}");
}
