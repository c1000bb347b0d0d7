//! The command line for a person: bare `taskhook` prints help, typos get clap's suggestion in
//! the one-line error, help speaks of what layouts are for (not seed numbers), every command
//! that prints data takes `--json`, and completions and man pages are generated on demand.

use serde_json::Value;

use crate::common::Project;

#[test]
fn bare_taskhook_and_bare_groups_print_help_with_exit_0() {
    let p = Project::new();
    let run = p.run(&[], "");
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stderr.is_empty(), "{run:?}");
    assert!(run.stdout.contains("Usage: taskhook"), "{run:?}");
    assert!(run
        .stdout
        .contains("Get started: `cd my-project && taskhook install`"));
    assert_eq!(run.stdout, p.run(&["--help"], "").stdout);
    for group in ["tasks", "iterative"] {
        let run = p.run(&[group], "");
        assert_eq!(run.code, 0, "{run:?}");
        assert!(
            run.stdout.contains(&format!("Usage: taskhook {group}")),
            "{run:?}"
        );
    }
}

#[test]
fn help_says_what_layouts_are_for_in_user_words() {
    let p = Project::new();
    let help = p.run(&["--help"], "").stdout;
    assert!(help.contains("Claude Code's task list"), "{help}");
    assert!(help.contains("Iterative loops"), "{help}");
    let mut all = help.clone();
    for cmd in ["tasks", "iterative", "install"] {
        all.push_str(&p.run(&[cmd, "--help"], "").stdout);
    }
    for sub in ["new", "status", "signal", "guardrail", "archive"] {
        all.push_str(&p.run(&["iterative", sub, "--help"], "").stdout);
    }
    for sub in ["write", "read"] {
        all.push_str(&p.run(&["tasks", sub, "--help"], "").stdout);
    }
    let lower = all.to_lowercase();
    assert!(!lower.contains("seed"), "help names a seed:\n{all}");
}

#[test]
fn typos_get_clap_suggestions_in_one_line() {
    let p = Project::new();
    let run = p.run(&["stauts"], "");
    run.assert_one_line_error();
    assert!(run.stderr.contains("'status'"), "{run:?}");
    let run = p.run(&["install", "--jsn"], "");
    run.assert_one_line_error();
    assert!(
        run.stderr
            .contains("unexpected argument '--jsn' found; a similar argument exists: '--json'"),
        "{run:?}"
    );
    assert!(
        run.stderr.trim_end().ends_with("(see taskhook --help)"),
        "{run:?}"
    );
}

/// Every command that prints data takes `--json` (CONTRACT §1).
#[test]
fn every_command_that_prints_takes_json() {
    let p = Project::new();
    let commands: &[&[&str]] = &[
        &["status"],
        &["reconcile"],
        &["validate"],
        &["recover", "x"],
        &["install"],
        &["schema"],
        &["iterative", "new", "x"],
        &["iterative", "status"],
        &["iterative", "signal", "x", "T1", "DONE"],
        &[
            "iterative",
            "guardrail",
            "x",
            "--when",
            "w",
            "--problem",
            "p",
            "--solution",
            "s",
        ],
        &["iterative", "archive", "x"],
        &["tasks", "write"],
        &["tasks", "read"],
    ];
    for c in commands {
        let mut args = c.to_vec();
        args.push("--help");
        let help = p.run(&args, "").stdout;
        assert!(help.contains("--json"), "{c:?} has no --json:\n{help}");
    }

    // And the ones that gained it print one JSON object.
    let json = |args: &[&str]| -> Value {
        let run = p.run(args, "");
        assert_eq!(run.code, 0, "{args:?}: {run:?}");
        run.json()
    };
    json(&["iterative", "new", "loop", "--task", "T1", "--json"]);
    let g = json(&[
        "iterative",
        "guardrail",
        "loop",
        "--when",
        "always",
        "--problem",
        "tests forgotten",
        "--solution",
        "run them",
        "--json",
    ]);
    assert!(
        g["path"].as_str().unwrap().ends_with("guardrails.md"),
        "{g}"
    );
    assert_eq!(g["name"], "tests forgotten");
    // Archiving unfinished work needs --force (issue 14).
    let a = json(&["iterative", "archive", "loop", "--force", "--json"]);
    assert_eq!(a["slug"], "loop");
    assert!(
        a["path"]
            .as_str()
            .unwrap()
            .contains("/archive/loop-20260301"),
        "{a}"
    );
    assert!(json(&["schema", "claude-tasks", "--json"]).is_object());

    let list = p.home.join(".claude/tasks/proj");
    std::fs::create_dir_all(&list).unwrap();
    std::fs::write(list.join("tasks.json"), "{ torn").unwrap();
    let r = json(&["recover", list.to_str().unwrap(), "--json"]);
    assert_eq!(r["layout"], "claude-tasks");
    assert!(r["message"].as_str().unwrap().contains("aside"), "{r}");
}

#[test]
fn completions_are_generated_for_each_shell() {
    let p = Project::new();
    for shell in ["bash", "zsh", "fish", "powershell"] {
        let run = p.run(&["completions", shell], "");
        assert_eq!(run.code, 0, "{run:?}");
        assert!(run.stdout.contains("taskhook"), "{shell}");
        for word in ["install", "gitignore", "iterative", "guardrail"] {
            assert!(run.stdout.contains(word), "{shell} lacks {word}");
        }
    }
    // The bash script is valid bash.
    let script = p.run(&["completions", "bash"], "").stdout;
    let file = p.tmp.path().join("taskhook.bash");
    std::fs::write(&file, script).unwrap();
    let out = std::process::Command::new("bash")
        .arg("-n")
        .arg(&file)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let run = p.run(&["completions", "tcsh"], "");
    run.assert_one_line_error();
}

#[test]
fn man_pages_are_generated_on_demand() {
    let p = Project::new();
    let run = p.run(&["man"], "");
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains(".TH taskhook 1"), "{run:?}");
    assert!(run.stdout.contains("install"), "{run:?}");
    let run = p.run(&["man", "install"], "");
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout.contains(".TH taskhook-install 1"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("gitignore"));
    let run = p.run(&["man", "nope"], "");
    run.assert_one_line_error();
    assert!(run.stderr.contains("known: hook, replay"), "{run:?}");
}
