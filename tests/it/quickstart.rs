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

/// Issue 26 item 8: the README of a clone stands alone: it names nothing outside the
/// repository, opens with what taskhook is and its two commands, says that `cargo test`
/// downloads Claude Code and how to run the rest without it, and the Quick start says to `cd`
/// into your own project first.
#[test]
fn the_readme_stands_alone_in_a_clone() {
    let readme = include_str!("../../README.md");
    for outside in [
        "../shared",
        "FINDINGS.md",
        "CONTRACT.md",
        "CONTRACT §",
        "shared/seeds",
    ] {
        assert!(!readme.contains(outside), "the README names {outside}");
    }
    for n in 0..5 {
        let seed = format!("seed 00{n}");
        assert!(
            !readme.to_lowercase().contains(&seed),
            "the README names {seed}"
        );
    }
    // Every link to a file of the repository leads to one.
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    for link in readme.split("](").skip(1) {
        let target = link.split(')').next().unwrap();
        if target.starts_with('#') || target.contains("://") {
            continue;
        }
        assert!(root.join(target).exists(), "the README links {target}");
    }
    // It opens with what taskhook is, then the install and the test command.
    let intro = &readme[..readme.find("\n## ").unwrap()];
    assert!(intro.contains("taskhook is one Rust binary that Claude Code runs as a hook"));
    assert!(
        intro.contains("./install.sh") && intro.contains("cargo test"),
        "{intro}"
    );
    assert!(
        !intro.contains(".ci/run"),
        "CI internals belong in Tests:\n{intro}"
    );
    // The download, its size, where it is kept, and the suite without it.
    assert!(readme.contains("`cargo test` downloads Claude Code through npm"));
    assert!(readme.contains("364 MB") && readme.contains("tests/e2e/node_modules/"));
    assert!(readme.contains("cargo test --locked --lib --test it"));
    // The Quick start says where to run install.
    let quick = &readme[readme.find("## Quick start").unwrap()..readme.find("## Install").unwrap()];
    assert!(quick.contains("`cd` into your own project"), "{quick}");
}
