//! The Claude Code plugin in the repository: its hooks are exactly `taskhook install`'s
//! registrations with `taskhook` found on PATH (no machine path), its version is the crate's,
//! and the marketplace lists it from the repository root. (The real CLI loads it in the e2e
//! suite: tests/e2e/plugin.rs.)

use serde_json::Value;

use crate::common::Project;

fn repo_json(rel: &str) -> Value {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(rel);
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap())
        .unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// Every `command` in a value replaced by `with`.
fn commands_replaced(v: &Value, with: &str) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, x)| {
                    let x = if k == "command" {
                        Value::String(with.into())
                    } else {
                        commands_replaced(x, with)
                    };
                    (k.clone(), x)
                })
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(|x| commands_replaced(x, with)).collect()),
        other => other.clone(),
    }
}

#[test]
fn plugin_hooks_are_installs_registrations_from_path() {
    let p = Project::new();
    let run = p.run(&["install", "--dry-run", "--json"], "");
    let installed = run.json()["settings"]["hooks"].clone();
    let plugin = repo_json("hooks/hooks.json");
    assert_eq!(
        plugin["hooks"],
        commands_replaced(&installed, "taskhook"),
        "regenerate hooks/hooks.json"
    );
    let text =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/hooks/hooks.json")).unwrap();
    assert!(!text.contains('/'), "no path in the plugin's hooks");
}

#[test]
fn manifest_and_marketplace_agree_with_the_crate() {
    let plugin = repo_json(".claude-plugin/plugin.json");
    let market = repo_json(".claude-plugin/marketplace.json");
    assert_eq!(plugin["name"], "taskhook");
    assert_eq!(plugin["version"], env!("CARGO_PKG_VERSION"));
    let entry = &market["plugins"][0];
    assert_eq!(entry["name"], plugin["name"]);
    assert_eq!(entry["source"], "./");
    assert_eq!(entry["version"], plugin["version"]);
    let skill = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/skills/taskhook/SKILL.md"
    ))
    .unwrap();
    assert!(skill.starts_with("---\nname: taskhook\ndescription: "));
    for convention in [
        "<task>T1</task>",
        "<signal>T1_DONE</signal>",
        "<signal>T1_FAILED: ",
        "<signal>T1_BLOCKED: ",
        "taskhook iterative new",
        "taskhook cdd init",
        "taskhook execute resume",
    ] {
        assert!(skill.contains(convention), "the skill lacks {convention}");
    }
}
