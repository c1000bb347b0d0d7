//! The README's Quick start, run verbatim: every command line of its `sh` block, in a scratch
//! project, with the built binary first on PATH.

use std::process::Command;

use crate::common::Project;

/// The command lines of the Quick start block (comments and blank lines left out).
fn quickstart_lines() -> Vec<String> {
    let readme = include_str!("../../README.md");
    let start = readme
        .find("<!-- quickstart")
        .expect("README has a quickstart marker");
    let block = &readme[start..];
    let open = block.find("```sh\n").expect("a sh block after the marker") + 6;
    let close = block[open..].find("```").expect("the block closes") + open;
    block[open..close]
        .lines()
        .map(|l| l.split(" #").next().unwrap_or("").trim().to_string())
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect()
}

#[test]
fn the_readme_quick_start_runs_verbatim() {
    let p = Project::new();
    let lines = quickstart_lines();
    assert!(lines.len() >= 3, "{lines:?}");
    let bin = assert_cmd::cargo::cargo_bin("taskhook");
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    for line in &lines {
        let out = Command::new("sh")
            .arg("-c")
            .arg(line)
            .current_dir(&p.root)
            .env_clear()
            .env("PATH", &path)
            .env("HOME", &p.home)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "`{line}` failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    assert!(p.root.join(".claude/settings.json").exists());
    assert!(p.root.join(".claude/iterative/auth/state.json").exists());
    // What it set up works: a bound subagent's signal moves T1.
    let mut stop = p.subagent_stop(
        "a1",
        "Work on <task>T1</task>.",
        "Done. <signal>T1_DONE</signal>",
    );
    stop["cwd"] = serde_json::json!(p.root);
    let run = p.hook(&stop);
    assert!(run.stdout.contains("confirmation pass"), "{run:?}");
}
