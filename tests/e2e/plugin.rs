//! Scenario: the repository as a Claude Code plugin. Nothing is registered in the project's
//! settings; `claude --plugin-dir <repo>` loads `.claude-plugin/plugin.json`,
//! `hooks/hooks.json` (which runs `taskhook hook` from PATH) and the skill, and taskhook's
//! SessionStart context reaches the model through the plugin's hook.

use std::path::PathBuf;
use std::process::{Command, Stdio};

use serde_json::json;

use super::harness::{claude_bin, Scenario};
use super::{taskhook_contexts, SESSION_CONTEXT};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `claude plugin validate --strict` accepts the plugin and the marketplace.
#[test]
fn plugin_and_marketplace_validate() {
    let home = tempfile::tempdir().expect("temp home");
    for target in [repo(), repo().join(".claude-plugin/marketplace.json")] {
        let out = Command::new(claude_bin())
            .args(["plugin", "validate", "--strict"])
            .arg(&target)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", home.path())
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .stdin(Stdio::null())
            .output()
            .expect("claude plugin validate");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && text.contains("Validation passed"),
            "{}: {text}{}",
            target.display(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn plugin_hooks_fire_from_path() {
    let script = json!({"main": ["E2E-REPLY-PLUGIN"]});
    let s = Scenario::without_install("plugin", &script);
    s.taskhook(&["iterative", "new", "plug", "--task", "T1", "--task", "T2"]);
    let plugin_dir = repo();
    let run = s.claude(
        &[
            "--plugin-dir",
            plugin_dir.to_str().expect("utf-8 path"),
            "-p",
            "E2E-PROMPT-PLUGIN: carry on",
        ],
        &[],
    );
    assert_eq!(run.text(), "E2E-REPLY-PLUGIN", "{:?}", run.result);
    assert!(
        !s.path(".claude/settings.json").exists(),
        "nothing registered in the project: the hook came through the plugin"
    );
    let main = s.stream("main");
    assert_eq!(main.len(), 1);
    let ctx = taskhook_contexts(&main[0]);
    assert_eq!(
        ctx.len(),
        1,
        "one taskhook context: {:#?}",
        main[0].messages()
    );
    assert!(ctx[0].starts_with(SESSION_CONTEXT), "{}", ctx[0]);
    assert!(ctx[0].contains("iterative \"plug\""), "{}", ctx[0]);
    assert!(ctx[0].contains("Current: T1 (pending"), "{}", ctx[0]);
    // The skill and the slash command reached the model's list of skills.
    let body = main[0].body.to_string();
    assert!(
        body.contains("- taskhook:taskhook: How to keep task state with taskhook"),
        "skill not listed"
    );
    assert!(body.contains("- taskhook:status: Show taskhook's stores"));
}

/// Runs `claude ARGS` (a `plugin …` command) with the scenario's HOME; asserts exit 0.
fn claude_cmd(s: &Scenario, args: &[&str]) -> String {
    let out = Command::new(claude_bin())
        .args(args)
        .current_dir(&s.proj)
        .env_clear()
        .env("PATH", s.path_env())
        .env("HOME", &s.home)
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("DISABLE_AUTOUPDATER", "1")
        .stdin(Stdio::null())
        .output()
        .expect("run claude");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "claude {args:?}: {text}");
    text
}

/// `claude plugin marketplace add` on the repository's plugin files, then `plugin install`:
/// the hooks fire in a plain session, and `taskhook install` refuses beside the plugin.
#[test]
fn marketplace_add_and_install() {
    let script = json!({"main": ["E2E-REPLY-MARKET"]});
    let s = Scenario::without_install("marketplace", &script);
    // The plugin's files only (a clone of the repository holds the same; a built target/
    // does not belong in a plugin cache).
    let market = s.dir.join("market");
    for part in [".claude-plugin", "hooks", "skills", "commands"] {
        copy_tree(&repo().join(part), &market.join(part));
    }
    let market_arg = market.to_str().expect("utf-8 path");
    let out = claude_cmd(&s, &["plugin", "marketplace", "add", market_arg]);
    assert!(out.contains("taskhook"), "{out}");
    let out = claude_cmd(&s, &["plugin", "install", "taskhook@taskhook"]);
    assert!(out.contains("installed"), "{out}");

    s.taskhook(&["iterative", "new", "market", "--task", "M1"]);
    let run = s.claude(&["-p", "E2E-PROMPT-MARKET"], &[]);
    assert_eq!(run.text(), "E2E-REPLY-MARKET");
    let ctx = taskhook_contexts(&s.stream("main")[0]);
    assert_eq!(ctx.len(), 1, "{ctx:#?}");
    assert!(ctx[0].contains("iterative \"market\""), "{}", ctx[0]);

    // Registering the hooks in the project as well would run taskhook twice: install refuses,
    // says how to proceed, and writes nothing.
    let out = Command::new(super::harness::taskhook_bin())
        .arg("install")
        .current_dir(&s.proj)
        .env_clear()
        .env("PATH", s.path_env())
        .env("HOME", &s.home)
        .stdin(Stdio::null())
        .output()
        .expect("run taskhook install");
    let text = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("the taskhook plugin is enabled in")
            && text.contains("claude plugin disable"),
        "{text}"
    );
    assert!(!s.path(".claude/settings.json").exists());
}

fn copy_tree(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from).expect("read_dir") {
        let e = e.expect("entry");
        let dest = to.join(e.file_name());
        if e.file_type().expect("type").is_dir() {
            copy_tree(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), &dest).expect("copy");
        }
    }
}
