//! The command line for a person: bare `taskhook` prints help, typos get clap's suggestion in
//! a usage error, help speaks of what layouts are for (not seed numbers), every command that
//! prints data takes `--json`, and completions and man pages are generated on demand.

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
fn typos_get_clap_suggestions() {
    let p = Project::new();
    let run = p.run(&["stauts"], "");
    run.assert_usage_error();
    assert!(run.stderr.contains("'status'"), "{run:?}");
    let run = p.run(&["install", "--jsn"], "");
    run.assert_usage_error();
    assert!(
        run.stderr
            .contains("tip: a similar argument exists: '--json'"),
        "{run:?}"
    );
}

/// Issue 26 item 1: a usage error says what is wrong and how to call the command (clap's whole
/// message), exit 2; 1 stays for refusals.
#[test]
fn usage_errors_keep_what_is_wrong_and_exit_2() {
    let p = Project::new();
    let run = p.run(&["projects", "new"], "");
    run.assert_usage_error();
    assert!(run.stderr.contains("<ID>"), "{run:?}");
    assert!(
        run.stderr.contains("Usage: taskhook projects new <ID>"),
        "{run:?}"
    );
    let run = p.run(&["status", "--colr"], "");
    run.assert_usage_error();
    assert!(
        run.stderr
            .contains("tip: a similar argument exists: '--color'"),
        "{run:?}"
    );
    let run = p.run(&["iterative", "new", "x", "--mode", "both"], "");
    run.assert_usage_error();
    assert!(
        run.stderr
            .contains("[possible values: development, knowledge]"),
        "{run:?}"
    );
    // A usage problem clap cannot see is exit 2 too, in one line.
    let run = p.run(&["iterative", "signal", "x", "T1", "MAYBE"], "");
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr
            .starts_with("taskhook: signal kind must be DONE, FAILED or BLOCKED"),
        "{run:?}"
    );
    // A refusal stays exit 1.
    let run = p.run(&["iterative", "status", "nope"], "");
    run.assert_one_line_error();
}

/// Issue 26 item 1: the exit statuses are in `--help` and the man page.
#[test]
fn exit_statuses_are_documented_in_help_and_man() {
    let p = Project::new();
    let help = p.run(&["--help"], "").stdout;
    let man = p.run(&["man"], "").stdout;
    for text in [&help, &man] {
        assert!(text.contains("Exit status: 0 done"), "{text}");
        assert!(text.contains("1 refused or failed"), "{text}");
        assert!(text.contains("2 a usage error"), "{text}");
    }
}

/// Issue 26 item 1: the cdd verbs are parsed like every command (help per verb, suggestions);
/// a usage error still prints the orchestrator's one JSON object, with exit 2.
#[test]
fn cdd_verbs_have_help_and_suggestions() {
    let p = Project::new();
    let run = p.run(&["cdd", "init", "--help"], "");
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains("Usage: taskhook cdd init"), "{run:?}");
    assert!(run.stderr.is_empty(), "{run:?}");
    let run = p.run(&["cdd", "strat", "foo.md"], "");
    assert_eq!(run.code, 2, "{run:?}");
    let v = run.json();
    assert_eq!(v["success"], false);
    assert_eq!(v["code"], "USAGE");
    assert!(
        v["error"]
            .as_str()
            .unwrap()
            .contains("unrecognized subcommand 'strat'"),
        "{v}"
    );
    assert!(v["error"].as_str().unwrap().contains("'start'"), "{v}");
    assert!(
        run.stderr.contains("tip: some similar subcommands exist"),
        "{run:?}"
    );
    assert!(run.stderr.contains("Usage: taskhook cdd"), "{run:?}");
    // --human: the message on stderr only.
    let run = p.run(&["cdd", "--human", "strat", "foo.md"], "");
    run.assert_usage_error();
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
    }
    // The scripts ask the binary, which knows every command and flag.
    let mut c = p.cmd();
    c.env("TASKHOOK_COMPLETE", "bash")
        .env("_CLAP_COMPLETE_INDEX", "2");
    let run = p.run_with(c, &["--", "taskhook", "install", "--git"], "");
    assert_eq!(run.stdout.trim(), "--gitignore", "{run:?}");
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
    run.assert_usage_error();
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

/// Issue 20 item 19: a `recover` that cannot rebuild a store says so, and never advises running
/// `recover`.
#[test]
fn a_failing_recover_does_not_advise_recover() {
    let p = Project::new();
    let r = p.run(
        &[
            "execute",
            "init",
            "docs/tasks/auth",
            "--layer",
            "0-setup=L0-001",
        ],
        "",
    );
    assert_eq!(r.code, 0, "{r:?}");
    let dir = p.root.join("docs/tasks/auth");
    std::fs::write(dir.join("execute-state.json"), "{broken").unwrap();
    let _ = std::fs::remove_file(dir.join(".execute-state.json.last-good"));
    let before = p.snapshot();
    let r = p.run(&["recover", "docs/tasks/auth"], "");
    r.assert_one_line_error();
    assert!(
        r.stderr.contains("`taskhook recover` cannot rebuild it"),
        "{r:?}"
    );
    assert!(!r.stderr.contains("run `taskhook recover"), "{r:?}");
    assert!(!r.stderr.contains("or `taskhook recover"), "{r:?}");
    assert_eq!(p.snapshot(), before);
}
